/*
 * bench/blacs - fmpl-blacs: point-to-point (Cdgesd2d/Cdgerv2d ping-pong,
 * 8 B .. 16 MiB and a 1000 x 1000 submatrix of an LDA = 2000 array),
 * Cdgebs2d/Cdgebr2d, Cdgsum2d and Cdgamx2d (8 B .. 1 MiB), and ScaLAPACK's
 * pdgetrf_ (N = 2000, NB = 64, a 1 x 2 grid or -g PxQ) running on fmpl-blacs.
 *
 *   fmplrun -n 2 bench/blacs [-m MAX] [-M CMAX] [-T TESTS] [-N N] [-r REPS] ...
 *
 * bench/mpi/blacs is the same source (bench/blacs_bench.h) linked against
 * the MPI-BLACS of libscalapack-openmpi; bench/compare -t blacs runs both.
 * With BB_BLAS_GFLOPS set, the local BLAS under ScaLAPACK is charged at that
 * speed on an emulated machine (bench/blas_model.h).
 * Build:
 *   cc -O2 -Iinclude -Ibench bench/blacs.c bench/bench_util.c -Llib -lfmpl_blacs -lfmpl \
 *      -lscalapack-openmpi -llapack -lblas -lgfortran -lm -Wl,-rpath,$PWD/lib -o bench/blacs
 * fmpl-blacs comes first on the link line, so its BLACS (C and Fortran
 * names) replace the MPI-BLACS inside libscalapack-openmpi for pdgetrf_ too;
 * MPI is loaded but never initialised.
 */
#define BB_LIB "FMPL"
#define BB_PROG "blacs"

/* After Cblacs_pinfo: FMPL must be up, with the same rank, or the BLACS
 * linked are not fmpl-blacs (e.g. the MPI-BLACS of libscalapack-openmpi
 * running as an MPI singleton because of the link order). */
int fmpl_rank(void);
int fmpl_size(void);
double fmpl_wtime(void);
/* ... and time with FMPL's clock: on an emulated machine (FMPL_TRANSPORT=
 * tcw) the figures are that machine's (bench_util.h) */
#define BB_AFTER_INIT()                                                       \
    do {                                                                      \
        if (fmpl_rank() != bb_me || fmpl_size() != bb_np) {                   \
            fprintf(stderr, "%s: Cblacs_pinfo says rank %d of %d but FMPL says %d of %d: "  \
                            "not running on fmpl-blacs\n", BB_PROG, bb_me, bb_np,  \
                    fmpl_rank(), fmpl_size());                                \
            exit(2);                                                          \
        }                                                                     \
        bu_set_clock(fmpl_wtime);                                             \
    } while (0)
#include <stddef.h>

/* raw:8 - fmpl_send/fmpl_recv on index 0, which fmpl-blacs leaves to the
 * application (it starts FMPL with one index and runs on its own) */
int fmpl_send(const void *buf, size_t size, int dst, int mai);
int fmpl_recv(void *buf, size_t size, int src, int mai);
#define BB_RAW_SEND(buf, size, peer)                                          \
    do {                                                                      \
        if (fmpl_send(buf, size, peer, 0) != 0)                               \
            bb_die("fmpl_send failed");                                       \
    } while (0)
#define BB_RAW_RECV(buf, size, peer)                                          \
    do {                                                                      \
        if (fmpl_recv(buf, size, peer, 0) != 0)                               \
            bb_die("fmpl_recv failed");                                       \
    } while (0)
#include "blas_model.h"
#include "blacs_bench.h"

int main(int argc, char **argv)
{
    return bb_main(argc, argv);
}
