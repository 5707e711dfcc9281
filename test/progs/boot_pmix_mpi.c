/*
 * boot_pmix_mpi.c - the PMIx bootstrap next to Open MPI in one process.
 *
 * Build with mpicc (needs only src/base/boot_pmix.c and libpmix besides MPI):
 *   mpicc -std=gnu11 -Wall -Wextra -DFMPL_HAVE_PMIX $(pkg-config --cflags pmix) \
 *      -Iinclude -Isrc test/progs/boot_pmix_mpi.c src/base/boot_pmix.c \
 *      $(pkg-config --libs pmix)
 * The Makefile's generic rule for test/progs compiles every C file there
 * with plain cc, which does not find <mpi.h>; this file then builds a stub that
 * exits 77 ("skipped") so that `make tests` is not broken by it.
 *
 * Usage: mpirun -n N boot_pmix_mpi [--boot-first] [--mpi-finalize-first]
 *   default               MPI_Init, open the boot, exchange, close the boot,
 *                         use MPI, MPI_Finalize
 *   --boot-first          open the boot before MPI_Init
 *   --mpi-finalize-first  MPI_Finalize while the boot is open, then use the
 *                         boot once more (fence, get) and close it
 * Checks that the boot's rank/size equal MPI's, that the modex carries the
 * same values MPI_Allgather does, and that each library still works after
 * the other let go of PMIx.  Exit 0 on success, 1 on failure, 77 skipped.
 */
#if defined(__has_include)
#if __has_include(<mpi.h>)
#define HAVE_MPI_H 1
#endif
#endif

#include <stdio.h>

#ifndef HAVE_MPI_H

int main(void)
{
    printf("boot_pmix_mpi: built without <mpi.h> (use mpicc); skipped\n");
    return 77;
}

#else

#include "base/boot.h"
#include "fmpl.h"

#include <mpi.h>
#include <pmix.h>
#include <stdlib.h>
#include <string.h>

static int g_fail;
static int g_rank = -1;

#define CHECK(cond, ...)                                                   \
    do {                                                                   \
        if (!(cond)) {                                                     \
            fprintf(stderr, "boot_pmix_mpi[%d]: FAIL: ", g_rank);          \
            fprintf(stderr, __VA_ARGS__);                                  \
            fputc('\n', stderr);                                           \
            g_fail = 1;                                                    \
        }                                                                  \
    } while (0)

static unsigned long long value_of(int rank)
{
    return 0x9e3779b97f4a7c15ULL * (unsigned long long)(rank + 1);
}

/* Put our value under `key`, fence, and compare every rank's value with
 * `expect` (MPI's view, or value_of when MPI is gone). */
static void exchange(fmpl_boot_t *b, const char *key, const unsigned long long *expect)
{
    unsigned long long mine = value_of(b->rank), got;
    size_t len;
    int rc;

    rc = b->ops->put(b, key, &mine, sizeof mine);
    CHECK(rc == FMPL_SUCCESS, "put %s: %d", key, rc);
    rc = b->ops->fence(b);
    CHECK(rc == FMPL_SUCCESS, "fence (%s): %d", key, rc);
    for (int r = 0; r < b->size; r++) {
        got = 0;
        len = sizeof got;
        rc = b->ops->get(b, r, key, &got, &len);
        CHECK(rc == FMPL_SUCCESS && len == sizeof got && got == expect[r],
              "get %s of rank %d: rc %d len %zu value %llx expected %llx",
              key, r, rc, len, got, expect[r]);
    }
}

/* MPI still works: a reduction and a ring exchange. */
static void use_mpi(int rank, int size, const char *when)
{
    int sum = 0, left = -1, right = (rank + 1) % size;
    int from = (rank + size - 1) % size;

    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(sum == size * (size - 1) / 2, "MPI_Allreduce %s: %d", when, sum);
    MPI_Sendrecv(&rank, 1, MPI_INT, right, 7, &left, 1, MPI_INT, from, 7,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK(left == from, "MPI_Sendrecv %s: got %d from %d", when, left, from);
}

static int open_boot(fmpl_boot_t *b)
{
    int rc;

    memset(b, 0, sizeof *b);
    rc = fmpl_boot_pmix_open(b);
    if (rc != FMPL_SUCCESS) {
        fprintf(stderr, "boot_pmix_mpi: FAIL: fmpl_boot_pmix_open: %d\n", rc);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    fmpl_boot_t b;
    int boot_first = 0, mpi_fin_first = 0, rank, size;
    unsigned long long mine, *all;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--boot-first") == 0)
            boot_first = 1;
        else if (strcmp(argv[i], "--mpi-finalize-first") == 0)
            mpi_fin_first = 1;
        else {
            fprintf(stderr, "usage: %s [--boot-first] [--mpi-finalize-first]\n", argv[0]);
            return 2;
        }
    }

    if (boot_first && open_boot(&b) != 0)
        return 1;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    g_rank = rank;
    if (!boot_first && open_boot(&b) != 0)
        MPI_Abort(MPI_COMM_WORLD, 1);

    CHECK(b.rank == rank, "boot rank %d, MPI rank %d", b.rank, rank);
    CHECK(b.size == size, "boot size %d, MPI size %d", b.size, size);
    if (b.rank != rank || b.size != size)
        MPI_Abort(MPI_COMM_WORLD, 1);

    all = calloc((size_t)size, sizeof *all);
    if (all == NULL)
        MPI_Abort(MPI_COMM_WORLD, 1);
    mine = value_of(rank);
    MPI_Allgather(&mine, 1, MPI_UNSIGNED_LONG_LONG, all, 1, MPI_UNSIGNED_LONG_LONG,
                  MPI_COMM_WORLD);

    exchange(&b, "mpi1", all);
    use_mpi(rank, size, "with the boot open");

    /* PMIx_Init/PMIx_Finalize are reference counted: whichever library
     * lets go first must leave PMIx initialised for the other, and the
     * second must really finalise it. */
    if (!mpi_fin_first) {
        b.ops->close(&b);
        CHECK(PMIx_Initialized(), "PMIx finalised under MPI by the boot's close");
        use_mpi(rank, size, "after the boot closed");
        MPI_Finalize();
    } else {
        MPI_Finalize();
        CHECK(PMIx_Initialized(), "PMIx finalised under the boot by MPI_Finalize");
        exchange(&b, "mpi2", all);
        b.ops->close(&b);
    }
    CHECK(!PMIx_Initialized(), "PMIx still initialised after both let go");
    free(all);

    if (!g_fail && rank == 0)
        printf("boot_pmix_mpi: ok: size %d%s%s\n", size,
               boot_first ? " boot-first" : " mpi-first",
               mpi_fin_first ? " mpi-finalize-first" : " boot-close-first");
    return g_fail ? 1 : 0;
}

#endif /* HAVE_MPI_H */
