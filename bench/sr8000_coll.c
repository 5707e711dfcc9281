/*
 * bench/sr8000_coll - the collective measurements of the FMPL paper
 * (Tatebe et al. 2002, 5.2-5.4) on the emulated SR8000: run with
 * FMPL_TRANSPORT=tcw on 2 to 16 ranks of the 2 x 8 partition (bench/sr8000
 * does).
 *
 *   fmplrun -n P bench/sr8000_coll [-i ITERS] [-s BYTES]
 *
 * Prints one line "coll P hw BW BS BM CF CM RF RM" (microseconds per call,
 * the slowest rank's loop / iterations):
 *   hw   1 when the hardware barrier and broadcast may run (Fig. 7: an
 *        even number of nodes fills a rectangle of the 2 x 8 partition)
 *   BW   fmpl_barrier(FMPL_COMM_WORLD): hmpc_barrier when hw, else the
 *        software barrier (Fig. 7's FMPL(HW) / FMPL(SW))
 *   BS   fmpl_barrier on a communicator of everybody: always the software
 *        barrier of TCW-reuse signals (FMPL(SW))
 *   BM   the paper's MPI's barrier (bench/sr8000_mpi.h)
 *   CF, CM   8 KB broadcast, FMPL's fmpl_bcast and MPI's (Fig. 8)
 *   RF, RM   8 KB sum reduction (1024 doubles), fmpl_reduce and MPI's
 *            (Fig. 9)
 * As in the paper, the root of the broadcasts and reductions changes every
 * iteration.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_util.h"
#define BENCH_PROG "sr8000_coll"
#include "bench_fmpl.h"
#include "sr8000_mpi.h"

#define SMPI_BASE 8

static int me, np;

enum { T_BARRIER_WORLD, T_BARRIER_SW, T_BARRIER_MPI, T_BCAST_FMPL, T_BCAST_MPI,
       T_REDUCE_FMPL, T_REDUCE_MPI, T_N };

static fmpl_comm_t all;            /* everybody, but not the world: software */
static double *buf, *tmp, *work;
static size_t bytes;

static void one(int test, long i)
{
    int root = (int)(i % np), count = (int)(bytes / sizeof(double));
    switch (test) {
    case T_BARRIER_WORLD: CHECK(fmpl_barrier(FMPL_COMM_WORLD)); break;
    case T_BARRIER_SW:    CHECK(fmpl_barrier(all)); break;
    case T_BARRIER_MPI:   smpi_barrier(); break;
    case T_BCAST_FMPL:    CHECK(fmpl_bcast(buf, bytes, root, FMPL_COMM_WORLD)); break;
    case T_BCAST_MPI:     smpi_bcast(buf, bytes, root, 0); break;
    case T_REDUCE_FMPL:
        CHECK(fmpl_reduce(buf, count, fmpl_dsum, root, FMPL_COMM_WORLD, work));
        break;
    case T_REDUCE_MPI:    smpi_reduce(buf, tmp, count, root, 0); break;
    }
}

/* Microseconds per call: the slowest rank's loop of `it` calls, the
 * median of BU_REPS batches.  The model is deterministic; what is not is
 * the CPU time the program spends between calls, which this machine
 * sometimes inflates by a context switch (emu/emu_clock.c): a batch that
 * met one is not the median. */
static double time_test(int test, long it)
{
    double t[BU_REPS];
    for (long i = 0; i < np; i++)      /* every root once, untimed */
        one(test, i);
    for (int r = 0; r < BU_REPS; r++) {
        CHECK(fmpl_barrier(FMPL_COMM_WORLD));
        double t0 = fmpl_wtime();
        for (long i = 0; i < it; i++)
            one(test, i);
        t[r] = (fmpl_wtime() - t0) / (double)it;
        CHECK(fmpl_reduce(&t[r], 1, fmpl_dmax, 0, FMPL_COMM_WORLD, NULL));
    }
    return bu_median(t, BU_REPS) * 1e6;
}

int main(int argc, char **argv)
{
    long iters = 0;
    int opt;
    bytes = 8192;
    while ((opt = getopt(argc, argv, "i:s:h")) != -1) {
        switch (opt) {
        case 'i': iters = atol(optarg); break;
        case 's':
            if (bu_parse_size(optarg, &bytes) != 0 || bytes % sizeof(double)) {
                fprintf(stderr, "%s: -s takes a multiple of 8 bytes\n", BENCH_PROG);
                return 2;
            }
            break;
        default:
            fprintf(opt == 'h' ? stdout : stderr,
                    "usage: fmplrun -n P %s [-i ITERS] [-s BYTES]\n", BENCH_PROG);
            return opt == 'h' ? 0 : 2;
        }
    }
    CHECK(fmpl_init(16));
    bench_fmpl_clock();
    me = fmpl_rank();
    np = fmpl_size();
    if (iters <= 0)
        iters = 2 * np;            /* whole rotations of the root */
    smpi_init(SMPI_BASE, 0);
    CHECK(fmpl_comm_create(1, &all));
    /* the hardware broadcast writes the same offset of the same area on
     * every node: every rank allocates these in the same order */
    buf = fmpl_alloc_mem(bytes);
    tmp = fmpl_alloc_mem(bytes);
    work = fmpl_alloc_mem(bytes);
    if (!buf || !tmp || !work)
        bench_die("fmpl_alloc_mem", FMPL_ERR_NOMEM);
    for (size_t k = 0; k < bytes / sizeof(double); k++)
        buf[k] = 1.0;
    double t[T_N];
    for (int k = 0; k < T_N; k++)
        t[k] = time_test(k, iters);
    if (me == 0) {
        int hw = !!(fmpl_g.tl.caps & FMPL_TL_CAP_HW_BARRIER);
        printf("coll %d %d", np, hw);
        for (int k = 0; k < T_N; k++)
            printf(" %.3f", t[k]);
        printf("\n");
    }
    CHECK(fmpl_comm_free(&all));
    CHECK(fmpl_free_mem(buf));
    CHECK(fmpl_free_mem(tmp));
    CHECK(fmpl_free_mem(work));
    return fmpl_finalize() == FMPL_SUCCESS ? 0 : 1;
}
