/*
 * emu.h - the machinery every emulated fabric shares (tcw, and the PEACH2
 * fabrics after it): an engine that moves transfers through a topology of
 * links, a cost model's time, and a virtual clock per rank.
 *
 * Each rank is a process of this machine; an emulated fabric is FMPL
 * running on another machine, so the same p2p, collective and BLACS code
 * runs on it.  A fabric describes its machine (nodes, channels, links,
 * routes, costs) and drives this engine; it never looks at this machine's
 * clock.
 *
 * Data and time travel separately.
 *  - BYTES move at once, in real time: the kicking process copies them
 *    into the destination's memory (cross-memory attach) during the kick,
 *    so its source may change as soon as the kick returns, and nothing is
 *    ever copied twice.  Nobody looks at a receive buffer before the record
 *    that completes it, so early bytes are harmless.
 *  - What a peer OBSERVES - mailbox records (matching-area headers,
 *    completion flags), local completions, hardware-collective signals -
 *    is an ENTRY in the observer's inbox with a modeled time, and it
 *    becomes visible only when the observer's clock reaches that time.
 *
 * The engine (emu_engine.c).  A kick puts a transfer on a CHANNEL (an
 * SR8000 NIA, a PEACH2 DMA channel): a server that sends its transfers
 * one after the other, in order of the time they were kicked.  A transfer
 * is cut into PACKETS; each packet crosses the links of its route, each
 * link a server of its own bandwidth shared by every packet that crosses
 * it (contention), with a latency per hop (cut-through: the head moves on
 * while the tail is still behind).  The last packet's tail at the
 * destination, plus the time to write memory, is when the transfer's
 * entry becomes visible there; an acknowledgement later, the source's
 * completion.  Events are processed in modeled-time order (ties by
 * channel, then rank and kick number), never in the order things
 * happened on this machine.
 *
 * Virtual time (emu_clock.c, emu_sync.c).  With the model on, a rank's
 * clock advances by (1) the CPU time the program used between FMPL calls,
 * times a scale, (2) the modeled cost of what FMPL itself does (call
 * overheads, kicks, copies), charged by the fabric, and (3) waiting: a
 * blocked rank's clock jumps to the next thing it can observe.  So that
 * the outcome does not depend on this machine's scheduling, observation is
 * conservative (Chandy-Misra-Bryant, as SimGrid and LogGOPSim
 * synchronise): every rank publishes a lower bound on the time of anything
 * it may still kick (its clock while it runs; the earliest entry in its
 * inbox, or a deadline, while it is blocked; never once it has left).  Let
 * K be the least bound: it never falls (an entry reaches a blocked rank at
 * K + LOOKAHEAD at the earliest).  A kick's event is at its own time, so
 * every engine event before K is final and the engine may process it; a
 * kick's entries appear at least LOOKAHEAD after it (the fabric's least
 * start-up plus write-back, and the least latency of its hardware
 * collectives), so a rank may observe its inbox up to a time before
 * K + LOOKAHEAD - and, while packets of earlier kicks wait in the engine,
 * no later than the next of them leaves its channel (emu_sync.c).  A rank further ahead waits (in real time) for the others;
 * the rank holding K back can always go on.  Modeled times are then a
 * function of the program alone, whatever the load.
 *
 * All shared state lives in one segment created by rank 0 and mapped by
 * every rank, under one process-shared robust mutex: emulation is not the
 * fast path, being exact is.  Waiters sleep on a futex, so 16 emulated
 * nodes need no more than this machine's 2 cores.
 *
 * Without the model (FMPL_TCW_MODEL=0 and the like) the same engine runs
 * with every cost zero and no waiting: a functional emulation, fast.
 */
#ifndef FMPL_EMU_H
#define FMPL_EMU_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "transport/transport.h"

/* Modeled time in picoseconds: 2^63 ps is 106 days. */
typedef int64_t fmpl_emu_time_t;
#define FMPL_EMU_NEVER INT64_MAX
#define FMPL_EMU_US(x) ((fmpl_emu_time_t)((x) * 1e6 + 0.5))
#define FMPL_EMU_NS(x) ((fmpl_emu_time_t)((x) * 1e3 + 0.5))

#define FMPL_EMU_PATH_MAX 8        /* links on one route */
#define FMPL_EMU_PAYLOAD 64        /* bytes an entry carries */

/* A route: the links a packet crosses, in order, and its fixed costs. */
typedef struct fmpl_emu_path {
    int n;                         /* links, at least one */
    int32_t link[FMPL_EMU_PATH_MAX];
    fmpl_emu_time_t lat[FMPL_EMU_PATH_MAX];   /* the head's latency to link k
                                                 from the previous one */
    fmpl_emu_time_t start;         /* a transfer's start-up on its channel,
                                      from its ready time: overlaps the
                                      transfer before it (prefetch) */
    fmpl_emu_time_t gap;           /* the channel's own time before the first
                                      packet, after the transfer before it
                                      (a descriptor it processes): never hidden */
    fmpl_emu_time_t to_mem;        /* tail at the last link -> visible in memory */
    fmpl_emu_time_t ack;           /* -> the source's completion, after the
                                      transfer is visible or, with comp_link >= 0,
                                      after its tail has crossed link comp_link
                                      (a DMA engine that completes when its
                                      last posted write leaves) */
    int32_t comp_link;             /* -1, or an index into link[] */
    uint32_t packet;               /* payload bytes a packet on this route,
                                      0: the machine's (fmpl_emu_config_t) -
                                      two networks of one machine differ */
} fmpl_emu_path_t;

/* Entry kinds in an inbox. */
enum {
    FMPL_EMU_E_REC = 1,            /* a record for the fabric to apply (mailbox line) */
    FMPL_EMU_E_COMP = 2,           /* local completion: --comp->pending */
    FMPL_EMU_E_SIG = 3,            /* a fabric signal (hardware collectives) */
};

/* What an entry carries to its observer. */
typedef struct fmpl_emu_msg {
    uint32_t kind;                 /* FMPL_EMU_E_* */
    int32_t src;                   /* the rank that caused it */
    uint32_t a, b;                 /* REC: index and offset; SIG: fabric-defined */
    uint32_t len;                  /* payload bytes */
    uint32_t pad;
    uint64_t comp;                 /* COMP: the fmpl_tl_comp_t in the observer */
    int32_t status;                /* COMP: FMPL_SUCCESS or the transfer's error */
    uint32_t pad2;
    uint8_t payload[FMPL_EMU_PAYLOAD];
} fmpl_emu_msg_t;

/* A transfer a rank kicks. */
typedef struct fmpl_emu_xfer {
    int chan;                      /* channel (0 .. nchan - 1) */
    fmpl_emu_time_t ready;         /* it may start then (the kick's time + its costs) */
    uint64_t bytes;                /* on the wire */
    fmpl_emu_path_t path;
    int dst;                       /* rank whose inbox gets `msg`, -1: none */
    fmpl_emu_msg_t msg;
    fmpl_tl_comp_t *comp;          /* counted until the source's completion, or NULL */
} fmpl_emu_xfer_t;

/* The machine a fabric describes when it opens the engine. */
typedef struct fmpl_emu_config {
    const char *name;              /* "tcw": in messages */
    int model;                     /* timing model on */
    int nchan;                     /* channels over all nodes */
    int nlinks;
    const fmpl_emu_time_t *link_ps_per_byte;   /* [nlinks] */
    uint32_t packet;               /* payload bytes per packet */
    fmpl_emu_time_t lookahead;     /* least time from a kick (or a hardware
                                      collective's last arrival) to an entry */
    double cpu_scale;              /* the program's CPU time -> modeled time */
    int64_t cpu_threshold;         /* ns: shorter computations are not charged */
    size_t fabric_bytes;           /* shared area the fabric keeps for itself */
    int max_xfers;                 /* transfers on their way at once (all ranks) */
    int max_entries;               /* inbox entries at once (all ranks) */
    int pair_order;                /* a record from one rank to another is not
                                      seen before one whose transfer left its
                                      channel earlier, whatever route each took
                                      (tca's two networks: a record on the fast
                                      one waits for one already on its way on
                                      the slow one, as a fence would make it) */
    uint64_t signature;            /* the fabric's settings: every rank must agree */
    const char *settings;          /* their names, for the message when they do not */
} fmpl_emu_config_t;

typedef struct fmpl_emu fmpl_emu_t;

/* Apply an entry the observer's clock has reached (REC and SIG; COMP is
 * the engine's).  Called with the engine unlocked, in time order. */
typedef void (*fmpl_emu_apply_fn)(void *ctx, const fmpl_emu_msg_t *m);

/* emu_seg.c: collective over the job (rank 0 creates, every rank maps,
 * through the bootstrap).  Returns an FMPL code, logged. */
int  fmpl_emu_open(fmpl_tl_t *tl, const fmpl_emu_config_t *cfg, fmpl_emu_apply_fn apply,
                   void *ctx, fmpl_emu_t **out);
/* This rank leaves the job: it kicks nothing more (lower bound: never). */
void fmpl_emu_leave_job(fmpl_emu_t *e);
void fmpl_emu_close(fmpl_emu_t *e);
/* The fabric's own shared area (cfg.fabric_bytes, zeroed by rank 0), and
 * the engine lock that protects it.  fmpl_emu_lock: 0, or -1 (logged) when
 * FMPL_PEER_TIMEOUT passed while another rank held it: a rank stopped
 * inside the engine holds everybody's clock, and the caller gives up what
 * it was doing (FMPL_ERR_PEER), as any wait on a silent peer does. */
void *fmpl_emu_fabric(fmpl_emu_t *e);
int  fmpl_emu_lock(fmpl_emu_t *e);
/* Completions still to come for `comp` (a fmpl_tl_comp_t of this rank)
 * are not to touch it: its wait gave up. */
void fmpl_emu_forget(fmpl_emu_t *e, const void *comp);
void fmpl_emu_unlock(fmpl_emu_t *e);
pid_t fmpl_emu_pid(const fmpl_emu_t *e, int rank);
/* An address of ours a peer may read to check it can reach our memory
 * (published in the engine's segment), and a rank's. */
void     fmpl_emu_set_probe_addr(fmpl_emu_t *e, uint64_t addr);
uint64_t fmpl_emu_probe_addr(const fmpl_emu_t *e, int rank);

/* emu_clock.c: the rank's virtual clock. */
fmpl_emu_time_t fmpl_emu_now(fmpl_emu_t *e);      /* includes the program's CPU time so far */
void fmpl_emu_charge(fmpl_emu_t *e, fmpl_emu_time_t t);   /* FMPL's own modeled work */
int  fmpl_emu_enter(fmpl_emu_t *e);                /* an FMPL call begins: 1 if outermost */
void fmpl_emu_exit(fmpl_emu_t *e);                 /* ... and ends */
int  fmpl_emu_model(const fmpl_emu_t *e);

/* emu_engine.c */
/* Kick a transfer: at the rank's current clock, it waits on its channel
 * from x->ready on.  Returns FMPL_SUCCESS or FMPL_ERR_NOMEM (logged) when
 * the engine's tables are full. */
int  fmpl_emu_kick(fmpl_emu_t *e, const fmpl_emu_xfer_t *x);
/* Put an entry into `dst`'s inbox at time t (t >= now + lookahead: the
 * hardware collectives).  Called with the engine locked. */
int  fmpl_emu_post_locked(fmpl_emu_t *e, int dst, fmpl_emu_time_t t, const fmpl_emu_msg_t *m);
/* The lower bound K (emu.h) as far as `need` matters: ranks that compute
 * are looked at more closely (their CPU time so far) only when their
 * published bound would hold `need` back.  Locked. */
fmpl_emu_time_t fmpl_emu_bound_locked(fmpl_emu_t *e, fmpl_emu_time_t need);

/* emu_sync.c: observation. */
/* Deliver the entries due at the rank's clock.  Returns how many, or -1
 * when they are not all known yet (peers behind: call again; it has
 * waited a little). */
int  fmpl_emu_poll(fmpl_emu_t *e);
/* The rank found nothing to do: advance its clock to the next entry it
 * can observe, or to `deadline` (FMPL_EMU_NEVER: none), whichever comes
 * first, when that is known; deliver.  Returns 1 if the clock moved or
 * something was delivered, 0 after waiting a little (at most ~1 ms of
 * real time) for the others. */
int  fmpl_emu_idle(fmpl_emu_t *e, fmpl_emu_time_t deadline);
/* Is `rank` still there (its process exists and has not left)? */
int  fmpl_emu_alive(fmpl_emu_t *e, int rank);

#endif
