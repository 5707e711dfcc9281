/*
 * bench/sr8000_p2p - the point-to-point measurements of the FMPL paper
 * (Tatebe et al. 2002, 5.1) on the emulated SR8000, through FMPL's real
 * code path: run on 2 ranks with FMPL_TRANSPORT=tcw (bench/sr8000 does).
 *
 *   fmplrun -n 2 bench/sr8000_p2p [-i ITERS] [-m MAXSIZE] [-M]
 *
 * (More ranks may run: ranks 2.. only wait in fmpl_finalize, which shows
 * that the modeled times do not depend on how many ranks share the cores.)
 *
 * Prints "key value..." lines (microseconds, MB/s) that bench/sr8000 puts
 * beside the paper's figures:
 *   lat_fmpl US            8-byte one-way latency, fmpl_send/fmpl_recv
 *                          ping-pong (round trip / 2, the median over
 *                          the iterations of the batches)
 *   table1 I W D I H R     Table 1: the phases of rank 0's fmpl_send (init,
 *                          header wait, data send) and fmpl_recv (init,
 *                          header send, data receive) in that ping-pong,
 *                          from FMPL's trace points (src/p2p/trace.h),
 *                          each the median over the iterations of the
 *                          batches
 *   bw_fmpl SIZE MBPS      Fig. 6: size / one-way time
 *   lat_mpi US, bw_mpi SIZE MBPS, bw_nordma SIZE MBPS (with -M)
 *                          the paper's MPI as a protocol on the same fabric
 *                          (bench/sr8000_mpi.h)
 *   lat_blacs US, lat_blacs_nordma US, bw_blacs SIZE MBPS,
 *   bw_blacs_nordma SIZE MBPS (with -M)
 *                          netlib's MPI-BLACS on that MPI, rdma and nordma:
 *                          Fig. 6's BLACS curves (bench/sr8000_mpi.h)
 * The model is deterministic, so a few iterations give the figure.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_util.h"
#define BENCH_PROG "sr8000_p2p"
#include "bench_fmpl.h"
#include "p2p/trace.h"
#include "sr8000_mpi.h"

#define SMPI_BASE 8                /* FMPL's own ping-pong uses index 0 */

static int me;

enum { LIB_FMPL, LIB_MPI, LIB_NORDMA, LIB_BLACS, LIB_BLACS_NORDMA };

static void pingpong(int lib, void *sb, void *rb, size_t n)
{
    int peer = !me;
    for (int turn = 0; turn < 2; turn++) {
        if ((turn == 0) == (me == 0)) {
            if (lib == LIB_FMPL)
                CHECK(fmpl_send(sb, n, peer, 0));
            else if (lib >= LIB_BLACS)
                sblacs_send(sb, n, peer, lib == LIB_BLACS_NORDMA);
            else
                smpi_send(sb, n, peer, lib == LIB_NORDMA);
        } else {
            if (lib == LIB_FMPL)
                CHECK(fmpl_recv(rb, n, peer, 0));
            else if (lib >= LIB_BLACS)
                sblacs_recv(rb, n, peer, lib == LIB_BLACS_NORDMA);
            else
                smpi_recv(rb, n, peer, lib == LIB_NORDMA);
        }
    }
}

/* One-way time of n bytes (seconds): `it` round trips after one to warm
 * up; with `ow`, each iteration's one-way time into ow[i]; with `ph`,
 * the phases of rank 0's calls of iteration i into ph[k * it + i]. */
static double one_way(int lib, void *sb, void *rb, size_t n, long it, double *ow, double *ph)
{
    fmpl_trace_t tr;
    pingpong(lib, sb, rb, n);
    double t0 = fmpl_wtime();
    for (long i = 0; i < it; i++) {
        if (ow) {
            double t = fmpl_wtime();
            pingpong(lib, sb, rb, n);
            ow[i] = (fmpl_wtime() - t) / 2;
            continue;
        }
        if (!ph || me != 0) {
            pingpong(lib, sb, rb, n);
            continue;
        }
        fmpl_trace = &tr;
        CHECK(fmpl_send(sb, n, 1, 0));
        ph[0 * it + i] = tr.t[FMPL_TR_SEND_READY] - tr.t[FMPL_TR_SEND_CALL];
        ph[1 * it + i] = tr.t[FMPL_TR_SEND_HDR] - tr.t[FMPL_TR_SEND_READY];
        ph[2 * it + i] = tr.t[FMPL_TR_SEND_END] - tr.t[FMPL_TR_SEND_HDR];
        CHECK(fmpl_recv(rb, n, 1, 0));
        ph[3 * it + i] = tr.t[FMPL_TR_RECV_KICK] - tr.t[FMPL_TR_RECV_CALL];
        ph[4 * it + i] = tr.t[FMPL_TR_RECV_KICKED] - tr.t[FMPL_TR_RECV_KICK];
        ph[5 * it + i] = tr.t[FMPL_TR_RECV_END] - tr.t[FMPL_TR_RECV_KICKED];
        fmpl_trace = NULL;
    }
    return (fmpl_wtime() - t0) / (double)it / 2;
}

static long iters_for(size_t n, long base)
{
    return n >= ((size_t)1 << 20) ? 2 : n >= 65536 ? (base + 3) / 4 : base;
}

int main(int argc, char **argv)
{
    long iters = 20;
    size_t maxsize = (size_t)16 << 20;
    int opt, with_mpi = 0;
    while ((opt = getopt(argc, argv, "i:m:Mh")) != -1) {
        switch (opt) {
        case 'i': iters = atol(optarg) > 0 ? atol(optarg) : 1; break;
        case 'm':
            if (bu_parse_size(optarg, &maxsize) != 0 || maxsize < 8) {
                fprintf(stderr, "%s: bad size %s\n", BENCH_PROG, optarg);
                return 2;
            }
            break;
        case 'M': with_mpi = 1; break;
        default:
            fprintf(opt == 'h' ? stdout : stderr,
                    "usage: fmplrun -n 2 %s [-i ITERS] [-m MAXSIZE] [-M]\n", BENCH_PROG);
            return opt == 'h' ? 0 : 2;
        }
    }
    CHECK(fmpl_init(16));
    bench_fmpl_clock();
    me = fmpl_rank();
    if (fmpl_size() < 2) {
        fprintf(stderr, "%s: needs 2 ranks\n", BENCH_PROG);
        fmpl_finalize();
        return 2;
    }
    if (me >= 2)
        return fmpl_finalize() == FMPL_SUCCESS ? 0 : 1;
    if (me == 0 && !fmpl_wtime_emulated())
        printf("# not an emulated machine (FMPL_TRANSPORT=tcw): times are this machine's\n");
    smpi_init(SMPI_BASE, with_mpi ? maxsize : 0);
    if (with_mpi)
        sblacs_init(maxsize);
    uint8_t *sb = fmpl_alloc_mem(maxsize), *rb = fmpl_alloc_mem(maxsize);
    if (!sb || !rb)
        bench_die("fmpl_alloc_mem", FMPL_ERR_NOMEM);
    memset(sb, me + 1, maxsize);

    /* The latency and each phase of Table 1: the median over every
     * iteration of a few batches.  The CPU time between calls is this
     * machine's, now and then inflated; the model gives most iterations
     * the same time, and the median ignores the few a moment of this
     * machine's load touched. */
    long all = (long)BU_REPS * iters;
    double *ph = malloc(sizeof *ph * 6 * (size_t)all), *tmp = malloc(sizeof *ph * (size_t)all),
           *one = malloc(sizeof *ph * 6 * (size_t)iters);
    if (!ph || !tmp || !one)
        bench_die("malloc", FMPL_ERR_NOMEM);
    for (int r = 0; r < BU_REPS; r++)
        one_way(LIB_FMPL, sb, rb, 8, iters, &tmp[r * iters], NULL);
    double lat = bu_median(tmp, (int)all);
    for (int r = 0; r < BU_REPS; r++) {
        one_way(LIB_FMPL, sb, rb, 8, iters, NULL, one);
        for (int k = 0; k < 6; k++)
            memcpy(&ph[k * all + r * iters], &one[k * iters], sizeof *one * (size_t)iters);
    }
    free(one);
    if (me == 0) {
        printf("lat_fmpl %.3f\n", lat * 1e6);
        printf("table1");
        for (int k = 0; k < 6; k++) {
            memcpy(tmp, &ph[k * all], sizeof *tmp * (size_t)all);
            printf(" %.3f", bu_median(tmp, (int)all) * 1e6);
        }
        printf("\n");
    }
    free(ph);
    free(tmp);
    for (size_t n = 8; n <= maxsize; n *= 8) {
        double t = one_way(LIB_FMPL, sb, rb, n, iters_for(n, iters), NULL, NULL);
        if (me == 0)
            printf("bw_fmpl %zu %.1f\n", n, (double)n / t / 1e6);
    }
    if (with_mpi) {
        double lms[BU_REPS], lns[BU_REPS];
        for (int r = 0; r < BU_REPS; r++) {
            lms[r] = one_way(LIB_MPI, sb, rb, 8, iters, NULL, NULL);
            lns[r] = one_way(LIB_NORDMA, sb, rb, 8, iters, NULL, NULL);
        }
        double lm = bu_median(lms, BU_REPS), ln = bu_median(lns, BU_REPS);
        for (int r = 0; r < BU_REPS; r++) {
            lms[r] = one_way(LIB_BLACS, sb, rb, 8, iters, NULL, NULL);
            lns[r] = one_way(LIB_BLACS_NORDMA, sb, rb, 8, iters, NULL, NULL);
        }
        double lb = bu_median(lms, BU_REPS), lbn = bu_median(lns, BU_REPS);
        if (me == 0)
            printf("lat_mpi %.3f\nlat_nordma %.3f\nlat_blacs %.3f\nlat_blacs_nordma %.3f\n",
                   lm * 1e6, ln * 1e6, lb * 1e6, lbn * 1e6);
        static const struct { int lib; const char *key; } curve[] = {
            { LIB_MPI, "bw_mpi" }, { LIB_NORDMA, "bw_nordma" },
            { LIB_BLACS, "bw_blacs" }, { LIB_BLACS_NORDMA, "bw_blacs_nordma" } };
        for (size_t n = 8; n <= maxsize; n *= 8)
            for (size_t k = 0; k < sizeof curve / sizeof curve[0]; k++) {
                double t = one_way(curve[k].lib, sb, rb, n, iters_for(n, iters), NULL, NULL);
                if (me == 0)
                    printf("%s %zu %.1f\n", curve[k].key, n, (double)n / t / 1e6);
            }
    }
    CHECK(fmpl_free_mem(sb));
    CHECK(fmpl_free_mem(rb));
    return fmpl_finalize() == FMPL_SUCCESS ? 0 : 1;
}
