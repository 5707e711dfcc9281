/*
 * progress.h - making progress and waiting politely.
 *
 * Every FMPL call makes progress: the transport's (FIFO data, queued
 * notifications) and the spill buffer's.  A wait loop is
 *     fmpl_wait_t w; fmpl_wait_init(&w, peer);
 *     while (!done) { if (fmpl_progress() == 0 && (rc = fmpl_wait_idle(&w))) break; }
 * fmpl_wait_idle() backs off (pause, then sched_yield at once when the
 * processes outnumber the cores) and now and then checks that `peer` (or
 * anybody, for peer -1) is alive, returning FMPL_ERR_PEER if not.
 */
#ifndef FMPL_PROGRESS_H
#define FMPL_PROGRESS_H

typedef struct fmpl_wait {
    unsigned iter;
    unsigned spin;                 /* idle polls before yielding the core */
    int peer;
    double t_start, t_check;
} fmpl_wait_t;

int  fmpl_progress(void);
void fmpl_wait_init(fmpl_wait_t *w, int peer);
int  fmpl_wait_idle(fmpl_wait_t *w);
int  fmpl_check_peer(int peer);

int  fmpl_progress_thread_start(void);
void fmpl_progress_thread_stop(void);

#endif
