/*
 * reduce.c - fmpl_reduce with the paper's signature: in place in `buf`,
 * `work` a scratch area of the same size.
 *
 * Tiny vectors (256 bytes, up to 16 members) go straight to the root in
 * one round.  Small vectors: a binomial tree towards `root`.  Up to 8 KiB children
 * write their partial results one way (flow-controlled signals, signal.c);
 * above, every process posts the receives from all its children on entry
 * (into a cached scratch area, one slot per child), so a child's send
 * never waits for its parent to reach that round.  Large vectors: reduce-scatter (rsag.c), then every
 * owner sends its reduced block to the root; the combining work is spread
 * over all processes instead of piling up on the root's path.
 */
#include <string.h>

#include "coll/coll.h"

/* from this size (and count >= n) the reduce-scatter path */
#define REDUCE_LARGE (128 * 1024)
/* ... and below this one not where ranks share cores (hosts.crowded_any):
 * there its 2 log2(n) exchanges each wait for the partner's turn on a
 * core, where the tree's log2(n) sends do not wait at all (their
 * receives are posted on entry).  bench/reduce on 2 cores, 3 runs, tree
 * (with whole sends, sendrecv.c) against reduce-scatter: 8 ranks 128 KiB
 * 78-91 against 173-204 us, 512 KiB 248-416 against 504-608; 4 ranks
 * 128 KiB 31-43 against 36-67, 512 KiB 138-202 against 176-229; at 1 MiB
 * neither won. */
#define REDUCE_LARGE_CROWDED (1024 * 1024)

int fmpl_red_begin(fmpl_comm_t comm, void *buf, int count, fmpl_op_t func, void *work,
                   fmpl_comm_rec_t **c, fmpl_red_t *v)
{
    int rc = fmpl_coll_begin(comm, c);
    if (rc != FMPL_SUCCESS)
        return rc;
    if (count < 0)
        return FMPL_ERR_ARG;
    rc = fmpl_op_lookup(func, &v->esize, &v->fn);
    if (rc != FMPL_SUCCESS)
        return rc;
    if (!buf && count)
        return FMPL_ERR_BUFFER;
    v->buf = buf;
    v->count = count;
    v->work = work;
    return FMPL_SUCCESS;
}

/* the caller's work area, or ours */
int fmpl_red_work(fmpl_red_t *v)
{
    if (!v->work)
        v->work = fmpl_coll_scratch(FMPL_SCRATCH_WORK, (size_t)v->count * v->esize);
    return v->work ? FMPL_SUCCESS : FMPL_ERR_NOMEM;
}

static int tree(fmpl_comm_rec_t *c, fmpl_red_t *v, int root)
{
    int n = c->size, vr = (c->rank - root + n) % n, parent = -1;
    size_t len = (size_t)v->count * v->esize;
    int child[32], nch = 0;
    for (int mask = 1; mask < n; mask <<= 1) {
        if (vr & mask) {
            parent = (vr - mask + root) % n;
            break;
        }
        if (vr + mask < n)
            child[nch++] = (vr + mask + root) % n;
    }
    if (fmpl_direct_ok(c, len)) {
        /* tiny: everybody to the root, reduced there in rank order */
        if (c->rank != root)
            return fmpl_sig_send(c, FMPL_SIG_FLOW, root, v->buf, (unsigned)len);
        uint8_t *in = fmpl_coll_scratch(FMPL_SCRATCH_TREE, (size_t)n * len);
        if (!in)
            return FMPL_ERR_NOMEM;
        fmpl_coll_copy(in + (size_t)root * len, v->buf, len);
        int rc = FMPL_SUCCESS;
        for (int i = 0; i < n && rc == FMPL_SUCCESS; i++)
            if (i != root)
                rc = fmpl_sig_wait(c, FMPL_SIG_FLOW, i, in + (size_t)i * len, (unsigned)len);
        for (int i = 1; rc == FMPL_SUCCESS && i < n; i++)
            fmpl_red_apply(v, in, in + (size_t)i * len, v->count);
        if (rc == FMPL_SUCCESS)
            fmpl_coll_copy(v->buf, in, len);
        return rc;
    }
    if (fmpl_sig_fits(c, len)) {
        /* small: children write one way (flow-controlled signals), and
         * we combine straight from where their data landed */
        int rc = FMPL_SUCCESS;
        for (int i = 0; i < nch && rc == FMPL_SUCCESS; i++) {
            const void *in;
            if ((rc = fmpl_sig_peek(c, FMPL_SIG_FLOW, child[i], (unsigned)len, &in)) ==
                FMPL_SUCCESS) {
                fmpl_red_apply(v, v->buf, in, v->count);
                rc = fmpl_sig_done(c, FMPL_SIG_FLOW, child[i]);
            }
        }
        if (rc == FMPL_SUCCESS && parent >= 0)
            rc = fmpl_sig_send(c, FMPL_SIG_FLOW, parent, v->buf, (unsigned)len);
        return rc;
    }
    uint8_t *slots = nch ? fmpl_coll_scratch(FMPL_SCRATCH_TREE, (size_t)nch * len) : NULL;
    if (nch && !slots && len)
        return FMPL_ERR_NOMEM;
    fmpl_request_t r[32];
    int rc = FMPL_SUCCESS;
    for (int i = 0; i < nch; i++) {
        r[i] = (fmpl_request_t){ .kind = FMPL_REQ_NONE };
        if (rc == FMPL_SUCCESS)
            rc = fmpl_coll_irecv(c, slots + (size_t)i * len, len, child[i], FMPL_CI_A, &r[i]);
    }
    /* combine in child order (the smallest subtree finishes first) */
    for (int i = 0; i < nch; i++) {
        int wrc = fmpl_p2p_waitall_raw(&r[i], 1);
        if (rc == FMPL_SUCCESS)
            rc = wrc;
        if (rc == FMPL_SUCCESS)
            fmpl_red_apply(v, v->buf, slots + (size_t)i * len, v->count);
    }
    if (rc != FMPL_SUCCESS) {
        fmpl_p2p_waitall_raw(r, nch);      /* end the rest with the error */
        return rc;
    }
    if (parent >= 0)
        rc = fmpl_coll_sendrecv(c, v->buf, len, parent, NULL, 0, -1, FMPL_CI_A);
    return rc;
}

static int rs_gather(fmpl_comm_rec_t *c, fmpl_red_t *v, int root)
{
    fmpl_fold_t f;
    fmpl_fold_init(c, &f);
    int rc = fmpl_red_work(v);
    if (rc == FMPL_SUCCESS)
        rc = fmpl_fold(c, &f, v);
    if (rc == FMPL_SUCCESS)
        rc = fmpl_fold_reduce_scatter(c, &f, v);
    if (rc != FMPL_SUCCESS)
        return rc;
    uint8_t *b = v->buf;
    size_t off, len;
    if (c->rank != root) {
        if (f.newrank < 0)
            return FMPL_SUCCESS;
        fmpl_block_of(&f, v, f.newrank, &off, &len);
        return fmpl_coll_send_whole(c, b + off, len, root, FMPL_CI_B);
    }
    fmpl_request_t r[64];
    int nr = 0;
    for (int s = 0; s < f.p; s++) {
        if (s == f.newrank)
            continue;
        if (nr == 64) {                     /* keep the request array small */
            rc = fmpl_p2p_waitall_raw(r, nr);
            nr = 0;
            if (rc != FMPL_SUCCESS)
                return rc;
        }
        fmpl_block_of(&f, v, s, &off, &len);
        r[nr] = (fmpl_request_t){ .kind = FMPL_REQ_NONE };
        rc = fmpl_coll_irecv(c, b + off, len, fmpl_fold_rank(&f, s), FMPL_CI_B, &r[nr++]);
        if (rc != FMPL_SUCCESS)
            break;
    }
    int wrc = fmpl_p2p_waitall_raw(r, nr);
    return rc != FMPL_SUCCESS ? rc : wrc;
}

int fmpl_coll_reduce(fmpl_comm_rec_t *c, fmpl_red_t *v, int root)
{
    if (c->size == 1 || v->count == 0)
        return FMPL_SUCCESS;
    size_t bytes = (size_t)v->count * v->esize;
    if (bytes >= (fmpl_g.hosts.crowded_any ? REDUCE_LARGE_CROWDED : REDUCE_LARGE) &&
        v->count >= c->size)
        return rs_gather(c, v, root);
    return tree(c, v, root);
}

int fmpl_reduce(void *buf, int count, fmpl_op_t func, int root, fmpl_comm_t comm, void *work)
{
    fmpl_comm_rec_t *c;
    fmpl_red_t v;
    int rc = fmpl_red_begin(comm, buf, count, func, work, &c, &v);
    if (rc != FMPL_SUCCESS)
        return rc;
    if (root < 0 || root >= c->size)
        return FMPL_ERR_RANK;
    if (c->size == 1 || count == 0)
        return FMPL_SUCCESS;
    fmpl_enter();
    rc = fmpl_coll_reduce(c, &v, root);
    fmpl_leave();
    return rc;
}
