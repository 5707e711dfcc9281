/*
 * dcfa_conn.c - queue pairs of the verbs transport, set up per peer on
 * first use.
 *
 * A process creates an RC queue pair for a peer only when one of them
 * first talks to the other, as MVAPICH2's on-demand connection manager
 * and UCX do: what a process creates and pins then grows with the peers
 * it talks to (a halo's few neighbours), not with the job's size.  The
 * job's bootstrap only carries each rank's card (GID, LID, MTU and the
 * number of one UD queue pair, its connection queue pair); connecting
 * then takes one exchange of datagrams on those:
 *
 *   A, first to send to B   creates its queue pair for B (INIT) and sends
 *                           B "ask {A, its number}";
 *   B, in its progress      creates its queue pair for A if it has none,
 *                           connects it to A's number (RTR, RTS) and
 *                           answers "answer {B, its number}";
 *   A                       connects its queue pair to B's number.
 *
 * Asking and answering are the same step - "here is my queue pair for
 * you: connect yours to it" - so when A and B ask each other at once,
 * each connects on the other's ask and the answers change nothing.  UD is
 * unreliable: an ask unanswered is sent again (200 ms, doubling to 2 s),
 * and an ask from a peer already connected is answered again with the
 * same number (its answer was lost).  A datagram is believed only if it
 * comes from the connection queue pair its sender published, with a
 * rank in range.  A peer's traffic may reach our queue pair while it is
 * still in INIT (the peer connected on our ask and wrote at once): the
 * RC retry (537 ms, seven times: connect_qp) delivers it once our answer
 * came, which the re-asks above leave time for.
 *
 * The peer must run its progress to answer: the ticker (transport/
 * ticker.h) does when it computes.  A dead peer, or one silent for
 * FMPL_DCFA_CONNECT_TIMEOUT seconds (default 60), ends the wait with
 * FMPL_ERR_PEER.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmpl.h"
#include "base/boot.h"
#include "base/clock.h"
#include "base/log.h"
#include "transport/dcfa/dcfa.h"

#define QKEY      0x464d504cu      /* "FMPL" */
#define GRH       40               /* a UD receive starts with room for the GRH */
#define MSG_MAGIC 0x64636661u      /* "dcfa" */

enum { ASK = 1, ANSWER = 2 };

typedef struct conn_msg {
    uint32_t magic, kind;
    int32_t from;
    uint32_t qpn;                  /* the sender's RC queue pair for the receiver */
    uint32_t oqpn;                 /* its agent's, for offloaded collectives, or 0 */
} conn_msg_t;

/* ---- cards ---------------------------------------------------------------- */

static int card_of(fmpl_dcfa_t *d, int r)
{
    fmpl_dcfa_peer_t *p = &d->peer[r];
    if (p->have_card)
        return FMPL_SUCCESS;
    fmpl_boot_t *b = d->tl->boot;
    size_t len = sizeof p->card;
    int rc = b->ops->get(b, r, "dcfa", &p->card, &len);
    if (rc != FMPL_SUCCESS || len != sizeof p->card) {
        fmpl_log_err("dcfa: rank %d published no verbs address", r);
        return rc != FMPL_SUCCESS ? rc : FMPL_ERR_INTERNAL;
    }
    p->have_card = 1;
    return FMPL_SUCCESS;
}

/* The address of rank r's port: a GRH (by GID) on RoCE, a LID otherwise. */
static struct ibv_ah_attr address_of(const fmpl_dcfa_t *d, const fmpl_dcfa_card_t *c)
{
    struct ibv_ah_attr a = { .dlid = c->lid, .port_num = d->port };
    if (d->roce || c->roce) {
        a.is_global = 1;
        memcpy(a.grh.dgid.raw, c->gid, 16);
        a.grh.sgid_index = (uint8_t)d->gid_index;
        a.grh.hop_limit = 64;
    }
    return a;
}

/* ---- RC queue pairs ------------------------------------------------------- */

/* RESET -> INIT, the same for ours and the agent's */
static int init_qp(fmpl_dcfa_t *d, fmpl_dcfa_qp_t *qp, int r)
{
    struct ibv_qp_attr m = { .qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = d->port,
                             .qp_access_flags = IBV_ACCESS_LOCAL_WRITE |
                                                IBV_ACCESS_REMOTE_WRITE |
                                                IBV_ACCESS_REMOTE_READ };
    int e = fmpl_dcfa_qp_modify(d, qp, &m,
                                IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
                                    IBV_QP_ACCESS_FLAGS);
    return e ? fmpl_dcfa_error(d, e, "ibv_modify_qp(INIT)", r) : FMPL_SUCCESS;
}

static int create_qp(fmpl_dcfa_t *d, int r)
{
    /* two pieces: a notification's header and its record (dcfa_rma.c) */
    struct ibv_qp_cap cap = { .max_send_wr = FMPL_DCFA_SQ, .max_send_sge = 2,
                              .max_inline_data = sizeof(fmpl_mmsg_t) };
    fmpl_dcfa_qp_t qp;
    int e = fmpl_dcfa_qp_create(d, IBV_QPT_RC, 1, &cap, &qp);
    if (e)
        return fmpl_dcfa_error(d, e, "ibv_create_qp", r);
    if (r < 0) {
        /* the probe of fmpl_dcfa_conn_open: what inline size we get */
        d->max_inline = cap.max_inline_data < sizeof(fmpl_mmsg_t) ? cap.max_inline_data
                                                                   : sizeof(fmpl_mmsg_t);
        fmpl_dcfa_qp_destroy(d, &qp);
        return FMPL_SUCCESS;
    }
    int rc = init_qp(d, &qp, r);
    if (rc != FMPL_SUCCESS) {
        fmpl_dcfa_qp_destroy(d, &qp);
        return rc;
    }
    d->peer[r].qp = qp;
    d->nqp++;
    rc = fmpl_peer_index_add(&d->by_qpn, qp.num, r) ? FMPL_ERR_NOMEM : FMPL_SUCCESS;
    /* the agent's beside it, where both ends have an agent that runs
     * offloaded collectives (dcfa_offload.h) */
    if (rc == FMPL_SUCCESS && d->off.on && fmpl_dcfa_peer_offloads(d, r)) {
        rc = fmpl_dcfa_off_qp(d, r, &d->peer[r].oqp);
        if (rc == FMPL_SUCCESS)
            rc = init_qp(d, &d->peer[r].oqp, r);
    }
    return rc;
}

int fmpl_dcfa_peer_offloads(fmpl_dcfa_t *d, int r)
{
    return card_of(d, r) == FMPL_SUCCESS && d->peer[r].card.offload;
}

/* INIT -> RTR -> RTS towards the peer's queue pair for us.  Timeouts:
 * 4.096 us x 2^17 = 537 ms, sent 7 times: a peer whose queue pair is
 * gone fails the request within about 4 s; receiver-not-ready retries
 * for ever (the peer reposts its receives as it applies them). */
static int connect_one(fmpl_dcfa_t *d, int r, fmpl_dcfa_qp_t *qp, uint32_t qpn)
{
    const fmpl_dcfa_card_t *c = &d->peer[r].card;
    struct ibv_qp_attr m = {
        .qp_state = IBV_QPS_RTR, .path_mtu = d->mtu < c->mtu ? d->mtu : (enum ibv_mtu)c->mtu,
        .dest_qp_num = qpn, .rq_psn = 0, .max_dest_rd_atomic = d->rd_atom, .min_rnr_timer = 12,
        .ah_attr = address_of(d, c) };
    int e = fmpl_dcfa_qp_modify(d, qp, &m,
                                IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                                    IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
                                    IBV_QP_MIN_RNR_TIMER);
    if (e)
        return fmpl_dcfa_error(d, e, "ibv_modify_qp(RTR)", r);
    /* ACK timeout 4.096 us x 2^17 = 537 ms; 6 retries, then the request
     * completes with RETRY_EXC_ERR and the peer counts as dead.
     *
     * Not shorter: an ACK is late whenever the peer's host does not run
     * it for a while, or a packet or a connection datagram is lost, and
     * neither is death.  With 67 ms (0.47 s in all), two soft-RoCE guests
     * on a two-core host with two busy loops beside them failed 1 of 8
     * jobs (coll_ops and random, 4 ranks) with FMPL_ERR_PEER between live
     * ranks; with 537 ms, 0 of 8.  A peer still in INIT when the answer
     * to its ask was lost needs the re-ask (after 200 ms, then 600 ms)
     * within the budget too.  UCX waits 1 s a try, MVAPICH2 4 s.
     *
     * Not 7 retries, the most the 3-bit field holds: the specification
     * makes only rnr_retry = 7 mean "for ever", but the kernel's rxe
     * (rxe_comp.c) never counts a retry_cnt of 7 down either, so a
     * request to a peer whose process died (its queue pair gone) was
     * retried for ever and no wait on it ended (found by dcfa_test's
     * two-guest kill under mpirun --enable-recovery).  RNR stays
     * infinite: a receive queue short of buffers is a slow peer, not a
     * dead one. */
    struct ibv_qp_attr s = { .qp_state = IBV_QPS_RTS, .timeout = 17, .retry_cnt = 6,
                             .rnr_retry = 7, .sq_psn = 0, .max_rd_atomic = d->rd_atom };
    e = fmpl_dcfa_qp_modify(d, qp, &s,
                            IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
                                IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
    if (e)
        return fmpl_dcfa_error(d, e, "ibv_modify_qp(RTS)", r);
    return FMPL_SUCCESS;
}

/* ours to the peer's queue pair qpn, and our agent's to its agent's oqpn
 * (when both have one) */
static int connect_qp(fmpl_dcfa_t *d, int r, uint32_t qpn, uint32_t oqpn)
{
    fmpl_dcfa_peer_t *p = &d->peer[r];
    int rc = connect_one(d, r, &p->qp, qpn);
    if (rc == FMPL_SUCCESS && p->oqp.made) {
        if (!oqpn) {
            fmpl_log_err("dcfa: rank %d's card says its agent runs offloaded collectives, "
                         "but it made no queue pair for them", r);
            return FMPL_ERR_INTERNAL;
        }
        rc = connect_one(d, r, &p->oqp, oqpn);
    }
    if (rc != FMPL_SUCCESS)
        return rc;
    p->qpn = qpn;
    p->oqpn = oqpn;
    p->ready = 1;
    return FMPL_SUCCESS;
}

/* ---- the connection queue pair (UD) ------------------------------------- */

static int post_ud_recv(fmpl_dcfa_t *d, int i)
{
    struct ibv_sge sge = { .addr = (uintptr_t)(d->ud_buf + (size_t)i * FMPL_DCFA_UD_BUF),
                           .length = FMPL_DCFA_UD_BUF, .lkey = d->ud_mr->lkey };
    struct ibv_recv_wr wr = { .wr_id = FMPL_DCFA_UD_TAG | (uint64_t)i, .sg_list = &sge,
                              .num_sge = 1 };
    int e = fmpl_dcfa_qp_recv(d, &d->ud, &wr);
    return e ? fmpl_dcfa_error(d, e, "ibv_post_recv (connection queue pair)", -1)
             : FMPL_SUCCESS;
}

static int send_conn(fmpl_dcfa_t *d, int r, uint32_t kind)
{
    fmpl_dcfa_peer_t *p = &d->peer[r];
    int rc = card_of(d, r);
    if (rc != FMPL_SUCCESS)
        return rc;
    if (!p->ah.made) {
        struct ibv_ah_attr a = address_of(d, &p->card);
        int e = fmpl_dcfa_ah_create(d, &a, &p->ah);
        if (e)
            return fmpl_dcfa_error(d, e, "ibv_create_ah", r);
    }
    if (d->ud_tx_busy >= FMPL_DCFA_UD_NTX)
        return FMPL_SUCCESS;       /* the datagram is lost; asks are sent again */
    int slot = d->ud_tx_next++ % FMPL_DCFA_UD_NTX;
    conn_msg_t *m = (conn_msg_t *)(d->ud_buf + (size_t)(FMPL_DCFA_UD_NRX + slot) *
                                                   FMPL_DCFA_UD_BUF);
    *m = (conn_msg_t){ MSG_MAGIC, kind, d->tl->rank, p->qp.num, p->oqp.num };
    struct ibv_sge sge = { .addr = (uintptr_t)m, .length = sizeof *m, .lkey = d->ud_mr->lkey };
    struct ibv_send_wr wr = { .wr_id = FMPL_DCFA_UD_TAG | FMPL_DCFA_UD_SEND, .sg_list = &sge,
                              .num_sge = 1, .opcode = IBV_WR_SEND,
                              .send_flags = IBV_SEND_SIGNALED,
                              .wr.ud = { .remote_qpn = p->card.ud_qpn,
                                         .remote_qkey = QKEY } };
    int e = fmpl_dcfa_qp_post(d, &d->ud, &wr, &p->ah);
    if (e)
        return fmpl_dcfa_error(d, e, "ibv_post_send (connection queue pair)", r);
    d->ud_tx_busy++;
    return FMPL_SUCCESS;
}

void fmpl_dcfa_conn_sent(fmpl_dcfa_t *d) { d->ud_tx_busy--; }

void fmpl_dcfa_conn_recv(fmpl_dcfa_t *d, int slot, const struct ibv_wc *wc)
{
    const conn_msg_t *m =
        (const conn_msg_t *)(d->ud_buf + (size_t)slot * FMPL_DCFA_UD_BUF + GRH);
    if (wc->status == IBV_WC_SUCCESS && wc->byte_len == GRH + sizeof *m &&
        m->magic == MSG_MAGIC && (m->kind == ASK || m->kind == ANSWER) && m->from >= 0 &&
        m->from < d->tl->size && m->from != d->tl->rank) {
        int r = m->from, rc = card_of(d, r);
        fmpl_dcfa_peer_t *p = &d->peer[r];
        if (rc == FMPL_SUCCESS && wc->src_qp != p->card.ud_qpn) {
            fmpl_log_err("dcfa: a connection datagram claiming rank %d came from queue pair "
                         "%u, not rank %d's (%u): ignored", r, wc->src_qp, r, p->card.ud_qpn);
        } else if (rc == FMPL_SUCCESS) {
            if (!p->qp.made)
                rc = create_qp(d, r);
            if (rc == FMPL_SUCCESS && !p->ready)
                rc = connect_qp(d, r, m->qpn, m->oqpn);
            else if (rc == FMPL_SUCCESS && p->qpn != m->qpn)
                fmpl_log_err("dcfa: rank %d asks again with queue pair %u, connected to %u: "
                             "ignored", r, m->qpn, p->qpn);
            if (rc == FMPL_SUCCESS && m->kind == ASK)
                send_conn(d, r, ANSWER);   /* if it fails, the peer asks again */
            if (rc != FMPL_SUCCESS)
                d->failed_peer = r;
        }
    } else if (wc->status != IBV_WC_SUCCESS && wc->status != IBV_WC_WR_FLUSH_ERR) {
        fmpl_log_err("dcfa: a connection datagram failed: %s",
                     fmpl_dcfa_wc_str(wc->status));
    }
    if (wc->status != IBV_WC_WR_FLUSH_ERR)
        post_ud_recv(d, slot);
}

int fmpl_dcfa_connect(fmpl_dcfa_t *d, int r)
{
    fmpl_dcfa_peer_t *p = &d->peer[r];
    if (p->ready)
        return FMPL_SUCCESS;
    int rc = p->qp.made ? FMPL_SUCCESS : create_qp(d, r);
    double t0 = fmpl_rtime(), wait = 0.2, next = t0;
    fmpl_tl_wait_t w = { 0 };
    while (rc == FMPL_SUCCESS && !p->ready) {
        double t = fmpl_rtime();
        if (t >= next) {
            if (t - t0 > d->connect_timeout) {
                fmpl_log_err("dcfa: rank %d did not answer a connection request in %.0f s "
                             "(FMPL_DCFA_CONNECT_TIMEOUT)", r, d->connect_timeout);
                d->failed_peer = r;
                return FMPL_ERR_PEER;
            }
            rc = send_conn(d, r, ASK);
            next = t + wait;
            wait = wait < 1.0 ? 2 * wait : 2.0;
        }
        if (rc == FMPL_SUCCESS && fmpl_dcfa_progress(d->tl) == 0 && !p->ready)
            rc = fmpl_tl_idle(d->tl, &d->failed_peer, r, &w);
    }
    return rc;
}

/* ---- open, close ------------------------------------------------------- */

int fmpl_dcfa_conn_open(fmpl_dcfa_t *d)
{
    fmpl_tl_t *tl = d->tl;
    d->peer = calloc((size_t)tl->size, sizeof *d->peer);
    size_t bytes = (size_t)(FMPL_DCFA_UD_NRX + FMPL_DCFA_UD_NTX) * FMPL_DCFA_UD_BUF;
    if (!d->peer || posix_memalign((void **)&d->ud_buf, 64, bytes) != 0)
        return FMPL_ERR_NOMEM;
    memset(d->ud_buf, 0, bytes);
    if (!(d->ud_mr = fmpl_dcfa_reg_mr(d, d->ud_buf, bytes, IBV_ACCESS_LOCAL_WRITE)))
        return fmpl_dcfa_error(d, errno, "ibv_reg_mr (connection datagrams)", -1);
    struct ibv_qp_cap cap = { .max_send_wr = FMPL_DCFA_UD_NTX, .max_recv_wr = FMPL_DCFA_UD_NRX,
                              .max_send_sge = 1, .max_recv_sge = 1 };
    int e = fmpl_dcfa_qp_create(d, IBV_QPT_UD, 0, &cap, &d->ud);
    if (e)
        return fmpl_dcfa_error(d, e, "ibv_create_qp (UD, connections)", -1);
    struct ibv_qp_attr m = { .qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = d->port,
                             .qkey = QKEY };
    e = fmpl_dcfa_qp_modify(d, &d->ud, &m,
                            IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY);
    if (!e) {
        m = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTR };
        e = fmpl_dcfa_qp_modify(d, &d->ud, &m, IBV_QP_STATE);
    }
    if (!e) {
        m = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS, .sq_psn = 0 };
        e = fmpl_dcfa_qp_modify(d, &d->ud, &m, IBV_QP_STATE | IBV_QP_SQ_PSN);
    }
    if (e)
        return fmpl_dcfa_error(d, e, "ibv_modify_qp (UD, connections)", -1);
    for (int i = 0; i < FMPL_DCFA_UD_NRX; i++) {
        int rc = post_ud_recv(d, i);
        if (rc != FMPL_SUCCESS)
            return rc;
    }
    /* every queue pair is made alike: one made now tells what inline size
     * they get, which decides how requests are built before any exists */
    int rc = create_qp(d, -1);
    if (rc != FMPL_SUCCESS)
        return rc;
    fmpl_dcfa_card_t card = { .ud_qpn = d->ud.num, .lid = d->lid, .mtu = (uint8_t)d->mtu,
                              .roce = (uint8_t)d->roce, .offload = (uint8_t)d->off.on };
    memcpy(card.gid, d->gid.raw, 16);
    fmpl_boot_t *b = tl->boot;
    rc = b->ops->put(b, "dcfa", &card, sizeof card);
    /* everybody's connection queue pair is up before anybody asks */
    return rc == FMPL_SUCCESS ? b->ops->fence(b) : rc;
}

void fmpl_dcfa_conn_close(fmpl_dcfa_t *d)
{
    for (int r = 0; d->peer && r < d->tl->size; r++) {
        fmpl_dcfa_qp_destroy(d, &d->peer[r].qp);
        fmpl_dcfa_qp_destroy(d, &d->peer[r].oqp);
        fmpl_dcfa_ah_destroy(d, &d->peer[r].ah);
    }
    fmpl_dcfa_qp_destroy(d, &d->ud);
    if (d->ud_mr)
        fmpl_dcfa_dereg_mr(d, d->ud_mr);
    free(d->ud_buf);
    free(d->peer);
    fmpl_peer_index_free(&d->by_qpn);
    d->peer = NULL;
}
