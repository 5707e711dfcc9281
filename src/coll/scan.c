/*
 * scan.c - fmpl_scan, fmpl_exscan: prefix reductions over the members.
 *
 * Recursive doubling: at step `mask` a member exchanges its running total
 * (the reduction over its group of `mask` members) with the member
 * `mask` away; the group below a member adds to its prefix, either group
 * to its running total.  log2 n exchanges of the whole vector; the groups
 * below a member cover ranks 0..rank-1 exactly (the binary digits of its
 * rank), each combined once, in the same order every time.
 */
#include <string.h>

#include "coll/coll.h"

static int prefix(const void *sendbuf, void *recvbuf, int count, fmpl_op_t func,
                  fmpl_comm_t comm, int inclusive)
{
    fmpl_comm_rec_t *c;
    fmpl_red_t v;
    int rc = fmpl_red_begin(comm, recvbuf, count, func, NULL, &c, &v);
    if (rc != FMPL_SUCCESS)
        return rc;
    if (!sendbuf && count)
        return FMPL_ERR_BUFFER;
    size_t len = (size_t)count * v.esize;
    if (count == 0)
        return FMPL_SUCCESS;
    fmpl_enter();
    uint8_t *total = fmpl_coll_scratch(FMPL_SCRATCH_XCHG, 2 * len), *in = total + len;
    if (!total) {
        fmpl_leave();
        return FMPL_ERR_NOMEM;
    }
    fmpl_coll_copy(total, sendbuf, len);
    int have = inclusive;          /* does recvbuf hold a prefix yet? */
    if (inclusive && recvbuf != sendbuf)
        fmpl_coll_copy(recvbuf, sendbuf, len);
    for (int mask = 1; mask < c->size && rc == FMPL_SUCCESS; mask <<= 1) {
        int peer = c->rank ^ mask;
        if (peer >= c->size)
            continue;
        rc = fmpl_coll_sendrecv(c, total, len, peer, in, len, peer, FMPL_CI_A);
        if (rc != FMPL_SUCCESS)
            break;
        if (peer < c->rank) {
            if (have)
                fmpl_red_apply(&v, recvbuf, in, count);
            else
                fmpl_coll_copy(recvbuf, in, len);
            have = 1;
        }
        /* the last step's total is nobody's business */
        if (mask << 1 < c->size)
            fmpl_red_apply(&v, total, in, count);
    }
    fmpl_leave();
    return rc;
}

int fmpl_scan(const void *sendbuf, void *recvbuf, int count, fmpl_op_t func, fmpl_comm_t comm)
{
    return prefix(sendbuf, recvbuf, count, func, comm, 1);
}

int fmpl_exscan(const void *sendbuf, void *recvbuf, int count, fmpl_op_t func,
                fmpl_comm_t comm)
{
    return prefix(sendbuf, recvbuf, count, func, comm, 0);
}
