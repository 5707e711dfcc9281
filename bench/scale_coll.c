/*
 * bench/scale_coll - the collectives at scale (bench/scale runs it): the
 * first call of each right after start-up, then the median of warm ones,
 * and what the job cost this machine (wall time, memory per rank).
 *
 *   fmplrun -n N bench/scale_coll [-s] [-t halo|all] [-r REPS]
 *     -s   start-up only: fmpl_init, a barrier, an 8-byte allreduce and
 *          fmpl_finalize (the program for real ranks on shm)
 *     -t   a traffic pattern instead of the collectives, to see what a
 *          rank's memory and start-up grow with: halo (8 KiB with each
 *          of 4 neighbours on a 2-D torus: `halo8k`) or all (1 KiB with
 *          every other rank, n - 1 shifted exchanges: `alltoall1k`)
 *     -r   warm repetitions (default 5)
 *
 * Prints (rank 0), one line each:
 *   OP FIRST_US MEDIAN_US   for allreduce8 (8 bytes, first call right after
 *                           fmpl_init), barrier, bcast1m (1 MiB from rank 0),
 *                           allgather1k (1 KiB a rank); each call after a
 *                           barrier, timed from rank 0's start to the last
 *                           rank's end on an emulated machine (one clock
 *                           for all), by rank 0 alone elsewhere
 *   mem VMSIZE_MIB RSS_MIB PSS_MIB JOB_PSS_MIB
 *                           the largest address space, resident set and
 *                           proportional set of any rank, and the sum of
 *                           the ranks' proportional sets (what the job
 *                           holds, shared pages counted once), at the end
 *   wall INIT_S RUN_S       this machine's time in fmpl_init (the slowest
 *                           rank's) and from there to before finalize
 * The format `OP FIRST_US MEDIAN_US` is the one bench/compare_smpi reads
 * from SimGrid's side too.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"

#define BENCH_PROG "scale_coll"
#include "bench_fmpl.h"

enum { OP_ALLREDUCE, OP_BARRIER, OP_BCAST, OP_ALLGATHER, OP_HALO, OP_ALL, NOPS };
static const char *const op_name[NOPS] = { "allreduce8", "barrier",  "bcast1m",
                                           "allgather1k", "halo8k", "alltoall1k" };

#define BCAST_BYTES ((size_t)1 << 20)
#define GATHER_BYTES 1024
#define HALO_BYTES 8192
#define ALL_BYTES 1024

static uint8_t *big, *gin, *gout;
static int nb[4];                  /* halo: -x, +x, -y, +y on a px x py torus */

static void torus(int np, int me)
{
    int px = 1;
    for (int d = 1; d * d <= np; d++)
        if (np % d == 0)
            px = d;
    int py = np / px, x = me % px, y = me / px;
    nb[0] = y * px + (x + px - 1) % px;
    nb[1] = y * px + (x + 1) % px;
    nb[2] = ((y + py - 1) % py) * px + x;
    nb[3] = ((y + 1) % py) * px + x;
}

/* direction d's data goes to nb[d] on index d and comes from the
 * opposite neighbour on the same index, so that a peer that is both
 * (a torus 2 wide) is never ambiguous */
static void halo(void)
{
    fmpl_request_t r[4], s[4];
    for (int d = 0; d < 4; d++)
        CHECK(fmpl_irecv(gout + (size_t)d * HALO_BYTES, HALO_BYTES, nb[d ^ 1], d, &r[d]));
    for (int d = 0; d < 4; d++)
        CHECK(fmpl_isend(gin, HALO_BYTES, nb[d], d, &s[d]));
    for (int d = 0; d < 4; d++) {
        CHECK(fmpl_wait_isend(&s[d]));
        CHECK(fmpl_wait_irecv(&r[d]));
    }
}

static void all_to_all(void)
{
    int np = fmpl_size(), me = fmpl_rank();
    for (int k = 1; k < np; k++) {
        fmpl_request_t r, s;
        int src = (me - k + np) % np;
        CHECK(fmpl_irecv(gout + (size_t)src * ALL_BYTES, ALL_BYTES, src, 0, &r));
        CHECK(fmpl_isend(gin, ALL_BYTES, (me + k) % np, 0, &s));
        CHECK(fmpl_wait_isend(&s));
        CHECK(fmpl_wait_irecv(&r));
    }
}

static double real_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void call(int op)
{
    double x = 1.0, w;
    switch (op) {
    case OP_ALLREDUCE: CHECK(fmpl_allreduce(&x, 1, fmpl_dsum, FMPL_COMM_WORLD, &w)); break;
    case OP_BARRIER:   CHECK(fmpl_barrier(FMPL_COMM_WORLD)); break;
    case OP_BCAST:     CHECK(fmpl_bcast(big, BCAST_BYTES, 0, FMPL_COMM_WORLD)); break;
    case OP_ALLGATHER: CHECK(fmpl_allgather(gin, GATHER_BYTES, gout, FMPL_COMM_WORLD)); break;
    case OP_HALO:      halo(); break;
    case OP_ALL:       all_to_all(); break;
    }
}

/* One call, us: on an emulated machine from rank 0's start to the last
 * rank's end (its clock is one clock), else rank 0's own time. */
static double once(int op)
{
    double t[2];
    t[0] = fmpl_wtime();
    call(op);
    t[1] = fmpl_wtime();
    if (fmpl_wtime_emulated()) {
        if (fmpl_rank() != 0)
            t[0] = 0;
        CHECK(fmpl_allreduce(t, 2, fmpl_dmax, FMPL_COMM_WORLD, NULL));
    }
    return (t[1] - t[0]) * 1e6;
}

/* The first call of each right after the last, then `reps` warm ones. */
static void timed(int op, int reps, double *first, double *median)
{
    double t[99];
    first[op] = once(op);
    for (int r = 0; r < reps; r++) {
        CHECK(fmpl_barrier(FMPL_COMM_WORLD));
        t[r] = once(op);
    }
    median[op] = bu_median(t, reps);
}

/* the first call of all comes right after fmpl_init, nothing between */
static void run_collectives(int start_only, int reps, double *first, double *median)
{
    int np = fmpl_size(), me = fmpl_rank();
    if (start_only) {
        first[OP_ALLREDUCE] = once(OP_ALLREDUCE);
        first[OP_BARRIER] = once(OP_BARRIER);
        return;
    }
    big = malloc(BCAST_BYTES);
    gin = malloc(GATHER_BYTES);
    gout = malloc((size_t)GATHER_BYTES * (size_t)np);
    if (!big || !gin || !gout)
        bench_die("malloc", FMPL_ERR_NOMEM);
    memset(big, me, BCAST_BYTES);
    memset(gin, me, GATHER_BYTES);
    for (int op = OP_ALLREDUCE; op <= OP_ALLGATHER; op++) {
        if (op != OP_ALLREDUCE)
            CHECK(fmpl_barrier(FMPL_COMM_WORLD));
        timed(op, reps, first, median);
    }
}

/* the first exchange right after fmpl_init: the set-up of its peers */
static void run_traffic(int op, int reps, double *first, double *median)
{
    int np = fmpl_size(), me = fmpl_rank();
    size_t in = op == OP_HALO ? HALO_BYTES : ALL_BYTES;
    size_t out = op == OP_HALO ? 4 * (size_t)HALO_BYTES : (size_t)ALL_BYTES * (size_t)np;
    gin = malloc(in);
    gout = malloc(out);
    if (!gin || !gout)
        bench_die("malloc", FMPL_ERR_NOMEM);
    memset(gin, me, in);
    torus(np, me);
    timed(op, reps, first, median);
    for (int d = 0; op == OP_HALO && d < 4; d++)
        if (gout[(size_t)d * HALO_BYTES] != (uint8_t)nb[d ^ 1])
            bench_die("halo: wrong data", FMPL_ERR_INTERNAL);
    for (int k = 0; op == OP_ALL && k < np; k++)
        if (k != me && gout[(size_t)k * ALL_BYTES] != (uint8_t)k)
            bench_die("all-to-all: wrong data", FMPL_ERR_INTERNAL);
}

int main(int argc, char **argv)
{
    int start_only = 0, reps = 5, traffic = -1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-s"))
            start_only = 1;
        else if (!strcmp(argv[i], "-r") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-t") && i + 1 < argc && !strcmp(argv[i + 1], "halo"))
            traffic = OP_HALO, i++;
        else if (!strcmp(argv[i], "-t") && i + 1 < argc && !strcmp(argv[i + 1], "all"))
            traffic = OP_ALL, i++;
        else {
            fprintf(stderr, "usage: fmplrun -n N bench/scale_coll [-s] [-t halo|all] [-r REPS]\n");
            return 2;
        }
    }
    if (reps < 1 || reps > 99) {
        fprintf(stderr, "scale_coll: -r takes 1 to 99\n");
        return 2;
    }
    double r0 = real_s();
    CHECK(fmpl_init(16));
    double r1 = real_s();
    int np = fmpl_size(), me = fmpl_rank();
    double first[NOPS] = { 0 }, median[NOPS] = { 0 };
    if (traffic >= 0)
        run_traffic(traffic, reps, first, median);
    else
        run_collectives(start_only, reps, first, median);
    double r2 = real_s();
    double vm = bu_proc_kb("/proc/self/status", "VmSize:") / 1024;
    double rss = bu_proc_kb("/proc/self/status", "VmRSS:") / 1024;
    double pss = bu_proc_kb("/proc/self/smaps_rollup", "Pss:") / 1024;
    double mx[4] = { vm, rss, pss, r1 - r0 }, sum = pss, all = 0;
    CHECK(fmpl_allreduce(mx, 4, fmpl_dmax, FMPL_COMM_WORLD, NULL));
    CHECK(fmpl_allreduce(&sum, 1, fmpl_dsum, FMPL_COMM_WORLD, &all));
    if (me == 0) {
        printf("# %d ranks on %s%s\n", np, fmpl_transport(),
               fmpl_wtime_emulated() ? ": modeled time" : "");
        for (int op = 0; op < NOPS; op++)
            if (first[op] > 0 || median[op] > 0)
                printf("%s %.3f %.3f\n", op_name[op], first[op], median[op]);
        printf("mem %.1f %.2f %.2f %.1f\n", mx[0], mx[1], mx[2], sum);
        printf("wall %.3f %.3f\n", mx[3], r2 - r1);
    }
    free(big);
    free(gin);
    free(gout);
    CHECK(fmpl_finalize());
    return 0;
}
