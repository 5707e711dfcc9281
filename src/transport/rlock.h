/*
 * rlock.h - a recursive lock for a transport's entry points against its
 * ticker (ticker.h): one owner thread at a time, which may take it again
 * inside (an entry point that waits runs progress, which tries it).
 *
 * Why not a recursive pthread mutex: in the soft-RoCE test bed, where
 * every instruction is emulated, glibc's recursive mutex took about 40
 * instructions to lock and 55 to unlock, and dcfa's 8-byte ping-pong
 * takes it on each side of every message, in the send and in the
 * progress that sees the answer (callgrind, bench/latency -s 8).  Here a
 * lock and its unlock are 22: a load, a compare and one atomic.
 *
 * A waiter spins briefly, then yields the CPU: the holder is another
 * thread of the same process (the ticker's progress, short; or an
 * application thread in an entry point, which may wait on the network)
 * and, ranks being bound one to a CPU, may need ours to run.
 */
#ifndef FMPL_RLOCK_H
#define FMPL_RLOCK_H

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>

#include "base/cpu.h"

typedef struct fmpl_rlock {
    _Atomic uintptr_t owner;       /* pthread_self() of the holder, 0 when free */
    unsigned depth;                /* the holder's nesting (only it touches this) */
} fmpl_rlock_t;

static inline uintptr_t fmpl_rlock_me(void) { return (uintptr_t)pthread_self(); }

/* Take it if it is free or ours: 1, else 0. */
static inline int fmpl_rlock_try(fmpl_rlock_t *l)
{
    uintptr_t me = fmpl_rlock_me(), free_ = 0;
    if (atomic_load_explicit(&l->owner, memory_order_relaxed) == me) {
        l->depth++;
        return 1;
    }
    if (!atomic_compare_exchange_strong_explicit(&l->owner, &free_, me,
                                                 memory_order_acquire, memory_order_relaxed))
        return 0;
    l->depth = 1;
    return 1;
}

static inline void fmpl_rlock_take(fmpl_rlock_t *l)
{
    for (unsigned spins = 0; !fmpl_rlock_try(l); spins++) {
        if (spins < 64)
            fmpl_cpu_relax();
        else
            sched_yield();
    }
}

static inline void fmpl_rlock_give(fmpl_rlock_t *l)
{
    if (--l->depth == 0)
        atomic_store_explicit(&l->owner, 0, memory_order_release);
}

#endif
