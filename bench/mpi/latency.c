/*
 * bench/mpi/latency - MPI ping-pong latency, the reference for
 * bench/latency.  Same sweep, iteration counts and output (bench_util);
 * only the four communication calls differ.
 *
 *   mpirun -n 2 bench/mpi/latency [-m MAXSIZE] [-s SIZE] [-i SCALE] [-a]
 */
#include <mpi.h>
#include <string.h>

#include "bench_util.h"

static const char *prog = "mpi/latency";

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

/* One round trip of `size` bytes between ranks 0 and 1, tag 0. */
static inline void pingpong(int rank, void *sbuf, void *rbuf, size_t size)
{
    int n = (int)size;
    if (rank == 0) {
        CHECK(MPI_Send(sbuf, n, MPI_BYTE, 1, 0, MPI_COMM_WORLD));
        CHECK(MPI_Recv(rbuf, n, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    } else {
        CHECK(MPI_Recv(rbuf, n, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(MPI_Send(sbuf, n, MPI_BYTE, 0, 0, MPI_COMM_WORLD));
    }
}

/* An untimed round trip with a different pattern each way, so a timing
 * is never reported for a transfer that delivers wrong data. */
static void verify_size(int rank, void *sbuf, void *rbuf, size_t size)
{
    unsigned seed_out = (unsigned)size * 2u + (unsigned)rank;
    unsigned seed_in = (unsigned)size * 2u + (unsigned)!rank;
    bu_fill(sbuf, size, seed_out);
    memset(rbuf, 0, size);
    pingpong(rank, sbuf, rbuf, size);
    long off = bu_verify(rbuf, size, seed_in);
    if (off >= 0) {
        bu_report_mismatch(prog, rank, size, off, rbuf, seed_in);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
}

/* Median over BU_REPS batches of the one-way time (round trip / 2), s.
 * A batch moves at most ~200 MiB so a 16 MiB size stays near 0.2 s. */
static double time_size(int rank, void *sbuf, void *rbuf, size_t size,
                        const struct bu_opts *o)
{
    long iters = bu_iters(size, 2000, 100.0 * (1 << 20), o->iter_scale);
    double t[BU_REPS];

    for (long i = 0; i < iters / 10 + 2; i++)   /* warm caches and paths */
        pingpong(rank, sbuf, rbuf, size);
    for (int r = 0; r < BU_REPS; r++) {
        double t0 = bu_now();
        for (long i = 0; i < iters; i++)
            pingpong(rank, sbuf, rbuf, size);
        t[r] = (bu_now() - t0) / (double)iters / 2;
    }
    return bu_median(t, BU_REPS);
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

int main(int argc, char **argv)
{
    struct bu_opts o;
    const char *err;
    int rank, np;
    int pr = bu_parse(argc, argv, 0, &o, &err);

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (pr == 0 && np < 2) {
        err = "needs at least 2 processes";
        pr = -1;
    }
    if (pr == 0 && bu_sweep_max(&o) > (size_t)1 << 30) {
        err = "sizes above 1G are not supported (MPI int counts)";
        pr = -1;
    }
    if (pr != 0) {
        if (rank == 0) {
            if (err)
                fprintf(stderr, "%s: %s\n", prog, err);
            bu_usage(pr > 0 ? stdout : stderr, prog, 0);
        }
        MPI_Finalize();
        return pr > 0 ? 0 : 2;
    }

    size_t max = bu_sweep_max(&o);
    void *sbuf = alloc_buf(max, o.use_alloc);
    void *rbuf = alloc_buf(max, o.use_alloc);
    if (rank == 0)
        bu_print_header("MPI", "latency", np, &o,
                        o.use_alloc ? "MPI_Alloc_mem" : "malloc", NULL,
                        "latency_us  bandwidth_MBps");
    if (rank < 2) {   /* ranks 2.. only wait in MPI_Finalize */
        for (size_t s = bu_first_size(&o); s != BU_SIZE_END; s = bu_next_size(&o, s)) {
            verify_size(rank, sbuf, rbuf, s);
            double lat = time_size(rank, sbuf, rbuf, s, &o);
            double cols[2] = { lat * 1e6, (double)s / lat / 1e6 };
            if (rank == 0)
                bu_print_row(s, 2, cols);
        }
    }
    free_buf(sbuf, o.use_alloc);
    free_buf(rbuf, o.use_alloc);
    MPI_Finalize();
    return 0;
}
