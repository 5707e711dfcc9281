/*
 * request.c - fmpl_test: progress once and look at one request.
 */
#include "fmpl.h"
#include "p2p/progress.h"
#include "p2p/p2p.h"

int fmpl_test(fmpl_request_t *req, int *done)
{
    if (!fmpl_g.initialized)
        return FMPL_ERR_NOT_INIT;
    if (!done)
        return FMPL_ERR_ARG;
    if (!req || (req->kind != FMPL_REQ_SEND && req->kind != FMPL_REQ_RECV))
        return FMPL_ERR_REQUEST;
    fmpl_enter();
    fmpl_progress();
    *done = req->kind == FMPL_REQ_SEND ? fmpl_p2p_send_try(req) : fmpl_p2p_recv_try(req);
    /* A test loop on a request whose peer died must end too: now and then
     * check the peer, and complete the request with the error. */
    static unsigned calls;
    if (!*done && ++calls % 4096 == 0) {
        int rc = fmpl_check_peer(req->peer);
        if (rc != FMPL_SUCCESS) {
            if (req->kind == FMPL_REQ_SEND)
                fmpl_p2p_send_fail(req, rc);
            else
                fmpl_p2p_recv_fail(req, rc);
            *done = 1;
        }
    }
    fmpl_leave();
    return FMPL_SUCCESS;
}
