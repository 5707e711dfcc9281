/*
 * icoll.c - the nonblocking collectives: each call checks its arguments
 * as its blocking form does, builds a schedule (sched.h) and returns.
 *
 * The algorithms are the blocking ones' simplest forms, one round per
 * step, so that a step never waits for another member's unrelated work:
 *   ibarrier   dissemination: round k to rank + 2^k, from rank - 2^k
 *   ibcast     binomial tree from the root; a member forwards to all its
 *              children at once
 *   ireduce    binomial tree towards the root: the children's vectors
 *              arrive in one round, are combined in child order, go up
 *   iallreduce recursive doubling, folding to a power of two first (the
 *              result bitwise the same on every member, as fmpl_allreduce)
 *   iallgather every block to every member in one round up to
 *              IDIRECT_N members, a ring above
 *   igather, iscatter  the root posts every message in one round
 *   ialltoall  pairwise exchange, IWINDOW steps a round
 * Those without reductions may run in the transport's engine instead
 * (sched.h: offload; dcfa's host agent).
 * Buffers are the library's until the request completes: blocks land in
 * their places directly; reductions, and an in-place ialltoall's copy of
 * what it sends, take scratch (the schedule's own).
 */
#include <string.h>

#include "coll/sched.h"

#define IDIRECT_N 32
#define IWINDOW 16

static int begin(fmpl_comm_t comm, fmpl_request_t *req, fmpl_comm_rec_t **c)
{
    int rc = fmpl_coll_begin(comm, c);
    if (rc != FMPL_SUCCESS)
        return rc;
    return req ? FMPL_SUCCESS : FMPL_ERR_ARG;
}

/* build under the lock, start, or free on a building error */
static int launch(fmpl_sched_t *s, fmpl_request_t *req)
{
    if (!s)
        return FMPL_ERR_NOMEM;
    return fmpl_sched_start(s, req);
}

int fmpl_ibarrier(fmpl_comm_t comm, fmpl_request_t *req)
{
    fmpl_comm_rec_t *c;
    int rc = begin(comm, req, &c);
    if (rc != FMPL_SUCCESS)
        return rc;
    fmpl_enter();
    fmpl_sched_t *s = fmpl_sched_new(c);
    int n = c->size;
    for (int d = 1; s && d < n; d <<= 1) {
        fmpl_sched_send(s, (c->rank + d) % n, NULL, 0);
        fmpl_sched_recv(s, (c->rank - d + n) % n, NULL, 0);
        fmpl_sched_round(s);
    }
    fmpl_sched_offload(s, "barrier", 0);
    rc = launch(s, req);
    fmpl_leave();
    return rc;
}

/* the binomial tree rooted at `root`: parent (-1 at the root) and
 * children, nearest subtree last */
static int tree(const fmpl_comm_rec_t *c, int root, int *parent, int *child)
{
    int n = c->size, vr = (c->rank - root + n) % n, nch = 0;
    *parent = -1;
    for (int mask = 1; mask < n; mask <<= 1) {
        if (vr & mask) {
            *parent = (vr - mask + root) % n;
            break;
        }
        if (vr + mask < n)
            child[nch++] = (vr + mask + root) % n;
    }
    return nch;
}

int fmpl_ibcast(void *buf, size_t size, int root, fmpl_comm_t comm, fmpl_request_t *req)
{
    fmpl_comm_rec_t *c;
    int rc = begin(comm, req, &c);
    if (rc != FMPL_SUCCESS)
        return rc;
    if (root < 0 || root >= c->size)
        return FMPL_ERR_RANK;
    if (size && !buf)
        return FMPL_ERR_BUFFER;
    fmpl_enter();
    fmpl_sched_t *s = fmpl_sched_new(c);
    int parent, child[32];
    int nch = tree(c, root, &parent, child);
    if (s && parent >= 0) {
        fmpl_sched_recv(s, parent, buf, size);
        fmpl_sched_round(s);
    }
    /* the largest subtree first: it has the longest way to go */
    for (int i = nch - 1; s && i >= 0; i--)
        fmpl_sched_send(s, child[i], buf, size);
    fmpl_sched_offload(s, "bcast", size);
    rc = launch(s, req);
    fmpl_leave();
    return rc;
}

/* the reduction's operation, checked as fmpl_reduce checks it */
static int red_args(fmpl_comm_t comm, void *buf, int count, fmpl_op_t func,
                    fmpl_request_t *req, fmpl_comm_rec_t **c, fmpl_red_t *v)
{
    int rc = fmpl_red_begin(comm, buf, count, func, NULL, c, v);
    if (rc != FMPL_SUCCESS)
        return rc;
    return req ? FMPL_SUCCESS : FMPL_ERR_ARG;
}

int fmpl_ireduce(void *buf, int count, fmpl_op_t func, int root, fmpl_comm_t comm,
                 fmpl_request_t *req)
{
    fmpl_comm_rec_t *c;
    fmpl_red_t v;
    int rc = red_args(comm, buf, count, func, req, &c, &v);
    if (rc != FMPL_SUCCESS)
        return rc;
    if (root < 0 || root >= c->size)
        return FMPL_ERR_RANK;
    fmpl_enter();
    fmpl_sched_t *s = fmpl_sched_new(c);
    size_t len = (size_t)count * v.esize;
    int parent, child[32];
    int nch = tree(c, root, &parent, child);
    if (s) {
        s->red = v;
        uint8_t *slots = nch && len ? fmpl_sched_tmp(s, (size_t)nch * len) : NULL;
        for (int i = 0; i < nch && (slots || !len); i++)
            fmpl_sched_recv(s, child[i], slots ? slots + (size_t)i * len : NULL, len);
        for (int i = 0; i < nch && slots; i++)
            fmpl_sched_red(s, buf, slots + (size_t)i * len, count);
        fmpl_sched_round(s);
        if (parent >= 0)
            fmpl_sched_send(s, parent, buf, len);
    }
    rc = launch(s, req);
    fmpl_leave();
    return rc;
}

int fmpl_iallreduce(void *buf, int count, fmpl_op_t func, fmpl_comm_t comm,
                    fmpl_request_t *req)
{
    fmpl_comm_rec_t *c;
    fmpl_red_t v;
    int rc = red_args(comm, buf, count, func, req, &c, &v);
    if (rc != FMPL_SUCCESS)
        return rc;
    fmpl_enter();
    fmpl_sched_t *s = fmpl_sched_new(c);
    size_t len = (size_t)count * v.esize;
    fmpl_fold_t f;
    fmpl_fold_init(c, &f);
    uint8_t *in = s && len ? fmpl_sched_tmp(s, len) : NULL;
    if (s && (in || !len)) {
        s->red = v;
        if (c->rank < 2 * f.rem) {
            /* fold: the even member hands its vector to the odd one */
            if (f.newrank < 0) {
                fmpl_sched_send(s, c->rank + 1, buf, len);
                fmpl_sched_round(s);
            } else {
                fmpl_sched_recv(s, c->rank - 1, in, len);
                fmpl_sched_red(s, buf, in, count);
                fmpl_sched_round(s);
            }
        }
        for (int mask = 1; f.newrank >= 0 && mask < f.p; mask <<= 1) {
            int peer = fmpl_fold_rank(&f, f.newrank ^ mask);
            fmpl_sched_send(s, peer, buf, len);
            fmpl_sched_recv(s, peer, in, len);
            fmpl_sched_red(s, buf, in, count);
            fmpl_sched_round(s);
        }
        if (c->rank < 2 * f.rem) {
            if (f.newrank < 0)
                fmpl_sched_recv(s, c->rank + 1, buf, len);
            else
                fmpl_sched_send(s, c->rank - 1, buf, len);
        }
    }
    rc = launch(s, req);
    fmpl_leave();
    return rc;
}

int fmpl_iallgather(const void *sendbuf, size_t size, void *recvbuf, fmpl_comm_t comm,
                    fmpl_request_t *req)
{
    fmpl_comm_rec_t *c;
    int rc = begin(comm, req, &c);
    if (rc != FMPL_SUCCESS)
        return rc;
    if (size && (!sendbuf || !recvbuf))
        return FMPL_ERR_BUFFER;
    fmpl_enter();
    fmpl_sched_t *s = fmpl_sched_new(c);
    int n = c->size, me = c->rank;
    uint8_t *b = recvbuf;
    if (s) {
        fmpl_sched_copy(s, b + (size_t)me * size, sendbuf, size);
        fmpl_sched_round(s);
    }
    if (s && n <= IDIRECT_N) {
        for (int i = 1; i < n; i++) {
            int to = (me + i) % n, from = (me - i + n) % n;
            fmpl_sched_send(s, to, b + (size_t)me * size, size);
            fmpl_sched_recv(s, from, b + (size_t)from * size, size);
        }
    } else {
        int right = (me + 1) % n, left = (me - 1 + n) % n;
        for (int st = 0; s && st < n - 1; st++) {
            int sb = (me - st + n) % n, rb = (me - st - 1 + n) % n;
            fmpl_sched_send(s, right, b + (size_t)sb * size, size);
            fmpl_sched_recv(s, left, b + (size_t)rb * size, size);
            fmpl_sched_round(s);
        }
    }
    fmpl_sched_offload(s, "allgather", size);
    rc = launch(s, req);
    fmpl_leave();
    return rc;
}

static int irooted(const void *sendbuf, size_t size, void *recvbuf, int root, fmpl_comm_t comm,
                   fmpl_request_t *req, int to_root)
{
    fmpl_comm_rec_t *c;
    int rc = begin(comm, req, &c);
    if (rc != FMPL_SUCCESS)
        return rc;
    if (root < 0 || root >= c->size)
        return FMPL_ERR_RANK;
    uint8_t *whole = (uint8_t *)(to_root ? recvbuf : sendbuf);
    uint8_t *own = (uint8_t *)(to_root ? sendbuf : recvbuf);
    if (size && (!own || (c->rank == root && !whole)))
        return FMPL_ERR_BUFFER;
    fmpl_enter();
    fmpl_sched_t *s = fmpl_sched_new(c);
    if (s && c->rank != root) {
        if (to_root)
            fmpl_sched_send(s, root, own, size);
        else
            fmpl_sched_recv(s, root, own, size);
    } else if (s) {
        uint8_t *slot = whole + (size_t)root * size;
        if (to_root)
            fmpl_sched_copy(s, slot, own, size);
        else
            fmpl_sched_copy(s, own, slot, size);
        for (int i = 0; i < c->size; i++) {
            if (i == root)
                continue;
            if (to_root)
                fmpl_sched_recv(s, i, whole + (size_t)i * size, size);
            else
                fmpl_sched_send(s, i, whole + (size_t)i * size, size);
        }
    }
    fmpl_sched_offload(s, to_root ? "gather" : "scatter", size);
    rc = launch(s, req);
    fmpl_leave();
    return rc;
}

int fmpl_igather(const void *sendbuf, size_t size, void *recvbuf, int root, fmpl_comm_t comm,
                 fmpl_request_t *req)
{
    return irooted(sendbuf, size, recvbuf, root, comm, req, 1);
}

int fmpl_iscatter(const void *sendbuf, size_t size, void *recvbuf, int root, fmpl_comm_t comm,
                  fmpl_request_t *req)
{
    return irooted(sendbuf, size, recvbuf, root, comm, req, 0);
}

int fmpl_ialltoall(const void *sendbuf, size_t size, void *recvbuf, fmpl_comm_t comm,
                   fmpl_request_t *req)
{
    fmpl_comm_rec_t *c;
    int rc = begin(comm, req, &c);
    if (rc != FMPL_SUCCESS)
        return rc;
    int n = c->size, me = c->rank;
    size_t total = size * (size_t)n;
    if (size && (!sendbuf || !recvbuf))
        return FMPL_ERR_BUFFER;
    const uint8_t *sb = sendbuf;
    uint8_t *rb = recvbuf;
    if (sb != rb && fmpl_overlap(sb, total, rb, total))
        return FMPL_ERR_BUFFER;
    fmpl_enter();
    fmpl_sched_t *s = fmpl_sched_new(c);
    if (s && sb == rb && n > 1 && size) {
        /* in place: what we send is copied out now */
        uint8_t *copy = fmpl_sched_tmp(s, total);
        if (copy)
            memcpy(copy, sendbuf, total);
        sb = copy;
    }
    if (s && (sb || !size)) {
        fmpl_sched_copy(s, rb + (size_t)me * size, sb + (size_t)me * size, size);
        fmpl_sched_round(s);
        for (int first = 1; first < n; first += IWINDOW) {
            for (int k = first; k < n && k < first + IWINDOW; k++) {
                int to = (me + k) % n, from = (me - k + n) % n;
                fmpl_sched_recv(s, from, rb + (size_t)from * size, size);
                fmpl_sched_send(s, to, sb + (size_t)to * size, size);
            }
            fmpl_sched_round(s);
        }
    }
    fmpl_sched_offload(s, "alltoall", size);
    rc = launch(s, req);
    fmpl_leave();
    return rc;
}
