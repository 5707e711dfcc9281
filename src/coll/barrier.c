/*
 * barrier.c - fmpl_barrier.
 *
 * As in the paper: on FMPL_COMM_WORLD the transport's hardware barrier
 * when it has one (SR8000: hmpc_barrier; shm: one shared counter);
 * otherwise a dissemination barrier of one-way signals: in round k every
 * member signals rank + 2^k and waits for rank - 2^k, ceil(log2 n) rounds
 * of one cache-line write each, for any n.
 */
#include "coll/coll.h"

int fmpl_coll_barrier(fmpl_comm_rec_t *c)
{
    fmpl_hier_t *h = fmpl_hier_small(c);
    if (h)
        return fmpl_hier_barrier(c, h);
    int n = c->size;
    for (int d = 1; d < n; d <<= 1) {
        int rc = fmpl_sig_send(c, FMPL_SIG_SYNC, (c->rank + d) % n, NULL, 0);
        if (rc == FMPL_SUCCESS)
            rc = fmpl_sig_wait(c, FMPL_SIG_SYNC, (c->rank - d + n) % n, NULL, 0);
        if (rc != FMPL_SUCCESS)
            return rc;
    }
    return FMPL_SUCCESS;
}

int fmpl_barrier(fmpl_comm_t comm)
{
    fmpl_comm_rec_t *c;
    int rc = fmpl_coll_begin(comm, &c);
    if (rc != FMPL_SUCCESS || c->size == 1)
        return rc;
    fmpl_enter();
    fmpl_tl_t *tl = &fmpl_g.tl;
    if (comm == FMPL_COMM_WORLD && (tl->caps & FMPL_TL_CAP_HW_BARRIER))
        rc = fmpl_coll_hw(0, NULL, 0, 0);
    else
        rc = fmpl_coll_barrier(c);
    fmpl_leave();
    return rc;
}
