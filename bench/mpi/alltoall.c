/*
 * bench/mpi/alltoall - MPI_Alltoall over MPI_COMM_WORLD, the reference
 * for bench/alltoall: the same harness (bench/coll_bench.h); only the
 * call differs.  SIZE bytes per pair, separate send and receive buffers.
 *
 *   mpirun -n N bench/mpi/alltoall [-m MAXSIZE] [-s SIZE] [-i SCALE] [-a]
 */
#define BENCH_PROG "mpi/alltoall"
#include "coll_mpi.h"

static void op(void *a, void *b, size_t size, long i)
{
    (void)i;
    CHECK(MPI_Alltoall(a, (int)size, MPI_BYTE, b, (int)size, MPI_BYTE, MPI_COMM_WORLD));
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
