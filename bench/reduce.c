/*
 * bench/reduce - FMPL reduction (fmpl_dsum of size/8 doubles) over
 * FMPL_COMM_WORLD, in place, with a preallocated work buffer.  As in the
 * FMPL paper the root changes every iteration (root = iteration % nprocs).
 *
 *   fmplrun -n N bench/reduce [-m MAXSIZE] [-s SIZE] [-i SCALE] [-a]
 *
 * bench/mpi/reduce is the same program over MPI_Reduce (MPI_SUM,
 * MPI_DOUBLE, MPI_IN_PLACE at the root); bench/compare runs both.  Row:
 * size in bytes, time per fmpl_reduce in microseconds (the slowest rank's
 * loop time / iterations, median of BU_REPS batches).
 */
#include <fmpl.h>
#include <string.h>

#include "bench_util.h"

#define BENCH_PROG "reduce"
#include "bench_fmpl.h"

/* Collective sweeps: 8 B .. 1 MiB unless -m says otherwise, which keeps a
 * sweep of 8 processes on 2 cores well under 15 s. */
#define COLL_MIN_SIZE 8
#define COLL_DEFAULT_MAX ((size_t)1 << 20)
/* A timed batch lasts about this long (seconds), with at most
 * COLL_MAX_ITERS iterations; the count comes from an untimed probe. */
#define COLL_BATCH_S 0.01
#define COLL_MAX_ITERS 10000
/* Sizes in one sweep: 8 B doubling up to at most 2^63. */
#define MAX_SIZES 64

static int rank, np;

/* The collective under test: iteration i reduces to rank i % np. */
static inline void op(double *buf, double *work, int count, long i)
{
    CHECK(fmpl_reduce(buf, count, fmpl_dsum, (int)(i % np), FMPL_COMM_WORLD, work));
}

/* Element-wise maximum of v[0..n-1] over all ranks, left at rank 0.
 * Point-to-point on index 0: the bookkeeping never relies on the
 * collectives it measures. */
static void max_to_root(double *v, int n)
{
    if (rank != 0) {
        CHECK(fmpl_send(v, (size_t)n * sizeof *v, 0, 0));
        return;
    }
    double tmp[n];
    for (int r = 1; r < np; r++) {
        CHECK(fmpl_recv(tmp, sizeof tmp, r, 0));
        for (int k = 0; k < n; k++)
            if (tmp[k] > v[k])
                v[k] = tmp[k];
    }
}

/* Rank 0's value of x on every rank (point-to-point on index 0). */
static long from_root(long x)
{
    if (rank == 0)
        for (int r = 1; r < np; r++)
            CHECK(fmpl_send(&x, sizeof x, r, 0));
    else
        CHECK(fmpl_recv(&x, sizeof x, 0, 0));
    return x;
}

/* Iterations per batch from the probe's time per call: about COLL_BATCH_S
 * per batch, a whole number of root rotations, then times -i. */
static long iters_for(double per_call, double scale)
{
    double n = per_call > 0 ? COLL_BATCH_S / per_call : COLL_MAX_ITERS;
    if (n > COLL_MAX_ITERS)
        n = COLL_MAX_ITERS;
    long k = ((long)n + np - 1) / np * np;
    if (k < np)
        k = np;
    n = (double)k * scale;
    return n < 1 ? 1 : (long)n;
}

/* Rank r's element i in the check: a small integer, so that every sum is
 * exact in any order and a wrong, missing or doubled term shows. */
static inline double term(int r, long i)
{
    return (double)((long)(((unsigned long)i * 37u + (unsigned long)r * 101u) % 2001u) - 1000);
}

/* Untimed: one reduction to every root of known terms (the buffers are
 * refilled each time: fmpl_reduce leaves partial sums off the root); the
 * root checks every element of the sum. */
static void verify_size(double *buf, double *work, int count)
{
    for (int root = 0; root < np; root++) {
        for (long i = 0; i < count; i++)
            buf[i] = term(rank, i);
        CHECK(fmpl_reduce(buf, count, fmpl_dsum, root, FMPL_COMM_WORLD, work));
        if (rank != root)
            continue;
        for (long i = 0; i < count; i++) {
            double want = 0;
            for (int r = 0; r < np; r++)
                want += term(r, i);
            if (buf[i] != want) {
                fprintf(stderr, "%s: rank %d (root): wrong sum in a %zu-byte "
                                "reduce at element %ld: got %.17g, expected %.17g\n",
                        BENCH_PROG, rank, (size_t)count * sizeof *buf, i, buf[i], want);
                fmpl_abort(3);
            }
        }
    }
    /* Timed runs add zeros: the sums grow neither to infinity nor into
     * denormals, and adding zeros costs what adding anything else does. */
    memset(buf, 0, (size_t)count * sizeof *buf);
}

/* Iterations per batch for one size, the same on every rank: an untimed
 * warm-up of the size is timed, and its slowest rank decides. */
static long probe_size(double *buf, double *work, size_t size, const struct bu_opts *o)
{
    int count = (int)(size / sizeof(double));
    long warm = bu_iters(size, 100, 8.0 * (1 << 20), 1.0);

    CHECK(fmpl_barrier(FMPL_COMM_WORLD));
    double t0 = bu_now();
    for (long i = 0; i < warm; i++)
        op(buf, work, count, i);
    double per_call = (bu_now() - t0) / (double)warm;
    max_to_root(&per_call, 1);
    return from_root(rank == 0 ? iters_for(per_call, o->iter_scale) : 0);
}

/* One timed batch of `iters` calls started together after a barrier: this
 * rank's time per call in seconds.  The previous batch was of another
 * size, so a tenth of the calls go first, untimed, to get this size's
 * buffers and paths warm again. */
static double batch(double *buf, double *work, size_t size, long iters)
{
    int count = (int)(size / sizeof(double));
    for (long i = 0; i < iters / 10 + 1; i++)
        op(buf, work, count, i);
    CHECK(fmpl_barrier(FMPL_COMM_WORLD));
    double t0 = bu_now();
    for (long i = 0; i < iters; i++)
        op(buf, work, count, i);
    return (bu_now() - t0) / (double)iters;
}

static void *alloc_buf(size_t size, int use_alloc)
{
    if (!use_alloc)
        return bu_alloc(size);
    void *p = fmpl_alloc_mem(size ? size : 1);
    if (!p)
        bench_die("fmpl_alloc_mem", FMPL_ERR_NOMEM);
    memset(p, 0, size);   /* fault pages in outside the timing */
    return p;
}

static void free_buf(void *p, int use_alloc)
{
    if (use_alloc)
        CHECK(fmpl_free_mem(p));
    else
        bu_free(p);
}

static void usage(FILE *f)
{
    fprintf(f, "usage: %s [-m MAXSIZE] [-s SIZE] [-i SCALE] [-a] [-h]\n"
               "  -m MAXSIZE  last size of the sweep 8,16,32,... bytes "
               "(default 1M; K/M/G suffixes)\n"
               "  -s SIZE     measure this size only (a multiple of 8)\n"
               "  -i SCALE    multiply the iteration counts (default 1)\n"
               "  -a          buffers from fmpl_alloc_mem\n"
               "  -h          this help\n", BENCH_PROG);
}

/* Was -m given?  (bu_parse's grammar: -a and -h take no value.) */
static int has_max(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-m"))
            return 1;
        if (strcmp(argv[i], "-a") && strcmp(argv[i], "-h") && strcmp(argv[i], "--help"))
            i++;
    }
    return 0;
}

/* The sweep: COLL_MIN_SIZE, doubling up to -m, or just -s. */
static size_t first_size(const struct bu_opts *o)
{
    if (o->single_size != BU_SIZE_END)
        return o->single_size;
    return o->max_size >= COLL_MIN_SIZE ? COLL_MIN_SIZE : BU_SIZE_END;
}

int main(int argc, char **argv)
{
    struct bu_opts o;
    const char *err;
    int pr = bu_parse(argc, argv, 0, &o, &err);
    if (pr == 0 && !has_max(argc, argv))
        o.max_size = COLL_DEFAULT_MAX;

    CHECK(fmpl_init(64));
    rank = fmpl_rank();
    np = fmpl_size();
    if (pr == 0 && o.single_size != BU_SIZE_END &&
        (o.single_size == 0 || o.single_size % sizeof(double) ||
         o.single_size / sizeof(double) > (size_t)INT32_MAX)) {
        err = "-s needs a positive multiple of 8 (bytes of doubles), below 16G";
        pr = -1;
    }
    if (pr == 0 && o.single_size == BU_SIZE_END &&
        o.max_size / sizeof(double) > (size_t)INT32_MAX) {
        err = "-m: sizes above 16G are not supported (int counts)";
        pr = -1;
    }
    if (pr != 0) {
        if (rank == 0) {
            if (err)
                fprintf(stderr, "%s: %s\n", BENCH_PROG, err);
            usage(pr > 0 ? stdout : stderr);
        }
        fmpl_finalize();
        return pr > 0 ? 0 : 2;
    }

    size_t max = 0;
    for (size_t s = first_size(&o); s != BU_SIZE_END; s = bu_next_size(&o, s))
        max = s;
    double *buf = alloc_buf(max, o.use_alloc);
    double *work = alloc_buf(max, o.use_alloc);   /* fmpl_reduce's scratch */
    if (rank == 0)
        bu_print_header("FMPL", "reduce", np, &o,
                        o.use_alloc ? "fmpl_alloc_mem" : "malloc",
                        "fmpl_dsum of size/8 doubles, in place; "
                        "root = iteration % nprocs; time = slowest rank's "
                        "loop / iterations",
                        "time_us");
    /* Check every size and size its batches, then time BU_REPS passes over
     * the sweep: the batches of one size lie a whole pass apart, so a
     * slow stretch of the (virtual) machine spoils at most one.  Each
     * batch counts as long as its slowest rank; the median batch is the
     * result. */
    static size_t sizes[MAX_SIZES];
    static long iters[MAX_SIZES];
    static double t[MAX_SIZES * BU_REPS];
    int n = 0;
    for (size_t s = first_size(&o); s != BU_SIZE_END; s = bu_next_size(&o, s)) {
        verify_size(buf, work, (int)(s / sizeof(double)));
        sizes[n] = s;
        iters[n++] = probe_size(buf, work, s, &o);
    }
    for (int r = 0; r < BU_REPS; r++)
        for (int k = 0; k < n; k++)
            t[k * BU_REPS + r] = batch(buf, work, sizes[k], iters[k]);
    if (n > 0)
        max_to_root(t, n * BU_REPS);
    for (int k = 0; k < n && rank == 0; k++) {
        double col = bu_median(t + k * BU_REPS, BU_REPS) * 1e6;
        bu_print_row(sizes[k], 1, &col);
    }
    free_buf(buf, o.use_alloc);
    free_buf(work, o.use_alloc);
    CHECK(fmpl_finalize());
    return 0;
}
