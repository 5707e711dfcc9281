/*
 * reduce_scatter.c - fmpl_reduce_scatter: reduce a vector over the
 * members and leave block i of the result with member i.
 *
 *   small (up to RS_SMALL bytes in all)  allreduce of the whole vector,
 *                                        then each keeps its block: the
 *                                        allreduce's few rounds of signals
 *                                        beat n - 1 exchanges
 *   equal blocks, n a power of two       recursive halving (rsag.c): log2 n
 *                                        steps, each member sends and
 *                                        combines n - 1 blocks in all
 *   otherwise                            pairwise: step s sends block
 *                                        rank + s of our vector to its
 *                                        owner and combines the one from
 *                                        rank - s into ours; n - 1 steps
 * The user's vector is copied once (it must not change); each block is
 * combined by its owner alone, in one fixed order.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"

#define RS_SMALL (8 * 1024)

static int pairwise(fmpl_comm_rec_t *c, fmpl_red_t *v, const uint8_t *send,
                    const size_t *off, const int *counts, uint8_t *acc)
{
    int n = c->size, me = c->rank;
    size_t mine = (size_t)counts[me] * v->esize;
    uint8_t *in = acc + mine;
    fmpl_coll_copy(acc, send + off[me], mine);
    for (int s = 1; s < n; s++) {
        int to = (me + s) % n, from = (me - s + n) % n;
        int rc = fmpl_coll_sendrecv(c, send + off[to], (size_t)counts[to] * v->esize, to, in,
                                    mine, from, FMPL_CI_A);
        if (rc != FMPL_SUCCESS)
            return rc;
        fmpl_red_apply(v, acc, in, counts[me]);
    }
    return FMPL_SUCCESS;
}

int fmpl_reduce_scatter(const void *sendbuf, void *recvbuf, const int counts[], fmpl_op_t func,
                        fmpl_comm_t comm)
{
    fmpl_comm_rec_t *c;
    fmpl_red_t v;
    int rc = fmpl_red_begin(comm, recvbuf, 0, func, NULL, &c, &v);
    if (rc != FMPL_SUCCESS)
        return rc;
    if (!counts)
        return FMPL_ERR_ARG;
    int n = c->size, equal = 1;
    int64_t total = 0;
    for (int i = 0; i < n; i++) {
        if (counts[i] < 0)
            return FMPL_ERR_ARG;
        total += counts[i];
        equal &= counts[i] == counts[0];
    }
    if (total > INT32_MAX)
        return FMPL_ERR_ARG;
    size_t len = (size_t)total * v.esize, mine = (size_t)counts[c->rank] * v.esize;
    if ((len && !sendbuf) || (mine && !recvbuf))
        return FMPL_ERR_BUFFER;
    if (total == 0)
        return FMPL_SUCCESS;
    fmpl_enter();
    size_t *off = NULL;
    uint8_t *x = NULL;
    if (n == 1 || len <= RS_SMALL || (equal && (n & (n - 1)) == 0)) {
        /* the whole vector, reduced in a copy */
        x = fmpl_coll_scratch(FMPL_SCRATCH_XCHG, len);
        if (!x) {
            rc = FMPL_ERR_NOMEM;
            goto out;
        }
        fmpl_coll_copy(x, sendbuf, len);
        v.buf = x;
        v.count = (int)total;
        if (n > 1 && (rc = fmpl_red_work(&v)) == FMPL_SUCCESS) {
            if (len <= RS_SMALL || v.count < n) {
                rc = fmpl_coll_allreduce(c, &v);
            } else {
                fmpl_fold_t f;
                fmpl_fold_init(c, &f);   /* n a power of two: nobody folds */
                rc = fmpl_fold_reduce_scatter(c, &f, &v);
            }
        }
        size_t at = 0;
        for (int i = 0; i < c->rank; i++)
            at += (size_t)counts[i] * v.esize;
        if (rc == FMPL_SUCCESS && mine)
            fmpl_coll_copy(recvbuf, x + at, mine);
        goto out;
    }
    off = malloc((size_t)n * sizeof *off);
    x = fmpl_coll_scratch(FMPL_SCRATCH_XCHG, 2 * mine);
    if (!off || (!x && mine)) {
        rc = FMPL_ERR_NOMEM;
        goto out;
    }
    for (int i = 0, at = 0; i < n; at += counts[i], i++)
        off[i] = (size_t)at * v.esize;
    rc = pairwise(c, &v, sendbuf, off, counts, x);
    if (rc == FMPL_SUCCESS && mine)
        fmpl_coll_copy(recvbuf, x, mine);
out:
    fmpl_leave();
    free(off);
    return rc;
}
