/*
 * sendrecv.c - the exchange step most collective algorithms are made of.
 */
#include "coll/coll.h"

/* Receive from `src` and send to `dst` at once; either may be -1.  The
 * receive is posted first so that its header is on its way before we
 * start waiting for the peer's. */
int fmpl_coll_sendrecv(const fmpl_comm_rec_t *c, const void *sbuf, size_t ssize, int dst,
                       void *rbuf, size_t rsize, int src, int k)
{
    fmpl_request_t r[2] = { { .kind = FMPL_REQ_NONE }, { .kind = FMPL_REQ_NONE } };
    int rc = FMPL_SUCCESS;
    if (src >= 0)
        rc = fmpl_coll_irecv(c, rbuf, rsize, src, k, &r[0]);
    if (rc == FMPL_SUCCESS && dst >= 0)
        rc = fmpl_coll_isend(c, sbuf, ssize, dst, k, &r[1]);
    int wrc = fmpl_p2p_waitall_raw(r, 2);
    return rc != FMPL_SUCCESS ? rc : wrc;
}
