/*
 * blas_model.h - the local BLAS of an emulated machine's node, for
 * bench/blacs: ScaLAPACK's local work charged at the node's speed.
 *
 * On an emulated machine only fmpl_compute moves a rank's clock between
 * FMPL calls (its CPU scale is 0), so a ScaLAPACK run there would model
 * communication alone.  With BB_BLAS_GFLOPS=G set, this file's BLAS
 * routines stand in front of the real ones (the executable's symbols come
 * first for ScaLAPACK and LAPACK too), call them through dlsym(RTLD_NEXT),
 * and charge each call's floating-point operations at G GFLOPS a process
 * through fmpl_compute.  Charged: the level-3 and level-2 routines
 * ScaLAPACK's factorisations run locally (dgemm, dtrsm, dtrmm, dsyrk,
 * dger, dgemv), at their usual operation counts (LAPACK Working Note 41);
 * level 1 (idamax, dswap, dscal, ddot: O(N^2) in all) is not.  The SR8000
 * node's peak is 8 GFLOPS (Tatebe et al. 2002, 5: 8000 MFLOPS a node).
 *
 * bb_blas_seconds() is what has been charged so far.
 */
#ifndef BLAS_MODEL_H
#define BLAS_MODEL_H

#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

int fmpl_compute(double seconds);

static double bb_blas_rate = -1;   /* flops a second, 0: off */
static double bb_blas_charged;

static double bb_blas_seconds(void) { return bb_blas_charged; }

static void bb_blas_charge(double flops)
{
    if (bb_blas_rate < 0) {
        const char *e = getenv("BB_BLAS_GFLOPS");
        bb_blas_rate = e && *e ? atof(e) * 1e9 : 0;
        if (bb_blas_rate < 0)
            bb_blas_rate = 0;
    }
    if (bb_blas_rate > 0 && flops > 0) {
        double s = flops / bb_blas_rate;
        bb_blas_charged += s;
        fmpl_compute(s);
    }
}

static void *bb_blas_real(const char *name)
{
    void *f = dlsym(RTLD_NEXT, name);
    if (!f) {
        fprintf(stderr, "blas_model: no %s after the executable\n", name);
        abort();
    }
    return f;
}

#define BB_REAL(name, type) \
    static type real; \
    if (!real) \
        real = (type)bb_blas_real(#name)

/* Fortran calling convention: every argument by address, then the hidden
 * lengths of the character arguments, passed on unchanged. */
typedef void (*bb_gemm_t)(const char *, const char *, const int *, const int *, const int *,
                          const double *, const double *, const int *, const double *,
                          const int *, const double *, double *, const int *, size_t, size_t);
void dgemm_(const char *ta, const char *tb, const int *m, const int *n, const int *k,
            const double *al, const double *a, const int *lda, const double *b,
            const int *ldb, const double *be, double *c, const int *ldc, size_t la, size_t lb)
{
    BB_REAL(dgemm_, bb_gemm_t);
    real(ta, tb, m, n, k, al, a, lda, b, ldb, be, c, ldc, la, lb);
    bb_blas_charge(2.0 * *m * *n * *k);
}

typedef void (*bb_trsm_t)(const char *, const char *, const char *, const char *, const int *,
                          const int *, const double *, const double *, const int *, double *,
                          const int *, size_t, size_t, size_t, size_t);
/* a triangular m x m (side L) or n x n (side R) by an m x n matrix */
static double bb_tri_flops(const char *side, const int *m, const int *n)
{
    return *side == 'L' || *side == 'l' ? (double)*n * *m * *m : (double)*m * *n * *n;
}

void dtrsm_(const char *s, const char *u, const char *t, const char *d, const int *m,
            const int *n, const double *al, const double *a, const int *lda, double *b,
            const int *ldb, size_t l1, size_t l2, size_t l3, size_t l4)
{
    BB_REAL(dtrsm_, bb_trsm_t);
    real(s, u, t, d, m, n, al, a, lda, b, ldb, l1, l2, l3, l4);
    bb_blas_charge(bb_tri_flops(s, m, n));
}

void dtrmm_(const char *s, const char *u, const char *t, const char *d, const int *m,
            const int *n, const double *al, const double *a, const int *lda, double *b,
            const int *ldb, size_t l1, size_t l2, size_t l3, size_t l4)
{
    BB_REAL(dtrmm_, bb_trsm_t);
    real(s, u, t, d, m, n, al, a, lda, b, ldb, l1, l2, l3, l4);
    bb_blas_charge(bb_tri_flops(s, m, n));
}

typedef void (*bb_syrk_t)(const char *, const char *, const int *, const int *, const double *,
                          const double *, const int *, const double *, double *, const int *,
                          size_t, size_t);
void dsyrk_(const char *u, const char *t, const int *n, const int *k, const double *al,
            const double *a, const int *lda, const double *be, double *c, const int *ldc,
            size_t l1, size_t l2)
{
    BB_REAL(dsyrk_, bb_syrk_t);
    real(u, t, n, k, al, a, lda, be, c, ldc, l1, l2);
    bb_blas_charge((double)*k * *n * (*n + 1));
}

typedef void (*bb_ger_t)(const int *, const int *, const double *, const double *, const int *,
                         const double *, const int *, double *, const int *);
void dger_(const int *m, const int *n, const double *al, const double *x, const int *incx,
           const double *y, const int *incy, double *a, const int *lda)
{
    BB_REAL(dger_, bb_ger_t);
    real(m, n, al, x, incx, y, incy, a, lda);
    bb_blas_charge(2.0 * *m * *n);
}

typedef void (*bb_gemv_t)(const char *, const int *, const int *, const double *,
                          const double *, const int *, const double *, const int *,
                          const double *, double *, const int *, size_t);
void dgemv_(const char *t, const int *m, const int *n, const double *al, const double *a,
            const int *lda, const double *x, const int *incx, const double *be, double *y,
            const int *incy, size_t l1)
{
    BB_REAL(dgemv_, bb_gemv_t);
    real(t, m, n, al, a, lda, x, incx, be, y, incy, l1);
    bb_blas_charge(2.0 * *m * *n);
}

#define BB_BLAS_SECONDS() bb_blas_seconds()

#endif
