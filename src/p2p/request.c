/*
 * request.c - fmpl_p2p_test: progress once and look at one send or
 * receive (fmpl_test, api/request.c, dispatches here).
 */
#include "fmpl.h"
#include "p2p/progress.h"
#include "p2p/p2p.h"

int fmpl_p2p_test(fmpl_request_t *req, int *done)
{
    fmpl_progress();
    *done = req->kind == FMPL_REQ_SEND ? fmpl_p2p_send_try(req) : fmpl_p2p_recv_try(req);
    /* A test loop on a request whose peer died must end too: now and then
     * check the peer, and complete the request with the error. */
    if (!*done) {
        int rc = fmpl_test_check_peer(req->peer);
        if (rc != FMPL_SUCCESS) {
            if (req->kind == FMPL_REQ_SEND)
                fmpl_p2p_send_fail(req, rc);
            else
                fmpl_p2p_recv_fail(req, rc);
            *done = 1;
        }
    }
    return FMPL_SUCCESS;
}
