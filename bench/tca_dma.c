/*
 * bench/tca_dma - the PEACH2 paper's measurements (Hanawa et al. 2013,
 * 4.1-4.2) on the emulated PEACH2 sub-cluster, through the transport
 * FMPL's messages use: run with FMPL_TRANSPORT=peach2 (bench/tca does).
 *
 *   fmplrun -n N bench/tca_dma [-o FIGS]      (N >= 2; 8 shows 1 to 3 hops)
 *     -o FIGS   only these of p, 4, 5, 6, 7 (default all)
 *
 * The paper measured inside its driver, from the kick to the poll that
 * sees the DMA done; here the same interval is taken with fmpl_wtime()
 * (the emulated clock) around the transport's put and the wait for its
 * completion - the code FMPL's own messages run.  Prints
 * "key value..." lines (ns, MB/s = 1e6 bytes/s):
 *   pio PEER HOPS NS     an 8-byte record stored by rank 0's CPU (PIO) into
 *                        PEER's memory, from the store until PEER's poll
 *                        sees it (4.2: 782 ns to a neighbour); the median
 *                        of 5
 *   fig4 SIZE MBPS       128 chained transfers of SIZE bytes inside node 0
 *   fig5 SIZE MBPS       one transfer (register mode or a descriptor, as
 *                        FMPL_TCA_REG_MAX_BYTES decides: bench/tca runs both)
 *   fig6 N MBPS          N chained transfers of 4 KiB
 *   fig7 SIZE MBPS       Fig. 4's 128 transfers to the neighbour, rank 1
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_util.h"
#define BENCH_PROG "tca_dma"
#include "bench_fmpl.h"
#include "p2p/progress.h"
#include "p2p/state.h"
#include "p2p/p2p.h"
#include "transport/peach2/p2.h"
#include "transport/transport.h"

#define REC_IDX 15                 /* our own mailbox lines: no message uses them */
#define KEY_MAI 0
#define RES_MAI 1
#define CHAIN 128
#define MAXSIZE ((size_t)128 << 10)

static int me, np;

static void wait_comp(fmpl_tl_comp_t *c, int peer)
{
    fmpl_wait_t w;
    fmpl_wait_init(&w, peer);
    while (c->pending > 0)
        if (fmpl_progress() == 0 && fmpl_wait_idle(&w) != FMPL_SUCCESS)
            bench_die("wait for a DMA", FMPL_ERR_PEER);
    if (c->status != FMPL_SUCCESS)
        bench_die("DMA", c->status);
}

/* n transfers of `size` bytes from src to key (at consecutive offsets),
 * one request: its bandwidth from the kick to the completion, MB/s */
static double dma(int peer, const uint8_t *src, size_t size, int n, const fmpl_tl_key_t *key)
{
    fmpl_tl_t *tl = &fmpl_g.tl;
    fmpl_tl_iov_t iov[CHAIN];
    for (int i = 0; i < n; i++)
        iov[i] = (fmpl_tl_iov_t){ .src = src + (size_t)i * size, .len = size,
                                  .roff = (uint64_t)i * size };
    fmpl_tl_comp_t comp = { 0, FMPL_SUCCESS };
    fmpl_enter();
    double t0 = fmpl_wtime();
    CHECK(tl->ops->put_iov(tl, peer, iov, n, key, &comp));
    wait_comp(&comp, peer);
    double t = fmpl_wtime() - t0;
    fmpl_leave();
    return (double)size * n / t / 1e6;
}

/* PIO: rank 0's 8-byte record to `peer` on REC_IDX; the store's time
 * follows in a message.  Rank 0 first computes a while (emulated), so
 * that the peer, out of the barrier later than rank 0 perhaps, polls
 * before the record can arrive. */
static uint32_t pio_seq;

static double pio_once(int peer)
{
    fmpl_tl_t *tl = &fmpl_g.tl;
    uint32_t seq = ++pio_seq;
    CHECK(fmpl_barrier(FMPL_COMM_WORLD));
    double t0 = 0, t1 = 0;
    fmpl_enter();
    if (me == 0) {
        fmpl_tl_work(tl, FMPL_TL_WORK_NS, 20000);
        uint64_t word = (uint64_t)seq << 32 | 1;
        t0 = fmpl_wtime();
        CHECK(tl->ops->notify(tl, peer, REC_IDX, 0, &word, sizeof word,
                              FMPL_TL_NOTIFY_UNORDERED, NULL));
    } else if (me == peer) {
        volatile uint8_t *line = fmpl_tl_mbox_in(tl, 0, REC_IDX);
        fmpl_wait_t w;
        fmpl_wait_init(&w, 0);
        while ((uint32_t)(fmpl_line_word(line, 0) >> 32) != seq)
            if (fmpl_progress() == 0 && fmpl_wait_idle(&w) != FMPL_SUCCESS)
                bench_die("wait for a PIO store", FMPL_ERR_PEER);
        t1 = fmpl_wtime();
    }
    fmpl_leave();
    if (me == 0)
        CHECK(fmpl_send(&t0, sizeof t0, peer, RES_MAI));
    else if (me == peer)
        CHECK(fmpl_recv(&t0, sizeof t0, 0, RES_MAI));
    return t1 - t0;
}

static int want(const char *figs, char f) { return !figs || strchr(figs, f); }

int main(int argc, char **argv)
{
    const char *figs = NULL;
    int opt;
    while ((opt = getopt(argc, argv, "o:h")) != -1) {
        switch (opt) {
        case 'o': figs = optarg; break;
        default:
            fprintf(opt == 'h' ? stdout : stderr, "usage: fmplrun -n N %s [-o p4567]\n",
                    BENCH_PROG);
            return opt == 'h' ? 0 : 2;
        }
    }
    CHECK(fmpl_init(16));
    me = fmpl_rank();
    np = fmpl_size();
    fmpl_tl_t *tl = &fmpl_g.tl;
    if (np < 2 || tl->ops != &fmpl_peach2_ops) {
        if (me == 0)
            fprintf(stderr, "%s: needs 2 or more ranks on FMPL_TRANSPORT=peach2\n", BENCH_PROG);
        fmpl_finalize();
        return 2;
    }
    const int *hops = fmpl_peach2_of(tl)->hops;

    if (want(figs, 'p'))
        for (int peer = 1; peer < np; peer++) {
            double v[BU_REPS];
            for (int r = 0; r < BU_REPS; r++)
                v[r] = pio_once(peer);
            if (me == peer) {
                double m = bu_median(v, BU_REPS);
                CHECK(fmpl_send(&m, sizeof m, 0, RES_MAI + 1));
            } else if (me == 0) {
                double m;
                CHECK(fmpl_recv(&m, sizeof m, peer, RES_MAI + 1));
                printf("pio %d %d %.1f\n", peer, hops[peer], m * 1e9);
            }
        }

    /* DMA inside node 0, then to node 1 (its buffer's key first) */
    size_t bytes = (size_t)CHAIN * MAXSIZE;
    /* page-aligned, as the paper's driver buffers: a 4 KiB transfer is
     * one descriptor */
    uint8_t *src = aligned_alloc(4096, bytes), *dst = aligned_alloc(4096, bytes);
    if (!src || !dst)
        bench_die("malloc", FMPL_ERR_NOMEM);
    memset(src, me + 1, bytes);
    memset(dst, 0, bytes);
    fmpl_tl_key_t key, rkey;
    CHECK(fmpl_tl_mem_reg(tl, dst, bytes, &key));
    if (me == 1)
        CHECK(fmpl_send(&key, sizeof key, 0, KEY_MAI));
    else if (me == 0)
        CHECK(fmpl_recv(&rkey, sizeof rkey, 1, KEY_MAI));
    if (me == 0) {
        if (want(figs, '4'))
            for (size_t s = 8; s <= MAXSIZE; s *= 2)
                printf("fig4 %zu %.1f\n", s, dma(0, src, s, CHAIN, &key));
        if (want(figs, '5'))
            for (size_t s = 8; s <= MAXSIZE; s *= 2)
                printf("fig5 %zu %.1f\n", s, dma(0, src, s, 1, &key));
        if (want(figs, '6'))
            for (int n = 1; n <= CHAIN; n *= 2)
                printf("fig6 %d %.1f\n", n, dma(0, src, 4096, n, &key));
        if (want(figs, '7'))
            for (size_t s = 8; s <= MAXSIZE; s *= 2)
                printf("fig7 %zu %.1f\n", s, dma(1, src, s, CHAIN, &rkey));
    }
    CHECK(fmpl_barrier(FMPL_COMM_WORLD));
    /* the bytes arrived: node 1 holds node 0's pattern */
    if (me == 1 && want(figs, '7') && dst[0] != 1)
        bench_die("fig7: node 1's buffer does not hold the data", FMPL_ERR_INTERNAL);
    fmpl_tl_mem_dereg(tl, &key);
    free(src);
    free(dst);
    return fmpl_finalize() == FMPL_SUCCESS ? 0 : 1;
}
