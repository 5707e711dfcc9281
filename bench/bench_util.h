/*
 * bench_util.h - helpers shared by the FMPL and the MPI benchmarks.
 *
 * Depends on neither FMPL nor MPI, so that both sides of a comparison time,
 * sweep, size their loops and print in exactly the same way.  Only rank 0
 * of a benchmark reports; every rank parses the same argv and so computes
 * the same sweep and the same iteration counts without talking.
 */
#ifndef BENCH_UTIL_H
#define BENCH_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Each size is timed as BU_REPS batches; the reported value is the median
 * batch, which shrugs off a VM's occasional stolen time slice. */
#define BU_REPS 5

/* End marker of a size sweep. */
#define BU_SIZE_END ((size_t)-1)

/* Largest default message: 16 MiB, as in the OSU micro-benchmarks. */
#define BU_DEFAULT_MAX ((size_t)16 << 20)

/* Option sets a benchmark accepts besides -m -i -a -s -h. */
#define BU_OPT_WINDOW 0x1   /* -w WINDOW */

struct bu_opts {
    size_t max_size;     /* -m: last size of the sweep */
    size_t single_size;  /* -s: only this size (BU_SIZE_END: sweep) */
    double iter_scale;   /* -i: multiply every iteration count */
    int    use_alloc;    /* -a: library-allocated buffers */
    int    window;       /* -w: messages in flight (bw only) */
};

/* Parse argv.  Returns 0 to run, 1 after -h, -1 on a bad option (a
 * message is left in *err).  Prints nothing: the caller knows its rank. */
int  bu_parse(int argc, char **argv, int flags, struct bu_opts *o,
              const char **err);
void bu_usage(FILE *f, const char *prog, int flags);

/* Parse "4096", "64K", "16M", "1G" (binary multiples). */
int  bu_parse_size(const char *s, size_t *out);

/* Size sweep 0, 1, 2, 4, ... max_size, or just -s SIZE:
 *   for (size_t s = bu_first_size(&o); s != BU_SIZE_END; s = bu_next_size(&o, s)) */
size_t bu_first_size(const struct bu_opts *o);
size_t bu_next_size(const struct bu_opts *o, size_t s);
/* Largest size the sweep visits (to size buffers once). */
size_t bu_sweep_max(const struct bu_opts *o);

/* Iterations per batch for messages of `size` bytes: `base` for small
 * messages, fewer once base * size exceeds `budget` bytes so that a size
 * costs bounded time, never below 2, then times -i. */
long bu_iters(size_t size, long base, double budget, double scale);

/* Monotonic wall clock in seconds (clock_gettime), or the library's clock
 * once a benchmark has set it: FMPL's benchmarks time with fmpl_wtime(),
 * which on an emulated machine (FMPL_TRANSPORT=tcw) is that machine's
 * time - the figures the benchmark prints are then the emulated ones. */
double bu_now(void);
void   bu_set_clock(double (*fn)(void));

/* kB from a "Name:  N kB" line of a /proc file (/proc/self/status's
 * VmRSS:, smaps_rollup's Pss:), 0 when there is none. */
double bu_proc_kb(const char *file, const char *name);

/* Median, minimum and maximum of n values (v is not modified). */
double bu_median(const double *v, int n);
double bu_min(const double *v, int n);
double bu_max(const double *v, int n);

/* Page-aligned, pre-faulted buffer (never NULL: exits on failure).  A size
 * of 0 still gives a valid pointer.  Free with bu_free. */
void *bu_alloc(size_t size);
void  bu_free(void *p);

/* Fill with a pattern that depends on `seed` and on the offset (so shifted
 * or stale data is caught); bu_verify returns the first bad offset or -1. */
void bu_fill(void *buf, size_t size, unsigned seed);
long bu_verify(const void *buf, size_t size, unsigned seed);
/* Print "<prog>: rank R: data mismatch ..." for a failed bu_verify. */
void bu_report_mismatch(const char *prog, int rank, size_t size, long off,
                        const void *buf, unsigned seed);

/* Output, one format for every benchmark:
 *   # <LIB> <test>
 *   # <nprocs> processes, <buffers> buffers, ...
 *   # <note, if not NULL>
 *   # size  <columns>
 *   <rows>
 * Lines starting with '#' are comments; bench/compare reads the rows. */
void bu_print_header(const char *lib, const char *test, int nprocs,
                     const struct bu_opts *o, const char *buffers,
                     const char *note, const char *columns);
void bu_print_row(size_t size, int ncols, const double *cols);

#endif /* BENCH_UTIL_H */
