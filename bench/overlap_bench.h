/*
 * overlap_bench.h - the harness of bench/overlap and bench/mpi/overlap:
 * how much of a nonblocking collective hides behind computation, measured
 * as the OSU micro-benchmarks' osu_i* tests measure it.  Per size:
 *   comm     start + wait at once (the collective's own time)
 *   compute  a dummy computation as long as comm, alone
 *   overall  start, the computation - in -p slices with a test after
 *            each - then wait
 *   overlap  100 x (1 - (overall - compute) / comm), at least 0: 100 %
 *            when the collective costs nothing beside the computation
 * each the slowest rank's, median of OV_REPS batches.
 *
 * The includer defines BENCH_PROG, OV_LIB and these, then calls ov_main:
 *   ov_init, ov_finalize, ov_rank, ov_size, ov_now (seconds),
 *   ov_barrier, ov_max (in place over all ranks), ov_compute(seconds),
 *   ov_start(test, a, b, size, root, req), ov_test(req), ov_wait(req),
 *   ov_progress_note() (where the progress comes from, for the header)
 * with ov_req_t the library's request type.
 */
#ifndef OVERLAP_BENCH_H
#define OVERLAP_BENCH_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_util.h"

enum { OV_IALLREDUCE, OV_IALLTOALL, OV_IBCAST, OV_IALLGATHER, OV_NTESTS };
static const char *ov_names[] = { "iallreduce", "ialltoall", "ibcast", "iallgather" };
#define OV_REPS 7

/* one batch of `iters` calls; work > 0: computation between start and wait */
static double ov_batch(int t, char *a, char *b, size_t size, long iters, double work,
                       int slices)
{
    ov_barrier();
    double t0 = ov_now();
    for (long i = 0; i < iters; i++) {
        ov_req_t r;
        ov_start(t, a, b, size, (int)(i % ov_size()), &r);
        for (int k = 0; work > 0 && k < slices; k++) {
            ov_compute(work / slices);
            ov_test(&r);
        }
        if (work > 0 && slices == 0)
            ov_compute(work);
        ov_wait(&r);
    }
    double x = (ov_now() - t0) / (double)iters;
    ov_max(&x);
    return x;
}

static double ov_compute_only(long iters, double work)
{
    ov_barrier();
    double t0 = ov_now();
    for (long i = 0; i < iters; i++)
        ov_compute(work);
    double x = (ov_now() - t0) / (double)iters;
    ov_max(&x);
    return x;
}

static int ov_main(int argc, char **argv)
{
    size_t lo = 8, hi = 1 << 20;
    int t = OV_IALLREDUCE, slices = 0, opt, bad = 0;
    long iters = 0;
    ov_init(&argc, &argv);
    int me = ov_rank(), np = ov_size();
    while ((opt = getopt(argc, argv, "t:s:m:p:i:h")) != -1) {
        switch (opt) {
        case 't':
            for (t = 0; t < OV_NTESTS && strcmp(optarg, ov_names[t]); t++)
                ;
            bad |= t == OV_NTESTS;
            break;
        case 's': bad |= bu_parse_size(optarg, &lo) != 0; hi = lo; break;
        case 'm': bad |= bu_parse_size(optarg, &hi) != 0; break;
        case 'p': slices = atoi(optarg); break;
        case 'i': iters = atol(optarg); break;
        default: bad = 1; break;
        }
    }
    if (bad || slices < 0 || lo < sizeof(double) || hi < lo) {
        if (me == 0)
            fprintf(stderr, "usage: %s [-t iallreduce|ialltoall|ibcast|iallgather] [-s SIZE] "
                            "[-m MAXSIZE] [-p SLICES] [-i ITERS]\n", BENCH_PROG);
        ov_finalize();
        return 2;
    }
    size_t blocks = t == OV_IALLTOALL || t == OV_IALLGATHER ? (size_t)np : 1;
    char *a = bu_alloc(hi * blocks), *b = bu_alloc(hi * blocks);
    memset(a, 0, hi * blocks);
    memset(b, 0, hi * blocks);
    if (me == 0) {
        printf("# %s %s, %d processes, progress: %s%s\n", OV_LIB, ov_names[t], np,
               ov_progress_note(), slices ? ", tests during the computation" : "");
        printf("# size  comm_us  compute_us  overall_us  overlap_pct   (slowest rank, "
               "median of %d batches)\n", OV_REPS);
    }
    for (size_t size = lo; size <= hi; size *= 4) {
        long n = iters ? iters : size <= 65536 ? 200 : 20;
        double c[OV_REPS], w[OV_REPS], o[OV_REPS];
        ov_batch(t, a, b, size, n / 10 + 1, 0, 0);           /* warm */
        for (int r = 0; r < OV_REPS; r++)
            c[r] = ov_batch(t, a, b, size, n, 0, 0);
        double comm = bu_median(c, OV_REPS);
        for (int r = 0; r < OV_REPS; r++) {
            w[r] = ov_compute_only(n, comm);
            o[r] = ov_batch(t, a, b, size, n, comm, slices);
        }
        double comp = bu_median(w, OV_REPS), all = bu_median(o, OV_REPS);
        double ov = comm > 0 ? 100.0 * (1.0 - (all - comp) / comm) : 0;
        if (me == 0)
            printf("%-8zu %9.2f %11.2f %11.2f %9.1f\n", size, comm * 1e6, comp * 1e6,
                   all * 1e6, ov < 0 ? 0 : ov);
        if (size > hi / 4)
            break;
    }
    bu_free(a);
    bu_free(b);
    ov_finalize();
    return 0;
}

#endif
