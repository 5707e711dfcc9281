/*
 * spill - blocking sends posted before the receives, with a spill buffer.
 *
 *   spill [-t TIMEOUT_US]
 *     -t  spill timeout in microseconds (default 0)
 *
 * Ranks pair as (0,1), (2,3), ...; an odd last rank works with itself.
 * Part 1: both partners fmpl_send NMSG messages (indices 0..NMSG-1, sizes
 *   0 B .. 256 KiB) before either receives.  No receive can be posted yet
 *   (the partner is still sending), so every message is spilled: the
 *   sends return, fmpl_sendbuff_check reports them, the send buffers are
 *   overwritten at once (the spilled copy must be what arrives), removing
 *   the spill buffer fails with FMPL_ERR_SPILL.  Then both receive in
 *   reverse index order, meet on a sync index, and the counts must add up:
 *   every message delivered, none left.
 * Part 2: a spill buffer too small for the message: the send waits until
 *   the receiver (who sleeps first) posts, then completes; and a buffer
 *   that holds the first message but not the second: the second send
 *   waits, the receiver takes both in order.
 * Part 3: a spilled message larger than its receive buffer: the receiver
 *   gets FMPL_ERR_TRUNCATE with its buffer untouched, the spill buffer
 *   empties, and the next message on the index arrives.
 * Part 4: the lower rank spills a message and calls fmpl_finalize at
 *   once; the partner receives it 0.3 s later.  fmpl_finalize must push
 *   it (it waits for the spill buffer to drain).
 */
#include "prog.h"

#define NMSG 6
#define SYNC_MAI 15
#define BIG_MAI 12
#define TR_MAI 14
#define FIN_MAI 11

static const size_t msg_size[NMSG] = {0, 1, 100, 4096, 65536 + 3, 256 << 10};

static void sync_pair(int partner)
{
    /* polled, so the sync message itself is never spilled */
    if (partner != prog_me)
        prog_exchange_poll(NULL, NULL, 0, partner, SYNC_MAI);
}

static uint64_t seed_of(int part, int i) { return 0x5b111ull * 1000 + (uint64_t)part * 100 + (uint64_t)i; }

int main(int argc, char **argv)
{
    double timeout = 0;
    struct prog_opt opts[] = {
        {'t', OPT_DOUBLE, &timeout, "spill timeout in microseconds (default 0)"},
    };
    int partner, i, nsend, nspool, nsend2, nspool2;
    size_t total = 0, spill_size;
    unsigned char *spill, *sbuf[NMSG], *rbuf[NMSG];

    prog_name = "spill";
    prog_parse(argc, argv, opts, 1);
    prog_init("spill", 16);
    partner = prog_me ^ 1;
    if (partner >= prog_np)
        partner = prog_me;

    /* ---- part 1 ------------------------------------------------------ */
    for (i = 0; i < NMSG; i++)
        total += msg_size[i];
    spill_size = 2 * total + (256 << 10);
    spill = prog_xmalloc(spill_size);
    CHECK_RC(fmpl_sendbuff_check(&nsend, &nspool), FMPL_SUCCESS);
    CHECK(nsend == 0 && nspool == 0, "fresh: nsend %d nspool %d", nsend, nspool);
    CHECK_RC(fmpl_sendbuff_set(spill, spill_size, timeout), FMPL_SUCCESS);

    for (i = 0; i < NMSG; i++) {
        sbuf[i] = prog_xmalloc(msg_size[i]);
        rbuf[i] = prog_xmalloc(msg_size[i] + 16);
        memset(rbuf[i], PROG_POISON, msg_size[i] + 16);
        pat_fill(sbuf[i], msg_size[i], seed_of(1, i), prog_me, i);
    }
    for (i = 0; i < NMSG; i++) {
        CHECK_RC(fmpl_send(sbuf[i], msg_size[i], partner, i), FMPL_SUCCESS);
        /* the data now lives in the spill buffer: scribble over ours */
        memset(sbuf[i], 0x3c, msg_size[i]);
    }
    CHECK_RC(fmpl_sendbuff_check(&nsend, &nspool), FMPL_SUCCESS);
    CHECK(nsend == 0 && nspool == NMSG,
          "after %d spilled sends: nsend %d nspool %d (expected 0 and %d)", NMSG, nsend,
          nspool, NMSG);
    CHECK_RC(fmpl_sendbuff_set(NULL, 0, 0), FMPL_ERR_SPILL);
    CHECK_RC(fmpl_sendbuff_check(NULL, NULL), FMPL_SUCCESS);

    sync_pair(partner);

    for (i = NMSG - 1; i >= 0; i--) {
        CHECK_RC(fmpl_recv(rbuf[i], msg_size[i] + 16, partner, i), FMPL_SUCCESS);
        PAT_VERIFY(rbuf[i], msg_size[i], seed_of(1, i), partner, i);
        POISON_VERIFY(rbuf[i] + msg_size[i], 16, PROG_POISON, "bytes after the message");
    }
    /* the partner got all our messages only if we pushed them all */
    sync_pair(partner);
    CHECK_RC(fmpl_sendbuff_check(&nsend2, &nspool2), FMPL_SUCCESS);
    CHECK(nspool2 == 0, "after delivery: nspool %d", nspool2);
    CHECK(nsend + nsend2 == NMSG, "delivered counts %d + %d, expected %d", nsend, nsend2,
          NMSG);
    CHECK_RC(fmpl_sendbuff_check(&nsend2, &nspool2), FMPL_SUCCESS);
    CHECK(nsend2 == 0 && nspool2 == 0, "second check: nsend %d nspool %d", nsend2, nspool2);
    CHECK_RC(fmpl_sendbuff_set(NULL, 0, 0), FMPL_SUCCESS);
    free(spill);
    for (i = 0; i < NMSG; i++) {
        free(sbuf[i]);
        free(rbuf[i]);
    }

    /* ---- part 2: spill buffer too small ------------------------------ */
    if (partner != prog_me) {
        size_t big = 64 << 10, small_spill = 4096;
        unsigned char *sb = prog_xmalloc(big), *rb = prog_xmalloc(big);
        int role;

        spill = prog_xmalloc(small_spill);
        CHECK_RC(fmpl_sendbuff_set(spill, small_spill, timeout), FMPL_SUCCESS);
        for (role = 0; role < 2; role++) {
            int sender = (prog_me < partner) == (role == 0);
            if (sender) {
                double t0 = prog_now();
                pat_fill(sb, big, seed_of(2, role), prog_me, BIG_MAI);
                CHECK_RC(fmpl_send(sb, big, partner, BIG_MAI), FMPL_SUCCESS);
                /* it cannot have been spilled: it waited for the receiver */
                CHECK(prog_now() - t0 > 0.1, "send of %zu bytes with a %zu-byte spill "
                      "buffer returned after %.3f s, before the receive was posted",
                      big, small_spill, prog_now() - t0);
                CHECK_RC(fmpl_sendbuff_check(&nsend, &nspool), FMPL_SUCCESS);
                CHECK(nspool == 0, "nspool %d after an unspillable send", nspool);
            } else {
                memset(rb, 0, big);
                prog_sleep(0.3);
                CHECK_RC(fmpl_recv(rb, big, partner, BIG_MAI), FMPL_SUCCESS);
                PAT_VERIFY(rb, big, seed_of(2, role), partner, BIG_MAI);
            }
        }
        CHECK_RC(fmpl_sendbuff_set(NULL, 0, 0), FMPL_SUCCESS);
        free(spill);

        /* room for the first message but not for both */
        spill_size = big + big / 2;
        spill = prog_xmalloc(spill_size);
        CHECK_RC(fmpl_sendbuff_set(spill, spill_size, timeout), FMPL_SUCCESS);
        if (prog_me < partner) {
            for (i = 0; i < 2; i++) {
                pat_fill(sb, big, seed_of(3, i), prog_me, BIG_MAI + i);
                CHECK_RC(fmpl_send(sb, big, partner, BIG_MAI + i), FMPL_SUCCESS);
                memset(sb, 0x77, big);
            }
        } else {
            prog_sleep(0.2);
            for (i = 0; i < 2; i++) {
                memset(rb, 0, big);
                CHECK_RC(fmpl_recv(rb, big, partner, BIG_MAI + i), FMPL_SUCCESS);
                PAT_VERIFY(rb, big, seed_of(3, i), partner, BIG_MAI + i);
            }
        }
        sync_pair(partner);
        CHECK_RC(fmpl_sendbuff_check(&nsend, &nspool), FMPL_SUCCESS);
        CHECK(nspool == 0, "nspool %d at the end", nspool);
        CHECK_RC(fmpl_sendbuff_set(NULL, 0, 0), FMPL_SUCCESS);
        free(spill);
        free(sb);
        free(rb);
    }
    /* ---- part 3: a spilled message that does not fit ---------------- */
    if (partner != prog_me) {
        unsigned char sb[1000], rb[600];
        spill = prog_xmalloc(65536);
        CHECK_RC(fmpl_sendbuff_set(spill, 65536, timeout), FMPL_SUCCESS);
        if (prog_me < partner) {
            pat_fill(sb, sizeof sb, 31, prog_me, TR_MAI);
            /* spilled (the partner waits for the sync first), so the
             * truncation is only known later: success or TRUNCATE */
            CHECK_RC2(fmpl_send(sb, sizeof sb, partner, TR_MAI), FMPL_SUCCESS,
                      FMPL_ERR_TRUNCATE);
            sync_pair(partner);
            pat_fill(sb, 500, 32, prog_me, TR_MAI);
            CHECK_RC(fmpl_send(sb, 500, partner, TR_MAI), FMPL_SUCCESS);
        } else {
            sync_pair(partner);
            memset(rb, PROG_POISON, sizeof rb);
            CHECK_RC(fmpl_recv(rb, 500, partner, TR_MAI), FMPL_ERR_TRUNCATE);
            POISON_VERIFY(rb, sizeof rb, PROG_POISON, "receive buffer of a truncated message");
            CHECK_RC(fmpl_recv(rb, 500, partner, TR_MAI), FMPL_SUCCESS);
            PAT_VERIFY(rb, 500, 32, partner, TR_MAI);
            POISON_VERIFY(rb + 500, sizeof rb - 500, PROG_POISON, "bytes after the message");
        }
        sync_pair(partner);
        CHECK_RC(fmpl_sendbuff_check(&nsend, &nspool), FMPL_SUCCESS);
        CHECK(nspool == 0, "nspool %d after a truncated spilled message", nspool);
        CHECK_RC(fmpl_sendbuff_set(NULL, 0, 0), FMPL_SUCCESS);
        free(spill);
    }

    /* ---- part 4: fmpl_finalize drains the spill buffer ---------------- */
    if (partner != prog_me) {
        static unsigned char spill4[1 << 20], b4[100000];
        if (prog_me < partner) {
            CHECK_RC(fmpl_sendbuff_set(spill4, sizeof spill4, timeout), FMPL_SUCCESS);
            pat_fill(b4, sizeof b4, 41, prog_me, FIN_MAI);
            CHECK_RC(fmpl_send(b4, sizeof b4, partner, FIN_MAI), FMPL_SUCCESS);
            memset(b4, 0, sizeof b4);
            CHECK_RC(fmpl_sendbuff_check(&nsend, &nspool), FMPL_SUCCESS);
            CHECK(nspool == 1, "part 4: the message was not spilled (nspool %d)", nspool);
            /* straight to fmpl_finalize (spill4 is static: it outlives it) */
        } else {
            prog_sleep(0.3);
            CHECK_RC(fmpl_recv(b4, sizeof b4, partner, FIN_MAI), FMPL_SUCCESS);
            PAT_VERIFY(b4, sizeof b4, 41, partner, FIN_MAI);
        }
    }
    return prog_finish();
}
