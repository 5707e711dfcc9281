/*
 * bench/overlap - how much of a nonblocking collective hides behind
 * computation, measured the way the OSU micro-benchmarks' osu_i* tests
 * measure it.  Per size:
 *   comm     start + wait at once (the collective's own time)
 *   compute  fmpl_compute(comm) alone (a dummy computation as long as it)
 *   overall  start, fmpl_compute(comm) - in -p slices with an fmpl_test
 *            after each - then wait
 *   overlap  100 x (1 - (overall - compute) / comm), at least 0: 100 %
 *            when the collective costs nothing beside the computation
 * each the slowest rank's, median of 7 batches.  Where progress comes
 * from: FMPL_PROGRESS_THREAD=1 (a thread), -p N (the rank tests N times),
 * neither (only the start and the wait).  On an emulated machine every
 * time is its modeled time, and fmpl_compute moves its clock.
 *
 *   fmplrun -n N bench/overlap [-t iallreduce|ialltoall|ibcast|iallgather]
 *                              [-s SIZE] [-m MAXSIZE] [-p SLICES] [-i ITERS]
 */
#define BENCH_PROG "overlap"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_fmpl.h"

enum { T_IALLREDUCE, T_IALLTOALL, T_IBCAST, T_IALLGATHER };
static const char *tnames[] = { "iallreduce", "ialltoall", "ibcast", "iallgather" };
static int test = T_IALLREDUCE, np, me;
static char *a, *b;

static void start(size_t size, long i, fmpl_request_t *r)
{
    switch (test) {
    case T_IALLREDUCE:
        CHECK(fmpl_iallreduce(a, (int)(size / sizeof(double)), fmpl_dsum, FMPL_COMM_WORLD, r));
        break;
    case T_IALLTOALL:
        CHECK(fmpl_ialltoall(a, size, b, FMPL_COMM_WORLD, r));
        break;
    case T_IBCAST:
        CHECK(fmpl_ibcast(a, size, (int)(i % np), FMPL_COMM_WORLD, r));
        break;
    default:
        CHECK(fmpl_iallgather(a, size, b, FMPL_COMM_WORLD, r));
        break;
    }
}

/* the slowest rank's time, at every rank */
static double slowest(double t)
{
    CHECK(fmpl_allreduce(&t, 1, fmpl_dmax, FMPL_COMM_WORLD, NULL));
    return t;
}

/* one batch of `iters` calls; work > 0: computation between start and wait */
static double batch(size_t size, long iters, double work, int slices)
{
    CHECK(fmpl_barrier(FMPL_COMM_WORLD));
    double t0 = fmpl_wtime();
    for (long i = 0; i < iters; i++) {
        fmpl_request_t r;
        start(size, i, &r);
        for (int k = 0; work > 0 && k < slices; k++) {
            int done;
            CHECK(fmpl_compute(work / slices));
            CHECK(fmpl_test(&r, &done));
        }
        if (work > 0 && slices == 0)
            CHECK(fmpl_compute(work));
        CHECK(fmpl_wait(&r));
    }
    return slowest((fmpl_wtime() - t0) / (double)iters);
}

static double compute_only(long iters, double work)
{
    CHECK(fmpl_barrier(FMPL_COMM_WORLD));
    double t0 = fmpl_wtime();
    for (long i = 0; i < iters; i++)
        CHECK(fmpl_compute(work));
    return slowest((fmpl_wtime() - t0) / (double)iters);
}

#define REPS 7

int main(int argc, char **argv)
{
    size_t lo = 8, hi = 1 << 20;
    int slices = 0, opt;
    long iters = 0;
    CHECK(fmpl_init(1));
    bench_fmpl_clock();
    np = fmpl_size();
    me = fmpl_rank();
    while ((opt = getopt(argc, argv, "t:s:m:p:i:h")) != -1) {
        switch (opt) {
        case 't':
            for (test = 0; test < 4 && strcmp(optarg, tnames[test]); test++)
                ;
            if (test == 4)
                goto usage;
            break;
        case 's':
            if (bu_parse_size(optarg, &lo) != 0)
                goto usage;
            hi = lo;
            break;
        case 'm':
            if (bu_parse_size(optarg, &hi) != 0)
                goto usage;
            break;
        case 'p':
            slices = atoi(optarg);
            break;
        case 'i':
            iters = atol(optarg);
            break;
        default:
            goto usage;
        }
    }
    if (slices < 0 || lo < sizeof(double) || hi < lo)
        goto usage;
    size_t blocks = test == T_IALLTOALL || test == T_IALLGATHER ? (size_t)np : 1;
    a = bu_alloc(hi * blocks);
    b = bu_alloc(hi * blocks);
    memset(a, 0, hi * blocks);
    memset(b, 0, hi * blocks);
    if (me == 0) {
        printf("# FMPL %s, %d processes, transport %s, progress: %s%s\n", tnames[test], np,
               fmpl_transport(), getenv("FMPL_PROGRESS_THREAD") ? "thread, " : "",
               slices ? "tests during the computation" : "start and wait only");
        printf("# size  comm_us  compute_us  overall_us  overlap_pct   (slowest rank, "
               "median of %d batches)\n", REPS);
    }
    for (size_t size = lo; size <= hi; size *= 4) {
        long n = iters ? iters : size <= 65536 ? 200 : 20;
        double c[REPS], w[REPS], o[REPS];
        batch(size, n / 10 + 1, 0, 0);                 /* warm */
        for (int r = 0; r < REPS; r++)
            c[r] = batch(size, n, 0, 0);
        double comm = bu_median(c, REPS);
        for (int r = 0; r < REPS; r++) {
            w[r] = compute_only(n, comm);
            o[r] = batch(size, n, comm, slices);
        }
        double comp = bu_median(w, REPS), all = bu_median(o, REPS);
        double ov = comm > 0 ? 100.0 * (1.0 - (all - comp) / comm) : 0;
        if (ov < 0)
            ov = 0;
        if (me == 0)
            printf("%-8zu %9.2f %11.2f %11.2f %9.1f\n", size, comm * 1e6, comp * 1e6,
                   all * 1e6, ov);
        if (size > hi / 4)
            break;
    }
    CHECK(fmpl_finalize());
    return 0;
usage:
    if (me == 0)
        fprintf(stderr, "usage: %s [-t iallreduce|ialltoall|ibcast|iallgather] [-s SIZE] "
                        "[-m MAXSIZE] [-p SLICES] [-i ITERS]\n", argv[0]);
    fmpl_finalize();
    return 2;
}
