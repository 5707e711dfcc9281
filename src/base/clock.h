/*
 * clock.h - this machine's monotonic clock, in seconds: the one clock the
 * library's real-time waits, liveness checks and timeouts read, whatever
 * transport runs (an emulated machine keeps its own time besides:
 * fmpl_tl_clock_t, transport.h).  Inline: waiting loops read it often.
 */
#ifndef FMPL_CLOCK_H
#define FMPL_CLOCK_H

#include <time.h>

static inline double fmpl_rtime(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* the same in whole nanoseconds, for deadlines kept in shared memory */
static inline long long fmpl_rtime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

#endif
