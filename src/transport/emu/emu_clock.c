/*
 * emu_clock.c - a rank's virtual clock.
 *
 * Between FMPL calls the program computes: that is charged at the CPU
 * time it used (the process's, so the time of every thread it computes
 * with), times the fabric's CPU scale - CPU time, not elapsed time, so a
 * rank that waits for a core on a crowded machine is not charged for it.
 * Inside FMPL nothing is measured: the fabric charges the modeled cost of
 * what FMPL does (fmpl_emu_charge), and waiting moves the clock to what
 * the rank waited for (emu_sync.c).
 */
#define _GNU_SOURCE
#include <time.h>

#include "transport/emu/emu_int.h"

int64_t fmpl_emu_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* What reading the CPU clock itself costs (a system call: a process's
 * clock is not in the vDSO): the least of a few back-to-back reads.  It is
 * taken off every measurement, or a program that calls FMPL in a tight
 * loop would be charged for our reading of the clock. */
int64_t fmpl_emu_cpu_overhead(void)
{
    int64_t best = INT64_MAX;
    for (int i = 0; i < 64; i++) {
        int64_t a = fmpl_emu_cpu_ns(), b = fmpl_emu_cpu_ns();
        if (b - a < best)
            best = b - a;
    }
    return best > 0 && best != INT64_MAX ? best : 0;
}

/*
 * A computation of `cpu` ns between FMPL calls, as modeled time.  Below
 * the threshold it is not charged at all, as SimGrid's SMPI discards
 * bursts below smpi/cpu-threshold: the few hundred nanoseconds a program
 * spends between two calls are mostly this machine's noise (cache misses
 * after the others ran, interrupts), not work, and charging them would
 * make the modeled times vary from run to run.
 */
fmpl_emu_time_t fmpl_emu_cpu_charge(const emu_shared_t *sh, int64_t cpu)
{
    if (cpu <= 0 || cpu < sh->cpu_threshold)
        return 0;
    return (fmpl_emu_time_t)((double)cpu * 1e3 * sh->cpu_scale);
}

/* The program's CPU time since it left FMPL, as modeled time.  Before
 * the first call (fmpl_init's, after the engine opened) there is none:
 * what ran since the open was fmpl_init itself, whose CPU time here -
 * tens of milliseconds with hundreds of ranks on two cores, different
 * every run - is not the program's. */
static fmpl_emu_time_t user_time(fmpl_emu_t *e)
{
    if (!e->started || e->sh->cpu_scale <= 0)
        return 0;
    return fmpl_emu_cpu_charge(e->sh, fmpl_emu_cpu_ns() - e->cpu_exit - e->cpu_overhead);
}

/* In the program, reading the clock is not computing: the time so far
 * goes onto the clock, then the interval starts again after the reading
 * (published, so that the others' estimate of us starts there too). */
fmpl_emu_time_t fmpl_emu_now(fmpl_emu_t *e)
{
    if (!e->model)
        return 0;
    if (e->depth)
        return e->vt;
    e->vt += user_time(e);
    fmpl_emu_publish(e, EMU_USER, e->vt);
    return e->vt;
}

void fmpl_emu_charge(fmpl_emu_t *e, fmpl_emu_time_t t)
{
    if (e->model && t > 0)
        e->vt += t;
}

/*
 * What a rank publishes, under the engine's lock so that a reader sees
 * state and bound of one moment.  Anything that may let a waiter go on (a
 * bound moving up) wakes the waiters.
 *
 * Leaving FMPL (EMU_USER), the CPU time others add to our bound while we
 * compute must start no earlier than our own count does, or they would
 * think us further on than we are: it reads "unknown" (no addition) until
 * we have woken the waiters and read the CPU clock, then takes that value.
 */
void fmpl_emu_publish(fmpl_emu_t *e, int state, fmpl_emu_time_t lb)
{
    emu_shared_t *sh = e->sh;
    emu_rank_t *me = &emu_ranks(sh)[e->rank];
    if (fmpl_emu_lock(e) != 0)
        return;
    if (atomic_load(&me->state) == EMU_GONE) {
        fmpl_emu_unlock(e);
        return;
    }
    int64_t old = atomic_load(&me->lb);
    atomic_store(&me->cpu_exit, INT64_MAX);
    fmpl_emu_bound_set_locked(sh, e->rank, state, lb);
    if (lb > old)
        fmpl_emu_wake_passed_locked(sh);
    fmpl_emu_unlock(e);
    if (state == EMU_USER) {
        e->cpu_exit = fmpl_emu_cpu_ns();
        atomic_store(&me->cpu_exit, e->cpu_exit);
    }
}

int fmpl_emu_enter(fmpl_emu_t *e)
{
    if (e->depth++ || !e->model)
        return 0;
    e->vt += user_time(e);
    e->started = 1;
    fmpl_emu_publish(e, EMU_RUN, e->vt);
    return 1;
}

void fmpl_emu_exit(fmpl_emu_t *e)
{
    if (--e->depth || !e->model)
        return;
    fmpl_emu_publish(e, EMU_USER, e->vt);     /* reads the CPU clock last */
}
