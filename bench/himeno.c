/*
 * bench/himeno - the Himeno benchmark on FMPL: a 19-point Jacobi stencil
 * on a float grid decomposed over i and j (k whole), one persistent halo
 * exchange (fmpl_halo_init / fmpl_halo_do, corners included) and an
 * fmpl_allreduce of gosa per iteration.
 *
 *   fmplrun -n 4 bench/himeno [-s SIZE]... [-x NX -y NY -z NZ]
 *                             [-n ITERS] [-i SCALE] [-p PX] [-q PY] [-a] [-o]
 *
 * -o overlaps the exchange with the sweep of the points that read no
 * shadow (fmpl_halo_start, the inner sweep in 8 slices with an
 * fmpl_halo_test after each, fmpl_halo_wait, the rim).
 *
 * bench/mpi/himeno is the same program over MPI (himenoBMTxp's exchange);
 * the kernel, decomposition, iteration counts and output are shared
 * (himeno_kernel.h, bench_util), so their rows compare directly.
 * Rows: size = grid points gx*gy*gz, median time per iteration (us) over
 * BU_REPS batches, MFLOPS at 34 flops per updated point, and the median
 * time per iteration rank 0 spends in the halo exchange and the allreduce
 * (waiting for slower neighbours included).  A comment after
 * each row gives gosa (the same for any process count and for MPI, to
 * about 1e-15 relative) and the halo kinds FMPL chose.
 */
#include <fmpl.h>
#include <string.h>

#include "bench_util.h"
#include "himeno_kernel.h"

#define BENCH_PROG "himeno"
#include "bench_fmpl.h"

static const char *kind_name(int k)
{
    switch (k) {
    case FMPL_HALO_NONE:         return "none";
    case FMPL_HALO_BLOCK:        return "block";
    case FMPL_HALO_BLOCK_STRIDE: return "block-stride";
    case FMPL_HALO_STRIDE:       return "stride";
    default:                     return fmpl_error_name(k);
    }
}

/* The halo of p: one shadow plane each side of i and j, none in k. */
static fmpl_halo_t halo_init(const struct hk_dom *d, hk_real *p)
{
    int extent[3] = { d->mi, d->mj, d->nk };
    int shadow[3] = { 1, 1, 0 };
    int nbr[6] = { d->nbr[0], d->nbr[1], d->nbr[2], d->nbr[3], -1, -1 };
    fmpl_halo_t h = NULL;
    CHECK(fmpl_halo_init(p, sizeof(hk_real), 3, extent, shadow, nbr, 0, FMPL_COMM_WORLD, &h));
    return h;
}

/* n iterations that exchange p's faces first, sweeping meanwhile the
 * points that read no shadow (the shadows hold the exchange's previous
 * values until the wait); the same arithmetic as iterate() (p's shadows
 * are right before the first).  comm: the start, the wait, the
 * allreduce. */
static double iterate_overlap(long n, const struct hk_dom *d, struct hk_arrays *A,
                              fmpl_halo_t h, double *comm)
{
    double gosa = 0.0, work, tc = 0.0;
    for (long it = 0; it < n; it++) {
        double t0 = bu_now();
        CHECK(fmpl_halo_start(h));
        double t1 = bu_now(), tt = 0;
        /* in slices of rows with a test after each: faces move only while
         * we are in an FMPL call */
        int done = 0, rows = d->mi - 2, slices = rows < 8 ? rows : 8;
        gosa = 0;
        for (int sl = 0; sl < slices; sl++) {
            gosa += hk_jacobi_box(d, A, 2 + rows * sl / slices, 1 + rows * (sl + 1) / slices, 2,
                                  d->mj - 1);
            double ta = bu_now();
            if (!done)
                CHECK(fmpl_halo_test(h, &done));
            tt += bu_now() - ta;
        }
        double t2 = bu_now();
        if (!done)
            CHECK(fmpl_halo_wait(h));
        double t3 = bu_now();
        gosa += hk_jacobi_rim(d, A);
        hk_copy_back(d, A);
        double t4 = bu_now();
        CHECK(fmpl_allreduce(&gosa, 1, fmpl_dsum, FMPL_COMM_WORLD, &work));
        tc += (t1 - t0) + tt + (t3 - t2) + (bu_now() - t4);
    }
    *comm += tc;
    return gosa;
}

/* n Himeno iterations; returns the global gosa of the last and adds the
 * time spent communicating (halo exchange and allreduce) to *comm. */
static double iterate(long n, const struct hk_dom *d, struct hk_arrays *A, fmpl_halo_t h,
                      double *comm)
{
    double gosa = 0.0, work, tc = 0.0;
    for (long it = 0; it < n; it++) {
        gosa = hk_jacobi(d, A);
        double t0 = bu_now();
        CHECK(fmpl_halo_do(h));
        CHECK(fmpl_allreduce(&gosa, 1, fmpl_dsum, FMPL_COMM_WORLD, &work));
        tc += bu_now() - t0;
    }
    *comm += tc;
    return gosa;
}

int main(int argc, char **argv)
{
    struct hk_opts o;
    const char *err = NULL;
    int pr = hk_parse(argc, argv, &o, &err);

    CHECK(fmpl_init(1));
    bench_fmpl_clock();
    int rank = fmpl_rank(), np = fmpl_size();
    if (pr == 0 && hk_dims(np, &o.px, &o.py, &err))
        pr = -1;
    for (int s = 0; pr == 0 && s < o.nruns; s++) {
        struct hk_dom d;
        if (hk_decompose(&d, o.x[s], o.y[s], o.z[s], o.px, o.py, rank, &err))
            pr = -1;
    }
    if (pr != 0) {
        if (rank == 0) {
            if (err)
                fprintf(stderr, "%s: %s\n", BENCH_PROG, err);
            hk_usage(pr > 0 ? stdout : stderr, BENCH_PROG);
        }
        fmpl_finalize();
        return pr > 0 ? 0 : 2;
    }

    if (rank == 0) {
        struct bu_opts bo = { .iter_scale = o.iter_scale };
        char note[200];
        snprintf(note, sizeof note,
                 "%d x %d processes over i x j, float grid, size = grid points, "
                 "34 flops per updated point%s", o.px, o.py,
                 o.overlap ? "; halo exchange overlapped with the inner sweep" : "");
        bu_print_header("FMPL", "himeno", np, &bo, o.use_alloc ? "fmpl_alloc_mem" : "malloc",
                        note, "time_per_iter_us  mflops  comm_us_per_iter");
    }

    for (int s = 0; s < o.nruns; s++) {
        struct hk_dom d;
        struct hk_arrays A;
        hk_real *p;
        char msg[256];

        hk_decompose(&d, o.x[s], o.y[s], o.z[s], o.px, o.py, rank, &err);
        if (o.use_alloc) {
            p = fmpl_alloc_mem(d.n * sizeof(hk_real));
            if (!p)
                bench_die("fmpl_alloc_mem", FMPL_ERR_NOMEM);
        } else {
            p = bu_alloc(d.n * sizeof(hk_real));
        }
        if (hk_alloc(&d, &A, p))
            bench_die("hk_alloc", FMPL_ERR_NOMEM);
        hk_init(&d, &A);
        fmpl_halo_t h = halo_init(&d, p);

        /* Untimed: one exchange of a known pattern, checked everywhere, so
         * no timing is reported for an exchange that delivers wrong data. */
        hk_fill_pattern(&d, p);
        CHECK(fmpl_halo_do(h));
        if (hk_check_pattern(&d, p, msg, sizeof msg)) {
            fprintf(stderr, "%s: rank %d: %s\n", BENCH_PROG, rank, msg);
            fmpl_abort(3);
        }
        hk_init_p(&d, p);

        long iters = hk_batch_iters(&o, &d);
        double t[BU_REPS], tc[BU_REPS], gosa, dummy = 0.0;
        double (*iter)(long, const struct hk_dom *, struct hk_arrays *, fmpl_halo_t,
                       double *) = o.overlap ? iterate_overlap : iterate;
        gosa = iter(iters / 10 + 1, &d, &A, h, &dummy);   /* warm caches and paths */
        for (int r = 0; r < BU_REPS; r++) {
            CHECK(fmpl_barrier(FMPL_COMM_WORLD));
            double t0 = bu_now();
            tc[r] = 0.0;
            gosa = iter(iters, &d, &A, h, &tc[r]);
            t[r] = (bu_now() - t0) / (double)iters;
            tc[r] /= (double)iters;
        }
        double tm = bu_median(t, BU_REPS), tcm = bu_median(tc, BU_REPS);
        if (rank == 0) {
            double cols[3] = { tm * 1e6, hk_flops(&d) / tm / 1e6, tcm * 1e6 };
            bu_print_row((size_t)d.gx * d.gy * d.gz, 3, cols);
            printf("#   %dx%dx%d: gosa %.17g after %ld iterations; halo i %s, j %s, k %s\n",
                   d.gx, d.gy, d.gz, gosa, iters / 10 + 1 + BU_REPS * iters,
                   kind_name(fmpl_halo_kind(h, 0)), kind_name(fmpl_halo_kind(h, 1)),
                   kind_name(fmpl_halo_kind(h, 2)));
            fflush(stdout);
        }

        CHECK(fmpl_halo_free(&h));
        hk_free(&A);
        if (o.use_alloc)
            CHECK(fmpl_free_mem(p));
        else
            bu_free(p);
    }
    CHECK(fmpl_finalize());
    return 0;
}
