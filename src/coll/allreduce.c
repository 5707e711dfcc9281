/*
 * allreduce.c - fmpl_allreduce: the result in `buf` on every member,
 * bitwise the same everywhere.
 *
 *   up to 256 bytes  with up to 16 members: everybody's vector to
 *                    everybody (one round of signals), reduced locally in
 *                    rank order
 *   up to 8 KiB      recursive doubling of one-way signals (signal.c):
 *                    log2(n) writes, no handshake (up to 24 bytes the
 *                    signal is one cache line)
 *   up to 64 KiB     recursive doubling of point-to-point messages
 *   larger           reduce-scatter + allgather (rsag.c)
 * Non-powers of two fold first: the first 2 * rem ranks pair up, the even
 * one hands its vector in and gets the result back at the end.
 */
#include <string.h>

#include "coll/coll.h"

#define ALLREDUCE_LARGE (64 * 1024)

static int by_signals(fmpl_comm_rec_t *c, const fmpl_fold_t *f, fmpl_red_t *v)
{
    unsigned len = (unsigned)((size_t)v->count * v->esize);
    uint8_t *in = v->work;
    int rc = FMPL_SUCCESS;
    if (c->rank < 2 * f->rem) {
        if (f->newrank < 0) {
            rc = fmpl_sig_send(c, FMPL_SIG_SYNC, c->rank + 1, v->buf, len);
            if (rc == FMPL_SUCCESS)
                rc = fmpl_sig_wait(c, FMPL_SIG_SYNC, c->rank + 1, v->buf, len);
            return rc;
        }
        rc = fmpl_sig_wait(c, FMPL_SIG_SYNC, c->rank - 1, in, len);
        if (rc != FMPL_SUCCESS)
            return rc;
        fmpl_red_apply(v, v->buf, in, v->count);
    }
    for (int mask = 1; mask < f->p; mask *= 2) {
        int peer = fmpl_fold_rank(f, f->newrank ^ mask);
        const void *theirs;
        rc = fmpl_sig_send(c, FMPL_SIG_SYNC, peer, v->buf, len);
        if (rc == FMPL_SUCCESS)
            rc = fmpl_sig_peek(c, FMPL_SIG_SYNC, peer, len, &theirs);
        if (rc != FMPL_SUCCESS)
            return rc;
        fmpl_red_apply(v, v->buf, theirs, v->count);
        fmpl_sig_done(c, FMPL_SIG_SYNC, peer);
    }
    if (c->rank < 2 * f->rem)
        rc = fmpl_sig_send(c, FMPL_SIG_SYNC, c->rank - 1, v->buf, len);
    return rc;
}

/* Every member's vector to everybody, then the same reduction in rank
 * order everywhere (so bitwise the same result): one round. */
static int direct(fmpl_comm_rec_t *c, fmpl_red_t *v)
{
    int n = c->size;
    size_t len = (size_t)v->count * v->esize;
    uint8_t *all = fmpl_coll_scratch(FMPL_SCRATCH_TREE, (size_t)n * len);
    if (!all)
        return FMPL_ERR_NOMEM;
    fmpl_coll_copy(all + (size_t)c->rank * len, v->buf, len);
    int rc = fmpl_coll_allgather(c, all, len);
    if (rc != FMPL_SUCCESS)
        return rc;
    for (int i = 1; i < n; i++)
        fmpl_red_apply(v, all, all + (size_t)i * len, v->count);
    fmpl_coll_copy(v->buf, all, len);
    return FMPL_SUCCESS;
}

static int doubling(fmpl_comm_rec_t *c, const fmpl_fold_t *f, fmpl_red_t *v)
{
    size_t len = (size_t)v->count * v->esize;
    int rc = fmpl_fold(c, f, v);
    for (int mask = 1; rc == FMPL_SUCCESS && f->newrank >= 0 && mask < f->p; mask *= 2) {
        int peer = fmpl_fold_rank(f, f->newrank ^ mask);
        rc = fmpl_coll_sendrecv(c, v->buf, len, peer, v->work, len, peer, FMPL_CI_A);
        if (rc == FMPL_SUCCESS)
            fmpl_red_apply(v, v->buf, v->work, v->count);
    }
    if (rc == FMPL_SUCCESS)
        rc = fmpl_unfold(c, f, v);
    return rc;
}

int fmpl_coll_allreduce(fmpl_comm_rec_t *c, fmpl_red_t *v)
{
    if (c->size == 1 || v->count == 0)
        return FMPL_SUCCESS;
    size_t len = (size_t)v->count * v->esize;
    fmpl_hier_t *h = fmpl_sig_fits(c, len) ? fmpl_hier_small(c) : fmpl_hier_of(c);
    if (h)
        return fmpl_hier_allreduce(c, h, v);
    fmpl_fold_t f;
    fmpl_fold_init(c, &f);
    int rc;
    if ((rc = fmpl_red_work(v)) != FMPL_SUCCESS)
        ;
    else if (fmpl_direct_ok(c, len))
        rc = direct(c, v);
    else if (fmpl_sig_fits(c, len))
        rc = by_signals(c, &f, v);
    else if (len < ALLREDUCE_LARGE || v->count < c->size)
        rc = doubling(c, &f, v);
    else if ((rc = fmpl_fold(c, &f, v)) == FMPL_SUCCESS &&
             (rc = fmpl_fold_reduce_scatter(c, &f, v)) == FMPL_SUCCESS &&
             (rc = fmpl_allgather_blocks(c, &f, v)) == FMPL_SUCCESS)
        rc = fmpl_unfold(c, &f, v);
    return rc;
}

int fmpl_allreduce(void *buf, int count, fmpl_op_t func, fmpl_comm_t comm, void *work)
{
    fmpl_comm_rec_t *c;
    fmpl_red_t v;
    int rc = fmpl_red_begin(comm, buf, count, func, work, &c, &v);
    if (rc != FMPL_SUCCESS || c->size == 1 || count == 0)
        return rc;
    fmpl_enter();
    rc = fmpl_coll_allreduce(c, &v);
    fmpl_leave();
    return rc;
}
