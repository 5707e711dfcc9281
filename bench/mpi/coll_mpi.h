/*
 * coll_mpi.h - the MPI side of the collective benchmarks' harness
 * (bench/coll_bench.h), for the twins in bench/mpi/.  Define BENCH_PROG
 * before including this.
 */
#ifndef COLL_MPI_H
#define COLL_MPI_H

#include <mpi.h>
#include <stdio.h>

#include "bench_util.h"

/* MPI's default error handler already aborts the job; this covers the
 * case where it was changed to return. */
#define CHECK(call)                                                           \
    do {                                                                      \
        int rc_ = (call);                                                     \
        if (rc_ != MPI_SUCCESS) {                                             \
            fprintf(stderr, "%s: %s failed (%d)\n", BENCH_PROG, #call, rc_);  \
            MPI_Abort(MPI_COMM_WORLD, 2);                                     \
        }                                                                     \
    } while (0)

#define CB_LIB "MPI"
#define CB_ALLOC_NAME "MPI_Alloc_mem"

static int rank, np;

static void cb_init(int *argc, char ***argv)
{
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
}

static void cb_finalize(void) { MPI_Finalize(); }
static void cb_abort(int code) { MPI_Abort(MPI_COMM_WORLD, code); }
static void cb_barrier(void) { CHECK(MPI_Barrier(MPI_COMM_WORLD)); }
static void cb_send(const void *p, size_t len, int to)
{
    CHECK(MPI_Send(p, (int)len, MPI_BYTE, to, 0, MPI_COMM_WORLD));
}
static void cb_recv(void *p, size_t len, int from)
{
    CHECK(MPI_Recv(p, (int)len, MPI_BYTE, from, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
}

static void *cb_lib_alloc(size_t size)
{
    void *p = NULL;
    CHECK(MPI_Alloc_mem((MPI_Aint)size, MPI_INFO_NULL, &p));
    return p;
}

static void cb_lib_free(void *p) { MPI_Free_mem(p); }

#include "coll_bench.h"

#endif
