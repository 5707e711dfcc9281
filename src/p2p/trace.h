/*
 * trace.h - timestamps at the phase boundaries of fmpl_send and
 * fmpl_recv, in fmpl_wtime() seconds (on tcw the emulated SR8000's clock):
 * the breakdown of the paper's Table 1, measured inside FMPL as the paper
 * measured it with the processor's cycle counter.  Off (one never-taken
 * branch) unless a benchmark points fmpl_trace at a record (bench/sr8000).
 * Each point keeps its latest time.
 */
#ifndef FMPL_TRACE_H
#define FMPL_TRACE_H

#include "fmpl.h"

enum {
    FMPL_TR_SEND_CALL,             /* fmpl_send called */
    FMPL_TR_SEND_READY,            /* ... started, it looks for its header */
    FMPL_TR_SEND_HDR,              /* ... the receive header seen */
    FMPL_TR_SEND_END,              /* ... returns: data and flag out and complete */
    FMPL_TR_RECV_CALL,             /* fmpl_recv called */
    FMPL_TR_RECV_KICK,             /* ... kicks its header */
    FMPL_TR_RECV_KICKED,           /* ... the header's kick is complete */
    FMPL_TR_RECV_END,              /* ... returns: the data is here */
    FMPL_TR_N
};

typedef struct fmpl_trace {
    double t[FMPL_TR_N];
} fmpl_trace_t;

extern fmpl_trace_t *fmpl_trace;

static inline void fmpl_trace_mark(int point)
{
    if (__builtin_expect(fmpl_trace != NULL, 0))
        fmpl_trace->t[point] = fmpl_wtime();
}

#endif
