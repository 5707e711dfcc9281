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
 * count moved, and sleeps again, each time twice as long, up to
 * FMPL_TICKER_MAX_MS (default 64 ms); the first tick without a progress
 * call brings it back to 1 ms.  So a process that stops calling FMPL
 * holds its peers up for that long at most, then 1 ms at most, while one
 * that keeps calling is woken about 16 times a second rather than 1000.
 *
 * Those wake-ups are the trade: each is noise in a process that is busy
 * communicating (the kind of periodic interruption that adds up across a
 * large job's collectives), and a longer cap is a longer wait for a peer
 * of a process that has just started to compute.  Natively a wake-up
 * costs a few microseconds; in the soft-RoCE test bed (qemu, no KVM),
 * where an interrupt and a context switch are emulated, dcfa's 8-byte
 * ping-pong took 31.1 us with a 1 ms tick and 22.9 us doubling up to
 * 8 ms (issue 17's notes); doubling up to 64 ms took 0.92 of the 8 ms
 * cap's time and no ticker at all 0.88 (medians of per-round ratios, 10
 * interleaved rounds, bench/latency -s 8).
 *
 * The thread runs under SCHED_BATCH: its wake-up never preempts the
 * thread on its core (a rank is bound to one), which it would otherwise
 * do at once - the kernel favours a thread that slept - in the middle of
 * a computation or of a wait that was about to end.  It runs instead
 * when the core is idle, or at the core's next scheduler tick.  So the
 * bounds above grow by up to a tick while the process computes: here
 * (HZ 250), a busy thread's core ran a batch thread woken by a 1 ms
 * sleep 3.0 ms late on average and 3.1 at most, a normal one 0.1 ms late
 * on average and 3.9 at most.  In the test bed the 8-byte ping-pong's
 * mean took 0.93 and 0.97 of its time with a normal ticker (medians of
 * per-round ratios, 24 interleaved rounds each, issue 17's note); with
 * no ticker at all, 0.92.
 *
 * The transport's progress must be safe to call from this thread
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
    long max_ns;                   /* the longest sleep (FMPL_TICKER_MAX_MS) */
    unsigned long wakes;           /* how often it woke, since when, and for whom */
    double t_start;                /* (FMPL_VERBOSE's account at the stop) */
    const char *who;
} fmpl_ticker_t;

/* A progress call is being made (from the transport's progress): the
 * calls counted so far (racing callers may count one call for two). */
static inline unsigned long fmpl_ticker_note(fmpl_ticker_t *t)
{
    unsigned long n = atomic_load_explicit(&t->calls, memory_order_relaxed) + 1;
    atomic_store_explicit(&t->calls, n, memory_order_relaxed);
    return n;
}

/* Start the thread: FMPL_SUCCESS, FMPL_ERR_ARG (a bad FMPL_TICKER_MAX_MS)
 * or FMPL_ERR_SYSTEM (said on stderr). */
int  fmpl_ticker_start(fmpl_ticker_t *t, fmpl_tl_t *tl, int (*progress)(fmpl_tl_t *),
                       const char *who);
/* Stop and join it (nothing if it never started); under FMPL_VERBOSE=1
 * say how often it woke. */
void fmpl_ticker_stop(fmpl_ticker_t *t);

#endif
