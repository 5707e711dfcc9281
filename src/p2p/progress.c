/*
 * progress.c - the progress engine, the waits of the layers above (on
 * transport/wait.h's policy), dead peer detection and the optional
 * progress thread.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "fmpl.h"
#include "base/clock.h"
#include "base/log.h"
#include "p2p/progress.h"
#include "p2p/state.h"
#include "p2p/trace.h"
#include "p2p/matrix.h"
#include "p2p/p2p.h"
#include "p2p/spill.h"

fmpl_trace_t *fmpl_trace;          /* trace.h: off */

/* An emulated machine: wait until what is due at our time is known, so
 * that what we see does not depend on how this machine scheduled the
 * ranks.  A dead rank would hold that up for ever, and so would a rank
 * that is alive but does not move (stopped, or stuck outside FMPL), so
 * look for the one now and then and give the other FMPL_PEER_TIMEOUT;
 * the caller's wait reports either (fmpl_wait_idle).  Once the clock was
 * held that long, one try: the job is ending. */
static void settle(void)
{
    double next = 0, t0 = 0;
    while (!fmpl_g.tl.clock->settle(&fmpl_g.tl)) {
        if (fmpl_g.clock_stuck)
            return;
        double now = fmpl_rtime();
        if (next == 0) {
            next = now + FMPL_TL_WAIT_PERIOD;
            t0 = now;
        } else if (now >= next) {
            next = now + FMPL_TL_WAIT_PERIOD;
            if (fmpl_g.boot.ops->dead_rank(&fmpl_g.boot) >= 0)
                return;
            double waited = fmpl_tl_waited(&fmpl_g.tl, t0, now);
            if (fmpl_g.peer_timeout > 0 && waited > fmpl_g.peer_timeout) {
                fmpl_log_err("waited %.0f s for the emulated clock, held by a rank that "
                             "does not move (FMPL_PEER_TIMEOUT): giving up", waited);
                fmpl_g.clock_stuck = 1;
                return;
            }
        }
    }
    fmpl_g.clock_stuck = 0;
}

static int (*hook)(void);

void fmpl_progress_hook(int (*fn)(void)) { hook = fn; }

int fmpl_progress(void)
{
    if (fmpl_g.tl.clock)
        settle();
    int n = fmpl_tl_progress(&fmpl_g.tl);
    if (fmpl_p2p_send_pending())
        n += fmpl_p2p_send_progress();
    if (fmpl_p2p_recv_watched())
        n += fmpl_p2p_recv_progress();
    if (fmpl_g.spill)
        n += fmpl_spill_progress();
    if (fmpl_mx_pending())
        n += fmpl_mx_progress();
    if (!(fmpl_g.tl.caps & FMPL_TL_CAP_CAS))
        n += fmpl_p2p_cancel_progress();   /* cancels ask for our consent */
    if (hook)
        n += hook();
    return n;
}

void fmpl_wait_init(fmpl_wait_t *w, int peer)
{
    w->turns = (fmpl_tl_wait_t){ 0 };
    w->peer = peer;
    w->deadline = -1;
}

/* The job's failure, named: the launcher's word first (a peer that left
 * after seeing the first failure is not that failure), else `peer` if
 * `failed` says so. */
static int job_failure(int peer, int failed)
{
    int dead = fmpl_g.boot.ops->dead_rank(&fmpl_g.boot);
    if (dead < 0 && failed) {
        dead = peer;
        fmpl_boot_blame(&fmpl_g.boot, peer, 1);
    }
    return dead < 0 ? FMPL_SUCCESS : fmpl_tl_peer_failed(&fmpl_g.tl, dead);
}

int fmpl_check_peer(int peer)
{
    return job_failure(peer, peer >= 0 && peer != fmpl_g.boot.rank &&
                                 !fmpl_tl_peer_ok(&fmpl_g.tl, peer));
}

int fmpl_put_status(int peer, int status)
{
    if (status != FMPL_ERR_PEER || peer < 0 || peer == fmpl_g.boot.rank)
        return status;
    return job_failure(peer, 1);   /* names a failure: FMPL_ERR_PEER */
}

/* By time, not by a count of calls: on a loaded machine each call may
 * cost a slice of the scheduler, and 4096 of them (the count this used
 * to take) took over 3 s beside two busy loops (check_coll's kill cases
 * on the route transport), longer than fmplrun's grace. */
int fmpl_test_check_peer(int peer)
{
    static double next;
    double now = fmpl_rtime();
    if (now < next)
        return FMPL_SUCCESS;
    next = now + FMPL_TL_WAIT_PERIOD;
    return fmpl_check_peer(peer);
}

int fmpl_wait_comp(const fmpl_tl_comp_t *c, int peer)
{
    int rc = FMPL_SUCCESS;
    if (fmpl_tl_comp_pending(c)) {
        fmpl_wait_t w;
        fmpl_wait_init(&w, peer);
        while (rc == FMPL_SUCCESS && fmpl_tl_comp_pending(c))
            if (fmpl_progress() == 0)
                rc = fmpl_wait_idle(&w);
        /* given up (a dead peer): c is the caller's, and may go */
        if (rc != FMPL_SUCCESS)
            fmpl_tl_forget(&fmpl_g.tl, (fmpl_tl_comp_t *)c);
    }
    return rc != FMPL_SUCCESS ? rc : c->status;
}

int fmpl_wait_idle(fmpl_wait_t *w)
{
    if (fmpl_g.clock_stuck)
        return FMPL_ERR_PEER;      /* settle() said why */
    if (!fmpl_tl_wait_turn(&fmpl_g.tl, &w->turns, w->deadline))
        return FMPL_SUCCESS;
    int rc = fmpl_check_peer(w->peer);
    if (rc != FMPL_SUCCESS)
        return rc;
    double waited = fmpl_tl_waited(&fmpl_g.tl, w->turns.t0, w->turns.t_check);
    if (fmpl_g.peer_timeout > 0 && waited > fmpl_g.peer_timeout)
        return fmpl_tl_gave_up(&fmpl_g.tl, w->peer, waited);
    return FMPL_SUCCESS;
}

/* The progress thread pushes spilled sends and drains FIFOs while the
 * application computes; it sleeps briefly when there is nothing to do. */
static void *progress_main(void *arg)
{
    (void)arg;
    struct timespec idle = { 0, 20000 };
    while (!atomic_load_explicit(&fmpl_g.thread_stop, memory_order_acquire)) {
        int n = 0;
        if (pthread_mutex_trylock(&fmpl_g.lock) == 0) {
            n = fmpl_progress();
            pthread_mutex_unlock(&fmpl_g.lock);
        }
        if (n == 0)
            nanosleep(&idle, NULL);
    }
    return NULL;
}

int fmpl_progress_thread_start(void)
{
    pthread_mutex_init(&fmpl_g.lock, NULL);
    atomic_store_explicit(&fmpl_g.thread_stop, 0, memory_order_relaxed);
    fmpl_g.thread_on = 1;
    if (pthread_create(&fmpl_g.thread, NULL, progress_main, NULL) != 0) {
        fmpl_g.thread_on = 0;
        fmpl_log_err("cannot start the progress thread: %s", strerror(errno));
        return FMPL_ERR_SYSTEM;
    }
    return FMPL_SUCCESS;
}

void fmpl_progress_thread_stop(void)
{
    if (!fmpl_g.thread_on)
        return;
    atomic_store_explicit(&fmpl_g.thread_stop, 1, memory_order_release);
    pthread_join(fmpl_g.thread, NULL);
    fmpl_g.thread_on = 0;
    pthread_mutex_destroy(&fmpl_g.lock);
}
