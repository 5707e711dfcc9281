/*
 * bench/smpi/coll - the collectives of bench/scale_coll, over MPI: built
 * with smpicc it runs under SimGrid's SMPI (bench/compare_smpi puts the
 * two side by side), with mpicc on any MPI.
 *
 *   smpirun -np N -platform P.xml -hostfile H bench/smpi/coll [-r REPS]
 *   mpirun -n N bench/smpi/coll [-r REPS]
 *     -r   warm repetitions (default 5)
 *
 * Prints (rank 0), one line each, in bench/scale_coll's format:
 *   OP FIRST_US MEDIAN_US   for allreduce8 (one double, MPI_SUM; its first
 *                           call right after MPI_Init), barrier, bcast1m
 *                           (1 MiB from rank 0), allgather1k (1 KiB a
 *                           rank): the first call, then the median of REPS
 *                           warm ones, each after a barrier.  Where the
 *                           ranks share one clock (SMPI's simulated time,
 *                           or MPI_WTIME_IS_GLOBAL) a call is timed from
 *                           rank 0's start to the last rank's end, as
 *                           bench/scale_coll does on an emulated machine;
 *                           elsewhere by rank 0 alone
 *   mem VMSIZE_MIB RSS_MIB PSS_MIB JOB_PSS_MIB
 *                           the largest address space, resident set and
 *                           proportional set of any process, and the sum
 *                           of the processes' proportional sets, at the
 *                           end (under SMPI every rank is in one process:
 *                           the four describe that process)
 *   wall INIT_S RUN_S       this machine's time in MPI_Init and from there
 *                           to before MPI_Finalize (under SMPI: the
 *                           simulator's process as a whole)
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"

/* smpicc turns clock_gettime into the simulated clock: the wall times
 * below want this machine's */
#ifdef clock_gettime
#undef clock_gettime
#endif

enum { OP_ALLREDUCE, OP_BARRIER, OP_BCAST, OP_ALLGATHER, NOPS };
static const char *const op_name[NOPS] = { "allreduce8", "barrier", "bcast1m", "allgather1k" };

#define BCAST_BYTES (1 << 20)
#define GATHER_BYTES 1024
#define MAX_REPS 99

static char *big, *gin, *gout;
static int global_clock;

static double real_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void call(int op)
{
    double x = 1.0, y = 0.0;
    switch (op) {
    case OP_ALLREDUCE:
        MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        break;
    case OP_BARRIER:
        MPI_Barrier(MPI_COMM_WORLD);
        break;
    case OP_BCAST:
        MPI_Bcast(big, BCAST_BYTES, MPI_BYTE, 0, MPI_COMM_WORLD);
        break;
    case OP_ALLGATHER:
        MPI_Allgather(gin, GATHER_BYTES, MPI_BYTE, gout, GATHER_BYTES, MPI_BYTE, MPI_COMM_WORLD);
        break;
    }
}

/* One call, us (the clock: see the header). */
static double once(int op, int me)
{
    double t[2], m[2];
    t[0] = MPI_Wtime();
    call(op);
    t[1] = MPI_Wtime();
    if (!global_clock)
        return (t[1] - t[0]) * 1e6;
    if (me != 0)
        t[0] = 0;
    MPI_Allreduce(t, m, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return (m[1] - m[0]) * 1e6;
}

int main(int argc, char **argv)
{
    int reps = 5, np, me;
    double r0 = real_s();
    MPI_Init(&argc, &argv);
    double r1 = real_s();
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-r") && i + 1 < argc) {
            reps = atoi(argv[++i]);
        } else {
            if (me == 0)
                fprintf(stderr, "usage: %s [-r REPS]\n", argv[0]);
            MPI_Finalize();
            return 2;
        }
    }
    if (reps < 1 || reps > MAX_REPS) {
        if (me == 0)
            fprintf(stderr, "coll: -r takes 1 to %d\n", MAX_REPS);
        MPI_Finalize();
        return 2;
    }
    int one_process = 0;
#ifdef SMPI_H
    global_clock = 1;              /* SMPI: simulated time, one clock */
    one_process = 1;
#else
    int *attr, flag = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &attr, &flag);
    global_clock = flag && *attr;
#endif

    double first[NOPS] = { 0 }, median[NOPS] = { 0 }, t[MAX_REPS];
    /* the first call of all comes right after MPI_Init, nothing between */
    first[OP_ALLREDUCE] = once(OP_ALLREDUCE, me);
    big = malloc(BCAST_BYTES);
    gin = malloc(GATHER_BYTES);
    gout = malloc((size_t)GATHER_BYTES * (size_t)np);
    if (!big || !gin || !gout) {
        fprintf(stderr, "coll: rank %d: out of memory\n", me);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    memset(big, me, BCAST_BYTES);
    memset(gin, me, GATHER_BYTES);
    for (int op = 0; op < NOPS; op++) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (op != OP_ALLREDUCE)
            first[op] = once(op, me);
        for (int r = 0; r < reps; r++) {
            MPI_Barrier(MPI_COMM_WORLD);
            t[r] = once(op, me);
        }
        median[op] = bu_median(t, reps);
    }
    double r2 = real_s();

    double vm = bu_proc_kb("/proc/self/status", "VmSize:") / 1024;
    double rss = bu_proc_kb("/proc/self/status", "VmRSS:") / 1024;
    double pss = bu_proc_kb("/proc/self/smaps_rollup", "Pss:") / 1024;
    double mine[4] = { vm, rss, pss, r1 - r0 }, mx[4], all = pss;
    MPI_Allreduce(mine, mx, 4, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (!one_process)
        MPI_Allreduce(&pss, &all, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0) {
        printf("# %d ranks on MPI%s%s\n", np, one_process ? " (SimGrid SMPI)" : "",
               global_clock ? ": one clock" : "");
        for (int op = 0; op < NOPS; op++)
            printf("%s %.3f %.3f\n", op_name[op], first[op], median[op]);
        printf("mem %.1f %.2f %.2f %.1f\n", mx[0], mx[1], mx[2], all);
        printf("wall %.3f %.3f\n", mx[3], r2 - r1);
        fflush(stdout);
    }
    free(big);
    free(gin);
    free(gout);
    MPI_Finalize();
    return 0;
}
