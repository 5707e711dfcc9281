/*
 * emu_int.h - the engine's shared segment and private state (private to
 * src/transport/emu/).
 *
 * Segment layout (one per job, created by rank 0, offsets in the header):
 *   header         sizes, the lock, the futex word
 *   ranks  [size]  what each rank publishes (emu_rank_t)
 *   chans  [nchan] channel state
 *   heap   [nchan] the channels by their next packet (emu_engine.c)
 *   links  [nlinks] when each link is reserved (emu_link.c)
 *   ps     [nlinks] picoseconds per byte of each link
 *   xfers  [max_xfers] transfers on their way (pool)
 *   ents   [max_entries] inbox entries (pool)
 *   bounds [2 x leaves] the bound tree, needs [2 x leaves] the sleepers'
 *                  tree (emu_bound.c)
 *   pairs  [size][size] the last record's time from each rank to each
 *                  (pair_order only)
 *   fabric         the fabric's own shared area
 * Lists are indices into the pools (-1: none): a channel's queue and a
 * rank's inbox are doubly linked lists kept sorted by time, inserted from
 * the tail (the common case: in order).
 */
#ifndef FMPL_EMU_INT_H
#define FMPL_EMU_INT_H

#include <pthread.h>
#include <stdatomic.h>

#include "transport/emu/emu.h"

#define FMPL_EMU_MAGIC 0x464d504c454d5531ull   /* "FMPLEMU1" */

/* A rank's state, as the others see it. */
enum { EMU_RUN = 0,       /* inside FMPL: lb = its clock */
       EMU_USER = 1,      /* in the program: lb = clock at exit (+ CPU since) */
       EMU_BLOCKED = 2,   /* waiting: lb = min(first inbox entry, deadline) */
       EMU_GONE = 3 };    /* left the job: kicks nothing more */

typedef struct emu_rank {
    _Atomic int64_t lb;            /* lower bound on anything it may still kick */
    _Atomic int32_t state;
    int32_t pid;
    _Atomic int64_t cpu_exit;      /* USER: its process CPU time (ns) at exit,
                                      INT64_MAX while it is being read */
    int64_t cpu_overhead;          /* what reading its CPU clock costs it (ns) */
    int64_t deadline;              /* BLOCKED: its deadline */
    int64_t vt;                    /* BLOCKED: its clock (it wakes no earlier) */
    uint64_t probe_addr;           /* an address of its memory peers may read */
    _Atomic uint32_t bell;         /* futex word: rung when it may go on */
    _Atomic int32_t sleeping;      /* it sleeps on bell */
    int64_t need;                  /* ... until the bound passes this (NEVER: an entry) */
    uint64_t kicks;                /* kicks so far: the tie-break of its transfers */
    uint64_t posts;                /* entries posted to it: the tie-break in its inbox */
    int32_t in_head, in_tail;      /* inbox, sorted by (t, src, seq) */
    int32_t coming[2];             /* transfers whose entries come here (EMU_FOR_*) */
    int32_t in_count;
    int32_t pad;
    uint8_t cacheline_pad[64];
} emu_rank_t;

typedef struct emu_chan {
    fmpl_emu_time_t free_at;       /* when it may start its next packet */
    int32_t head, tail;            /* waiting transfers, by (ready, src, seq) */
    int32_t cur;                   /* the transfer it is sending, -1 */
    int32_t at;                    /* its place in the channel heap */
    int32_t pad;
} emu_chan_t;

/* A link's calendar: the intervals it is reserved, sorted (emu_link.c). */
#define EMU_LINK_CAL 16
typedef struct emu_link {
    int32_t n, pad;
    struct { fmpl_emu_time_t start, end; } iv[EMU_LINK_CAL];
} emu_link_t;

/* A transfer on its way is in the list of each rank its entries go to
 * (the destination's record, the source's completion): what a rank must
 * wait for before it looks at its inbox (emu_sync.c). */
enum { EMU_FOR_DST = 0, EMU_FOR_SRC = 1 };

typedef struct emu_xfer_rec {
    int32_t next, prev;            /* channel queue, or the free list */
    int32_t src, dst;
    int32_t chan;
    int32_t pad;
    int32_t fnext[2], fprev[2];    /* [EMU_FOR_*]: in that rank's list */
    uint64_t seq;
    fmpl_emu_time_t ready;
    uint64_t bytes, sent;
    fmpl_emu_time_t tail;          /* latest tail of its packets so far */
    fmpl_emu_time_t ctail;         /* ... on path.link[path.comp_link] */
    fmpl_emu_path_t path;
    uint64_t comp;                 /* fmpl_tl_comp_t * in the source, 0: none */
    fmpl_emu_msg_t msg;
} emu_xfer_rec_t;

typedef struct emu_ent {
    int32_t next, prev;            /* inbox, or the free list */
    int32_t src;
    int32_t pad;
    uint64_t seq;
    fmpl_emu_time_t t;
    fmpl_emu_msg_t msg;
} emu_ent_t;

typedef struct emu_shared {
    uint64_t magic;
    int32_t size, nchan, nlinks, max_xfers, max_entries, model;
    uint32_t packet;
    int32_t pair_order;
    uint64_t signature;
    fmpl_emu_time_t lookahead;
    double cpu_scale;
    int64_t cpu_threshold;
    uint64_t seg_len, ranks_off, chans_off, links_off, ps_off, xfers_off, ents_off,
             bounds_off, needs_off, heap_off, pairs_off, fabric_off, fabric_len;
    uint64_t leaves;               /* of the trees: a power of two >= size */
    pthread_mutex_t lock;
    _Atomic int32_t lock_holder;   /* the rank inside, -1: none (for a message) */
    _Atomic int32_t broken;        /* 1 + a rank that died inside, 0: none */
    int32_t xfer_free, ent_free;   /* pool free lists */
    int32_t xfers_used, ents_used; /* for the "tables full" message */
} emu_shared_t;

struct fmpl_emu {
    fmpl_tl_t *tl;
    emu_shared_t *sh;              /* the mapped segment */
    size_t len;
    int fd;                        /* rank 0: the memfd */
    int rank;
    int model;
    fmpl_emu_apply_fn apply;
    void *ctx;
    /* the clock */
    fmpl_emu_time_t vt;            /* this rank's clock */
    int64_t cpu_exit;              /* process CPU time (ns) when FMPL was left */
    int64_t cpu_overhead;          /* what reading it costs */
    int depth;                     /* nested enter/exit */
    int started;                   /* fmpl_init's first call began: the program's
                                      time counts from there (emu_clock.c) */
    clockid_t *cpu_clock;          /* [size]: the peers' process CPU clocks */
    /* delivery scratch */
    fmpl_emu_msg_t *due;
    int due_cap;
    double warn_t;                 /* real time of the last "waiting for rank" note */
    double laggard_t;              /* ... of the last look for dead laggards */
    long wait_ns;                  /* the futex time-out, grows while nothing moves */
    uint32_t wait_seen;
    fmpl_emu_time_t wait_need;
    int lock_stuck;                /* the lock timed out once: try, never wait */
    int broken_told;               /* said that the machine is lost (emu_seg.c) */
};

static inline emu_rank_t *emu_ranks(emu_shared_t *sh)
{
    return (emu_rank_t *)(void *)((uint8_t *)sh + sh->ranks_off);
}
static inline emu_chan_t *emu_chans(emu_shared_t *sh)
{
    return (emu_chan_t *)(void *)((uint8_t *)sh + sh->chans_off);
}
static inline int32_t *emu_heap(emu_shared_t *sh)
{
    return (int32_t *)(void *)((uint8_t *)sh + sh->heap_off);
}
static inline emu_link_t *emu_links(emu_shared_t *sh)
{
    return (emu_link_t *)(void *)((uint8_t *)sh + sh->links_off);
}
static inline fmpl_emu_time_t *emu_ps(emu_shared_t *sh)
{
    return (fmpl_emu_time_t *)(void *)((uint8_t *)sh + sh->ps_off);
}
static inline emu_xfer_rec_t *emu_xfers(emu_shared_t *sh)
{
    return (emu_xfer_rec_t *)(void *)((uint8_t *)sh + sh->xfers_off);
}
static inline emu_ent_t *emu_ents(emu_shared_t *sh)
{
    return (emu_ent_t *)(void *)((uint8_t *)sh + sh->ents_off);
}
static inline fmpl_emu_time_t *emu_bounds(emu_shared_t *sh)
{
    return (fmpl_emu_time_t *)(void *)((uint8_t *)sh + sh->bounds_off);
}
static inline fmpl_emu_time_t *emu_needs(emu_shared_t *sh)
{
    return (fmpl_emu_time_t *)(void *)((uint8_t *)sh + sh->needs_off);
}
static inline fmpl_emu_time_t *emu_pairs(emu_shared_t *sh)
{
    return (fmpl_emu_time_t *)(void *)((uint8_t *)sh + sh->pairs_off);
}

/* emu_clock.c */
int64_t fmpl_emu_cpu_ns(void);
int64_t fmpl_emu_cpu_overhead(void);
/* `cpu` ns of the program's CPU time as modeled time (threshold, scale) */
fmpl_emu_time_t fmpl_emu_cpu_charge(const emu_shared_t *sh, int64_t cpu);
/* publish our lower bound (RUN: our clock) and wake waiters */
void fmpl_emu_publish(fmpl_emu_t *e, int state, fmpl_emu_time_t lb);

/* emu_engine.c (locked) */
void fmpl_emu_heap_init(emu_shared_t *sh);
/* Process every engine event that is known (before the bound + lookahead);
 * returns the transfers completed. */
int fmpl_emu_run_locked(fmpl_emu_t *e);
/* A fault for the tests (FMPL_EMU_DIE, emu_seg.c): this process kills
 * itself inside the engine once it has run the n-th transfer to its end -
 * told, but still its channel's - as a rank killed there at random may. */
void fmpl_emu_die_after(long n);
/* the earliest an entry of a transfer on its way may reach rank r
 * (whose last packet may leave then), FMPL_EMU_NEVER: none comes */
fmpl_emu_time_t fmpl_emu_coming_locked(emu_shared_t *sh, int r);
/* first entry's time in rank r's inbox, FMPL_EMU_NEVER when empty */
fmpl_emu_time_t fmpl_emu_inbox_first(emu_shared_t *sh, int r);
/* take rank r's entries up to t into e->due; returns how many */
int fmpl_emu_inbox_take_locked(fmpl_emu_t *e, fmpl_emu_time_t t);

/* emu_link.c: reserve d on link L for a packet that reaches it at a,
 * the engine's current event being at `now`; returns the start */
fmpl_emu_time_t fmpl_emu_link_reserve(emu_link_t *L, fmpl_emu_time_t now, fmpl_emu_time_t a,
                                      fmpl_emu_time_t d);

/* emu_bound.c: tournament trees, 1-based, leaves at [leaves .. 2 x leaves) */
size_t fmpl_emu_tree_leaves(int size);
void fmpl_emu_tree_init(fmpl_emu_time_t *t, size_t leaves, int size, fmpl_emu_time_t v);
void fmpl_emu_tree_set(fmpl_emu_time_t *t, size_t leaves, int r, fmpl_emu_time_t v);
/* rank r's state and published bound (every change goes through here) */
void fmpl_emu_bound_set_locked(emu_shared_t *sh, int r, int state, fmpl_emu_time_t lb);
/* up to max ranks (not us) whose published bound is at or below need */
int  fmpl_emu_bound_below_locked(fmpl_emu_t *e, fmpl_emu_time_t need, int *out, int max);
/* rank r sleeps until K passes need; K may have moved: wake who may go on */
void fmpl_emu_sleeper_set_locked(emu_shared_t *sh, int r, fmpl_emu_time_t need);
void fmpl_emu_wake_passed_locked(emu_shared_t *sh);

/* emu_sync.c */
void fmpl_emu_wake_rank_locked(emu_shared_t *sh, int r);

#endif
