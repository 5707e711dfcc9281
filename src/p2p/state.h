/*
 * state.h - the process-wide state of the point-to-point layer (one job
 * per process): the job's bootstrap, host layout and transport, the
 * slots, the settings p2p reads, the spill buffer and the progress
 * thread.  fmpl_init (api/init.c) fills it; the collectives read it too.
 */
#ifndef FMPL_STATE_H
#define FMPL_STATE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "base/boot.h"
#include "base/hosts.h"
#include "transport/transport.h"

/* Per (peer, index): the sequence numbers of the last send / receive
 * started, and whether one is active (the overlap rule). */
typedef struct fmpl_slot {
    uint32_t send_seq, recv_seq;
    /* early sends (p2p.h): the last of our receives from the peer that
     * is complete, and the last of our sends it told us it completed */
    uint32_t recv_done, peer_done;
    uint8_t send_busy, recv_busy;
    uint8_t recv_early;            /* the last message received here came early */
    /* without remote atomics (cancel.c): the last of our sends whose
     * record is written, and the last cancel request of the peer we
     * answered on this slot */
    uint32_t send_issued, cancel_done;
} fmpl_slot_t;

struct fmpl_spill;

typedef struct fmpl_state {
    int initialized;
    int nidx;                      /* all indices: the user's, then the library's */
    int user_nidx;                 /* fmpl_init's count: 0 .. user_nidx-1 */
    int ctl_idx;                   /* the last index: point-to-point control (cancel.c) */
    fmpl_boot_t boot;
    fmpl_hosts_t hosts;            /* the job's host layout (tl.hosts points here) */
    fmpl_tl_t tl;
    fmpl_slot_t *slots;            /* [size][nidx] */
    double peer_timeout;           /* FMPL_PEER_TIMEOUT, 0 = none */
    int clock_stuck;               /* an emulated clock held past it (progress.c) */
    uint64_t split_min;            /* FMPL_SPLIT_MIN: split copies above this */
    uint64_t split_max;            /* ... up to this (the transport's tl.split_max) */
    unsigned inline_max;           /* FMPL_INLINE: fmpl_send's bytes inside the record */
    int early;                     /* FMPL_EARLY: small sends may go before their header */
    struct fmpl_spill *spill;
    /* progress thread */
    int thread_on;
    int thread_lazy;               /* start it when a send is queued */
    pthread_t thread;
    pthread_mutex_t lock;
    _Atomic int thread_stop;       /* set by fmpl_finalize, read by the thread
                                      (an atomic: a volatile int was a data race) */
} fmpl_state_t;

extern fmpl_state_t fmpl_g;

static inline fmpl_slot_t *fmpl_slot(int peer, int mai)
{
    return &fmpl_g.slots[(size_t)peer * (size_t)fmpl_g.nidx + (size_t)mai];
}

/* API entry/exit: serialise with the progress thread when it runs; on
 * an emulated machine, tell its clock (transport.h) where the program's
 * own computing ends and starts again. */
static inline void fmpl_enter(void)
{
    if (fmpl_g.thread_on)
        pthread_mutex_lock(&fmpl_g.lock);
    if (fmpl_g.tl.clock)
        fmpl_g.tl.clock->enter(&fmpl_g.tl);
}
static inline void fmpl_leave(void)
{
    if (fmpl_g.tl.clock)
        fmpl_g.tl.clock->exit(&fmpl_g.tl);
    if (fmpl_g.thread_on)
        pthread_mutex_unlock(&fmpl_g.lock);
}

#endif
