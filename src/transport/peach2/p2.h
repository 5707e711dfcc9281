/*
 * p2.h - a PEACH2/TCA sub-cluster, emulated (private to
 * src/transport/peach2/).
 *
 * Each rank is a node of HA-PACS/TCA with one PEACH2 board.  What the
 * paper (Hanawa et al. 2013, sections 3-4) describes, and where it is
 * here:
 *
 *  - the RING (p2_ring.c): up to 16 nodes, two rings of R = ceil(S/2)
 *    joined position by position.  Each board has a host port (PCIe to
 *    its node: "up" carries the node's reads and stores to the board,
 *    "down" the board's writes into host memory) and ports E, W (the
 *    ring) and S (the other ring).  Rank k sits at position k mod R of
 *    ring k / R.
 *  - one global PCIe ADDRESS WINDOW (p2_ring.c, emu/emu_area.c): node r
 *    owns the aligned slice [base + r x 2^35, ...) of 512 GiB; registered
 *    memory is pinned pages placed in that slice.  Each board routes a
 *    write by comparing its address with every port's mask/range
 *    registers (static routes, programmed at open); the board that owns
 *    the slice subtracts its offset and writes host memory.
 *  - PIO (p2_dma.c): a CPU store into the window - mailbox records, and
 *    puts of a few bytes.
 *  - the DMA CONTROLLER (p2_dma.c): 4 channels per board; chained 32-byte
 *    descriptors, each of which may be block-stride; register mode for a
 *    few transfers without a descriptor table; completion by polling.
 *  - no remote atomics, no remote read: FMPL_TL_CAP_CAS and _GET clear.
 * The timing model's parameters, their defaults and their sources are in
 * p2_model.c, in one table.
 */
#ifndef FMPL_PEACH2_H
#define FMPL_PEACH2_H

#include <stdint.h>

#include "transport/emu/emu.h"
#include "transport/emu/emu_tl.h"
#include "transport/transport.h"

#define FMPL_PEACH2_MAX_NODES 16       /* a sub-cluster */
#define FMPL_PEACH2_DMA_CHANNELS 4     /* per board */
#define FMPL_PEACH2_MAX_AREAS 8192     /* registered regions per node */
#define FMPL_PEACH2_STATIC_AREAS 256   /* ids 1..255: fmpl_alloc_mem */
#define FMPL_PEACH2_WIN_BASE (1ull << 40)       /* the window in the PCIe space */
#define FMPL_PEACH2_SLICE_BITS 35               /* 32 GiB a node: 512 GiB for 16 */
#define FMPL_PEACH2_DESC_BYTES 32      /* a chained descriptor */
#define FMPL_PEACH2_DESC_TABLE 128     /* descriptors in a 4 KiB table */
#define FMPL_PEACH2_PAGE 4096          /* what one descriptor may span at most */

/* ---- the timing model (p2_model.c) ------------------------------------- */
typedef struct p2_model {
    int on;                        /* FMPL_TCA_MODEL */
    double cpu_scale, cpu_threshold_ns;
    /* the CPU: FMPL's own costs, a PIO store, writing a DMA request */
    double call_ns, recv_done_ns, store_ns, kick_ns;
    double copy_mbps, op_mbps;
    /* PCIe: links, packets */
    double link_mbps, tlp_payload, tlp_overhead;
    /* latencies */
    double pio_ns, board_ns, hop_ns, mem_ns, poll_ns;
    /* the DMA controller */
    double dma_start_ns, desc_ns, reg_start_ns, reg_max, reg_max_bytes, pio_max_bytes;
} p2_model_t;

int  fmpl_peach2_model_read(p2_model_t *m);
void fmpl_peach2_model_log(const p2_model_t *m);
/* bytes on a PCIe link for a payload of len: its TLPs' headers included */
uint64_t fmpl_peach2_wire(const p2_model_t *m, uint64_t len);

/* ---- the ring and the window (p2_ring.c) ------------------------------- */
enum { P2_UP, P2_DOWN, P2_E, P2_W, P2_S, P2_LINKS_PER_NODE };
enum { P2_PORT_HOST = -1 };        /* the "port" a write leaves by into memory */
#define P2_RANGES 4                /* address ranges per port */

typedef struct p2_range { uint64_t base, limit; } p2_range_t;   /* [base, limit] */

typedef struct p2_board {
    /* a write whose address, masked, lies in one of a port's ranges
     * leaves by that port; in the host range, it goes into memory */
    uint64_t mask;
    p2_range_t host;
    p2_range_t port[P2_LINKS_PER_NODE][P2_RANGES];
    int nrange[P2_LINKS_PER_NODE];
    int peer[P2_LINKS_PER_NODE];   /* the board a port's cable reaches, -1 */
} p2_board_t;

typedef struct p2_ring {
    int S, R;                      /* nodes; nodes a ring */
    p2_board_t board[FMPL_PEACH2_MAX_NODES];
    int nlinks;                    /* P2_LINKS_PER_NODE x S */
} p2_ring_t;

int  fmpl_peach2_ring_init(p2_ring_t *r, int nodes);
static inline int fmpl_peach2_ring_of(const p2_ring_t *r, int k) { return k / r->R; }
static inline int fmpl_peach2_pos_of(const p2_ring_t *r, int k) { return k % r->R; }
static inline uint64_t fmpl_peach2_slice(int node)
{
    return FMPL_PEACH2_WIN_BASE + ((uint64_t)node << FMPL_PEACH2_SLICE_BITS);
}
/* The node whose slice holds `addr`, or -1. */
int  fmpl_peach2_node_of(const p2_ring_t *r, uint64_t addr);
/* Walk the boards' registers from node `src` for a write at `addr`: the
 * boards crossed (hops), and each link, into p (NULL: count only).
 * The destination node, or -1 (logged) when no register claims it. */
int  fmpl_peach2_walk(const p2_ring_t *r, int src, uint64_t addr, fmpl_emu_path_t *p,
                      int *hops);
/* Routes from `src` to every node, with the model's costs: paths[dst]. */
int  fmpl_peach2_routes(const p2_ring_t *r, const p2_model_t *m, int src, fmpl_emu_path_t *paths,
                        int *hops);
void fmpl_peach2_link_ps(const p2_ring_t *r, const p2_model_t *m, fmpl_emu_time_t *ps);

/* ---- the fabric ----------------------------------------------------------- */
typedef struct fmpl_p2 {
    fmpl_emu_tl_t *et;             /* first: the glue every emulated fabric shares */
    fmpl_emu_tl_t own;             /* ... ours alone when peach2 runs by itself */
    int base;                      /* our sub-cluster: ranks base .. base + ring.S - 1 */
    p2_model_t m;
    p2_ring_t ring;
    fmpl_emu_path_t *route;        /* [ring.S]: the route to each node of ours */
    int *hops;                     /* [ring.S] */
    uint8_t *dma_dirty;            /* [size]: a DMA to it since our last ordered record */
    double gpu_read_ns;            /* data in GPU memory (tca, FMPL_TCA_MV2): the DMA's
                                      first read of it costs this more; 0: host memory */
    uint64_t pio_stores, dma_kicks, dma_desc, dma_reg;   /* counters (FMPL_VERBOSE) */
} fmpl_peach2_t;

static inline fmpl_peach2_t *fmpl_peach2_of(fmpl_tl_t *tl) { return (fmpl_peach2_t *)tl->priv; }

/* channels a node: 4 DMA channels and the CPU's stores */
#define FMPL_PEACH2_CHANS_PER_NODE (FMPL_PEACH2_DMA_CHANNELS + 1)

/* p2_ops.c: PEACH2 as the whole machine (peach2) or as one of its
 * networks (tca).  net_open: our sub-cluster (ranks base .. base + nodes
 * - 1), the ring, the model, our routes; links are numbered by global
 * rank (P2_LINKS_PER_NODE a node), channels too (FMPL_PEACH2_CHANS_PER_NODE),
 * from 0.  The machine `et` is opened by the caller afterwards. */
int    fmpl_peach2_net_open(fmpl_peach2_t *t, fmpl_tl_t *tl, fmpl_emu_tl_t *et, int base,
                            int nodes);
void   fmpl_peach2_net_close(fmpl_peach2_t *t);
double fmpl_peach2_lookahead(const p2_model_t *m);
void   fmpl_peach2_costs(const p2_model_t *m, fmpl_emu_costs_t *c);

/* p2_dma.c */
int  fmpl_peach2_put(fmpl_tl_t *tl, int peer, const void *src, size_t len,
                     const fmpl_tl_key_t *key, uint64_t roff, unsigned flags,
                     fmpl_tl_comp_t *comp);
int  fmpl_peach2_put_iov(fmpl_tl_t *tl, int peer, const fmpl_tl_iov_t *iov, int n,
                         const fmpl_tl_key_t *key, fmpl_tl_comp_t *comp);
int  fmpl_peach2_put_strided(fmpl_tl_t *tl, int peer, const void *src, size_t blklen, size_t nblk,
                             size_t sstride, const fmpl_tl_key_t *key, uint64_t roff,
                             size_t dstride, fmpl_tl_comp_t *comp);
int  fmpl_peach2_notify(fmpl_tl_t *tl, int peer, int idx, unsigned off, const void *rec,
                        unsigned len, unsigned flags, fmpl_tl_comp_t *comp);

#endif
