/*
 * himeno_kernel.h - the Himeno benchmark's computation, shared by
 * bench/himeno (FMPL) and bench/mpi/himeno (MPI) so that the two differ in
 * nothing but the halo exchange and the gosa reduction.
 *
 * Free of FMPL and MPI, like bench_util.  Header-only (static functions):
 * each benchmark is one translation unit.
 *
 * The problem is RIKEN's himenoBMT (the dynamic-allocation versions
 * himenoBMTxa / himenoBMTxp): a 19-point Jacobi iteration for Poisson's
 * equation on a gx x gy x gz grid of floats (XS 32x32x64, S 64x64x128,
 * M 128x128x256, ...).  Planes 0 and g-1 of every dimension are fixed
 * boundaries; points 1..g-2 are updated.  Initialisation as in the
 * original: a = 1,1,1,1/6, b = 0, c = 1, bnd = 1, wrk1 = wrk2 = 0,
 * omega = 0.8 and p = gi*gi / (gx-1)^2 over the GLOBAL first index gi.
 *
 * Decomposition: i and j are split over a px x py process grid (k is
 * whole), the 2-D decomposition of the hybrid-communication paper.  Rank
 * r has coordinates (r / py, r % py) (row-major, as MPI_Cart_create).  A
 * dimension's g-2 updated points are split as evenly as possible: the
 * first (g-2) % p coordinates get one more.  The local arrays are
 *   (mi + 2) x (mj + 2) x gz      in C order (k fastest),
 * with one shadow plane on each side of i and j; at a physical boundary
 * the shadow is the global boundary plane itself (never exchanged).
 *
 * Difference from the original: gosa, the sum of squared residuals, is
 * accumulated in double (the original sums in float), so that its value
 * hardly depends on how the sum is split over processes.  Every array
 * element is computed with exactly the original float operations, so p is
 * bitwise the same for every decomposition.
 */
#ifndef HIMENO_KERNEL_H
#define HIMENO_KERNEL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef float hk_real;

#define HK_OMEGA 0.8f
/* Himeno's operation count per updated point and iteration. */
#define HK_FLOPS_PER_POINT 34.0

/* ------------------------------------------------------------------ */
/* Sizes                                                                */
/* ------------------------------------------------------------------ */

struct hk_size {
    const char *name;
    int x, y, z;
};

static const struct hk_size hk_sizes[] = {
    { "XS", 32, 32, 64 },   { "S", 64, 64, 128 },     { "M", 128, 128, 256 },
    { "L", 256, 256, 512 }, { "XL", 512, 512, 1024 },
};
#define HK_NSIZES ((int)(sizeof hk_sizes / sizeof hk_sizes[0]))

/* Index in hk_sizes of a name (any case), or -1. */
static int hk_size_index(const char *s)
{
    for (int i = 0; i < HK_NSIZES; i++) {
        const char *n = hk_sizes[i].name;
        size_t l = strlen(n), m = strlen(s);
        if (l != m)
            continue;
        size_t c = 0;
        while (c < l && (s[c] == n[c] || s[c] == n[c] + ('a' - 'A')))
            c++;
        if (c == l)
            return i;
    }
    return -1;
}

/* ------------------------------------------------------------------ */
/* Process grid and decomposition                                       */
/* ------------------------------------------------------------------ */

/*
 * Choose px x py = np.  Given px or py (> 0), the other is np / it;
 * neither: the most nearly square factorisation with px >= py, as
 * MPI_Dims_create (2 -> 2x1, 4 -> 2x2, 6 -> 3x2, 8 -> 4x2).  Splitting i
 * more than j favours the contiguous i faces.  Returns 0, or -1 with a
 * message in *err.
 */
static int hk_dims(int np, int *px, int *py, const char **err)
{
    static char msg[128];
    if (*px > 0 && *py > 0) {
        if (*px * *py != np) {
            snprintf(msg, sizeof msg, "-p %d x -q %d is not the %d processes", *px, *py, np);
            *err = msg;
            return -1;
        }
        return 0;
    }
    if (*px > 0 || *py > 0) {
        int g = *px > 0 ? *px : *py;
        if (np % g) {
            snprintf(msg, sizeof msg, "%d processes cannot form a grid with a side of %d",
                     np, g);
            *err = msg;
            return -1;
        }
        if (*px > 0)
            *py = np / g;
        else
            *px = np / g;
        return 0;
    }
    int q = 1;
    for (int d = 1; d * d <= np; d++)
        if (np % d == 0)
            q = d;
    *py = q;
    *px = np / q;
    return 0;
}

struct hk_dom {
    int gx, gy, gz;     /* global extents (Himeno's mimax, mjmax, mkmax) */
    int px, py;         /* process grid over i and j */
    int ci, cj;         /* this process's coordinates */
    int mi, mj;         /* updated points owned along i and j */
    int gi0, gj0;       /* global i, j of local i = 1, j = 1 */
    int ni, nj, nk;     /* local extents: mi + 2, mj + 2, gz */
    size_t n;           /* ni * nj * nk elements per array */
    int nbr[4];         /* ranks: i lower, i upper, j lower, j upper; -1 at an edge */
};

/* Owned count and first index (1-based) of coordinate c of p along a
 * dimension of g points. */
static void hk_split(int g, int p, int c, int *count, int *first)
{
    int n = g - 2, q = n / p, r = n % p;
    *count = q + (c < r);
    *first = 1 + c * q + (c < r ? c : r);
}

/* Fill *d for `rank` of a px x py grid on a gx x gy x gz problem.
 * Returns 0, or -1 with a message in *err. */
static int hk_decompose(struct hk_dom *d, int gx, int gy, int gz, int px, int py, int rank,
                        const char **err)
{
    static char msg[160];
    if (gx < 3 || gy < 3 || gz < 3) {
        *err = "every grid extent must be at least 3";
        return -1;
    }
    if (gx - 2 < px || gy - 2 < py) {
        snprintf(msg, sizeof msg,
                 "a %d x %d process grid is too large for %d x %d updated points in i x j",
                 px, py, gx - 2, gy - 2);
        *err = msg;
        return -1;
    }
    if ((double)gx * gy * gz > 1e10) {
        *err = "grid too large";
        return -1;
    }
    memset(d, 0, sizeof *d);
    d->gx = gx;
    d->gy = gy;
    d->gz = gz;
    d->px = px;
    d->py = py;
    d->ci = rank / py;
    d->cj = rank % py;
    hk_split(gx, px, d->ci, &d->mi, &d->gi0);
    hk_split(gy, py, d->cj, &d->mj, &d->gj0);
    d->ni = d->mi + 2;
    d->nj = d->mj + 2;
    d->nk = gz;
    d->n = (size_t)d->ni * (size_t)d->nj * (size_t)d->nk;
    d->nbr[0] = d->ci > 0 ? rank - py : -1;
    d->nbr[1] = d->ci < px - 1 ? rank + py : -1;
    d->nbr[2] = d->cj > 0 ? rank - 1 : -1;
    d->nbr[3] = d->cj < py - 1 ? rank + 1 : -1;
    return 0;
}

/* Points updated per iteration by the whole job, and Himeno's flop count. */
static double hk_points(const struct hk_dom *d)
{
    return (double)(d->gx - 2) * (double)(d->gy - 2) * (double)(d->gz - 2);
}

static double hk_flops(const struct hk_dom *d)
{
    return HK_FLOPS_PER_POINT * hk_points(d);
}

/* ------------------------------------------------------------------ */
/* Arrays                                                               */
/* ------------------------------------------------------------------ */

struct hk_arrays {
    hk_real *p;                 /* given by the caller (it may come from a
                                   library allocator) */
    hk_real *a[4], *b[3], *c[3];
    hk_real *bnd, *wrk1, *wrk2;
    hk_real *block;             /* one allocation behind everything but p */
};

/*
 * Allocate everything but p (13 arrays of d->n).  Returns 0 or -1.
 * Array l starts (l + 1) * 256 bytes past a page boundary: the kernel
 * streams through 14 arrays at the same index, and arrays that start at
 * the same offset in a page (separate page-aligned allocations, or Himeno
 * sizes such as 64x64x128 that are a multiple of the page) fall into the
 * same L1 set and evict each other: 2-3 times slower.  p, page-aligned
 * when it comes from bu_alloc, sits at offset 0.
 */
static int hk_alloc(const struct hk_dom *d, struct hk_arrays *A, hk_real *p)
{
    void *blk = NULL;
    memset(A, 0, sizeof *A);
    A->p = p;
    size_t stride = ((d->n * sizeof(hk_real) + 4095) / 4096 * 4096 + 256) / sizeof(hk_real);
    if (posix_memalign(&blk, 4096, 256 + 13 * stride * sizeof(hk_real)))
        return -1;
    A->block = blk;
    hk_real *q = (hk_real *)((char *)blk + 256);
    for (int l = 0; l < 4; l++, q += stride)
        A->a[l] = q;
    for (int l = 0; l < 3; l++, q += stride)
        A->b[l] = q;
    for (int l = 0; l < 3; l++, q += stride)
        A->c[l] = q;
    A->bnd = q;
    q += stride;
    A->wrk1 = q;
    q += stride;
    A->wrk2 = q;
    return 0;
}

static void hk_free(struct hk_arrays *A)
{
    free(A->block);
    A->block = NULL;
}

static void hk_set(hk_real *v, size_t n, hk_real x)
{
    for (size_t e = 0; e < n; e++)
        v[e] = x;
}

/* The original initialisation, on the whole local box (shadows too). */
static void hk_init_p(const struct hk_dom *d, hk_real *p)
{
    const size_t plane = (size_t)d->nj * (size_t)d->nk;
    const hk_real den = (hk_real)((d->gx - 1) * (d->gx - 1));
    for (int i = 0; i < d->ni; i++) {
        int gi = d->gi0 - 1 + i;
        hk_set(p + (size_t)i * plane, plane, (hk_real)(gi * gi) / den);
    }
}

static void hk_init(const struct hk_dom *d, struct hk_arrays *A)
{
    size_t n = d->n;
    hk_set(A->a[0], n, 1.0f);
    hk_set(A->a[1], n, 1.0f);
    hk_set(A->a[2], n, 1.0f);
    hk_set(A->a[3], n, (hk_real)(1.0 / 6.0));
    for (int l = 0; l < 3; l++) {
        hk_set(A->b[l], n, 0.0f);
        hk_set(A->c[l], n, 1.0f);
    }
    hk_set(A->bnd, n, 1.0f);
    hk_set(A->wrk1, n, 0.0f);
    hk_set(A->wrk2, n, 0.0f);
    hk_init_p(d, A->p);
}

/* ------------------------------------------------------------------ */
/* One Jacobi iteration on the local points                             */
/* ------------------------------------------------------------------ */

/*
 * Update the owned points (i 1..mi, j 1..mj, k 1..gz-2): wrk2 from p, then
 * p from wrk2.  Returns this process's share of gosa.  The shadows of p
 * must be current; afterwards they are stale (exchange before the next
 * call).
 */
/* The stencil on the points i0..i1 x j0..j1 (1-based local interior
 * indices) into wrk2; its share of gosa.  Reads p at distance 1. */
static double hk_jacobi_box(const struct hk_dom *d, struct hk_arrays *A, int i0, int i1, int j0,
                            int j1)
{
    const ptrdiff_t si = (ptrdiff_t)d->nj * d->nk, sj = d->nk;
    const int kn = d->nk - 1;
    const hk_real omega = HK_OMEGA;
    hk_real *restrict p = A->p;
    const hk_real *restrict a0 = A->a[0], *restrict a1 = A->a[1];
    const hk_real *restrict a2 = A->a[2], *restrict a3 = A->a[3];
    const hk_real *restrict b0 = A->b[0], *restrict b1 = A->b[1];
    const hk_real *restrict b2 = A->b[2];
    const hk_real *restrict c0 = A->c[0], *restrict c1 = A->c[1];
    const hk_real *restrict c2 = A->c[2];
    const hk_real *restrict bnd = A->bnd, *restrict wrk1 = A->wrk1;
    hk_real *restrict wrk2 = A->wrk2;
    double gosa = 0.0;

    for (int i = i0; i <= i1; i++)
        for (int j = j0; j <= j1; j++) {
            const ptrdiff_t row = i * si + j * sj;
            for (int k = 1; k < kn; k++) {
                const ptrdiff_t x = row + k;
                hk_real s0 = a0[x] * p[x + si]
                           + a1[x] * p[x + sj]
                           + a2[x] * p[x + 1]
                           + b0[x] * (p[x + si + sj] - p[x + si - sj]
                                      - p[x - si + sj] + p[x - si - sj])
                           + b1[x] * (p[x + sj + 1] - p[x - sj + 1]
                                      - p[x + sj - 1] + p[x - sj - 1])
                           + b2[x] * (p[x + si + 1] - p[x - si + 1]
                                      - p[x + si - 1] + p[x - si - 1])
                           + c0[x] * p[x - si]
                           + c1[x] * p[x - sj]
                           + c2[x] * p[x - 1]
                           + wrk1[x];
                hk_real ss = (s0 * a3[x] - p[x]) * bnd[x];
                gosa += (double)ss * (double)ss;
                wrk2[x] = p[x] + omega * ss;
            }
        }
    return gosa;
}

/* The new values (wrk2) into p, every interior point. */
static void hk_copy_back(const struct hk_dom *d, struct hk_arrays *A)
{
    const ptrdiff_t si = (ptrdiff_t)d->nj * d->nk, sj = d->nk;
    const int kn = d->nk - 1;
    for (int i = 1; i <= d->mi; i++)
        for (int j = 1; j <= d->mj; j++) {
            const ptrdiff_t row = i * si + j * sj;
            memcpy(A->p + row + 1, A->wrk2 + row + 1, (size_t)(kn - 1) * sizeof(hk_real));
        }
}

/* One Himeno iteration over the whole interior; gosa of this process. */
static double hk_jacobi(const struct hk_dom *d, struct hk_arrays *A)
{
    double gosa = hk_jacobi_box(d, A, 1, d->mi, 1, d->mj);
    hk_copy_back(d, A);
    return gosa;
}

/* The rim: the points next to a shadow plane (i = 1, mi; j = 1, mj), the
 * ones an overlapped iteration computes after the exchange. */
static inline double hk_jacobi_rim(const struct hk_dom *d, struct hk_arrays *A)
{
    double gosa = hk_jacobi_box(d, A, 1, 1, 1, d->mj);
    if (d->mi > 1)
        gosa += hk_jacobi_box(d, A, d->mi, d->mi, 1, d->mj);
    if (d->mi > 2) {
        gosa += hk_jacobi_box(d, A, 2, d->mi - 1, 1, 1);
        if (d->mj > 1)
            gosa += hk_jacobi_box(d, A, 2, d->mi - 1, d->mj, d->mj);
    }
    return gosa;
}

/* ------------------------------------------------------------------ */
/* Halo check                                                           */
/* ------------------------------------------------------------------ */

/* A value exact in a float (23 bits) that differs between neighbours in
 * every direction, so a shifted or stale face is caught. */
static hk_real hk_pattern(int gi, int gj, int k)
{
    uint32_t h = (uint32_t)gi * 1000003u + (uint32_t)gj * 7919u + (uint32_t)k * 131u;
    return (hk_real)(h & 0x7fffffu);
}

/* Owned points get the pattern, everything else -1. */
static void hk_fill_pattern(const struct hk_dom *d, hk_real *p)
{
    for (int i = 0; i < d->ni; i++)
        for (int j = 0; j < d->nj; j++) {
            hk_real *row = p + ((size_t)i * d->nj + j) * d->nk;
            int own = i >= 1 && i <= d->mi && j >= 1 && j <= d->mj;
            for (int k = 0; k < d->nk; k++)
                row[k] = own ? hk_pattern(d->gi0 - 1 + i, d->gj0 - 1 + j, k) : -1.0f;
        }
}

/*
 * After a halo exchange of a hk_fill_pattern'ed p: every point of the
 * local box that is a global interior point in i and j (so faces, edges
 * and corners alike) must hold the pattern.  Returns 0, or -1 with the
 * first bad point described in msg.
 */
static int hk_check_pattern(const struct hk_dom *d, const hk_real *p, char *msg, size_t len)
{
    for (int i = 0; i < d->ni; i++) {
        int gi = d->gi0 - 1 + i;
        if (gi < 1 || gi > d->gx - 2)
            continue;
        for (int j = 0; j < d->nj; j++) {
            int gj = d->gj0 - 1 + j;
            if (gj < 1 || gj > d->gy - 2)
                continue;
            const hk_real *row = p + ((size_t)i * d->nj + j) * d->nk;
            for (int k = 0; k < d->nk; k++)
                if (row[k] != hk_pattern(gi, gj, k)) {
                    snprintf(msg, len,
                             "halo check: local (%d,%d,%d) = global (%d,%d,%d) holds %.9g, "
                             "expected %.9g",
                             i, j, k, gi, gj, k, (double)row[k],
                             (double)hk_pattern(gi, gj, k));
                    return -1;
                }
        }
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* Benchmark options (the same for bench/himeno and bench/mpi/himeno)   */
/* ------------------------------------------------------------------ */

#define HK_MAX_RUNS 8

struct hk_opts {
    int nruns;                  /* sizes to measure */
    int x[HK_MAX_RUNS], y[HK_MAX_RUNS], z[HK_MAX_RUNS];
    long iters;                 /* -n: iterations per batch (0: automatic) */
    double iter_scale;          /* -i */
    int px, py;                 /* -p, -q (0: automatic) */
    int use_alloc;              /* -a: p from the library's allocator */
    int overlap;                /* -o: exchange during the inner sweep (FMPL) */
};

static void hk_usage(FILE *f, const char *prog)
{
    fprintf(f,
            "usage: %s [-s SIZE]... [-x NX -y NY -z NZ] [-n ITERS] [-i SCALE]\n"
            "          [-p PX] [-q PY] [-a] [-o] [-h]\n"
            "  -s SIZE    XS (32x32x64), S (64x64x128), M (128x128x256), L, XL;\n"
            "             repeatable (default: XS S M)\n"
            "  -x -y -z   an explicit grid (all three)\n"
            "  -n ITERS   iterations per batch (default: ~2e7 point updates, at most 200)\n"
            "  -i SCALE   multiply the automatic iteration counts (default 1)\n"
            "  -p PX      processes along i; -q PY processes along j (default: near square)\n"
            "  -a         p (the exchanged array) from the library's allocator\n"
            "  -o         overlap: start the halo exchange, sweep the points that need\n"
            "             no shadow, wait, sweep the rim (bench/himeno only)\n"
            "  -h         this help\n"
            "Rows: size = grid points gx*gy*gz, median time per iteration (us), MFLOPS\n"
            "(34 flops per updated point), time per iteration in halo exchange +\n"
            "allreduce on rank 0 (us).\n",
            prog);
}

/* Parse argv (by hand: a launcher may already have run getopt).  Returns
 * 0 to run, 1 after -h, -1 on an error (message in *err). */
static int hk_parse(int argc, char **argv, struct hk_opts *o, const char **err)
{
    static char msg[128];
    int ex[3] = { 0, 0, 0 };
    memset(o, 0, sizeof *o);
    o->iter_scale = 1.0;
    *err = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help"))
            return 1;
        if (!strcmp(a, "-a")) {
            o->use_alloc = 1;
            continue;
        }
        if (!strcmp(a, "-o")) {
            o->overlap = 1;
            continue;
        }
        if (strlen(a) != 2 || a[0] != '-' || !strchr("sxyznipq", a[1])) {
            snprintf(msg, sizeof msg, "unknown option %s", a);
            *err = msg;
            return -1;
        }
        if (i + 1 >= argc) {
            snprintf(msg, sizeof msg, "option %s needs a value", a);
            *err = msg;
            return -1;
        }
        const char *v = argv[++i];
        char *end;
        if (a[1] == 's') {
            int s = hk_size_index(v);
            if (s < 0 || o->nruns >= HK_MAX_RUNS) {
                snprintf(msg, sizeof msg, "bad size %s (XS S M L XL)", v);
                *err = msg;
                return -1;
            }
            o->x[o->nruns] = hk_sizes[s].x;
            o->y[o->nruns] = hk_sizes[s].y;
            o->z[o->nruns] = hk_sizes[s].z;
            o->nruns++;
            continue;
        }
        if (a[1] == 'i') {
            o->iter_scale = strtod(v, &end);
            if (*end || !(o->iter_scale > 0)) {
                snprintf(msg, sizeof msg, "bad iteration scale %s", v);
                *err = msg;
                return -1;
            }
            continue;
        }
        long n = strtol(v, &end, 10);
        if (*end || *v == '\0' || n < 1 || n > 1000000) {
            snprintf(msg, sizeof msg, "bad value %s for %s", v, a);
            *err = msg;
            return -1;
        }
        switch (a[1]) {
        case 'x': ex[0] = (int)n; break;
        case 'y': ex[1] = (int)n; break;
        case 'z': ex[2] = (int)n; break;
        case 'n': o->iters = n; break;
        case 'p': o->px = (int)n; break;
        default:  o->py = (int)n; break;
        }
    }
    if (ex[0] || ex[1] || ex[2]) {
        if (!ex[0] || !ex[1] || !ex[2]) {
            *err = "-x, -y and -z go together";
            return -1;
        }
        if (o->nruns >= HK_MAX_RUNS) {
            *err = "too many sizes";
            return -1;
        }
        o->x[o->nruns] = ex[0];
        o->y[o->nruns] = ex[1];
        o->z[o->nruns] = ex[2];
        o->nruns++;
    }
    if (o->nruns == 0)
        for (int s = 0; s < 3; s++) {
            o->x[s] = hk_sizes[s].x;
            o->y[s] = hk_sizes[s].y;
            o->z[s] = hk_sizes[s].z;
            o->nruns++;
        }
    return 0;
}

/* Iterations per batch: -n, or about 2e7 point updates (at most 200, at
 * least 2), times -i. */
static long hk_batch_iters(const struct hk_opts *o, const struct hk_dom *d)
{
    if (o->iters > 0)
        return o->iters;
    double n = 2e7 / hk_points(d);
    if (n > 200)
        n = 200;
    if (n < 2)
        n = 2;
    n *= o->iter_scale;
    return n < 1 ? 1 : (long)n;
}

#endif /* HIMENO_KERNEL_H */
