/*
 * dcfa_uverbs.c - verbs commands to the kernel and rxe's queues, without
 * libibverbs (why: dcfa_uverbs.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/ib_user_ioctl_verbs.h>
#include <rdma/rdma_user_ioctl_cmds.h>

#include "transport/dcfa/dcfa_uverbs.h"

/* The kernel's headers and responses end in open-ended arrays (ioctl
 * attributes, the driver's data); ours follow them inside one struct, as
 * the ABI lays them out: a GNU extension that clang names and gcc takes
 * silently. */
#ifdef __clang__
#pragma clang diagnostic ignored "-Wgnu-variable-sized-type-not-at-end"
#endif

/* Room for an ioctl carrying a write command: its header and up to five
 * attributes (the command's number, core and driver input and output). */
#define IOCTL_LEN (sizeof(struct ib_uverbs_ioctl_hdr) + 5 * sizeof(struct ib_uverbs_attr))

/* the largest command we send: create_qp with no driver input, modify_qp */
#define CMD_MAX 256

static int by_write(int fd, uint32_t cmd, const void *req, size_t req_len, size_t resp_len)
{
    uint8_t buf[sizeof(struct ib_uverbs_cmd_hdr) + CMD_MAX];
    if (req_len > CMD_MAX || (req_len + sizeof(struct ib_uverbs_cmd_hdr)) % 4 || resp_len % 4)
        return EINVAL;
    struct ib_uverbs_cmd_hdr h = { .command = cmd,
                                   .in_words = (uint16_t)((sizeof h + req_len) / 4),
                                   .out_words = (uint16_t)(resp_len / 4) };
    memcpy(buf, &h, sizeof h);
    memcpy(buf + sizeof h, req, req_len);
    ssize_t n = write(fd, buf, sizeof h + req_len);
    return n == (ssize_t)(sizeof h + req_len) ? 0 : n < 0 ? errno : EIO;
}

static void attr(struct ib_uverbs_attr *a, uint16_t id, const void *p, size_t len)
{
    *a = (struct ib_uverbs_attr){ .attr_id = id, .len = (uint16_t)len };
    if (len <= sizeof a->data)
        memcpy(&a->data, p, len);      /* small inputs travel in the word */
    else
        a->data = (uintptr_t)p;
}

static void attr_out(struct ib_uverbs_attr *a, uint16_t id, void *p, size_t len)
{
    *a = (struct ib_uverbs_attr){ .attr_id = id, .len = (uint16_t)len, .data = (uintptr_t)p };
}

/* Write command `cmd` carried by the ioctl (UVERBS_METHOD_INVOKE_WRITE):
 * its header and attributes, then the call. */
static int by_ioctl(int fd, uint32_t cmd, const void *req, size_t core_req, size_t req_len,
                    void *resp, size_t core_resp, size_t resp_len)
{
    _Alignas(8) unsigned char buf[IOCTL_LEN];
    struct ib_uverbs_ioctl_hdr *h = (void *)buf;
    struct ib_uverbs_attr *a = h->attrs;
    memset(buf, 0, sizeof buf);
    int n = 0;
    uint64_t which = cmd;
    attr(&a[n++], UVERBS_ATTR_WRITE_CMD, &which, sizeof which);
    if (core_req)
        attr(&a[n++], UVERBS_ATTR_CORE_IN, req, core_req);
    if (core_resp)
        attr_out(&a[n++], UVERBS_ATTR_CORE_OUT, resp, core_resp);
    if (req_len > core_req)
        attr(&a[n++], UVERBS_ATTR_UHW_IN, (const uint8_t *)req + core_req, req_len - core_req);
    if (resp_len > core_resp)
        attr_out(&a[n++], UVERBS_ATTR_UHW_OUT, (uint8_t *)resp + core_resp,
                 resp_len - core_resp);
    h->length = (uint16_t)(sizeof *h + (size_t)n * sizeof *a);
    h->object_id = UVERBS_OBJECT_DEVICE;
    h->method_id = UVERBS_METHOD_INVOKE_WRITE;
    h->num_attrs = (uint16_t)n;
    h->driver_id = RDMA_DRIVER_RXE;
    return ioctl(fd, RDMA_VERBS_IOCTL, buf) == 0 ? 0 : errno;
}

int fmpl_uv_cmd(int fd, int via_ioctl, uint32_t cmd, void *req, size_t core_req,
                size_t req_len, void *resp, size_t core_resp, size_t resp_len)
{
    if (resp_len)
        memset(resp, 0, resp_len);
    if (via_ioctl)
        return by_ioctl(fd, cmd, req, core_req, req_len, resp, core_resp, resp_len);
    /* write(): a command with a response starts with its address */
    if (resp_len) {
        uint64_t at = (uintptr_t)resp;
        memcpy(req, &at, sizeof at);
    }
    return by_write(fd, cmd, req, req_len, resp_len);
}

/* ---- the commands ----------------------------------------------------- */

int fmpl_uv_get_context(int fd)
{
    struct ib_uverbs_get_context c = { 0 };
    struct ib_uverbs_get_context_resp r;
    int e = fmpl_uv_cmd(fd, 1, IB_USER_VERBS_CMD_GET_CONTEXT, &c, sizeof c, sizeof c, &r,
                        sizeof r, sizeof r);
    /* the context's event file is opened in the caller (the agent): its
     * copy would keep the context alive after the rank has gone, and
     * nothing here reads asynchronous events */
    if (!e)
        close((int)r.async_fd);
    return e;
}

int fmpl_uv_alloc_pd(int fd, uint32_t *handle)
{
    struct ib_uverbs_alloc_pd c = { 0 };
    struct ib_uverbs_alloc_pd_resp r;
    int e = fmpl_uv_cmd(fd, 1, IB_USER_VERBS_CMD_ALLOC_PD, &c, sizeof c, sizeof c, &r,
                        sizeof r, sizeof r);
    if (!e)
        *handle = r.pd_handle;
    return e;
}

int fmpl_uv_create_cq(int fd, int cqe, uint32_t *handle, uint32_t *got_cqe, struct mminfo *mi)
{
    struct ib_uverbs_create_cq c = { .cqe = (uint32_t)cqe, .comp_channel = -1 };
    struct {
        struct ib_uverbs_create_cq_resp r;
        struct rxe_create_cq_resp d;
    } r;
    int e = fmpl_uv_cmd(fd, 1, IB_USER_VERBS_CMD_CREATE_CQ, &c, sizeof c, sizeof c, &r,
                        sizeof r.r, sizeof r);
    if (!e) {
        *handle = r.r.cq_handle;
        *got_cqe = r.r.cqe;
        *mi = r.d.mi;
    }
    return e;
}

int fmpl_uv_create_srq(int fd, uint32_t pd, uint32_t max_wr, uint32_t max_sge,
                       uint32_t *handle, struct mminfo *mi)
{
    struct ib_uverbs_create_srq c = { .pd_handle = pd, .max_wr = max_wr, .max_sge = max_sge };
    struct {
        struct ib_uverbs_create_srq_resp r;
        struct rxe_create_srq_resp d;
    } r;
    int e = fmpl_uv_cmd(fd, 1, IB_USER_VERBS_CMD_CREATE_SRQ, &c, sizeof c, sizeof c, &r,
                        sizeof r.r, sizeof r);
    if (!e) {
        *handle = r.r.srq_handle;
        *mi = r.d.mi;
    }
    return e;
}

int fmpl_uv_create_qp(int fd, uint32_t pd, uint32_t cq, uint32_t srq, int use_srq,
                      enum ibv_qp_type type, struct ibv_qp_cap *cap, uint32_t *handle,
                      uint32_t *qpn, struct mminfo *sq, struct mminfo *rq)
{
    struct ib_uverbs_create_qp c = {
        .pd_handle = pd, .send_cq_handle = cq, .recv_cq_handle = cq,
        .srq_handle = use_srq ? srq : 0, .max_send_wr = cap->max_send_wr,
        .max_recv_wr = use_srq ? 0 : cap->max_recv_wr, .max_send_sge = cap->max_send_sge,
        .max_recv_sge = use_srq ? 0 : cap->max_recv_sge,
        .max_inline_data = cap->max_inline_data, .qp_type = (uint8_t)type,
        .is_srq = (uint8_t)!!use_srq };
    struct {
        struct ib_uverbs_create_qp_resp r;
        struct rxe_create_qp_resp d;
    } r;
    int e = fmpl_uv_cmd(fd, 1, IB_USER_VERBS_CMD_CREATE_QP, &c, sizeof c, sizeof c, &r,
                        sizeof r.r, sizeof r);
    if (!e) {
        *handle = r.r.qp_handle;
        *qpn = r.r.qpn;
        cap->max_send_wr = r.r.max_send_wr;
        cap->max_recv_wr = r.r.max_recv_wr;
        cap->max_send_sge = r.r.max_send_sge;
        cap->max_recv_sge = r.r.max_recv_sge;
        cap->max_inline_data = r.r.max_inline_data;
        *sq = r.d.sq_mi;
        *rq = r.d.rq_mi;
    }
    return e;
}

int fmpl_uv_modify_qp(int fd, const struct ib_uverbs_modify_qp *m)
{
    struct ib_uverbs_modify_qp c = *m;
    return fmpl_uv_cmd(fd, 1, IB_USER_VERBS_CMD_MODIFY_QP, &c, sizeof c, sizeof c, NULL, 0, 0);
}

int fmpl_uv_create_ah(int fd, uint32_t pd, const struct ib_uverbs_ah_attr *a,
                      uint32_t *handle, uint32_t *ah_num)
{
    struct ib_uverbs_create_ah c = { .pd_handle = pd, .attr = *a };
    struct {
        struct ib_uverbs_create_ah_resp r;
        struct rxe_create_ah_resp d;
    } __attribute__((packed)) r;
    int e = fmpl_uv_cmd(fd, 1, IB_USER_VERBS_CMD_CREATE_AH, &c, sizeof c, sizeof c, &r,
                        sizeof r.r, sizeof r);
    if (!e) {
        *handle = r.r.ah_handle;
        *ah_num = r.d.ah_num;
        if (!*ah_num)
            e = EOPNOTSUPP;        /* a kernel older than 5.13 gives none */
    }
    return e;
}

int fmpl_uv_destroy(int fd, uint32_t cmd, uint32_t handle)
{
    switch (cmd) {
    case IB_USER_VERBS_CMD_DESTROY_QP: {
        struct ib_uverbs_destroy_qp c = { .qp_handle = handle };
        struct ib_uverbs_destroy_qp_resp r;
        return fmpl_uv_cmd(fd, 1, cmd, &c, sizeof c, sizeof c, &r, sizeof r, sizeof r);
    }
    case IB_USER_VERBS_CMD_DESTROY_CQ: {
        struct ib_uverbs_destroy_cq c = { .cq_handle = handle };
        struct ib_uverbs_destroy_cq_resp r;
        return fmpl_uv_cmd(fd, 1, cmd, &c, sizeof c, sizeof c, &r, sizeof r, sizeof r);
    }
    case IB_USER_VERBS_CMD_DESTROY_SRQ: {
        struct ib_uverbs_destroy_srq c = { .srq_handle = handle };
        struct ib_uverbs_destroy_srq_resp r;
        return fmpl_uv_cmd(fd, 1, cmd, &c, sizeof c, sizeof c, &r, sizeof r, sizeof r);
    }
    case IB_USER_VERBS_CMD_DEALLOC_PD: {
        struct ib_uverbs_dealloc_pd c = { .pd_handle = handle };
        return fmpl_uv_cmd(fd, 1, cmd, &c, sizeof c, sizeof c, NULL, 0, 0);
    }
    case IB_USER_VERBS_CMD_DESTROY_AH: {
        struct ib_uverbs_destroy_ah c = { .ah_handle = handle };
        return fmpl_uv_cmd(fd, 1, cmd, &c, sizeof c, sizeof c, NULL, 0, 0);
    }
    default:
        return EINVAL;
    }
}

int fmpl_uv_reg_mr(int fd, uint32_t pd, void *addr, size_t len, int access,
                   uint32_t *handle, uint32_t *lkey, uint32_t *rkey)
{
    struct ib_uverbs_reg_mr c = { .start = (uintptr_t)addr, .length = len,
                                  .hca_va = (uintptr_t)addr, .pd_handle = pd,
                                  .access_flags = (uint32_t)access };
    struct ib_uverbs_reg_mr_resp r;
    int e = fmpl_uv_cmd(fd, 0, IB_USER_VERBS_CMD_REG_MR, &c, sizeof c, sizeof c, &r,
                        sizeof r, sizeof r);
    if (!e) {
        *handle = r.mr_handle;
        *lkey = r.lkey;
        *rkey = r.rkey;
    }
    return e;
}

int fmpl_uv_dereg_mr(int fd, uint32_t handle)
{
    struct ib_uverbs_dereg_mr c = { .mr_handle = handle };
    return fmpl_uv_cmd(fd, 0, IB_USER_VERBS_CMD_DEREG_MR, &c, sizeof c, sizeof c, NULL,
                       0, 0);
}

/* A send with no work requests: the kernel then runs the queue pair's
 * requester on what the queue holds (rxe_post_send for a user QP).  The
 * write() form, as rdma-core's rxe provider rings it: in the test bed it
 * took 5.2 us a call against the ioctl form's 10.6 (medians of 8 rounds
 * of 20000, an empty doorbell on a connected queue pair). */
int fmpl_uv_doorbell(int fd, fmpl_uv_db_t *db, uint32_t qp_handle)
{
    if (db->self != db) {
        memset(db, 0, sizeof *db);
        db->self = db;
        db->cmd.h.command = IB_USER_VERBS_CMD_POST_SEND;
        db->cmd.h.in_words = (uint16_t)(sizeof db->cmd / 4);
        db->cmd.h.out_words = (uint16_t)(sizeof db->resp / 4);
        db->cmd.c.response = (uintptr_t)&db->resp;
        db->cmd.c.qp_handle = qp_handle;
        db->cmd.c.wqe_size = sizeof(struct ib_uverbs_send_wr);
    }
    ssize_t n = write(fd, &db->cmd, sizeof db->cmd);
    return n == (ssize_t)sizeof db->cmd ? 0 : n < 0 ? errno : EIO;
}

int fmpl_uv_doorbell_ioctl(int fd, uint32_t qp_handle)
{
    struct ib_uverbs_post_send c = { .qp_handle = qp_handle,
                                     .wqe_size = sizeof(struct ib_uverbs_send_wr) };
    struct ib_uverbs_post_send_resp r;
    return fmpl_uv_cmd(fd, 1, IB_USER_VERBS_CMD_POST_SEND, &c, sizeof c, sizeof c, &r,
                       sizeof r, sizeof r);
}

static void dest_of(struct ib_uverbs_qp_dest *d, const struct ibv_ah_attr *a)
{
    memcpy(d->dgid, a->grh.dgid.raw, 16);
    d->flow_label = a->grh.flow_label;
    d->dlid = a->dlid;
    d->sgid_index = a->grh.sgid_index;
    d->hop_limit = a->grh.hop_limit;
    d->traffic_class = a->grh.traffic_class;
    d->sl = a->sl;
    d->src_path_bits = a->src_path_bits;
    d->static_rate = a->static_rate;
    d->is_global = a->is_global;
    d->port_num = a->port_num;
}

void fmpl_uv_modify_of(struct ib_uverbs_modify_qp *m, uint32_t qp_handle,
                       const struct ibv_qp_attr *a, int mask)
{
    memset(m, 0, sizeof *m);
    m->qp_handle = qp_handle;
    m->attr_mask = (uint32_t)mask;
    /* the kernel reads a field only when its bit is in the mask */
    m->qp_state = (uint8_t)a->qp_state;
    m->cur_qp_state = (uint8_t)a->cur_qp_state;
    m->qp_access_flags = a->qp_access_flags;
    m->pkey_index = a->pkey_index;
    m->port_num = a->port_num;
    m->qkey = a->qkey;
    if (mask & IBV_QP_AV)
        dest_of(&m->dest, &a->ah_attr);
    m->path_mtu = (uint8_t)a->path_mtu;
    m->timeout = a->timeout;
    m->retry_cnt = a->retry_cnt;
    m->rnr_retry = a->rnr_retry;
    m->rq_psn = a->rq_psn;
    m->sq_psn = a->sq_psn;
    m->max_rd_atomic = a->max_rd_atomic;
    m->max_dest_rd_atomic = a->max_dest_rd_atomic;
    m->min_rnr_timer = a->min_rnr_timer;
    m->dest_qp_num = a->dest_qp_num;
    m->en_sqd_async_notify = a->en_sqd_async_notify;
    m->path_mig_state = (uint8_t)a->path_mig_state;
}

/* ---- rxe's queues ------------------------------------------------------ */
/*
 * A queue is a header (log2 of the element size, an index mask, the
 * producer's and the consumer's index, each on a cache line of its own)
 * and a ring of elements; indices are masked, the queue is full when the
 * producer is one behind the consumer.  We produce into send and receive
 * queues (the kernel consumes) and consume completions (the kernel
 * produces); each index is published with release order after the
 * element, and the other side's read with acquire order.
 */

int fmpl_rxe_map(int fd, const struct mminfo *mi, fmpl_rxe_q_t *q)
{
    q->q = NULL;
    q->len = 0;
    if (!mi->size)
        return 0;
    void *p = mmap(NULL, mi->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)mi->offset);
    if (p == MAP_FAILED)
        return errno;
    q->q = p;
    q->len = mi->size;
    return 0;
}

void fmpl_rxe_unmap(fmpl_rxe_q_t *q)
{
    if (q->q)
        munmap(q->q, q->len);
    q->q = NULL;
}

static _Atomic uint32_t *prod(struct rxe_queue_buf *q)
{ return (_Atomic uint32_t *)&q->producer_index; }
static _Atomic uint32_t *cons(struct rxe_queue_buf *q)
{ return (_Atomic uint32_t *)&q->consumer_index; }

/* the element the producer fills next, or NULL when the queue is full */
static void *produce_at(struct rxe_queue_buf *q, uint32_t *next)
{
    uint32_t p = atomic_load_explicit(prod(q), memory_order_relaxed);
    uint32_t c = atomic_load_explicit(cons(q), memory_order_acquire);
    *next = (p + 1) & q->index_mask;
    if (*next == c)
        return NULL;
    return q->data + ((size_t)(p & q->index_mask) << q->log2_elem_size);
}

/* A send request's fields zeroed, but the union's datagram part (its
 * address vector, most of the request's bytes) and the inline data: a
 * queue pair's requests are all of its type, and a datagram's are set by
 * fmpl_rxe_post_send.  The whole request's memset was 35 of an 8-byte
 * message's instructions (callgrind, in the test bed's emulation). */
static void wqe_clear(struct rxe_send_wqe *w)
{
    memset(w, 0, offsetof(struct rxe_send_wqe, wr.wr.ud.av));
    memset(&w->status, 0, offsetof(struct rxe_send_wqe, dma.inline_data) -
                              offsetof(struct rxe_send_wqe, status));
}

int fmpl_rxe_post_send(fmpl_rxe_q_t *sq, const struct ibv_send_wr *wr, uint32_t ah_num)
{
    uint32_t next;
    struct rxe_send_wqe *w = produce_at(sq->q, &next);
    if (!w)
        return ENOMEM;
    switch (wr->opcode) {
    case IBV_WR_RDMA_WRITE: case IBV_WR_RDMA_WRITE_WITH_IMM: case IBV_WR_RDMA_READ:
    case IBV_WR_SEND: case IBV_WR_SEND_WITH_IMM:
        break;
    default:
        return EINVAL;             /* nothing else is ever posted */
    }
    wqe_clear(w);
    w->wr.wr_id = wr->wr_id;
    w->wr.opcode = wr->opcode;
    w->wr.send_flags = wr->send_flags;
    w->wr.ex.imm_data = wr->imm_data;
    if (wr->opcode == IBV_WR_SEND || wr->opcode == IBV_WR_SEND_WITH_IMM) {
        if (ah_num) {
            w->wr.wr.ud.remote_qpn = wr->wr.ud.remote_qpn;
            w->wr.wr.ud.remote_qkey = wr->wr.ud.remote_qkey;
            w->wr.wr.ud.ah_num = ah_num;
            memset(&w->wr.wr.ud.av, 0, sizeof w->wr.wr.ud.av);
        }
    } else {
        w->wr.wr.rdma.remote_addr = wr->wr.rdma.remote_addr;
        w->wr.wr.rdma.rkey = wr->wr.rdma.rkey;
        w->iova = wr->wr.rdma.remote_addr;
    }
    size_t room = ((size_t)1 << sq->q->log2_elem_size) - sizeof *w;
    uint32_t len = 0;
    if (wr->send_flags & IBV_SEND_INLINE) {
        uint8_t *at = w->dma.inline_data;
        for (int i = 0; i < wr->num_sge; i++) {
            uint32_t n = wr->sg_list[i].length;
            if (len + n > room)
                return EINVAL;
            memcpy(at + len, (const void *)(uintptr_t)wr->sg_list[i].addr, n);
            len += n;
        }
    } else {
        if ((size_t)wr->num_sge * sizeof(struct rxe_sge) > room)
            return EINVAL;
        /* ibv_sge is laid out as rxe_sge */
        memcpy(w->dma.sge, wr->sg_list, (size_t)wr->num_sge * sizeof(struct rxe_sge));
        for (int i = 0; i < wr->num_sge; i++)
            len += wr->sg_list[i].length;
    }
    w->dma.length = w->dma.resid = len;
    w->dma.num_sge = (uint32_t)wr->num_sge;
    /* the kernel sets the mask and the rest from the opcode */
    atomic_store_explicit(prod(sq->q), next, memory_order_release);
    return 0;
}

int fmpl_rxe_post_inline_send(fmpl_rxe_q_t *sq, uint64_t wr_id, const struct ibv_sge *sg, int n)
{
    uint32_t next;
    struct rxe_send_wqe *w = produce_at(sq->q, &next);
    if (!w)
        return ENOMEM;
    size_t room = ((size_t)1 << sq->q->log2_elem_size) - sizeof *w;
    uint32_t len = 0;
    for (int i = 0; i < n; i++) {
        if (len + sg[i].length > room)
            return EINVAL;
        memcpy(w->dma.inline_data + len, (const void *)(uintptr_t)sg[i].addr, sg[i].length);
        len += sg[i].length;
    }
    wqe_clear(w);
    w->wr.wr_id = wr_id;
    w->wr.opcode = IBV_WR_SEND;
    w->wr.send_flags = IBV_SEND_INLINE;
    w->dma.length = w->dma.resid = len;
    w->dma.num_sge = (uint32_t)n;
    atomic_store_explicit(prod(sq->q), next, memory_order_release);
    return 0;
}

int fmpl_rxe_post_recv(fmpl_rxe_q_t *rq, const struct ibv_recv_wr *wr)
{
    uint32_t next;
    struct rxe_recv_wqe *w = produce_at(rq->q, &next);
    if (!w)
        return ENOMEM;
    size_t room = ((size_t)1 << rq->q->log2_elem_size) - sizeof *w;
    if ((size_t)wr->num_sge * sizeof(struct rxe_sge) > room)
        return EINVAL;
    uint32_t len = 0;
    memset(w, 0, sizeof *w);
    w->wr_id = wr->wr_id;
    memcpy(w->dma.sge, wr->sg_list, (size_t)wr->num_sge * sizeof(struct rxe_sge));
    for (int i = 0; i < wr->num_sge; i++)
        len += wr->sg_list[i].length;
    w->dma.length = w->dma.resid = len;
    w->dma.num_sge = (uint32_t)wr->num_sge;
    atomic_store_explicit(prod(rq->q), next, memory_order_release);
    return 0;
}

_Static_assert(sizeof(struct ibv_wc) == sizeof(struct ib_uverbs_wc),
               "ibv_wc is the kernel's completion entry");
_Static_assert(sizeof(struct ibv_sge) == sizeof(struct rxe_sge), "ibv_sge is rxe's");

int fmpl_rxe_poll(fmpl_rxe_q_t *cq, int n, struct ibv_wc *wc)
{
    struct rxe_queue_buf *q = cq->q;
    int got = 0;
    uint32_t c = atomic_load_explicit(cons(q), memory_order_relaxed);
    while (got < n) {
        uint32_t p = atomic_load_explicit(prod(q), memory_order_acquire);
        if (p == c)
            break;
        memcpy(&wc[got++], q->data + ((size_t)(c & q->index_mask) << q->log2_elem_size),
               sizeof *wc);
        c = (c + 1) & q->index_mask;
        atomic_store_explicit(cons(q), c, memory_order_release);
    }
    return got;
}

int fmpl_rxe_empty(const fmpl_rxe_q_t *cq)
{
    return atomic_load_explicit(prod(cq->q), memory_order_relaxed) ==
           atomic_load_explicit(cons(cq->q), memory_order_relaxed);
}
