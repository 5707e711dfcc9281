/*
 * bench/mpi/barrier - MPI_Barrier over MPI_COMM_WORLD, the reference for
 * bench/barrier: the same batch sizing, check and output; only the calls
 * differ.  One row, size 0.
 *
 *   mpirun -n N bench/mpi/barrier [-i SCALE]
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"

static const char *prog = "mpi/barrier";

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

#define COLL_BATCH_S 0.01
#define COLL_MAX_ITERS 10000
/* The check makes one rank this late (ns) in each of its rounds. */
#define LATE_NS 2000000L

static int rank, np;

/* The collective under test. */
static inline void op(void)
{
    CHECK(MPI_Barrier(MPI_COMM_WORLD));
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
 * per batch (at least 2 calls), then times -i. */
static long iters_for(double per_call, double scale)
{
    double n = per_call > 0 ? COLL_BATCH_S / per_call : COLL_MAX_ITERS;
    if (n > COLL_MAX_ITERS)
        n = COLL_MAX_ITERS;
    if (n < 2)
        n = 2;
    n = (double)(long)n * scale;
    return n < 1 ? 1 : (long)n;
}

/* Untimed check, one round per rank: in round k rank k arrives LATE_NS
 * late.  Every rank notes the clock just before entering and just after
 * leaving; a barrier is right only if nobody left before the last one
 * entered: max(enter) <= min(leave).  CLOCK_MONOTONIC is one clock for
 * the whole machine, so the check holds only when every rank runs on this
 * node (otherwise it is skipped). */
static void verify(void)
{
    MPI_Comm node;
    int nnode;
    CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0,
                              MPI_INFO_NULL, &node));
    CHECK(MPI_Comm_size(node, &nnode));
    CHECK(MPI_Comm_free(&node));
    if (nnode != np)
        return;

    for (int late = 0; late < np; late++) {
        double tt[2];
        CHECK(MPI_Barrier(MPI_COMM_WORLD));
        if (rank == late) {
            struct timespec ts = { 0, LATE_NS };
            nanosleep(&ts, NULL);
        }
        tt[0] = bu_now();
        op();
        tt[1] = bu_now();
        if (rank != 0) {
            CHECK(MPI_Send(tt, 2, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD));
            continue;
        }
        double last_in = tt[0], first_out = tt[1];
        int who_in = 0, who_out = 0;
        for (int r = 1; r < np; r++) {
            CHECK(MPI_Recv(tt, 2, MPI_DOUBLE, r, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            if (tt[0] > last_in)
                last_in = tt[0], who_in = r;
            if (tt[1] < first_out)
                first_out = tt[1], who_out = r;
        }
        if (first_out < last_in) {
            fprintf(stderr, "%s: rank %d left the barrier %.1f us before rank "
                            "%d entered it (late rank %d)\n",
                    prog, who_out, (last_in - first_out) * 1e6, who_in, late);
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
    }
}

/* Time per call in seconds (meaningful at rank 0): an untimed probe sizes
 * the batches, then BU_REPS batches start together after a barrier; each
 * batch counts as long as its slowest rank; the median batch wins. */
static double time_barrier(const struct bu_opts *o)
{
    long warm = 100;
    double t[BU_REPS], probe;

    CHECK(MPI_Barrier(MPI_COMM_WORLD));
    double t0 = bu_now();
    for (long i = 0; i < warm; i++)
        op();
    probe = (bu_now() - t0) / (double)warm;
    max_to_root(&probe, 1);
    long iters = from_root(rank == 0 ? iters_for(probe, o->iter_scale) : 0);

    for (int r = 0; r < BU_REPS; r++) {
        CHECK(MPI_Barrier(MPI_COMM_WORLD));
        t0 = bu_now();
        for (long i = 0; i < iters; i++)
            op();
        t[r] = (bu_now() - t0) / (double)iters;
    }
    max_to_root(t, BU_REPS);
    return bu_median(t, BU_REPS);
}

static void usage(FILE *f)
{
    fprintf(f, "usage: %s [-i SCALE] [-h]\n"
               "  -i SCALE    multiply the iteration counts (default 1)\n"
               "  -h          this help\n"
               "(-m, -s and -a are accepted and ignored: a barrier has no data)\n",
            prog);
}

int main(int argc, char **argv)
{
    struct bu_opts o;
    const char *err;
    int pr = bu_parse(argc, argv, 0, &o, &err);

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (pr != 0) {
        if (rank == 0) {
            if (err)
                fprintf(stderr, "%s: %s\n", prog, err);
            usage(pr > 0 ? stdout : stderr);
        }
        MPI_Finalize();
        return pr > 0 ? 0 : 2;
    }

    if (rank == 0)
        bu_print_header("MPI", "barrier", np, &o, "no",
                        "size is always 0; time = slowest rank's loop / iterations",
                        "time_us");
    verify();
    double t = time_barrier(&o);
    double col = t * 1e6;
    if (rank == 0)
        bu_print_row(0, 1, &col);
    MPI_Finalize();
    return 0;
}
