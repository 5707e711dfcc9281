/*
 * bench/smpi/himeno - bench/mpi/himeno for SMPI: the same program (it is
 * included whole below), its sweep also charged to the simulated host as
 * Himeno's 34 flops per updated point (smpi_execute_flops), which at the
 * platform's host speed (bench/smpi/platform.sh: 100 Gflop/s) is exactly
 * what examples/himeno -g 100 charges through fmpl_compute on an emulated
 * machine.  Run it with --cfg=smpi/simulate-computation:no, so that the
 * sweep's CPU time on this machine is not charged as well (bench/compare_smpi
 * does): the time per iteration is then a function of the program alone.
 *
 *   smpirun -np N -platform P.xml -hostfile H --cfg=smpi/simulate-computation:no \
 *       bench/smpi/himeno -s S [-n ITERS]
 *
 * Built with mpicc (no SMPI) it is bench/mpi/himeno.
 */
#include <mpi.h>

#include "bench_util.h"

/* the kernel's own sweep, under another name; ours below takes its place */
#define hk_jacobi hk_jacobi_sweep
#include "himeno_kernel.h"
#undef hk_jacobi

static double hk_jacobi(const struct hk_dom *d, struct hk_arrays *A)
{
    double gosa = hk_jacobi_sweep(d, A);
#ifdef SMPI_H
    smpi_execute_flops(HK_FLOPS_PER_POINT * (double)d->mi * (double)d->mj * (double)(d->gz - 2));
#endif
    return gosa;
}

#include "../mpi/himeno.c"
