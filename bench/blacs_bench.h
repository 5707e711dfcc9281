/*
 * blacs_bench.h - the BLACS benchmark, one source for both libraries.
 *
 * The BLACS interface is the same for fmpl-blacs and for the MPI-BLACS in
 * Debian's libscalapack-openmpi, and both start themselves from
 * Cblacs_pinfo (fmpl-blacs calls fmpl_init, MPI-BLACS MPI_Init): the two
 * programs differ only in the name they print.
 *
 *   bench/blacs.c      #define BB_LIB "FMPL"  -> fmplrun -n 2 bench/blacs
 *   bench/mpi/blacs.c  #define BB_LIB "MPI"   -> mpirun -n 2 bench/mpi/blacs
 *
 * Measurements (key in the first column of a row):
 *   sd2d:SIZE       Cdgesd2d/Cdgerv2d ping-pong between grid processes
 *                   (0,0) and (0,1), a SIZE/8 x 1 column of doubles;
 *                   one-way time = round trip / 2; 8 B .. 16 MiB (-m)
 *   sd2d:1000x1000  the same with a 1000 x 1000 submatrix of an array with
 *                   LDA = 2000 on both sides (strided, 8 MB of payload)
 *   bs2d:SIZE       Cdgebs2d/Cdgebr2d, scope 'A', root = iteration % nprocs
 *   gsum2d:SIZE     Cdgsum2d, scope 'A', result everywhere (rdest = -1)
 *   amx2d:SIZE      Cdgamx2d, scope 'A', rdest = -1, with location arrays
 *                   (LDIA = M)
 *                   collectives 8 B .. 1 MiB (-M), SIZE/8 x 1 doubles
 *   pdgetrf:N       ScaLAPACK pdgetrf_ of a random N x N matrix (N = 2000,
 *                   NB = 64) on a 1 x 2 grid: wall time of the call
 *   pdpotrf:N       (-T potrf, not by default) pdpotrf_ of a symmetric
 *                   positive definite one, the same way
 *   raw:8           (where the program defines BB_RAW_SEND/BB_RAW_RECV) the
 *                   8-byte ping-pong on the library's own point-to-point
 *                   calls, in the same run and through the same shared
 *                   libraries: what the BLACS layer adds to sd2d:8
 * Row: KEY  time_us  [MBps | GFlops].  Time per call in microseconds: every
 * rank times its own loop of back-to-back calls after a barrier, a batch
 * counts as long as its slowest rank, the median of BB_REPS batches is
 * printed (batches of one size lie a whole pass over the sweep apart).
 * pdgetrf: the slowest rank's wall time of one call, median of -r calls
 * (the matrix is regenerated, untimed, before each).  MB = 1e6 bytes.
 * pdgetrf, pdpotrf where the program models its local BLAS
 * (bench/blas_model.h, BB_BLAS_GFLOPS set): a third column, the slowest
 * rank's BLAS time of a call in microseconds.
 *
 * Every size is checked untimed first (ping-pong patterns both ways,
 * broadcast from every root, sums of small integers, the maximum and its
 * location); pdgetrf (pdpotrf) is checked by pdgetrs_ (pdpotrs_) on the factors of its first
 * timed call (A x = A * ones must give ones).  A failure prints what was
 * wrong and aborts the job (Cblacs_abort).
 *
 * Bookkeeping (barriers, the slowest rank's times) runs on a second
 * context of its own, never on the calls being measured.
 */
#ifndef BLACS_BENCH_H
#define BLACS_BENCH_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"

#ifndef BB_LIB
#error "define BB_LIB (the library's name) before including blacs_bench.h"
#endif
#ifndef BB_PROG
#define BB_PROG "blacs"
#endif

/* ---- the C BLACS and the bits of ScaLAPACK used (Int = int) ---------- */
void Cblacs_pinfo(int *mypnum, int *nprocs);
void Cblacs_get(int ictxt, int what, int *val);
void Cblacs_gridinit(int *ictxt, char *order, int nprow, int npcol);
void Cblacs_gridinfo(int ictxt, int *nprow, int *npcol, int *myrow, int *mycol);
void Cblacs_barrier(int ictxt, char *scope);
void Cblacs_gridexit(int ictxt);
void Cblacs_exit(int cont);
void Cblacs_abort(int ictxt, int errornum);
void Cdgesd2d(int ictxt, int m, int n, double *A, int lda, int rdest, int cdest);
void Cdgerv2d(int ictxt, int m, int n, double *A, int lda, int rsrc, int csrc);
void Cdgebs2d(int ictxt, char *scope, char *top, int m, int n, double *A, int lda);
void Cdgebr2d(int ictxt, char *scope, char *top, int m, int n, double *A, int lda, int rsrc,
              int csrc);
void Cdgsum2d(int ictxt, char *scope, char *top, int m, int n, double *A, int lda, int rdest,
              int cdest);
void Cdgamx2d(int ictxt, char *scope, char *top, int m, int n, double *A, int lda, int *rA,
              int *cA, int ldia, int rdest, int cdest);
void descinit_(int *desc, int *m, int *n, int *mb, int *nb, int *irsrc, int *icsrc,
               int *ictxt, int *lld, int *info);
int numroc_(int *n, int *nb, int *iproc, int *isrcproc, int *nprocs);
void pdgetrf_(int *m, int *n, double *a, int *ia, int *ja, int *desca, int *ipiv, int *info);
void pdpotrf_(const char *uplo, int *n, double *a, int *ia, int *ja, int *desca, int *info,
              size_t luplo);
void pdpotrs_(const char *uplo, int *n, int *nrhs, double *a, int *ia, int *ja, int *desca,
              double *b, int *ib, int *jb, int *descb, int *info, size_t luplo);
void pdgetrs_(char *trans, int *n, int *nrhs, double *a, int *ia, int *ja, int *desca,
              int *ipiv, double *b, int *ib, int *jb, int *descb, int *info, size_t trans_len);

#define BB_REPS BU_REPS
#define BB_BATCH_S 0.01          /* a timed batch lasts about this long */
#define BB_MAX_ITERS 10000
#define BB_MAX_ITEMS 128

static int bb_me, bb_np;         /* pnum and job size */
static int bb_ctx = -1;          /* 1 x np grid: the measured calls */
static int bb_ctl = -1;          /* 1 x np grid: bookkeeping */
static char bb_top[2] = " ";     /* -t: broadcast / combine topology */

static void bb_die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
#include <stdarg.h>
static void bb_die(const char *fmt, ...)
{
    va_list ap;
    fflush(stdout);
    fprintf(stderr, "%s: %s: rank %d: ", BB_PROG, BB_LIB, bb_me);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n");
    fflush(stderr);
    Cblacs_abort(bb_ctl >= 0 ? bb_ctl : bb_ctx, 3);
    exit(3);
}

/* ---- bookkeeping on bb_ctl --------------------------------------------- */

static void bb_barrier(void) { Cblacs_barrier(bb_ctl, "A"); }

/* element-wise maximum of v[0..n-1] over all ranks, left at rank 0 */
static void bb_max_to_root(double *v, int n)
{
    if (bb_me != 0) {
        Cdgesd2d(bb_ctl, n, 1, v, n, 0, 0);
        return;
    }
    double *tmp = malloc(sizeof(double) * (size_t)n);
    for (int r = 1; r < bb_np; r++) {
        Cdgerv2d(bb_ctl, n, 1, tmp, n, 0, r);
        for (int k = 0; k < n; k++)
            if (tmp[k] > v[k])
                v[k] = tmp[k];
    }
    free(tmp);
}

/* rank 0's x everywhere */
static double bb_from_root(double x)
{
    if (bb_me == 0)
        for (int r = 1; r < bb_np; r++)
            Cdgesd2d(bb_ctl, 1, 1, &x, 1, 0, r);
    else
        Cdgerv2d(bb_ctl, 1, 1, &x, 1, 0, 0);
    return x;
}

/* ---- data ---------------------------------------------------------------- */

static double *bb_a, *bb_b;      /* message buffers (max bytes each) */
static int *bb_ra, *bb_ca;       /* location arrays of amx2d */
static double *bb_big_a, *bb_big_b;   /* 1000 x 1000 in 2000 x 1000 arrays */
#define BB_SUB_M 1000
#define BB_SUB_LDA 2000

/* a double that depends on (seed, index): exact small integers / 8 */
static inline double bb_val(unsigned seed, size_t i)
{
    uint64_t z = (uint64_t)seed * 0x9e3779b97f4a7c15ull + i * 0xbf58476d1ce4e5b9ull;
    z ^= z >> 29;
    z *= 0x94d049bb133111ebull;
    z ^= z >> 32;
    return (double)(int64_t)(z % 2000001u) / 8.0 - 125000.0;
}

static void bb_fill(double *a, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        a[i] = bb_val(seed, i);
}

static void bb_check(const double *a, size_t n, unsigned seed, const char *what, size_t size)
{
    for (size_t i = 0; i < n; i++)
        if (a[i] != bb_val(seed, i))
            bb_die("%s of %zu bytes: element %zu is %.17g, expected %.17g", what, size, i,
                   a[i], bb_val(seed, i));
}

/* ---- the measured operations ------------------------------------------ */

enum { BB_PP, BB_SUB, BB_BS, BB_GSUM, BB_AMX, BB_RAW };

struct bb_item {
    int kind;
    size_t size;                 /* bytes (BB_SUB: the payload) */
    char key[40];
    long iters;
    double t[BB_REPS];
};

/* one call (BB_PP, BB_SUB: one round trip) of iteration i */
static inline void bb_op(const struct bb_item *it, long i)
{
    int m = (int)(it->size / sizeof(double));
    switch (it->kind) {
    case BB_PP:
        if (bb_me == 0) {
            Cdgesd2d(bb_ctx, m, 1, bb_a, m, 0, 1);
            Cdgerv2d(bb_ctx, m, 1, bb_b, m, 0, 1);
        } else if (bb_me == 1) {
            Cdgerv2d(bb_ctx, m, 1, bb_b, m, 0, 0);
            Cdgesd2d(bb_ctx, m, 1, bb_a, m, 0, 0);
        }
        break;
#ifdef BB_RAW_SEND
    case BB_RAW:
        if (bb_me == 0) {
            BB_RAW_SEND(bb_a, it->size, 1);
            BB_RAW_RECV(bb_b, it->size, 1);
        } else if (bb_me == 1) {
            BB_RAW_RECV(bb_b, it->size, 0);
            BB_RAW_SEND(bb_a, it->size, 0);
        }
        break;
#endif
    case BB_SUB:
        if (bb_me == 0) {
            Cdgesd2d(bb_ctx, BB_SUB_M, BB_SUB_M, bb_big_a, BB_SUB_LDA, 0, 1);
            Cdgerv2d(bb_ctx, BB_SUB_M, BB_SUB_M, bb_big_b, BB_SUB_LDA, 0, 1);
        } else if (bb_me == 1) {
            Cdgerv2d(bb_ctx, BB_SUB_M, BB_SUB_M, bb_big_b, BB_SUB_LDA, 0, 0);
            Cdgesd2d(bb_ctx, BB_SUB_M, BB_SUB_M, bb_big_a, BB_SUB_LDA, 0, 0);
        }
        break;
    case BB_BS: {
        int root = (int)(i % bb_np);
        if (bb_me == root)
            Cdgebs2d(bb_ctx, "A", bb_top, m, 1, bb_a, m);
        else
            Cdgebr2d(bb_ctx, "A", bb_top, m, 1, bb_a, m, 0, root);
        break;
    }
    case BB_GSUM:
        Cdgsum2d(bb_ctx, "A", bb_top, m, 1, bb_a, m, -1, -1);
        break;
    case BB_AMX:
        Cdgamx2d(bb_ctx, "A", bb_top, m, 1, bb_a, m, bb_ra, bb_ca, m, -1, -1);
        break;
    }
}

/* untimed check of one item; leaves the buffers ready for timing */
static void bb_verify(const struct bb_item *it)
{
    size_t n = it->size / sizeof(double);
    unsigned s = (unsigned)it->size * 7u;
    switch (it->kind) {
    case BB_PP:
    case BB_RAW:
        if (bb_me < 2) {
            bb_fill(bb_a, n, s + (unsigned)bb_me);
            memset(bb_b, 0, it->size);
            bb_op(it, 0);
            bb_check(bb_b, n, s + (unsigned)!bb_me, "ping-pong", it->size);
        }
        break;
    case BB_SUB:
        if (bb_me < 2) {
            /* the columns, and the gaps between them stay untouched */
            for (int j = 0; j < BB_SUB_M; j++) {
                bb_fill(bb_big_a + (size_t)j * BB_SUB_LDA, BB_SUB_M,
                        (unsigned)(j * 4 + bb_me));
                for (int k = 0; k < BB_SUB_LDA; k++)
                    bb_big_b[(size_t)j * BB_SUB_LDA + k] = -1.0;
            }
            bb_op(it, 0);
            for (int j = 0; j < BB_SUB_M; j++) {
                const double *c = bb_big_b + (size_t)j * BB_SUB_LDA;
                bb_check(c, BB_SUB_M, (unsigned)(j * 4 + !bb_me), "submatrix column",
                         it->size);
                for (int k = BB_SUB_M; k < BB_SUB_LDA; k++)
                    if (c[k] != -1.0)
                        bb_die("submatrix: element (%d, %d) outside the 1000 x 1000 "
                               "submatrix was overwritten", k, j);
            }
        }
        break;
    case BB_BS:
        for (int root = 0; root < bb_np; root++) {
            if (bb_me == root)
                bb_fill(bb_a, n, s + (unsigned)root);
            else
                memset(bb_a, 0, it->size);
            bb_op(it, root);
            bb_check(bb_a, n, s + (unsigned)root, "broadcast", it->size);
        }
        break;
    case BB_GSUM:
        /* small integers: exact in any order */
        for (size_t k = 0; k < n; k++)
            bb_a[k] = (double)((long)((k * 37u + (size_t)bb_me * 101u) % 2001u) - 1000);
        bb_op(it, 0);
        for (size_t k = 0; k < n; k++) {
            double want = 0;
            for (int r = 0; r < bb_np; r++)
                want += (double)((long)((k * 37u + (size_t)r * 101u) % 2001u) - 1000);
            if (bb_a[k] != want)
                bb_die("gsum2d of %zu bytes: element %zu is %.17g, expected %.17g",
                       it->size, k, bb_a[k], want);
        }
        memset(bb_a, 0, it->size);   /* timed calls add zeros */
        break;
    case BB_AMX:
        /* |value| distinct over the ranks: the owner of element k is
         * rank (k + np - 1) % np, with the value +-np */
        for (size_t k = 0; k < n; k++) {
            int mag = (int)(((size_t)bb_me + bb_np - k % (size_t)bb_np) % (size_t)bb_np) + 1;
            bb_a[k] = ((k + (size_t)bb_me) % 2 ? -1.0 : 1.0) * mag;
        }
        bb_op(it, 0);
        for (size_t k = 0; k < n; k++) {
            int owner = (int)((k + (size_t)bb_np - 1) % (size_t)bb_np);
            double want = ((k + (size_t)owner) % 2 ? -1.0 : 1.0) * bb_np;
            if (bb_a[k] != want || bb_ra[k] != 0 || bb_ca[k] != owner)
                bb_die("amx2d of %zu bytes: element %zu is %g at (%d, %d), expected %g "
                       "at (0, %d)", it->size, k, bb_a[k], bb_ra[k], bb_ca[k], want, owner);
        }
        break;
    }
}

static int bb_pair(const struct bb_item *it)   /* a ping-pong of ranks 0 and 1 */
{
    return it->kind == BB_PP || it->kind == BB_SUB || it->kind == BB_RAW;
}

static int bb_involved(const struct bb_item *it)
{
    return !bb_pair(it) || bb_me < 2;
}

/* this rank's time per call of one batch, in seconds; a tenth of the
 * calls go first, untimed, to get this size's paths warm again */
static double bb_batch(const struct bb_item *it, long iters)
{
    int inv = bb_involved(it);
    for (long i = 0; inv && i < iters / 10 + 1; i++)
        bb_op(it, i);
    bb_barrier();
    if (!inv)
        return 0;
    double t0 = bu_now();
    for (long i = 0; i < iters; i++)
        bb_op(it, i);
    double t = (bu_now() - t0) / (double)iters;
    return bb_pair(it) ? t / 2 : t;
}

/* iterations per batch, the same on every rank: an untimed warm-up is
 * timed and its slowest rank decides */
static long bb_probe(const struct bb_item *it, double scale)
{
    long warm = bu_iters(it->size, 50, 4.0 * (1 << 20), 1.0);
    double per = bb_batch(it, warm);
    if (bb_pair(it))
        per *= 2;                      /* per round trip */
    bb_max_to_root(&per, 1);
    double n = per > 0 ? BB_BATCH_S / per : BB_MAX_ITERS;
    if (n > BB_MAX_ITERS)
        n = BB_MAX_ITERS;
    if (n < 2)
        n = 2;
    if (it->kind == BB_BS)
        n = ceil(n / bb_np) * bb_np;   /* whole root rotations */
    n = bb_from_root(n * scale);
    return n < 1 ? 1 : (long)n;
}

/* ---- pdgetrf ------------------------------------------------------------- */

static inline double bb_aij(int i, int j)   /* the matrix, in [-0.5, 0.5) */
{
    uint64_t z = ((uint64_t)(uint32_t)i << 32 | (uint32_t)j) + 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (double)(z >> 11) * (1.0 / 9007199254740992.0) - 0.5;
}

/* global index of local index l on process coordinate p of np (block NB) */
static inline int bb_g(int l, int NB, int p, int np) { return (l / NB * np + p) * NB + l % NB; }

/* element (i, j) of the matrix factored: bb_aij for LU; for Cholesky its
 * symmetric part plus N on the diagonal (positive definite) */
static inline double bb_elem(int chol, int N, int i, int j)
{
    if (!chol)
        return bb_aij(i, j);
    return (i < j ? bb_aij(i, j) : bb_aij(j, i)) + (i == j ? N : 0);
}

/* Factor an N x N matrix (LU, or with chol Cholesky) on a P x Q grid
 * (ranks 0 .. PQ-1; the others idle) `reps` times; prints the row.  The
 * first factorisation is checked.  Where the program models its local
 * BLAS (BB_BLAS_SECONDS, bench/blas_model.h), the row also gives the
 * slowest rank's BLAS seconds of a call. */
static void bb_factor(int chol, int N, int NB, int reps, int P, int Q)
{
    int ctx = -1, nprow, npcol, myrow, mycol, zero = 0, one = 1, info;
    int desca[9], descb[9];
    double times[64], blas[64];
    if (reps > 64)
        reps = 64;
    Cblacs_get(-1, 0, &ctx);
    Cblacs_gridinit(&ctx, "R", P, Q);
    Cblacs_gridinfo(ctx, &nprow, &npcol, &myrow, &mycol);
    for (int r = 0; r < reps; r++) {
        double t = 0, c = 0;
        if (ctx >= 0) {
            int mloc = numroc_(&N, &NB, &myrow, &zero, &nprow);
            int nloc = numroc_(&N, &NB, &mycol, &zero, &npcol);
            int lld = mloc > 1 ? mloc : 1;
            int lldb = lld;
            double *a = malloc(sizeof(double) * (size_t)lld * (size_t)(nloc > 0 ? nloc : 1));
            int *ipiv = malloc(sizeof(int) * (size_t)(mloc + NB));
            if (!a || !ipiv)
                bb_die("out of memory for pdgetrf");
            descinit_(desca, &N, &N, &NB, &NB, &zero, &zero, &ctx, &lld, &info);
            if (info != 0)
                bb_die("descinit_ returned info %d", info);
            for (int lj = 0; lj < nloc; lj++) {
                int gj = bb_g(lj, NB, mycol, npcol);
                for (int li = 0; li < mloc; li++)
                    a[(size_t)lj * lld + li] = bb_elem(chol, N, bb_g(li, NB, myrow, nprow), gj);
            }
            Cblacs_barrier(ctx, "A");
#ifdef BB_BLAS_SECONDS
            double c0 = BB_BLAS_SECONDS();
#endif
            double t0 = bu_now();
            if (chol)
                pdpotrf_("L", &N, a, &one, &one, desca, &info, 1);
            else
                pdgetrf_(&N, &N, a, &one, &one, desca, ipiv, &info);
            t = bu_now() - t0;
#ifdef BB_BLAS_SECONDS
            c = BB_BLAS_SECONDS() - c0;
#endif
            if (info != 0)
                bb_die("%s returned info %d", chol ? "pdpotrf_" : "pdgetrf_", info);
            if (r == 0) {
                /* b = A * ones lives in process column 0 */
                double *b = malloc(sizeof(double) * (size_t)lldb);
                descinit_(descb, &N, &one, &NB, &NB, &zero, &zero, &ctx, &lldb, &info);
                if (mycol == 0)
                    for (int li = 0; li < mloc; li++) {
                        double s = 0;
                        int gi = bb_g(li, NB, myrow, nprow);
                        for (int j = 0; j < N; j++)
                            s += bb_elem(chol, N, gi, j);
                        b[li] = s;
                    }
                if (chol)
                    pdpotrs_("L", &N, &one, a, &one, &one, desca, b, &one, &one, descb, &info,
                             1);
                else
                    pdgetrs_("N", &N, &one, a, &one, &one, desca, ipiv, b, &one, &one, descb,
                             &info, 1);
                if (info != 0)
                    bb_die("%s returned info %d", chol ? "pdpotrs_" : "pdgetrs_", info);
                if (mycol == 0)
                    for (int li = 0; li < mloc; li++)
                        if (!(fabs(b[li] - 1.0) < 1e-6))
                            bb_die("%s: solving with the factors gives x[%d] = %.17g, "
                                   "expected 1", chol ? "pdpotrf" : "pdgetrf",
                                   bb_g(li, NB, myrow, nprow), b[li]);
                free(b);
            }
            free(a);
            free(ipiv);
        }
        bb_max_to_root(&t, 1);
        bb_max_to_root(&c, 1);
        times[r] = t;
        blas[r] = c;
    }
    if (ctx >= 0)
        Cblacs_gridexit(ctx);
    if (bb_me == 0) {
        double t = bu_median(times, reps), c = bu_median(blas, reps);
        char key[40];
        snprintf(key, sizeof key, "%s:%d", chol ? "pdpotrf" : "pdgetrf", N);
        printf("%-16s %14.2f %14.2f", key, t * 1e6,
               (chol ? 1.0 : 2.0) / 3.0 * (double)N * N * N / t / 1e9);
        if (c > 0)
            printf(" %14.2f", c * 1e6);
        printf("\n");
        fflush(stdout);
    }
}

/* ---- options and main ------------------------------------------------------ */

struct bb_opts {
    size_t pp_max, coll_max;
    double scale;
    int N, NB, reps, P, Q;
    unsigned tests;              /* bit per test */
};
enum { BT_PP = 1, BT_SUB = 2, BT_BS = 4, BT_GSUM = 8, BT_AMX = 16, BT_GETRF = 32,
       BT_POTRF = 64 };

static void bb_usage(FILE *f)
{
    fprintf(f,
            "usage: %s [-m MAX] [-M CMAX] [-T TESTS] [-N N] [-b NB] [-g PxQ] [-r REPS] "
            "[-t TOP] [-i SCALE] [-a] [-h]\n"
            "  -m MAX    last ping-pong size, 8 B doubling (default 16M; K/M/G)\n"
            "  -M CMAX   last collective size, 8 B doubling (default 1M, at most -m)\n"
            "  -T TESTS  comma list of pp, sub, bs, gsum, amx, getrf, potrf (default all\n"
            "            but potrf)\n"
            "  -N N      pdgetrf/pdpotrf matrix order (default 2000)\n"
            "  -b NB     their block size (default 64)\n"
            "  -g PxQ    their process grid (default 1x2; P x Q <= processes)\n"
            "  -r REPS   calls timed (default 3)\n"
            "  -t TOP    broadcast/combine topology character (default ' ')\n"
            "  -i SCALE  multiply the iteration counts (default 1)\n"
            "  -a        accepted and ignored (the BLACS have no allocator)\n",
            BB_PROG);
}

static int bb_parse(int argc, char **argv, struct bb_opts *o, const char **err)
{
    static char msg[160];
    o->pp_max = (size_t)16 << 20;
    o->coll_max = (size_t)1 << 20;
    o->scale = 1;
    o->N = 2000;
    o->NB = 64;
    o->reps = 3;
    o->P = 1;
    o->Q = 2;
    o->tests = BT_PP | BT_SUB | BT_BS | BT_GSUM | BT_AMX | BT_GETRF;
    int cmax_set = 0;
    *err = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help"))
            return 1;
        if (!strcmp(a, "-a"))
            continue;
        if (strlen(a) != 2 || a[0] != '-' || !strchr("mMTNbrtig", a[1])) {
            snprintf(msg, sizeof msg, "unknown option %s", a);
            *err = msg;
            return -1;
        }
        if (!v) {
            snprintf(msg, sizeof msg, "option %s needs a value", a);
            *err = msg;
            return -1;
        }
        i++;
        size_t sz;
        char *end;
        switch (a[1]) {
        case 'm':
        case 'M':
            if (bu_parse_size(v, &sz) || sz < 8 || sz > ((size_t)1 << 30)) {
                snprintf(msg, sizeof msg, "bad size %s (8 .. 1G)", v);
                *err = msg;
                return -1;
            }
            if (a[1] == 'm')
                o->pp_max = sz;
            else
                o->coll_max = sz, cmax_set = 1;
            break;
        case 'T': {
            char buf[128], *tok, *save = NULL;
            snprintf(buf, sizeof buf, "%s", v);
            o->tests = 0;
            for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
                if (!strcmp(tok, "pp")) o->tests |= BT_PP;
                else if (!strcmp(tok, "sub")) o->tests |= BT_SUB;
                else if (!strcmp(tok, "bs")) o->tests |= BT_BS;
                else if (!strcmp(tok, "gsum")) o->tests |= BT_GSUM;
                else if (!strcmp(tok, "amx")) o->tests |= BT_AMX;
                else if (!strcmp(tok, "getrf")) o->tests |= BT_GETRF;
                else if (!strcmp(tok, "potrf")) o->tests |= BT_POTRF;
                else if (!strcmp(tok, "coll")) o->tests |= BT_BS | BT_GSUM | BT_AMX;
                else {
                    snprintf(msg, sizeof msg, "unknown test %s", tok);
                    *err = msg;
                    return -1;
                }
            }
            break;
        }
        case 'g':
            if (sscanf(v, "%dx%d", &o->P, &o->Q) != 2 || o->P < 1 || o->Q < 1) {
                snprintf(msg, sizeof msg, "bad grid %s (PxQ)", v);
                *err = msg;
                return -1;
            }
            break;
        case 'N':
        case 'b':
        case 'r': {
            long x = strtol(v, &end, 10);
            if (*end || x < 1 || x > 100000) {
                snprintf(msg, sizeof msg, "bad value %s for %s", v, a);
                *err = msg;
                return -1;
            }
            if (a[1] == 'N') o->N = (int)x;
            else if (a[1] == 'b') o->NB = (int)x;
            else o->reps = (int)x;
            break;
        }
        case 't':
            if (strlen(v) != 1 || !strchr(" IDSMHFTidsmhft123456789", v[0])) {
                snprintf(msg, sizeof msg, "bad topology '%s'", v);
                *err = msg;
                return -1;
            }
            bb_top[0] = v[0];
            break;
        case 'i':
            o->scale = strtod(v, &end);
            if (*end || !(o->scale > 0)) {
                snprintf(msg, sizeof msg, "bad iteration scale %s", v);
                *err = msg;
                return -1;
            }
            break;
        }
    }
    if (!cmax_set && o->coll_max > o->pp_max)
        o->coll_max = o->pp_max;
    return 0;
}

static int bb_main(int argc, char **argv)
{
    struct bb_opts o;
    const char *err;
    static struct bb_item items[BB_MAX_ITEMS];
    int n = 0;
    int pr = bb_parse(argc, argv, &o, &err);

    Cblacs_pinfo(&bb_me, &bb_np);
#ifdef BB_AFTER_INIT
    BB_AFTER_INIT();
#endif
    if (pr == 0 && bb_np < 2) {
        err = "needs at least 2 processes";
        pr = -1;
    }
    static char gmsg[96];
    if (pr == 0 && (o.tests & (BT_GETRF | BT_POTRF)) && o.P * o.Q > bb_np) {
        snprintf(gmsg, sizeof gmsg, "a %dx%d grid needs %d processes, there are %d", o.P, o.Q,
                 o.P * o.Q, bb_np);
        err = gmsg;
        pr = -1;
    }
    if (pr != 0) {
        if (bb_me == 0) {
            if (err)
                fprintf(stderr, "%s: %s\n", BB_PROG, err);
            bb_usage(pr > 0 ? stdout : stderr);
        }
        Cblacs_exit(0);
        return pr > 0 ? 0 : 2;
    }
    Cblacs_get(-1, 0, &bb_ctx);
    Cblacs_gridinit(&bb_ctx, "R", 1, bb_np);
    Cblacs_get(-1, 0, &bb_ctl);
    Cblacs_gridinit(&bb_ctl, "R", 1, bb_np);

    /* the sweep */
    size_t max = 8;
    if (o.tests & BT_PP)
        for (size_t s = 8; s <= o.pp_max && n < BB_MAX_ITEMS; s *= 2) {
            items[n] = (struct bb_item){ .kind = BB_PP, .size = s };
            snprintf(items[n++].key, sizeof items[0].key, "sd2d:%zu", s);
            if (s > max) max = s;
        }
#ifdef BB_RAW_SEND
    if ((o.tests & BT_PP) && n < BB_MAX_ITEMS) {
        items[n] = (struct bb_item){ .kind = BB_RAW, .size = 8 };
        snprintf(items[n++].key, sizeof items[0].key, "raw:8");
    }
#endif
    if (o.tests & BT_SUB) {
        items[n] = (struct bb_item){ .kind = BB_SUB,
                                     .size = (size_t)BB_SUB_M * BB_SUB_M * sizeof(double) };
        snprintf(items[n++].key, sizeof items[0].key, "sd2d:%dx%d", BB_SUB_M, BB_SUB_M);
    }
    static const struct { unsigned bit; int kind; const char *name; } coll[] = {
        { BT_BS, BB_BS, "bs2d" }, { BT_GSUM, BB_GSUM, "gsum2d" }, { BT_AMX, BB_AMX, "amx2d" } };
    for (int c = 0; c < 3; c++)
        if (o.tests & coll[c].bit)
            for (size_t s = 8; s <= o.coll_max && n < BB_MAX_ITEMS; s *= 2) {
                items[n] = (struct bb_item){ .kind = coll[c].kind, .size = s };
                snprintf(items[n++].key, sizeof items[0].key, "%s:%zu", coll[c].name, s);
                if (s > max) max = s;
            }

    bb_a = bu_alloc(max);
    bb_b = bu_alloc(max);
    bb_ra = bu_alloc(max / sizeof(double) * sizeof(int));
    bb_ca = bu_alloc(max / sizeof(double) * sizeof(int));
    if (o.tests & BT_SUB) {
        bb_big_a = bu_alloc((size_t)BB_SUB_LDA * BB_SUB_M * sizeof(double));
        bb_big_b = bu_alloc((size_t)BB_SUB_LDA * BB_SUB_M * sizeof(double));
    }
    if (bb_me == 0) {
        printf("# %s-BLACS %s\n", BB_LIB, BB_PROG);
        printf("# %d processes on a 1 x %d grid, scope 'A', topology '%s', iteration scale "
               "%g, median of %d batches, MB = 1e6 bytes\n",
               bb_np, bb_np, bb_top, o.scale, BB_REPS);
        printf("# sd2d: ping-pong of (0,0) and (0,1), one-way time; bs2d: root = iteration %% "
               "nprocs; gsum2d, amx2d: rdest = -1 (amx2d with LDIA = M)\n");
        printf("# pdgetrf, pdpotrf: %d x %d, NB = %d, %d x %d grid, median of %d calls (GFlops "
               "= 2/3 N^3 or 1/3 N^3 / time)\n", o.N, o.N, o.NB, o.P, o.Q, o.reps);
        printf("# key  time_us  MBps|GFlops\n");
        fflush(stdout);
    }
    for (int k = 0; k < n; k++) {
        bb_verify(&items[k]);
        items[k].iters = bb_probe(&items[k], o.scale);
    }
    for (int r = 0; r < BB_REPS; r++)
        for (int k = 0; k < n; k++)
            items[k].t[r] = bb_batch(&items[k], items[k].iters);
    for (int k = 0; k < n; k++)
        bb_max_to_root(items[k].t, BB_REPS);
    for (int k = 0; k < n && bb_me == 0; k++) {
        double t = bu_median(items[k].t, BB_REPS);
        printf("%-16s %14.2f", items[k].key, t * 1e6);
        if (bb_pair(&items[k]))
            printf(" %14.2f", (double)items[k].size / t / 1e6);
        printf("\n");
    }
    fflush(stdout);
    if (o.tests & BT_GETRF)
        bb_factor(0, o.N, o.NB, o.reps, o.P, o.Q);
    if (o.tests & BT_POTRF)
        bb_factor(1, o.N, o.NB, o.reps, o.P, o.Q);

    bu_free(bb_a);
    bu_free(bb_b);
    bu_free(bb_ra);
    bu_free(bb_ca);
    if (bb_big_a) {
        bu_free(bb_big_a);
        bu_free(bb_big_b);
    }
    bb_barrier();
    Cblacs_gridexit(bb_ctx);
    Cblacs_gridexit(bb_ctl);
    Cblacs_exit(0);
    return 0;
}

#endif
