/*
 * pdgesv.c - solve a distributed linear system A x = b with ScaLAPACK's
 * PDGESV on a P x Q process grid made through the BLACS C interface.
 *
 *   pdgesv [-n N] [-nb NB] [-p P] [-q Q]
 *
 *   N   order of the system (default 600)
 *   NB  block size of the 2-D block-cyclic distribution (default 32)
 *   P,Q the process grid (default: P x Q = every process, P <= Q, as
 *       square as possible); processes beyond P*Q take no part
 *
 * Build and run on fmpl-blacs (fmpl_blacs before scalapack, so its BLACS
 * replace the MPI-BLACS inside libscalapack-openmpi):
 *   cc -O2 -o examples/pdgesv examples/pdgesv.c -Llib -lfmpl_blacs -lfmpl \
 *      -Wl,-rpath,'$ORIGIN/../lib' -lscalapack-openmpi -llapack -lblas -lgfortran -lm
 *   bin/fmplrun -n 4 examples/pdgesv -n 1000
 * or on Debian's MPI-BLACS:
 *   mpicc -O2 -o pdgesv examples/pdgesv.c -lscalapack-openmpi -llapack -lblas -lgfortran -lm
 *   mpirun -np 4 ./pdgesv
 *
 * A(i, j) is computed from the global indices only, so every grid and
 * block size solves the same system: a pseudo-random part in [-1, 1) plus
 * N at (i, (i + N/2) mod N) -- strictly diagonally dominant after a row
 * permutation, hence well-conditioned, and partial pivoting must swap
 * rows.  The
 * right-hand side is b = A x0 (PDGEMV) with x0(i) = 1 + (i mod 7) / 7.
 * After PDGESV the scaled residual
 *     ||A x - b||_inf / (||A||_inf ||x||_inf N eps)      (PDGEMV, PDLANGE)
 * must be below 10, and the relative error ||x - x0||_inf / ||x0||_inf
 * below 1e-8.  Process {0,0} prints the result and "PASS" or "FAIL"; every
 * process exits with 0 on PASS and 1 on FAIL.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The BLACS C interface (the same in every BLACS). */
void Cblacs_pinfo(int *mypnum, int *nprocs);
void Cblacs_get(int ctxt, int what, int *val);
void Cblacs_gridinit(int *ctxt, const char *order, int nprow, int npcol);
void Cblacs_gridinfo(int ctxt, int *nprow, int *npcol, int *myrow, int *mycol);
void Cblacs_gridexit(int ctxt);
void Cblacs_exit(int notdone);
void Cigsum2d(int ctxt, const char *scope, const char *top, int m, int n, int *a,
              int lda, int rdest, int cdest);
void Cdgamx2d(int ctxt, const char *scope, const char *top, int m, int n, double *a,
              int lda, int *ra, int *ca, int ldia, int rdest, int cdest);

/* ScaLAPACK and PBLAS (Fortran calling convention; the hidden lengths of
 * the character arguments are passed explicitly). */
void descinit_(int *desc, const int *m, const int *n, const int *mb, const int *nb,
               const int *irsrc, const int *icsrc, const int *ictxt, const int *lld,
               int *info);
int numroc_(const int *n, const int *nb, const int *iproc, const int *isrcproc,
            const int *nprocs);
void pdgesv_(const int *n, const int *nrhs, double *a, const int *ia, const int *ja,
             const int *desca, int *ipiv, double *b, const int *ib, const int *jb,
             const int *descb, int *info);
void pdgemv_(const char *trans, const int *m, const int *n, const double *alpha,
             const double *a, const int *ia, const int *ja, const int *desca,
             const double *x, const int *ix, const int *jx, const int *descx,
             const int *incx, const double *beta, double *y, const int *iy,
             const int *jy, const int *descy, const int *incy, size_t trans_len);
double pdlange_(const char *norm, const int *m, const int *n, const double *a,
                const int *ia, const int *ja, const int *desca, double *work,
                size_t norm_len);

/* A pseudo-random number in [-1, 1) from the global indices: Park-Miller
 * steps modulo 2^31 - 1, no product above 2^48 (pdgesv_f.f90 computes the
 * same bits). */
static double urand(long i, long j)
{
    const int64_t m = 2147483647, g = 48271;
    int64_t h = (i + 1) % m;
    h = h * g % m;
    h = (h + j + 1) % m * g % m;
    h = h * g % m;
    h = h * g % m;
    return 2.0 * (double)h / (double)m - 1.0;
}

/* Strictly diagonally dominant after a row permutation: n at
 * (i, (i + n/2) mod n), the rest of a row sums to less than n - 1. */
static double a_elem(long i, long j, long n)
{
    return urand(i, j) + (j == (i + n / 2) % n ? (double)n : 0.0);
}

static double x0_elem(long i)
{
    return 1.0 + (double)(i % 7) / 7.0;
}

/* Global index of local index l (0-based) in a block-cyclic dimension. */
static long global_index(int l, int nb, int myproc, int nprocs)
{
    return ((long)(l / nb) * nprocs + myproc) * nb + l % nb;
}

static int usage(const char *prog, int me)
{
    if (me == 0)
        fprintf(stderr, "usage: %s [-n N] [-nb NB] [-p P] [-q Q]\n", prog);
    return 2;
}

int main(int argc, char **argv)
{
    int n = 600, nb = 32, p = 0, q = 0;
    int me, np;

    Cblacs_pinfo(&me, &np);
    for (int i = 1; i < argc; i++) {
        int *dst = NULL;
        if (strcmp(argv[i], "-n") == 0)
            dst = &n;
        else if (strcmp(argv[i], "-nb") == 0)
            dst = &nb;
        else if (strcmp(argv[i], "-p") == 0)
            dst = &p;
        else if (strcmp(argv[i], "-q") == 0)
            dst = &q;
        if (!dst || i + 1 >= argc) {
            Cblacs_exit(0);
            return usage(argv[0], me);
        }
        *dst = atoi(argv[++i]);
    }
    if (p <= 0 && q <= 0) {
        for (p = (int)sqrt((double)np); p > 1 && np % p; p--)
            ;
        q = np / p;
    } else if (p <= 0) {
        p = np / q;
    } else if (q <= 0) {
        q = np / p;
    }
    if (n < 1 || nb < 1 || p < 1 || q < 1 || (long)p * q > np) {
        if (me == 0)
            fprintf(stderr, "pdgesv: need n, nb >= 1 and a %d x %d grid within %d processes\n",
                    p, q, np);
        Cblacs_exit(0);
        return 2;
    }

    int ctxt, nprow, npcol, myrow, mycol;
    Cblacs_get(0, 0, &ctxt);
    Cblacs_gridinit(&ctxt, "Row-major", p, q);
    Cblacs_gridinfo(ctxt, &nprow, &npcol, &myrow, &mycol);
    if (myrow < 0 || myrow >= nprow || mycol < 0 || mycol >= npcol) {
        Cblacs_exit(0);                 /* not in the grid */
        return 0;
    }

    const int izero = 0, ione = 1;
    int mloc = numroc_(&n, &nb, &myrow, &izero, &nprow);
    int nloc = numroc_(&n, &nb, &mycol, &izero, &npcol);
    int lld = mloc > 1 ? mloc : 1;
    int desca[9], descb[9], info;
    descinit_(desca, &n, &n, &nb, &nb, &izero, &izero, &ctxt, &lld, &info);
    if (info == 0)
        descinit_(descb, &n, &ione, &nb, &nb, &izero, &izero, &ctxt, &lld, &info);
    if (info != 0) {
        fprintf(stderr, "pdgesv: descinit failed, info %d\n", info);
        Cblacs_gridexit(ctxt);
        Cblacs_exit(0);
        return 1;
    }

    size_t asz = (size_t)lld * (nloc > 0 ? nloc : 1);
    double *a = malloc(asz * sizeof *a);
    double *acopy = malloc(asz * sizeof *a);
    double *x0 = calloc((size_t)lld, sizeof *x0);   /* n x 1, column 0 */
    double *b = calloc((size_t)lld, sizeof *b);
    double *r = calloc((size_t)lld, sizeof *r);
    double *work = malloc(((size_t)mloc + nloc + 2 * (size_t)nb + 16) * sizeof *work);
    int *ipiv = malloc(((size_t)mloc + nb) * sizeof *ipiv);
    if (!a || !acopy || !x0 || !b || !r || !work || !ipiv) {
        fprintf(stderr, "pdgesv: out of memory\n");
        Cblacs_gridexit(ctxt);
        Cblacs_exit(0);
        return 1;
    }

    for (int jl = 0; jl < nloc; jl++) {
        long j = global_index(jl, nb, mycol, npcol);
        for (int il = 0; il < mloc; il++)
            a[il + (size_t)jl * lld] = a_elem(global_index(il, nb, myrow, nprow), j, n);
    }
    memcpy(acopy, a, asz * sizeof *a);
    if (mycol == 0)                     /* column 0 of the grid holds b and x */
        for (int il = 0; il < mloc; il++)
            x0[il] = x0_elem(global_index(il, nb, myrow, nprow));

    /* b = A x0, then solve A x = b (x overwrites b) */
    const double one = 1.0, zero = 0.0, mone = -1.0;
    pdgemv_("N", &n, &n, &one, a, &ione, &ione, desca, x0, &ione, &ione, descb, &ione,
            &zero, b, &ione, &ione, descb, &ione, 1);
    memcpy(r, b, (size_t)lld * sizeof *r);
    pdgesv_(&n, &ione, a, &ione, &ione, desca, ipiv, b, &ione, &ione, descb, &info);

    /* r = A x - b; norms */
    pdgemv_("N", &n, &n, &one, acopy, &ione, &ione, desca, b, &ione, &ione, descb, &ione,
            &mone, r, &ione, &ione, descb, &ione, 1);
    double anorm = pdlange_("I", &n, &n, acopy, &ione, &ione, desca, work, 1);
    double xnorm = pdlange_("I", &n, &ione, b, &ione, &ione, descb, work, 1);
    double rnorm = pdlange_("I", &n, &ione, r, &ione, &ione, descb, work, 1);
    double eps = DBL_EPSILON / 2;       /* LAPACK's dlamch('E') */
    double resid = rnorm / (anorm * xnorm * n * eps);

    /* forward error: max |x - x0| over the grid (Cdgamx2d, all get it) */
    double err = 0.0;
    if (mycol == 0)
        for (int il = 0; il < mloc; il++) {
            double d = fabs(b[il] - x0[il]);
            if (d > err)
                err = d;
        }
    Cdgamx2d(ctxt, "All", " ", 1, 1, &err, 1, NULL, NULL, -1, -1, -1);
    err /= 1.0 + 6.0 / 7.0;             /* ||x0||_inf for n >= 7; bound is loose */

    /* every process's verdict, summed (Cigsum2d): all agree on the status */
    int bad = !(info == 0 && resid < 10.0 && err < 1e-8 && isfinite(resid));
    Cigsum2d(ctxt, "All", " ", 1, 1, &bad, 1, -1, -1);
    if (myrow == 0 && mycol == 0) {
        printf("pdgesv: n=%d nb=%d grid %dx%d (%d processes): info %d, "
               "||Ax-b||/(||A|| ||x|| n eps) = %.4g, ||x-x0||/||x0|| = %.3g: %s\n",
               n, nb, nprow, npcol, np, info, resid, err, bad ? "FAIL" : "PASS");
        fflush(stdout);
    }

    free(a);
    free(acopy);
    free(x0);
    free(b);
    free(r);
    free(work);
    free(ipiv);
    Cblacs_gridexit(ctxt);
    Cblacs_exit(0);
    return bad ? 1 : 0;
}
