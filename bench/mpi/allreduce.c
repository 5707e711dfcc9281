/*
 * bench/mpi/allreduce - MPI_Allreduce (MPI_SUM of MPI_DOUBLE, MPI_IN_PLACE)
 * over MPI_COMM_WORLD, the reference for bench/allreduce: the same harness
 * (bench/coll_bench.h); only the call differs.
 *
 *   mpirun -n N bench/mpi/allreduce [-m MAXSIZE] [-s SIZE] [-i SCALE] [-a]
 */
#define BENCH_PROG "mpi/allreduce"
#include "coll_mpi.h"

static void op(void *a, void *b, size_t size, long i)
{
    (void)b, (void)i;
    CHECK(MPI_Allreduce(MPI_IN_PLACE, a, (int)(size / sizeof(double)), MPI_DOUBLE, MPI_SUM,
                        MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
    static const struct cb_test t = {
        .name = "allreduce", .sized = 1, .unit = sizeof(double), .rotate = 0,
        .second = CB_B_NONE, .op = op, .verify = cb_verify_allreduce,
        .note = "MPI_SUM of size/8 doubles, in place; time = slowest rank's loop / iterations",
    };
    return cb_main(argc, argv, &t);
}
