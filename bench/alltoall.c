/*
 * bench/alltoall - FMPL alltoall over FMPL_COMM_WORLD.  SIZE is the block
 * each rank sends to each rank; send and receive buffers hold nprocs
 * blocks each (not in place).
 *
 *   fmplrun -n N bench/alltoall [-m MAXSIZE] [-s SIZE] [-i SCALE] [-a]
 *
 * bench/mpi/alltoall is the same program over MPI_Alltoall; bench/compare
 * runs both.  Row: size in bytes per pair, time per fmpl_alltoall in
 * microseconds (the slowest rank's loop time / iterations, median of
 * BU_REPS batches).  The harness is bench/coll_bench.h.
 */
#define BENCH_PROG "alltoall"
#include "coll_fmpl.h"

static void op(void *a, void *b, size_t size, long i)
{
    (void)i;
    CHECK(fmpl_alltoall(a, size, b, FMPL_COMM_WORLD));
}

int main(int argc, char **argv)
{
    static const struct cb_test t = {
        .name = "alltoall", .sized = 1, .unit = 1, .rotate = 0, .second = CB_B_ALL,
        .first_all = 1, .op = op, .verify = cb_verify_alltoall,
        .note = "size = bytes per pair; time = slowest rank's loop / iterations",
    };
    return cb_main(argc, argv, &t);
}
