/*
 * ticker.c - the progress ticker (ticker.h).
 */
#include <time.h>

#include "fmpl.h"
#include "core/log.h"
#include "transport/ticker.h"

#define FMPL_TICK_NS 1000000

static void *tick(void *arg)
{
    fmpl_ticker_t *t = arg;
    struct timespec ts = { 0, FMPL_TICK_NS };
    unsigned long seen = 0;
    while (!atomic_load_explicit(&t->stop, memory_order_acquire)) {
        nanosleep(&ts, NULL);
        if (atomic_load_explicit(&t->calls, memory_order_relaxed) == seen)
            t->progress(t->tl);
        seen = atomic_load_explicit(&t->calls, memory_order_relaxed);
    }
    return NULL;
}

int fmpl_ticker_start(fmpl_ticker_t *t, fmpl_tl_t *tl, int (*progress)(fmpl_tl_t *),
                      const char *who)
{
    t->tl = tl;
    t->progress = progress;
    atomic_store(&t->stop, 0);
    if (pthread_create(&t->thread, NULL, tick, t) != 0) {
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
    atomic_store_explicit(&t->stop, 1, memory_order_release);
    pthread_join(t->thread, NULL);
    t->running = 0;
}
