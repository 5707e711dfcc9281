/*
 * bench/mpi/bcast - MPI_Bcast over MPI_COMM_WORLD, the reference for
 * bench/bcast: the same sweep, root rotation (root = iteration % nprocs),
 * batch sizing, verification and output; only the calls differ.
 *
 *   mpirun -n N bench/mpi/bcast [-m MAXSIZE] [-s SIZE] [-i SCALE] [-a]
 */
#include <mpi.h>
#include <string.h>

#include "bench_util.h"

static const char *prog = "mpi/bcast";

/* MPI's default error handler already aborts the job; this covers the
 * case where it was changed to return. */
#define CHECK(call)                                                           \
    do {                                                                      \
        int rc_ = (call);                                                     \
        if (rc_ != MPI_SUCCESS) {                                             \
            fprintf(stderr, "%s: %s failed (%d)\n", prog, #call, rc_);        \
            MPI_Abort(MPI_COMM_WORLD, 2);                                     \
        }                                                                     \
    } while (0)

#define COLL_MIN_SIZE 8
#define COLL_DEFAULT_MAX ((size_t)1 << 20)
#define COLL_BATCH_S 0.01
#define COLL_MAX_ITERS 10000
/* Sizes in one sweep: 8 B doubling up to at most 2^63. */
#define MAX_SIZES 64

static int rank, np;

/* The collective under test: iteration i broadcasts from rank i % np. */
static inline void op(void *buf, size_t size, long i)
{
    CHECK(MPI_Bcast(buf, (int)size, MPI_BYTE, (int)(i % np), MPI_COMM_WORLD));
}

/* Element-wise maximum of v[0..n-1] over all ranks, left at rank 0
 * (point-to-point, as on the FMPL side). */
static void max_to_root(double *v, int n)
{
    if (rank != 0) {
        CHECK(MPI_Send(v, n, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD));
        return;
    }
    double tmp[n];
    for (int r = 1; r < np; r++) {
        CHECK(MPI_Recv(tmp, n, MPI_DOUBLE, r, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (int k = 0; k < n; k++)
            if (tmp[k] > v[k])
                v[k] = tmp[k];
    }
}

/* Rank 0's value of x on every rank. */
static long from_root(long x)
{
    if (rank == 0)
        for (int r = 1; r < np; r++)
            CHECK(MPI_Send(&x, 1, MPI_LONG, r, 0, MPI_COMM_WORLD));
    else
        CHECK(MPI_Recv(&x, 1, MPI_LONG, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
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

/* Untimed: one broadcast from every root with a pattern that depends on
 * the size and the root, checked on every rank. */
static void verify_size(void *buf, size_t size)
{
    for (int root = 0; root < np; root++) {
        unsigned seed = (unsigned)size * 131u + (unsigned)root;
        if (rank == root)
            bu_fill(buf, size, seed);
        else
            memset(buf, 0, size);
        CHECK(MPI_Bcast(buf, (int)size, MPI_BYTE, root, MPI_COMM_WORLD));
        long off = bu_verify(buf, size, seed);
        if (off >= 0) {
            fprintf(stderr, "%s: rank %d: wrong data from root %d\n", prog, rank, root);
            bu_report_mismatch(prog, rank, size, off, buf, seed);
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
    }
}

/* Iterations per batch for one size, the same on every rank: an untimed
 * warm-up of the size is timed, and its slowest rank decides. */
static long probe_size(void *buf, size_t size, const struct bu_opts *o)
{
    long warm = bu_iters(size, 100, 8.0 * (1 << 20), 1.0);

    CHECK(MPI_Barrier(MPI_COMM_WORLD));
    double t0 = bu_now();
    for (long i = 0; i < warm; i++)
        op(buf, size, i);
    double per_call = (bu_now() - t0) / (double)warm;
    max_to_root(&per_call, 1);
    return from_root(rank == 0 ? iters_for(per_call, o->iter_scale) : 0);
}

/* One timed batch of `iters` calls started together after a barrier: this
 * rank's time per call in seconds.  The previous batch was of another
 * size, so a tenth of the calls go first, untimed, to get this size's
 * buffers and paths warm again. */
static double batch(void *buf, size_t size, long iters)
{
    for (long i = 0; i < iters / 10 + 1; i++)
        op(buf, size, i);
    CHECK(MPI_Barrier(MPI_COMM_WORLD));
    double t0 = bu_now();
    for (long i = 0; i < iters; i++)
        op(buf, size, i);
    return (bu_now() - t0) / (double)iters;
}

static void *alloc_buf(size_t size, int use_alloc)
{
    void *p = NULL;
    if (!use_alloc)
        return bu_alloc(size);
    CHECK(MPI_Alloc_mem((MPI_Aint)(size ? size : 1), MPI_INFO_NULL, &p));
    memset(p, 0, size);   /* fault pages in outside the timing */
    return p;
}

static void free_buf(void *p, int use_alloc)
{
    if (use_alloc)
        MPI_Free_mem(p);
    else
        bu_free(p);
}

static void usage(FILE *f)
{
    fprintf(f, "usage: %s [-m MAXSIZE] [-s SIZE] [-i SCALE] [-a] [-h]\n"
               "  -m MAXSIZE  last size of the sweep 8,16,32,... bytes "
               "(default 1M; K/M/G suffixes)\n"
               "  -s SIZE     measure this size only\n"
               "  -i SCALE    multiply the iteration counts (default 1)\n"
               "  -a          buffers from MPI_Alloc_mem\n"
               "  -h          this help\n", prog);
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

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    size_t max = 0;
    if (pr == 0)
        for (size_t s = first_size(&o); s != BU_SIZE_END; s = bu_next_size(&o, s))
            max = s;
    if (pr == 0 && max > (size_t)1 << 30) {
        err = "sizes above 1G are not supported (MPI int counts)";
        pr = -1;
    }
    if (pr != 0) {
        if (rank == 0) {
            if (err)
                fprintf(stderr, "%s: %s\n", prog, err);
            usage(pr > 0 ? stdout : stderr);
        }
        MPI_Finalize();
        return pr > 0 ? 0 : 2;
    }

    void *buf = alloc_buf(max, o.use_alloc);
    if (rank == 0)
        bu_print_header("MPI", "bcast", np, &o,
                        o.use_alloc ? "MPI_Alloc_mem" : "malloc",
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
        verify_size(buf, s);
        sizes[n] = s;
        iters[n++] = probe_size(buf, s, &o);
    }
    for (int r = 0; r < BU_REPS; r++)
        for (int k = 0; k < n; k++)
            t[k * BU_REPS + r] = batch(buf, sizes[k], iters[k]);
    if (n > 0)
        max_to_root(t, n * BU_REPS);
    for (int k = 0; k < n && rank == 0; k++) {
        double col = bu_median(t + k * BU_REPS, BU_REPS) * 1e6;
        bu_print_row(sizes[k], 1, &col);
    }
    free_buf(buf, o.use_alloc);
    MPI_Finalize();
    return 0;
}
