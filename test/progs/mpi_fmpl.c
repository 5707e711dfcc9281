/*
 * mpi_fmpl - MPI and FMPL side by side in one process, under mpirun:
 * FMPL bootstraps through the PMIx server of Open MPI's mpirun, its ranks
 * equal MPI's, and traffic of both libraries interleaves.  Each rank sends
 * a ring of messages (8 B .. 1 MiB) with FMPL, checks them, and MPI sums
 * the checks.  Exits 0 only if every rank agrees.  Built with mpicc.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmpl.h"

static void fail(const char *what, int rc)
{
    fprintf(stderr, "mpi_fmpl: %s: %s\n", what, fmpl_strerror(rc));
    MPI_Abort(MPI_COMM_WORLD, 1);
}

int main(int argc, char **argv)
{
    int mrank, msize, rc, bad = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &mrank);
    MPI_Comm_size(MPI_COMM_WORLD, &msize);
    if ((rc = fmpl_init(8)) != FMPL_SUCCESS)
        fail("fmpl_init", rc);
    if (fmpl_rank() != mrank || fmpl_size() != msize) {
        fprintf(stderr, "mpi_fmpl: FMPL rank/size %d/%d, MPI %d/%d\n", fmpl_rank(),
                fmpl_size(), mrank, msize);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int right = (mrank + 1) % msize, left = (mrank + msize - 1) % msize;
    size_t max = 1 << 20;
    unsigned char *s = malloc(max), *r = malloc(max);
    for (size_t n = 8; n <= max; n *= 8) {
        for (size_t i = 0; i < n; i++)
            s[i] = (unsigned char)(i * 31 + (size_t)mrank + n);
        fmpl_request_t req;
        if ((rc = fmpl_irecv(r, n, left, 1, &req)) != FMPL_SUCCESS)
            fail("fmpl_irecv", rc);
        MPI_Barrier(MPI_COMM_WORLD);            /* MPI traffic in between */
        if ((rc = fmpl_send(s, n, right, 1)) != FMPL_SUCCESS)
            fail("fmpl_send", rc);
        if ((rc = fmpl_wait_irecv(&req)) != FMPL_SUCCESS)
            fail("fmpl_wait_irecv", rc);
        for (size_t i = 0; i < n; i++)
            bad += r[i] != (unsigned char)(i * 31 + (size_t)left + n);
    }
    int total = 0;
    MPI_Allreduce(&bad, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if ((rc = fmpl_finalize()) != FMPL_SUCCESS)
        fail("fmpl_finalize", rc);
    if (mrank == 0)
        printf("%s mpi_fmpl: %d ranks, %d bad bytes\n", total ? "FAIL" : "OK", msize, total);
    free(s);
    free(r);
    MPI_Finalize();
    return total != 0;
}
