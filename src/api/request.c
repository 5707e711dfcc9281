/*
 * request.c - fmpl_test and fmpl_wait: one request type for
 * point-to-point and nonblocking collectives, each kind to its layer.
 */
#include <sched.h>

#include "fmpl.h"
#include "p2p/p2p.h"
#include "coll/sched.h"

int fmpl_test(fmpl_request_t *req, int *done)
{
    if (!fmpl_g.initialized)
        return FMPL_ERR_NOT_INIT;
    if (!done)
        return FMPL_ERR_ARG;
    if (!req || (req->kind != FMPL_REQ_SEND && req->kind != FMPL_REQ_RECV &&
                 req->kind != FMPL_REQ_COLL))
        return FMPL_ERR_REQUEST;
    fmpl_enter();
    int rc = req->kind == FMPL_REQ_COLL ? fmpl_sched_test(req, done) : fmpl_p2p_test(req, done);
    fmpl_leave();
    /* A test loop where processes outnumber the cores must let the peer
     * it waits for run: 4 ranks on 2 cores testing nonblocking
     * collectives in tight loops ran 20-50 times slower than waiting. */
    if (rc == FMPL_SUCCESS && !*done && fmpl_g.hosts.crowded_any)
        sched_yield();
    return rc;
}

int fmpl_wait(fmpl_request_t *req)
{
    if (!fmpl_g.initialized)
        return FMPL_ERR_NOT_INIT;
    if (!req)
        return FMPL_ERR_REQUEST;
    switch (req->kind) {
    case FMPL_REQ_SEND:
        return fmpl_wait_isend(req);
    case FMPL_REQ_RECV:
        return fmpl_wait_irecv(req);
    case FMPL_REQ_COLL: {
        fmpl_enter();
        int rc = fmpl_sched_wait(req);
        fmpl_leave();
        return rc;
    }
    default:
        return FMPL_ERR_REQUEST;
    }
}
