/*
 * bench/reduce - FMPL reduction (fmpl_dsum of size/8 doubles) over
 * FMPL_COMM_WORLD, in place, with a preallocated work buffer.  As in the
 * FMPL paper the root changes every iteration (root = iteration % nprocs).
 *
 *   fmplrun -n N bench/reduce [-m MAXSIZE] [-s SIZE] [-i SCALE] [-a]
 *
 * bench/mpi/reduce is the same program over MPI_Reduce (MPI_SUM,
 * MPI_DOUBLE, MPI_IN_PLACE at the root); bench/compare runs both.  Row:
 * size in bytes, time per fmpl_reduce in microseconds (the slowest rank's
 * loop time / iterations, median of BU_REPS batches).  The harness is
 * bench/coll_bench.h.
 */
#define BENCH_PROG "reduce"
#include "coll_fmpl.h"

/* iteration i reduces to rank i % np; b is fmpl_reduce's work area */
static void op(void *a, void *b, size_t size, long i)
{
    CHECK(fmpl_reduce(a, (int)(size / sizeof(double)), fmpl_dsum, (int)(i % np),
                      FMPL_COMM_WORLD, b));
}

int main(int argc, char **argv)
{
    static const struct cb_test t = {
        .name = "reduce", .sized = 1, .unit = sizeof(double), .rotate = 1,
        .second = CB_B_SAME, .op = op, .verify = cb_verify_reduce,
        .note = "fmpl_dsum of size/8 doubles, in place; root = iteration % nprocs; "
                "time = slowest rank's loop / iterations",
    };
    return cb_main(argc, argv, &t);
}
