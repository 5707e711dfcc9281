/*
 * bench/mpi/bcast - MPI_Bcast over MPI_COMM_WORLD, the reference for
 * bench/bcast: the same harness (bench/coll_bench.h: sweep, root rotation
 * root = iteration % nprocs, batch sizing, check, output); only the call
 * differs.
 *
 *   mpirun -n N bench/mpi/bcast [-m MAXSIZE] [-s SIZE] [-i SCALE] [-a]
 */
#define BENCH_PROG "mpi/bcast"
#include "coll_mpi.h"

static void op(void *a, void *b, size_t size, long i)
{
    (void)b;
    CHECK(MPI_Bcast(a, (int)size, MPI_BYTE, (int)(i % np), MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
    static const struct cb_test t = {
        .name = "bcast", .sized = 1, .unit = 1, .rotate = 1, .second = CB_B_NONE,
        .op = op, .verify = cb_verify_bcast,
        .note = "root = iteration % nprocs; time = slowest rank's loop / iterations",
    };
    return cb_main(argc, argv, &t);
}
