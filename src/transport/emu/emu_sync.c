/*
 * emu_sync.c - conservative observation (emu.h): the bound K, polling an
 * inbox when what is due is known, advancing a blocked rank's clock, and
 * sleeping on the futex until another rank moves.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "fmpl.h"
#include "base/clock.h"
#include "base/log.h"
#include "transport/emu/emu_int.h"

/* Real time a waiter sleeps at most before it looks again by itself (a
 * computing rank's CPU time, a dead rank): from 1 ms, doubling while
 * nothing happens, to 32 ms - a rank that waits long must not wake the
 * others' cores every millisecond (it would be charged to their
 * computation as switches and cold caches). */
#define WAIT_MIN_NS 1000000L
#define WAIT_MAX_NS 32000000L
/* A rank that waits only for an entry (nothing it needs from the bound) is
 * woken when one comes; it looks by itself only for the liveness checks
 * of the wait around it (p2p/progress.c: every 50 ms at most). */
#define WAIT_ENTRY_NS 50000000L
/* Say once which rank a long wait is for (a rank outside FMPL that does
 * not compute - blocked in another library - holds everybody back). */
#define WARN_AFTER_S 30.0

static inline fmpl_emu_time_t tadd(fmpl_emu_time_t a, fmpl_emu_time_t b)
{
    return a >= FMPL_EMU_NEVER - b ? FMPL_EMU_NEVER : a + b;
}
static inline fmpl_emu_time_t tmin(fmpl_emu_time_t a, fmpl_emu_time_t b) { return a < b ? a : b; }
static inline fmpl_emu_time_t tmax(fmpl_emu_time_t a, fmpl_emu_time_t b) { return a > b ? a : b; }

/* Rank r has something new to look at (its inbox, a bound it waits on). */
void fmpl_emu_wake_rank_locked(emu_shared_t *sh, int r)
{
    emu_rank_t *rk = &emu_ranks(sh)[r];
    atomic_fetch_add(&rk->bell, 1);
    if (atomic_load(&rk->sleeping))
        syscall(SYS_futex, &rk->bell, FUTEX_WAKE, 1, NULL, NULL, 0);
}

/* The ranks holding the bound at or below `need`: gone without a word?
 * (killed, or exited without fmpl_finalize).  Then they kick nothing
 * more.  A look costs a system call a rank, so it is taken at most every
 * LAGGARD_PERIOD_S and at LAGGARDS_MAX ranks (the launcher's liveness
 * check, settle() in p2p/progress.c, covers the others). */
#define LAGGARD_PERIOD_S 0.05
#define LAGGARDS_MAX 8
static void check_laggards(fmpl_emu_t *e, fmpl_emu_time_t need)
{
    emu_shared_t *sh = e->sh;
    emu_rank_t *rk = emu_ranks(sh);
    double now = fmpl_rtime();
    if (now - e->laggard_t < LAGGARD_PERIOD_S)
        return;
    e->laggard_t = now;
    int who[LAGGARDS_MAX], n, slow = -1;
    if (fmpl_emu_lock(e) != 0)
        return;
    n = fmpl_emu_bound_below_locked(e, need, who, LAGGARDS_MAX);
    fmpl_emu_unlock(e);
    for (int i = 0; i < n; i++) {
        int r = who[i];
        if (kill(rk[r].pid, 0) != 0 && errno == ESRCH) {
            if (fmpl_emu_lock(e) != 0)
                return;
            fmpl_emu_bound_set_locked(sh, r, EMU_GONE, FMPL_EMU_NEVER);
            fmpl_emu_wake_passed_locked(sh);
            fmpl_emu_unlock(e);
        } else if (slow < 0) {
            slow = r;
        }
    }
    if (slow >= 0 && e->warn_t > 0 && now - e->warn_t > WARN_AFTER_S) {
        fmpl_log_info("%s: rank %d has waited %.0f s for rank %d to pass the emulated "
                      "time %.3f ms (it computes, or is blocked outside FMPL)",
                      e->tl->ops->name, e->rank, now - e->warn_t, slow, (double)need * 1e-9);
        e->warn_t = now;
    }
    if (slow < 0)
        e->warn_t = 0;
    else if (e->warn_t == 0)
        e->warn_t = now;
}

/*
 * What K must pass before rank r may look at its inbox up to time t.
 * Kicks still to come (at K or later) show nothing before K + lookahead.
 * But a transfer kicked earlier may still have packets in the engine, at
 * K or later (the engine runs only what is before K), and its last packet
 * ends in entries without the kick's start-up before them: if that packet
 * of a transfer coming to r may leave before t, it must be run first, and
 * for that K must pass the time it may leave.  Without this rule a rank
 * that looked at its inbox just before such an entry came went on without
 * it (on 16 tca nodes, a 2 MiB broadcast's times differed from run to
 * run).  Locked, after fmpl_emu_run_locked.
 */
static fmpl_emu_time_t observe_need(emu_shared_t *sh, int r, fmpl_emu_time_t t)
{
    fmpl_emu_time_t next = fmpl_emu_coming_locked(sh, r);
    return next >= t ? t - sh->lookahead : next;
}

/* Called locked, when we cannot go on until the bound passes `need` (or,
 * FMPL_EMU_NEVER, until an entry comes): unlock and sleep until somebody
 * rings our bell, or the time-out. */
static void sleep_unlock(fmpl_emu_t *e, fmpl_emu_time_t need)
{
    emu_shared_t *sh = e->sh;
    emu_rank_t *me = &emu_ranks(sh)[e->rank];
    uint32_t seen = atomic_load(&me->bell);
    fmpl_emu_sleeper_set_locked(sh, e->rank, need);
    atomic_store(&me->sleeping, 1);
    fmpl_emu_unlock(e);
    if (e->wait_ns < WAIT_MIN_NS || seen != e->wait_seen || e->wait_need != need)
        e->wait_ns = WAIT_MIN_NS;
    else if (e->wait_ns < WAIT_MAX_NS)
        e->wait_ns *= 2;
    e->wait_seen = seen;
    e->wait_need = need;
    long ns = need == FMPL_EMU_NEVER ? WAIT_ENTRY_NS : e->wait_ns;
    struct timespec ts = { ns / 1000000000L, ns % 1000000000L };
    syscall(SYS_futex, &me->bell, FUTEX_WAIT, seen, &ts, NULL, 0);
    atomic_store(&me->sleeping, 0);
    if (sh->model && need != FMPL_EMU_NEVER)
        check_laggards(e, need);
}

/* Apply what was taken from the inbox, in order. */
static void apply_due(fmpl_emu_t *e, int n)
{
    for (int i = 0; i < n; i++) {
        const fmpl_emu_msg_t *m = &e->due[i];
        if (m->kind == FMPL_EMU_E_COMP) {
            fmpl_tl_comp_t *c = (fmpl_tl_comp_t *)(uintptr_t)m->comp;
            if (!c)
                continue;          /* forgotten (fmpl_emu_forget) */
            if (m->status != FMPL_SUCCESS && c->status == FMPL_SUCCESS)
                c->status = m->status;
            c->pending--;
        } else {
            e->apply(e->ctx, m);
        }
    }
}

/* Awake again at our clock (something was delivered): our bound is our
 * clock.  Locked. */
static void awake_locked(fmpl_emu_t *e)
{
    emu_rank_t *me = &emu_ranks(e->sh)[e->rank];
    if (atomic_load(&me->state) == EMU_BLOCKED)
        fmpl_emu_bound_set_locked(e->sh, e->rank, EMU_RUN, e->vt);
}

/* Running, our bound is our clock: the charges since we published it
 * count too (for others, and for our own look at the bound).  Locked;
 * 1 if it moved. */
static void catch_up_locked(fmpl_emu_t *e)
{
    emu_rank_t *me = &emu_ranks(e->sh)[e->rank];
    if (atomic_load(&me->state) == EMU_RUN && atomic_load(&me->lb) < e->vt) {
        fmpl_emu_bound_set_locked(e->sh, e->rank, EMU_RUN, e->vt);
        fmpl_emu_wake_passed_locked(e->sh);
    }
}

int fmpl_emu_poll(fmpl_emu_t *e)
{
    emu_shared_t *sh = e->sh;
    if (fmpl_emu_lock(e) != 0)
        return 0;                  /* the waiter's own check ends its wait */
    catch_up_locked(e);
    fmpl_emu_run_locked(e);
    fmpl_emu_time_t need = observe_need(sh, e->rank, e->vt);   /* K must pass this */
    if (sh->model && fmpl_emu_bound_locked(e, need) <= need) {
        sleep_unlock(e, need);
        return -1;
    }
    int n = fmpl_emu_inbox_take_locked(e, e->vt);
    if (n)
        awake_locked(e);
    fmpl_emu_unlock(e);
    apply_due(e, n);
    return n;
}

int fmpl_emu_idle(fmpl_emu_t *e, fmpl_emu_time_t deadline)
{
    emu_shared_t *sh = e->sh;
    emu_rank_t *me = &emu_ranks(sh)[e->rank];
    if (fmpl_emu_lock(e) != 0)
        return 0;
    if (!sh->model) {
        fmpl_emu_run_locked(e);
        int n = fmpl_emu_inbox_take_locked(e, FMPL_EMU_NEVER);
        if (n) {
            fmpl_emu_unlock(e);
            apply_due(e, n);
            return 1;
        }
        sleep_unlock(e, FMPL_EMU_NEVER);
        return 0;
    }
    /* A deadline we have reached was the caller's to act on; waiting on
     * past it, we wait for what comes (or we would never move again). */
    if (deadline <= e->vt)
        deadline = FMPL_EMU_NEVER;
    /* blocked: nothing we kick can come before what wakes us */
    fmpl_emu_time_t old = atomic_load(&me->lb);
    me->deadline = deadline;
    me->vt = e->vt;
    fmpl_emu_time_t next = tmax(e->vt, tmin(fmpl_emu_inbox_first(sh, e->rank), deadline));
    fmpl_emu_bound_set_locked(sh, e->rank, EMU_BLOCKED, next);
    if (next > old)
        fmpl_emu_wake_passed_locked(sh);
    fmpl_emu_run_locked(e);
    /* the engine may have brought something earlier */
    next = tmax(e->vt, tmin(fmpl_emu_inbox_first(sh, e->rank), deadline));
    fmpl_emu_time_t need = next == FMPL_EMU_NEVER ? next : observe_need(sh, e->rank, next);
    if (next != FMPL_EMU_NEVER && fmpl_emu_bound_locked(e, need) > need) {
        e->vt = next;
        int n = fmpl_emu_inbox_take_locked(e, e->vt);
        fmpl_emu_bound_set_locked(sh, e->rank, EMU_RUN, e->vt);
        fmpl_emu_unlock(e);
        apply_due(e, n);
        return 1;
    }
    sleep_unlock(e, need);
    return 0;
}

int fmpl_emu_alive(fmpl_emu_t *e, int rank)
{
    pid_t pid = emu_ranks(e->sh)[rank].pid;
    return pid <= 0 || !(kill(pid, 0) != 0 && errno == ESRCH);
}
