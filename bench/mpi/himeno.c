/*
 * bench/mpi/himeno - the Himeno benchmark over MPI, the reference for
 * bench/himeno.  Same kernel, decomposition, iteration counts and output
 * (himeno_kernel.h, bench_util); only the halo exchange and the gosa sum
 * differ.
 *
 *   mpirun -n 4 bench/mpi/himeno [-s SIZE]... [-x NX -y NY -z NZ]
 *                                [-n ITERS] [-i SCALE] [-p PX] [-q PY] [-a]
 *
 * The exchange is built like himenoBMTxp's sendp1/sendp2: per dimension
 * two MPI_Irecv and two MPI_Isend (MPI_PROC_NULL at the physical
 * boundaries) and an MPI_Waitall, the faces described by datatypes, one
 * dimension after the other.  Here i goes first (a whole j-k plane: one
 * contiguous block), then j (an i-k slab: ni runs of nk floats at a stride
 * of nj*nk, an MPI_Type_vector that includes the i shadows just received,
 * so the corners, which the diagonal terms of the stencil read, are filled
 * too), the order of fmpl_halo_do.  gosa is summed with MPI_Allreduce
 * every iteration.  Columns: see bench/himeno.c.
 */
#include <mpi.h>
#include <string.h>

#include "bench_util.h"
#include "himeno_kernel.h"

static const char *prog = "mpi/himeno";

/* MPI's default error handler already aborts the job; this covers the
 * case where it was changed to return. */
#define CHECK(call)                                                           \
    do {                                                                      \
        int rc_ = (call);                                                     \
        if (rc_ != MPI_SUCCESS) {                                             \
            fprintf(stderr, "%s: %s failed (%d)\n", prog, #call, rc_);        \
            MPI_Abort(MPI_COMM_WORLD, 2);                                     \
        }                                                                     \
    } while (0)

struct halo {
    hk_real *p;
    int ilo, ihi, jlo, jhi;     /* neighbour ranks or MPI_PROC_NULL */
    int mi, mj;
    size_t si, sj;              /* strides of i and j in elements */
    int iface_count;            /* floats in an i face (a j-k plane) */
    MPI_Datatype jface;         /* an i-k slab: ni x nk at a stride of nj*nk */
};

static void halo_init(struct halo *h, const struct hk_dom *d, hk_real *p)
{
    h->p = p;
    h->ilo = d->nbr[0] < 0 ? MPI_PROC_NULL : d->nbr[0];
    h->ihi = d->nbr[1] < 0 ? MPI_PROC_NULL : d->nbr[1];
    h->jlo = d->nbr[2] < 0 ? MPI_PROC_NULL : d->nbr[2];
    h->jhi = d->nbr[3] < 0 ? MPI_PROC_NULL : d->nbr[3];
    h->mi = d->mi;
    h->mj = d->mj;
    h->sj = (size_t)d->nk;
    h->si = (size_t)d->nj * (size_t)d->nk;
    h->iface_count = d->nj * d->nk;
    CHECK(MPI_Type_vector(d->ni, d->nk, d->nj * d->nk, MPI_FLOAT, &h->jface));
    CHECK(MPI_Type_commit(&h->jface));
}

static void halo_free(struct halo *h)
{
    CHECK(MPI_Type_free(&h->jface));
}

/* Fill every shadow of p (faces, edges, corners) from the neighbours. */
static void halo_do(struct halo *h)
{
    MPI_Request r[4];
    hk_real *p = h->p;

    /* i: planes 1 and mi out, shadow planes 0 and mi+1 in. */
    CHECK(MPI_Irecv(p, h->iface_count, MPI_FLOAT, h->ilo, 1, MPI_COMM_WORLD, &r[0]));
    CHECK(MPI_Irecv(p + (size_t)(h->mi + 1) * h->si, h->iface_count, MPI_FLOAT, h->ihi, 0,
                    MPI_COMM_WORLD, &r[1]));
    CHECK(MPI_Isend(p + h->si, h->iface_count, MPI_FLOAT, h->ilo, 0, MPI_COMM_WORLD, &r[2]));
    CHECK(MPI_Isend(p + (size_t)h->mi * h->si, h->iface_count, MPI_FLOAT, h->ihi, 1,
                    MPI_COMM_WORLD, &r[3]));
    CHECK(MPI_Waitall(4, r, MPI_STATUSES_IGNORE));

    /* j: columns 1 and mj out, shadow columns 0 and mj+1 in, all i. */
    CHECK(MPI_Irecv(p, 1, h->jface, h->jlo, 3, MPI_COMM_WORLD, &r[0]));
    CHECK(MPI_Irecv(p + (size_t)(h->mj + 1) * h->sj, 1, h->jface, h->jhi, 2, MPI_COMM_WORLD,
                    &r[1]));
    CHECK(MPI_Isend(p + h->sj, 1, h->jface, h->jlo, 2, MPI_COMM_WORLD, &r[2]));
    CHECK(MPI_Isend(p + (size_t)h->mj * h->sj, 1, h->jface, h->jhi, 3, MPI_COMM_WORLD, &r[3]));
    CHECK(MPI_Waitall(4, r, MPI_STATUSES_IGNORE));
}

/* n Himeno iterations; returns the global gosa of the last and adds the
 * time spent communicating (halo exchange and allreduce) to *comm. */
static double iterate(long n, const struct hk_dom *d, struct hk_arrays *A, struct halo *h,
                      double *comm)
{
    double gosa = 0.0, tc = 0.0;
    for (long it = 0; it < n; it++) {
        double local = hk_jacobi(d, A);
        double t0 = bu_now();
        halo_do(h);
        CHECK(MPI_Allreduce(&local, &gosa, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
        tc += bu_now() - t0;
    }
    *comm += tc;
    return gosa;
}

__attribute__((noreturn)) static void die_all(int rank, const char *msg)
{
    fprintf(stderr, "%s: rank %d: %s\n", prog, rank, msg);
    MPI_Abort(MPI_COMM_WORLD, 3);
    exit(3);
}

int main(int argc, char **argv)
{
    struct hk_opts o;
    const char *err = NULL;
    int rank, np;
    int pr = hk_parse(argc, argv, &o, &err);

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (pr == 0 && o.overlap) {
        err = "-o (the overlapped exchange) is bench/himeno's only";
        pr = -1;
    }
    if (pr == 0 && hk_dims(np, &o.px, &o.py, &err))
        pr = -1;
    for (int s = 0; pr == 0 && s < o.nruns; s++) {
        struct hk_dom d;
        if (hk_decompose(&d, o.x[s], o.y[s], o.z[s], o.px, o.py, rank, &err))
            pr = -1;
    }
    if (pr != 0) {
        if (rank == 0) {
            if (err)
                fprintf(stderr, "%s: %s\n", prog, err);
            hk_usage(pr > 0 ? stdout : stderr, prog);
        }
        MPI_Finalize();
        return pr > 0 ? 0 : 2;
    }

    if (rank == 0) {
        struct bu_opts bo = { .iter_scale = o.iter_scale };
        char note[200];
        snprintf(note, sizeof note,
                 "%d x %d processes over i x j, float grid, size = grid points, "
                 "34 flops per updated point", o.px, o.py);
        bu_print_header("MPI", "himeno", np, &bo, o.use_alloc ? "MPI_Alloc_mem" : "malloc",
                        note, "time_per_iter_us  mflops  comm_us_per_iter");
    }

    for (int s = 0; s < o.nruns; s++) {
        struct hk_dom d;
        struct hk_arrays A;
        struct halo h;
        hk_real *p = NULL;
        char msg[256];

        hk_decompose(&d, o.x[s], o.y[s], o.z[s], o.px, o.py, rank, &err);
        if (o.use_alloc)
            CHECK(MPI_Alloc_mem((MPI_Aint)(d.n * sizeof(hk_real)), MPI_INFO_NULL, &p));
        else
            p = bu_alloc(d.n * sizeof(hk_real));
        if (hk_alloc(&d, &A, p))
            die_all(rank, "out of memory");
        hk_init(&d, &A);
        halo_init(&h, &d, p);

        /* Untimed: one exchange of a known pattern, checked everywhere, so
         * no timing is reported for an exchange that delivers wrong data. */
        hk_fill_pattern(&d, p);
        halo_do(&h);
        if (hk_check_pattern(&d, p, msg, sizeof msg))
            die_all(rank, msg);
        hk_init_p(&d, p);

        long iters = hk_batch_iters(&o, &d);
        double t[BU_REPS], tc[BU_REPS], gosa, dummy = 0.0;
        gosa = iterate(iters / 10 + 1, &d, &A, &h, &dummy);   /* warm caches and paths */
        for (int r = 0; r < BU_REPS; r++) {
            CHECK(MPI_Barrier(MPI_COMM_WORLD));
            double t0 = bu_now();
            tc[r] = 0.0;
            gosa = iterate(iters, &d, &A, &h, &tc[r]);
            t[r] = (bu_now() - t0) / (double)iters;
            tc[r] /= (double)iters;
        }
        double tm = bu_median(t, BU_REPS), tcm = bu_median(tc, BU_REPS);
        if (rank == 0) {
            double cols[3] = { tm * 1e6, hk_flops(&d) / tm / 1e6, tcm * 1e6 };
            bu_print_row((size_t)d.gx * d.gy * d.gz, 3, cols);
            printf("#   %dx%dx%d: gosa %.17g after %ld iterations\n", d.gx, d.gy, d.gz, gosa,
                   iters / 10 + 1 + BU_REPS * iters);
            fflush(stdout);
        }

        halo_free(&h);
        hk_free(&A);
        if (o.use_alloc)
            MPI_Free_mem(p);
        else
            bu_free(p);
    }
    MPI_Finalize();
    return 0;
}
