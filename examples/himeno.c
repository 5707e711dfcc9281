/*
 * himeno.c - the Himeno benchmark (RIKEN's himenoBMT: a 19-point Jacobi
 * iteration for Poisson's equation) on FMPL, with a 2-D decomposition of
 * the i and j dimensions (k whole) and a persistent halo exchange.
 *
 *   fmplrun -n 4 examples/himeno [SIZE] [-s SIZE] [-x NX -y NY -z NZ]
 *                                [-n ITERS] [-p PX] [-q PY] [-a] [-c] [-o] [-g GFLOPS]
 *
 *   SIZE      XS (32x32x64), S (64x64x128, the default), M (128x128x256),
 *             L (256x256x512), XL (512x512x1024)
 *   -x -y -z  an explicit grid gx x gy x gz instead (all three)
 *   -n ITERS  Jacobi iterations (default 100)
 *   -p PX     processes along i, -q PY along j (default: PX * PY = the
 *             number of processes, as square as possible, PX >= PY)
 *   -a        allocate p, the exchanged array, with fmpl_alloc_mem
 *   -c        first check one halo exchange of a known pattern, corners
 *             included (gosa cannot see the corners: Himeno's b is 0);
 *             exit status 1 if any shadow is wrong
 *   -o        overlap: fmpl_halo_start, the sweep of the points that read
 *             no shadow (in 8 slices, fmpl_halo_test after each), then
 *             fmpl_halo_wait unless a test found it done, the rim
 *   -g GFLOPS a model of each process's processor: every sweep also takes
 *             its 34 flops per updated point at GFLOPS (fmpl_compute).
 *             For an emulated machine whose nodes compute faster than
 *             this one (bench/tca: HA-PACS/TCA's K20X GPUs), run with its
 *             CPU scale 0 so that the sweep's CPU time here is not
 *             charged too; the time per iteration is then deterministic
 *
 * How it works.  The grid has gx x gy x gz points in C order (k fastest);
 * planes 0 and g-1 of each dimension are fixed boundaries.  Process r sits
 * at (r / PY, r % PY) on the PX x PY grid and owns mi x mj x gz points (the
 * g-2 updated points of a dimension are split as evenly as possible).  Its
 * arrays are (mi+2) x (mj+2) x gz: one shadow plane on each side of i and
 * j.  On a side with no neighbour (nbr = -1) the shadow is the global
 * boundary plane, which is never updated nor exchanged.
 *
 * One fmpl_halo_init on p describes the exchange once: interior extent
 * {mi, mj, gz}, shadow {1, 1, 0}, the four neighbours.  fmpl_halo_do then
 * fills every shadow.  The stencil has diagonal terms (p[i+1][j+1][k] ...),
 * so the edge shadows (corners in i-j) are needed too; the default mode
 * exchanges i, then j including the i shadows, which fills them.  The i
 * faces are contiguous (block), the j faces gz-float pieces at a stride
 * (block-stride).
 *
 * Each iteration: the stencil on the owned points (gosa = local sum of
 * squared residuals), p = wrk2, fmpl_halo_do, then fmpl_allreduce of gosa
 * with fmpl_dsum.  gosa is summed in double (the original sums in float)
 * so it hardly depends on the decomposition: every point is computed with
 * the original float operations, and only the order of the gosa sum
 * changes with the number of processes.
 *
 * Output (rank 0), one "name value" per line:
 *   grid, processes, iterations, halo (kind per dimension), halo_check
 *   (with -c), gosa (%.17g), time_s, us_per_iter, mflops (34 flops per
 *   updated point and iteration)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <fmpl.h>

typedef float real;   /* Himeno computes in single precision */

static void check(int rc, const char *what)
{
    if (rc != FMPL_SUCCESS) {
        fprintf(stderr, "himeno: rank %d: %s: %s\n", fmpl_rank(), what, fmpl_strerror(rc));
        fmpl_abort(1);
    }
}

/* ---- problem and decomposition -------------------------------------- */

struct domain {
    int gx, gy, gz;     /* global grid */
    int mi, mj;         /* owned (updated) points along i and j */
    int gi0, gj0;       /* global i, j of local i = 1, j = 1 */
    int ni, nj, nk;     /* local array extents: mi + 2, mj + 2, gz */
    size_t n;           /* elements per local array */
    int nbr[6];         /* i lower, i upper, j lower, j upper, k (none) */
};

/* Points owned by coordinate c of p along a dimension of g points, and
 * the global index of the first: the first (g-2) % p get one more. */
static void split(int g, int p, int c, int *count, int *first)
{
    int n = g - 2, q = n / p, r = n % p;
    *count = q + (c < r);
    *first = 1 + c * q + (c < r ? c : r);
}

/* ---- arrays and the stencil (as in himenoBMTxa) ---------------------- */

struct arrays {
    real *p, *a[4], *b[3], *c[3], *bnd, *wrk1, *wrk2;
};

/* Page-aligned memory, or end the job. */
static void *xmalloc(size_t bytes)
{
    void *v = NULL;
    if (posix_memalign(&v, 4096, bytes)) {
        fprintf(stderr, "himeno: out of memory\n");
        fmpl_abort(1);
    }
    return v;
}

/*
 * a, b, c, bnd, wrk1, wrk2 from one block, array l starting (l + 1) * 256
 * bytes past a page boundary.  The stencil streams through 14 arrays at
 * the same index; arrays that start at the same offset in a page (as
 * separate large mallocs do, and as Himeno's sizes, multiples of the page,
 * make them) map to the same L1 set and evict each other: 2-3 times
 * slower.  p itself is page-aligned (offset 0).
 */
static void *alloc_arrays(const struct domain *d, struct arrays *A)
{
    size_t stride = ((d->n * sizeof(real) + 4095) / 4096 * 4096 + 256) / sizeof(real);
    char *block = xmalloc(256 + 13 * stride * sizeof(real));
    real *q = (real *)(block + 256);
    for (int l = 0; l < 4; l++, q += stride)
        A->a[l] = q;
    for (int l = 0; l < 3; l++, q += stride)
        A->b[l] = q;
    for (int l = 0; l < 3; l++, q += stride)
        A->c[l] = q;
    A->bnd = q;
    A->wrk1 = q + stride;
    A->wrk2 = q + 2 * stride;
    return block;
}

static void set(real *v, size_t n, real x)
{
    for (size_t e = 0; e < n; e++)
        v[e] = x;
}

/* The original initialisation over the whole local box (shadows too):
 * p = gi*gi / (gx-1)^2 with gi the GLOBAL first index. */
static void init_p(const struct domain *d, real *p)
{
    size_t plane = (size_t)d->nj * d->nk;
    for (int i = 0; i < d->ni; i++) {
        int gi = d->gi0 - 1 + i;
        set(p + (size_t)i * plane, plane, (real)(gi * gi) / (real)((d->gx - 1) * (d->gx - 1)));
    }
}

static void init(const struct domain *d, struct arrays *A)
{
    size_t n = d->n;
    for (int l = 0; l < 3; l++) {
        set(A->a[l], n, 1.0f);
        set(A->b[l], n, 0.0f);
        set(A->c[l], n, 1.0f);
    }
    set(A->a[3], n, (real)(1.0 / 6.0));
    set(A->bnd, n, 1.0f);
    set(A->wrk1, n, 0.0f);
    set(A->wrk2, n, 0.0f);
    init_p(d, A->p);
}

/* The Jacobi sweep over the owned points i0..i1 x j0..j1 into wrk2;
 * returns their share of the local gosa.  Reads p at distance 1: a box
 * that touches a shadow plane needs the shadows current. */
static double sweep(const struct domain *d, struct arrays *A, int i0, int i1, int j0, int j1)
{
    const ptrdiff_t si = (ptrdiff_t)d->nj * d->nk, sj = d->nk;
    const int kn = d->nk - 1;
    const real omega = 0.8f;
    real *restrict p = A->p, *restrict wrk2 = A->wrk2;
    const real *restrict a0 = A->a[0], *restrict a1 = A->a[1], *restrict a2 = A->a[2];
    const real *restrict a3 = A->a[3], *restrict b0 = A->b[0], *restrict b1 = A->b[1];
    const real *restrict b2 = A->b[2], *restrict c0 = A->c[0], *restrict c1 = A->c[1];
    const real *restrict c2 = A->c[2], *restrict bnd = A->bnd, *restrict wrk1 = A->wrk1;
    double gosa = 0.0;

    for (int i = i0; i <= i1; i++)
        for (int j = j0; j <= j1; j++) {
            const ptrdiff_t row = i * si + j * sj;
            for (int k = 1; k < kn; k++) {
                const ptrdiff_t x = row + k;
                real s0 = a0[x] * p[x + si]
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
                real ss = (s0 * a3[x] - p[x]) * bnd[x];
                gosa += (double)ss * (double)ss;
                wrk2[x] = p[x] + omega * ss;
            }
        }
    return gosa;
}

/* p = wrk2 on the owned points */
static void copy_back(const struct domain *d, struct arrays *A)
{
    const ptrdiff_t si = (ptrdiff_t)d->nj * d->nk, sj = d->nk;
    for (int i = 1; i <= d->mi; i++)
        for (int j = 1; j <= d->mj; j++) {
            const ptrdiff_t x = i * si + j * sj + 1;
            memcpy(A->p + x, A->wrk2 + x, (size_t)(d->nk - 2) * sizeof(real));
        }
}

/* One Jacobi sweep over the owned points; returns the local gosa.  The
 * shadows of p must be current. */
static double jacobi(const struct domain *d, struct arrays *A)
{
    double gosa = sweep(d, A, 1, d->mi, 1, d->mj);
    copy_back(d, A);
    return gosa;
}

/* The rim: the owned points next to a shadow plane (i = 1, mi; j = 1,
 * mj), which need the exchange's shadows. */
static double rim(const struct domain *d, struct arrays *A)
{
    double gosa = sweep(d, A, 1, 1, 1, d->mj);
    if (d->mi > 1)
        gosa += sweep(d, A, d->mi, d->mi, 1, d->mj);
    if (d->mi > 2) {
        gosa += sweep(d, A, 2, d->mi - 1, 1, 1);
        if (d->mj > 1)
            gosa += sweep(d, A, 2, d->mi - 1, d->mj, d->mj);
    }
    return gosa;
}

/* ---- -c: check the halo exchange itself ----------------------------- */

/* A value exact in a float that differs between neighbouring points in
 * every direction, so a shifted, missing or stale shadow shows. */
static real pattern(int gi, int gj, int k)
{
    uint32_t h = (uint32_t)gi * 1000003u + (uint32_t)gj * 7919u + (uint32_t)k * 131u;
    return (real)(h & 0x7fffffu);
}

/*
 * Himeno's b coefficients are 0, so gosa does not see the corner shadows
 * (the diagonal terms); this check does.  Owned points get the pattern,
 * every shadow -1; after one fmpl_halo_do every point of the local box
 * that is an updated point of the global grid (faces, edges, corners)
 * must hold the pattern.  Returns the number of wrong points here.
 */
static int check_halo(const struct domain *d, real *p, fmpl_halo_t halo)
{
    for (int i = 0; i < d->ni; i++)
        for (int j = 0; j < d->nj; j++) {
            int own = i >= 1 && i <= d->mi && j >= 1 && j <= d->mj;
            real *row = p + ((size_t)i * d->nj + j) * d->nk;
            for (int k = 0; k < d->nk; k++)
                row[k] = own ? pattern(d->gi0 - 1 + i, d->gj0 - 1 + j, k) : -1.0f;
        }
    check(fmpl_halo_do(halo), "fmpl_halo_do");
    int bad = 0;
    for (int i = 0; i < d->ni; i++)
        for (int j = 0; j < d->nj; j++) {
            int gi = d->gi0 - 1 + i, gj = d->gj0 - 1 + j;
            if (gi < 1 || gi > d->gx - 2 || gj < 1 || gj > d->gy - 2)
                continue;   /* a global boundary point: not exchanged */
            const real *row = p + ((size_t)i * d->nj + j) * d->nk;
            for (int k = 0; k < d->nk; k++)
                if (row[k] != pattern(gi, gj, k) && bad++ == 0)
                    fprintf(stderr, "himeno: rank %d: halo check: local (%d,%d,%d), global "
                                    "(%d,%d,%d) holds %.9g, expected %.9g\n",
                            fmpl_rank(), i, j, k, gi, gj, k, (double)row[k],
                            (double)pattern(gi, gj, k));
        }
    init_p(d, p);
    return bad;
}

static const char *kind_name(int k)
{
    switch (k) {
    case FMPL_HALO_NONE:         return "none";
    case FMPL_HALO_BLOCK:        return "block";
    case FMPL_HALO_BLOCK_STRIDE: return "block-stride";
    case FMPL_HALO_STRIDE:       return "stride";
    default:                     return fmpl_error_name(k);
    }
}

static const struct { const char *name; int x, y, z; } sizes[] = {
    { "XS", 32, 32, 64 },   { "S", 64, 64, 128 },     { "M", 128, 128, 256 },
    { "L", 256, 256, 512 }, { "XL", 512, 512, 1024 },
};

static int set_size(const char *s, int g[3])
{
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        if (!strcasecmp(s, sizes[i].name)) {
            g[0] = sizes[i].x;
            g[1] = sizes[i].y;
            g[2] = sizes[i].z;
            return 0;
        }
    return -1;
}

/* -o: the inner sweep's slices, each followed by an fmpl_halo_test */
#define OVERLAP_SLICES 8

static void usage(FILE *f)
{
    fprintf(f, "usage: himeno [XS|S|M|L|XL] [-s SIZE] [-x NX -y NY -z NZ] [-n ITERS]\n"
               "              [-p PX] [-q PY] [-a] [-c] [-o] [-g GFLOPS] [-h]\n");
}

/* Every rank parses the same argv and reaches the same verdict; rank 0
 * says why.  Returns 0 to run, 1 to stop (after -h), 2 on an error. */
static int parse(int argc, char **argv, int g[3], int *iters, int *px, int *py,
                 int *use_alloc, int *check_first, int *overlap, double *gflops, int rank)
{
    int ex[3] = { 0, 0, 0 }, opt;
    char *end;
    set_size("S", g);
    while ((opt = getopt(argc, argv, "s:x:y:z:n:p:q:acog:h")) != -1) {
        long v = 0;
        if (strchr("xyznpq", opt)) {
            v = strtol(optarg, &end, 10);
            if (*end || end == optarg || v < 1 || v > 1000000) {
                if (rank == 0)
                    fprintf(stderr, "himeno: bad value %s for -%c\n", optarg, opt);
                return 2;
            }
        }
        switch (opt) {
        case 's':
            if (set_size(optarg, g)) {
                if (rank == 0)
                    fprintf(stderr, "himeno: unknown size %s\n", optarg);
                return 2;
            }
            break;
        case 'x': ex[0] = (int)v; break;
        case 'y': ex[1] = (int)v; break;
        case 'z': ex[2] = (int)v; break;
        case 'n': *iters = (int)v; break;
        case 'p': *px = (int)v; break;
        case 'q': *py = (int)v; break;
        case 'a': *use_alloc = 1; break;
        case 'c': *check_first = 1; break;
        case 'o': *overlap = 1; break;
        case 'g':
            *gflops = strtod(optarg, &end);
            if (*end || end == optarg || !(*gflops > 0 && *gflops < 1e9)) {
                if (rank == 0)
                    fprintf(stderr, "himeno: bad value %s for -g (GFLOPS above 0)\n", optarg);
                return 2;
            }
            break;
        case 'h':
            if (rank == 0)
                usage(stdout);
            return 1;
        default:
            if (rank == 0)
                usage(stderr);
            return 2;
        }
    }
    if (optind < argc && set_size(argv[optind++], g)) {
        if (rank == 0)
            fprintf(stderr, "himeno: unknown size %s\n", argv[optind - 1]);
        return 2;
    }
    if (optind < argc) {
        if (rank == 0)
            usage(stderr);
        return 2;
    }
    if (ex[0] || ex[1] || ex[2]) {
        if (!ex[0] || !ex[1] || !ex[2]) {
            if (rank == 0)
                fprintf(stderr, "himeno: -x, -y and -z go together\n");
            return 2;
        }
        memcpy(g, ex, sizeof ex);
    }
    if (g[0] < 3 || g[1] < 3 || g[2] < 3) {
        if (rank == 0)
            fprintf(stderr, "himeno: every grid extent must be at least 3\n");
        return 2;
    }
    return 0;
}

/* PX x PY = np: from -p or -q, or as square as possible (PX >= PY). */
static int choose_grid(int np, int *px, int *py, int rank)
{
    if (*px && *py) {
        if (*px * *py == np)
            return 0;
    } else if (*px || *py) {
        int side = *px ? *px : *py;
        if (np % side == 0) {
            *(*px ? py : px) = np / side;
            return 0;
        }
    } else {
        int q = 1;
        for (int d = 1; d * d <= np; d++)
            if (np % d == 0)
                q = d;
        *py = q;
        *px = np / q;
        return 0;
    }
    if (rank == 0)
        fprintf(stderr, "himeno: -p %d -q %d do not make a grid of %d processes\n", *px, *py,
                np);
    return 2;
}

int main(int argc, char **argv)
{
    int g[3], iters = 100, px = 0, py = 0, use_alloc = 0, check_first = 0, overlap = 0;
    double gflops = 0;   /* 0: no model, the sweep takes what it takes */

    int rc = fmpl_init(1);
    if (rc != FMPL_SUCCESS) {
        fprintf(stderr, "himeno: fmpl_init: %s\n", fmpl_strerror(rc));
        return 1;
    }
    int rank = fmpl_rank(), np = fmpl_size();
    int st = parse(argc, argv, g, &iters, &px, &py, &use_alloc, &check_first, &overlap, &gflops,
                   rank);
    if (st == 0)
        st = choose_grid(np, &px, &py, rank);
    if (st == 0 && (g[0] - 2 < px || g[1] - 2 < py)) {
        if (rank == 0)
            fprintf(stderr, "himeno: a %d x %d process grid is too large for %d x %d "
                            "updated points in i x j\n", px, py, g[0] - 2, g[1] - 2);
        st = 2;
    }
    if (st != 0) {
        fmpl_finalize();
        return st == 1 ? 0 : 2;
    }

    /* This process's part of the grid and its neighbours. */
    struct domain d;
    int ci = rank / py, cj = rank % py;
    d.gx = g[0];
    d.gy = g[1];
    d.gz = g[2];
    split(d.gx, px, ci, &d.mi, &d.gi0);
    split(d.gy, py, cj, &d.mj, &d.gj0);
    d.ni = d.mi + 2;
    d.nj = d.mj + 2;
    d.nk = d.gz;
    d.n = (size_t)d.ni * d.nj * d.nk;
    d.nbr[0] = ci > 0 ? rank - py : -1;
    d.nbr[1] = ci < px - 1 ? rank + py : -1;
    d.nbr[2] = cj > 0 ? rank - 1 : -1;
    d.nbr[3] = cj < py - 1 ? rank + 1 : -1;
    d.nbr[4] = d.nbr[5] = -1;

    struct arrays A;
    if (use_alloc) {
        /* Peers write shadows straight into this memory. */
        A.p = fmpl_alloc_mem(d.n * sizeof(real));
        if (!A.p)
            check(FMPL_ERR_NOMEM, "fmpl_alloc_mem");
    } else {
        A.p = xmalloc(d.n * sizeof(real));
    }
    void *block = alloc_arrays(&d, &A);
    init(&d, &A);

    /* The persistent halo exchange of p: described once, done every
     * iteration.  The initial shadows are already right (init covers the
     * whole box with global indices), so the first sweep needs none. */
    int extent[3] = { d.mi, d.mj, d.nk };
    int shadow[3] = { 1, 1, 0 };
    fmpl_halo_t halo;
    check(fmpl_halo_init(A.p, sizeof(real), 3, extent, shadow, d.nbr, 0, FMPL_COMM_WORLD,
                         &halo), "fmpl_halo_init");

    int wrong = 0;
    if (check_first) {
        wrong = check_halo(&d, A.p, halo);
        check(fmpl_allreduce(&wrong, 1, fmpl_isum, FMPL_COMM_WORLD, NULL), "fmpl_allreduce");
    }

    /* the modeled processor's time for this process's sweep */
    double sweep_s = gflops > 0 ? 34.0 * d.mi * (double)d.mj * (d.gz - 2) / (gflops * 1e9) : 0;
    double gosa = 0.0, work;
    check(fmpl_barrier(FMPL_COMM_WORLD), "fmpl_barrier");
    double t0 = fmpl_wtime();
    /* -o: the inner points' share of the modeled sweep */
    double inner = d.mi > 2 && d.mj > 2 ? (d.mi - 2.0) * (d.mj - 2.0) / ((double)d.mi * d.mj) : 0;
    for (int it = 0; it < iters; it++) {
        if (!overlap) {
            gosa = jacobi(&d, &A);
            if (gflops > 0)
                check(fmpl_compute(sweep_s), "fmpl_compute");
            check(fmpl_halo_do(halo), "fmpl_halo_do");
        } else {
            /* exchange first (the shadows are right before the first
             * sweep), the inner points meanwhile, then the rim */
            check(fmpl_halo_start(halo), "fmpl_halo_start");
            /* in slices of rows, a test after each: the faces move only
             * while this process is in an FMPL call (the next dimension's
             * leave when the one before has arrived) */
            gosa = 0;
            int done = 0, rows = d.mi - 2, slices = rows < OVERLAP_SLICES ? rows : OVERLAP_SLICES;
            for (int sl = 0; sl < slices; sl++) {
                int i0 = 2 + rows * sl / slices, i1 = 1 + rows * (sl + 1) / slices;
                gosa += sweep(&d, &A, i0, i1, 2, d.mj - 1);
                if (gflops > 0)
                    check(fmpl_compute(sweep_s * inner * (i1 - i0 + 1) / rows), "fmpl_compute");
                if (!done)
                    check(fmpl_halo_test(halo, &done), "fmpl_halo_test");
            }
            if (!done)
                check(fmpl_halo_wait(halo), "fmpl_halo_wait");
            gosa += rim(&d, &A);
            if (gflops > 0)
                check(fmpl_compute(sweep_s * (1 - inner)), "fmpl_compute");
            copy_back(&d, &A);
        }
        check(fmpl_allreduce(&gosa, 1, fmpl_dsum, FMPL_COMM_WORLD, &work), "fmpl_allreduce");
    }
    double t = fmpl_wtime() - t0;

    if (rank == 0) {
        double flops = 34.0 * (d.gx - 2) * (double)(d.gy - 2) * (d.gz - 2) * iters;
        printf("grid        %d x %d x %d\n", d.gx, d.gy, d.gz);
        printf("processes   %d = %d x %d (i x j)\n", np, px, py);
        printf("iterations  %d\n", iters);
        printf("halo        i %s, j %s, k %s\n", kind_name(fmpl_halo_kind(halo, 0)),
               kind_name(fmpl_halo_kind(halo, 1)), kind_name(fmpl_halo_kind(halo, 2)));
        if (gflops > 0)
            printf("model_gflops %g per process (fmpl_compute)\n", gflops);
        if (check_first)
            printf("halo_check  %s (%d wrong points)\n", wrong ? "FAILED" : "ok", wrong);
        printf("gosa        %.17g\n", gosa);
        printf("time_s      %.6f\n", t);
        printf("us_per_iter %.2f\n", iters ? t / iters * 1e6 : 0.0);
        printf("mflops      %.2f\n", t > 0 ? flops / t / 1e6 : 0.0);
    }

    check(fmpl_halo_free(&halo), "fmpl_halo_free");
    if (use_alloc)
        check(fmpl_free_mem(A.p), "fmpl_free_mem");
    else
        free(A.p);
    free(block);
    check(fmpl_finalize(), "fmpl_finalize");
    return wrong ? 1 : 0;
}
