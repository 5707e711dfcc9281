/*
 * bench/bcast - FMPL broadcast over FMPL_COMM_WORLD.  As in the FMPL paper
 * the root changes every iteration (root = iteration % nprocs), so no
 * process can run ahead on a fixed tree and the caches do not keep one
 * root's data warm.
 *
 *   fmplrun -n N bench/bcast [-m MAXSIZE] [-s SIZE] [-i SCALE] [-a]
 *
 * bench/mpi/bcast is the same program over MPI_Bcast; bench/compare runs
 * both.  Row: size in bytes, time per fmpl_bcast in microseconds (the
 * slowest rank's loop time / iterations, median of BU_REPS batches).  The
 * harness is bench/coll_bench.h.
 */
#define BENCH_PROG "bcast"
#include "coll_fmpl.h"

/* iteration i broadcasts from rank i % np */
static void op(void *a, void *b, size_t size, long i)
{
    (void)b;
    CHECK(fmpl_bcast(a, size, (int)(i % np), FMPL_COMM_WORLD));
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
