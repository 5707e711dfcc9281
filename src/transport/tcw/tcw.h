/*
 * tcw.h - the Hitachi SR8000, emulated (private to src/transport/tcw/).
 *
 * Each rank is a CPU of an SR8000 node (FMPL_TCW_PPN ranks per node,
 * default 1, the paper's setting).  What the paper (Tatebe et al. 2002,
 * sections 3-4) describes, and where it is here:
 *
 *  - combuf remote-DMA AREAS (emu/emu_area.c): memory a peer may write, named
 *    by an id.  Area 0 of every node is FMPL's matching area (the mailbox:
 *    headers and completion flags); fmpl_alloc_mem makes static areas (the
 *    only ones a hardware broadcast may target); every other buffer FMPL
 *    hands to a peer is registered as an area of its own.
 *  - TRANSFER CONTROL WORDS (tcw_nia.c): source address, size, destination
 *    node, remote-DMA id, offset.  The TCWs that write matching-area lines
 *    are built once at open, one per (peer, index, half line), and only
 *    KICKED afterwards (the paper's TCW-reuse combuf_kick_tcw_fast); a data
 *    transfer first MODIFIES the one data TCW it has per peer, then kicks
 *    (Table 1's 8.1 vs 6.1 us).  A kick writes the TCW's address into the
 *    node's NIA control register.
 *  - the NIA (tcw_nia.c on emu/): validates a TCW against the destination's
 *    area table, moves the bytes, and hands the transfer to the engine,
 *    which cuts it into packets and times them through the crossbars; a
 *    TCW-reuse kick nobody counts completes before the call returns (as
 *    the paper's receive waited for its header, Table 1).
 *  - the multi-dimensional CROSSBAR (tcw_xbar.c): up to 8 nodes on one
 *    x-crossbar; x-crossbars joined by y-crossbars, and on the larger
 *    machines planes of those by z-crossbars.  The partition is
 *    FMPL_TCW_SHAPE=XxY or XxYxZ (default the paper's 2x8, section 5.2);
 *    node k sits at (k mod X, k div X mod Y, k div XY), so an even number
 *    of nodes fills a rectangle of a 2xN partition and an odd number does
 *    not.
 *  - the HARDWARE BARRIER (hmpc_barrier, colours 0-7) and BROADCAST
 *    through the serialising crossbar, with the conditions of sections
 *    3.2/3.3 (tcw_hw.c).
 *  - no remote atomics, no remote read: FMPL_TL_CAP_CAS and _GET clear.
 * The timing model's parameters, their defaults and their sources are in
 * tcw_model.c, in one table.
 */
#ifndef FMPL_TCW_H
#define FMPL_TCW_H

#include <stdint.h>

#include "transport/emu/emu.h"
#include "transport/emu/emu_tl.h"
#include "transport/transport.h"

#define FMPL_TCW_COLOURS   8       /* hmpc_barrier's colours */
#define FMPL_TCW_COLOUR_WORLD 0    /* fmpl_barrier(FMPL_COMM_WORLD) */
#define FMPL_TCW_COLOUR_HBCAST 1   /* fmpl_hbcast's run-time check */
#define FMPL_TCW_MAX_AREAS 8192    /* remote-DMA areas per node */
#define FMPL_TCW_STATIC_AREAS 256  /* ids 1..255: fmpl_alloc_mem; then the rest */
#define FMPL_TCW_MBOX_AREA 0       /* the matching area */
#define FMPL_TCW_HALF 32           /* a mailbox TCW writes half a line */

/* ---- the timing model (tcw_model.c) ------------------------------------ */
typedef struct tcw_model {
    int on;                        /* FMPL_TCW_MODEL */
    double cpu_scale;              /* FMPL_TCW_CPU_SCALE */
    double cpu_threshold_ns;       /* FMPL_TCW_CPU_THRESHOLD_NS */
    /* CPU costs of FMPL on the SR8000 (ns) */
    double call_ns, kick_ns, modify_ns, recv_done_ns;
    /* the NIA and the network (ns, MB/s, bytes) */
    double nia_send_ns, xbar_ns, nia_recv_ns, ack_ns, link_mbps;
    double packet;
    /* memory: CPU copies and reductions (MB/s) */
    double copy_mbps, op_mbps;
    /* hardware collectives (ns) */
    double hwbar_ns, hwbcast_ns;
} tcw_model_t;

/* Read every FMPL_TCW_* parameter (defaults from the paper); log and
 * return FMPL_ERR_ARG for a bad value. */
int  fmpl_tcw_model_read(tcw_model_t *m);
void fmpl_tcw_model_log(const tcw_model_t *m);

/* ---- the crossbar (tcw_xbar.c) ---------------------------------------- */
enum { TCW_XOUT, TCW_XIN, TCW_YOUT, TCW_YIN, TCW_ZOUT, TCW_ZIN, TCW_LOOP,
       TCW_LINKS_PER_NODE };

typedef struct tcw_xbar {
    int X, Y, Z;                   /* partition: X nodes per x-crossbar, Y of those
                                      per y-crossbar, Z such planes (1: 2-D) */
    int ppn;                       /* ranks per node */
    int nodes;                     /* nodes the job uses */
    int rect;                      /* they fill a rectangle (a box in 3-D) */
    int exclusive, global, shared_overlap;   /* partition attributes (3.2) */
    int nlinks;                    /* TCW_LINKS_PER_NODE x X x Y x Z + 1 */
    int ser_link;                  /* the serialising crossbar's input */
} tcw_xbar_t;

int  fmpl_tcw_xbar_init(tcw_xbar_t *x, int size);
/* "XxY" or "XxYxZ", for messages */
const char *fmpl_tcw_shape(const tcw_xbar_t *x);
static inline int fmpl_tcw_node(const tcw_xbar_t *x, int rank) { return rank / x->ppn; }
/* The route from rank `src` to rank `dst`, with the model's costs. */
void fmpl_tcw_route(const tcw_xbar_t *x, const tcw_model_t *m, int src, int dst,
                    fmpl_emu_path_t *p);
/* link bandwidths for the engine: [nlinks] picoseconds per byte */
void fmpl_tcw_link_ps(const tcw_xbar_t *x, const tcw_model_t *m, fmpl_emu_time_t *ps);
/* Why the hardware collectives cannot run (NULL: they can): the first of
 * the conditions of sections 3.2/3.3 that fails, for `size` ranks. */
const char *fmpl_tcw_hw_refusal(const tcw_xbar_t *x);

/* ---- the hardware collectives' shared state (tcw_hw.c) ----------------- */
typedef struct tcw_hb_card {      /* what a rank brings to a hardware broadcast */
    uint64_t addr, len;
    int32_t area, root;
    uint64_t off;
} tcw_hb_card_t;

typedef struct tcw_hw_shared {
    struct {
        int32_t arrived, pad;
        fmpl_emu_time_t latest;    /* latest arrival so far */
        uint64_t gen;              /* barriers completed */
    } bar[FMPL_TCW_COLOURS];
    uint64_t hb_gen;               /* broadcasts started */
    /* followed by size cards */
} tcw_hw_shared_t;

/* The fabric's shared area (after emu_tl's area tables): tcw_hw_shared_t
 * and its cards. */
typedef struct fmpl_tcw {
    fmpl_emu_tl_t *et;             /* first: the glue every emulated fabric shares */
    fmpl_emu_tl_t own;             /* ... which is ours alone: et points here */
    tcw_model_t m;
    tcw_xbar_t x;
    tcw_hw_shared_t *hw;           /* shared */
    /* TCWs */
    struct tcw_word *mbox_tcw;     /* [size][nidx][2], built at open */
    uint8_t *staging;              /* their sources: [size][nidx][2] half lines */
    struct tcw_word *data_tcw;     /* [size]: modified per transfer */
    fmpl_emu_path_t *route;        /* [size]: the route to each rank */
    /* hardware collectives seen done here */
    uint64_t bar_done[FMPL_TCW_COLOURS];
    uint64_t hb_done;
    int32_t hb_verdict;            /* FMPL_SUCCESS or the broadcast's error */
} fmpl_tcw_t;

static inline fmpl_tcw_t *fmpl_tcw_of(fmpl_tl_t *tl) { return (fmpl_tcw_t *)tl->priv; }

/* picoseconds of modeled time for ns of the model */
static inline fmpl_emu_time_t fmpl_tcw_ps(double ns) { return fmpl_emu_ps(ns); }

/* tcw_nia.c; nia_init makes the TCW tables the NIA kicks (the matching
 * area's words and their staging, the data TCWs), nia_fini frees them */
int  fmpl_tcw_nia_init(fmpl_tcw_t *t);
void fmpl_tcw_nia_fini(fmpl_tcw_t *t);
int  fmpl_tcw_put(fmpl_tl_t *tl, int peer, const void *src, size_t len,
                  const fmpl_tl_key_t *key, uint64_t roff, unsigned flags,
                  fmpl_tl_comp_t *comp);
int  fmpl_tcw_notify(fmpl_tl_t *tl, int peer, int idx, unsigned off, const void *rec,
                     unsigned len, unsigned flags, fmpl_tl_comp_t *comp);

/* tcw_hw.c */
enum { TCW_SIG_BAR = 1, TCW_SIG_HBCAST = 2 };
size_t fmpl_tcw_hw_bytes(int size);
int  fmpl_tcw_barrier(fmpl_tl_t *tl, fmpl_tl_coll_t *st);
int  fmpl_tcw_barrier_colour(fmpl_tcw_t *t, int colour, fmpl_tl_coll_t *st);
int  fmpl_tcw_bcast(fmpl_tl_t *tl, void *buf, size_t len, int root, fmpl_tl_coll_t *st);
void fmpl_tcw_hw_signal(fmpl_emu_tl_t *et, const fmpl_emu_msg_t *m);

#endif
