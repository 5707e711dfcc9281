/*
 * hw.c - driving the transport's hardware barrier and broadcast.  They are
 * split-phase (transport.h), so the wait happens here, with the same
 * progress and dead-peer checks as every other FMPL wait: a user's pending
 * isend keeps moving while we wait, and a dead rank ends the wait.
 */
#include "coll/coll.h"
#include "p2p/progress.h"

int fmpl_coll_hw(int bcast, void *buf, size_t len, int root)
{
    fmpl_tl_t *tl = &fmpl_g.tl;
    fmpl_tl_coll_t st = { 0 };
    fmpl_wait_t w;
    fmpl_wait_init(&w, -1);
    for (;;) {
        int rc = bcast ? fmpl_tl_bcast(tl, buf, len, root, &st) : fmpl_tl_barrier(tl, &st);
        if (rc == 1)
            return FMPL_SUCCESS;
        if (rc < 0)
            return rc;
        if (fmpl_progress() == 0 && (rc = fmpl_wait_idle(&w)) != FMPL_SUCCESS)
            return rc;
    }
}
