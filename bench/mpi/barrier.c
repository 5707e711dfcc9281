/*
 * bench/mpi/barrier - MPI_Barrier over MPI_COMM_WORLD, the reference for
 * bench/barrier: the same harness (bench/coll_bench.h: batch sizing,
 * check, output); only the call differs.  One row, size 0.
 *
 *   mpirun -n N bench/mpi/barrier [-i SCALE]
 */
#define BENCH_PROG "mpi/barrier"
#include "coll_mpi.h"

static void op(void *a, void *b, size_t size, long i)
{
    (void)a, (void)b, (void)size, (void)i;
    CHECK(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
    static const struct cb_test t = {
        .name = "barrier", .sized = 0, .op = op, .verify = cb_verify_barrier,
        .note = "size is always 0; time = slowest rank's loop / iterations",
    };
    return cb_main(argc, argv, &t);
}
