/*
 * bench/allgather - FMPL allgather over FMPL_COMM_WORLD.  SIZE is the
 * block each rank contributes; the receive buffer holds nprocs blocks.
 * Separate send and receive buffers (not in place).
 *
 *   fmplrun -n N bench/allgather [-m MAXSIZE] [-s SIZE] [-i SCALE] [-a]
 *
 * bench/mpi/allgather is the same program over MPI_Allgather;
 * bench/compare runs both.  Row: size in bytes per rank, time per
 * fmpl_allgather in microseconds (the slowest rank's loop time /
 * iterations, median of BU_REPS batches).  The harness is
 * bench/coll_bench.h.
 */
#define BENCH_PROG "allgather"
#include "coll_fmpl.h"

static void op(void *a, void *b, size_t size, long i)
{
    (void)i;
    CHECK(fmpl_allgather(a, size, b, FMPL_COMM_WORLD));
}

int main(int argc, char **argv)
{
    static const struct cb_test t = {
        .name = "allgather", .sized = 1, .unit = 1, .rotate = 0, .second = CB_B_ALL,
        .op = op, .verify = cb_verify_allgather,
        .note = "size = bytes per rank; time = slowest rank's loop / iterations",
    };
    return cb_main(argc, argv, &t);
}
