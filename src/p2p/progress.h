/*
 * progress.h - making progress and waiting politely.
 *
 * Every FMPL call makes progress: the transport's (FIFO data, queued
 * notifications) and the spill buffer's.  A wait loop is
 *     fmpl_wait_t w; fmpl_wait_init(&w, peer);
 *     while (!done) { if (fmpl_progress() == 0 && (rc = fmpl_wait_idle(&w))) break; }
 * fmpl_wait_idle() backs off as every wait does (transport/wait.h: spin,
 * then yield, at once when the processes outnumber the cores) and now and
 * then checks that `peer` (or anybody, for peer -1) is alive, returning
 * FMPL_ERR_PEER if not.
 *
 * On an emulated machine (a transport with a clock, transport.h) the
 * wait is in that machine's time: fmpl_wait_idle moves the clock to the
 * next thing that happens, or to the wait's deadline
 * (fmpl_wait_deadline, in fmpl_wtime() seconds) if one is set - a loop
 * that gives up at a time must set it, or its clock never gets there.
 * Liveness checks and FMPL_PEER_TIMEOUT stay in this machine's time.
 */
#ifndef FMPL_PROGRESS_H
#define FMPL_PROGRESS_H

#include "transport/wait.h"

typedef struct fmpl_wait {
    fmpl_tl_wait_t turns;          /* the policy's state (transport/wait.h) */
    int peer;
    double deadline;               /* fmpl_wtime() the waiter gives up at, < 0: none */
} fmpl_wait_t;

int  fmpl_progress(void);
/* A layer above runs `fn` at the end of every fmpl_progress (the
 * nonblocking collectives' schedules): it returns how many things moved
 * and must not wait. */
void fmpl_progress_hook(int (*fn)(void));
void fmpl_wait_init(fmpl_wait_t *w, int peer);
static inline void fmpl_wait_deadline(fmpl_wait_t *w, double t) { w->deadline = t; }
int  fmpl_wait_idle(fmpl_wait_t *w);
int  fmpl_check_peer(int peer);
/* The status of a put to `peer` that completed: a broken connection
 * (FMPL_ERR_PEER) names that peer as the job's failure unless the
 * launcher knows another (a transport's error completion of a write may
 * not say whose it was; the caller knows). */
int  fmpl_put_status(int peer, int status);
/* fmpl_check_peer for a test loop (fmpl_test on a request not done): at
 * most once every FMPL_TL_WAIT_PERIOD of such calls, FMPL_SUCCESS between */
int  fmpl_test_check_peer(int peer);
/* Wait, making progress, until the puts counted in `c` have left (`peer`
 * named should the wait fail, -1 for anybody): FMPL_ERR_PEER, else the
 * first error they met (c->status), else FMPL_SUCCESS. */
int  fmpl_wait_comp(const struct fmpl_tl_comp *c, int peer);

int  fmpl_progress_thread_start(void);
void fmpl_progress_thread_stop(void);

#endif
