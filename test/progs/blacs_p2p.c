/*
 * blacs_p2p - BLACS point-to-point: C?gesd2d/C?gerv2d and C?trsd2d/
 * C?trrv2d for every type, between every pair of grid processes
 * (including a process and itself).
 *
 *   blacs_p2p [-P PHASES] [-T TYPES] [-g RxC]
 *     -P  phases to run (default "asbxn"):
 *         a  all-to-all: every process sends every shape of every type to
 *            every process, then receives them all.  Shapes: general
 *            matrices and U/L x unit/non-unit trapezoids with m < n,
 *            m = n, m > n, odd LDA on the sender, a different LDA on the
 *            receiver, zero-size messages (0 x n, m x 0, 0 x 0).  The
 *            receive buffer has guard elements before and after and
 *            between the columns (rows m..lda-1), and outside the
 *            trapezoid: all must stay untouched.  The sender's elements
 *            outside the trapezoid are poison and must not travel.
 *         s  locally-blocking sends: every process sends several 200 KB
 *            messages (contiguous and strided) to both ring neighbours
 *            before it receives any; must not hang.
 *         b  big messages (1.7 MB strided, a 900 x 400 trapezoid) to the
 *            next process, all sent before any is received
 *         x  contexts keep their messages apart: the same pair sends on
 *            two contexts, the receiver takes them in the other order
 *         n  1000 small messages (1..64 ints) to the next process before
 *            any is received
 *     -T  types (default "isdcz")
 *     -g  grid shape (default: nprow the largest divisor of np <= sqrt(np))
 * Messages between a pair on one context are received in the order sent.
 */
#include "blacs_test.h"

static int ctx, nprow, npcol, myrow, mycol;

struct shape {
    int m, n, lda_s, lda_r;
    char uplo, diag;             /* 'G': gesd2d */
};

static const struct shape shapes[] = {
    /* general */
    {5, 3, 5, 9, 'G', 'N'},
    {1, 1, 1, 1, 'G', 'N'},
    {7, 4, 11, 7, 'G', 'N'},
    {13, 1, 13, 20, 'G', 'N'},
    {1, 9, 3, 1, 'G', 'N'},
    {0, 5, 1, 3, 'G', 'N'},
    {5, 0, 5, 5, 'G', 'N'},
    {0, 0, 1, 1, 'G', 'N'},
    {33, 17, 35, 40, 'G', 'N'},
    /* trapezoids: m < n, m = n, m > n, both uplo, both diag */
    {3, 6, 5, 4, 'U', 'N'},
    {3, 6, 3, 7, 'U', 'U'},
    {3, 6, 7, 3, 'L', 'N'},
    {3, 6, 5, 9, 'L', 'U'},
    {5, 5, 7, 6, 'U', 'N'},
    {5, 5, 5, 8, 'U', 'U'},
    {5, 5, 9, 5, 'L', 'N'},
    {5, 5, 11, 7, 'L', 'U'},
    {7, 3, 9, 8, 'U', 'N'},
    {7, 3, 7, 10, 'U', 'U'},
    {7, 3, 11, 7, 'L', 'N'},
    {7, 3, 9, 12, 'L', 'U'},
    {1, 4, 1, 2, 'U', 'U'},
    {1, 4, 3, 1, 'L', 'U'},
    {4, 1, 5, 4, 'U', 'U'},
    {4, 1, 7, 6, 'L', 'U'},
    {1, 1, 1, 1, 'U', 'U'},     /* nothing at all travels */
    {0, 3, 1, 1, 'U', 'N'},
    {3, 0, 3, 5, 'L', 'N'},
    {20, 31, 21, 24, 'L', 'N'},
    {31, 20, 33, 31, 'U', 'U'},
};
#define NSHAPES ((int)(sizeof shapes / sizeof shapes[0]))

static uint64_t seed_of(int src, int dst, int tk, int k)
{
    return bt_hash((uint64_t)src << 32 | (uint32_t)dst, (uint64_t)tk, (uint64_t)k + 77);
}

static void send_mat(const bt_type_t *t, bt_mat_t *x, char uplo, char diag, int pr, int pc)
{
    char u[2] = {uplo, 0}, d[2] = {diag, 0};
    if (uplo == 'G')
        t->gesd2d(ctx, x->m, x->n, x->a, x->lda, pr, pc);
    else
        t->trsd2d(ctx, u, d, x->m, x->n, x->a, x->lda, pr, pc);
}

static void recv_mat(const bt_type_t *t, bt_mat_t *x, char uplo, char diag, int pr, int pc)
{
    char u[2] = {uplo, 0}, d[2] = {diag, 0};
    if (uplo == 'G')
        t->gerv2d(ctx, x->m, x->n, x->a, x->lda, pr, pc);
    else
        t->trrv2d(ctx, u, d, x->m, x->n, x->a, x->lda, pr, pc);
}

/* grid coordinates of pnum p on ctx (row-major gridinit) */
static void coords(int p, int *r, int *c)
{
    *r = p / npcol;
    *c = p % npcol;
}

static void phase_all(const char *types)
{
    for (const char *tc = types; *tc; tc++) {
        const bt_type_t *t = bt_type(*tc);
        int tk = (int)(tc - types);
        for (int k = 0; k < NSHAPES; k++) {
            const struct shape *s = &shapes[k];
            bt_mat_t x;
            bt_mat_init(&x, t, s->m, s->n, s->lda_s);
            for (int d = 0; d < bt_np; d++) {
                int r, c;
                coords(d, &r, &c);
                bt_mat_fill(&x, s->uplo, s->diag, seed_of(bt_me, d, t->ch, k));
                send_mat(t, &x, s->uplo, s->diag, r, c);
                /* locally blocking: the buffer is ours again */
                bt_mat_poison(&x);
            }
            bt_mat_free(&x);
        }
        (void)tk;
        for (int k = 0; k < NSHAPES; k++) {
            const struct shape *s = &shapes[k];
            for (int src = 0; src < bt_np; src++) {
                int r, c;
                bt_mat_t x;
                coords(src, &r, &c);
                bt_mat_init(&x, t, s->m, s->n, s->lda_r);
                recv_mat(t, &x, s->uplo, s->diag, r, c);
                BT_MAT_CHECK(&x, s->uplo, s->diag, seed_of(src, bt_me, t->ch, k),
                             "all-to-all: %s from pnum %d (%d,%d), shape %d, sender lda %d",
                             s->uplo == 'G' ? "gerv2d" : "trrv2d", src, r, c, k, s->lda_s);
                bt_mat_free(&x);
            }
        }
    }
}

/* Several 200 KB messages to both ring neighbours before any receive. */
#define NSTREAM 3
static void phase_stream(void)
{
    const bt_type_t *td = bt_type('d'), *tz = bt_type('z');
    int right = (bt_me + 1) % bt_np, left = (bt_me + bt_np - 1) % bt_np;
    int rr, rc, lr, lc;
    bt_mat_t m1, m2, m3;
    coords(right, &rr, &rc);
    coords(left, &lr, &lc);
    /* contiguous 25600 x 1 doubles = 200 KB; strided 160 x 160 doubles
     * (lda 333) = 200 KB; strided complex 90 x 142 (lda 91) = 200 KB */
    bt_mat_init(&m1, td, 25600, 1, 25600);
    bt_mat_init(&m2, td, 160, 160, 333);
    bt_mat_init(&m3, tz, 90, 142, 91);
    for (int k = 0; k < NSTREAM; k++)
        for (int dir = 0; dir < 2; dir++) {
            int r = dir ? lr : rr, c = dir ? lc : rc;
            bt_mat_fill(&m1, 'G', 'N', seed_of(bt_me, dir, 1000 + k, 1));
            send_mat(td, &m1, 'G', 'N', r, c);
            bt_mat_fill(&m2, 'G', 'N', seed_of(bt_me, dir, 1000 + k, 2));
            send_mat(td, &m2, 'G', 'N', r, c);
            bt_mat_fill(&m3, 'G', 'N', seed_of(bt_me, dir, 1000 + k, 3));
            send_mat(tz, &m3, 'G', 'N', r, c);
        }
    bt_mat_free(&m1);
    bt_mat_free(&m2);
    bt_mat_free(&m3);
    /* receivers use other leading dimensions */
    bt_mat_init(&m1, td, 25600, 1, 25601);
    bt_mat_init(&m2, td, 160, 160, 160);
    bt_mat_init(&m3, tz, 90, 142, 97);
    for (int k = 0; k < NSTREAM; k++)
        for (int dir = 0; dir < 2; dir++) {
            /* dir 0: what my left neighbour sent to its right (me) */
            int src = dir ? right : left, r = dir ? rr : lr, c = dir ? rc : lc;
            bt_mat_poison(&m1);
            recv_mat(td, &m1, 'G', 'N', r, c);
            BT_MAT_CHECK(&m1, 'G', 'N', seed_of(src, dir, 1000 + k, 1),
                         "stream: contiguous 200 KB #%d from pnum %d", k, src);
            bt_mat_poison(&m2);
            recv_mat(td, &m2, 'G', 'N', r, c);
            BT_MAT_CHECK(&m2, 'G', 'N', seed_of(src, dir, 1000 + k, 2),
                         "stream: strided 200 KB #%d from pnum %d", k, src);
            bt_mat_poison(&m3);
            recv_mat(tz, &m3, 'G', 'N', r, c);
            BT_MAT_CHECK(&m3, 'G', 'N', seed_of(src, dir, 1000 + k, 3),
                         "stream: strided complex 200 KB #%d from pnum %d", k, src);
        }
    bt_mat_free(&m1);
    bt_mat_free(&m2);
    bt_mat_free(&m3);
}

/* Big strided messages and a big trapezoid to the next process. */
static void phase_big(void)
{
    const bt_type_t *td = bt_type('d'), *ts = bt_type('s');
    int next = (bt_me + 1) % bt_np, prev = (bt_me + bt_np - 1) % bt_np;
    int nr, nc, pr, pc;
    bt_mat_t a, b;
    coords(next, &nr, &nc);
    coords(prev, &pr, &pc);
    bt_mat_init(&a, td, 700, 300, 701);
    bt_mat_fill(&a, 'G', 'N', seed_of(bt_me, next, 2000, 0));
    send_mat(td, &a, 'G', 'N', nr, nc);
    bt_mat_free(&a);
    bt_mat_init(&b, ts, 900, 400, 903);
    bt_mat_fill(&b, 'L', 'N', seed_of(bt_me, next, 2000, 1));
    send_mat(ts, &b, 'L', 'N', nr, nc);
    bt_mat_free(&b);
    /* and one to myself */
    bt_mat_init(&a, td, 500, 600, 517);
    bt_mat_fill(&a, 'U', 'U', seed_of(bt_me, bt_me, 2000, 2));
    send_mat(td, &a, 'U', 'U', myrow, mycol);
    bt_mat_free(&a);

    bt_mat_init(&a, td, 700, 300, 1001);
    recv_mat(td, &a, 'G', 'N', pr, pc);
    BT_MAT_CHECK(&a, 'G', 'N', seed_of(prev, bt_me, 2000, 0), "big: 700 x 300 from pnum %d",
                 prev);
    bt_mat_free(&a);
    bt_mat_init(&b, ts, 900, 400, 950);
    recv_mat(ts, &b, 'L', 'N', pr, pc);
    BT_MAT_CHECK(&b, 'L', 'N', seed_of(prev, bt_me, 2000, 1),
                 "big: 900 x 400 lower trapezoid from pnum %d", prev);
    bt_mat_free(&b);
    bt_mat_init(&a, td, 500, 600, 500);
    recv_mat(td, &a, 'U', 'U', myrow, mycol);
    BT_MAT_CHECK(&a, 'U', 'U', seed_of(bt_me, bt_me, 2000, 2),
                 "big: 500 x 600 unit upper trapezoid to myself");
    bt_mat_free(&a);
}

/* Many small messages in flight: NMANY messages of 1..64 ints to the next
 * process (and as many from the previous one) before any is received. */
#define NMANY 1000
static void phase_many(void)
{
    const bt_type_t *ti = bt_type('i');
    int next = (bt_me + 1) % bt_np, prev = (bt_me + bt_np - 1) % bt_np;
    int nr, nc, pr, pc, a[64], b[64 + 2];
    coords(next, &nr, &nc);
    coords(prev, &pr, &pc);
    for (int k = 0; k < NMANY; k++) {
        int len = 1 + k % 64;
        for (int q = 0; q < len; q++)
            a[q] = bt_me * 1000003 + k * 64 + q;
        ti->gesd2d(ctx, len, 1, a, len, nr, nc);
    }
    for (int k = 0; k < NMANY; k++) {
        int len = 1 + k % 64;
        b[len] = b[len + 1] = -12345;
        ti->gerv2d(ctx, len, 1, b, len, pr, pc);
        for (int q = 0; q < len; q++)
            CHECK(b[q] == prev * 1000003 + k * 64 + q, "many: message %d of %d from pnum %d: "
                  "element %d is %d, expected %d", k, NMANY, prev, q, b[q],
                  prev * 1000003 + k * 64 + q);
        CHECK(b[len] == -12345 && b[len + 1] == -12345, "many: message %d: elements after the "
              "%d received were overwritten", k, len);
    }
}

/* Two contexts over the same processes; every process sends to the next
 * on ctx then on ctx2, and the next receives ctx2 first. */
static void phase_ctx(void)
{
    const bt_type_t *ti = bt_type('i');
    int ctx2, r2, c2, pr2, pc2, next = (bt_me + 1) % bt_np, prev = (bt_me + bt_np - 1) % bt_np;
    int nr, nc, pr, pc;
    bt_mat_t a;
    Cblacs_get(-1, 0, &ctx2);
    /* the second grid is column-major 1 x np: pnum p is (0, p) */
    Cblacs_gridinit(&ctx2, "C", 1, bt_np);
    Cblacs_gridinfo(ctx2, &r2, &c2, &pr2, &pc2);
    CHECK(r2 == 1 && c2 == bt_np && pr2 == 0 && pc2 == bt_me, "ctx2 gridinfo %d %d %d %d", r2,
          c2, pr2, pc2);
    coords(next, &nr, &nc);
    coords(prev, &pr, &pc);
    bt_mat_init(&a, ti, 4, 3, 4);
    for (int k = 0; k < 3; k++) {
        bt_mat_fill(&a, 'G', 'N', seed_of(bt_me, 1, 3000, k));
        ti->gesd2d(ctx, 4, 3, a.a, 4, nr, nc);
        bt_mat_fill(&a, 'G', 'N', seed_of(bt_me, 2, 3000, k));
        ti->gesd2d(ctx2, 4, 3, a.a, 4, 0, next);
    }
    for (int k = 0; k < 3; k++) {
        bt_mat_poison(&a);
        ti->gerv2d(ctx2, 4, 3, a.a, 4, 0, prev);
        BT_MAT_CHECK(&a, 'G', 'N', seed_of(prev, 2, 3000, k),
                     "contexts: message %d on the second context from pnum %d", k, prev);
    }
    for (int k = 0; k < 3; k++) {
        bt_mat_poison(&a);
        ti->gerv2d(ctx, 4, 3, a.a, 4, pr, pc);
        BT_MAT_CHECK(&a, 'G', 'N', seed_of(prev, 1, 3000, k),
                     "contexts: message %d on the first context from pnum %d", k, prev);
    }
    bt_mat_free(&a);
    Cblacs_gridexit(ctx2);
}

int main(int argc, char **argv)
{
    const char *phases = "asbxn", *types = "isdcz", *grid = NULL;
    int opt;
    while ((opt = getopt(argc, argv, "P:T:g:")) != -1) {
        switch (opt) {
        case 'P': phases = optarg; break;
        case 'T': types = optarg; break;
        case 'g': grid = optarg; break;
        default:
            fprintf(stderr, "usage: blacs_p2p [-P asbxn] [-T isdcz] [-g RxC]\n");
            return 2;
        }
    }
    for (const char *c = types; *c; c++)
        if (!bt_type(*c)) {
            fprintf(stderr, "blacs_p2p: unknown type %c\n", *c);
            return 2;
        }
    bt_start("blacs_p2p");
    if (grid) {
        CHECK(bt_parse_grid(grid, &nprow, &npcol) && nprow * npcol == bt_np, "-g %s on %d",
              grid, bt_np);
    } else {
        nprow = 1;
        for (int r = 1; r * r <= bt_np; r++)
            if (bt_np % r == 0)
                nprow = r;
        npcol = bt_np / nprow;
    }
    Cblacs_get(-1, 0, &ctx);
    Cblacs_gridinit(&ctx, "R", nprow, npcol);
    {
        int a, b;
        Cblacs_gridinfo(ctx, &a, &b, &myrow, &mycol);
        CHECK(a == nprow && b == npcol && myrow == bt_me / npcol && mycol == bt_me % npcol,
              "gridinfo %d %d %d %d", a, b, myrow, mycol);
    }
    for (const char *p = phases; *p; p++) {
        switch (*p) {
        case 'a': phase_all(types); break;
        case 's': phase_stream(); break;
        case 'b': phase_big(); break;
        case 'x': phase_ctx(); break;
        case 'n': phase_many(); break;
        default: CHECK(0, "unknown phase %c", *p);
        }
        Cblacs_barrier(ctx, "A");
    }
    Cblacs_gridexit(ctx);
    return bt_finish();
}
