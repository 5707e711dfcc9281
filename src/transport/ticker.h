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
 * count moved, and sleeps again, each time twice as long, up to 8 ms; the
 * first tick without a progress call brings it back to 1 ms.  So a
 * process that stops calling FMPL holds its peers up for 8 ms at most,
 * then 1 ms at most, while one that keeps calling is woken 125 times a
 * second rather than 1000.  Natively a wake-up costs a few microseconds;
 * in the soft-RoCE test bed (qemu, no KVM) dcfa's 8-byte ping-pong took
 * 31.1 us with the 1 ms tick and 22.9 us with this one (issue 17's
 * note).  The transport's progress must be safe to call from this thread
 * beside the application's (a trylock: one caller at a time), and counts
 * its calls with fmpl_ticker_note.
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
    pthread_mutex_t m;             /* with cv: a tick's sleep, which a stop ends */
    pthread_cond_t cv;
    int stopping;
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
