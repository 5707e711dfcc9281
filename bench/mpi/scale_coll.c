/*
 * bench/mpi/scale_coll - bench/scale_coll -s over MPI: start-up, a barrier
 * and an 8-byte allreduce, and what the job cost this machine, so that
 * bench/scale puts Open MPI's start-up beside FMPL's at the same rank
 * counts (mpirun --oversubscribe).
 *
 *   mpirun -n N bench/mpi/scale_coll -s
 *
 * Prints (rank 0) the lines of bench/scale_coll: allreduce8 and barrier
 * (FIRST_US, rank 0's own time; MEDIAN_US 0), mem and wall.
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"

static double real_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    if (argc != 2 || strcmp(argv[1], "-s") != 0) {
        fprintf(stderr, "usage: mpirun -n N bench/mpi/scale_coll -s\n");
        return 2;
    }
    double r0 = real_s();
    MPI_Init(&argc, &argv);
    double r1 = real_s();
    int np, me;
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    double x = 1.0, y, t0 = MPI_Wtime();
    MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    double t1 = MPI_Wtime();
    MPI_Barrier(MPI_COMM_WORLD);
    double t2 = MPI_Wtime(), r2 = real_s();
    double mine[4] = { bu_proc_kb("/proc/self/status", "VmSize:") / 1024,
                       bu_proc_kb("/proc/self/status", "VmRSS:") / 1024,
                       bu_proc_kb("/proc/self/smaps_rollup", "Pss:") / 1024, r1 - r0 };
    double mx[4], sum = mine[2], all;
    MPI_Reduce(mine, mx, 4, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&sum, &all, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (me == 0) {
        printf("# %d ranks on MPI\n", np);
        printf("allreduce8 %.3f 0.000\n", (t1 - t0) * 1e6);
        printf("barrier %.3f 0.000\n", (t2 - t1) * 1e6);
        printf("mem %.1f %.2f %.2f %.1f\n", mx[0], mx[1], mx[2], all);
        printf("wall %.3f %.3f\n", mx[3], r2 - r1);
    }
    MPI_Finalize();
    return 0;
}
