/*
 * dcfa_agent_off.c - the agent's side of the offloaded collectives
 * (dcfa_offload.h): the engine that runs a rank's posted slots over the
 * queue pairs it made for the rank, in the rank's context.
 *
 * One pass (fmpl_off_agent_run) takes new slots and cancels, posts what
 * can go - a header for each receive of a round under way, the write of
 * each send whose header came - takes the completions, and ends rounds
 * and slots.  A round ends when each of its sends completed and each of
 * its receives saw its write land; the slot ends with its last round (or
 * at the first failed request: FAILED, naming the peer).  Everything the
 * agent posts is signalled: the completion frees its place in the send
 * queue.
 */
#define _GNU_SOURCE
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fmpl.h"
#include "transport/dcfa/dcfa.h"
#include "transport/dcfa/dcfa_agent.h"
#include "transport/dcfa/dcfa_offload.h"
#include "transport/dcfa/dcfa_uverbs.h"

/* a message's progress */
enum { M_HDR = 1,                  /* send: the receiver's header came */
       M_OUT = 2,                  /* posted: the header (receive), the write (send) */
       M_DONE = 4 };

/* work request ids of the agent's sends: the slot's generation, the
 * slot, the message; receives carry their buffer's index */
#define WR_SEND  (1ull << 63)
#define WR_WRITE (1ull << 62)
static uint64_t wr_of(int write, uint32_t gen, int slot, int msg)
{
    return WR_SEND | (write ? WR_WRITE : 0) | ((uint64_t)(gen & 0xffff) << 40) |
           ((uint64_t)slot << 32) | (uint32_t)msg;
}

static fmpl_off_slot_t *slot_of(fmpl_off_agent_t *o, int i) { return fmpl_off_slot(o->seg, i); }

static int repost(fmpl_off_agent_t *o, int i)
{
    /* the address the registration knows: the rank's */
    struct ibv_sge sge = { .addr = o->seg->base + o->seg->recv_off +
                                   (uint64_t)i * FMPL_OFF_RECV_LEN,
                           .length = FMPL_OFF_RECV_LEN, .lkey = o->seg->lkey };
    struct ibv_recv_wr wr = { .wr_id = (uint64_t)i, .sg_list = &sge, .num_sge = 1 };
    return fmpl_rxe_post_recv(&o->srq, &wr);
}

int fmpl_off_agent_open(fmpl_off_agent_t *o, int dev, uint32_t pd, int memfd, int size,
                        uint32_t lkey, int max_cqe)
{
    memset(o, 0, sizeof *o);
    o->dev = dev;
    o->pd = pd;
    o->size = size;
    o->cap = 2 * size + 8;
    uint32_t slot_len;
    uint64_t recv_off;
    size_t len = fmpl_off_seg_len(o->cap, &slot_len, &recv_off);
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
    if (p == MAP_FAILED)
        return errno;
    o->seg = p;
    o->seg_len = len;
    fmpl_off_seg_t *g = o->seg;
    if (g->nslots != FMPL_OFF_SLOTS || g->cap != (uint32_t)o->cap || g->slot_len != slot_len ||
        g->recv_off != recv_off || g->len != len || g->lkey != lkey)
        return EINVAL;             /* not the segment this agent's build lays out */
    o->peer = calloc((size_t)size, sizeof *o->peer);
    o->st = calloc((size_t)FMPL_OFF_SLOTS * (size_t)o->cap, 1);
    o->hdr = calloc((size_t)FMPL_OFF_SLOTS * (size_t)o->cap, sizeof *o->hdr);
    if (!o->peer || !o->st || !o->hdr)
        return ENOMEM;
    int cqe = FMPL_OFF_NRECV + FMPL_OFF_SLOTS * o->cap + 64;
    if (cqe > max_cqe)
        cqe = max_cqe;
    uint32_t got;
    struct mminfo mi;
    int e = fmpl_uv_create_cq(dev, cqe, &o->cq_handle, &got, &mi);
    if (e)
        return e;
    o->has_cq = 1;
    if ((e = fmpl_rxe_map(dev, &mi, &o->cq)) != 0)
        return e;
    if ((e = fmpl_uv_create_srq(dev, pd, FMPL_OFF_NRECV, 1, &o->srq_handle, &mi)) != 0)
        return e;
    o->has_srq = 1;
    if ((e = fmpl_rxe_map(dev, &mi, &o->srq)) != 0)
        return e;
    for (int i = 0; i < FMPL_OFF_NRECV; i++)
        if ((e = repost(o, i)) != 0)
            return e;
    o->on = 1;
    return 0;
}

int fmpl_off_agent_qp(fmpl_off_agent_t *o, int peer, struct ibv_qp_cap *cap, uint32_t *handle,
                      uint32_t *num)
{
    if (!o->on || peer < 0 || peer >= o->size || o->peer[peer].made)
        return EINVAL;
    fmpl_off_peer_t *p = &o->peer[peer];
    struct mminfo sq, rq;
    int e = fmpl_uv_create_qp(o->dev, o->pd, o->cq_handle, o->srq_handle, 1, IBV_QPT_RC, cap,
                              handle, num, &sq, &rq);
    if (e)
        return e;
    if ((e = fmpl_rxe_map(o->dev, &sq, &p->sq)) != 0 ||
        (e = fmpl_peer_index_add(&o->by_qpn, *num, peer) ? ENOMEM : 0) != 0) {
        fmpl_rxe_unmap(&p->sq);
        fmpl_uv_destroy(o->dev, IB_USER_VERBS_CMD_DESTROY_QP, *handle);
        return e;
    }
    p->handle = *handle;
    p->num = *num;
    p->made = 1;
    p->room = (int)cap->max_send_wr;
    return 0;
}

static void fail(fmpl_off_agent_t *o, int i, int peer, int err)
{
    fmpl_off_op_t *op = &o->op[i];
    if (!op->active || op->err)
        return;
    op->err = err;
    op->err_peer = peer;
}

static int post(fmpl_off_agent_t *o, int peer, struct ibv_send_wr *wr)
{
    fmpl_off_peer_t *p = &o->peer[peer];
    if (!p->made || p->used >= p->room)
        return EAGAIN;
    int e = fmpl_rxe_post_send(&p->sq, wr, 0);
    if (e)
        return e == ENOMEM ? EAGAIN : e;
    p->used++;
    p->dirty = 1;
    return 0;
}

/* Post what the round under way of slot i can post now. */
static void push(fmpl_off_agent_t *o, int i)
{
    fmpl_off_op_t *op = &o->op[i];
    fmpl_off_slot_t *s = slot_of(o, i);
    uint8_t *st = o->st + (size_t)i * o->cap;
    fmpl_off_hdr_t *hd = o->hdr + (size_t)i * o->cap;
    for (int k = op->first; k < (int)s->n && s->m[k].round == op->round && !op->err; k++) {
        fmpl_off_msg_t *m = &s->m[k];
        if (st[k] & (M_OUT | M_DONE))
            continue;
        int e;
        if (!m->send) {
            fmpl_off_hdr_t h = { s->chan, s->seq, m->j, m->key, m->addr, (uint32_t)m->len,
                                 FMPL_OFF_TOKEN(i, k) };
            struct ibv_sge sge = { .addr = (uintptr_t)&h, .length = sizeof h };
            struct ibv_send_wr wr = { .wr_id = wr_of(0, op->gen, i, k), .sg_list = &sge,
                                      .num_sge = 1, .opcode = IBV_WR_SEND,
                                      .send_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED };
            e = post(o, m->peer, &wr);
        } else if (st[k] & M_HDR) {
            uint32_t len = (uint32_t)(m->len < hd[k].len ? m->len : hd[k].len);
            if (m->len != hd[k].len && !op->trunc) {
                op->trunc = 1;
                op->trunc_peer = m->peer;
            }
            struct ibv_sge sge = { .addr = m->addr, .length = len, .lkey = m->key };
            struct ibv_send_wr wr = { .wr_id = wr_of(1, op->gen, i, k), .sg_list = &sge,
                                      .num_sge = len ? 1 : 0,
                                      .opcode = len ? IBV_WR_RDMA_WRITE_WITH_IMM
                                                    : IBV_WR_SEND_WITH_IMM,
                                      .send_flags = IBV_SEND_SIGNALED,
                                      .imm_data = htobe32(hd[k].token) };
            wr.wr.rdma.remote_addr = hd[k].addr;
            wr.wr.rdma.rkey = hd[k].rkey;
            e = post(o, m->peer, &wr);
        } else {
            continue;              /* its header is still to come */
        }
        if (e == 0)
            st[k] |= M_OUT;
        else if (e != EAGAIN)
            fail(o, i, m->peer, FMPL_ERR_INTERNAL);
    }
}

/* A header from `peer`: the slot in flight whose send it names, or -1.
 * A collective without the message it names was not called alike on
 * every member: it fails. */
static int attach(fmpl_off_agent_t *o, int peer, const fmpl_off_hdr_t *h)
{
    for (int i = 0; i < FMPL_OFF_SLOTS; i++) {
        fmpl_off_op_t *op = &o->op[i];
        fmpl_off_slot_t *s = slot_of(o, i);
        if (!op->active || s->chan != h->chan || s->seq != h->seq)
            continue;
        for (int k = 0; k < (int)s->n; k++)
            if (s->m[k].send && s->m[k].peer == peer && s->m[k].j == h->j) {
                o->st[(size_t)i * o->cap + k] |= M_HDR;
                o->hdr[(size_t)i * o->cap + k] = *h;
                return i;
            }
        fail(o, i, peer, FMPL_ERR_TRUNCATE);
        return i;
    }
    return -1;
}

/* Start the round that follows slot i's last: its first message */
static void next_round(fmpl_off_agent_t *o, int i)
{
    fmpl_off_op_t *op = &o->op[i];
    fmpl_off_slot_t *s = slot_of(o, i);
    int k = op->first;
    while (k < (int)s->n && s->m[k].round == op->round)
        k++;
    op->first = k;
    op->left = 0;
    if (k < (int)s->n) {
        op->round = s->m[k].round;
        for (int q = k; q < (int)s->n && s->m[q].round == op->round; q++)
            op->left++;
    }
}

static void end(fmpl_off_agent_t *o, int i)
{
    fmpl_off_op_t *op = &o->op[i];
    fmpl_off_slot_t *s = slot_of(o, i);
    uint32_t state = FMPL_OFF_DONE;
    if (op->err || op->trunc) {
        s->err = op->err ? op->err : FMPL_ERR_TRUNCATE;
        s->err_peer = op->err ? op->err_peer : op->trunc_peer;
        s->err_wc = (uint32_t)op->wc_status;
        state = FMPL_OFF_FAILED;
    }
    op->active = 0;
    atomic_store_explicit(&s->state, state, memory_order_release);
}

static void take(fmpl_off_agent_t *o, int i)
{
    fmpl_off_op_t *op = &o->op[i];
    fmpl_off_slot_t *s = slot_of(o, i);
    uint32_t gen = op->gen + 1;
    *op = (fmpl_off_op_t){ .active = 1, .gen = gen, .round = -1 };
    memset(o->st + (size_t)i * o->cap, 0, (size_t)o->cap);
    if (s->n > (uint32_t)o->cap) {
        fail(o, i, -1, FMPL_ERR_INTERNAL);
        end(o, i);
        return;
    }
    for (uint32_t k = 0; k < s->n; k++)
        if (s->m[k].peer < 0 || s->m[k].peer >= o->size || !o->peer[s->m[k].peer].made) {
            fail(o, i, s->m[k].peer, FMPL_ERR_INTERNAL);
            end(o, i);
            return;
        }
    /* headers that came first */
    for (int u = 0; u < o->nunexp;) {
        if (attach(o, o->unexp[u].peer, &o->unexp[u].h) >= 0)
            o->unexp[u] = o->unexp[--o->nunexp];
        else
            u++;
    }
    op->first = 0;
    op->round = s->n ? (int)s->m[0].round : 0;
    for (uint32_t k = 0; k < s->n && s->m[k].round == s->m[0].round; k++)
        op->left++;
}

static void got_header(fmpl_off_agent_t *o, int peer, const fmpl_off_hdr_t *h)
{
    if (attach(o, peer, h) >= 0)
        return;
    if (o->nunexp == o->capunexp) {
        int cap = o->capunexp ? 2 * o->capunexp : 64;
        void *p = realloc(o->unexp, (size_t)cap * sizeof *o->unexp);
        if (!p)
            return;                /* lost: its collective will not end */
        o->unexp = p;
        o->capunexp = cap;
    }
    o->unexp[o->nunexp].peer = peer;
    o->unexp[o->nunexp++].h = *h;
}

static void completion(fmpl_off_agent_t *o, const struct ibv_wc *wc)
{
    if (wc->wr_id & WR_SEND) {
        int i = (int)((wc->wr_id >> 32) & 0xff), k = (int)(uint32_t)wc->wr_id;
        uint32_t gen = (uint32_t)((wc->wr_id >> 40) & 0xffff);
        int peer = fmpl_peer_index_find(&o->by_qpn, wc->qp_num);
        if (peer >= 0)
            o->peer[peer].used--;
        fmpl_off_op_t *op = i < FMPL_OFF_SLOTS ? &o->op[i] : NULL;
        if (!op || !op->active || (op->gen & 0xffff) != gen)
            return;                /* a cancelled slot's */
        if (wc->status != IBV_WC_SUCCESS) {
            fail(o, i, peer, FMPL_ERR_PEER);
            op->wc_status = (int)wc->status;
        } else if (wc->wr_id & WR_WRITE) {
            o->st[(size_t)i * o->cap + k] |= M_DONE;
            op->left--;
        }
        return;
    }
    int b = (int)wc->wr_id;
    if (wc->status == IBV_WC_WR_FLUSH_ERR)
        return;
    const uint8_t *buf = (const uint8_t *)o->seg + o->seg->recv_off + (size_t)b * FMPL_OFF_RECV_LEN;
    if (wc->status == IBV_WC_SUCCESS) {
        int peer = fmpl_peer_index_find(&o->by_qpn, wc->qp_num);
        if (wc->opcode == IBV_WC_RECV_RDMA_WITH_IMM || (wc->wc_flags & IBV_WC_WITH_IMM)) {
            uint32_t t = be32toh(wc->imm_data);
            int i = FMPL_OFF_TOKEN_SLOT(t), k = FMPL_OFF_TOKEN_MSG(t);
            fmpl_off_op_t *op = i < FMPL_OFF_SLOTS ? &o->op[i] : NULL;
            uint8_t *st = op ? o->st + (size_t)i * o->cap : NULL;
            if (op && op->active && k < (int)slot_of(o, i)->n && !(st[k] & M_DONE) &&
                !slot_of(o, i)->m[k].send) {
                if (wc->byte_len != slot_of(o, i)->m[k].len && !op->trunc) {
                    op->trunc = 1;
                    op->trunc_peer = slot_of(o, i)->m[k].peer;
                }
                st[k] |= M_DONE;
                op->left--;
            }
        } else if (peer >= 0 && wc->byte_len == sizeof(fmpl_off_hdr_t)) {
            fmpl_off_hdr_t h;
            memcpy(&h, buf, sizeof h);
            got_header(o, peer, &h);
        }
    }
    repost(o, b);
}

int fmpl_off_agent_run(fmpl_off_agent_t *o)
{
    if (!o->on)
        return 0;
    int n = 0;
    for (int i = 0; i < FMPL_OFF_SLOTS; i++) {
        fmpl_off_slot_t *s = slot_of(o, i);
        uint32_t state = atomic_load_explicit(&s->state, memory_order_acquire);
        if (!o->op[i].active && state == FMPL_OFF_POSTED) {
            take(o, i);
            n++;
        } else if (state == FMPL_OFF_CANCEL) {
            o->op[i].active = 0;
            atomic_store_explicit(&s->state, FMPL_OFF_FREE, memory_order_release);
            n++;
        }
    }
    struct ibv_wc wc[32];
    int got;
    while ((got = fmpl_rxe_poll(&o->cq, 32, wc)) > 0) {
        for (int k = 0; k < got; k++)
            completion(o, &wc[k]);
        n += got;
    }
    for (int i = 0; i < FMPL_OFF_SLOTS; i++) {
        fmpl_off_op_t *op = &o->op[i];
        while (op->active && !op->err && op->left == 0) {
            if (op->first >= (int)slot_of(o, i)->n) {
                end(o, i);
                n++;
                break;
            }
            next_round(o, i);
            if (op->first >= (int)slot_of(o, i)->n) {
                end(o, i);
                n++;
                break;
            }
        }
        if (op->active && op->err) {
            end(o, i);
            n++;
        }
        if (op->active)
            push(o, i);
    }
    for (int r = 0; r < o->size; r++) {
        fmpl_off_peer_t *p = &o->peer[r];
        if (p->dirty) {
            p->dirty = 0;
            /* a failed doorbell fails the requests it would have sent:
             * rxe completes them in error when the queue pair is gone */
            fmpl_uv_doorbell_ioctl(o->dev, p->handle);
        }
    }
    return n;
}

int fmpl_off_agent_busy(const fmpl_off_agent_t *o)
{
    for (int i = 0; o->on && i < FMPL_OFF_SLOTS; i++)
        if (o->op[i].active)
            return 1;
    return 0;
}

/* After the client's queue pairs are gone (dcfa_agent.c: drop_client) */
void fmpl_off_agent_close(fmpl_off_agent_t *o)
{
    for (int r = 0; o->peer && r < o->size; r++)
        fmpl_rxe_unmap(&o->peer[r].sq);
    fmpl_rxe_unmap(&o->srq);
    fmpl_rxe_unmap(&o->cq);
    if (o->has_srq)
        fmpl_uv_destroy(o->dev, IB_USER_VERBS_CMD_DESTROY_SRQ, o->srq_handle);
    if (o->has_cq)
        fmpl_uv_destroy(o->dev, IB_USER_VERBS_CMD_DESTROY_CQ, o->cq_handle);
    if (o->seg)
        munmap(o->seg, o->seg_len);
    free(o->peer);
    fmpl_peer_index_free(&o->by_qpn);
    free(o->st);
    free(o->hdr);
    free(o->unexp);
    memset(o, 0, sizeof *o);
}
