/*
 * emu_bound.c - the bound K (emu.h) and the ranks that wait for it to
 * pass a time, each kept in a tournament tree in the engine's segment.
 *
 * K is the least of the bounds the ranks publish.  Scanning every rank
 * for it made each poll O(ranks) under the engine's lock, and every bound
 * that moved woke every rank that slept on the bound, whatever it needed:
 * at 512 ranks on two cores that was most of the job's time.  The bound
 * tree gives K at its root and takes a changed bound in log2(ranks) steps;
 * the need tree holds what each sleeper needs K to pass, so that a moved
 * K wakes exactly the sleepers it lets go on (SimGrid's maestro keeps its
 * actors in a heap by their next event for the same reason).
 *
 * A leaf past the last rank, a rank gone, a rank awake: FMPL_EMU_NEVER.
 * Everything here runs under the engine's lock.
 */
#include <stdint.h>

#include "transport/emu/emu_int.h"

static inline fmpl_emu_time_t tmin(fmpl_emu_time_t a, fmpl_emu_time_t b) { return a < b ? a : b; }

size_t fmpl_emu_tree_leaves(int size)
{
    size_t s = 1;
    while (s < (size_t)size)
        s *= 2;
    return s;
}

void fmpl_emu_tree_init(fmpl_emu_time_t *t, size_t leaves, int size, fmpl_emu_time_t v)
{
    for (size_t i = 1; i < 2 * leaves; i++)
        t[i] = FMPL_EMU_NEVER;
    for (int r = 0; r < size; r++)
        fmpl_emu_tree_set(t, leaves, r, v);
}

void fmpl_emu_tree_set(fmpl_emu_time_t *t, size_t leaves, int r, fmpl_emu_time_t v)
{
    size_t i = leaves + (size_t)r;
    t[i] = v;
    for (i /= 2; i >= 1; i /= 2) {
        fmpl_emu_time_t m = tmin(t[2 * i], t[2 * i + 1]);
        if (t[i] == m)
            break;                 /* nothing above changes */
        t[i] = m;
    }
}

/* Rank r's published bound and state; K (the root) follows. */
void fmpl_emu_bound_set_locked(emu_shared_t *sh, int r, int state, fmpl_emu_time_t lb)
{
    emu_rank_t *rk = &emu_ranks(sh)[r];
    atomic_store(&rk->state, state);
    atomic_store(&rk->lb, lb);
    fmpl_emu_tree_set(emu_bounds(sh), sh->leaves, r, state == EMU_GONE ? FMPL_EMU_NEVER : lb);
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
    fmpl_emu_time_t c = fmpl_emu_cpu_charge(sh, cpu);
    return lb >= FMPL_EMU_NEVER - c ? FMPL_EMU_NEVER : lb + c;
}

/* What rank r can kick no earlier than, looked at closely: our own clock
 * for ourselves, the CPU time so far for a rank that computes. */
static fmpl_emu_time_t effective(fmpl_emu_t *e, int r, fmpl_emu_time_t lb)
{
    if (r == e->rank)
        return lb > e->vt ? lb : e->vt;
    if (atomic_load(&emu_ranks(e->sh)[r].state) == EMU_USER)
        return computing_bound(e, r, lb);
    return lb;
}

/*
 * K as far as `need` matters: the root when it is past `need`; otherwise
 * the leaves at or below `need` are looked at closely (effective()), and
 * the first that still holds K at or below `need` ends the search with its
 * bound - a value <= need, which is all a caller that needs K past `need`
 * must know.  When none does, the least of what was seen: K itself.
 */
fmpl_emu_time_t fmpl_emu_bound_locked(fmpl_emu_t *e, fmpl_emu_time_t need)
{
    emu_shared_t *sh = e->sh;
    const fmpl_emu_time_t *t = emu_bounds(sh);
    if (t[1] > need)
        return t[1];
    size_t stack[64], n = 0;
    fmpl_emu_time_t k = FMPL_EMU_NEVER;
    stack[n++] = 1;
    while (n) {
        size_t i = stack[--n];
        if (t[i] > need) {
            k = tmin(k, t[i]);
            continue;
        }
        if (i < sh->leaves) {
            stack[n++] = 2 * i + 1;
            stack[n++] = 2 * i;
            continue;
        }
        fmpl_emu_time_t v = effective(e, (int)(i - sh->leaves), t[i]);
        if (v <= need)
            return v;
        k = tmin(k, v);
    }
    return k;
}

/* The ranks whose published bound is at or below `need`, but us: up to
 * `max` of them into out[]; how many. */
int fmpl_emu_bound_below_locked(fmpl_emu_t *e, fmpl_emu_time_t need, int *out, int max)
{
    emu_shared_t *sh = e->sh;
    const fmpl_emu_time_t *t = emu_bounds(sh);
    size_t stack[64], n = 0;
    int found = 0;
    stack[n++] = 1;
    while (n && found < max) {
        size_t i = stack[--n];
        if (t[i] > need)
            continue;
        if (i < sh->leaves) {
            stack[n++] = 2 * i + 1;
            stack[n++] = 2 * i;
        } else if ((int)(i - sh->leaves) != e->rank) {
            out[found++] = (int)(i - sh->leaves);
        }
    }
    return found;
}

/* Rank r sleeps until K passes `need` (FMPL_EMU_NEVER: it waits for an
 * entry, and an entry's post wakes it). */
void fmpl_emu_sleeper_set_locked(emu_shared_t *sh, int r, fmpl_emu_time_t need)
{
    emu_ranks(sh)[r].need = need;
    fmpl_emu_tree_set(emu_needs(sh), sh->leaves, r, need);
}

/* K may have moved up: wake every sleeper whose need it has passed. */
void fmpl_emu_wake_passed_locked(emu_shared_t *sh)
{
    fmpl_emu_time_t *w = emu_needs(sh);
    fmpl_emu_time_t k = emu_bounds(sh)[1];
    while (w[1] < k) {
        size_t i = 1;
        while (i < sh->leaves)
            i = w[2 * i] < k ? 2 * i : 2 * i + 1;
        int r = (int)(i - sh->leaves);
        fmpl_emu_tree_set(w, sh->leaves, r, FMPL_EMU_NEVER);
        fmpl_emu_wake_rank_locked(sh, r);
    }
}
