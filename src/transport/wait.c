/*
 * wait.c - the one wait policy (wait.h) and the transports' waits on it.
 */
#define _GNU_SOURCE
#include <sched.h>

#include "fmpl.h"
#include "base/boot.h"
#include "base/clock.h"
#include "base/hosts.h"
#include "base/log.h"
#include "transport/wait.h"

/* spins before yielding when we have a core to ourselves */
#define SPIN_ALONE     20000u
/* ... when other ranks need the core (see fmpl_tl_wait_spin) */
#define SPIN_SHARED    8u

/*
 * Spinning is the fastest wait while the waiter has a core of its own,
 * whatever it waits for: shared memory, a NIC, or the kernel's network
 * stack (whose softirq work runs in the sender's system call or the
 * interrupt, and whose provider threads preempt a spinning rank when they
 * wake).  Across two network namespaces with a core each, FMPL's 8-byte
 * latency over libfabric net was 7.1 us spinning and 7.5 us yielding after
 * 8 polls (Open MPI, spinning: 7.0).  When ranks crowd their cores
 * (hosts->crowded: more of them than CPUs they may run on, including fake
 * hosts whose launchers bound ranks to one core) every wait yields early:
 * two ranks of two namespaces on one core took 1050 us spinning and 97 us
 * yielding.
 */
unsigned fmpl_tl_wait_spin(const fmpl_tl_t *tl)
{
    return tl->hosts && tl->hosts->crowded ? SPIN_SHARED : SPIN_ALONE;
}

int fmpl_tl_wait_turn(fmpl_tl_t *tl, fmpl_tl_wait_t *w, double deadline)
{
    unsigned long i = ++w->spins;
    if (tl->clock) {
        /* the emulated clock moves on; in real time this may sleep a
         * little, so look at the peers' liveness every time */
        tl->clock->idle(tl, deadline);
        i = 256;
    } else if (i > fmpl_tl_wait_spin(tl)) {
        sched_yield();
    }
    /* No pause between polls: each poll is a progress pass, dozens of
     * instructions or more, which leaves a hardware sibling room enough,
     * and the pause itself only delays seeing what came.  In a virtual
     * machine it is worse: KVM's pause-loop exiting takes a run of pauses
     * for a vCPU waiting on a preempted lock holder and leaves the guest,
     * and qemu's emulation leaves its execution loop at every pause.  In
     * the soft-RoCE test bed dcfa's 8-byte ping-pong took 0.96 of its
     * time without it (medians of per-round ratios, 8 and 10 interleaved
     * rounds); shm's natively the same, 0.06 us either way (the runs
     * where the machine was quiet). */
    if (i % 256)
        return 0;
    double now = fmpl_rtime();
    if (w->t0 == 0) {
        w->t0 = w->t_check = now;
        return 0;
    }
    if (now - w->t_check < FMPL_TL_WAIT_PERIOD)
        return 0;
    w->t_check = now;
    return 1;
}

int fmpl_tl_peer_failed(fmpl_tl_t *tl, int dead)
{
    /* named once: the caller's error may reach a layer (a matrix receive
     * under the BLACS, say) that knows no rank to name */
    static int named = -1;
    if (dead != named) {
        named = dead;
        /* (fmpl_init may ask before the transport is open) */
        fmpl_log_err("%s%speer rank %d failed (died, stopped answering, or left the job "
                     "without fmpl_finalize)", tl->ops ? tl->ops->name : "",
                     tl->ops ? ": " : "", dead);
    }
    return FMPL_ERR_PEER;
}

int fmpl_tl_wait_check(fmpl_tl_t *tl, int failed, int peer, double *t0)
{
    /* the launcher's word first: a peer that left after seeing the job's
     * first failure is not that failure */
    int dead = tl->boot->ops->dead_rank(tl->boot);
    if (dead < 0 && failed) {
        dead = peer;
        fmpl_boot_blame(tl->boot, peer, 1);
    }
    if (dead >= 0)
        return fmpl_tl_peer_failed(tl, dead);
    double now = fmpl_rtime();
    if (*t0 == 0) {
        *t0 = now;
    } else if (tl->boot->peer_timeout > 0 &&
               fmpl_tl_waited(tl, *t0, now) > tl->boot->peer_timeout) {
        return fmpl_tl_gave_up(tl, peer, fmpl_tl_waited(tl, *t0, now));
    }
    return FMPL_SUCCESS;
}

double fmpl_tl_waited(const fmpl_tl_t *tl, double t0, double now)
{
    double after = t0 - tl->gave_up_at;
    if (tl->gave_up_at > 0 && after >= 0 && after < FMPL_TL_GAVE_UP_GAP)
        return now - tl->gave_up_at + tl->gave_up_after;
    return now - t0;
}

int fmpl_tl_gave_up(fmpl_tl_t *tl, int peer, double waited)
{
    tl->gave_up_at = fmpl_rtime();
    tl->gave_up_after = waited;
    /* a collective's wait has no one peer to name (peer -1) */
    if (peer >= 0) {
        fmpl_log_err("%s: waited %.0f s for rank %d (FMPL_PEER_TIMEOUT): giving up",
                     tl->ops->name, waited, peer);
        fmpl_boot_blame(tl->boot, peer, 0);
    } else {
        fmpl_log_err("%s: waited %.0f s for the other ranks (FMPL_PEER_TIMEOUT): giving up",
                     tl->ops->name, waited);
    }
    return FMPL_ERR_PEER;
}

int fmpl_tl_peer_gone(fmpl_tl_t *tl, int peer, int pid)
{
    fmpl_log_err("%s: rank %d (pid %d) is gone", tl->ops->name, peer, pid);
    fmpl_boot_blame(tl->boot, peer, 1);
    return FMPL_ERR_PEER;
}

int fmpl_tl_idle(fmpl_tl_t *tl, const int *failed_peer, int peer, fmpl_tl_wait_t *w)
{
    if (!fmpl_tl_wait_turn(tl, w, -1) || peer < 0)
        return FMPL_SUCCESS;
    return fmpl_tl_wait_check(tl, *failed_peer == peer, peer, &w->t0);
}

int fmpl_tl_wait_pending(fmpl_tl_t *tl, volatile int *pending, const int *failed_peer, int peer)
{
    fmpl_tl_wait_t w = { 0 };
    while (__atomic_load_n(pending, __ATOMIC_ACQUIRE) > 0) {
        if (fmpl_tl_progress(tl) != 0)
            continue;
        int rc = fmpl_tl_idle(tl, failed_peer, peer, &w);
        if (rc != FMPL_SUCCESS)
            return rc;
    }
    return FMPL_SUCCESS;
}
