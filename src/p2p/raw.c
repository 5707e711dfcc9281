/*
 * raw.c - point-to-point on any matching-area index for the library's own
 * layers.  The collectives and the halo exchange run on indices beyond the
 * user's `count`, so the public calls (which check `mai < count`) cannot
 * reach them and they never meet user traffic.
 */
#include "fmpl.h"
#include "p2p/progress.h"
#include "p2p/p2p.h"

/* Start a send; if its receive is not posted yet, every later progress
 * call pushes it (the pending list of send.c). */
int fmpl_p2p_isend_raw(const void *buf, size_t size, int dst, int idx, fmpl_request_t *req)
{
    int rc = fmpl_p2p_send_start(req, buf, size, dst, idx);
    if (rc == FMPL_SUCCESS)
        fmpl_p2p_send_queue(req);
    return rc;
}

/* Post a receive.  Small ones need no claim (they cannot be cancelled);
 * large ones are cancellable-style so progress reads their split half. */
int fmpl_p2p_irecv_raw(void *buf, size_t size, int src, int idx, fmpl_request_t *req)
{
    return fmpl_p2p_recv_start(req, buf, size, src, idx,
                               size <= fmpl_g.split_min ? FMPL_RS_BLOCKING : 0);
}

static int try_one(fmpl_request_t *r)
{
    return r->kind == FMPL_REQ_SEND ? fmpl_p2p_send_try(r) : fmpl_p2p_recv_try(r);
}

/* Release the index of a finished request. */
static void release(fmpl_request_t *r)
{
    fmpl_slot_t *sl = fmpl_slot(r->peer, r->mai);
    if (r->kind == FMPL_REQ_SEND)
        sl->send_busy = 0;
    else
        sl->recv_busy = 0;
    r->kind = FMPL_REQ_NONE;
}

/*
 * Wait for n requests (inactive ones are skipped).  Returns the first
 * error; on a dead peer every unfinished request is ended with it, so no
 * index stays busy.
 */
int fmpl_p2p_waitall_raw(fmpl_request_t *reqs, int n)
{
    int rc = FMPL_SUCCESS, left = 0;
    for (int i = 0; i < n; i++) {
        fmpl_request_t *r = &reqs[i];
        if (r->kind == FMPL_REQ_NONE)
            continue;
        if (try_one(r)) {
            if (r->status != FMPL_SUCCESS && rc == FMPL_SUCCESS)
                rc = r->status;
            release(r);
        } else {
            left++;
        }
    }
    fmpl_wait_t w;
    fmpl_wait_init(&w, -1);
    while (left) {
        int got = fmpl_progress();
        for (int i = 0; i < n; i++) {
            fmpl_request_t *r = &reqs[i];
            if (r->kind == FMPL_REQ_NONE || !try_one(r))
                continue;
            if (r->status != FMPL_SUCCESS && rc == FMPL_SUCCESS)
                rc = r->status;
            release(r);
            left--;
            got++;
        }
        if (!left || got)
            continue;
        int wrc = fmpl_wait_idle(&w);
        if (wrc == FMPL_SUCCESS)
            continue;
        fmpl_p2p_failall_raw(reqs, n, wrc);
        return rc == FMPL_SUCCESS ? wrc : rc;
    }
    return rc;
}

/* Look at n requests once, without waiting: 1 when none is active any
 * more.  The first error of those that finished goes to *rc (if it holds
 * FMPL_SUCCESS still). */
int fmpl_p2p_testall_raw(fmpl_request_t *reqs, int n, int *rc)
{
    int left = 0;
    for (int i = 0; i < n; i++) {
        fmpl_request_t *r = &reqs[i];
        if (r->kind == FMPL_REQ_NONE)
            continue;
        if (!try_one(r)) {
            left++;
            continue;
        }
        if (r->status != FMPL_SUCCESS && *rc == FMPL_SUCCESS)
            *rc = r->status;
        release(r);
    }
    return left == 0;
}

/* End every active one of n requests with `rc` (a dead peer): no index
 * stays busy. */
void fmpl_p2p_failall_raw(fmpl_request_t *reqs, int n, int rc)
{
    for (int i = 0; i < n; i++) {
        fmpl_request_t *r = &reqs[i];
        if (r->kind == FMPL_REQ_NONE)
            continue;
        if (r->kind == FMPL_REQ_SEND)
            fmpl_p2p_send_fail(r, rc);
        else
            fmpl_p2p_recv_fail(r, rc);
        release(r);
    }
}
