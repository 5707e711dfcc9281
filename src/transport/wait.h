/*
 * wait.h - the one wait policy: what a loop that waits on a peer does
 * when a turn found nothing to do.  Every wait of FMPL is built on it:
 * the transports' own (ofi, dcfa: fmpl_tl_idle, fmpl_tl_wait_pending)
 * and, through p2p/progress.h, every wait of the layers above.
 *
 * A turn (fmpl_tl_wait_turn): on an emulated machine (tl->clock) its
 * clock moves on to the next event or the wait's deadline; elsewhere the
 * waiter spins, and after fmpl_tl_wait_spin turns yields the core at
 * every turn.  Every 256 turns (every turn on an emulated machine, whose
 * idle may sleep), and no oftener than every FMPL_TL_WAIT_PERIOD seconds
 * of this machine's clock, it is time to look whether the peer is still
 * there: the turn says so, and the waiter looks its own way.
 */
#ifndef FMPL_TL_WAIT_H
#define FMPL_TL_WAIT_H

#include "transport/transport.h"

/* seconds between looks at the peers while waiting */
#define FMPL_TL_WAIT_PERIOD 0.05

typedef struct fmpl_tl_wait {
    unsigned long spins;           /* idle turns */
    double t0;                     /* the wait's start (fmpl_rtime), 0 before the
                                      first look was due */
    double t_check;                /* the last look */
} fmpl_tl_wait_t;

/* Idle turns before yielding the core: many where the waiter has a core
 * of its own, few where ranks crowd theirs (tl->hosts). */
unsigned fmpl_tl_wait_spin(const fmpl_tl_t *tl);
/* One idle turn of wait `w` (zeroed at its start); `deadline` in the
 * emulated clock's seconds, < 0 none.  1 when the waiter should look at
 * its peer now. */
int fmpl_tl_wait_turn(fmpl_tl_t *tl, fmpl_tl_wait_t *w, double deadline);

/* The transports' waits.
 * fmpl_tl_wait_check: whether a wait on `peer` begun at *t0 (fmpl_rtime
 * seconds; 0: not yet, set now) must end with FMPL_ERR_PEER: `failed`
 * (the transport's own completions said the peer failed), a rank the
 * launcher knows dead, or FMPL_PEER_TIMEOUT passed (boot's peer_timeout:
 * a peer alive but silent, stopped or stuck outside FMPL; on an emulated
 * machine its clock holds everybody's).  It logs why, naming the rank (a
 * dead one once).
 * fmpl_tl_idle: one turn of a wait on `peer` (-1: none, nothing to look
 * at) that made no progress, and that check when it is due (failed:
 * *failed_peer == peer).
 * fmpl_tl_wait_pending: make progress until *pending is 0 (counted down
 * by completions, maybe on the transport's own thread: loaded with
 * acquire order), or the wait must end. */
int fmpl_tl_wait_check(fmpl_tl_t *tl, int failed, int peer, double *t0);
/* A wait on `peer` (-1: the other ranks of a collective) lasted `waited`
 * seconds (fmpl_tl_waited), past FMPL_PEER_TIMEOUT: logs it, tells the
 * launcher whom this rank gives up on (fmpl_boot_blame), FMPL_ERR_PEER. */
int fmpl_tl_gave_up(fmpl_tl_t *tl, int peer, double waited);
/* How long a wait begun at t0 (fmpl_rtime) counts as at `now`: its own
 * time, and if it began right after another wait gave up (within
 * FMPL_TL_GAVE_UP_GAP), that one's too.  So a program that waits in turn
 * on requests to several ranks behind a dead link ends one
 * FMPL_PEER_TIMEOUT after the link went, not one per request.  (Not "as
 * long as nothing arrived": a provider's error completions look like
 * arrivals to progress, and on shm a peer's zero-copy write to us is
 * none.) */
#define FMPL_TL_GAVE_UP_GAP 0.5
double fmpl_tl_waited(const fmpl_tl_t *tl, double t0, double now);
/* `dead` is the job's failure (the launcher's word, or a peer seen gone):
 * logs it the first time, FMPL_ERR_PEER. */
int fmpl_tl_peer_failed(fmpl_tl_t *tl, int dead);
/* A transport found the process of `peer` (pid) gone: logs it, tells the
 * launcher before this rank can leave (fmpl_boot_blame), FMPL_ERR_PEER. */
int fmpl_tl_peer_gone(fmpl_tl_t *tl, int peer, int pid);
int fmpl_tl_idle(fmpl_tl_t *tl, const int *failed_peer, int peer, fmpl_tl_wait_t *w);
int fmpl_tl_wait_pending(fmpl_tl_t *tl, volatile int *pending, const int *failed_peer, int peer);

#endif
