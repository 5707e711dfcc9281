/*
 * bench/overlap - how much of an FMPL nonblocking collective hides behind
 * computation (the harness and its columns: bench/overlap_bench.h).
 * Progress from FMPL_PROGRESS_THREAD=1 (a thread), from -p N tests during
 * the computation, from the host's agent (dcfa with FMPL_DCFA_OFFLOAD), or
 * from none of them (the start and the wait).  The dummy
 * computation is fmpl_compute: on an emulated machine it moves the
 * modeled clock, and every time is modeled.
 *
 *   fmplrun -n N bench/overlap [-t iallreduce|ialltoall|ibcast|iallgather]
 *                              [-s SIZE] [-m MAXSIZE] [-p SLICES] [-i ITERS]
 *
 * bench/mpi/overlap is the same over MPI's nonblocking collectives.
 */
#define BENCH_PROG "overlap"
#define OV_LIB "FMPL"
#include <stdlib.h>
#include <string.h>

#include "bench_fmpl.h"

typedef fmpl_request_t ov_req_t;

static void ov_init(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    CHECK(fmpl_init(1));
    bench_fmpl_clock();
}
static void ov_finalize(void) { CHECK(fmpl_finalize()); }
static int ov_rank(void) { return fmpl_rank(); }
static int ov_size(void) { return fmpl_size(); }
static double ov_now(void) { return fmpl_wtime(); }
static void ov_barrier(void) { CHECK(fmpl_barrier(FMPL_COMM_WORLD)); }
static void ov_max(double *x) { CHECK(fmpl_allreduce(x, 1, fmpl_dmax, FMPL_COMM_WORLD, NULL)); }
static void ov_compute(double s) { CHECK(fmpl_compute(s)); }
static void ov_test(ov_req_t *r)
{
    int done;
    CHECK(fmpl_test(r, &done));
}
static void ov_wait(ov_req_t *r) { CHECK(fmpl_wait(r)); }
static const char *ov_progress_note(void)
{
    const char *t = getenv("FMPL_PROGRESS_THREAD");
    const char *o = getenv("FMPL_DCFA_OFFLOAD");
    if (o && strcmp(o, "off") && !strcmp(fmpl_transport(), "dcfa"))
        return "the host agent where FMPL_DCFA_OFFLOAD takes it";
    return t && strcmp(t, "0") ? "progress thread" : "start and wait only";
}

static void ov_start(int t, char *a, char *b, size_t size, int root, ov_req_t *r)
{
    switch (t) {
    case 0: /* OV_IALLREDUCE */
        CHECK(fmpl_iallreduce(a, (int)(size / sizeof(double)), fmpl_dsum, FMPL_COMM_WORLD, r));
        break;
    case 1: /* OV_IALLTOALL */
        CHECK(fmpl_ialltoall(a, size, b, FMPL_COMM_WORLD, r));
        break;
    case 2: /* OV_IBCAST */
        CHECK(fmpl_ibcast(a, size, root, FMPL_COMM_WORLD, r));
        break;
    default:
        CHECK(fmpl_iallgather(a, size, b, FMPL_COMM_WORLD, r));
        break;
    }
}

#include "overlap_bench.h"

int main(int argc, char **argv) { return ov_main(argc, argv); }
