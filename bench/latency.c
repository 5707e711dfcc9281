/*
 * bench/latency - FMPL ping-pong latency between ranks 0 and 1 (other
 * ranks idle), OSU style: one-way latency = round trip / 2.
 *
 *   fmplrun -n 2 bench/latency [-m MAXSIZE] [-s SIZE] [-i SCALE] [-a]
 *
 * bench/mpi/latency is the same program over MPI; bench/compare runs both.
 */
#include <fmpl.h>
#include <string.h>

#include "bench_util.h"

#define BENCH_PROG "latency"
#include "bench_fmpl.h"

/* One round trip of `size` bytes between ranks 0 and 1 on index 0. */
static inline void pingpong(int rank, void *sbuf, void *rbuf, size_t size)
{
    if (rank == 0) {
        CHECK(fmpl_send(sbuf, size, 1, 0));
        CHECK(fmpl_recv(rbuf, size, 1, 0));
    } else {
        CHECK(fmpl_recv(rbuf, size, 0, 0));
        CHECK(fmpl_send(sbuf, size, 0, 0));
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
        bu_report_mismatch(BENCH_PROG, rank, size, off, rbuf, seed_in);
        fmpl_abort(3);
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

int main(int argc, char **argv)
{
    struct bu_opts o;
    const char *err;
    int pr = bu_parse(argc, argv, 0, &o, &err);

    CHECK(fmpl_init(64));
    bench_fmpl_clock();
    int rank = fmpl_rank(), np = fmpl_size();
    if (pr == 0 && np < 2) {
        err = "needs at least 2 processes";
        pr = -1;
    }
    if (pr != 0) {
        if (rank == 0) {
            if (err)
                fprintf(stderr, "%s: %s\n", BENCH_PROG, err);
            bu_usage(pr > 0 ? stdout : stderr, BENCH_PROG, 0);
        }
        fmpl_finalize();
        return pr > 0 ? 0 : 2;
    }

    size_t max = bu_sweep_max(&o);
    void *sbuf = alloc_buf(max, o.use_alloc);
    void *rbuf = alloc_buf(max, o.use_alloc);
    if (rank == 0)
        bu_print_header("FMPL", "latency", np, &o,
                        o.use_alloc ? "fmpl_alloc_mem" : "malloc", NULL,
                        "latency_us  bandwidth_MBps");
    if (rank < 2) {   /* ranks 2.. only wait in fmpl_finalize */
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
    CHECK(fmpl_finalize());
    return 0;
}
