/*
 * coll_args - bad arguments to the communicator, collective and halo
 * calls return their documented codes, and everything works afterwards.
 *
 *   coll_args
 *
 * Before fmpl_init every call returns FMPL_ERR_NOT_INIT.  After it, every
 * rank makes the same bad call at the same time (so a collective that
 * failed on one rank cannot leave another waiting):
 *   invalid communicator handles (FMPL_COMM_NULL, negative, too large,
 *   freed)                                     -> FMPL_ERR_COMM
 *   fmpl_comm_free(&WORLD)                     -> FMPL_ERR_COMM
 *   root or rank out of range                  -> FMPL_ERR_RANK
 *   invalid, freed or predefined-out-of-range operations -> FMPL_ERR_OP
 *   negative counts                            -> FMPL_ERR_ARG
 *   NULL buffer with a non-zero size           -> FMPL_ERR_BUFFER
 *   NULL buffers with size 0                   -> FMPL_SUCCESS
 *   fmpl_halo_init with bad dimensions, sizes, widths, neighbours, flags,
 *   NULL array, invalid communicator, neighbours that do not name each
 *   other back, and a bad argument on rank 0 only (every rank must
 *   return an error, none may hang)
 * then real collectives and a few halo exchanges (no slot leaked by the
 * failed creations).
 */
#include "prog.h"

#include <limits.h>

static void sum_fn(void *inout, const void *in, int count)
{
    int *a = inout;
    const int *b = in;
    int i;
    for (i = 0; i < count; i++)
        a[i] += b[i];
}

static void before_init(void)
{
    char b[64], rb[64];
    fmpl_comm_t c = 1;
    fmpl_halo_t h = NULL;
    int r, ext[2] = {4, 4}, sh[2] = {1, 1}, nbr[4] = {-1, -1, -1, -1};
    fmpl_op_t op = 0;

    CHECK_RC(fmpl_comm_create(1, &c), FMPL_ERR_NOT_INIT);
    CHECK_RC(fmpl_comm_split(FMPL_COMM_WORLD, 0, 0, &c), FMPL_ERR_NOT_INIT);
    CHECK_RC(fmpl_comm_rank(FMPL_COMM_WORLD, &r), FMPL_ERR_NOT_INIT);
    CHECK_RC(fmpl_comm_size(FMPL_COMM_WORLD, &r), FMPL_ERR_NOT_INIT);
    CHECK_RC(fmpl_comm_world_rank(FMPL_COMM_WORLD, 0, &r), FMPL_ERR_NOT_INIT);
    c = 1;
    CHECK_RC(fmpl_comm_free(&c), FMPL_ERR_NOT_INIT);
    CHECK_RC(fmpl_barrier(FMPL_COMM_WORLD), FMPL_ERR_NOT_INIT);
    CHECK_RC(fmpl_bcast(b, 8, 0, FMPL_COMM_WORLD), FMPL_ERR_NOT_INIT);
    CHECK_RC(fmpl_hbcast(b, 8, 0), FMPL_ERR_NOT_INIT);
    CHECK_RC(fmpl_reduce(b, 2, fmpl_isum, 0, FMPL_COMM_WORLD, NULL), FMPL_ERR_NOT_INIT);
    CHECK_RC(fmpl_allreduce(b, 2, fmpl_dsum, FMPL_COMM_WORLD, NULL), FMPL_ERR_NOT_INIT);
    CHECK_RC(fmpl_allgather(b, 8, rb, FMPL_COMM_WORLD), FMPL_ERR_NOT_INIT);
    CHECK_RC(fmpl_gather(b, 8, rb, 0, FMPL_COMM_WORLD), FMPL_ERR_NOT_INIT);
    CHECK_RC(fmpl_scatter(b, 8, rb, 0, FMPL_COMM_WORLD), FMPL_ERR_NOT_INIT);
    CHECK_RC(fmpl_halo_init(b, 1, 2, ext, sh, nbr, 0, FMPL_COMM_WORLD, &h), FMPL_ERR_NOT_INIT);
    CHECK(h == NULL, "fmpl_halo_init before init gave a handle");
    CHECK_RC(fmpl_halo_do(h), FMPL_ERR_NOT_INIT);
    CHECK_RC(fmpl_halo_free(&h), FMPL_ERR_NOT_INIT);
    /* local: the documentation does not say whether it needs init */
    CHECK_RC2(fmpl_op_create(4, sum_fn, &op), FMPL_SUCCESS, FMPL_ERR_NOT_INIT);
    if (op != 0) {
        CHECK(fmpl_op_size(op) == 4, "fmpl_op_size of an op made before init: %zu",
              fmpl_op_size(op));
        CHECK_RC(fmpl_op_free(&op), FMPL_SUCCESS);
    }
}

/* every collective on handle c returns FMPL_ERR_COMM */
static void bad_comm(fmpl_comm_t c)
{
    char b[64], rb[64 * 64];
    int r, v[2] = {1, 2};
    fmpl_comm_t nc = 99, cc = c;
    fmpl_halo_t h = NULL;
    int ext[2] = {4, 4}, sh[2] = {1, 1}, nbr[4] = {-1, -1, -1, -1};

    memset(b, 0, sizeof b);
    CHECK_RC(fmpl_comm_rank(c, &r), FMPL_ERR_COMM);
    CHECK_RC(fmpl_comm_size(c, &r), FMPL_ERR_COMM);
    CHECK_RC(fmpl_comm_world_rank(c, 0, &r), FMPL_ERR_COMM);
    CHECK_RC(fmpl_comm_split(c, 0, 0, &nc), FMPL_ERR_COMM);
    CHECK_RC(fmpl_comm_free(&cc), FMPL_ERR_COMM);
    CHECK(cc == c, "a failed fmpl_comm_free changed the handle to %d", cc);
    CHECK_RC(fmpl_barrier(c), FMPL_ERR_COMM);
    CHECK_RC(fmpl_bcast(b, 8, 0, c), FMPL_ERR_COMM);
    CHECK_RC(fmpl_reduce(v, 2, fmpl_isum, 0, c, NULL), FMPL_ERR_COMM);
    CHECK_RC(fmpl_allreduce(v, 2, fmpl_isum, c, NULL), FMPL_ERR_COMM);
    CHECK_RC(fmpl_allgather(b, 8, rb, c), FMPL_ERR_COMM);
    CHECK_RC(fmpl_gather(b, 8, rb, 0, c), FMPL_ERR_COMM);
    CHECK_RC(fmpl_scatter(rb, 8, b, 0, c), FMPL_ERR_COMM);
    CHECK_RC(fmpl_halo_init(rb, 1, 2, ext, sh, nbr, 0, c, &h), FMPL_ERR_COMM);
    CHECK(h == NULL, "a failed fmpl_halo_init left a handle");
}

static void halo_bad(void)
{
    static unsigned char arr[4096];
    int ext[3] = {4, 4, 4}, sh[3] = {1, 1, 1}, nbr[6] = {-1, -1, -1, -1, -1, -1};
    fmpl_halo_t h = NULL;
    int e2[3], s2[3], n2[6], i;

#define HALO_RC(expect, array, es, nd, e, s, n, fl)                             \
    do {                                                                      \
        h = NULL;                                                             \
        CHECK_RC(fmpl_halo_init((array), (es), (nd), (e), (s), (n), (fl), FMPL_COMM_WORLD, \
                                &h), (expect));                              \
        CHECK(h == NULL, "a failed fmpl_halo_init left a handle");            \
    } while (0)
#define RESET()                                                               \
    do {                                                                      \
        for (i = 0; i < 3; i++) { e2[i] = ext[i]; s2[i] = sh[i]; }            \
        for (i = 0; i < 6; i++) n2[i] = nbr[i];                               \
    } while (0)

    RESET();
    HALO_RC(FMPL_ERR_ARG, arr, 8, 1, e2, s2, n2, 0);          /* ndims 1 */
    HALO_RC(FMPL_ERR_ARG, arr, 8, 4, e2, s2, n2, 0);          /* ndims 4 */
    HALO_RC(FMPL_ERR_ARG, arr, 8, 0, e2, s2, n2, 0);
    HALO_RC(FMPL_ERR_ARG, arr, 0, 2, e2, s2, n2, 0);          /* element size 0 */
    e2[1] = 0;
    HALO_RC(FMPL_ERR_ARG, arr, 8, 2, e2, s2, n2, 0);          /* extent 0 */
    RESET();
    e2[0] = -3;
    HALO_RC(FMPL_ERR_ARG, arr, 8, 2, e2, s2, n2, 0);          /* negative extent */
    RESET();
    s2[1] = -1;
    HALO_RC(FMPL_ERR_ARG, arr, 8, 2, e2, s2, n2, 0);          /* negative width */
    RESET();
    s2[0] = 5;
    HALO_RC(FMPL_ERR_ARG, arr, 8, 2, e2, s2, n2, 0);          /* width > extent */
    RESET();
    e2[0] = e2[1] = e2[2] = 0x7fffffff;                       /* 2^93 bytes and more: */
    HALO_RC(FMPL_ERR_ARG, arr, 1 << 30, 3, e2, s2, n2, 0);    /* not a size_t */
    RESET();
    n2[1] = prog_np;
    HALO_RC(FMPL_ERR_RANK, arr, 8, 2, e2, s2, n2, 0);         /* no such neighbour */
    RESET();
    n2[4] = -2;
    HALO_RC(FMPL_ERR_RANK, arr, 8, 3, e2, s2, n2, 0);
    RESET();
    HALO_RC(FMPL_ERR_BUFFER, NULL, 8, 2, e2, s2, n2, 0);      /* NULL array */
    HALO_RC(FMPL_ERR_ARG, arr, 8, 2, e2, s2, n2, 0x100);      /* unknown flag */
    CHECK_RC(fmpl_halo_init(arr, 8, 2, e2, s2, n2, 0, FMPL_COMM_WORLD, NULL), FMPL_ERR_ARG);
    /* neighbours that do not name each other back: my lower neighbour
     * along 0 is myself, but my upper one is nobody */
    n2[0] = prog_me;
    HALO_RC(FMPL_ERR_ARG, arr, 8, 2, e2, s2, n2, 0);
    RESET();
    /* members that disagree: element size */
    if (prog_np > 1)
        HALO_RC(FMPL_ERR_ARG, arr, prog_me == 0 ? 8 : 4, 2, e2, s2, n2, 0);
    /* a bad argument on rank 0 only: every rank gets an error, and none
     * waits forever */
    {
        int rc = fmpl_halo_init(prog_me == 0 ? NULL : arr, 8, 2, e2, s2, n2, 0,
                                FMPL_COMM_WORLD, &h);
        if (prog_me == 0)
            CHECK(rc == FMPL_ERR_BUFFER, "NULL array on rank 0: %s", fmpl_error_name(rc));
        else
            CHECK(rc != FMPL_SUCCESS, "rank 0 passed a NULL array, yet fmpl_halo_init "
                  "succeeded here");
        CHECK(h == NULL, "a failed fmpl_halo_init left a handle");
    }
    CHECK_RC(fmpl_halo_do(NULL), FMPL_ERR_ARG);
    CHECK_RC(fmpl_halo_free(NULL), FMPL_ERR_ARG);
    h = NULL;
    CHECK_RC(fmpl_halo_free(&h), FMPL_ERR_ARG);
    CHECK(fmpl_halo_kind(NULL, 0) < 0, "fmpl_halo_kind(NULL, 0) = %d", fmpl_halo_kind(NULL, 0));
#undef HALO_RC
#undef RESET
}

int main(void)
{
    static const fmpl_comm_t bad_handles[] = {FMPL_COMM_NULL, -5, 64, 1000, 12345, INT_MAX,
                                              INT_MIN, FMPL_UNDEFINED};
    static const fmpl_op_t bad_ops[] = {0, -1, fmpl_zmin + 1, 63, 64, 1000, INT_MAX, INT_MIN};
    char b[256], rb[256 * 64];
    int v[4] = {1, 2, 3, 4}, r, n, i, k;
    fmpl_comm_t w = FMPL_COMM_WORLD, c;
    fmpl_op_t uop, fop;

    prog_name = "coll_args";
    setvbuf(stdout, NULL, _IOLBF, 0);
    before_init();
    prog_init("coll_args", 1);
    CHECK(prog_np <= 64, "at most 64 ranks");
    n = prog_np;
    memset(b, 0, sizeof b);

    /* ---- communicators ---- */
    for (k = 0; k < (int)(sizeof bad_handles / sizeof bad_handles[0]); k++)
        bad_comm(bad_handles[k]);
    CHECK_RC(fmpl_comm_free(&w), FMPL_ERR_COMM);
    CHECK(w == FMPL_COMM_WORLD, "fmpl_comm_free(&WORLD) changed the handle to %d", w);
    CHECK_RC(fmpl_comm_free(NULL), FMPL_ERR_ARG);
    CHECK_RC(fmpl_comm_rank(FMPL_COMM_WORLD, NULL), FMPL_ERR_ARG);
    CHECK_RC(fmpl_comm_size(FMPL_COMM_WORLD, NULL), FMPL_ERR_ARG);
    CHECK_RC(fmpl_comm_world_rank(FMPL_COMM_WORLD, 0, NULL), FMPL_ERR_ARG);
    CHECK_RC(fmpl_comm_world_rank(FMPL_COMM_WORLD, n, &r), FMPL_ERR_RANK);
    CHECK_RC(fmpl_comm_world_rank(FMPL_COMM_WORLD, -1, &r), FMPL_ERR_RANK);
    CHECK_RC(fmpl_comm_create(1, NULL), FMPL_ERR_ARG);
    CHECK_RC(fmpl_comm_split(FMPL_COMM_WORLD, 0, 0, NULL), FMPL_ERR_ARG);
    /* a freed handle */
    CHECK_RC(fmpl_comm_split(FMPL_COMM_WORLD, 0, 0, &c), FMPL_SUCCESS);
    {
        fmpl_comm_t old = c;
        CHECK_RC(fmpl_comm_free(&c), FMPL_SUCCESS);
        bad_comm(old);
    }

    /* ---- roots ---- */
    {
        static const int bad_roots[] = {-1, -100, 0 /* n */, 0 /* n + 5 */, INT_MAX, INT_MIN};
        for (k = 0; k < 6; k++) {
            int root = k == 2 ? n : k == 3 ? n + 5 : bad_roots[k];
            CHECK_RC(fmpl_bcast(b, 8, root, FMPL_COMM_WORLD), FMPL_ERR_RANK);
            CHECK_RC(fmpl_hbcast(b, 8, root), FMPL_ERR_RANK);
            CHECK_RC(fmpl_reduce(v, 4, fmpl_isum, root, FMPL_COMM_WORLD, NULL), FMPL_ERR_RANK);
            CHECK_RC(fmpl_gather(b, 8, rb, root, FMPL_COMM_WORLD), FMPL_ERR_RANK);
            CHECK_RC(fmpl_scatter(rb, 8, b, root, FMPL_COMM_WORLD), FMPL_ERR_RANK);
        }
    }

    /* ---- operations ---- */
    CHECK_RC(fmpl_op_create(4, sum_fn, &uop), FMPL_SUCCESS);
    CHECK_RC(fmpl_op_create(4, sum_fn, &fop), FMPL_SUCCESS);
    CHECK(uop != fop, "two user ops with one handle %d", uop);
    {
        fmpl_op_t freed = fop;
        CHECK_RC(fmpl_op_free(&fop), FMPL_SUCCESS);
        CHECK(fop == 0, "fmpl_op_free left %d", fop);
        CHECK(fmpl_op_size(freed) == 0, "fmpl_op_size of a freed op is %zu",
              fmpl_op_size(freed));
        CHECK_RC(fmpl_reduce(v, 4, freed, 0, FMPL_COMM_WORLD, NULL), FMPL_ERR_OP);
        CHECK_RC(fmpl_allreduce(v, 4, freed, FMPL_COMM_WORLD, NULL), FMPL_ERR_OP);
        fop = freed;
        CHECK(fmpl_op_free(&fop) != FMPL_SUCCESS, "freeing an op twice succeeded");
    }
    for (k = 0; k < (int)(sizeof bad_ops / sizeof bad_ops[0]); k++) {
        fmpl_op_t op = bad_ops[k];
        if (op == uop)
            continue;
        CHECK(fmpl_op_size(op) == 0, "fmpl_op_size(%d) = %zu", op, fmpl_op_size(op));
        CHECK_RC(fmpl_reduce(v, 4, op, 0, FMPL_COMM_WORLD, NULL), FMPL_ERR_OP);
        CHECK_RC(fmpl_allreduce(v, 4, op, FMPL_COMM_WORLD, NULL), FMPL_ERR_OP);
    }
    for (k = fmpl_isum; k <= fmpl_zmin; k++) {
        fmpl_op_t op = k;
        size_t want = (k - 1) % 5 == 0 ? 4 : (k - 1) % 5 == 1 ? 4 : (k - 1) % 5 == 2 ? 8
                      : (k - 1) % 5 == 3 ? 8 : 16;
        CHECK(fmpl_op_size(k) == want, "fmpl_op_size(%d) = %zu, expected %zu", k,
              fmpl_op_size(k), want);
        CHECK(fmpl_op_free(&op) != FMPL_SUCCESS, "fmpl_op_free of predefined op %d succeeded",
              k);
    }
    CHECK_RC(fmpl_op_create(0, sum_fn, &fop), FMPL_ERR_ARG);
    CHECK_RC(fmpl_op_create(4, NULL, &fop), FMPL_ERR_ARG);
    CHECK_RC(fmpl_op_create(4, sum_fn, NULL), FMPL_ERR_ARG);
    CHECK(fmpl_op_free(NULL) != FMPL_SUCCESS, "fmpl_op_free(NULL) succeeded");

    /* ---- counts and buffers ---- */
    CHECK_RC(fmpl_reduce(v, -1, fmpl_isum, 0, FMPL_COMM_WORLD, NULL), FMPL_ERR_ARG);
    CHECK_RC(fmpl_reduce(v, INT_MIN, fmpl_dsum, 0, FMPL_COMM_WORLD, NULL), FMPL_ERR_ARG);
    CHECK_RC(fmpl_allreduce(v, -1, fmpl_isum, FMPL_COMM_WORLD, NULL), FMPL_ERR_ARG);
    CHECK_RC(fmpl_allreduce(v, -7, uop, FMPL_COMM_WORLD, NULL), FMPL_ERR_ARG);
    CHECK_RC(fmpl_bcast(NULL, 8, 0, FMPL_COMM_WORLD), FMPL_ERR_BUFFER);
    CHECK_RC(fmpl_hbcast(NULL, 8, 0), FMPL_ERR_BUFFER);
    CHECK_RC(fmpl_reduce(NULL, 4, fmpl_isum, 0, FMPL_COMM_WORLD, NULL), FMPL_ERR_BUFFER);
    CHECK_RC(fmpl_allreduce(NULL, 4, fmpl_zmax, FMPL_COMM_WORLD, NULL), FMPL_ERR_BUFFER);
    CHECK_RC(fmpl_allreduce(NULL, 1, uop, FMPL_COMM_WORLD, NULL), FMPL_ERR_BUFFER);
    CHECK_RC(fmpl_allgather(NULL, 8, rb, FMPL_COMM_WORLD), FMPL_ERR_BUFFER);
    CHECK_RC(fmpl_allgather(b, 8, NULL, FMPL_COMM_WORLD), FMPL_ERR_BUFFER);
    CHECK_RC(fmpl_gather(NULL, 8, rb, 0, FMPL_COMM_WORLD), FMPL_ERR_BUFFER);
    CHECK_RC(fmpl_scatter(rb, 8, NULL, 0, FMPL_COMM_WORLD), FMPL_ERR_BUFFER);
    /* NULL with size 0 is fine (real collectives: every rank calls) */
    CHECK_RC(fmpl_bcast(NULL, 0, n - 1, FMPL_COMM_WORLD), FMPL_SUCCESS);
    CHECK_RC(fmpl_hbcast(NULL, 0, 0), prog_hbcast_ok(0) ? FMPL_SUCCESS : FMPL_ERR_UNSUPPORTED);
    CHECK_RC(fmpl_reduce(NULL, 0, fmpl_isum, 0, FMPL_COMM_WORLD, NULL), FMPL_SUCCESS);
    CHECK_RC(fmpl_allreduce(NULL, 0, fmpl_dmin, FMPL_COMM_WORLD, NULL), FMPL_SUCCESS);
    CHECK_RC(fmpl_allreduce(NULL, 0, uop, FMPL_COMM_WORLD, NULL), FMPL_SUCCESS);
    CHECK_RC(fmpl_allgather(NULL, 0, NULL, FMPL_COMM_WORLD), FMPL_SUCCESS);
    CHECK_RC(fmpl_gather(NULL, 0, NULL, 0, FMPL_COMM_WORLD), FMPL_SUCCESS);
    CHECK_RC(fmpl_scatter(NULL, 0, NULL, n - 1, FMPL_COMM_WORLD), FMPL_SUCCESS);

    /* ---- halo ---- */
    halo_bad();

    /* ---- everything still works ---- */
    for (i = 0; i < 4; i++)
        v[i] = prog_me + i;
    CHECK_RC(fmpl_allreduce(v, 4, uop, FMPL_COMM_WORLD, NULL), FMPL_SUCCESS);
    for (i = 0; i < 4; i++)
        CHECK(v[i] == n * (n - 1) / 2 + n * i, "allreduce after the bad calls: %d", v[i]);
    CHECK_RC(fmpl_barrier(FMPL_COMM_WORLD), FMPL_SUCCESS);
    if (prog_me == n - 1)
        memcpy(b, "after the errors", 17);
    CHECK_RC(fmpl_bcast(b, 17, n - 1, FMPL_COMM_WORLD), FMPL_SUCCESS);
    CHECK(strcmp(b, "after the errors") == 0, "bcast after the bad calls: '%.17s'", b);
    /* failed halo and communicator creations took no slot: more than
     * FMPL_MAX_HALOS (16) exchanges made and freed one after the other */
    for (k = 0; k < 20; k++) {
        static double a[6 * 6];
        int ext[2] = {4, 4}, sh[2] = {1, 1}, nbr[4] = {prog_me, prog_me, prog_me, prog_me};
        fmpl_halo_t h;
        for (i = 0; i < 36; i++)
            a[i] = -1;
        for (i = 0; i < 16; i++)
            a[(1 + i / 4) * 6 + 1 + i % 4] = k * 100 + i;
        CHECK_RC(fmpl_halo_init(a, sizeof(double), 2, ext, sh, nbr, 0, FMPL_COMM_WORLD, &h),
                 FMPL_SUCCESS);
        CHECK_RC(fmpl_halo_do(h), FMPL_SUCCESS);
        /* periodic on itself: corner (0,0) is interior (3,3) */
        CHECK(a[0] == k * 100 + 15 && a[1] == k * 100 + 12 && a[6] == k * 100 + 3,
              "self-periodic halo %d: corner %g, top %g, left %g", k, a[0], a[1], a[6]);
        CHECK_RC(fmpl_halo_free(&h), FMPL_SUCCESS);
    }
    CHECK_RC(fmpl_op_free(&uop), FMPL_SUCCESS);
    return prog_finish();
}
