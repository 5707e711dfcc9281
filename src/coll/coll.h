/*
 * coll.h - communicators and the collectives' internals.
 *
 * Index space.  fmpl_init(count) gives the user indices 0..count-1.  The
 * library appends its own:
 *   count + c * FMPL_COMM_NIDX + k   communicator c (its handle), k = 0..9
 *   after all communicators          FMPL_HALO_NIDX lines per halo exchange
 * so a collective never meets user traffic or another communicator's.
 * A communicator handle is its slot number; every member agrees on it
 * (chosen at creation as the lowest slot free on all members of the
 * parent), and two communicators with the same slot have no process in
 * common.  Sequence numbers live per (peer, index) and are never reset, so
 * a slot freed and reused by other processes needs no clean-up.
 *
 * Of the ten indices of a communicator:
 *   FMPL_CI_SIG   signal lines (signal.c): barrier, small allreduce and
 *                 allgather
 *   FMPL_CI_A/B   point-to-point messages of the collectives (two
 *                 concurrent messages to one peer need two indices)
 *   FMPL_CI_FLOW  flow-controlled signals: small broadcasts
 *   FMPL_CI_ACK   their acknowledgements
 *   FMPL_CI_P2P   the members' own matrix messages (fmpl_comm_sendm/recvm)
 *   FMPL_CI_NB    the nonblocking collectives' messages (sched.c): one
 *                 schedule at a time per communicator uses it, in the
 *                 order the members started them
 *   FMPL_CI_AUX   three lines: the layout records of their strided receives
 *                 and the announcements of queued sends (matrix.h)
 */
#ifndef FMPL_COLL_H
#define FMPL_COLL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fmpl.h"
#include "p2p/state.h"
#include "p2p/p2p.h"

#define FMPL_COMM_NIDX 10
enum { FMPL_BCAST_AUTO = 0, FMPL_BCAST_TREE = 1, FMPL_BCAST_SCATTER = 2 };
enum { FMPL_CI_SIG = 0, FMPL_CI_A = 1, FMPL_CI_B = 2, FMPL_CI_FLOW = 3, FMPL_CI_ACK = 4,
       FMPL_CI_P2P = 5, FMPL_CI_NB = 6, FMPL_CI_AUX = 7 /* to 9: FMPL_MX_NAUX */ };
#define FMPL_HALO_NIDX 6            /* one line per face: 2 x 3 dimensions */
#define FMPL_MAX_COMMS_DEFAULT 64
#define FMPL_MAX_HALOS_DEFAULT 16

/* The collective layer's share of the process state: communicators and
 * halo exchanges alive at once (FMPL_MAX_COMMS, FMPL_MAX_HALOS), set by
 * fmpl_init before fmpl_comm_setup. */
typedef struct fmpl_coll_state {
    int max_comms, max_halos;
    int bcast_alg;                 /* FMPL_BCAST: FMPL_BCAST_AUTO, _TREE, _SCATTER */
    int paper;                     /* FMPL_COLL=paper: the hybrid paper's broadcast and
                                      allgather (bcast.c, allgather.c) */
} fmpl_coll_state_t;
extern fmpl_coll_state_t fmpl_coll_g;

struct fmpl_hier;
struct fmpl_sched;

typedef struct fmpl_comm_rec {
    int used;
    int size, rank;
    int *ranks;                    /* world rank of each member */
    int idx;                       /* first of its FMPL_COMM_NIDX indices */
    int eager_state;               /* eager signals: 0 not set up, 1 on, -1 off */
    unsigned eager_max;            /* bytes per eager slot */
    uint8_t *eager;                /* [size][2 channels][2][eager_max], peers write it */
    fmpl_tl_key_t *eager_keys;     /* every member's eager area */
    fmpl_tl_key_t eager_key;       /* ours, registered when eager_reg */
    int eager_reg;
    int hier_state;                /* hier.c: 0 not decided, 1 on, -1 flat */
    struct fmpl_hier *hier;
    struct fmpl_sched *nb_first, *nb_last;   /* nonblocking collectives, in order */
    uint32_t off_seq;              /* collectives handed to the transport's engine */
} fmpl_comm_rec_t;

/* comm.c */
int  fmpl_comm_setup(void);        /* fmpl_init: the table and WORLD */
void fmpl_comm_teardown(void);     /* fmpl_finalize */
fmpl_comm_rec_t *fmpl_comm_get(fmpl_comm_t comm);
/* Check init and the handle; on success *c is the communicator. */
int  fmpl_coll_begin(fmpl_comm_t comm, fmpl_comm_rec_t **c);
int  fmpl_halo_index(int h);       /* first index of halo slot h */
void fmpl_halo_forget(void);       /* fmpl_finalize: every halo slot free */
/* Pick the lowest slot free on every member of `c` among `nslots`
 * (bitmap `mine` of this process, nslots bits); collective over c. */
int  fmpl_coll_agree_slot(fmpl_comm_rec_t *c, const uint64_t *mine, int nslots, int *slot);

static inline int fmpl_cidx(const fmpl_comm_rec_t *c, int k) { return c->idx + k; }

/* p2p between members: ranks relative to the communicator */
static inline int fmpl_coll_isend(const fmpl_comm_rec_t *c, const void *buf, size_t size,
                                  int dst, int k, fmpl_request_t *r)
{
    return fmpl_p2p_isend_raw(buf, size, c->ranks[dst], fmpl_cidx(c, k), r);
}
static inline int fmpl_coll_irecv(const fmpl_comm_rec_t *c, void *buf, size_t size,
                                  int src, int k, fmpl_request_t *r)
{
    return fmpl_p2p_irecv_raw(buf, size, c->ranks[src], fmpl_cidx(c, k), r);
}
/* exchange: receive from src and send to dst at once (either may be -1) */
int fmpl_coll_sendrecv(const fmpl_comm_rec_t *c, const void *sbuf, size_t ssize, int dst,
                       void *rbuf, size_t rsize, int src, int k);
/* a send that its receiver never copies half of (sendrecv.c) */
int fmpl_coll_send_whole(const fmpl_comm_rec_t *c, const void *buf, size_t size, int dst,
                         int k);

/* signal.c: one-way signals between members (comm ranks), carrying up to
 * FMPL_SIG_MAX bytes in the record, up to c->eager_max (at most
 * FMPL_SIG_EAGER, or the transport's tl.sig_eager up to
 * FMPL_SIG_EAGER_MAX) through the eager area once fmpl_sig_eager(c)
 * (collective) said yes.  Channels: see signal.c. */
#define FMPL_SIG_MAX       24
#define FMPL_SIG_EAGER     8192
#define FMPL_SIG_EAGER_MAX (64 * 1024)
enum { FMPL_SIG_SYNC = 0, FMPL_SIG_FLOW = 1 };
int  fmpl_sig_eager(fmpl_comm_rec_t *c);
void fmpl_sig_eager_free(fmpl_comm_rec_t *c);
/* can `len` bytes travel as a signal on c?  (collective when it must set
 * up the eager area: call it on every member with the same len) */
static inline int fmpl_sig_fits(fmpl_comm_rec_t *c, size_t len)
{
    return len <= FMPL_SIG_MAX || (len <= FMPL_SIG_EAGER_MAX && fmpl_sig_eager(c) &&
                                   len <= c->eager_max);
}
/* Small messages among few members go straight to everybody (or to the
 * root) in one round instead of log2(n): with more processes than cores
 * every round costs a trip through the scheduler.  Not where the
 * transport says one more destination costs more than the rounds saved
 * (tl->fanout_ns against tl->oneway_ns: the emulated SR8000's mailbox
 * kick completes before the call returns, so its 15 signals of a 16-node
 * allreduce took 109 us where 4 rounds take 30). */
#define FMPL_DIRECT_N   16
#define FMPL_DIRECT_MAX 256
/* rounds of a tree or of doubling over n members: ceil(log2 n) */
static inline int fmpl_log2_up(int n)
{
    int k = 0;
    while ((1 << k) < n)
        k++;
    return k;
}
static inline int fmpl_fanout_ok(const fmpl_comm_rec_t *c)
{
    const fmpl_tl_t *tl = &fmpl_g.tl;
    return (c->size - 1) * tl->fanout_ns <= fmpl_log2_up(c->size) * tl->oneway_ns;
}
static inline int fmpl_direct_ok(fmpl_comm_rec_t *c, size_t len)
{
    return c->size <= FMPL_DIRECT_N && len <= FMPL_DIRECT_MAX && fmpl_fanout_ok(c) &&
           fmpl_sig_fits(c, len);
}
int  fmpl_sig_send(fmpl_comm_rec_t *c, int chan, int peer, const void *data, unsigned len);
/* The same, without waiting until `data` may change: a signal through
 * the eager area counts in *comp (zeroed by the caller) until its bytes
 * have left; fmpl_wait_comp (p2p/progress.h) waits for them all.  A member that sends
 * one buffer to several peers waits once, not once per peer (over a
 * network the source of an RDMA write is free only when its ACK is back). */
int  fmpl_sig_post(fmpl_comm_rec_t *c, int chan, int peer, const void *data, unsigned len,
                   fmpl_tl_comp_t *comp);
int  fmpl_sig_wait(fmpl_comm_rec_t *c, int chan, int peer, void *data, unsigned len);
/* the same in two steps, to use the data where it landed */
int  fmpl_sig_peek(fmpl_comm_rec_t *c, int chan, int peer, unsigned len, const void **data);
int  fmpl_sig_done(fmpl_comm_rec_t *c, int chan, int peer);

/* op.c */
typedef void (*fmpl_op_fn_t)(void *inout, const void *in, int count);
int fmpl_op_lookup(fmpl_op_t op, size_t *esize, fmpl_op_fn_t *fn);

/* scratch.c: one cached scratch buffer per purpose, grown on demand */
enum { FMPL_SCRATCH_WORK = 0, FMPL_SCRATCH_TREE = 1, FMPL_SCRATCH_XCHG = 2, FMPL_SCRATCH_N = 3 };
void *fmpl_coll_scratch(int which, size_t size);
void  fmpl_coll_scratch_free(void);

/* a reduction in progress: buf (in place), work (scratch of the same size) */
typedef struct fmpl_red {
    void *buf, *work;
    int count;
    size_t esize;
    fmpl_op_fn_t fn;
} fmpl_red_t;

/* Combine `count` elements of `in` into `inout` with the reduction's
 * operation: FMPL's own arithmetic, which an emulated machine charges. */
static inline void fmpl_red_apply(const fmpl_red_t *v, void *inout, const void *in, int count)
{
    v->fn(inout, in, count);
    fmpl_tl_work(&fmpl_g.tl, FMPL_TL_WORK_OP, (size_t)count * v->esize);
}

/* A copy FMPL makes for itself, charged the same way. */
static inline void fmpl_coll_copy(void *dst, const void *src, size_t len)
{
    memcpy(dst, src, len);
    fmpl_tl_work(&fmpl_g.tl, FMPL_TL_WORK_COPY, len);
}

/* rsag.c: fold to a power of two, reduce-scatter, allgather, unfold */
typedef struct fmpl_fold {
    int p, rem;                    /* survivors, folded pairs */
    int newrank;                   /* -1 for a folded (sitting-out) rank */
} fmpl_fold_t;
void fmpl_fold_init(const fmpl_comm_rec_t *c, fmpl_fold_t *f);
int  fmpl_fold_rank(const fmpl_fold_t *f, int newrank);   /* -> comm rank */
int  fmpl_fold(const fmpl_comm_rec_t *c, const fmpl_fold_t *f, const fmpl_red_t *v);
int  fmpl_fold_reduce_scatter(const fmpl_comm_rec_t *c, const fmpl_fold_t *f,
                              const fmpl_red_t *v);
int  fmpl_allgather_blocks(const fmpl_comm_rec_t *c, const fmpl_fold_t *f, const fmpl_red_t *v);
int  fmpl_unfold(const fmpl_comm_rec_t *c, const fmpl_fold_t *f, const fmpl_red_t *v);
void fmpl_block_of(const fmpl_fold_t *f, const fmpl_red_t *v, int newrank, size_t *off,
                   size_t *len);
/* reduce.c: argument checks and the scratch space of reduce/allreduce */
int  fmpl_red_begin(fmpl_comm_t comm, void *buf, int count, fmpl_op_t func, void *work,
                    fmpl_comm_rec_t **c, fmpl_red_t *v);
int  fmpl_red_work(fmpl_red_t *v);   /* v->work = the caller's or a cached one */

/* hw.c: run the transport's barrier (bcast = 0) or broadcast to the end */
int fmpl_coll_hw(int bcast, void *buf, size_t len, int root);

/* The blocks of a buffer, one per member: block i is `size` bytes at
 * base + i * size, or (sizes != NULL) sizes[i] bytes at base + displs[i]
 * - the plain and the v-variants of a collective share one algorithm. */
typedef struct fmpl_blocks {
    uint8_t *base;
    size_t size;
    const size_t *sizes, *displs;
} fmpl_blocks_t;
static inline uint8_t *fmpl_block_at(const fmpl_blocks_t *b, int i)
{
    if (!b->base)                  /* only with nothing to move */
        return NULL;
    return b->base + (b->sizes ? b->displs[i] : (size_t)i * b->size);
}
static inline size_t fmpl_block_len(const fmpl_blocks_t *b, int i)
{
    return b->sizes ? b->sizes[i] : b->size;
}

/* do [a, a+alen) and [b, b+blen) share a byte? (argument checks) */
static inline int fmpl_overlap(const void *a, size_t alen, const void *b, size_t blen)
{
    uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
    return alen && blen && x < y + blen && y < x + alen;
}

/* internal algorithms shared between calls */
int fmpl_coll_bcast(fmpl_comm_rec_t *c, void *buf, size_t size, int root);
int fmpl_coll_allgather(fmpl_comm_rec_t *c, void *recvbuf, size_t size);
/* gather.c: the root receives block i from member i (to_root), or sends
 * it; the others send or receive `own` of `ownlen` bytes */
int fmpl_coll_linear(fmpl_comm_rec_t *c, int root, int to_root, const fmpl_blocks_t *whole,
                     uint8_t *own, size_t ownlen);
/* alltoall.c: block j of s to member j, block i of r from member i */
int fmpl_coll_alltoall(fmpl_comm_rec_t *c, const fmpl_blocks_t *s, const fmpl_blocks_t *r);
int fmpl_coll_barrier(fmpl_comm_rec_t *c);
int fmpl_coll_reduce(fmpl_comm_rec_t *c, fmpl_red_t *v, int root);
int fmpl_coll_allreduce(fmpl_comm_rec_t *c, fmpl_red_t *v);

/* hier.c: a communicator that spans hosts, as the members on our host
 * (node) and one leader per host (leaders), both sharing the
 * communicator's indices; the leaders' collective joins the nodes'. */
typedef struct fmpl_hier {
    fmpl_comm_rec_t node;          /* members on our host; its rank 0 leads */
    fmpl_comm_rec_t leaders;       /* the first member of every host; rank -1
                                      when we are not one */
    int *leader_of_host;           /* [nhosts of the job]: index in leaders */
    int small_flat;                /* small collectives cost less flat (hier.c) */
} fmpl_hier_t;
/* NULL when c lives on one host or has one member per host (flat is
 * then as good); decided once per communicator, locally. */
fmpl_hier_t *fmpl_hier_of(fmpl_comm_rec_t *c);
/* The same for a latency-bound collective (a barrier, a small allreduce):
 * NULL also where one flat algorithm costs less than the leaders' three
 * steps. */
fmpl_hier_t *fmpl_hier_small(fmpl_comm_rec_t *c);
void fmpl_hier_free(fmpl_comm_rec_t *c);
int  fmpl_hier_barrier(fmpl_comm_rec_t *c, fmpl_hier_t *h);
int  fmpl_hier_bcast(fmpl_comm_rec_t *c, fmpl_hier_t *h, void *buf, size_t size, int root);
int  fmpl_hier_allreduce(fmpl_comm_rec_t *c, fmpl_hier_t *h, fmpl_red_t *v);

#endif
