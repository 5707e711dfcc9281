/*
 * ticker.c - the progress ticker (ticker.h).
 */
#define _GNU_SOURCE                /* SCHED_BATCH */
#include <sched.h>
#include <time.h>

#include "fmpl.h"
#include "base/clock.h"
#include "base/env.h"
#include "base/log.h"
#include "transport/ticker.h"

#define FMPL_TICK_NS       1000000L   /* while nobody else makes progress */
#define FMPL_TICK_MAX_MS   64         /* while the application does: doubled up to
                                       * this (FMPL_TICKER_MAX_MS; ticker.h) */

/* Sleep `ns`, or less if stopped: 1 when stopped.  A condition variable
 * rather than nanosleep, so that fmpl_ticker_stop (in the transport's
 * close, in fmpl_finalize) does not wait out a tick of up to FMPL_TICKER_MAX_MS. */
static int sleep_tick(fmpl_ticker_t *t, long ns)
{
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_nsec += ns;
    until.tv_sec += until.tv_nsec / 1000000000L;
    until.tv_nsec %= 1000000000L;
    pthread_mutex_lock(&t->m);
    int e = 0;
    while (!t->stopping && e == 0)   /* 0: woken early (or spuriously); else timed out */
        e = pthread_cond_timedwait(&t->cv, &t->m, &until);
    int stop = t->stopping;
    pthread_mutex_unlock(&t->m);
    return stop;
}

static void *tick(void *arg)
{
    fmpl_ticker_t *t = arg;
    /* Batch scheduling (ticker.h): our wake never preempts the thread that
     * runs on our core; unavailable, we tick as any thread does. */
    struct sched_param sp = { 0 };
    (void)pthread_setschedparam(pthread_self(), SCHED_BATCH, &sp);
    long ns = FMPL_TICK_NS;
    unsigned long seen = 0;
    while (!sleep_tick(t, ns)) {
        t->wakes++;
        if (atomic_load_explicit(&t->calls, memory_order_relaxed) == seen) {
            t->progress(t->tl);
            ns = FMPL_TICK_NS;
        } else if (ns < t->max_ns) {
            ns = ns * 2 < t->max_ns ? ns * 2 : t->max_ns;
        }
        seen = atomic_load_explicit(&t->calls, memory_order_relaxed);
    }
    return NULL;
}

int fmpl_ticker_start(fmpl_ticker_t *t, fmpl_tl_t *tl, int (*progress)(fmpl_tl_t *),
                      const char *who)
{
    long max_ms;
    if (fmpl_env_long("FMPL_TICKER_MAX_MS", FMPL_TICK_MAX_MS, 1, 10000,
                      "a whole number of milliseconds from 1 to 10000", &max_ms) != FMPL_SUCCESS)
        return FMPL_ERR_ARG;
    t->tl = tl;
    t->progress = progress;
    t->stopping = 0;
    t->max_ns = max_ms * 1000000L;
    t->wakes = 0;
    t->t_start = fmpl_rtime();
    t->who = who;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&t->cv, &ca);
    pthread_condattr_destroy(&ca);
    pthread_mutex_init(&t->m, NULL);
    if (pthread_create(&t->thread, NULL, tick, t) != 0) {
        pthread_cond_destroy(&t->cv);
        pthread_mutex_destroy(&t->m);
        fmpl_log_err("%s: cannot start the progress thread", who);
        return FMPL_ERR_SYSTEM;
    }
    t->running = 1;
    return FMPL_SUCCESS;
}

void fmpl_ticker_stop(fmpl_ticker_t *t)
{
    if (!t->running)
        return;
    pthread_mutex_lock(&t->m);
    t->stopping = 1;
    pthread_cond_signal(&t->cv);
    pthread_mutex_unlock(&t->m);
    pthread_join(t->thread, NULL);
    if (fmpl_log_verbose())
        fmpl_log_info("%s: the progress ticker woke %lu times in %.1f s (FMPL_TICKER_MAX_MS "
                      "%ld)", t->who, t->wakes, fmpl_rtime() - t->t_start, t->max_ns / 1000000L);
    pthread_cond_destroy(&t->cv);
    pthread_mutex_destroy(&t->m);
    t->running = 0;
}
