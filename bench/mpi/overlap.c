/*
 * bench/mpi/overlap - the same over MPI's nonblocking collectives
 * (MPI_Iallreduce of doubles with MPI_SUM, MPI_Ialltoall, MPI_Ibcast,
 * MPI_Iallgather of bytes); the dummy computation spins on MPI_Wtime, as
 * fmpl_compute does off the emulated machines.  Harness and columns:
 * bench/overlap_bench.h.
 *
 *   mpirun -n N bench/mpi/overlap [-t ...] [-s SIZE] [-m MAXSIZE] [-p SLICES]
 */
#define BENCH_PROG "mpi/overlap"
#define OV_LIB "MPI"
#include <mpi.h>

#include "bench_util.h"

#define CHECK(call)                                                           \
    do {                                                                      \
        int rc_ = (call);                                                     \
        if (rc_ != MPI_SUCCESS) {                                             \
            fprintf(stderr, "%s: %s failed (%d)\n", BENCH_PROG, #call, rc_);  \
            MPI_Abort(MPI_COMM_WORLD, 2);                                     \
        }                                                                     \
    } while (0)

typedef MPI_Request ov_req_t;

static void ov_init(int *argc, char ***argv) { MPI_Init(argc, argv); }
static void ov_finalize(void) { MPI_Finalize(); }
static int ov_rank(void)
{
    int r;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}
static int ov_size(void)
{
    int n;
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    return n;
}
static double ov_now(void) { return MPI_Wtime(); }
static void ov_barrier(void) { CHECK(MPI_Barrier(MPI_COMM_WORLD)); }
static void ov_max(double *x)
{
    CHECK(MPI_Allreduce(MPI_IN_PLACE, x, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
}
static void ov_compute(double s)
{
    double end = MPI_Wtime() + s;
    while (MPI_Wtime() < end)
        ;
}
static void ov_test(ov_req_t *r)
{
    int done;
    CHECK(MPI_Test(r, &done, MPI_STATUS_IGNORE));
}
static void ov_wait(ov_req_t *r) { CHECK(MPI_Wait(r, MPI_STATUS_IGNORE)); }
static const char *ov_progress_note(void) { return "the library's own"; }

static void ov_start(int t, char *a, char *b, size_t size, int root, ov_req_t *r)
{
    int n = (int)size;
    switch (t) {
    case 0:
        CHECK(MPI_Iallreduce(MPI_IN_PLACE, a, n / (int)sizeof(double), MPI_DOUBLE, MPI_SUM,
                             MPI_COMM_WORLD, r));
        break;
    case 1:
        CHECK(MPI_Ialltoall(a, n, MPI_BYTE, b, n, MPI_BYTE, MPI_COMM_WORLD, r));
        break;
    case 2:
        CHECK(MPI_Ibcast(a, n, MPI_BYTE, root, MPI_COMM_WORLD, r));
        break;
    default:
        CHECK(MPI_Iallgather(a, n, MPI_BYTE, b, n, MPI_BYTE, MPI_COMM_WORLD, r));
        break;
    }
}

#include "overlap_bench.h"

int main(int argc, char **argv) { return ov_main(argc, argv); }
