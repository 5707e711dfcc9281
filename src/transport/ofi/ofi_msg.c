/*
 * ofi_msg.c - the mailbox over libfabric messages: notifications and
 * CAS, built and applied by transport/mbox_msg.c (see there and ofi.h
 * for why messages rather than RMA writes).
 *
 * FMPL_OFI_NRECV receives stay posted, in ring order.  Untagged receives
 * match in the order they were posted and FI_ORDER_SAS keeps each peer's
 * messages in the order sent, so the ring holds every peer's messages in
 * its order; completions may be reported in another order (comp_order is
 * FI_ORDER_NONE), so a message is applied only once all those before it
 * in the ring have been.  The ring size bounds nothing: messages that
 * find no posted receive wait in the provider as unexpected messages.
 */
#include <stdlib.h>
#include <string.h>

#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

#include "fmpl.h"
#include "base/boot.h"
#include "base/log.h"
#include "transport/ofi/ofi.h"

/* Post the receives the ring lacks, in ring order. */
static int repost(fmpl_ofi_t *o, fmpl_ofi_chan_t *ch)
{
    while (ch->posted < ch->applied + FMPL_OFI_NRECV) {
        fmpl_ofi_rx_t *rx = &ch->rx[ch->posted % FMPL_OFI_NRECV];
        rx->done = 0;
        ssize_t rc = fi_recv(ch->ep, &rx->msg, sizeof rx->msg, NULL, FI_ADDR_UNSPEC, rx);
        if (rc == -FI_EAGAIN)
            return FMPL_SUCCESS;   /* the next progress call tries again */
        if (rc)
            return fmpl_ofi_error(o, (int)rc, "fi_recv", -1);
        ch->posted++;
    }
    return FMPL_SUCCESS;
}

int fmpl_ofi_msg_open(fmpl_ofi_t *o, fmpl_ofi_chan_t *ch)
{
    if (posix_memalign((void **)&ch->rx, 64, FMPL_OFI_NRECV * sizeof *ch->rx) != 0) {
        ch->rx = NULL;
        return FMPL_ERR_NOMEM;
    }
    memset(ch->rx, 0, FMPL_OFI_NRECV * sizeof *ch->rx);
    ch->posted = ch->applied = 0;
    return repost(o, ch);
}

/* after the endpoint is closed: nothing posted refers to the ring then */
void fmpl_ofi_msg_close(fmpl_ofi_chan_t *ch)
{
    free(ch->rx);
    ch->rx = NULL;
}

fmpl_ofi_rx_t *fmpl_ofi_msg_rx(fmpl_ofi_t *o, void *ctx)
{
    fmpl_ofi_rx_t *rx = ctx;
    for (int c = 0; c < FMPL_OFI_NEP; c++)
        if (o->ch[c].rx && rx >= o->ch[c].rx && rx < o->ch[c].rx + FMPL_OFI_NRECV)
            return rx;
    return NULL;
}

/* `locked`: the caller holds o->lock (it applies messages), so a full
 * queue drains through completions only, never by applying more. */
int fmpl_ofi_msg_send(fmpl_ofi_t *o, int ch, int peer, const fmpl_mmsg_t *m, size_t len,
                      int locked)
{
    fmpl_ofi_chan_t *c = &o->ch[ch];
    fmpl_tl_wait_t w = { 0 };
    ssize_t rc;
    while ((rc = fi_inject(c->ep, m, len, c->addr[peer])) == -FI_EAGAIN) {
        int brc = fmpl_ofi_busy(o, peer, &w, locked);
        if (brc != FMPL_SUCCESS)
            return brc;
    }
    return rc ? fmpl_ofi_error(o, (int)rc, "fi_inject", peer) : FMPL_SUCCESS;
}

int fmpl_ofi_answer(fmpl_mmsg_box_t *b, int peer, const fmpl_mmsg_t *m, size_t len)
{
    return fmpl_ofi_msg_send(b->ctx, FMPL_OFI_CTL, peer, m, len, 1);
}

/* Apply the messages that came, in ring order, and post their receives
 * again.  The caller holds o->lock. */
int fmpl_ofi_msg_apply(fmpl_ofi_t *o)
{
    int n = 0;
    for (int c = 0; c < FMPL_OFI_NEP; c++) {
        fmpl_ofi_chan_t *ch = &o->ch[c];
        unsigned long before = ch->applied;
        while (ch->applied != ch->posted) {
            fmpl_ofi_rx_t *head = &ch->rx[ch->applied % FMPL_OFI_NRECV];
            if (!head->done)
                break;
            /* applied to the lines of the rank libfabric says sent it
             * (FI_SOURCE), whatever rank its word names */
            fmpl_mmsg_apply(&o->box, head->from, &head->msg, sizeof head->msg);
            ch->applied++;
        }
        if (ch->applied != before) {
            n += (int)(ch->applied - before);
            repost(o, ch);
        }
    }
    return n;
}

volatile void *fmpl_ofi_mbox_in(fmpl_tl_t *tl, int peer, int idx)
{
    return (volatile void *)fmpl_mmsg_word(&fmpl_ofi_of(tl)->box, peer, idx, 0);
}

/* One message; injected, so `comp` never counts: it is on its way. */
int fmpl_ofi_notify(fmpl_tl_t *tl, int peer, int idx, unsigned off, const void *rec,
                    unsigned len, unsigned flags, fmpl_tl_comp_t *comp)
{
    (void)comp;
    fmpl_ofi_t *o = fmpl_ofi_of(tl);
    fmpl_mmsg_buf_t m;
    size_t n = fmpl_mmsg_notify(&o->box, &m, tl->rank, idx, off, rec, len);
    if (!n)
        return FMPL_ERR_ARG;
    int ch = flags & FMPL_TL_NOTIFY_UNORDERED ? FMPL_OFI_CTL : FMPL_OFI_DATA;
    return fmpl_ofi_msg_send(o, ch, peer, &m.m, n, 0);
}

/* mbox_msg.h's hooks for a CAS request: on CTL, with the CASes' answers */
int fmpl_ofi_request(fmpl_mmsg_box_t *b, int peer, const fmpl_mmsg_t *m, size_t len)
{
    return fmpl_ofi_msg_send(b->ctx, FMPL_OFI_CTL, peer, m, len, 0);
}

int fmpl_ofi_box_wait(fmpl_mmsg_box_t *b, volatile int *pending, int peer)
{
    return fmpl_ofi_wait(b->ctx, pending, peer);
}

int fmpl_ofi_mbox_cas(fmpl_tl_t *tl, int peer, int idx, unsigned off, int outgoing,
                      uint64_t expect, uint64_t desired, uint64_t *old)
{
    return fmpl_mmsg_cas(&fmpl_ofi_of(tl)->box, peer, idx, off, outgoing, expect, desired, old);
}
