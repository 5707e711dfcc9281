/*
 * transport.h - the remote-write "NIC" every FMPL transport implements.
 *
 * Modelled on libfabric's ops tables and UCX's uct_iface_ops, kept smaller.
 * The p2p and collective layers are written once against this table; no
 * code above src/transport/ knows which transport runs.
 *
 * The model (the SR8000 combuf model, which also fits RDMA NICs, PEACH2
 * and InfiniBand verbs):
 *
 *  - Memory is REGISTERED to obtain a key (fmpl_tl_key_t) that a peer can
 *    use as the target of writes.  Keys travel inside FMPL's own headers.
 *    Every successful mem_reg is matched by one mem_dereg once no peer
 *    uses the key any more (the operation that sent it has completed):
 *    until then the transport keeps the registration; after it may drop
 *    it, or cache it if memory freed and mapped again at the same address
 *    is still reached correctly through it.
 *
 *  - PUT writes local bytes into a peer's registered memory: contiguous,
 *    block-stride (a 2-D array: nblk blocks of blklen bytes, strides on
 *    both sides) or a list of pieces.  A put may complete later: the
 *    caller passes a completion counter that the transport decrements when
 *    the SOURCE may be reused (UCX's uct_completion_t, reduced to a count).
 *
 *  - Each process owns a MAILBOX area: for every peer p and index i one
 *    64-byte cache line (FMPL_TL_LINE) written only by p (the matching area
 *    and the completion flags of the paper).  mbox_in() gives the local
 *    address of the line p writes to us; the owner polls it with plain
 *    loads.  NOTIFY writes a record into OUR line in the PEER's mailbox:
 *    bytes [8, len) first, then the 8-byte word at offset 0 with release
 *    order, and only after every earlier put to that peer is visible.  A
 *    reader that sees a new first word therefore sees the rest of the
 *    record and all the data before it ("ordered notification after
 *    data"), unless FMPL_TL_NOTIFY_UNORDERED says the record does not
 *    depend on earlier puts (a receive header).  Short records carry small
 *    messages inline (the PIO store).  A transport whose max_inline is
 *    above 32 makes each slot longer than the line: a record at offset
 *    32 may run on into the lines after it, up to 32 + max_inline bytes
 *    from the slot's start (shm, dcfa; p2p.h).  A notify that cannot leave at once
 *    counts in `comp` (may be NULL only for UNORDERED records) until it
 *    has: a send is complete only when its flag is on its way.
 *
 *  - GET reads a peer's registered memory (RDMA read).  With it a large
 *    message can be copied by both sides at once.
 *
 *  - CAS on the first word of a record is the one atomic FMPL needs (to
 *    claim or withdraw a posted receive); transports without coherent
 *    atomics leave FMPL_TL_CAP_CAS clear.
 *
 *  - PROGRESS drives what the hardware would do on its own (an emulated
 *    NIC's engine, a CQ).  The layers above call it while they wait.
 *
 *  - Optional: hardware barrier and broadcast (capability flags), which the
 *    collective layer uses when present.
 *
 * Unsupported operations point at fmpl_tl_unsupported_* stubs, never NULL.
 */
#ifndef FMPL_TRANSPORT_H
#define FMPL_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdatomic.h>
#include <string.h>

#include "fmpl.h"          /* the error codes of the inline wrappers */

#define FMPL_TL_LINE 64            /* one mailbox line: a cache line */

/* A slot's extension (see above): the lines after the slot's own that a
 * record at offset 32 may run on into.  One rule for every transport that
 * has one (shm, the mailboxes kept by messages): the longest of EXT_MAX,
 * EXT_MAX/2, ... down to EXT_MIN bytes for which all [size][nidx] slots
 * fit in SLOT_BUDGET - the same on every rank, since it depends on the
 * job alone.  With fmpl_init's 737 indices: 2 KiB up to 8 ranks, 1 KiB
 * at 16, 512 bytes at 32, 256 from 64 on.  A job touches only the slots
 * of the pairs that talk. */
#define FMPL_TL_EXT_MIN     256
#define FMPL_TL_EXT_MAX     2048
#define FMPL_TL_SLOT_BUDGET (16u * 1024 * 1024)
unsigned fmpl_tl_slot_ext(int size, int nidx);

/* Capability flags (fmpl_tl_t.caps). */
#define FMPL_TL_CAP_CAS        (1u << 0)  /* mbox_cas works */
#define FMPL_TL_CAP_STRIDED    (1u << 1)  /* put_strided without packing */
#define FMPL_TL_CAP_HW_BARRIER (1u << 2)  /* barrier op is hardware */
#define FMPL_TL_CAP_HW_BCAST   (1u << 3)  /* bcast op is hardware */
#define FMPL_TL_CAP_SELF       (1u << 4)  /* peer == self handled */
#define FMPL_TL_CAP_GET        (1u << 5)  /* get (remote read) works */
#define FMPL_TL_CAP_VADDR      (1u << 6)  /* a key of ordinary memory has the
                                             buffer's virtual address in addr */
#define FMPL_TL_CAP_GROUP_NEAR (1u << 7)  /* ranks of one near group (tl->group:
                                             a host over shared memory, a PEACH2
                                             sub-cluster) reach each other far
                                             cheaper than other ranks */
#define FMPL_TL_CAP_SHARED_LINK (1u << 8) /* puts are carried by a NIC whose one
                                             link the puts in flight share,
                                             packet by packet: writes to
                                             several peers at once all end
                                             late (not so on shm, where the
                                             CPU copies one after another) */
#define FMPL_TL_CAP_WATCH      (1u << 9)  /* records are applied as they come,
                                             and fmpl_tl_watch lists the peers
                                             that wrote one index */

/* put flags: what a put is, for a transport that can choose between
 * paths (the others ignore them):
 *   FMPL_TL_PUT_FACE    contiguous faces of a halo exchange, which go to
 *                       several peers at once - bandwidth matters more
 *                       than latency, and two networks carry them side by
 *                       side (tca; Odajima et al. 2015, 5.2: block
 *                       faces over InfiniBand, block-stride ones over
 *                       PEACH2).
 *   FMPL_TL_PUT_SPLIT   the sender's part of a split message (p2p.h): the
 *                       receiver copies the other part meanwhile, so a
 *                       path that needs its CPU to land the data (shm's
 *                       FIFO) would wait until it is done, and the two
 *                       copies would run one after the other.
 *   FMPL_TL_PUT_BURST   one of several the caller sends at once before it
 *                       waits (a collective's fan-out): what each costs
 *                       the sender's CPU and queues counts more than one
 *                       message's latency (tca: small ones on PEACH2). */
#define FMPL_TL_PUT_FACE  (1u << 0)
#define FMPL_TL_PUT_SPLIT (1u << 1)
#define FMPL_TL_PUT_BURST (1u << 2)

/* notify flags */
#define FMPL_TL_NOTIFY_UNORDERED (1u << 0) /* needs no ordering after puts:
                                              the transport may send it at once */
#define FMPL_TL_NOTIFY_BURST     (1u << 1) /* as FMPL_TL_PUT_BURST */

/* A registered region as a peer sees it: opaque to the upper layers. */
typedef struct fmpl_tl_key {
    uint64_t addr;                 /* transport-defined address/offset */
    uint32_t kind;                 /* transport-defined */
    uint32_t id;                   /* transport-defined (segment, rkey) */
} fmpl_tl_key_t;

/* Local completion of puts: the transport decrements `pending` when a
 * put's source may be reused; the caller initialises it to 0. */
typedef struct fmpl_tl_comp {
    volatile int pending;
    int status;                    /* first error seen, FMPL_SUCCESS else */
} fmpl_tl_comp_t;

/* Puts still counted.  Transports with a thread of their own (ofi, dcfa:
 * the ticker; FMPL_PROGRESS_THREAD) count down from it, with release
 * order after setting `status`: so readers load with acquire order (a
 * plain read was a data race, and could see 0 before the status). */
static inline int fmpl_tl_comp_pending(const fmpl_tl_comp_t *c)
{
    return __atomic_load_n(&c->pending, __ATOMIC_ACQUIRE);
}

/* Direct mailbox lines.  A transport whose mailbox lines are ordinary
 * memory of this process's address space (shm) describes them here, one
 * entry per peer, and the inline wrappers below then read a line, write
 * a record and CAS a word with loads, stores and a CPU atomic where they
 * would call the transport: on shm those calls (mbox_in, notify, its FIFO
 * check, mbox_cas) were 106 of the 495 instructions of an 8-byte
 * fmpl_isend (callgrind, bench/bw -s 8).  The ops stay the definition: a
 * direct write is exactly what the transport's notify would do, and is
 * used only while it would do nothing else. */
typedef struct fmpl_tl_direct {
    volatile uint8_t *in;          /* the peer's slot for us at index 0; NULL:
                                      this peer goes through the ops */
    uint8_t *out;                  /* our slot for the peer at index 0 */
    /* set by the transport while an ordered record to the peer must go
     * through its notify (behind data still on its way: shm's FIFO);
     * cleared by the transport once that has ended */
    uint8_t queued;
} fmpl_tl_direct_t;

/* State of a split-phase hardware collective: zero it, then call the op
 * until it returns 1 (done) or an error; the caller makes progress and
 * checks liveness in between, so a collective never blocks inside the
 * transport. */
typedef struct fmpl_tl_coll {
    int started;
    uint64_t pos, base;            /* transport-defined */
} fmpl_tl_coll_t;

/* One piece of a list put. */
typedef struct fmpl_tl_iov {
    const void *src;
    size_t len;
    uint64_t roff;                 /* offset from the key's start */
} fmpl_tl_iov_t;

typedef struct fmpl_tl fmpl_tl_t;

/* One message of a collective handed to the transport's own engine
 * (ops->off_start): the engine runs the rounds in order, all of a
 * round's messages complete before the next round's start; between two
 * ranks, the k-th send of one to the other in a collective pairs with
 * the other's k-th receive from it. */
typedef struct fmpl_tl_xfer {
    int round;
    int send;                      /* 1 send buf, 0 receive into buf */
    int peer;
    void *buf;
    size_t len;
} fmpl_tl_xfer_t;

/* FMPL's own work that an emulated machine charges to its clock
 * (fmpl_tl_work(tl, kind, amount)): what the layers above do with their
 * CPU. */
enum { FMPL_TL_WORK_COPY = 1,      /* amount bytes copied by the CPU (spill, pack) */
       FMPL_TL_WORK_OP = 2,        /* amount bytes combined by a reduction */
       FMPL_TL_WORK_RECV = 3,      /* a receive saw its completion and ends */
       FMPL_TL_WORK_NS = 4,        /* amount ns of the emulated CPU: a model of
                                      another library's software (bench/sr8000) */
       FMPL_TL_WORK_PACK = 5 };    /* amount bytes of a face packed or unpacked
                                      where the data lives (a CPU copy, or a GPU
                                      kernel on emulated HA-PACS/TCA) */

/*
 * A transport that emulates another machine (tcw) keeps that machine's
 * time; tl->clock is NULL on every real transport.  With a clock,
 * fmpl_wtime() is the emulated time; every API call brackets itself with
 * enter/exit (fmpl_enter/fmpl_leave), so that the program's computation
 * between calls can be charged; progress first settles (waits until
 * everything due at the current time is known, so that what a poll sees
 * does not depend on this machine's scheduling); and a wait that finds
 * nothing to do lets the clock move on to the next event (or its
 * deadline) with idle instead of spinning.
 */
/*
 * The peers whose records to one index arrived (FMPL_TL_CAP_WATCH): a
 * layer above that must look at every peer's line of an index that is
 * seldom written (p2p's control index, cancel.c) asks the transport to
 * list its writers instead - O(writers), not O(ranks), a progress pass.
 * The transport notes each record it applies (fmpl_tl_watch_note); the
 * watcher takes the list and notes again a peer it must look at later.
 */
typedef struct fmpl_tl_watch {
    int idx;                       /* the index watched, -1: none */
    int n;                         /* peer[0 .. n-1] wrote it since the last take */
    int *peer;                     /* [size] */
    uint8_t *listed;               /* [size]: in peer[] */
} fmpl_tl_watch_t;

typedef struct fmpl_tl_clock {
    double (*now)(fmpl_tl_t *tl);                 /* seconds */
    void (*enter)(fmpl_tl_t *tl);
    void (*exit)(fmpl_tl_t *tl);
    /* 1: what is due now is known (progress may look); 0: it waited a
     * little for the others, call again */
    int  (*settle)(fmpl_tl_t *tl);
    /* nothing to do: move to the next event, or `deadline` (seconds of
     * this clock, < 0: none); 1 if the clock moved or something came */
    int  (*idle)(fmpl_tl_t *tl, double deadline);
    void (*work)(fmpl_tl_t *tl, int kind, size_t amount);
    /* this rank will kick nothing more (fmpl_finalize) */
    void (*finish)(fmpl_tl_t *tl);
} fmpl_tl_clock_t;

typedef struct fmpl_tl_ops {
    size_t size;                   /* sizeof(struct fmpl_tl_ops): ABI check */
    const char *name;

    /* lifecycle: open creates the mailbox area (npeers x nidx lines) and
     * exchanges addresses through the bootstrap; close releases all. */
    int  (*open)(fmpl_tl_t *tl);
    void (*close)(fmpl_tl_t *tl);

    /* memory */
    int  (*mem_reg)(fmpl_tl_t *tl, void *addr, size_t len, fmpl_tl_key_t *key);
    void (*mem_dereg)(fmpl_tl_t *tl, const fmpl_tl_key_t *key);   /* mem_reg's key */
    void *(*mem_alloc)(fmpl_tl_t *tl, size_t len);   /* memory peers write directly */
    int  (*mem_free)(fmpl_tl_t *tl, void *p);

    /* put: contiguous, block-stride, list.  `roff` is relative to key;
     * put's flags are FMPL_TL_PUT_*. */
    int  (*put)(fmpl_tl_t *tl, int peer, const void *src, size_t len,
                const fmpl_tl_key_t *key, uint64_t roff, unsigned flags,
                fmpl_tl_comp_t *comp);
    int  (*put_strided)(fmpl_tl_t *tl, int peer, const void *src, size_t blklen,
                        size_t nblk, size_t sstride, const fmpl_tl_key_t *key,
                        uint64_t roff, size_t dstride, fmpl_tl_comp_t *comp);
    int  (*put_iov)(fmpl_tl_t *tl, int peer, const fmpl_tl_iov_t *iov, int n,
                    const fmpl_tl_key_t *key, fmpl_tl_comp_t *comp);
    /* get: read len bytes at key+roff of `peer` into dst (synchronous) */
    int  (*get)(fmpl_tl_t *tl, int peer, void *dst, size_t len,
                const fmpl_tl_key_t *key, uint64_t roff);

    /* mailbox: local line written by `peer`; ordered notify; CAS */
    volatile void *(*mbox_in)(fmpl_tl_t *tl, int peer, int idx);
    int  (*notify)(fmpl_tl_t *tl, int peer, int idx, unsigned off,
                   const void *rec, unsigned len, unsigned flags, fmpl_tl_comp_t *comp);
    /* a put and then an ordered notify of its record, in one call: a
     * transport that can carry both in one hand-over (shm: one FIFO
     * chunk, data and record) saves the second; the others point at
     * fmpl_tl_put_notify_by_parts.  An error of the put returns before
     * the record is written; the caller then tells the peer itself. */
    int  (*put_notify)(fmpl_tl_t *tl, int peer, const void *src, size_t len,
                       const fmpl_tl_key_t *key, uint64_t roff, int idx, unsigned off,
                       const void *rec, unsigned reclen, fmpl_tl_comp_t *comp);
    int  (*mbox_cas)(fmpl_tl_t *tl, int peer, int idx, unsigned off, int outgoing,
                     uint64_t expect, uint64_t desired, uint64_t *old);

    /* progress: returns the number of events handled (0 when idle) */
    int  (*progress)(fmpl_tl_t *tl);
    /* is `peer` still alive as far as the transport can tell */
    int  (*peer_ok)(fmpl_tl_t *tl, int peer);

    /* optional hardware collectives over all processes, split-phase:
     * 1 when complete, 0 to be called again, or an error */
    int  (*barrier)(fmpl_tl_t *tl, fmpl_tl_coll_t *st);
    int  (*bcast)(fmpl_tl_t *tl, void *buf, size_t len, int root, fmpl_tl_coll_t *st);

    /* optional: a wait on `comp` gave up (a peer died) and its memory may
     * go - a stack frame, a request - while puts counted in it are still
     * on their way: their completions must not touch it.  NULL where the
     * transport keeps no pointer to a comp past the call that counted it */
    void (*forget)(fmpl_tl_t *tl, fmpl_tl_comp_t *comp);

    /* optional (NULL where the transport has none): an engine that runs
     * a nonblocking collective's messages for the rank while the rank
     * computes (dcfa: the host's agent, DCFA-MPI's offload).
     *   off_ok     would collective `what` ("bcast", "alltoall", ...) of
     *              `size` bytes a block among `peers` go to the engine?
     *              The same answer on every member: it may depend only on
     *              its arguments and on job-wide settings.
     *   off_start  hand the messages over; `chan` and `seq` name the
     *              collective on every member alike (its communicator, its
     *              number there); *h its handle.
     *   off_test   1 done, 0 under way, or an error; h is gone unless 0.
     *   off_cancel a wait on it gave up (a peer died); h is gone. */
    int  (*off_ok)(fmpl_tl_t *tl, const char *what, size_t size, const int *peers, int n);
    int  (*off_start)(fmpl_tl_t *tl, uint32_t chan, uint32_t seq, const fmpl_tl_xfer_t *x,
                      int n, void **h);
    int  (*off_test)(fmpl_tl_t *tl, void *h);
    void (*off_cancel)(fmpl_tl_t *tl, void *h);
} fmpl_tl_ops_t;

struct fmpl_tl {
    const fmpl_tl_ops_t *ops;
    unsigned caps;                 /* FMPL_TL_CAP_* */
    unsigned max_inline;           /* largest notify record (above 32: the
                                      slot runs on past the line, see above) */
    int rank, size, nidx;
    /* The job's, set before open and not the transport's: its bootstrap,
     * and where every rank runs (base/hosts.h: hosts, crowded CPUs). */
    struct fmpl_boot *boot;
    const struct fmpl_hosts *hosts;
    /* Set by open: peers reached through the kernel's network stack or a
     * provider's thread (libfabric tcp), which a process spinning on
     * every core starves: waits on them give the core away early.
     * kernel_any: some peer is; kernel_peer[size]: which (NULL: all). */
    int kernel_any;
    const uint8_t *kernel_peer;
    /* Set by open with FMPL_TL_CAP_GROUP_NEAR: group[r] numbers rank r's
     * near group (0 .. ngroups - 1, in order of first appearance). */
    const int *group;
    int ngroups;
    /* Set by open: the smallest message sender and receiver should copy
     * half each (p2p.h) unless FMPL_SPLIT_MIN says; 0: FMPL_SPLIT_MIN's
     * default, UINT64_MAX: never.  split_max: the largest, 0: no limit
     * (shm streams larger ones instead). */
    uint64_t split_min, split_max;
    /* Set by open, the same on every rank: the largest collective signal
     * written through a communicator's eager area (coll/signal.c) instead
     * of as a point-to-point message; 0: the collectives' default. */
    unsigned sig_eager;
    /* Set by open with FMPL_TL_CAP_HW_BCAST, the same on every rank: the
     * least size from which fmpl_bcast on FMPL_COMM_WORLD takes the
     * transport's broadcast; 0: never (only fmpl_hbcast does). */
    uint64_t hw_bcast_min;
    /* Set by open: the least size a collective should cut a large
     * message into, 0: its own choice.  Where a write pays a protocol by
     * its size (emulated GPU memory: copies up to 256 KiB, none above)
     * small segments pay it each. */
    uint64_t seg_min;
    /* Set by open where the transport knows them, 0 otherwise (the layers
     * above then choose as on shared memory): what one small message to
     * one more peer keeps the sender busy (its CPU, its NIC, a kick that
     * must complete), and the one-way time of a small message; a
     * collective chooses between one round to everybody and log2 n rounds
     * by them (coll.h); and a byte's time on a node's link, by which a
     * large broadcast chooses between a tree and scatter + allgather; and
     * with near groups, the one-way time inside a group, by which a small
     * collective chooses between leaders and one flat algorithm (hier.c) */
    double fanout_ns, oneway_ns, byte_ns, near_oneway_ns;
    fmpl_tl_watch_t watch;         /* fmpl_tl_watch */
    /* Set by open where mailbox lines are plain memory here (see
     * fmpl_tl_direct_t): direct[size], and the bytes between one index's
     * slot and the next; NULL: every call goes through the ops. */
    fmpl_tl_direct_t *direct;
    size_t direct_slot;
    /* Set by open when the transport emulates another machine's time. */
    const fmpl_tl_clock_t *clock;
    void *clock_priv;              /* the clock's own state */
    void *priv;                    /* the transport's own state */
    /* The wait policy's (wait.c): the last wait that gave up, when
     * (fmpl_rtime) and after how long. */
    double gave_up_at, gave_up_after;
};

/* Stubs for unsupported operations. */
int fmpl_tl_unsupported_put_strided(fmpl_tl_t *, int, const void *, size_t, size_t,
                                    size_t, const fmpl_tl_key_t *, uint64_t, size_t,
                                    fmpl_tl_comp_t *);
int fmpl_tl_unsupported_cas(fmpl_tl_t *, int, int, unsigned, int, uint64_t,
                            uint64_t, uint64_t *);
int fmpl_tl_unsupported_get(fmpl_tl_t *, int, void *, size_t, const fmpl_tl_key_t *,
                            uint64_t);
int fmpl_tl_unsupported_barrier(fmpl_tl_t *, fmpl_tl_coll_t *);
int fmpl_tl_unsupported_bcast(fmpl_tl_t *, void *, size_t, int, fmpl_tl_coll_t *);

/* Portable fallback for put_strided/put_iov in terms of put. */
int fmpl_tl_put_strided_by_put(fmpl_tl_t *, int, const void *, size_t, size_t, size_t,
                               const fmpl_tl_key_t *, uint64_t, size_t, fmpl_tl_comp_t *);
int fmpl_tl_put_iov_by_put(fmpl_tl_t *, int, const fmpl_tl_iov_t *, int,
                           const fmpl_tl_key_t *, fmpl_tl_comp_t *);
int fmpl_tl_put_notify_by_parts(fmpl_tl_t *, int, const void *, size_t, const fmpl_tl_key_t *,
                                uint64_t, int, unsigned, const void *, unsigned,
                                fmpl_tl_comp_t *);

/* Waits inside a transport, and the one wait policy: transport/wait.h. */

/* The routing decision, in one place (transport.c).  `tl` has ops == NULL
 * and rank, size, nidx, boot and hosts set.  Collective over the job:
 * opens the transport that serves this job - shm when every rank is on
 * this host, route (shm to the peers on this host, ofi to the others)
 * when they are not, or the one FMPL_TRANSPORT names for every peer. */
int  fmpl_tl_open(fmpl_tl_t *tl);
void fmpl_tl_close(fmpl_tl_t *tl);

extern const fmpl_tl_ops_t fmpl_shm_ops;
extern const fmpl_tl_ops_t fmpl_tcw_ops;   /* the SR8000, emulated: FMPL_TRANSPORT=tcw */
extern const fmpl_tl_ops_t fmpl_peach2_ops; /* a PEACH2 sub-cluster, emulated:
                                              FMPL_TRANSPORT=peach2 */
extern const fmpl_tl_ops_t fmpl_tca_ops;   /* HA-PACS/TCA, emulated: PEACH2 sub-clusters
                                              and InfiniBand, FMPL_TRANSPORT=tca */
extern const fmpl_tl_ops_t fmpl_ib_ops;    /* an InfiniBand cluster, emulated: FMPL_TRANSPORT=ib */
#ifdef FMPL_HAVE_OFI
extern const fmpl_tl_ops_t fmpl_ofi_ops;   /* libfabric: FMPL_TRANSPORT=ofi */
extern const fmpl_tl_ops_t fmpl_route_ops; /* per peer: shm on this host, ofi off it */
#endif
#ifdef FMPL_HAVE_VERBS
extern const fmpl_tl_ops_t fmpl_dcfa_ops;  /* InfiniBand verbs: FMPL_TRANSPORT=dcfa */
#endif

/* Inline wrappers: the only way the upper layers touch a transport. */
/* Is `peer` (-1: any) reached through the kernel's network stack? */
static inline int fmpl_tl_kernel(const fmpl_tl_t *tl, int peer)
{
    return tl->kernel_any && (peer < 0 || !tl->kernel_peer || tl->kernel_peer[peer]);
}

static inline int fmpl_tl_put(fmpl_tl_t *tl, int peer, const void *src, size_t len,
                              const fmpl_tl_key_t *key, uint64_t roff, unsigned flags,
                              fmpl_tl_comp_t *c)
{ return tl->ops->put(tl, peer, src, len, key, roff, flags, c); }
/* The direct entry of `peer`, or NULL (fmpl_tl_direct_t). */
static inline const fmpl_tl_direct_t *fmpl_tl_direct(const fmpl_tl_t *tl, int peer)
{
    return tl->direct && tl->direct[peer].in ? &tl->direct[peer] : NULL;
}
/* A record written as notify writes it (above): the bytes after the first
 * word, then the word with release order. */
static inline void fmpl_tl_line_write(uint8_t *line, unsigned off, const void *rec,
                                      unsigned len)
{
    const uint8_t *r = rec;
    if (len > 8)
        memcpy(line + off + 8, r + 8, len - 8);
    uint64_t word;
    memcpy(&word, r, 8);
    atomic_store_explicit((_Atomic uint64_t *)(void *)(line + off), word,
                          memory_order_release);
}
static inline int fmpl_tl_notify(fmpl_tl_t *tl, int peer, int idx, unsigned off,
                                 const void *rec, unsigned len, unsigned flags,
                                 fmpl_tl_comp_t *comp)
{
    const fmpl_tl_direct_t *d = fmpl_tl_direct(tl, peer);
    if (d && (!d->queued || (flags & FMPL_TL_NOTIFY_UNORDERED)) && len >= 8 &&
        off + len <= tl->direct_slot) {
        fmpl_tl_line_write(d->out + (size_t)idx * tl->direct_slot, off, rec, len);
        return FMPL_SUCCESS;
    }
    return tl->ops->notify(tl, peer, idx, off, rec, len, flags, comp);
}
/* CAS on a record word in plain memory (mbox_cas where the line is ours
 * to touch): FMPL_SUCCESS, or FMPL_ERR_BUSY with what was there in *old */
static inline int fmpl_tl_word_cas(volatile void *word, uint64_t expect, uint64_t desired,
                                   uint64_t *old)
{
    uint64_t e = expect;
    int ok = atomic_compare_exchange_strong_explicit(
        (_Atomic uint64_t *)(uintptr_t)word, &e, desired,
        memory_order_acq_rel, memory_order_acquire);
    if (old)
        *old = e;
    return ok ? FMPL_SUCCESS : FMPL_ERR_BUSY;
}
/* CAS on a record word: outgoing = our line for `peer`, else its line for us */
static inline int fmpl_tl_mbox_cas(fmpl_tl_t *tl, int peer, int idx, unsigned off,
                                   int outgoing, uint64_t expect, uint64_t desired,
                                   uint64_t *old)
{
    const fmpl_tl_direct_t *d = fmpl_tl_direct(tl, peer);
    if (!d || off + 8 > tl->direct_slot)
        return tl->ops->mbox_cas(tl, peer, idx, off, outgoing, expect, desired, old);
    volatile uint8_t *line = (outgoing ? (volatile uint8_t *)d->out : d->in) +
                             (size_t)idx * tl->direct_slot;
    return fmpl_tl_word_cas(line + off, expect, desired, old);
}
static inline int fmpl_tl_put_notify(fmpl_tl_t *tl, int peer, const void *src, size_t len,
                                     const fmpl_tl_key_t *key, uint64_t roff, int idx,
                                     unsigned off, const void *rec, unsigned reclen,
                                     fmpl_tl_comp_t *comp)
{ return tl->ops->put_notify(tl, peer, src, len, key, roff, idx, off, rec, reclen, comp); }
static inline volatile void *fmpl_tl_mbox_in(fmpl_tl_t *tl, int peer, int idx)
{
    const fmpl_tl_direct_t *d = fmpl_tl_direct(tl, peer);
    return d ? d->in + (size_t)idx * tl->direct_slot : tl->ops->mbox_in(tl, peer, idx);
}
static inline int fmpl_tl_put_strided(fmpl_tl_t *tl, int peer, const void *src, size_t blklen,
                                      size_t nblk, size_t sstride, const fmpl_tl_key_t *key,
                                      uint64_t roff, size_t dstride, fmpl_tl_comp_t *c)
{
    /* blocks back to back on both sides (a packed copy into a contiguous
     * receive): one transfer, not one per block */
    if (sstride == blklen && dstride == blklen)
        return tl->ops->put(tl, peer, src, blklen * nblk, key, roff, 0, c);
    return tl->ops->put_strided(tl, peer, src, blklen, nblk, sstride, key, roff, dstride, c);
}
static inline int fmpl_tl_put_iov(fmpl_tl_t *tl, int peer, const fmpl_tl_iov_t *iov, int n,
                                  const fmpl_tl_key_t *key, fmpl_tl_comp_t *c)
{ return tl->ops->put_iov(tl, peer, iov, n, key, c); }
static inline int fmpl_tl_get(fmpl_tl_t *tl, int peer, void *dst, size_t len,
                              const fmpl_tl_key_t *key, uint64_t roff)
{ return tl->ops->get(tl, peer, dst, len, key, roff); }
static inline int fmpl_tl_progress(fmpl_tl_t *tl)
{ return tl->ops->progress(tl); }
static inline int fmpl_tl_mem_reg(fmpl_tl_t *tl, void *addr, size_t len, fmpl_tl_key_t *k)
{ return tl->ops->mem_reg(tl, addr, len, k); }
static inline void fmpl_tl_mem_dereg(fmpl_tl_t *tl, const fmpl_tl_key_t *k)
{ tl->ops->mem_dereg(tl, k); }
static inline void *fmpl_tl_mem_alloc(fmpl_tl_t *tl, size_t len)
{ return tl->ops->mem_alloc(tl, len); }
static inline int fmpl_tl_mem_free(fmpl_tl_t *tl, void *p)
{ return tl->ops->mem_free(tl, p); }
static inline int fmpl_tl_peer_ok(fmpl_tl_t *tl, int peer)
{ return tl->ops->peer_ok(tl, peer); }
/* a wait on comp gave up with puts still counted in it (ops->forget) */
static inline void fmpl_tl_forget(fmpl_tl_t *tl, fmpl_tl_comp_t *comp)
{
    if (tl->ops->forget && comp->pending > 0)
        tl->ops->forget(tl, comp);
}
/* the offload engine (ops->off_*) */
static inline int fmpl_tl_off_ok(fmpl_tl_t *tl, const char *what, size_t size,
                                 const int *peers, int n)
{ return tl->ops->off_ok ? tl->ops->off_ok(tl, what, size, peers, n) : 0; }
/* (the three below only for what off_ok took) */
static inline int fmpl_tl_off_start(fmpl_tl_t *tl, uint32_t chan, uint32_t seq,
                                    const fmpl_tl_xfer_t *x, int n, void **h)
{ return tl->ops->off_start(tl, chan, seq, x, n, h); }
static inline int fmpl_tl_off_test(fmpl_tl_t *tl, void *h)
{ return tl->ops->off_test(tl, h); }
static inline void fmpl_tl_off_cancel(fmpl_tl_t *tl, void *h)
{ tl->ops->off_cancel(tl, h); }
/* the hardware collectives (FMPL_TL_CAP_HW_*), split-phase */
static inline int fmpl_tl_barrier(fmpl_tl_t *tl, fmpl_tl_coll_t *st)
{ return tl->ops->barrier(tl, st); }
static inline int fmpl_tl_bcast(fmpl_tl_t *tl, void *buf, size_t len, int root,
                                fmpl_tl_coll_t *st)
{ return tl->ops->bcast(tl, buf, len, root, st); }
static inline const char *fmpl_tl_name(const fmpl_tl_t *tl)
{ return tl->ops->name; }
/* FMPL's own work, for a transport with a clock (a no-op elsewhere) */
static inline void fmpl_tl_work(fmpl_tl_t *tl, int kind, size_t amount)
{
    if (tl->clock)
        tl->clock->work(tl, kind, amount);
}

/* Watch `idx` (FMPL_SUCCESS), or FMPL_ERR_UNSUPPORTED without
 * FMPL_TL_CAP_WATCH: then every peer's line must be looked at. */
int fmpl_tl_watch(fmpl_tl_t *tl, int idx);

static inline void fmpl_tl_watch_note(fmpl_tl_t *tl, int peer, int idx)
{
    fmpl_tl_watch_t *w = &tl->watch;
    if (idx == w->idx && w->peer && !w->listed[peer]) {
        w->listed[peer] = 1;
        w->peer[w->n++] = peer;
    }
}

/* Take the list: *peers valid until the next note; how many. */
static inline int fmpl_tl_watch_take(fmpl_tl_t *tl, int *peers, int max)
{
    fmpl_tl_watch_t *w = &tl->watch;
    int n = w->n < max ? w->n : max;
    for (int i = 0; i < n; i++) {
        peers[i] = w->peer[w->n - 1 - i];
        w->listed[peers[i]] = 0;
    }
    w->n -= n;
    return n;
}

#endif
