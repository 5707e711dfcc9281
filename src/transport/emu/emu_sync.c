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
#include "core/log.h"
#include "transport/emu/emu_int.h"

/* Real time a waiter sleeps at most before it looks again (a computing
 * rank's CPU time, a dead rank): 1 ms. */
#define WAIT_NS 1000000L
/* Say once which rank a long wait is for (a rank outside FMPL that does
 * not compute - blocked in another library - holds everybody back). */
#define WARN_AFTER_S 30.0

static inline fmpl_emu_time_t tadd(fmpl_emu_time_t a, fmpl_emu_time_t b)
{
    return a >= FMPL_EMU_NEVER - b ? FMPL_EMU_NEVER : a + b;
}
static inline fmpl_emu_time_t tmin(fmpl_emu_time_t a, fmpl_emu_time_t b) { return a < b ? a : b; }
static inline fmpl_emu_time_t tmax(fmpl_emu_time_t a, fmpl_emu_time_t b) { return a > b ? a : b; }

static double real_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void fmpl_emu_wake(emu_shared_t *sh)
{
    atomic_fetch_add(&sh->epoch, 1);
    if (atomic_load(&sh->waiters) > 0)
        syscall(SYS_futex, &sh->epoch, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

/* A rank that computes has used `cpu` ns of CPU time since it left FMPL
 * at bound lb: nothing it kicks can come before lb + that time. */
static fmpl_emu_time_t computing_bound(fmpl_emu_t *e, int r, fmpl_emu_time_t lb)
{
    emu_shared_t *sh = e->sh;
    struct timespec ts;
    if (sh->cpu_scale <= 0 || e->cpu_clock[r] == (clockid_t)-1 ||
        clock_gettime(e->cpu_clock[r], &ts) != 0)
        return lb;
    int64_t exit = atomic_load(&emu_ranks(sh)[r].cpu_exit);
    if (exit == INT64_MAX)
        return lb;                 /* it is just leaving FMPL */
    int64_t cpu = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec - exit -
                  emu_ranks(sh)[r].cpu_overhead;
    return tadd(lb, fmpl_emu_cpu_charge(sh, cpu));
}

fmpl_emu_time_t fmpl_emu_bound_locked(fmpl_emu_t *e, fmpl_emu_time_t need)
{
    emu_shared_t *sh = e->sh;
    emu_rank_t *rk = emu_ranks(sh);
    fmpl_emu_time_t k = FMPL_EMU_NEVER;
    for (int r = 0; r < sh->size; r++) {
        int st = atomic_load(&rk[r].state);
        if (st == EMU_GONE)
            continue;
        fmpl_emu_time_t lb = atomic_load(&rk[r].lb);
        if (r == e->rank)
            lb = tmax(lb, e->vt);  /* nothing we kick comes before our clock */
        else if (st == EMU_USER && lb <= need)
            lb = computing_bound(e, r, lb);
        k = tmin(k, lb);
    }
    return k;
}

/* The rank(s) holding the bound at or below `need`: gone without a word?
 * (killed, or exited without fmpl_finalize).  Then they kick nothing more. */
static void check_laggards(fmpl_emu_t *e, fmpl_emu_time_t need)
{
    emu_shared_t *sh = e->sh;
    emu_rank_t *rk = emu_ranks(sh);
    int slow = -1;
    for (int r = 0; r < sh->size; r++) {
        if (r == e->rank || atomic_load(&rk[r].state) == EMU_GONE)
            continue;
        if (atomic_load(&rk[r].lb) > need)
            continue;
        if (kill(rk[r].pid, 0) != 0 && errno == ESRCH) {
            fmpl_emu_lock(e);
            atomic_store(&rk[r].state, EMU_GONE);
            atomic_store(&rk[r].lb, FMPL_EMU_NEVER);
            fmpl_emu_unlock(e);
            fmpl_emu_wake(sh);
        } else if (slow < 0) {
            slow = r;
        }
    }
    double now = real_now();
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

/* Sleep until the epoch moves past `seen` (or WAIT_NS). */
static void wait_epoch(fmpl_emu_t *e, uint32_t seen, fmpl_emu_time_t need)
{
    emu_shared_t *sh = e->sh;
    struct timespec ts = { 0, WAIT_NS };
    atomic_fetch_add(&sh->waiters, 1);
    if (atomic_load(&sh->epoch) == seen)
        syscall(SYS_futex, &sh->epoch, FUTEX_WAIT, seen, &ts, NULL, 0);
    atomic_fetch_sub(&sh->waiters, 1);
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
    if (atomic_load(&me->state) == EMU_BLOCKED) {
        atomic_store(&me->state, EMU_RUN);
        atomic_store(&me->lb, e->vt);
    }
}

/* Running, our bound is our clock: the charges since we published it
 * count too (for others, and for our own look at the bound).  Locked;
 * 1 if it moved. */
static int catch_up_locked(fmpl_emu_t *e)
{
    emu_rank_t *me = &emu_ranks(e->sh)[e->rank];
    if (atomic_load(&me->state) == EMU_RUN && atomic_load(&me->lb) < e->vt) {
        atomic_store(&me->lb, e->vt);
        return 1;
    }
    return 0;
}

int fmpl_emu_poll(fmpl_emu_t *e)
{
    emu_shared_t *sh = e->sh;
    fmpl_emu_lock(e);
    int done = catch_up_locked(e);
    done += fmpl_emu_run_locked(e);
    fmpl_emu_time_t need = e->vt - sh->lookahead;   /* K must pass this */
    if (sh->model && fmpl_emu_bound_locked(e, need) <= need) {
        uint32_t seen = atomic_load(&sh->epoch);
        fmpl_emu_unlock(e);
        if (done)
            fmpl_emu_wake(sh);
        wait_epoch(e, seen, need);
        return -1;
    }
    int n = fmpl_emu_inbox_take_locked(e, e->vt);
    if (n)
        awake_locked(e);
    fmpl_emu_unlock(e);
    if (done)
        fmpl_emu_wake(sh);
    apply_due(e, n);
    return n;
}

int fmpl_emu_idle(fmpl_emu_t *e, fmpl_emu_time_t deadline)
{
    emu_shared_t *sh = e->sh;
    emu_rank_t *me = &emu_ranks(sh)[e->rank];
    fmpl_emu_lock(e);
    if (!sh->model) {
        fmpl_emu_run_locked(e);
        int n = fmpl_emu_inbox_take_locked(e, FMPL_EMU_NEVER);
        uint32_t seen = atomic_load(&sh->epoch);
        fmpl_emu_unlock(e);
        apply_due(e, n);
        if (n)
            return 1;
        wait_epoch(e, seen, 0);
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
    atomic_store(&me->state, EMU_BLOCKED);
    atomic_store(&me->lb, next);
    int done = fmpl_emu_run_locked(e);
    /* the engine may have brought something earlier */
    next = tmax(e->vt, tmin(fmpl_emu_inbox_first(sh, e->rank), deadline));
    fmpl_emu_time_t need = next == FMPL_EMU_NEVER ? next : next - sh->lookahead;
    if (next != FMPL_EMU_NEVER && fmpl_emu_bound_locked(e, need) > need) {
        e->vt = next;
        int n = fmpl_emu_inbox_take_locked(e, e->vt);
        atomic_store(&me->state, EMU_RUN);
        atomic_store(&me->lb, e->vt);
        fmpl_emu_unlock(e);
        if (done || e->vt > old)
            fmpl_emu_wake(sh);
        apply_due(e, n);
        return 1;
    }
    uint32_t seen = atomic_load(&sh->epoch);
    fmpl_emu_unlock(e);
    if (done || next > old)
        fmpl_emu_wake(sh);
    wait_epoch(e, seen, need);
    return 0;
}

int fmpl_emu_alive(fmpl_emu_t *e, int rank)
{
    pid_t pid = emu_ranks(e->sh)[rank].pid;
    return pid <= 0 || !(kill(pid, 0) != 0 && errno == ESRCH);
}
