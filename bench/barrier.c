/*
 * bench/barrier - FMPL barrier over FMPL_COMM_WORLD (on shm: the
 * transport's shared-counter barrier).  One row, size 0: time per
 * fmpl_barrier in microseconds (the slowest rank's loop time / iterations,
 * median of BU_REPS batches).  Checked first: each rank in turn enters
 * late, and no rank may leave before the last one entered.
 *
 *   fmplrun -n N bench/barrier [-i SCALE]
 *
 * bench/mpi/barrier is the same program over MPI_Barrier; bench/compare
 * runs both.  The harness is bench/coll_bench.h.
 */
#define BENCH_PROG "barrier"
#include "coll_fmpl.h"

static void op(void *a, void *b, size_t size, long i)
{
    (void)a, (void)b, (void)size, (void)i;
    CHECK(fmpl_barrier(FMPL_COMM_WORLD));
}

int main(int argc, char **argv)
{
    static const struct cb_test t = {
        .name = "barrier", .sized = 0, .op = op, .verify = cb_verify_barrier,
        .note = "size is always 0; time = slowest rank's loop / iterations",
    };
    return cb_main(argc, argv, &t);
}
