/*
 * fft3d.c - a distributed 3-D FFT by slabs and one all-to-all transpose,
 * the pattern FFTW's MPI interface and P3DFFT run on.
 *
 *   fmplrun -n 4 examples/fft3d [-n N] [-i ITERS] [-b]
 *
 *   -n N      the grid is N x N x N complex doubles; N a power of two that
 *             the number of processes divides (default 32)
 *   -i ITERS  timed transforms after the checked one (default 10)
 *   -b        the transpose by fmpl_ialltoall and fmpl_wait instead of
 *             fmpl_alltoall
 *
 * Process r owns the x-slab x in [r*N/p, (r+1)*N/p) of A[x][y][z].  It
 * transforms along z and y (local lines), then one fmpl_alltoall moves
 * block q (its x rows, the y of slab q) to process q, which stores what
 * it gets as B[y][x][z] for its own y-slab and transforms along x.  The
 * result is distributed by y-slabs.
 *
 * Check: every process also computes the whole transform serially (the
 * same radix-2 FFT along z, y, x of the whole grid, itself checked
 * against a direct DFT at a few frequencies) and compares its slab:
 * "fft3d: PASS" with the largest relative error, or "fft3d: FAIL"
 * (exit status 1).  Output (rank 0): grid, processes, error, time per
 * transform and in the transpose (slowest process), "name value" lines.
 */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <fmpl.h>

typedef double complex cplx;

static void check(int rc, const char *what)
{
    if (rc != FMPL_SUCCESS) {
        fprintf(stderr, "fft3d: rank %d: %s: %s\n", fmpl_rank(), what, fmpl_strerror(rc));
        fmpl_abort(2);
    }
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "fft3d: out of memory\n");
        fmpl_abort(2);
    }
    return p;
}

/* in-place radix-2 FFT of n points (a power of two) at stride s */
static void fft1(cplx *a, int n, size_t s)
{
    for (int i = 1, j = 0; i < n; i++) {
        int bit = n >> 1;
        for (; j & bit; bit >>= 1)
            j ^= bit;
        j ^= bit;
        if (i < j) {
            cplx t = a[(size_t)i * s];
            a[(size_t)i * s] = a[(size_t)j * s];
            a[(size_t)j * s] = t;
        }
    }
    for (int len = 2; len <= n; len <<= 1) {
        cplx w = cexp(-2.0 * M_PI * I / len);
        for (int i = 0; i < n; i += len) {
            cplx wk = 1.0;
            for (int k = 0; k < len / 2; k++) {
                cplx u = a[(size_t)(i + k) * s], v = a[(size_t)(i + k + len / 2) * s] * wk;
                a[(size_t)(i + k) * s] = u + v;
                a[(size_t)(i + k + len / 2) * s] = u - v;
                wk *= w;
            }
        }
    }
}

/* the input: a smooth part and a pseudo-random part, so that every
 * frequency is non-zero */
static cplx input(int x, int y, int z, int n)
{
    unsigned h = (unsigned)(x * 73856093) ^ (unsigned)(y * 19349663) ^ (unsigned)(z * 83492791);
    h ^= h >> 13;
    h *= 0x5bd1e995u;
    h ^= h >> 15;
    double r = (double)(h % 2001) / 1000.0 - 1.0;
    return sin(2 * M_PI * x / n) + cos(4 * M_PI * y / n) * I + 0.5 * r + 0.25 * r * I * z / n;
}

/* A[x][y][z] of nx x-rows: the lines along z and along y */
static void fft_zy(cplx *a, int nx, int n)
{
    for (int x = 0; x < nx; x++)
        for (int y = 0; y < n; y++)
            fft1(a + ((size_t)x * n + y) * n, n, 1);
    for (int x = 0; x < nx; x++)
        for (int z = 0; z < n; z++)
            fft1(a + (size_t)x * n * n + z, n, (size_t)n);
}

/* the whole transform, serially: A[x][y][z], every x */
static void fft3_serial(cplx *a, int n)
{
    fft_zy(a, n, n);
    for (int y = 0; y < n; y++)
        for (int z = 0; z < n; z++)
            fft1(a + (size_t)y * n + z, n, (size_t)n * n);
}

/* the serial transform against a direct DFT at a few frequencies */
static double check_serial(const cplx *f, int n)
{
    static const int kk[4][3] = { { 0, 0, 0 }, { 1, 2, 3 }, { 5, 0, 7 }, { 3, 3, 1 } };
    double worst = 0;
    for (int t = 0; t < 4; t++) {
        int kx = kk[t][0] % n, ky = kk[t][1] % n, kz = kk[t][2] % n;
        cplx s = 0;
        for (int x = 0; x < n; x++)
            for (int y = 0; y < n; y++)
                for (int z = 0; z < n; z++)
                    s += input(x, y, z, n) *
                         cexp(-2.0 * M_PI * I * ((double)kx * x + (double)ky * y +
                                                 (double)kz * z) / n);
        cplx got = f[((size_t)kx * n + ky) * n + kz];
        double e = cabs(got - s) / (cabs(s) + 1e-300);
        worst = e > worst ? e : worst;
    }
    return worst;
}

int main(int argc, char **argv)
{
    int n = 32, iters = 10, nonblocking = 0, opt;
    check(fmpl_init(1), "fmpl_init");
    int rank = fmpl_rank(), np = fmpl_size();
    while ((opt = getopt(argc, argv, "n:i:bh")) != -1) {
        switch (opt) {
        case 'n': n = atoi(optarg); break;
        case 'i': iters = atoi(optarg); break;
        case 'b': nonblocking = 1; break;
        default:
            if (rank == 0)
                fprintf(stderr, "usage: fft3d [-n N] [-i ITERS] [-b]\n");
            fmpl_finalize();
            return opt == 'h' ? 0 : 2;
        }
    }
    if (n < 2 || (n & (n - 1)) || n % np || iters < 0) {
        if (rank == 0)
            fprintf(stderr, "fft3d: N (%d) must be a power of two that %d processes divide\n",
                    n, np);
        fmpl_finalize();
        return 2;
    }
    int nx = n / np, ny = n / np;
    size_t slab = (size_t)nx * n * n, blk = (size_t)nx * ny * n;
    cplx *a = xmalloc(slab * sizeof *a), *send = xmalloc(slab * sizeof *a);
    cplx *recv = xmalloc(slab * sizeof *a), *b = xmalloc(slab * sizeof *a);
    double t_all = 0, t_x = 0, err = 0;

    for (int it = 0; it <= iters; it++) {
        for (int x = 0; x < nx; x++)
            for (int y = 0; y < n; y++)
                for (int z = 0; z < n; z++)
                    a[((size_t)x * n + y) * n + z] = input(rank * nx + x, y, z, n);
        check(fmpl_barrier(FMPL_COMM_WORLD), "fmpl_barrier");
        double t0 = fmpl_wtime();
        fft_zy(a, nx, n);
        /* block q: our x rows, the y of slab q, every z */
        for (int q = 0; q < np; q++)
            for (int x = 0; x < nx; x++)
                memcpy(send + (size_t)q * blk + (size_t)x * ny * n,
                       a + ((size_t)x * n + (size_t)q * ny) * n, (size_t)ny * n * sizeof *a);
        double t1 = fmpl_wtime();
        if (nonblocking) {
            fmpl_request_t r;
            check(fmpl_ialltoall(send, blk * sizeof *a, recv, FMPL_COMM_WORLD, &r),
                  "fmpl_ialltoall");
            check(fmpl_wait(&r), "fmpl_wait");
        } else {
            check(fmpl_alltoall(send, blk * sizeof *a, recv, FMPL_COMM_WORLD), "fmpl_alltoall");
        }
        double t2 = fmpl_wtime();
        /* from process s: its x rows (x = s*nx + xl) of our y-slab, into
         * B[y][x][z] */
        for (int s = 0; s < np; s++)
            for (int xl = 0; xl < nx; xl++)
                for (int y = 0; y < ny; y++)
                    memcpy(b + ((size_t)y * n + (size_t)s * nx + xl) * n,
                           recv + (size_t)s * blk + ((size_t)xl * ny + y) * n,
                           (size_t)n * sizeof *b);
        for (int y = 0; y < ny; y++)
            for (int z = 0; z < n; z++)
                fft1(b + (size_t)y * n * n + z, n, (size_t)n);
        double t3 = fmpl_wtime();
        if (it > 0) {
            t_all += t3 - t0;
            t_x += t2 - t1;
        }
        if (it == 0) {
            /* the check: the whole grid serially, our y-slab compared */
            cplx *f = xmalloc((size_t)n * n * n * sizeof *f);
            for (int x = 0; x < n; x++)
                for (int y = 0; y < n; y++)
                    for (int z = 0; z < n; z++)
                        f[((size_t)x * n + y) * n + z] = input(x, y, z, n);
            fft3_serial(f, n);
            double dft = rank == 0 && n <= 32 ? check_serial(f, n) : 0;
            double scale = 0;
            for (size_t i = 0; i < (size_t)n * n * n; i++)
                scale = cabs(f[i]) > scale ? cabs(f[i]) : scale;
            for (int y = 0; y < ny; y++)
                for (int x = 0; x < n; x++)
                    for (int z = 0; z < n; z++) {
                        cplx want = f[((size_t)x * n + rank * ny + y) * n + z];
                        cplx got = b[((size_t)y * n + x) * n + z];
                        double e = cabs(got - want) / scale;
                        err = e > err ? e : err;
                    }
            err = dft > err ? dft : err;
            free(f);
            check(fmpl_allreduce(&err, 1, fmpl_dmax, FMPL_COMM_WORLD, NULL), "fmpl_allreduce");
        }
    }
    double tt[2] = { iters ? t_all / iters : 0, iters ? t_x / iters : 0 };
    check(fmpl_allreduce(tt, 2, fmpl_dmax, FMPL_COMM_WORLD, NULL), "fmpl_allreduce");
    int ok = err < 1e-10;
    if (rank == 0) {
        printf("grid         %d x %d x %d complex doubles\n", n, n, n);
        printf("processes    %d (x-slabs of %d, then y-slabs)\n", np, nx);
        printf("transpose    fmpl_%s, %zu bytes to each process\n",
               nonblocking ? "ialltoall + fmpl_wait" : "alltoall", blk * sizeof *a);
        printf("max_error    %.3g (relative to the largest coefficient)\n", err);
        printf("us_per_fft   %.1f\n", tt[0] * 1e6);
        printf("us_transpose %.1f\n", tt[1] * 1e6);
        printf("fft3d: %s\n", ok ? "PASS" : "FAIL");
    }
    free(a);
    free(send);
    free(recv);
    free(b);
    check(fmpl_finalize(), "fmpl_finalize");
    return ok ? 0 : 1;
}
