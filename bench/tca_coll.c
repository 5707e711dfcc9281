/*
 * bench/tca_coll - the hybrid paper's collective measurements (Odajima et
 * al. 2015, 6.2-6.3) on emulated HA-PACS/TCA: run with FMPL_TRANSPORT=tca,
 * once for each way bench/tca compares (the paper's hybrid, its
 * MVAPICH2-GDR baseline, FMPL's own).
 *
 *   fmplrun -n N bench/tca_coll [-m MAXSIZE] [-r REPS]
 *
 * As the paper: the broadcast from rank 0 (Figs. 12-13), the allgather
 * from 16 bytes a member (Figs. 14-15), each size REPS times (default 9)
 * after a barrier, timed from rank 0's start to the last member's end
 * (the emulated clock is one clock), the median over the
 * repetitions.  Run it on an emulated machine: elsewhere the members'
 * clocks do not compare.  Prints
 *   bcast SIZE US
 *   allgather SIZE US       (SIZE: bytes a member contributes)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#define BENCH_PROG "tca_coll"
#include "bench_fmpl.h"

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* One call of `what` on `size` bytes: from the moment rank 0 (the
 * broadcast's root) starts to the moment the last member has the result,
 * us.  The emulated clock is one clock for the whole machine, so the
 * members' readings compare. */
static double once(int what, void *a, void *b, size_t size)
{
    CHECK(fmpl_barrier(FMPL_COMM_WORLD));
    double t[2];
    t[0] = fmpl_wtime();
    if (what == 0)
        CHECK(fmpl_bcast(a, size, 0, FMPL_COMM_WORLD));
    else
        CHECK(fmpl_allgather(a, size, b, FMPL_COMM_WORLD));
    t[1] = fmpl_wtime();
    if (fmpl_rank() != 0)
        t[0] = 0;
    CHECK(fmpl_allreduce(t, 2, fmpl_dmax, FMPL_COMM_WORLD, NULL));
    return (t[1] - t[0]) * 1e6;
}

int main(int argc, char **argv)
{
    size_t max = (size_t)4 << 20;
    int reps = 9;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-m") && i + 1 < argc) {
            if (bu_parse_size(argv[++i], &max) != 0) {
                fprintf(stderr, "tca_coll: -m %s: not a size\n", argv[i]);
                return 2;
            }
        } else if (!strcmp(argv[i], "-r") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: fmplrun -n N bench/tca_coll [-m MAXSIZE] [-r REPS]\n");
            return 2;
        }
    }
    if (reps < 1 || reps > 99 || max < 16) {
        fprintf(stderr, "tca_coll: -r 1..99, -m at least 16\n");
        return 2;
    }
    CHECK(fmpl_init(16));
    int np = fmpl_size();
    uint8_t *a = malloc(max), *b = malloc(max * (size_t)np);
    if (!a || !b)
        bench_die("malloc", FMPL_ERR_NOMEM);
    memset(a, fmpl_rank() + 1, max);
    double t[99];
    static const char *const name[2] = {"bcast", "allgather"};
    for (int what = 0; what < 2; what++) {
        /* the allgather's result is np times the block: up to max in all */
        size_t top = what ? max / (size_t)np : max;
        for (size_t s = what ? 16 : 8; s <= top; s *= 2) {
            once(what, a, b, s);   /* warm: the registrations, the eager areas */
            for (int r = 0; r < reps; r++)
                t[r] = once(what, a, b, s);
            qsort(t, (size_t)reps, sizeof t[0], cmp);
            if (fmpl_rank() == 0)
                printf("%s %zu %.3f\n", name[what], s, t[reps / 2]);
        }
    }
    free(a);
    free(b);
    CHECK(fmpl_finalize());
    return 0;
}
