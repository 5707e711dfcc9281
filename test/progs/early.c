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
 *   long     the same with a message of 200 bytes, which rides in the
 *            record's extension where the transport has one (shm; p2p.h)
 *            and goes early there; elsewhere it waits for the header,
 *            and the sender sees the truncation too (-L: it must have
 *            gone early: the sender's send succeeded).
 *   pingpong every size 0..24 both ways and the sizes around the
 *            record's extension (25..2300), then a stream of small
 *            messages one way and back the other (the pattern switch),
 *            contents checked.
 *   cancel   rank 1 posts an irecv and cancels it while an early message
 *            may arrive: whichever wins, the message is received exactly
 *            once, whole, by the cancelled receive or by the next one.
 *   matrix   fmpl_comm_sendm/recvm of small matrices on FMPL_COMM_WORLD:
 *            one sent before its receive is posted, strided 2 x 2 ones
 *            both ways, and one of 2 x 1 met by a receive of 1 x 2:
 *            FMPL_ERR_SHAPE for the receiver, its matrix untouched, the
 *            sender FMPL_SUCCESS.  A matrix send returns anyway (it queues
 *            a copy), so these check the early path's delivery and shape
 *            check, which it takes here, not that it was taken.
 *
 *   -n N   ping-pong rounds per size and stream length (default 20)
 *   -L     the transport's records carry 200 bytes (shm, dcfa): see long
 */
#include "prog.h"

#define EI 3                       /* the index under test */
#define NOTE 4                     /* rank 0's notes to rank 1 */

static int peer;
static int long_early;             /* -L */

/* one message of `size` bytes from `from` to the other rank on EI; every
 * third one (by seed) to an irecv */
#define RMAX 2304                  /* the receives' room */
static void one_way(int from, size_t size, uint64_t seed)
{
    unsigned char buf[RMAX + 32];
    if (prog_me == from) {
        pat_fill(buf, size, seed, prog_me, EI);
        CHECK_RC(fmpl_send(buf, size, peer, EI), FMPL_SUCCESS);
    } else {
        memset(buf, PROG_POISON, sizeof buf);
        size_t room = size <= 24 ? 24 : seed % 2 && size <= 2048 ? size : RMAX;
        if (seed % 3 == 0) {
            fmpl_request_t r;
            memset(&r, 0, sizeof r);
            CHECK_RC(fmpl_irecv(buf, room, peer, EI, &r), FMPL_SUCCESS);
            CHECK_RC(fmpl_wait_irecv(&r), FMPL_SUCCESS);
        } else {
            CHECK_RC(fmpl_recv(buf, room, peer, EI), FMPL_SUCCESS);
        }
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

/* A message of `size` bytes met by a receive of `room` < size posted after
 * it was sent: the receiver gets FMPL_ERR_TRUNCATE, the sender's size,
 * its buffer untouched.  `early`: the message must have gone before the
 * header (the sender: success); else it may also have waited for it (the
 * sender: the truncation too).  Then the index still works. */
static void truncate_early(size_t size, size_t room, uint64_t seed, int early)
{
    one_way(0, size, seed);
    one_way(1, size, seed + 1);
    unsigned char buf[256];
    fmpl_request_t r;
    memset(&r, 0, sizeof r);
    if (prog_me == 0) {
        pat_fill(buf, size, seed + 2, prog_me, EI);
        CHECK_RC(fmpl_isend(buf, size, peer, EI, &r), FMPL_SUCCESS);
        CHECK_RC(fmpl_send(NULL, 0, peer, NOTE), FMPL_SUCCESS);
        int rc = fmpl_wait_isend(&r);
        CHECK(rc == FMPL_SUCCESS || (rc == FMPL_ERR_TRUNCATE && !early),
              "the send of %zu bytes: %s", size, fmpl_error_name(rc));
    } else {
        CHECK_RC(fmpl_recv(NULL, 0, peer, NOTE), FMPL_SUCCESS);
        memset(buf, PROG_POISON, sizeof buf);
        CHECK_RC(fmpl_irecv(buf, room, peer, EI, &r), FMPL_SUCCESS);
        CHECK_RC(fmpl_wait_irecv(&r), FMPL_ERR_TRUNCATE);
        POISON_VERIFY(buf, sizeof buf, PROG_POISON, "truncated receive buffer");
        CHECK(r.size == size, "truncated receive reports %zu bytes, want %zu",
              (size_t)r.size, size);
    }
    one_way(0, room, seed + 3);
    one_way(1, size, seed + 4);
}

static void pingpong(int n)
{
    static const size_t longer[] = { 25, 31, 32, 63, 64, 65, 100, 200, 255, 256, 257, 300,
                                     1000, 1024, 2047, 2048, 2049, 2300 };
    for (size_t s = 0; s <= 24; s++)
        for (int i = 0; i < n; i++) {
            one_way(0, s, 100 + s * 1000 + (size_t)i);
            one_way(1, s, 200 + s * 1000 + (size_t)i);
        }
    for (size_t k = 0; k < sizeof longer / sizeof longer[0]; k++)
        for (int i = 0; i < n; i++) {
            one_way(0, longer[k], 150 + longer[k] * 1000 + (size_t)i);
            one_way(1, longer[k], 250 + longer[k] * 1000 + (size_t)i);
        }
    for (int i = 0; i < n; i++)    /* short and long by turns */
        one_way(i & 1, i & 2 ? (i & 4 ? 2048 : 256) : (size_t)i % 25, 350 + (size_t)i);
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

/* a small matrix message from `from` to the other rank on the world */
static void mx_one_way(int from, const fmpl_matrix_t *shape, uint64_t seed)
{
    double a[16];
    if (prog_me == from) {
        pat_fill(a, sizeof a, seed, prog_me, 0);
        CHECK_RC(fmpl_comm_sendm(a, shape, peer, FMPL_COMM_WORLD), FMPL_SUCCESS);
        return;
    }
    double want[16];
    pat_fill(want, sizeof want, seed, peer, 0);
    for (int k = 0; k < 16; k++)
        a[k] = -1.0;
    CHECK_RC(fmpl_comm_recvm(a, shape, peer, FMPL_COMM_WORLD), FMPL_SUCCESS);
    for (size_t j = 0; j < shape->n; j++)
        for (size_t i = 0; i < shape->ld; i++) {
            size_t k = j * shape->ld + i;
            if (i < shape->m)
                CHECK(memcmp(&a[k], &want[k], sizeof a[k]) == 0, "matrix element %zu", k);
            else
                CHECK(a[k] == -1.0, "element %zu between the columns was written", k);
        }
}

static void matrix(int n)
{
    fmpl_matrix_t one = { .esize = sizeof(double), .m = 1, .n = 1, .ld = 1, .uplo = 'G' };
    fmpl_matrix_t sq = { .esize = sizeof(double), .m = 2, .n = 2, .ld = 3, .uplo = 'G' };
    fmpl_matrix_t col = { .esize = sizeof(double), .m = 2, .n = 1, .ld = 2, .uplo = 'G' };
    fmpl_matrix_t row = { .esize = sizeof(double), .m = 1, .n = 2, .ld = 1, .uplo = 'G' };
    double a[4];
    mx_one_way(0, &one, 900);
    mx_one_way(1, &one, 901);
    if (prog_me == 0) {            /* before its receive is posted */
        a[0] = 42.5;
        CHECK_RC(fmpl_comm_sendm(a, &one, peer, FMPL_COMM_WORLD), FMPL_SUCCESS);
        CHECK_RC(fmpl_send(NULL, 0, peer, NOTE), FMPL_SUCCESS);
    } else {
        CHECK_RC(fmpl_recv(NULL, 0, peer, NOTE), FMPL_SUCCESS);
        a[0] = 0;
        CHECK_RC(fmpl_comm_recvm(a, &one, peer, FMPL_COMM_WORLD), FMPL_SUCCESS);
        CHECK(a[0] == 42.5, "early matrix element %g, want 42.5", a[0]);
    }
    for (int i = 0; i < n; i++) {
        mx_one_way(0, &sq, 1000 + (size_t)i);
        mx_one_way(1, &sq, 2000 + (size_t)i);
    }
    mx_one_way(0, &col, 3000);
    mx_one_way(1, &col, 3001);
    if (prog_me == 0) {            /* 2 x 1 again, early; met by a 1 x 2 */
        a[0] = 1;
        a[1] = 2;
        CHECK_RC(fmpl_comm_sendm(a, &col, peer, FMPL_COMM_WORLD), FMPL_SUCCESS);
        CHECK_RC(fmpl_send(NULL, 0, peer, NOTE), FMPL_SUCCESS);
    } else {
        CHECK_RC(fmpl_recv(NULL, 0, peer, NOTE), FMPL_SUCCESS);
        a[0] = a[1] = -1;
        CHECK_RC(fmpl_comm_recvm(a, &row, peer, FMPL_COMM_WORLD), FMPL_ERR_SHAPE);
        CHECK(a[0] == -1 && a[1] == -1, "a receive of the wrong shape was written");
    }
    mx_one_way(0, &row, 4000);     /* the pair still works */
    mx_one_way(1, &row, 4001);
}

int main(int argc, char **argv)
{
    long n = 20;
    struct prog_opt opts[] = {
        {'n', OPT_INT, &n, "ping-pong rounds per size, stream length, cancels (default 20)"},
        {'L', OPT_FLAG, &long_early, "a 200-byte message goes early (shm, dcfa)"},
    };
    prog_parse(argc, argv, opts, 2);
    CHECK(n >= 1 && n <= 100000, "bad options");
    prog_init("early", 8);
    if (prog_np >= 2 && prog_me <= 1) {
        peer = 1 - prog_me;
        before_post();
        truncate_early(16, 4, 4, 1);   /* fits any transport's record */
        truncate_early(200, 100, 10, long_early);   /* the extension's (shm, dcfa) */
        pingpong((int)n);
        cancel((int)n);
        matrix((int)n);
    }
    if (prog_me == 0)
        printf("early: before-post, truncate (16 and 200 B), ping-pong 0..24 and 25..2300 B "
               "x %ld, streams, %ld cancels, matrices\n", n, n);
    return prog_finish();
}
