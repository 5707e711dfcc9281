/*
 * ofi_rma.c - puts and gets over libfabric RMA.
 *
 * Every post retries on FI_EAGAIN after driving progress (a full queue
 * drains only through completions), until the peer is known to be gone.
 */
#include <string.h>

#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include "fmpl.h"
#include "transport/ofi/ofi.h"

static uint64_t rkey_of(const fmpl_tl_key_t *key)
{
    return (uint64_t)key->kind | (uint64_t)key->id << 32;
}

int fmpl_ofi_put(fmpl_tl_t *tl, int peer, const void *src, size_t len,
                 const fmpl_tl_key_t *key, uint64_t roff, unsigned flags,
                 fmpl_tl_comp_t *comp)
{
    (void)flags;                   /* one path for every put */
    fmpl_ofi_t *o = fmpl_ofi_of(tl);
    fmpl_ofi_chan_t *d = &o->ch[FMPL_OFI_DATA];
    const uint8_t *s = src;
    uint64_t raddr = key->addr + roff, rkey = rkey_of(key);
    while (len) {
        size_t n = len < o->max_msg ? len : o->max_msg;
        fmpl_tl_wait_t w = { 0 };
        int brc = FMPL_SUCCESS;
        fmpl_ofi_op_t *op = fmpl_ofi_op_start(o, comp);
        if (!op)
            return FMPL_ERR_NOMEM;
        ssize_t rc;
        while ((rc = fi_write(d->ep, s, n, NULL, d->addr[peer], raddr, rkey, op)) ==
                   -FI_EAGAIN &&
               (brc = fmpl_ofi_busy(o, peer, &w, 0)) == FMPL_SUCCESS)
            ;
        if (rc) {
            fmpl_ofi_op_end(o, op, FMPL_SUCCESS);   /* not posted: uncounted */
            return brc != FMPL_SUCCESS ? brc : fmpl_ofi_error(o, (int)rc, "fi_write", peer);
        }
        s += n;
        raddr += n;
        len -= n;
    }
    return FMPL_SUCCESS;
}

/* The reads counted in c (on our stack) ended, or the wait gave up on a
 * dead peer and they are forgotten: their completions must not write
 * into a stack frame that has gone. */
static int wait_reads(fmpl_ofi_t *o, fmpl_tl_comp_t *c, int peer)
{
    int rc = fmpl_ofi_wait(o, &c->pending, peer);
    if (rc != FMPL_SUCCESS)
        fmpl_ofi_op_forget(o, c);
    return rc;
}

int fmpl_ofi_get(fmpl_tl_t *tl, int peer, void *dst, size_t len, const fmpl_tl_key_t *key,
                 uint64_t roff)
{
    fmpl_ofi_t *o = fmpl_ofi_of(tl);
    fmpl_ofi_chan_t *g = &o->ch[FMPL_OFI_DATA];
    uint8_t *d = dst;
    uint64_t raddr = key->addr + roff, rkey = rkey_of(key);
    fmpl_tl_comp_t c = { 0, FMPL_SUCCESS };
    while (len) {
        size_t n = len < o->max_msg ? len : o->max_msg;
        fmpl_tl_wait_t w = { 0 };
        int brc = FMPL_SUCCESS;
        fmpl_ofi_op_t *op = fmpl_ofi_op_start(o, &c);
        if (!op) {
            int wrc = wait_reads(o, &c, peer);
            return wrc != FMPL_SUCCESS ? wrc : FMPL_ERR_NOMEM;
        }
        ssize_t rc;
        while ((rc = fi_read(g->ep, d, n, NULL, g->addr[peer], raddr, rkey, op)) ==
                   -FI_EAGAIN &&
               (brc = fmpl_ofi_busy(o, peer, &w, 0)) == FMPL_SUCCESS)
            ;
        if (rc) {
            fmpl_ofi_op_end(o, op, FMPL_SUCCESS);   /* not posted: uncounted */
            /* the reads already posted write into dst: let them end */
            int wrc = wait_reads(o, &c, peer);
            if (brc != FMPL_SUCCESS || wrc != FMPL_SUCCESS)
                return brc != FMPL_SUCCESS ? brc : wrc;
            return fmpl_ofi_error(o, (int)rc, "fi_read", peer);
        }
        d += n;
        raddr += n;
        len -= n;
    }
    int rc = wait_reads(o, &c, peer);
    return rc != FMPL_SUCCESS ? rc : c.status;
}
