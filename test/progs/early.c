/*
 * early - small messages sent before their receive is posted (early
 * sends, src/p2p/p2p.h), between ranks 0 and 1 (the others only start and
 * finish):
 *
 *   before   after one exchange each way on an index, rank 0's next small
 *            send must complete while rank 1 has not posted its receive:
 *            rank 1 posts it only after a note that rank 0 sends once its
 *            send returned (a send that waited for the header would hang
 *            here, and the job's timeout fails it).
 *   truncate the same, with a receive smaller than the early message:
 *            the sender got FMPL_SUCCESS, the receiver FMPL_ERR_TRUNCATE,
 *            the sender's size in its request, its buffer untouched; the
 *            next message on the index arrives whole.
 *   pingpong every size 0..24 both ways, then a stream of small messages
 *            one way and back the other (the pattern switch), contents
 *            checked.
 *   cancel   rank 1 posts an irecv and cancels it while an early message
 *            may arrive: whichever wins, the message is received exactly
 *            once, whole, by the cancelled receive or by the next one.
 *
 *   -n N   ping-pong rounds per size and stream length (default 20)
 */
#include "prog.h"

#define EI 3                       /* the index under test */
#define NOTE 4                     /* rank 0's notes to rank 1 */

static int peer;

/* one message of `size` bytes from `from` to the other rank on EI */
static void one_way(int from, size_t size, uint64_t seed)
{
    unsigned char buf[32];
    if (prog_me == from) {
        pat_fill(buf, size, seed, prog_me, EI);
        CHECK_RC(fmpl_send(buf, size, peer, EI), FMPL_SUCCESS);
    } else {
        memset(buf, PROG_POISON, sizeof buf);
        CHECK_RC(fmpl_recv(buf, 24, peer, EI), FMPL_SUCCESS);
        PAT_VERIFY(buf, size, seed, peer, EI);
        POISON_VERIFY(buf + size, sizeof buf - size, PROG_POISON, "bytes after the message");
    }
}

static void before_post(void)
{
    one_way(0, 8, 1);
    one_way(1, 8, 2);              /* carries rank 1's acknowledgement */
    unsigned char buf[8];
    if (prog_me == 0) {
        pat_fill(buf, 8, 3, prog_me, EI);
        CHECK_RC(fmpl_send(buf, 8, peer, EI), FMPL_SUCCESS);
        CHECK_RC(fmpl_send(NULL, 0, peer, NOTE), FMPL_SUCCESS);
    } else {
        CHECK_RC(fmpl_recv(NULL, 0, peer, NOTE), FMPL_SUCCESS);
        memset(buf, 0, sizeof buf);
        CHECK_RC(fmpl_recv(buf, 8, peer, EI), FMPL_SUCCESS);
        PAT_VERIFY(buf, 8, 3, peer, EI);
    }
}

static void truncate_early(void)
{
    one_way(0, 16, 4);
    one_way(1, 16, 5);
    unsigned char buf[32];
    if (prog_me == 0) {
        pat_fill(buf, 16, 6, prog_me, EI);
        CHECK_RC(fmpl_send(buf, 16, peer, EI), FMPL_SUCCESS);
        CHECK_RC(fmpl_send(NULL, 0, peer, NOTE), FMPL_SUCCESS);
    } else {
        CHECK_RC(fmpl_recv(NULL, 0, peer, NOTE), FMPL_SUCCESS);
        fmpl_request_t r;
        memset(&r, 0, sizeof r);
        memset(buf, PROG_POISON, sizeof buf);
        CHECK_RC(fmpl_irecv(buf, 4, peer, EI, &r), FMPL_SUCCESS);
        CHECK_RC(fmpl_wait_irecv(&r), FMPL_ERR_TRUNCATE);
        POISON_VERIFY(buf, sizeof buf, PROG_POISON, "truncated receive buffer");
        CHECK(r.size == 16, "truncated receive reports %zu bytes, want 16", (size_t)r.size);
    }
    one_way(0, 12, 7);             /* the index still works */
    one_way(1, 12, 8);
}

static void pingpong(int n)
{
    for (size_t s = 0; s <= 24; s++)
        for (int i = 0; i < n; i++) {
            one_way(0, s, 100 + s * 1000 + (size_t)i);
            one_way(1, s, 200 + s * 1000 + (size_t)i);
        }
    for (int i = 0; i < n; i++)
        one_way(0, (size_t)i % 25, 300 + (size_t)i);
    for (int i = 0; i < n; i++)
        one_way(1, (size_t)i % 25, 400 + (size_t)i);
    one_way(0, 24, 500);
}

static void cancel(int n)
{
    unsigned char buf[32];
    for (int i = 0; i < n; i++) {
        one_way(0, 8, 600 + (size_t)i);
        one_way(1, 8, 700 + (size_t)i);
        uint64_t seed = 800 + (size_t)i;
        if (prog_me == 0) {
            pat_fill(buf, 20, seed, prog_me, EI);
            CHECK_RC(fmpl_send(buf, 20, peer, EI), FMPL_SUCCESS);
            continue;
        }
        fmpl_request_t r;
        memset(&r, 0, sizeof r);
        memset(buf, PROG_POISON, sizeof buf);
        CHECK_RC(fmpl_irecv(buf, 24, peer, EI, &r), FMPL_SUCCESS);
        int done = 0;
        for (int k = 0; k < i % 4 && !done; k++)   /* let it come, sometimes */
            CHECK_RC(fmpl_test(&r, &done), FMPL_SUCCESS);
        int rc = fmpl_cancel_irecv(&r);
        CHECK(rc == FMPL_SUCCESS || rc == FMPL_ERR_BUSY, "fmpl_cancel_irecv: %s",
              fmpl_error_name(rc));
        if (rc == FMPL_SUCCESS) {
            POISON_VERIFY(buf, sizeof buf, PROG_POISON, "cancelled receive buffer");
            CHECK_RC(fmpl_recv(buf, 24, peer, EI), FMPL_SUCCESS);
        } else {
            CHECK_RC(fmpl_wait_irecv(&r), FMPL_SUCCESS);
            CHECK(r.size == 20, "receive reports %zu bytes, want 20", (size_t)r.size);
        }
        PAT_VERIFY(buf, 20, seed, peer, EI);
        POISON_VERIFY(buf + 20, sizeof buf - 20, PROG_POISON, "bytes after the message");
    }
}

int main(int argc, char **argv)
{
    long n = 20;
    struct prog_opt opts[] = {
        {'n', OPT_INT, &n, "ping-pong rounds per size, stream length, cancels (default 20)"},
    };
    prog_parse(argc, argv, opts, 1);
    CHECK(n >= 1 && n <= 100000, "bad options");
    prog_init("early", 8);
    if (prog_np >= 2 && prog_me <= 1) {
        peer = 1 - prog_me;
        before_post();
        truncate_early();
        pingpong((int)n);
        cancel((int)n);
    }
    if (prog_me == 0)
        printf("early: before-post, truncate, ping-pong 0..24 B x %ld, streams, %ld cancels\n",
               n, n);
    return prog_finish();
}
