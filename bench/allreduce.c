/*
 * bench/allreduce - FMPL allreduce (fmpl_dsum of size/8 doubles) over
 * FMPL_COMM_WORLD, in place, with a preallocated work buffer.
 *
 *   fmplrun -n N bench/allreduce [-m MAXSIZE] [-s SIZE] [-i SCALE] [-a]
 *
 * bench/mpi/allreduce is the same program over MPI_Allreduce (MPI_SUM,
 * MPI_DOUBLE, MPI_IN_PLACE); bench/compare runs both.  Row: size in bytes,
 * time per fmpl_allreduce in microseconds (the slowest rank's loop time /
 * iterations, median of BU_REPS batches).  The harness is
 * bench/coll_bench.h.
 */
#define BENCH_PROG "allreduce"
#include "coll_fmpl.h"

/* b is fmpl_allreduce's work area */
static void op(void *a, void *b, size_t size, long i)
{
    (void)i;
    CHECK(fmpl_allreduce(a, (int)(size / sizeof(double)), fmpl_dsum, FMPL_COMM_WORLD, b));
}

int main(int argc, char **argv)
{
    static const struct cb_test t = {
        .name = "allreduce", .sized = 1, .unit = sizeof(double), .rotate = 0,
        .second = CB_B_SAME, .op = op, .verify = cb_verify_allreduce,
        .note = "fmpl_dsum of size/8 doubles, in place; time = slowest rank's "
                "loop / iterations",
    };
    return cb_main(argc, argv, &t);
}
