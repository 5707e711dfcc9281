/*
 * dcfa_rma.c - puts, gets and mailbox messages of the verbs transport
 * (see dcfa.h).
 */
#include <errno.h>
#include <string.h>

#include "fmpl.h"
#include "base/log.h"
#include "transport/dcfa/dcfa.h"

static int bad_peer(const fmpl_dcfa_t *d, int peer)
{
    return peer < 0 || peer >= d->tl->size;
}

/* Ourselves, through the CPU: keys are virtual addresses here, and a
 * record applied at once comes after the copies before it.  (A queue
 * pair connected to itself would do too, at a round trip's cost.) */
static inline int self(const fmpl_dcfa_t *d, int peer) { return peer == d->tl->rank; }

/* One RDMA WRITE of [src, src + len) to raddr: inline in the request
 * when it fits, or from a bounce slot when it is small (the source is free
 * again at once either way), else from the source itself, registered for
 * this request (`comp` counts until it is done). */
static int write_one(fmpl_dcfa_t *d, int peer, const uint8_t *src, size_t len, uint64_t raddr,
                     uint32_t rkey, fmpl_tl_comp_t *comp)
{
    if (len <= d->max_inline) {
        struct ibv_sge sge = { .addr = (uintptr_t)src, .length = (uint32_t)len };
        struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
                                  .send_flags = IBV_SEND_INLINE,
                                  .wr.rdma = { .remote_addr = raddr, .rkey = rkey } };
        return fmpl_dcfa_post_bare(d, peer, &wr, FMPL_DCFA_BARE_WRITE);
    }
    fmpl_dcfa_op_t *op = fmpl_dcfa_op_get(d, peer);
    if (!op)
        return FMPL_ERR_PEER;
    op->verb = "RDMA WRITE";
    struct ibv_sge sge = { .addr = (uintptr_t)src, .length = (uint32_t)len };
    struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
                              .wr.rdma = { .remote_addr = raddr, .rkey = rkey } };
    int slot = -1;
    if (len <= FMPL_DCFA_BOUNCE && (slot = fmpl_dcfa_bounce_get(d)) >= 0) {
        uint8_t *b = d->bounce + (size_t)slot * FMPL_DCFA_BOUNCE;
        memcpy(b, src, len);
        op->bounce = slot;
        sge.addr = (uintptr_t)b;
        sge.lkey = d->bounce_mr->lkey;
    } else {
        int rc = fmpl_rcache_take(&d->rc, (void *)(uintptr_t)src, len, &op->reg);
        if (rc != FMPL_SUCCESS) {
            fmpl_dcfa_op_put(d, op);
            return rc;
        }
        sge.lkey = fmpl_dcfa_mr_of(d, op->reg)->lkey;
        op->comp = comp;
    }
    return fmpl_dcfa_post(d, peer, &wr, op);
}

int fmpl_dcfa_put(fmpl_tl_t *tl, int peer, const void *src, size_t len,
                  const fmpl_tl_key_t *key, uint64_t roff, fmpl_tl_comp_t *comp)
{
    fmpl_dcfa_t *d = fmpl_dcfa_of(tl);
    if (bad_peer(d, peer))
        return FMPL_ERR_RANK;
    if (self(d, peer)) {
        memmove((void *)(uintptr_t)(key->addr + roff), src, len);
        return FMPL_SUCCESS;
    }
    const uint8_t *s = src;
    uint64_t raddr = key->addr + roff;
    while (len) {
        size_t n = len < d->write_max ? len : d->write_max;
        int rc = write_one(d, peer, s, n, raddr, key->kind, comp);
        if (rc != FMPL_SUCCESS)
            return rc;
        s += n;
        raddr += n;
        len -= n;
    }
    return FMPL_SUCCESS;
}

/* RDMA READ into dst, synchronous: the destination is registered for the
 * reads, which end before we return. */
int fmpl_dcfa_get(fmpl_tl_t *tl, int peer, void *dst, size_t len, const fmpl_tl_key_t *key,
                  uint64_t roff)
{
    fmpl_dcfa_t *d = fmpl_dcfa_of(tl);
    if (bad_peer(d, peer))
        return FMPL_ERR_RANK;
    if (len == 0)
        return FMPL_SUCCESS;
    if (self(d, peer)) {
        memmove(dst, (const void *)(uintptr_t)(key->addr + roff), len);
        return FMPL_SUCCESS;
    }
    int reg;
    int rc = fmpl_rcache_take(&d->rc, dst, len, &reg);
    if (rc != FMPL_SUCCESS)
        return rc;
    uint32_t lkey = fmpl_dcfa_mr_of(d, reg)->lkey;
    fmpl_tl_comp_t c = { 0, FMPL_SUCCESS };
    uint8_t *p = dst;
    uint64_t raddr = key->addr + roff;
    for (size_t left = len; left && rc == FMPL_SUCCESS;) {
        size_t n = left < FMPL_DCFA_MAX_WR ? left : FMPL_DCFA_MAX_WR;
        fmpl_dcfa_op_t *op = fmpl_dcfa_op_get(d, peer);
        if (!op) {
            rc = FMPL_ERR_PEER;
            break;
        }
        op->verb = "RDMA READ";
        op->comp = &c;
        struct ibv_sge sge = { .addr = (uintptr_t)p, .length = (uint32_t)n, .lkey = lkey };
        struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_READ,
                                  .wr.rdma = { .remote_addr = raddr, .rkey = key->kind } };
        rc = fmpl_dcfa_post(d, peer, &wr, op);
        p += n;
        raddr += n;
        left -= n;
    }
    /* the reads already posted write into dst: let them end */
    int wrc = fmpl_dcfa_wait(d, &c.pending, peer);
    if (wrc != FMPL_SUCCESS && c.pending > 0) {
        /* the peer is gone with reads in flight: their completions (in
         * error) come later, when `c` is gone - they count nothing, and
         * one of them takes our reference to the registration along */
        for (int i = 0; i < d->nops; i++)
            if (d->ops[i].comp == &c) {
                d->ops[i].comp = NULL;
                if (reg >= 0 && d->ops[i].reg < 0) {
                    d->ops[i].reg = reg;
                    reg = -1;
                }
            }
        return rc != FMPL_SUCCESS ? rc : wrc;
    }
    fmpl_rcache_put(&d->rc, reg);
    if (rc != FMPL_SUCCESS)
        return rc;
    return wrc != FMPL_SUCCESS ? wrc : c.status;
}

/* ---- the mailbox, by messages (mbox_msg.h) ------------------------------- */

/* A SEND of the message, inline (unsignalled where it may be:
 * fmpl_dcfa_post_bare), or from a bounce slot when it is longer than the
 * queue pair's inline data (a record with an extension): the buffer is
 * free again at once either way.  On the same queue pair as
 * the puts, so it is executed after them. */
int fmpl_dcfa_send_msg(fmpl_dcfa_t *d, int peer, const fmpl_mmsg_t *m, size_t len)
{
    if (bad_peer(d, peer))
        return FMPL_ERR_RANK;
    if (self(d, peer)) {
        fmpl_mmsg_apply(&d->box, peer, m, len);
        return FMPL_SUCCESS;
    }
    struct ibv_sge sge = { .addr = (uintptr_t)m, .length = (uint32_t)len };
    struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND };
    if (len <= d->max_inline) {
        wr.send_flags = IBV_SEND_INLINE;
        return fmpl_dcfa_post_bare(d, peer, &wr, FMPL_DCFA_BARE_SEND);
    }
    fmpl_dcfa_op_t *op = fmpl_dcfa_op_get(d, peer);
    if (!op)
        return FMPL_ERR_PEER;
    op->verb = "SEND (mailbox record)";
    /* a stream of them may hold every slot: their completions free them
     * (an answer to a CAS, sent from progress, is always inline) */
    int slot;
    fmpl_tl_wait_t w = { 0 };
    while ((slot = fmpl_dcfa_bounce_get(d)) < 0)
        if (fmpl_dcfa_progress(d->tl) == 0 &&
            fmpl_tl_idle(d->tl, &d->failed_peer, peer, &w) != FMPL_SUCCESS) {
            fmpl_dcfa_op_put(d, op);
            return FMPL_ERR_PEER;
        }
    uint8_t *b = d->bounce + (size_t)slot * FMPL_DCFA_BOUNCE;
    memcpy(b, m, len);
    op->bounce = slot;
    sge.addr = (uintptr_t)b;
    sge.lkey = d->bounce_mr->lkey;
    return fmpl_dcfa_post(d, peer, &wr, op);
}

/* mbox_msg.h's hooks: an answer from progress and a request from an entry
 * point go the same way */
int fmpl_dcfa_box_send(fmpl_mmsg_box_t *b, int peer, const fmpl_mmsg_t *m, size_t len)
{
    return fmpl_dcfa_send_msg(b->ctx, peer, m, len);
}

volatile void *fmpl_dcfa_mbox_in(fmpl_tl_t *tl, int peer, int idx)
{
    return (volatile void *)fmpl_mmsg_word(&fmpl_dcfa_of(tl)->box, peer, idx, 0);
}

/* Inline, so `comp` never counts: the record is on its way. */
int fmpl_dcfa_notify(fmpl_tl_t *tl, int peer, int idx, unsigned off, const void *rec,
                     unsigned len, unsigned flags, fmpl_tl_comp_t *comp)
{
    (void)flags;
    (void)comp;
    fmpl_dcfa_t *d = fmpl_dcfa_of(tl);
    if (FMPL_MMSG_HDR + len <= d->max_inline && !bad_peer(d, peer) && !self(d, peer)) {
        /* the header and the record, each from where it is, into the
         * request's inline data: no message built first and copied again
         * (fmpl_mmsg_notify and fmpl_dcfa_send_msg were 96 instructions of
         * an 8-byte message's on rxe under qemu, fmpl_mmsg_notify_hdr is
         * 23; callgrind) */
        fmpl_mmsg_t h;
        if (!fmpl_mmsg_notify_hdr(&d->box, &h, tl->rank, idx, off, len))
            return FMPL_ERR_ARG;
        struct ibv_sge sge[2] = { { .addr = (uintptr_t)&h, .length = FMPL_MMSG_HDR },
                                  { .addr = (uintptr_t)rec, .length = len } };
        /* only what a SEND reads: the whole request zeroed was 50 more */
        struct ibv_send_wr wr;
        wr.next = NULL;
        wr.sg_list = sge;
        wr.num_sge = 2;
        wr.opcode = IBV_WR_SEND;
        wr.send_flags = IBV_SEND_INLINE;
        wr.imm_data = 0;
        return fmpl_dcfa_post_bare(d, peer, &wr, FMPL_DCFA_BARE_SEND);
    }
    fmpl_mmsg_buf_t m;
    size_t n = fmpl_mmsg_notify(&d->box, &m, tl->rank, idx, off, rec, len);
    if (!n)
        return FMPL_ERR_ARG;
    return fmpl_dcfa_send_msg(d, peer, &m.m, n);
}

int fmpl_dcfa_box_wait(fmpl_mmsg_box_t *b, volatile int *pending, int peer)
{
    return fmpl_dcfa_wait(b->ctx, pending, peer);
}
