/*
 * bench/mpi/allgather - MPI_Allgather over MPI_COMM_WORLD, the reference
 * for bench/allgather: the same harness (bench/coll_bench.h); only the
 * call differs.  SIZE bytes per rank, separate send and receive buffers.
 *
 *   mpirun -n N bench/mpi/allgather [-m MAXSIZE] [-s SIZE] [-i SCALE] [-a]
 */
#define BENCH_PROG "mpi/allgather"
#include "coll_mpi.h"

static void op(void *a, void *b, size_t size, long i)
{
    (void)i;
    CHECK(MPI_Allgather(a, (int)size, MPI_BYTE, b, (int)size, MPI_BYTE, MPI_COMM_WORLD));
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
