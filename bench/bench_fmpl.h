/*
 * bench_fmpl.h - error handling shared by the FMPL benchmarks (bench_util
 * stays free of FMPL and MPI, so the MPI twins can share it).
 * Define BENCH_PROG, the program name, before including this.
 */
#ifndef BENCH_FMPL_H
#define BENCH_FMPL_H

#include <stdio.h>

#include "fmpl.h"
#include "bench_util.h"

static void bench_die(const char *what, int rc)
{
    fprintf(stderr, "%s: rank %d: %s: %s\n", BENCH_PROG, fmpl_rank(), what,
            fmpl_strerror(rc));
    fmpl_abort(2);
}

/* Checked on the fast path too: a compare and a never-taken branch. */
#define CHECK(call)                                                           \
    do {                                                                      \
        int rc_ = (call);                                                     \
        if (rc_ != FMPL_SUCCESS)                                              \
            bench_die(#call, rc_);                                            \
    } while (0)

/* Time with fmpl_wtime(): this machine's clock, or the emulated machine's
 * (bench_util.h).  Call after fmpl_init. */
static inline void bench_fmpl_clock(void) { bu_set_clock(fmpl_wtime); }

#endif
