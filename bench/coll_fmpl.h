/*
 * coll_fmpl.h - the FMPL side of the collective benchmarks' harness
 * (coll_bench.h).  Define BENCH_PROG before including this.
 */
#ifndef COLL_FMPL_H
#define COLL_FMPL_H

#include <fmpl.h>

#include "bench_util.h"
#include "bench_fmpl.h"

#define CB_LIB "FMPL"
#define CB_ALLOC_NAME "fmpl_alloc_mem"

static int rank, np;

static void cb_init(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    CHECK(fmpl_init(64));
    bench_fmpl_clock();
    rank = fmpl_rank();
    np = fmpl_size();
}

static void cb_finalize(void) { CHECK(fmpl_finalize()); }
static void cb_abort(int code) { fmpl_abort(code); }
static void cb_barrier(void) { CHECK(fmpl_barrier(FMPL_COMM_WORLD)); }
/* point-to-point on index 0 */
static void cb_send(const void *p, size_t len, int to) { CHECK(fmpl_send(p, len, to, 0)); }
static void cb_recv(void *p, size_t len, int from) { CHECK(fmpl_recv(p, len, from, 0)); }

static void *cb_lib_alloc(size_t size)
{
    void *p = fmpl_alloc_mem(size);
    if (!p)
        bench_die("fmpl_alloc_mem", FMPL_ERR_NOMEM);
    return p;
}

static void cb_lib_free(void *p) { CHECK(fmpl_free_mem(p)); }

#include "coll_bench.h"

#endif
