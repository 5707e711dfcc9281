/*
 * sched.h - nonblocking collectives as schedules (internal).
 *
 * A schedule is a list of rounds.  A round posts its messages (receives
 * first, then sends; on the communicator's FMPL_CI_NB index), and once
 * all of them are complete runs its local steps (copies, reductions) in
 * order; then the next round starts.  A collective builds its schedule
 * when it is called and returns; the schedule advances whenever FMPL makes
 * progress (every FMPL call, the progress thread, fmpl_test, fmpl_wait).
 *
 * Telling collectives apart without tags: the schedules of a communicator
 * run one after the other, in the order they were started, which every
 * member shares (collectives are called in the same order everywhere); so
 * the k-th message between two members on FMPL_CI_NB belongs to the same
 * schedule and round on both sides.  Blocking collectives use other
 * indices and may run while schedules are under way.
 *
 * Offload: a schedule the transport's own engine takes (transport.h,
 * off_*; dcfa: the host's agent) leaves the communicator's order at once
 * - its messages go on the engine's channel, named by the communicator's
 * first index and the number of collectives offloaded on it before, the
 * same on every member since every member makes the same choice - and
 * its work is over when the engine says so.  Schedules still complete in
 * their communicator's order: one whose work is over waits for the
 * earlier ones (fmpl.h's promise).
 */
#ifndef FMPL_SCHED_H
#define FMPL_SCHED_H

#include "coll/coll.h"

enum { FMPL_SOP_SEND, FMPL_SOP_RECV, FMPL_SOP_COPY, FMPL_SOP_RED, FMPL_SOP_END };

typedef struct fmpl_sop {
    int kind;
    int peer;                      /* comm rank (send, receive) */
    void *dst;                     /* receive buffer, copy target, reduction inout */
    const void *src;               /* send buffer, copy source, reduction input */
    size_t len;                    /* bytes; elements for a reduction */
} fmpl_sop_t;

typedef struct fmpl_sched {
    fmpl_comm_rec_t *c;
    fmpl_sop_t *op;
    int nop, cap;
    int at;                        /* first step of the round under way */
    int posted;                    /* its messages are out */
    fmpl_request_t *req;           /* the round's messages (never moves: queued sends
                                      point into it) */
    int nreq;
    fmpl_red_t red;                /* the reduction's operation, if any */
    void *tmp;                     /* scratch the schedule owns */
    int status, done;
    int over;                      /* its work is done; it completes once every
                                      earlier one of its communicator has */
    const char *owhat;             /* fmpl_sched_offload's, or NULL */
    size_t osize;
    void *oh;                      /* the transport's handle, when it runs it */
    struct fmpl_sched *next;       /* its communicator's order */
    struct fmpl_sched *gnext;      /* every schedule under way */
} fmpl_sched_t;

/* Building: steps are appended to the current round; a failed append
 * leaves FMPL_ERR_NOMEM in s->status, which fmpl_sched_start returns. */
fmpl_sched_t *fmpl_sched_new(fmpl_comm_rec_t *c);
void  fmpl_sched_send(fmpl_sched_t *s, int peer, const void *buf, size_t len);
void  fmpl_sched_recv(fmpl_sched_t *s, int peer, void *buf, size_t len);
void  fmpl_sched_copy(fmpl_sched_t *s, void *dst, const void *src, size_t len);
void  fmpl_sched_red(fmpl_sched_t *s, void *inout, const void *in, int count);
void  fmpl_sched_round(fmpl_sched_t *s);
/* The transport's engine may run it (transport.h, off_*): collective
 * `what` of `size` bytes a block.  Only for schedules without reductions
 * whose copies move blocks that no message touches: the rank does them
 * when it hands the messages over. */
void  fmpl_sched_offload(fmpl_sched_t *s, const char *what, size_t size);
/* scratch of `len` bytes owned by the schedule (one allocation per
 * schedule: call once) */
void *fmpl_sched_tmp(fmpl_sched_t *s, size_t len);
/* Queue it behind its communicator's others, make it the request's, and
 * advance what can advance.  On an error the schedule is freed. */
int   fmpl_sched_start(fmpl_sched_t *s, fmpl_request_t *req);
void  fmpl_sched_free(fmpl_sched_t *s);

/* the request side (api/request.c): lock held */
int  fmpl_sched_test(fmpl_request_t *req, int *done);
int  fmpl_sched_wait(fmpl_request_t *req);
/* fmpl_comm_free: FMPL_ERR_BUSY while c has schedules */
int  fmpl_sched_busy(const fmpl_comm_rec_t *c);
/* fmpl_init / fmpl_finalize */
void fmpl_sched_setup(void);
void fmpl_sched_teardown(void);

#endif
