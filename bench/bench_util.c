/*
 * bench_util.c - timing, sweeps, statistics, buffers and output shared by
 * every benchmark (FMPL, MPI and the no-library floor).  No FMPL, no MPI.
 */
#define _GNU_SOURCE
#include "bench_util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int bu_parse_size(const char *s, size_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *s == '-')
        return -1;
    int shift = 0;
    switch (*end) {
    case 'k': case 'K': shift = 10; end++; break;
    case 'm': case 'M': shift = 20; end++; break;
    case 'g': case 'G': shift = 30; end++; break;
    default: break;
    }
    if (*end != '\0' || v > (BU_SIZE_END >> 1) >> shift)
        return -1;
    *out = (size_t)(v << shift);
    return 0;
}

void bu_usage(FILE *f, const char *prog, int flags)
{
    fprintf(f, "usage: %s [-m MAXSIZE] [-s SIZE] [-i SCALE] [-a]%s [-h]\n"
               "  -m MAXSIZE  last size of the sweep 0,1,2,4,... (default 16M;"
               " K/M/G suffixes)\n"
               "  -s SIZE     measure this size only\n"
               "  -i SCALE    multiply the iteration counts (default 1)\n"
               "  -a          use the library's allocator for the buffers\n",
            prog, (flags & BU_OPT_WINDOW) ? " [-w WINDOW]" : "");
    if (flags & BU_OPT_WINDOW)
        fprintf(f, "  -w WINDOW   messages in flight per window (default 64)\n");
    fprintf(f, "  -h          this help\n");
}

int bu_parse(int argc, char **argv, int flags, struct bu_opts *o,
             const char **err)
{
    static char msg[128];

    o->max_size = BU_DEFAULT_MAX;
    o->single_size = BU_SIZE_END;
    o->iter_scale = 1.0;
    o->use_alloc = 0;
    o->window = 64;
    *err = NULL;

    /* getopt is not used: launchers may already have run it on a shared
     * argv, and the option set is tiny. */
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *val = (i + 1 < argc) ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help"))
            return 1;
        if (!strcmp(a, "-a")) {
            o->use_alloc = 1;
            continue;
        }
        if (strcmp(a, "-m") && strcmp(a, "-s") && strcmp(a, "-i") &&
            (strcmp(a, "-w") || !(flags & BU_OPT_WINDOW))) {
            snprintf(msg, sizeof msg, "unknown option %s", a);
            *err = msg;
            return -1;
        }
        if (!val) {
            snprintf(msg, sizeof msg, "option %s needs a value", a);
            *err = msg;
            return -1;
        }
        i++;
        if (a[1] == 'm' || a[1] == 's') {
            size_t v;
            if (bu_parse_size(val, &v)) {
                snprintf(msg, sizeof msg, "bad size %s", val);
                *err = msg;
                return -1;
            }
            if (a[1] == 'm')
                o->max_size = v;
            else
                o->single_size = v;
        } else if (a[1] == 'i') {
            char *end;
            o->iter_scale = strtod(val, &end);
            if (*end || !(o->iter_scale > 0)) {
                snprintf(msg, sizeof msg, "bad iteration scale %s", val);
                *err = msg;
                return -1;
            }
        } else {
            char *end;
            long w = strtol(val, &end, 10);
            if (*end || w < 1 || w > 1048576) {
                snprintf(msg, sizeof msg, "bad window %s (1..1048576)", val);
                *err = msg;
                return -1;
            }
            o->window = (int)w;
        }
    }
    return 0;
}

size_t bu_first_size(const struct bu_opts *o)
{
    return o->single_size != BU_SIZE_END ? o->single_size : 0;
}

size_t bu_next_size(const struct bu_opts *o, size_t s)
{
    if (o->single_size != BU_SIZE_END)
        return BU_SIZE_END;
    s = s ? s * 2 : 1;
    return s <= o->max_size ? s : BU_SIZE_END;
}

size_t bu_sweep_max(const struct bu_opts *o)
{
    size_t m = 0;
    for (size_t s = bu_first_size(o); s != BU_SIZE_END; s = bu_next_size(o, s))
        m = s;
    return m;
}

long bu_iters(size_t size, long base, double budget, double scale)
{
    double n = (double)base;
    if (size > 0 && budget / (double)size < n)
        n = budget / (double)size;
    if (n < 2)
        n = 2;
    n *= scale;
    return n < 1 ? 1 : (long)n;
}

static double (*clock_fn)(void);

void bu_set_clock(double (*fn)(void)) { clock_fn = fn; }

double bu_now(void)
{
    if (clock_fn)
        return clock_fn();
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bu_proc_kb(const char *file, const char *name)
{
    FILE *f = fopen(file, "r");
    char line[256];
    double v = 0;
    size_t n = strlen(name);
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, name, n)) {
            v = atof(line + n);
            break;
        }
    if (f)
        fclose(f);
    return v;
}

double bu_median(const double *v, int n)
{
    if (n <= 0)
        return 0;
    double tmp[n];
    memcpy(tmp, v, sizeof tmp);
    qsort(tmp, (size_t)n, sizeof *tmp, cmp_double);
    return n % 2 ? tmp[n / 2] : (tmp[n / 2 - 1] + tmp[n / 2]) / 2;
}

double bu_min(const double *v, int n)
{
    double m = n > 0 ? v[0] : 0;
    for (int i = 1; i < n; i++)
        if (v[i] < m)
            m = v[i];
    return m;
}

double bu_max(const double *v, int n)
{
    double m = n > 0 ? v[0] : 0;
    for (int i = 1; i < n; i++)
        if (v[i] > m)
            m = v[i];
    return m;
}

void *bu_alloc(size_t size)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t len = size ? (size + page - 1) / page * page : page;
    void *p = NULL;
    if (posix_memalign(&p, page, len)) {
        fprintf(stderr, "bench: out of memory (%zu bytes)\n", size);
        exit(2);
    }
    /* Fault every page in now, not inside the first timed iteration. */
    memset(p, 0, len);
    return p;
}

void bu_free(void *p)
{
    free(p);
}

/* A byte that changes with the offset both within and across 256-byte
 * blocks, so a message delivered at the wrong offset does not verify. */
static inline uint8_t pattern(size_t i, unsigned seed)
{
    return (uint8_t)(seed * 131u + i * 7u + (i >> 8) * 13u + (i >> 16));
}

void bu_fill(void *buf, size_t size, unsigned seed)
{
    uint8_t *b = buf;
    for (size_t i = 0; i < size; i++)
        b[i] = pattern(i, seed);
}

long bu_verify(const void *buf, size_t size, unsigned seed)
{
    const uint8_t *b = buf;
    for (size_t i = 0; i < size; i++)
        if (b[i] != pattern(i, seed))
            return (long)i;
    return -1;
}

void bu_report_mismatch(const char *prog, int rank, size_t size, long off,
                        const void *buf, unsigned seed)
{
    fprintf(stderr, "%s: rank %d: data mismatch in a %zu-byte message at "
                    "byte %ld: got 0x%02x, expected 0x%02x\n",
            prog, rank, size, off, ((const uint8_t *)buf)[off],
            pattern((size_t)off, seed));
}

void bu_print_header(const char *lib, const char *test, int nprocs,
                     const struct bu_opts *o, const char *buffers,
                     const char *note, const char *columns)
{
    printf("# %s %s\n", lib, test);
    printf("# %d processes, %s buffers, iteration scale %g, median of %d "
           "batches, MB = 1e6 bytes\n",
           nprocs, buffers, o->iter_scale, BU_REPS);
    if (note)
        printf("# %s\n", note);
    printf("# size  %s\n", columns);
    fflush(stdout);
}

void bu_print_row(size_t size, int ncols, const double *cols)
{
    printf("%-10zu", size);
    for (int i = 0; i < ncols; i++)
        printf(" %14.3f", cols[i]);
    printf("\n");
    /* Flush per row: a slow sweep shows progress, and a crash keeps the
     * rows already measured. */
    fflush(stdout);
}
