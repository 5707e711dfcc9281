/*
 * bench/mpi/blacs - the MPI-BLACS of Debian's libscalapack-openmpi, the
 * reference for bench/blacs: the same source (bench/blacs_bench.h: sweep,
 * checks, batch sizing, slowest rank, medians, output); only the library
 * differs.
 *
 *   mpirun -n 2 bench/mpi/blacs [-m MAX] [-M CMAX] [-T TESTS] [-N N] [-r REPS] ...
 * Build:
 *   mpicc -O2 -Ibench bench/mpi/blacs.c bench/bench_util.c -lscalapack-openmpi \
 *         -llapack -lblas -lgfortran -lm -o bench/mpi/blacs
 */
#define BB_LIB "MPI"
#define BB_PROG "mpi/blacs"
#include "blacs_bench.h"

int main(int argc, char **argv)
{
    return bb_main(argc, argv);
}
