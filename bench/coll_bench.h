/*
 * coll_bench.h - the harness every collective benchmark shares, FMPL's and
 * MPI's alike: options, the size sweep, the untimed check, batch sizing,
 * interleaved timed batches, the slowest rank's time, the output.
 *
 * A program defines BENCH_PROG, includes its library's backend
 * (coll_fmpl.h, or mpi/coll_mpi.h for the MPI twins), which provides
 *   CB_LIB, CB_ALLOC_NAME       names for the header line
 *   rank, np                    set by cb_init()
 *   cb_init, cb_finalize, cb_abort, cb_barrier
 *   cb_send, cb_recv            bytes to / from a rank (point-to-point: the
 *                               bookkeeping never relies on the collectives
 *                               it measures)
 *   cb_lib_alloc, cb_lib_free   the library's memory (-a)
 * and then includes this file; it describes its collective in a struct
 * cb_test and calls cb_main().
 *
 * Timing: every rank times its own loop, the loops start after a barrier,
 * a batch counts as long as its slowest rank (the Intel MPI Benchmarks'
 * t_max), the median of BU_REPS batches is printed.  The batches of one
 * size lie a whole pass over the sweep apart, so a slow stretch of the
 * (virtual) machine spoils at most one of them.
 */
#ifndef COLL_BENCH_H
#define COLL_BENCH_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"

/* Sweeps: 8 B .. 1 MiB unless -m says otherwise, which keeps a sweep of 8
 * processes on 2 cores well under 15 s. */
#define CB_MIN_SIZE 8
#define CB_DEFAULT_MAX ((size_t)1 << 20)
#define CB_MAX_SIZE ((size_t)1 << 30)
/* A timed batch lasts about this long (seconds), with at most
 * CB_MAX_ITERS iterations; the count comes from an untimed probe. */
#define CB_BATCH_S 0.01
#define CB_MAX_ITERS 10000
#define CB_MAX_SIZES 64

/* The second buffer a collective needs, besides `a` (SIZE bytes). */
enum { CB_B_NONE, CB_B_SAME /* SIZE bytes */, CB_B_ALL /* SIZE x nprocs */ };

struct cb_test {
    const char *name;              /* "bcast": the header's test name */
    const char *note;              /* the header's description line */
    int sized;                     /* 0: no data (barrier): one row, size 0 */
    size_t unit;                   /* sizes must be multiples of this */
    int rotate;                    /* root = iteration % nprocs: batches are
                                      whole rotations */
    int second;                    /* CB_B_* */
    int first_all;                 /* `a` holds SIZE x nprocs (alltoall) */
    /* the call under test; iteration i (a rooted collective: root i % np) */
    void (*op)(void *a, void *b, size_t size, long i);
    /* untimed check of one size (one of cb_verify_*), exits on error */
    void (*verify)(const struct cb_test *t, void *a, void *b, size_t size);
};

/* Element-wise maximum of v[0..n-1] over all ranks, left at rank 0. */
static void cb_max_to_root(double *v, int n)
{
    if (rank != 0) {
        cb_send(v, (size_t)n * sizeof *v, 0);
        return;
    }
    double tmp[n];
    for (int r = 1; r < np; r++) {
        cb_recv(tmp, sizeof tmp, r);
        for (int k = 0; k < n; k++)
            if (tmp[k] > v[k])
                v[k] = tmp[k];
    }
}

/* Rank 0's value of x on every rank. */
static long cb_from_root(long x)
{
    if (rank == 0)
        for (int r = 1; r < np; r++)
            cb_send(&x, sizeof x, r);
    else
        cb_recv(&x, sizeof x, 0);
    return x;
}

/* The checks, one per kind of collective, run before a size is timed.
 * They call the collective through t->op, so FMPL and MPI are checked
 * the same way. */

/* barrier: each rank in turn enters late; nobody may leave before the
 * last one entered */
static inline void cb_verify_barrier(const struct cb_test *t, void *a, void *b, size_t size)
{
    for (int late = 0; late < np; late++) {
        double tt[2];
        cb_barrier();
        if (rank == late) {
            struct timespec ts = { 0, 2000000L };
            nanosleep(&ts, NULL);
        }
        tt[0] = bu_now();
        t->op(a, b, size, 0);
        tt[1] = bu_now();
        if (rank != 0) {
            cb_send(tt, sizeof tt, 0);
            continue;
        }
        double last_in = tt[0], first_out = tt[1];
        int who_in = 0, who_out = 0;
        for (int r = 1; r < np; r++) {
            cb_recv(tt, sizeof tt, r);
            if (tt[0] > last_in)
                last_in = tt[0], who_in = r;
            if (tt[1] < first_out)
                first_out = tt[1], who_out = r;
        }
        if (first_out < last_in) {
            fprintf(stderr, "%s: rank %d left the barrier %.1f us before rank "
                            "%d entered it (late rank %d)\n",
                    BENCH_PROG, who_out, (last_in - first_out) * 1e6, who_in, late);
            cb_abort(3);
        }
    }
}

/* bcast: from every root a pattern of the size and the root, checked
 * everywhere */
static inline void cb_verify_bcast(const struct cb_test *t, void *a, void *b, size_t size)
{
    for (int root = 0; root < np; root++) {
        unsigned seed = (unsigned)size * 131u + (unsigned)root;
        if (rank == root)
            bu_fill(a, size, seed);
        else
            memset(a, 0, size);
        t->op(a, b, size, root);
        long off = bu_verify(a, size, seed);
        if (off >= 0) {
            fprintf(stderr, "%s: rank %d: wrong data from root %d\n", BENCH_PROG, rank, root);
            bu_report_mismatch(BENCH_PROG, rank, size, off, a, seed);
            cb_abort(3);
        }
    }
}

/* allgather: every rank's pattern, every block checked everywhere */
static inline void cb_verify_allgather(const struct cb_test *t, void *a, void *b, size_t size)
{
    bu_fill(a, size, (unsigned)size * 131u + (unsigned)rank);
    memset(b, 0, size * (size_t)np);
    t->op(a, b, size, 0);
    for (int j = 0; j < np; j++) {
        unsigned seed = (unsigned)size * 131u + (unsigned)j;
        char *blk = (char *)b + (size_t)j * size;
        long off = bu_verify(blk, size, seed);
        if (off >= 0) {
            fprintf(stderr, "%s: rank %d: wrong data in the block of rank %d\n",
                    BENCH_PROG, rank, j);
            bu_report_mismatch(BENCH_PROG, rank, size, off, blk, seed);
            cb_abort(3);
        }
    }
}

/* alltoall: block j of rank i carries the pattern of (i, j); every block
 * checked at its receiver */
static inline unsigned cb_pair_seed(size_t size, int from, int to)
{
    return (unsigned)size * 131u + (unsigned)from * 65599u + (unsigned)to;
}

static inline void cb_verify_alltoall(const struct cb_test *t, void *a, void *b, size_t size)
{
    for (int j = 0; j < np; j++)
        bu_fill((char *)a + (size_t)j * size, size, cb_pair_seed(size, rank, j));
    memset(b, 0, size * (size_t)np);
    t->op(a, b, size, 0);
    for (int i = 0; i < np; i++) {
        char *blk = (char *)b + (size_t)i * size;
        long off = bu_verify(blk, size, cb_pair_seed(size, i, rank));
        if (off >= 0) {
            fprintf(stderr, "%s: rank %d: wrong data in the block from rank %d\n",
                    BENCH_PROG, rank, i);
            bu_report_mismatch(BENCH_PROG, rank, size, off, blk, cb_pair_seed(size, i, rank));
            cb_abort(3);
        }
    }
}

/* Rank r's element i in the checks of the reductions: a small integer, so
 * that every sum is exact in any order and a wrong, missing or doubled
 * term shows. */
static inline double cb_term(int r, long i)
{
    return (double)((long)(((unsigned long)i * 37u + (unsigned long)r * 101u) % 2001u) - 1000);
}

static inline void cb_fill_terms(double *buf, long count)
{
    for (long i = 0; i < count; i++)
        buf[i] = cb_term(rank, i);
}

/* Compare a reduced vector with the sum of cb_term() */
static inline void cb_check_sum(const double *buf, long count, const char *what)
{
    for (long i = 0; i < count; i++) {
        double want = 0;
        for (int r = 0; r < np; r++)
            want += cb_term(r, i);
        if (buf[i] != want) {
            fprintf(stderr, "%s: rank %d: wrong sum in a %zu-byte %s at element %ld: "
                            "got %.17g, expected %.17g\n",
                    BENCH_PROG, rank, (size_t)count * sizeof *buf, what, i, buf[i], want);
            cb_abort(3);
        }
    }
}

/* reduce: to every root (the buffers are refilled each time: off the root
 * they may hold partial sums); the root checks every element.  Then the
 * buffer is zeroed: timed runs add zeros, so the sums grow neither to
 * infinity nor into denormals, and adding zeros costs what adding
 * anything else does. */
static inline void cb_verify_reduce(const struct cb_test *t, void *a, void *b, size_t size)
{
    long count = (long)(size / sizeof(double));
    for (int root = 0; root < np; root++) {
        cb_fill_terms(a, count);
        t->op(a, b, size, root);
        if (rank == root)
            cb_check_sum(a, count, "reduce");
    }
    memset(a, 0, size);
}

/* allreduce: every rank checks every element; then zeros, as above */
static inline void cb_verify_allreduce(const struct cb_test *t, void *a, void *b, size_t size)
{
    long count = (long)(size / sizeof(double));
    cb_fill_terms(a, count);
    t->op(a, b, size, 0);
    cb_check_sum(a, count, "allreduce");
    memset(a, 0, size);
}

/* Iterations per batch from the probe's time per call: about CB_BATCH_S
 * per batch (a whole number of root rotations, at least 2 calls), then
 * times -i. */
static long cb_iters_for(const struct cb_test *t, double per_call, double scale)
{
    double n = per_call > 0 ? CB_BATCH_S / per_call : CB_MAX_ITERS;
    if (n > CB_MAX_ITERS)
        n = CB_MAX_ITERS;
    long k = n < 2 ? 2 : (long)n;
    if (t->rotate)
        k = (k + np - 1) / np * np;
    n = (double)k * scale;
    return n < 1 ? 1 : (long)n;
}

/* Iterations per batch for one size, the same on every rank: an untimed
 * warm-up of the size is timed twice, the faster pass counts (the first
 * may pay once for a path this size is the first to take: FMPL's first
 * point-to-point collective of 128 KiB on 4 ranks took ten times its
 * later calls, so its batches got 128 calls instead of some 1400 and a
 * core's scheduling skew at their start weighed 20 % in their median),
 * and its slowest rank decides. */
static long cb_probe(const struct cb_test *t, void *a, void *b, size_t size, double scale)
{
    long warm = t->sized ? bu_iters(size, 100, 8.0 * (1 << 20), 1.0) : 100;
    double per_call = 0;
    for (int pass = 0; pass < 2; pass++) {
        cb_barrier();
        double t0 = bu_now();
        for (long i = 0; i < warm; i++)
            t->op(a, b, size, i);
        double d = (bu_now() - t0) / (double)warm;
        if (!pass || d < per_call)
            per_call = d;
    }
    cb_max_to_root(&per_call, 1);
    return cb_from_root(rank == 0 ? cb_iters_for(t, per_call, scale) : 0);
}

/* One timed batch of `iters` calls started together after a barrier: this
 * rank's time per call in seconds.  The previous batch was of another
 * size, so a tenth of the calls go first, untimed, to get this size's
 * buffers and paths warm again. */
static double cb_batch(const struct cb_test *t, void *a, void *b, size_t size, long iters)
{
    for (long i = 0; i < iters / 10 + 1; i++)
        t->op(a, b, size, i);
    cb_barrier();
    double t0 = bu_now();
    for (long i = 0; i < iters; i++)
        t->op(a, b, size, i);
    return (bu_now() - t0) / (double)iters;
}

static void *cb_alloc(size_t size, int use_alloc)
{
    if (!use_alloc)
        return bu_alloc(size);
    void *p = cb_lib_alloc(size ? size : 1);
    memset(p, 0, size);            /* fault pages in outside the timing */
    return p;
}

static void cb_free(void *p, int use_alloc)
{
    if (!p)
        return;
    if (use_alloc)
        cb_lib_free(p);
    else
        bu_free(p);
}

static void cb_usage(const struct cb_test *t, FILE *f)
{
    if (!t->sized) {
        fprintf(f, "usage: %s [-i SCALE] [-h]\n"
                   "  -i SCALE    multiply the iteration counts (default 1)\n"
                   "  -h          this help\n"
                   "(-m, -s and -a are accepted and ignored: a %s has no data)\n",
                BENCH_PROG, t->name);
        return;
    }
    fprintf(f, "usage: %s [-m MAXSIZE] [-s SIZE] [-i SCALE] [-a] [-h]\n"
               "  -m MAXSIZE  last size of the sweep 8,16,32,... bytes "
               "(default 1M, at most 1G; K/M/G suffixes)\n"
               "  -s SIZE     measure this size only%s\n"
               "  -i SCALE    multiply the iteration counts (default 1)\n"
               "  -a          buffers from %s\n"
               "  -h          this help\n",
            BENCH_PROG, t->unit > 1 ? " (a multiple of 8)" : "", CB_ALLOC_NAME);
}

/* Was -m given?  (bu_parse's grammar: -a and -h take no value.) */
static int cb_has_max(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-m"))
            return 1;
        if (strcmp(argv[i], "-a") && strcmp(argv[i], "-h") && strcmp(argv[i], "--help"))
            i++;
    }
    return 0;
}

/* The sweep: CB_MIN_SIZE doubling up to -m, or just -s; {0} unsized. */
static int cb_sizes(const struct cb_test *t, const struct bu_opts *o, size_t *sizes,
                    const char **err)
{
    int n = 0;
    if (!t->sized) {
        sizes[n++] = 0;
        return n;
    }
    if (o->single_size != BU_SIZE_END) {
        if (o->single_size == 0 || o->single_size % t->unit) {
            *err = t->unit > 1 ? "-s needs a positive multiple of 8 (bytes of doubles)"
                               : "-s needs a positive size";
            return -1;
        }
        sizes[n++] = o->single_size;
    } else if (o->max_size >= CB_MIN_SIZE) {
        for (size_t s = CB_MIN_SIZE; s != BU_SIZE_END && n < CB_MAX_SIZES;
             s = bu_next_size(o, s))
            sizes[n++] = s;
    }
    if (n > 0 && sizes[n - 1] > CB_MAX_SIZE) {
        *err = "sizes above 1G are not supported";
        return -1;
    }
    return n;
}

static int cb_main(int argc, char **argv, const struct cb_test *t)
{
    struct bu_opts o;
    const char *err = NULL;
    static size_t sizes[CB_MAX_SIZES];
    static long iters[CB_MAX_SIZES];
    static double times[CB_MAX_SIZES * BU_REPS];
    int pr = bu_parse(argc, argv, 0, &o, &err);
    if (pr == 0 && !cb_has_max(argc, argv))
        o.max_size = CB_DEFAULT_MAX;
    if (!t->sized)
        o.use_alloc = 0;

    cb_init(&argc, &argv);
    int n = pr == 0 ? cb_sizes(t, &o, sizes, &err) : 0;
    if (n < 0)
        pr = -1;
    if (pr != 0) {
        if (rank == 0) {
            if (err)
                fprintf(stderr, "%s: %s\n", BENCH_PROG, err);
            cb_usage(t, pr > 0 ? stdout : stderr);
        }
        cb_finalize();
        return pr > 0 ? 0 : 2;
    }

    size_t max = n > 0 ? sizes[n - 1] : 0;
    void *a = t->sized ? cb_alloc(t->first_all ? max * (size_t)np : max, o.use_alloc) : NULL;
    void *b = t->second == CB_B_SAME ? cb_alloc(max, o.use_alloc)
            : t->second == CB_B_ALL ? cb_alloc(max * (size_t)np, o.use_alloc) : NULL;
    if (rank == 0)
        bu_print_header(CB_LIB, t->name, np, &o,
                        !t->sized ? "no" : o.use_alloc ? CB_ALLOC_NAME : "malloc",
                        t->note, "time_us");
    for (int k = 0; k < n; k++) {
        t->verify(t, a, b, sizes[k]);
        iters[k] = cb_probe(t, a, b, sizes[k], o.iter_scale);
    }
    for (int r = 0; r < BU_REPS; r++)
        for (int k = 0; k < n; k++)
            times[k * BU_REPS + r] = cb_batch(t, a, b, sizes[k], iters[k]);
    if (n > 0)
        cb_max_to_root(times, n * BU_REPS);
    for (int k = 0; k < n && rank == 0; k++) {
        double col = bu_median(times + k * BU_REPS, BU_REPS) * 1e6;
        bu_print_row(sizes[k], 1, &col);
    }
    cb_free(a, o.use_alloc);
    cb_free(b, o.use_alloc);
    cb_finalize();
    return 0;
}

#endif
