/*
 * ticker.h - a thread that drives a transport's progress while nobody
 * else does, for the transports whose peers need our CPU to get on: the
 * mailbox kept by messages (mbox_msg.h) applies notifications and answers
 * CAS requests only in our progress.
 *
 * When no progress call has come for a whole tick (the process computes
 * outside FMPL, or waits in the launcher's fence in fmpl_finalize), the
 * thread calls progress itself, so the process never holds up its peers.
 * While the application waits in FMPL the thread only wakes, sees the
 * count moved, and sleeps again: a tick of 1 ms costs the spinning ranks
 * next to nothing.  The transport's progress must be safe to call from
 * this thread beside the application's (a trylock: one caller at a
 * time), and counts its calls with fmpl_ticker_note.
 */
#ifndef FMPL_TICKER_H
#define FMPL_TICKER_H

#include <pthread.h>
#include <stdatomic.h>

#include "transport/transport.h"

typedef struct fmpl_ticker {
    fmpl_tl_t *tl;
    int (*progress)(fmpl_tl_t *tl);
    _Atomic unsigned long calls;   /* progress calls so far */
    _Atomic int stop;
    pthread_t thread;
    int running;
} fmpl_ticker_t;

/* A progress call is being made (from the transport's progress). */
static inline void fmpl_ticker_note(fmpl_ticker_t *t)
{
    atomic_store_explicit(&t->calls, atomic_load_explicit(&t->calls, memory_order_relaxed) + 1,
                          memory_order_relaxed);
}

/* Start the thread: FMPL_SUCCESS or FMPL_ERR_SYSTEM (said on stderr). */
int  fmpl_ticker_start(fmpl_ticker_t *t, fmpl_tl_t *tl, int (*progress)(fmpl_tl_t *),
                       const char *who);
/* Stop and join it (nothing if it never started). */
void fmpl_ticker_stop(fmpl_ticker_t *t);

#endif
