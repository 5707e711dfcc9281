/*
 * cancel - the ANY_SOURCE replacement: irecv from every candidate, only
 * one sends, cancel the others.
 *
 *   cancel [-R ROUNDS] [-s SEED]
 *
 * Rank 0 is the receiver; candidates are (src, index) for src = 1..N-1 and
 * index 0 and 1 (so a job of 2 still has two candidates).  Each round rank
 * 0 posts an irecv on every candidate, tells the chosen one to send (a
 * "go" message on index 2), polls with fmpl_test until one receive is
 * done, and then:
 *   - cancelling the completed one gives FMPL_ERR_BUSY; its wait succeeds
 *     and its data is right;
 *   - cancelling each other one gives FMPL_SUCCESS, its buffer is
 *     untouched, the request is inactive (wait gives FMPL_ERR_REQUEST).
 * Every candidate is chosen in some round after having been cancelled, so
 * the next receive on a cancelled index must match the next send.
 * Phase 2: repeated post/cancel on one index, then two real messages.
 * Phase 3 (the race): rank 1 sends NRACE messages on one index with
 * blocking sends while rank 0 posts an irecv and cancels it after a short
 * random delay.  A successful cancel leaves the buffer untouched and the
 * message comes with the next (blocking) receive; FMPL_ERR_BUSY means the
 * irecv got it.  Either way every message arrives exactly once, in order.
 */
#include "prog.h"

#define CTRL_MAI 2
#define P2_MAI 3
#define NRACE 300
#define MAXMSG ((1 << 20) + 5)

static const size_t round_size[] = {0, 8, 200, 5000, 70000, MAXMSG};
#define NSIZES (sizeof round_size / sizeof round_size[0])

static size_t race_size(long k)
{
    static const size_t sz[] = {0, 16, 24, 25, 100, 8192, 70000};
    return sz[k % (long)(sizeof sz / sizeof sz[0])];
}

static uint64_t data_seed(long round) { return 0xca9ce1ull + (uint64_t)round * 17; }

int main(int argc, char **argv)
{
    long rounds = -1, seed = 4242, k;
    struct prog_opt opts[] = {
        {'R', OPT_INT, &rounds, "rounds (default 2 per candidate, at least 6)"},
        {'s', OPT_INT, &seed, "seed of the choice of senders"},
    };
    int nc, c;
    int *chosen;
    prog_rng_t g;

    prog_name = "cancel";
    prog_parse(argc, argv, opts, 2);
    prog_init("cancel", 4);
    CHECK(prog_np >= 2, "needs at least 2 ranks, have %d", prog_np);
    nc = 2 * (prog_np - 1);
    if (rounds < 0)
        rounds = nc * 2 < 6 ? 6 : nc * 2;
    /* the plan: round k's sender; the first nc rounds cover every
     * candidate once, then at random (so each is chosen after having
     * been cancelled, except the very first) */
    chosen = prog_xmalloc(sizeof *chosen * (size_t)rounds);
    prog_rng_seed(&g, (uint64_t)seed);
    for (k = 0; k < rounds; k++)
        chosen[k] = k < nc ? (int)((k * 5 + 3) % nc) : (int)prog_rng_below(&g, nc);
    if (nc > 1 && rounds > 1 && chosen[0] == chosen[1])
        chosen[1] = (chosen[1] + 1) % nc;

    if (prog_me == 0) {
        size_t cap = MAXMSG + 64;
        unsigned char **buf = prog_xmalloc(sizeof *buf * (size_t)nc);
        fmpl_request_t *req = prog_xmalloc(sizeof *req * (size_t)nc);

        for (c = 0; c < nc; c++)
            buf[c] = prog_xmalloc(cap);
        for (k = 0; k < rounds; k++) {
            int ch = chosen[k], ndone = 0, got = -1;
            int src = 1 + ch / 2, mai = ch % 2;
            size_t size = round_size[k % NSIZES];
            long go[3] = {k, mai, (long)size};

            for (c = 0; c < nc; c++) {
                memset(buf[c], PROG_POISON, cap);
                memset(&req[c], 0, sizeof req[c]);
                CHECK_RC(fmpl_irecv(buf[c], cap, 1 + c / 2, c % 2, &req[c]), FMPL_SUCCESS);
            }
            CHECK_RC(fmpl_send(go, sizeof go, src, CTRL_MAI), FMPL_SUCCESS);
            while (got < 0) {
                for (c = 0; c < nc; c++) {
                    int done = 0;
                    CHECK_RC(fmpl_test(&req[c], &done), FMPL_SUCCESS);
                    if (done) {
                        CHECK(c == ch, "round %ld: receive from rank %d index %d completed, "
                              "but only rank %d index %d sent", k, 1 + c / 2, c % 2, src, mai);
                        got = c;
                        ndone++;
                    }
                }
            }
            /* the completed receive cannot be cancelled any more */
            CHECK_RC(fmpl_cancel_irecv(&req[got]), FMPL_ERR_BUSY);
            CHECK_RC(fmpl_wait_irecv(&req[got]), FMPL_SUCCESS);
            PAT_VERIFY(buf[got], size, data_seed(k), src, mai);
            POISON_VERIFY(buf[got] + size, cap - size, PROG_POISON, "bytes after the message");
            /* the others are withdrawn and untouched */
            for (c = 0; c < nc; c++) {
                int done = -1;
                if (c == got)
                    continue;
                CHECK_RC(fmpl_cancel_irecv(&req[c]), FMPL_SUCCESS);
                CHECK_RC(fmpl_wait_irecv(&req[c]), FMPL_ERR_REQUEST);
                CHECK_RC(fmpl_test(&req[c], &done), FMPL_ERR_REQUEST);
                POISON_VERIFY(buf[c], cap, PROG_POISON, "buffer of a cancelled receive");
            }
            CHECK_RC(fmpl_wait_irecv(&req[got]), FMPL_ERR_REQUEST);
        }

        /* phase 2: post and cancel on one index, repeatedly */
        for (c = 0; c < 5; c++) {
            fmpl_request_t r;
            memset(&r, 0, sizeof r);
            CHECK_RC(fmpl_irecv(buf[0], cap, 1, P2_MAI, &r), FMPL_SUCCESS);
            CHECK_RC(fmpl_cancel_irecv(&r), FMPL_SUCCESS);
        }
        {
            long go[3] = {-1, P2_MAI, 100};
            CHECK_RC(fmpl_send(go, sizeof go, 1, CTRL_MAI), FMPL_SUCCESS);
        }
        for (c = 0; c < 2; c++) {
            memset(buf[0], PROG_POISON, cap);
            CHECK_RC(fmpl_recv(buf[0], cap, 1, P2_MAI), FMPL_SUCCESS);
            PAT_VERIFY(buf[0], 100, 0x2000 + (uint64_t)c, 1, P2_MAI);
            POISON_VERIFY(buf[0] + 100, 64, PROG_POISON, "bytes after the message");
        }
        /* phase 3: cancel racing with the sender */
        {
            int ncancel = 0, nbusy = 0;
            prog_rng_t lr;
            prog_rng_seed(&lr, 99);
            for (k = 0; k < NRACE; k++) {
                size_t size = race_size(k);
                fmpl_request_t r;
                int rc;
                long spin = (long)prog_rng_below(&lr, 20000);
                volatile long x = 0;
                memset(&r, 0, sizeof r);
                memset(buf[0], PROG_POISON, size + 64);
                CHECK_RC(fmpl_irecv(buf[0], size + 64, 1, P2_MAI, &r), FMPL_SUCCESS);
                while (spin-- > 0)
                    x++;
                rc = fmpl_cancel_irecv(&r);
                if (rc == FMPL_SUCCESS) {
                    ncancel++;
                    POISON_VERIFY(buf[0], size + 64, PROG_POISON,
                                  "buffer of a successfully cancelled receive");
                    CHECK_RC(fmpl_wait_irecv(&r), FMPL_ERR_REQUEST);
                    CHECK_RC(fmpl_recv(buf[0], size + 64, 1, P2_MAI), FMPL_SUCCESS);
                } else {
                    CHECK(rc == FMPL_ERR_BUSY, "fmpl_cancel_irecv returned %d %s", rc,
                          fmpl_error_name(rc));
                    nbusy++;
                    CHECK_RC(fmpl_wait_irecv(&r), FMPL_SUCCESS);
                }
                PAT_VERIFY(buf[0], size, 0x3000 + (uint64_t)k, 1, P2_MAI);
                POISON_VERIFY(buf[0] + size, 64, PROG_POISON, "bytes after the message");
            }
            printf("cancel: race: %d cancelled, %d already claimed\n", ncancel, nbusy);
        }
        for (c = 0; c < nc; c++)
            free(buf[c]);
        free(buf);
        free(req);
        printf("cancel: %ld rounds over %d candidates\n", rounds, nc);
    } else {
        unsigned char *sbuf = prog_xmalloc(MAXMSG);
        for (k = 0; k < rounds; k++) {
            long go[3];
            int mai = chosen[k] % 2;
            size_t size = round_size[k % NSIZES];
            if (1 + chosen[k] / 2 != prog_me)
                continue;
            CHECK_RC(fmpl_recv(go, sizeof go, 0, CTRL_MAI), FMPL_SUCCESS);
            CHECK(go[0] == k && go[1] == mai && go[2] == (long)size,
                  "go message (%ld %ld %ld), expected (%ld %d %zu)", go[0], go[1], go[2], k,
                  mai, size);
            pat_fill(sbuf, size, data_seed(k), prog_me, mai);
            CHECK_RC(fmpl_send(sbuf, size, 0, mai), FMPL_SUCCESS);
        }
        if (prog_me == 1) {
            long go[3];
            CHECK_RC(fmpl_recv(go, sizeof go, 0, CTRL_MAI), FMPL_SUCCESS);
            CHECK(go[0] == -1, "phase 2 go message %ld", go[0]);
            for (c = 0; c < 2; c++) {
                pat_fill(sbuf, 100, 0x2000 + (uint64_t)c, prog_me, P2_MAI);
                CHECK_RC(fmpl_send(sbuf, 100, 0, P2_MAI), FMPL_SUCCESS);
            }
            for (k = 0; k < NRACE; k++) {
                size_t size = race_size(k);
                pat_fill(sbuf, size, 0x3000 + (uint64_t)k, prog_me, P2_MAI);
                CHECK_RC(fmpl_send(sbuf, size, 0, P2_MAI), FMPL_SUCCESS);
            }
        }
        free(sbuf);
    }
    free(chosen);
    return prog_finish();
}
