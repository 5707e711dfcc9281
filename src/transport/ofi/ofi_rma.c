/*
 * ofi_rma.c - puts, gets, notifications and CAS over libfabric RMA.
 *
 * Every post retries on FI_EAGAIN after driving progress: a full queue
 * drains only through completions.
 */
#include <string.h>

#include <rdma/fi_atomic.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include "fmpl.h"
#include "transport/ofi/ofi.h"

static uint64_t rkey_of(const fmpl_tl_key_t *key)
{
    return (uint64_t)key->kind | (uint64_t)key->id << 32;
}

/* where line (writer, idx) sits in the mailbox of its reader */
static size_t line_off(const fmpl_tl_t *tl, int writer, int idx)
{
    return ((size_t)writer * (size_t)tl->nidx + (size_t)idx) * FMPL_TL_LINE;
}

int fmpl_ofi_put(fmpl_tl_t *tl, int peer, const void *src, size_t len,
                 const fmpl_tl_key_t *key, uint64_t roff, fmpl_tl_comp_t *comp)
{
    fmpl_ofi_t *o = fmpl_ofi_of(tl);
    const uint8_t *s = src;
    uint64_t raddr = key->addr + roff, rkey = rkey_of(key);
    while (len) {
        size_t n = len < o->max_msg ? len : o->max_msg;
        fmpl_ofi_start(comp);
        ssize_t rc;
        while ((rc = fi_write(o->ep, s, n, NULL, o->addr[peer], raddr, rkey, comp)) == -FI_EAGAIN)
            fmpl_ofi_progress(tl);
        if (rc) {
            fmpl_ofi_done(comp);
            return fmpl_ofi_error(o, (int)rc, "fi_write", peer);
        }
        s += n;
        raddr += n;
        len -= n;
    }
    return FMPL_SUCCESS;
}

int fmpl_ofi_get(fmpl_tl_t *tl, int peer, void *dst, size_t len, const fmpl_tl_key_t *key,
                 uint64_t roff)
{
    fmpl_ofi_t *o = fmpl_ofi_of(tl);
    uint8_t *d = dst;
    uint64_t raddr = key->addr + roff, rkey = rkey_of(key);
    fmpl_tl_comp_t c = { 0, FMPL_SUCCESS };
    while (len) {
        size_t n = len < o->max_msg ? len : o->max_msg;
        fmpl_ofi_start(&c);
        ssize_t rc;
        while ((rc = fi_read(o->ep, d, n, NULL, o->addr[peer], raddr, rkey, &c)) == -FI_EAGAIN)
            fmpl_ofi_progress(tl);
        if (rc) {
            fmpl_ofi_done(&c);
            fmpl_ofi_wait(o, &c.pending, peer);
            return fmpl_ofi_error(o, (int)rc, "fi_read", peer);
        }
        d += n;
        raddr += n;
        len -= n;
    }
    int rc = fmpl_ofi_wait(o, &c.pending, peer);
    return rc != FMPL_SUCCESS ? rc : c.status;
}

volatile void *fmpl_ofi_mbox_in(fmpl_tl_t *tl, int peer, int idx)
{
    return fmpl_ofi_of(tl)->mbox + line_off(tl, peer, idx);
}

static int inject(fmpl_ofi_t *o, int peer, const void *buf, size_t len, uint64_t raddr)
{
    ssize_t rc;
    while ((rc = fi_inject_write(o->ep, buf, len, o->addr[peer], raddr, o->peer_key[peer])) ==
           -FI_EAGAIN)
        fmpl_ofi_progress(o->tl);
    return rc ? fmpl_ofi_error(o, (int)rc, "fi_inject_write", peer) : FMPL_SUCCESS;
}

/* The body, then the word: write-after-write ordering lands them in that
 * order, behind every earlier put to the peer.  Injected: nothing to wait
 * for, so `comp` never counts. */
int fmpl_ofi_notify(fmpl_tl_t *tl, int peer, int idx, unsigned off, const void *rec,
                    unsigned len, unsigned flags, fmpl_tl_comp_t *comp)
{
    (void)flags;
    (void)comp;
    fmpl_ofi_t *o = fmpl_ofi_of(tl);
    if (len < 8 || len > FMPL_OFI_REC_MAX || off + len > FMPL_TL_LINE)
        return FMPL_ERR_ARG;
    uint64_t raddr = o->peer_mbox[peer] + line_off(tl, tl->rank, idx) + off;
    const uint8_t *r = rec;
    int rc = len > 8 ? inject(o, peer, r + 8, len - 8, raddr + 8) : FMPL_SUCCESS;
    return rc == FMPL_SUCCESS ? inject(o, peer, r, 8, raddr) : rc;
}

/* Through the provider even for our own lines: its atomics are then
 * atomic with respect to the peers' (a CPU CAS need not be). */
int fmpl_ofi_mbox_cas(fmpl_tl_t *tl, int peer, int idx, unsigned off, int outgoing,
                      uint64_t expect, uint64_t desired, uint64_t *old)
{
    fmpl_ofi_t *o = fmpl_ofi_of(tl);
    if (!(tl->caps & FMPL_TL_CAP_CAS))
        return FMPL_ERR_UNSUPPORTED;
    int target = outgoing ? peer : tl->rank;
    uint64_t raddr = o->peer_mbox[target] +
                     line_off(tl, outgoing ? tl->rank : peer, idx) + off;
    uint64_t cmp = expect, val = desired, res = 0;
    fmpl_tl_comp_t c = { 1, FMPL_SUCCESS };
    ssize_t rc;
    while ((rc = fi_compare_atomic(o->ep, &val, 1, NULL, &cmp, NULL, &res, NULL,
                                   o->addr[target], raddr, o->peer_key[target], FI_UINT64,
                                   FI_CSWAP, &c)) == -FI_EAGAIN)
        fmpl_ofi_progress(tl);
    if (rc)
        return fmpl_ofi_error(o, (int)rc, "fi_compare_atomic", target);
    int wrc = fmpl_ofi_wait(o, &c.pending, target);
    if (wrc != FMPL_SUCCESS || c.status != FMPL_SUCCESS)
        return wrc != FMPL_SUCCESS ? wrc : c.status;
    if (old)
        *old = res;
    return res == expect ? FMPL_SUCCESS : FMPL_ERR_BUSY;
}
