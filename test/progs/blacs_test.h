/*
 * blacs_test.h - helpers for the BLACS test workers (test/progs/blacs_*.c).
 *
 * The workers use nothing but the C BLACS interface (prototypes below,
 * those of the reference C BLACS, Int = int), so the same source builds
 *   against fmpl-blacs:  cc -Iinclude -Itest/progs blacs_x.c -Llib -lfmpl_blacs -lfmpl
 *                        (run under bin/fmplrun; BT_FMPL is defined unless
 *                        BT_MPI is)
 *   against MPI-BLACS:   mpicc -DBT_MPI -Itest/progs blacs_x.c -lscalapack-openmpi
 *                        (run under mpirun: checks the tests' expectations
 *                        against the reference implementation)
 * A worker exits 0 only when every check held; rank 0 then prints
 * "OK <name>".  A failed check prints
 *   [rank R] NAME: file.c:LINE: FAIL: what, expected vs got
 * on stderr and exits 1.
 *
 * Element types in BLACS order i s d c z; each worker goes through all
 * five with one table of function pointers (bt_types[]).
 */
#ifndef BLACS_TEST_H
#define BLACS_TEST_H

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef BT_MPI
#define BT_FMPL 1
#include "fmpl.h"
#endif

#if defined(__GNUC__)
#define BT_UNUSED __attribute__((unused))
#define BT_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define BT_UNUSED
#define BT_PRINTF(a, b)
#endif

/* ------------------------------------------------------------------ */
/* The C BLACS (reference prototypes; complex as pairs of reals)        */
/* ------------------------------------------------------------------ */
void Cblacs_pinfo(int *mypnum, int *nprocs);
void Cblacs_setup(int *mypnum, int *nprocs);
void Cblacs_get(int ictxt, int what, int *val);
void Cblacs_set(int ictxt, int what, int *val);
void Cblacs_gridinit(int *ictxt, char *order, int nprow, int npcol);
void Cblacs_gridmap(int *ictxt, int *usermap, int ldumap, int nprow, int npcol);
void Cblacs_gridinfo(int ictxt, int *nprow, int *npcol, int *myrow, int *mycol);
int Cblacs_pnum(int ictxt, int prow, int pcol);
void Cblacs_pcoord(int ictxt, int pnum, int *prow, int *pcol);
void Cblacs_barrier(int ictxt, char *scope);
void Cblacs_gridexit(int ictxt);
void Cblacs_exit(int cont);
void Cblacs_abort(int ictxt, int errornum);

#define BT_DECL(p, T)                                                          \
    void C##p##gesd2d(int, int, int, T *, int, int, int);                      \
    void C##p##gerv2d(int, int, int, T *, int, int, int);                      \
    void C##p##trsd2d(int, char *, char *, int, int, T *, int, int, int);      \
    void C##p##trrv2d(int, char *, char *, int, int, T *, int, int, int);      \
    void C##p##gebs2d(int, char *, char *, int, int, T *, int);                \
    void C##p##gebr2d(int, char *, char *, int, int, T *, int, int, int);      \
    void C##p##trbs2d(int, char *, char *, char *, char *, int, int, T *, int); \
    void C##p##trbr2d(int, char *, char *, char *, char *, int, int, T *, int, int, int); \
    void C##p##gsum2d(int, char *, char *, int, int, T *, int, int, int);      \
    void C##p##gamx2d(int, char *, char *, int, int, T *, int, int *, int *, int, int, int); \
    void C##p##gamn2d(int, char *, char *, int, int, T *, int, int *, int *, int, int, int);
BT_DECL(i, int)
BT_DECL(s, float)
BT_DECL(d, double)
BT_DECL(c, float)
BT_DECL(z, double)

/* The same calls on void *, one row per type. */
typedef void (*bt_gesd_f)(int, int, int, void *, int, int, int);
typedef void (*bt_trsd_f)(int, char *, char *, int, int, void *, int, int, int);
typedef void (*bt_gebs_f)(int, char *, char *, int, int, void *, int);
typedef void (*bt_gebr_f)(int, char *, char *, int, int, void *, int, int, int);
typedef void (*bt_trbs_f)(int, char *, char *, char *, char *, int, int, void *, int);
typedef void (*bt_trbr_f)(int, char *, char *, char *, char *, int, int, void *, int, int, int);
typedef void (*bt_gamx_f)(int, char *, char *, int, int, void *, int, int *, int *, int, int,
                          int);
typedef struct bt_type {
    char ch;                     /* 'i' 's' 'd' 'c' 'z' */
    size_t esize;                /* bytes per element */
    int ncomp;                   /* 1 real, 2 complex */
    int isint, isfloat;          /* component int / float (else double) */
    bt_gesd_f gesd2d, gerv2d;
    bt_trsd_f trsd2d, trrv2d;
    bt_gebs_f gebs2d;
    bt_gebr_f gebr2d;
    bt_trbs_f trbs2d;
    bt_trbr_f trbr2d;
    bt_gebr_f gsum2d;            /* same shape as gebr2d: ..., rdest, cdest */
    bt_gamx_f gamx2d, gamn2d;
} bt_type_t;

#define BT_ROW(ch, p, T, nc, ii, ff)                                           \
    { ch, nc * sizeof(T), nc, ii, ff, (bt_gesd_f)C##p##gesd2d, (bt_gesd_f)C##p##gerv2d, \
      (bt_trsd_f)C##p##trsd2d, (bt_trsd_f)C##p##trrv2d, (bt_gebs_f)C##p##gebs2d, \
      (bt_gebr_f)C##p##gebr2d, (bt_trbs_f)C##p##trbs2d, (bt_trbr_f)C##p##trbr2d, \
      (bt_gebr_f)C##p##gsum2d, (bt_gamx_f)C##p##gamx2d, (bt_gamx_f)C##p##gamn2d }

static BT_UNUSED const bt_type_t bt_types[5] = {
    BT_ROW('i', i, int, 1, 1, 0), BT_ROW('s', s, float, 1, 0, 1),
    BT_ROW('d', d, double, 1, 0, 0), BT_ROW('c', c, float, 2, 0, 1),
    BT_ROW('z', z, double, 2, 0, 0),
};

/* the row for 'i'..'z', or NULL */
static BT_UNUSED const bt_type_t *bt_type(char ch)
{
    for (int k = 0; k < 5; k++)
        if (bt_types[k].ch == ch)
            return &bt_types[k];
    return NULL;
}

/* ------------------------------------------------------------------ */
/* Failing                                                              */
/* ------------------------------------------------------------------ */

static const char *bt_name = "blacs";
static int bt_me = -1, bt_np = -1;

static void bt_fail(const char *file, int line, const char *fmt, ...) BT_PRINTF(3, 4);
static void bt_fail(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    char msg[2048];
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fflush(stdout);
    fprintf(stderr, "[rank %d] %s: %s:%d: FAIL: %s\n", bt_me, bt_name, file, line, msg);
    fflush(stderr);
    exit(1);
}

static void bt_failc(const char *file, int line, const char *cond, const char *fmt, ...)
    BT_PRINTF(4, 5);
static void bt_failc(const char *file, int line, const char *cond, const char *fmt, ...)
{
    va_list ap;
    char msg[2048];
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    bt_fail(file, line, "CHECK(%s) %s", cond, msg);
}

/* CHECK(cond, fmt, ...): a format string is required */
#define CHECK(cond, ...)                                                      \
    do {                                                                      \
        if (!(cond))                                                          \
            bt_failc(__FILE__, __LINE__, #cond, __VA_ARGS__);                 \
    } while (0)

/* ------------------------------------------------------------------ */
/* Values                                                               */
/* ------------------------------------------------------------------ */

static inline uint64_t bt_mix(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static inline uint64_t bt_hash(uint64_t a, uint64_t b, uint64_t c)
{
    return bt_mix(a * 0x100000001b3ull ^ bt_mix(b ^ bt_mix(c)));
}

/* Store component value v (an integer-valued number) into component k of
 * element e of type t. */
static inline void bt_setc(const bt_type_t *t, void *base, size_t e, int k, double v)
{
    char *p = (char *)base + e * t->esize;
    if (t->isint)
        ((int *)p)[k] = (int)v;
    else if (t->isfloat)
        ((float *)p)[k] = (float)v;
    else
        ((double *)p)[k] = v;
}

static inline double bt_getc(const bt_type_t *t, const void *base, size_t e, int k)
{
    const char *p = (const char *)base + e * t->esize;
    if (t->isint)
        return ((const int *)p)[k];
    if (t->isfloat)
        return ((const float *)p)[k];
    return ((const double *)p)[k];
}

/* The element a message carries at (i, j), as bytes: exact values, every
 * bit defined by (seed, i, j).  Integers for 'i'; for the reals a value
 * with a fraction (a bitwise comparison then catches conversions). */
static inline void bt_elem(const bt_type_t *t, void *dst, uint64_t seed, int i, int j)
{
    for (int k = 0; k < t->ncomp; k++) {
        uint64_t h = bt_hash(seed, (uint64_t)i << 20 | (uint64_t)j, (uint64_t)k);
        double v = (double)(int64_t)(h % 2000001u) - 1000000.0;
        if (!t->isint)
            v = v / 64.0;            /* exact in float and double */
        bt_setc(t, dst, 0, k, v);
    }
}

/* ------------------------------------------------------------------ */
/* Matrices with guards                                                 */
/* ------------------------------------------------------------------ */

/* The BLACS trapezoid (reference BI_GetMpiTrType): uplo 'G' is the whole
 * m x n matrix; with d = max(0, m - n), e = max(0, n - m), (i, j) is in
 * the upper trapezoid when i <= j + d, in the lower one when i >= j - e;
 * diag 'U' leaves out i == j + d (upper) / i == j - e (lower). */
static inline int bt_in(char uplo, char diag, int m, int n, int i, int j)
{
    int d = m > n ? m - n : 0, e = n > m ? n - m : 0;
    if (uplo == 'G')
        return 1;
    if (uplo == 'U')
        return diag == 'U' ? i < j + d : i <= j + d;
    return diag == 'U' ? i > j - e : i >= j - e;
}

/* A buffer holding an m x n matrix with leading dimension lda, plus
 * BT_GUARD guard elements before and after; every element that is not
 * written on purpose holds the poison byte. */
#define BT_GUARD 7
#define BT_POISON 0xa5

typedef struct bt_mat {
    const bt_type_t *t;
    int m, n, lda;
    size_t nel;                  /* lda * n + 2 * BT_GUARD */
    unsigned char *buf;
    void *a;                     /* buf + BT_GUARD elements */
} bt_mat_t;

static BT_UNUSED void bt_mat_init(bt_mat_t *x, const bt_type_t *t, int m, int n, int lda)
{
    x->t = t;
    x->m = m;
    x->n = n;
    x->lda = lda;
    x->nel = (size_t)lda * (size_t)(n > 0 ? n : 0) + 2 * BT_GUARD;
    x->buf = malloc(x->nel * t->esize);
    CHECK(x->buf != NULL, "malloc(%zu)", x->nel * t->esize);
    memset(x->buf, BT_POISON, x->nel * t->esize);
    x->a = x->buf + BT_GUARD * t->esize;
}

static BT_UNUSED void bt_mat_free(bt_mat_t *x)
{
    free(x->buf);
    x->buf = NULL;
}

static BT_UNUSED void bt_mat_poison(bt_mat_t *x)
{
    memset(x->buf, BT_POISON, x->nel * x->t->esize);
}

/* Fill the trapezoid (uplo, diag) with the message (seed); leave the rest
 * poisoned (a sender's elements outside the trapezoid must not travel). */
static BT_UNUSED void bt_mat_fill(bt_mat_t *x, char uplo, char diag, uint64_t seed)
{
    bt_mat_poison(x);
    for (int j = 0; j < x->n; j++)
        for (int i = 0; i < x->m; i++)
            if (bt_in(uplo, diag, x->m, x->n, i, j))
                bt_elem(x->t, (char *)x->a + ((size_t)j * x->lda + i) * x->t->esize, seed, i,
                        j);
}

/* Check a received matrix: the trapezoid holds the message, every other
 * element (the rest of the rectangle, the rows between m and lda, the
 * guards) is still poison.  `what` describes the case. */
static BT_UNUSED void bt_mat_check(const bt_mat_t *x, char uplo, char diag, uint64_t seed,
                                   const char *file, int line, const char *what)
{
    const bt_type_t *t = x->t;
    unsigned char want[16], pois[16];
    memset(pois, BT_POISON, sizeof pois);
    for (size_t k = 0; k < x->nel; k++) {
        const unsigned char *p = x->buf + k * t->esize;
        long off = (long)k - BT_GUARD;
        int in = 0, i = -1, j = -1;
        if (off >= 0 && off < (long)x->lda * x->n) {
            j = (int)(off / x->lda);
            i = (int)(off % x->lda);
            in = i < x->m && bt_in(uplo, diag, x->m, x->n, i, j);
        }
        if (in) {
            bt_elem(t, want, seed, i, j);
            if (memcmp(p, want, t->esize) != 0) {
                char got[64], exp[64];
                if (t->ncomp == 1) {
                    snprintf(got, sizeof got, "%.9g", bt_getc(t, p, 0, 0));
                    snprintf(exp, sizeof exp, "%.9g", bt_getc(t, want, 0, 0));
                } else {
                    snprintf(got, sizeof got, "(%.9g,%.9g)", bt_getc(t, p, 0, 0),
                             bt_getc(t, p, 0, 1));
                    snprintf(exp, sizeof exp, "(%.9g,%.9g)", bt_getc(t, want, 0, 0),
                             bt_getc(t, want, 0, 1));
                }
                bt_fail(file, line, "%s: type %c %dx%d lda %d uplo %c diag %c: element "
                        "(%d,%d) is %s%s, expected %s", what, t->ch, x->m, x->n, x->lda,
                        uplo, diag, i, j, got,
                        memcmp(p, pois, t->esize) == 0 ? " (never written)" : "", exp);
            }
        } else if (memcmp(p, pois, t->esize) != 0) {
            if (off < 0 || off >= (long)x->lda * x->n)
                bt_fail(file, line, "%s: type %c %dx%d lda %d uplo %c diag %c: guard element "
                        "%ld %s the array was overwritten", what, t->ch, x->m, x->n, x->lda,
                        uplo, diag, off < 0 ? -off : off - (long)x->lda * x->n + 1,
                        off < 0 ? "before" : "after");
            bt_fail(file, line, "%s: type %c %dx%d lda %d uplo %c diag %c: element (%d,%d) "
                    "%s was overwritten", what, t->ch, x->m, x->n, x->lda, uplo, diag, i, j,
                    i >= x->m ? "between the columns (row >= m)" : "outside the trapezoid");
        }
    }
}
#define BT_MAT_CHECK(x, uplo, diag, seed, ...)                                \
    do {                                                                      \
        char bt_what_[512];                                                   \
        snprintf(bt_what_, sizeof bt_what_, __VA_ARGS__);                     \
        bt_mat_check((x), (uplo), (diag), (seed), __FILE__, __LINE__, bt_what_); \
    } while (0)

/* ------------------------------------------------------------------ */
/* Options, start, end                                                  */
/* ------------------------------------------------------------------ */

static BT_UNUSED double bt_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static BT_UNUSED void bt_sleep(double sec)
{
    struct timespec ts;
    ts.tv_sec = (time_t)sec;
    ts.tv_nsec = (long)((sec - (double)ts.tv_sec) * 1e9);
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* Cblacs_pinfo, with checks; stdout line-buffered. */
static BT_UNUSED void bt_start(const char *name)
{
    bt_name = name;
    setvbuf(stdout, NULL, _IOLBF, 0);
    Cblacs_pinfo(&bt_me, &bt_np);
    CHECK(bt_np >= 1 && bt_me >= 0 && bt_me < bt_np, "pinfo gave rank %d of %d", bt_me, bt_np);
}

/* Cblacs_exit(0), "OK <name>" from rank 0, exit 0. */
static BT_UNUSED int bt_finish(void)
{
    int me = bt_me;
    fflush(stdout);
    Cblacs_exit(0);
    if (me == 0)
        printf("OK %s\n", bt_name);
    fflush(stdout);
    return 0;
}

/* Grids for np processes as "RxC" strings: every factorisation, then for
 * np >= 3 one of np - 1 processes (built with gridmap, leaving one out). */
static BT_UNUSED int bt_parse_grid(const char *s, int *r, int *c)
{
    char x;
    return sscanf(s, "%d%c%d", r, &x, c) == 3 && (x == 'x' || x == 'X') && *r > 0 && *c > 0;
}

#endif /* BLACS_TEST_H */
