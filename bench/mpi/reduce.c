/*
 * bench/mpi/reduce - MPI_Reduce (MPI_SUM of MPI_DOUBLE) over
 * MPI_COMM_WORLD, the reference for bench/reduce: the same harness
 * (bench/coll_bench.h: sweep, root rotation root = iteration % nprocs,
 * batch sizing, check, output); only the call differs.  In place
 * (MPI_IN_PLACE at the root), as fmpl_reduce works: the sum replaces the
 * root's buffer.
 *
 *   mpirun -n N bench/mpi/reduce [-m MAXSIZE] [-s SIZE] [-i SCALE] [-a]
 */
#define BENCH_PROG "mpi/reduce"
#include "coll_mpi.h"

static void op(void *a, void *b, size_t size, long i)
{
    int root = (int)(i % np);
    (void)b;
    CHECK(MPI_Reduce(rank == root ? MPI_IN_PLACE : a, a, (int)(size / sizeof(double)),
                     MPI_DOUBLE, MPI_SUM, root, MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
    static const struct cb_test t = {
        .name = "reduce", .sized = 1, .unit = sizeof(double), .rotate = 1,
        .second = CB_B_NONE, .op = op, .verify = cb_verify_reduce,
        .note = "MPI_SUM of size/8 doubles, in place; root = iteration % nprocs; "
                "time = slowest rank's loop / iterations",
    };
    return cb_main(argc, argv, &t);
}
