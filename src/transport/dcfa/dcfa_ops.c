/*
 * dcfa_ops.c - device, queue pairs, completions and the ops table of the
 * InfiniBand verbs transport (see dcfa.h).
 *
 *   FMPL_DCFA_DEVICE=NAME      the device (default: the first with an
 *                              active port)
 *   FMPL_DCFA_PORT=N           its port (default: the first active one)
 *   FMPL_DCFA_GID_INDEX=N      the source GID on RoCE (default: the first
 *                              IPv4-mapped GID - RoCE v2 over the port's
 *                              IPv4 address -, else GID 0)
 *   FMPL_DCFA_CONNECT_TIMEOUT=S  how long a peer may leave a connection
 *                              request unanswered (default 60 s;
 *                              dcfa_conn.c)
 *   FMPL_DCFA_RCACHE_MB=N      registered memory kept with no user, in
 *                              MiB (default 256; 0: no registration cache;
 *                              dcfa_mem.c)
 *   FMPL_DCFA_AGENT=0|1        direct or split mode (dcfa_verbs.c)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmpl.h"
#include "base/boot.h"
#include "base/clock.h"
#include "base/env.h"
#include "base/log.h"
#include "transport/dcfa/dcfa.h"
#include "transport/errmap.h"
#include "transport/dcfa/dcfa_agent.h"

#define NOPS 4096                  /* send requests in flight at most */


int fmpl_dcfa_error(fmpl_dcfa_t *d, int err, const char *verb, int peer)
{
    return fmpl_tl_fail("dcfa", verb, peer, err, strerror(err), d ? &d->failed_peer : NULL);
}

/* ---- send requests ---------------------------------------------------- */

/* A free request for `peer`, holding nothing; the free list must not be
 * empty. */
static fmpl_dcfa_op_t *op_take(fmpl_dcfa_t *d, int peer)
{
    fmpl_dcfa_op_t *op = d->op_free;
    d->op_free = op->next;
    *op = (fmpl_dcfa_op_t){ .bounce = -1, .reg = -1, .peer = peer };
    return op;
}

fmpl_dcfa_op_t *fmpl_dcfa_op_get(fmpl_dcfa_t *d, int peer)
{
    fmpl_tl_wait_t w = { 0 };
    while (!d->op_free) {
        if (fmpl_dcfa_progress(d->tl) != 0)
            continue;
        if (fmpl_tl_idle(d->tl, &d->failed_peer, peer, &w) != FMPL_SUCCESS)
            return NULL;
    }
    return op_take(d, peer);
}

/* Release what the request held; its comp counts down last, so that a
 * waiter that sees 0 finds the status set. */
void fmpl_dcfa_op_put(fmpl_dcfa_t *d, fmpl_dcfa_op_t *op)
{
    if (op->reg >= 0)
        fmpl_rcache_put(&d->rc, op->reg);
    if (op->bounce >= 0)
        fmpl_dcfa_bounce_put(d, op->bounce);
    if (op->comp)
        __atomic_fetch_sub(&op->comp->pending, 1, __ATOMIC_RELEASE);
    /* a free op holds nothing (fmpl_dcfa_get looks for its own in flight) */
    *op = (fmpl_dcfa_op_t){ .bounce = -1, .reg = -1, .peer = -1 };
    op->next = d->op_free;
    d->op_free = op;
}

int fmpl_dcfa_post(fmpl_dcfa_t *d, int peer, struct ibv_send_wr *wr, fmpl_dcfa_op_t *op)
{
    fmpl_tl_wait_t w = { 0 };
    int rc = fmpl_dcfa_connect(d, peer);
    while (rc == FMPL_SUCCESS && d->peer[peer].sq_used >= FMPL_DCFA_SQ)
        if (fmpl_dcfa_progress(d->tl) == 0)
            rc = fmpl_tl_idle(d->tl, &d->failed_peer, peer, &w);
    if (rc == FMPL_SUCCESS && d->failed_peer == peer)
        rc = FMPL_ERR_PEER;
    if (op->comp)
        __atomic_fetch_add(&op->comp->pending, 1, __ATOMIC_RELAXED);
    if (rc != FMPL_SUCCESS) {
        fmpl_dcfa_op_put(d, op);
        return rc;
    }
    wr->wr_id = (uint64_t)(uintptr_t)op;
    wr->send_flags |= IBV_SEND_SIGNALED;
    int e = fmpl_dcfa_qp_post(d, &d->peer[peer].qp, wr, NULL);
    if (e) {
        fmpl_dcfa_op_put(d, op);
        return fmpl_dcfa_error(d, e, "ibv_post_send", peer);
    }
    /* its completion completes the unsignalled ones before it (below) */
    op->covers = d->peer[peer].unsig;
    d->peer[peer].unsig = 0;
    d->peer[peer].sq_used++;
    return FMPL_SUCCESS;
}

static const char *const bare_verb[] = {
    [FMPL_DCFA_BARE_SEND] = "SEND (mailbox record)",
    [FMPL_DCFA_BARE_WRITE] = "RDMA WRITE",
};

/*
 * Unsignalled requests.  A request whose data is inline and that counts
 * no fmpl_tl_comp_t needs no completion: only its place in the send
 * queue must come back.  The InfiniBand specification (vol. 1, 10.8.3,
 * and 9.5's in-order completion on an RC queue pair) has a signalled
 * request's completion mean that every request posted before it on that
 * queue has completed, so every FMPL_DCFA_UNSIG-th request (or any
 * request with an op, e.g. a keepalive) is signalled and its completion
 * frees the places of those before it (op->covers).  A request that
 * fails completes whatever its signalling, with its wr_id: the peer and
 * the verb it carries name it (progress_locked).  What it saves: an op
 * taken and released, a completion written by the device and read by
 * progress - on rxe under qemu about 100 instructions of the 8-byte
 * ping-pong's, per message, and the kernel's completion entry (issue 17's
 * note).
 */
int fmpl_dcfa_post_bare(fmpl_dcfa_t *d, int peer, struct ibv_send_wr *wr, int kind)
{
    fmpl_dcfa_peer_t *p = &d->peer[peer];
    if (!p->ready || p->unsig >= FMPL_DCFA_UNSIG || p->sq_used >= FMPL_DCFA_SQ ||
        d->failed_peer == peer) {
        /* signalled (or the general path's waits and errors) */
        fmpl_dcfa_op_t *op = fmpl_dcfa_op_get(d, peer);
        if (!op)
            return FMPL_ERR_PEER;
        op->verb = bare_verb[kind];
        return fmpl_dcfa_post(d, peer, wr, op);
    }
    wr->wr_id = FMPL_DCFA_BARE_TAG | (uint64_t)kind << 40 | (uint64_t)peer;
    wr->send_flags &= ~(unsigned)IBV_SEND_SIGNALED;
    int e = fmpl_dcfa_qp_post(d, &p->qp, wr, NULL);
    if (e)
        return fmpl_dcfa_error(d, e, "ibv_post_send", peer);
    p->unsig++;
    p->sq_used++;
    return FMPL_SUCCESS;
}

/* ---- completions -------------------------------------------------------- */

static int post_recv(fmpl_dcfa_t *d, int i)
{
    struct ibv_sge sge = { .addr = (uintptr_t)fmpl_dcfa_rx(d, i), .length = (uint32_t)d->rx_len,
                           .lkey = d->rx_mr->lkey };
    struct ibv_recv_wr wr = { .wr_id = FMPL_DCFA_RECV_TAG | (uint64_t)i, .sg_list = &sge,
                              .num_sge = 1 };
    int e = fmpl_dcfa_qp_recv(d, NULL, &wr);
    return e ? fmpl_dcfa_error(d, e, "ibv_post_srq_recv", -1) : FMPL_SUCCESS;
}

/* Post up to `n` of the receive buffers taken back.  A buffer goes back
 * when progress next finds the queue empty, not when its message is
 * applied: on rxe under qemu posting one was about 120 instructions
 * between a message's completion and the receive seeing it (callgrind,
 * bench/latency -s 8); a waiting rank finds the queue empty many times a
 * message.  Under a stream that never leaves the queue empty the buffers
 * go back FMPL_DCFA_REPOST at a time, of FMPL_DCFA_NRECV posted. */
static void repost(fmpl_dcfa_t *d, int n)
{
    while (n-- > 0 && d->nrepost > 0)
        post_recv(d, d->repost[--d->nrepost]);
}

/* A send request's completion: what it held goes back. */
static void send_done(fmpl_dcfa_t *d, const struct ibv_wc *wc)
{
    if (wc->wr_id & FMPL_DCFA_BARE_TAG) {
        /* an unsignalled request completes only in error */
        int peer = (int)(wc->wr_id & 0xffffff);
        fmpl_log_err("dcfa: %s to rank %d failed: %s", bare_verb[(wc->wr_id >> 40) & 1], peer,
                     fmpl_dcfa_wc_str(wc->status));
        d->failed_peer = peer;
        return;
    }
    fmpl_dcfa_op_t *op = (fmpl_dcfa_op_t *)(uintptr_t)wc->wr_id;
    d->peer[op->peer].sq_used -= 1 + op->covers;
    if (op->probe)
        d->peer[op->peer].probing = 0;
    if (wc->status != IBV_WC_SUCCESS) {
        fmpl_log_err("dcfa: %s to rank %d failed: %s", op->verb ? op->verb : "a request",
                     op->peer, fmpl_dcfa_wc_str(wc->status));
        d->failed_peer = op->peer;
        if (op->comp && op->comp->status == FMPL_SUCCESS)
            op->comp->status = FMPL_ERR_PEER;
    }
    fmpl_dcfa_op_put(d, op);
}

static int progress_locked(fmpl_dcfa_t *d)
{
    struct ibv_wc wc[16];
    int n = 0;
    fmpl_dcfa_agent_check(d);
    for (;;) {
        int got = fmpl_dcfa_cq_poll(d, 16, wc);
        if (got < 0) {
            fmpl_dcfa_error(d, EIO, "ibv_poll_cq", -1);
            return n;
        }
        if (got == 0)
            repost(d, 4);
        /* send completions first: applying a message may answer it (a
         * CAS) and wait for room in a send queue, which completions
         * polled here but not yet counted would give (one signalled
         * completion frees the places of the unsignalled requests before
         * it: fmpl_dcfa_post_bare) */
        for (int i = 0; i < got; i++)
            if (!(wc[i].wr_id & (FMPL_DCFA_UD_TAG | FMPL_DCFA_RECV_TAG)))
                send_done(d, &wc[i]);
        for (int i = 0; i < got; i++) {
            if (wc[i].wr_id & FMPL_DCFA_UD_TAG) {
                if (wc[i].wr_id & FMPL_DCFA_UD_SEND)
                    fmpl_dcfa_conn_sent(d);
                else
                    fmpl_dcfa_conn_recv(d, (int)(wc[i].wr_id & 0xffff), &wc[i]);
                continue;
            }
            if (!(wc[i].wr_id & FMPL_DCFA_RECV_TAG))
                continue;
            int slot = (int)(wc[i].wr_id & ~FMPL_DCFA_RECV_TAG);
            if (wc[i].status != IBV_WC_SUCCESS) {
                if (wc[i].status != IBV_WC_WR_FLUSH_ERR)
                    fmpl_log_err("dcfa: a receive failed: %s",
                                 fmpl_dcfa_wc_str(wc[i].status));
                continue;          /* the queue is going away */
            }
            /* an RC queue pair of ours has one peer, known from the
             * connection: its messages may write only its lines */
            int from = fmpl_peer_index_find(&d->by_qpn, wc[i].qp_num);
            fmpl_mmsg_apply(&d->box, from >= 0 ? from : FMPL_MMSG_FROM_STRANGER,
                            fmpl_dcfa_rx(d, slot), wc[i].byte_len);
            d->repost[d->nrepost++] = slot;
            if (d->nrepost == FMPL_DCFA_REPOST)
                repost(d, FMPL_DCFA_REPOST);
        }
        n += got;
        if (got < 16)
            return n;
    }
}

/* One caller at a time: the ticker, the application's threads, and a
 * wait inside one of our entry points (which holds the lock already).
 * Where the completion queue is ours to read (split mode), an empty one
 * is seen without the lock: a waiting rank polls in a loop, and the lock
 * (two atomic operations) with the calls of a poll came to about 130
 * instructions where the look is a dozen (callgrind, in the soft-RoCE
 * test bed, where every instruction is emulated).  Every 16th call
 * takes the lock anyway, for the agent's check (progress_locked): while
 * the process computes, only the ticker calls, every millisecond or so. */
int fmpl_dcfa_progress(fmpl_tl_t *tl)
{
    fmpl_dcfa_t *d = fmpl_dcfa_of(tl);
    unsigned long calls = fmpl_ticker_note(&d->ticker);
    if (d->split && (calls & 15) != 0 && fmpl_rxe_empty(&d->rcq) && !d->nrepost)
        return 0;
    if (!fmpl_rlock_try(&d->lock))
        return 0;
    int n = progress_locked(d);
    fmpl_rlock_give(&d->lock);
    return n;
}

int fmpl_dcfa_wait(fmpl_dcfa_t *d, volatile int *pending, int peer)
{
    return fmpl_tl_wait_pending(d->tl, pending, &d->failed_peer, peer);
}

/* ---- the device --------------------------------------------------------- */

/* An int setting (env.h's rules); unset leaves *v as it is.  -1 if bad. */
static int env_int(const char *name, int lo, int hi, int *v)
{
    char what[64];
    long x;
    snprintf(what, sizeof what, "not a number from %d to %d", lo, hi);
    if (fmpl_env_long(name, *v, lo, hi, what, &x) != FMPL_SUCCESS)
        return -1;
    *v = (int)x;
    return 0;
}

/* The first IPv4-mapped GID (::ffff:a.b.c.d: RoCE v2 over IPv4), else 0. */
static int pick_gid(fmpl_dcfa_t *d, int tbl_len)
{
    for (int i = 0; i < tbl_len; i++) {
        union ibv_gid g;
        if (fmpl_ibv.ibv_query_gid(d->ctx, d->port, i, &g) != 0)
            continue;
        static const uint8_t v4[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
        if (memcmp(g.raw, v4, sizeof v4) == 0)
            return i;
    }
    return 0;
}

int fmpl_dcfa_open_device(fmpl_dcfa_t *d)
{
    const char *want = getenv("FMPL_DCFA_DEVICE");
    int port = 0, gidx = -1;
    int rc = fmpl_dcfa_lib_load();
    if (rc != FMPL_SUCCESS)
        return rc;
    if (env_int("FMPL_DCFA_PORT", 1, 255, &port) < 0 ||
        env_int("FMPL_DCFA_GID_INDEX", 0, 65535, &gidx) < 0)
        return FMPL_ERR_ARG;
    int n = 0;
    struct ibv_device **list = fmpl_ibv.ibv_get_device_list(&n);
    if (!list || n == 0) {
        fmpl_log_err("dcfa: no InfiniBand or RoCE device here (ibv_get_device_list found "
                     "none)");
        if (list)
            fmpl_ibv.ibv_free_device_list(list);
        return FMPL_ERR_UNSUPPORTED;
    }
    struct ibv_port_attr pa;
    for (int i = 0; i < n && !d->ctx; i++) {
        if (want && *want && strcmp(fmpl_ibv.ibv_get_device_name(list[i]), want) != 0)
            continue;
        struct ibv_context *c = fmpl_ibv.ibv_open_device(list[i]);
        struct ibv_device_attr da;
        if (!c)
            continue;
        if (fmpl_ibv.ibv_query_device(c, &da) != 0) {
            fmpl_ibv.ibv_close_device(c);
            continue;
        }
        for (int p = port ? port : 1; p <= (port ? port : da.phys_port_cnt); p++)
            if (fmpl_dcfa_query_port(c, (uint8_t)p, &pa) == 0 && pa.state == IBV_PORT_ACTIVE) {
                d->ctx = c;
                d->port = (uint8_t)p;
                break;
            }
        if (!d->ctx)
            fmpl_ibv.ibv_close_device(c);
    }
    fmpl_ibv.ibv_free_device_list(list);
    if (!d->ctx) {
        fmpl_log_err("dcfa: no active port on %s%s%s", want && *want ? "device " : "any device",
                     want && *want ? want : "", port ? " (FMPL_DCFA_PORT)" : "");
        return FMPL_ERR_UNSUPPORTED;
    }
    d->roce = pa.link_layer == IBV_LINK_LAYER_ETHERNET;
    d->lid = pa.lid;
    d->mtu = pa.active_mtu;
    d->gid_index = gidx >= 0 ? gidx : d->roce ? pick_gid(d, pa.gid_tbl_len) : 0;
    if (fmpl_ibv.ibv_query_gid(d->ctx, d->port, d->gid_index, &d->gid) != 0) {
        fmpl_log_err("dcfa: %s port %d has no GID %d", fmpl_ibv.ibv_get_device_name(d->ctx->device),
                     d->port, d->gid_index);
        return FMPL_ERR_ARG;
    }
    return FMPL_SUCCESS;
}

/* What this process holds of the device, for FMPL_VERBOSE's account at
 * close (and the scale report, bench/dcfa_scale): the memory pinned by
 * registrations (the kernel's VmPin) and the device's queues mapped into
 * us (queue pairs, completion and receive queues: mappings of the uverbs
 * device), in KiB; -1 where /proc does not say. */
static void resources(long *pinned, long *queues)
{
    char line[512];
    *pinned = *queues = -1;
    FILE *f = fopen("/proc/self/status", "r");
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "VmPin:", 6) == 0)
            *pinned = strtol(line + 6, NULL, 10);
    if (f)
        fclose(f);
    f = fopen("/proc/self/maps", "r");
    if (f)
        *queues = 0;
    while (f && fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (strstr(line, "/dev/infiniband/uverbs") && sscanf(line, "%lx-%lx", &lo, &hi) == 2)
            *queues += (long)((hi - lo) >> 10);
    }
    if (f)
        fclose(f);
}

static void dcfa_close(fmpl_tl_t *tl);

static int dcfa_open(fmpl_tl_t *tl)
{
    fmpl_dcfa_t *d = calloc(1, sizeof *d);
    if (!d)
        return FMPL_ERR_NOMEM;
    d->tl = tl;
    d->failed_peer = -1;
    tl->priv = d;
    /* records run on into the slot's extension (mbox_msg.h): the box is
     * in our own memory, the network carries only the longer SEND */
    unsigned ext = fmpl_tl_slot_ext(tl->size, tl->nidx);
    tl->max_inline = 32 + ext;
    /* CAS by message (mbox_msg.h): no device atomics needed */
    tl->caps = FMPL_TL_CAP_GET | FMPL_TL_CAP_CAS | FMPL_TL_CAP_VADDR | FMPL_TL_CAP_SHARED_LINK;

    /* every completion has a request: sends (NOPS at most), receives and
     * datagrams - not a number that grows with the job */
    int cqe = NOPS + FMPL_DCFA_NRECV + FMPL_DCFA_UD_NRX + FMPL_DCFA_UD_NTX + 64;
    int rc = fmpl_dcfa_dev_open(d, cqe);
    d->dev_opened = 1;
    /* A software provider (rxe: RoCE, siw: iWARP) is the kernel's network
     * stack: each message costs a system call to send (the doorbell) and
     * the kernel's work on both sides, so a blocking small receive holds
     * its header back for the early message (p2p.h).  On rxe under qemu
     * that halved the 8-byte ping-pong (bench/compare -v, issue 17's
     * note): one message per exchange instead of two. */
    tl->kernel_any = d->vendor == FMPL_DCFA_RXE_VENDOR || d->vendor == FMPL_DCFA_SIW_VENDOR;
    if (rc == FMPL_SUCCESS)
        rc = fmpl_mmsg_open(&d->box, tl->rank, tl->size, tl->nidx, ext);
    d->box.answer = d->box.request = fmpl_dcfa_box_send;
    d->box.wait = fmpl_dcfa_box_wait;
    d->box.ctx = d;
    int mb = 256;
    if (rc == FMPL_SUCCESS && env_int("FMPL_DCFA_RCACHE_MB", 0, 1 << 20, &mb) < 0)
        rc = FMPL_ERR_ARG;
    d->cache_max = (size_t)mb << 20;
    if (rc == FMPL_SUCCESS)
        rc = fmpl_dcfa_mem_open(d);
    if (rc == FMPL_SUCCESS) {
        d->ops = calloc(NOPS, sizeof *d->ops);
        d->nops = d->ops ? NOPS : 0;
        if (!d->ops)
            rc = FMPL_ERR_NOMEM;
    }
    for (int i = 0; rc == FMPL_SUCCESS && i < NOPS; i++) {
        d->ops[i].next = d->op_free;
        d->op_free = &d->ops[i];
    }
    for (int i = 0; rc == FMPL_SUCCESS && i < FMPL_DCFA_NRECV; i++)
        rc = post_recv(d, i);
    if (rc == FMPL_SUCCESS) {
        int secs = 60;
        if (env_int("FMPL_DCFA_CONNECT_TIMEOUT", 1, 86400, &secs) < 0)
            rc = FMPL_ERR_ARG;
        d->connect_timeout = secs;
    }
    if (rc == FMPL_SUCCESS) {
        /* A queue pair's retry count is the work request's: every
         * go-back to a lost packet counts, until the request completes.
         * Over a lossy link a large write gets through in smaller ones. */
        int kib = FMPL_DCFA_MAX_WR >> 10;
        if (env_int("FMPL_DCFA_WRITE_MAX", 4, kib, &kib) < 0)
            rc = FMPL_ERR_ARG;
        d->write_max = (size_t)kib << 10;
    }
    if (rc == FMPL_SUCCESS)
        rc = fmpl_dcfa_off_open(d);
    if (rc == FMPL_SUCCESS)
        rc = fmpl_dcfa_conn_open(d);
    if (rc == FMPL_SUCCESS)
        rc = fmpl_ticker_start(&d->ticker, tl, fmpl_dcfa_progress, "dcfa");
    if (rc != FMPL_SUCCESS) {
        dcfa_close(tl);
        return rc;
    }
    char gid[40];
    snprintf(gid, sizeof gid, "%02x%02x:...:%02x%02x", d->gid.raw[0], d->gid.raw[1],
             d->gid.raw[14], d->gid.raw[15]);
    char mode[160];
    if (d->split)
        snprintf(mode, sizeof mode, "split mode (the host agent, pid %d, owns the device "
                 "context; this process maps its queues)", d->agent_pid);
    else
        snprintf(mode, sizeof mode, "direct mode (this process owns the verbs resources: %s)",
                 d->mode_why);
    fmpl_log_info("dcfa: %s, device %s port %d, %s, GID %d (%s), MTU %d, %d ranks, queue "
                  "pairs on first use, inline %u bytes%s",
                  mode, d->devname, d->port, d->roce ? "RoCE" : "InfiniBand",
                  d->gid_index, gid, 128 << d->mtu, tl->size, d->max_inline,
                  tl->kernel_any ? "; a software provider (the kernel's network stack): small "
                                   "blocking receives hold their headers back" : "");
    char what[96];
    fmpl_dcfa_off_what(d, what, sizeof what);
    if (d->off.on)
        fmpl_log_info("dcfa: the host agent runs the nonblocking %s of %zu bytes a block and "
                      "more (FMPL_DCFA_OFFLOAD, FMPL_DCFA_OFFLOAD_MIN)", what, d->off.min);
    else
        fmpl_log_info("dcfa: no collective goes to the host agent (%s)",
                      d->off.why ? d->off.why : "FMPL_DCFA_OFFLOAD=off");
    return FMPL_SUCCESS;
}

static void dcfa_close(fmpl_tl_t *tl)
{
    fmpl_dcfa_t *d = fmpl_dcfa_of(tl);
    if (!d)
        return;
    fmpl_ticker_stop(&d->ticker);
    /* let what is in flight end before its memory goes.  Not the
     * unsignalled requests: they hold no memory of ours, and no peer
     * needs them any more - fmpl_finalize closes after its fence, which
     * every rank reaches only once it has received what it waits for */
    if (d->peer && (d->cq || d->rcq.q)) {
        fmpl_tl_wait_t w = { 0 };
        int busy = 1;
        while (busy && w.spins < 100000) {
            busy = 0;
            for (int r = 0; r < tl->size; r++)
                if (d->peer[r].sq_used > d->peer[r].unsig && r != d->failed_peer)
                    busy = 1;
            if (busy && fmpl_dcfa_progress(tl) == 0 &&
                fmpl_tl_idle(d->tl, &d->failed_peer, -1, &w) != FMPL_SUCCESS)
                break;
        }
    }
    if (d->peer && fmpl_log_verbose()) {
        long pinned, queues;
        resources(&pinned, &queues);
        fmpl_log_info("dcfa: %d queue pairs (to %d of %d peers); pinned %ld KiB, of which %zu "
                      "fixed (receives, bounce slots, datagrams) and %zu cached; device "
                      "queues %ld KiB", d->nqp, d->nqp, tl->size - 1, pinned,
                      (FMPL_DCFA_NRECV * d->rx_len +
                       (size_t)FMPL_DCFA_NBOUNCE * FMPL_DCFA_BOUNCE +
                       (size_t)(FMPL_DCFA_UD_NRX + FMPL_DCFA_UD_NTX) * FMPL_DCFA_UD_BUF) >> 10,
                      d->rc.idle_bytes >> 10, queues);
    }
    fmpl_dcfa_conn_close(d);
    fmpl_dcfa_off_close(d);
    fmpl_dcfa_mem_close(d);
    if (d->dev_opened)
        fmpl_dcfa_dev_close(d);
    fmpl_mmsg_close(&d->box);
    free(d->ops);
    free(d);
    tl->priv = NULL;
}

/* ---- the entry points, each under the lock (locked_OP: OP) ------------- */

#define LOCKED(call)                                                          \
    do {                                                                      \
        fmpl_dcfa_t *d_ = fmpl_dcfa_of(tl);                                   \
        fmpl_rlock_take(&d_->lock);                                           \
        int rc_ = (call);                                                     \
        fmpl_rlock_give(&d_->lock);                                           \
        return rc_;                                                           \
    } while (0)

static int locked_mem_reg(fmpl_tl_t *tl, void *addr, size_t len, fmpl_tl_key_t *key)
{ LOCKED(fmpl_dcfa_mem_reg(tl, addr, len, key)); }
static int locked_mem_free(fmpl_tl_t *tl, void *p) { LOCKED(fmpl_dcfa_mem_free(tl, p)); }
static int locked_put(fmpl_tl_t *tl, int peer, const void *src, size_t len,
                      const fmpl_tl_key_t *key, uint64_t roff, unsigned flags,
                      fmpl_tl_comp_t *comp)
{
    (void)flags;                   /* one path for every put */
    LOCKED(fmpl_dcfa_put(tl, peer, src, len, key, roff, comp));
}
static int locked_get(fmpl_tl_t *tl, int peer, void *dst, size_t len, const fmpl_tl_key_t *key,
                      uint64_t roff)
{ LOCKED(fmpl_dcfa_get(tl, peer, dst, len, key, roff)); }
static int locked_notify(fmpl_tl_t *tl, int peer, int idx, unsigned off, const void *rec,
                         unsigned len, unsigned flags, fmpl_tl_comp_t *comp)
{ LOCKED(fmpl_dcfa_notify(tl, peer, idx, off, rec, len, flags, comp)); }
static int locked_mbox_cas(fmpl_tl_t *tl, int peer, int idx, unsigned off, int outgoing,
                           uint64_t expect, uint64_t desired, uint64_t *old)
{
    LOCKED(fmpl_mmsg_cas(&fmpl_dcfa_of(tl)->box, peer, idx, off, outgoing, expect, desired,
                         old));
}

static void locked_mem_dereg(fmpl_tl_t *tl, const fmpl_tl_key_t *key)
{
    fmpl_dcfa_t *d = fmpl_dcfa_of(tl);
    fmpl_rlock_take(&d->lock);
    fmpl_dcfa_mem_dereg(tl, key);
    fmpl_rlock_give(&d->lock);
}

static void *locked_mem_alloc(fmpl_tl_t *tl, size_t len)
{
    fmpl_dcfa_t *d = fmpl_dcfa_of(tl);
    fmpl_rlock_take(&d->lock);
    void *p = fmpl_dcfa_mem_alloc(tl, len);
    fmpl_rlock_give(&d->lock);
    return p;
}

/* Is `peer` alive?  Asked by a wait on it (p2p/progress.c) every 50 ms.
 *
 * A rank waiting to receive from a peer has nothing in flight to it, so
 * no completion would ever say that the peer's process died: under
 * fmplrun the launcher says so, but under a PMIx runtime that keeps the
 * job going (mpirun --enable-recovery, srun --no-kill) the wait would
 * last for ever.  So once a second, while a wait on a connected peer
 * lasts, a zero-byte RDMA WRITE goes to it: the peer's HCA (rxe: its
 * kernel) acknowledges it whatever its process is doing, computing or
 * stopped, and nothing reaches its memory - the InfiniBand specification
 * has the responder check no R_Key or address for a zero-length RDMA
 * operation (rxe's check_rkey says so too), and a write without
 * immediate makes no completion there.  When the process is gone its
 * queue pair is too; the write is retried until the retry count runs out
 * (6 retries of the 537 ms ACK timeout, dcfa_conn.c) and completes in
 * error: the peer is dead (progress_locked above).  The checks before
 * the lock only spare taking it; they are made again under it. */
static int dcfa_peer_ok(fmpl_tl_t *tl, int peer)
{
    fmpl_dcfa_t *d = fmpl_dcfa_of(tl);
    if (d->failed_peer == peer)
        return 0;
    if (peer < 0 || peer >= tl->size || peer == tl->rank)
        return 1;
    fmpl_dcfa_peer_t *p = &d->peer[peer];
    if (!p->ready || p->probing || p->sq_used >= FMPL_DCFA_SQ || !d->op_free)
        return 1;
    double now = fmpl_rtime();
    if (now - p->probed < FMPL_DCFA_PROBE || !fmpl_rlock_try(&d->lock))
        return 1;
    if (p->ready && !p->probing && p->sq_used < FMPL_DCFA_SQ && d->op_free) {
        fmpl_dcfa_op_t *op = op_take(d, peer);   /* no waiting for one here */
        op->probe = 1;
        op->verb = "a keepalive (zero-byte RDMA WRITE)";
        struct ibv_sge none = { 0 };   /* never read: num_sge is 0 */
        struct ibv_send_wr wr = { .opcode = IBV_WR_RDMA_WRITE, .sg_list = &none, .num_sge = 0 };
        p->probed = now;
        if (fmpl_dcfa_post(d, peer, &wr, op) == FMPL_SUCCESS)
            p->probing = 1;
    }
    fmpl_rlock_give(&d->lock);
    return d->failed_peer != peer;
}

/* A wait on comp gave up (a dead peer) with requests still counted in
 * it: their completions, in error or not, must not count down into
 * memory that is going away (transport.h). */
static void dcfa_forget(fmpl_tl_t *tl, fmpl_tl_comp_t *comp)
{
    fmpl_dcfa_t *d = fmpl_dcfa_of(tl);
    fmpl_rlock_take(&d->lock);
    for (int i = 0; i < d->nops; i++)
        if (d->ops[i].comp == comp)
            d->ops[i].comp = NULL;
    fmpl_rlock_give(&d->lock);
}

const fmpl_tl_ops_t fmpl_dcfa_ops = {
    .size = sizeof(fmpl_tl_ops_t),
    .name = "dcfa",
    .open = dcfa_open,
    .close = dcfa_close,
    .mem_reg = locked_mem_reg,
    .mem_dereg = locked_mem_dereg,
    .mem_alloc = locked_mem_alloc,
    .mem_free = locked_mem_free,
    .put = locked_put,
    .put_strided = fmpl_tl_put_strided_by_put,   /* one put a block, each locked */
    .put_iov = fmpl_tl_put_iov_by_put,
    .get = locked_get,
    .mbox_in = fmpl_dcfa_mbox_in,
    .notify = locked_notify,
    .put_notify = fmpl_tl_put_notify_by_parts,
    .mbox_cas = locked_mbox_cas,
    .progress = fmpl_dcfa_progress,
    .peer_ok = dcfa_peer_ok,
    .barrier = fmpl_tl_unsupported_barrier,
    .bcast = fmpl_tl_unsupported_bcast,
    .forget = dcfa_forget,
    .off_ok = fmpl_dcfa_off_ok,
    .off_start = fmpl_dcfa_off_start,
    .off_test = fmpl_dcfa_off_test,
    .off_cancel = fmpl_dcfa_off_cancel,
};
