/*
 * dcfa_verbs.c - the device as the verbs transport uses it, in one of two
 * modes (the rest of src/transport/dcfa calls only these):
 *
 *   direct  this process opens the device and owns its protection domain,
 *           queues and registrations, through libibverbs;
 *   split   the DCFA paper's division of labour: this process opens
 *           the device's file and hands it to the host's agent
 *           (dcfa_agent.h), which makes the context, protection domain
 *           and queues in it; this process maps the queues and posts and
 *           polls them itself (dcfa_uverbs.h), and registers its own
 *           memory (a registration pins the caller's pages, so no other
 *           process can make it).  No agent call is on the data path; a
 *           send's doorbell is a system call on rxe in both modes
 *           (soft-RoCE's requester runs in the kernel).
 *
 *   FMPL_DCFA_AGENT=0|1   0: direct mode; 1: split mode, or fmpl_init fails
 *                         saying why; unset: split where the provider
 *                         allows it (rxe), direct elsewhere (FMPL_VERBOSE
 *                         says which and why)
 *
 * Split mode needs a provider whose queues this code can work: rxe, whose
 * layout is the kernel's uapi (rdma/rdma_user_rxe.h).  For a hardware
 * provider the path is libibverbs's ibv_import_device/_pd on the file the
 * agent made them in, where the provider implements import_context (mlx5
 * does; not done here: no such device to test on), so those run direct.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "fmpl.h"
#include "base/boot.h"
#include "base/env.h"
#include "base/log.h"
#include "transport/dcfa/dcfa.h"
#include "transport/dcfa/dcfa_agent.h"
#include "transport/dcfa/dcfa_uverbs.h"

int fmpl_dcfa_ask(fmpl_dcfa_t *d, fmpl_dcfa_areq_t *q, int fd, fmpl_dcfa_arep_t *p)
{
    q->rank = d->tl->rank;
    int e = fmpl_dcfa_agent_call(d->agent, q, fd, p);
    if (e) {
        fmpl_log_err("dcfa: the host agent (pid %d) does not answer: %s", d->agent_pid,
                     strerror(e));
        return EPIPE;
    }
    return p->err;
}

static int ask(fmpl_dcfa_t *d, fmpl_dcfa_areq_t *q, fmpl_dcfa_arep_t *p)
{
    return fmpl_dcfa_ask(d, q, -1, p);
}

/* ---- registrations ------------------------------------------------------ */

struct ibv_mr *fmpl_dcfa_reg_mr(fmpl_dcfa_t *d, void *addr, size_t len, int access)
{
    if (!d->split)
        return fmpl_ibv.ibv_reg_mr_iova2(d->pd, addr, len, (uintptr_t)addr, access);
    struct ibv_mr *mr = calloc(1, sizeof *mr);
    if (!mr) {
        errno = ENOMEM;
        return NULL;
    }
    int e = fmpl_uv_reg_mr(d->cmd_fd, d->pd_handle, addr, len, access, &mr->handle,
                           &mr->lkey, &mr->rkey);
    if (e) {
        free(mr);
        errno = e;
        return NULL;
    }
    mr->addr = addr;
    mr->length = len;
    return mr;
}

void fmpl_dcfa_dereg_mr(fmpl_dcfa_t *d, struct ibv_mr *mr)
{
    if (!mr)
        return;
    if (!d->split) {
        fmpl_ibv.ibv_dereg_mr(mr);
        return;
    }
    fmpl_uv_dereg_mr(d->cmd_fd, mr->handle);
    free(mr);
}

/* ---- queue pairs ------------------------------------------------------ */

int fmpl_dcfa_qp_create(fmpl_dcfa_t *d, enum ibv_qp_type type, int on_srq,
                        struct ibv_qp_cap *cap, fmpl_dcfa_qp_t *qp)
{
    memset(qp, 0, sizeof *qp);
    if (!d->split) {
        struct ibv_qp_init_attr a = { .send_cq = d->cq, .recv_cq = d->cq,
                                      .srq = on_srq ? d->srq : NULL, .qp_type = type,
                                      .cap = *cap };
        if (!(qp->ib = fmpl_ibv.ibv_create_qp(d->pd, &a)))
            return errno ? errno : EIO;
        *cap = a.cap;
        qp->num = qp->ib->qp_num;
        qp->made = 1;
        return 0;
    }
    fmpl_dcfa_areq_t q = { .op = FMPL_AG_QP, .a = type, .b = (uint32_t)!!on_srq, .cap = *cap };
    fmpl_dcfa_arep_t p;
    int e = ask(d, &q, &p);
    if (e)
        return e;
    qp->handle = p.handle;
    qp->num = p.num;
    qp->made = 1;
    *cap = p.cap;
    e = fmpl_rxe_map(d->cmd_fd, &p.mi[0], &qp->sq);
    if (!e)
        e = fmpl_rxe_map(d->cmd_fd, &p.mi[1], &qp->rq);
    if (e)
        fmpl_dcfa_qp_destroy(d, qp);
    return e;
}

int fmpl_dcfa_qp_modify(fmpl_dcfa_t *d, fmpl_dcfa_qp_t *qp, struct ibv_qp_attr *a, int mask)
{
    if (!d->split)
        return fmpl_ibv.ibv_modify_qp(qp->ib, a, mask);
    fmpl_dcfa_areq_t q = { .op = FMPL_AG_MODIFY };
    fmpl_uv_modify_of(&q.modify, qp->handle, a, mask);
    fmpl_dcfa_arep_t p;
    return ask(d, &q, &p);
}

void fmpl_dcfa_qp_destroy(fmpl_dcfa_t *d, fmpl_dcfa_qp_t *qp)
{
    if (!qp->made)
        return;
    if (!d->split) {
        fmpl_ibv.ibv_destroy_qp(qp->ib);
    } else {
        fmpl_rxe_unmap(&qp->sq);
        fmpl_rxe_unmap(&qp->rq);
        fmpl_dcfa_areq_t q = { .op = FMPL_AG_DESTROY_QP, .a = qp->handle };
        fmpl_dcfa_arep_t p;
        if (d->agent >= 0)
            ask(d, &q, &p);
    }
    memset(qp, 0, sizeof *qp);
}

/* One work request (wr->next is ignored); an errno value. */

/* A receive on qp's own queue, or with qp NULL on the shared one. */
int fmpl_dcfa_qp_recv(fmpl_dcfa_t *d, fmpl_dcfa_qp_t *qp, struct ibv_recv_wr *wr)
{
    wr->next = NULL;
    struct ibv_recv_wr *bad = NULL;
    if (!d->split)
        return qp ? ibv_post_recv(qp->ib, wr, &bad) : ibv_post_srq_recv(d->srq, wr, &bad);
    return fmpl_rxe_post_recv(qp ? &qp->rq : &d->rsrq, wr);
}

int fmpl_dcfa_cq_poll(fmpl_dcfa_t *d, int n, struct ibv_wc *wc)
{
    return d->split ? fmpl_rxe_poll(&d->rcq, n, wc) : ibv_poll_cq(d->cq, n, wc);
}

/* ---- address handles ---------------------------------------------------- */

int fmpl_dcfa_ah_create(fmpl_dcfa_t *d, struct ibv_ah_attr *a, fmpl_dcfa_ah_t *ah)
{
    memset(ah, 0, sizeof *ah);
    if (!d->split) {
        if (!(ah->ib = fmpl_ibv.ibv_create_ah(d->pd, a)))
            return errno ? errno : EIO;
        ah->made = 1;
        return 0;
    }
    fmpl_dcfa_areq_t q = { .op = FMPL_AG_AH };
    memcpy(q.ah.grh.dgid, a->grh.dgid.raw, 16);
    q.ah.grh.flow_label = a->grh.flow_label;
    q.ah.grh.sgid_index = a->grh.sgid_index;
    q.ah.grh.hop_limit = a->grh.hop_limit;
    q.ah.grh.traffic_class = a->grh.traffic_class;
    q.ah.dlid = a->dlid;
    q.ah.sl = a->sl;
    q.ah.src_path_bits = a->src_path_bits;
    q.ah.static_rate = a->static_rate;
    q.ah.is_global = a->is_global;
    q.ah.port_num = a->port_num;
    fmpl_dcfa_arep_t p;
    int e = ask(d, &q, &p);
    if (e)
        return e;
    ah->handle = p.handle;
    ah->num = p.num;
    ah->made = 1;
    return 0;
}

void fmpl_dcfa_ah_destroy(fmpl_dcfa_t *d, fmpl_dcfa_ah_t *ah)
{
    if (!ah->made)
        return;
    if (!d->split) {
        fmpl_ibv.ibv_destroy_ah(ah->ib);
    } else if (d->agent >= 0) {
        fmpl_dcfa_areq_t q = { .op = FMPL_AG_DESTROY_AH, .a = ah->handle };
        fmpl_dcfa_arep_t p;
        ask(d, &q, &p);
    }
    memset(ah, 0, sizeof *ah);
}

/* ---- the device, the protection domain, the shared queues ----------------- */

/* Split mode: this host's agent, our CQ and SRQ from it.  FMPL_ERR_UNSUPPORTED
 * with *why set: the provider does not allow it (direct mode instead). */
static int split_open(fmpl_dcfa_t *d, int cqe, const char **why)
{
    fmpl_boot_t *b = d->tl->boot;
    d->agent = fmpl_dcfa_agent_connect(b->jobid);
    if (d->agent < 0)
        return fmpl_dcfa_error(d, errno, "connecting to the host agent", -1);
    fmpl_dcfa_areq_t q = { .op = FMPL_AG_HELLO, .rank = d->tl->rank };
    fmpl_dcfa_arep_t p;
    int e = fmpl_dcfa_agent_call(d->agent, &q, -1, &p);
    if (e)
        return fmpl_dcfa_error(d, e, "the host agent's hello", -1);
    d->agent_pid = p.pid;
    if (p.err == EOPNOTSUPP) {
        *why = "the provider is not rxe, and import_context is not used here";
        return FMPL_ERR_UNSUPPORTED;
    }
    if (p.err) {
        fmpl_log_err("dcfa: the host agent (pid %d) has no device: %s", p.pid,
                     strerror(p.err));
        return FMPL_ERR_UNSUPPORTED;
    }
    /* our own file of the device, for the agent to make our objects in */
    char path[96];
    p.file[sizeof p.file - 1] = 0;
    snprintf(path, sizeof path, "/dev/infiniband/%s", p.file);
    if ((d->cmd_fd = open(path, O_RDWR | O_CLOEXEC)) < 0) {
        fmpl_log_err("dcfa: cannot open %s, the device %s of the host agent (pid %d): %s",
                     path, p.dev, p.pid, strerror(errno));
        return FMPL_ERR_UNSUPPORTED;
    }
    fmpl_dcfa_arep_t a;
    q = (fmpl_dcfa_areq_t){ .op = FMPL_AG_ATTACH, .rank = d->tl->rank };
    if ((e = fmpl_dcfa_agent_call(d->agent, &q, d->cmd_fd, &a)) != 0 || (e = a.err) != 0)
        return fmpl_dcfa_error(d, e, "the host agent's context and protection domain", -1);
    d->pd_handle = a.pd;
    d->port = p.port;
    d->lid = p.lid;
    d->mtu = (enum ibv_mtu)p.mtu;
    d->roce = p.roce;
    d->gid_index = p.gid_index;
    memcpy(d->gid.raw, p.gid, 16);
    d->rd_atom = p.rd_atom ? p.rd_atom : 1;
    d->vendor = p.vendor;
    snprintf(d->devname, sizeof d->devname, "%s", p.dev);

    q = (fmpl_dcfa_areq_t){ .op = FMPL_AG_CQ, .a = (uint32_t)cqe };
    if ((e = ask(d, &q, &p)) != 0)
        return fmpl_dcfa_error(d, e, "the host agent's ibv_create_cq", -1);
    if ((e = fmpl_rxe_map(d->cmd_fd, &p.mi[0], &d->rcq)) != 0)
        return fmpl_dcfa_error(d, e, "mmap of the completion queue", -1);
    q = (fmpl_dcfa_areq_t){ .op = FMPL_AG_SRQ, .a = FMPL_DCFA_NRECV };
    if ((e = ask(d, &q, &p)) != 0)
        return fmpl_dcfa_error(d, e, "the host agent's ibv_create_srq", -1);
    if ((e = fmpl_rxe_map(d->cmd_fd, &p.mi[0], &d->rsrq)) != 0)
        return fmpl_dcfa_error(d, e, "mmap of the shared receive queue", -1);
    return FMPL_SUCCESS;
}

static void split_close(fmpl_dcfa_t *d)
{
    fmpl_rxe_unmap(&d->rcq);
    fmpl_rxe_unmap(&d->rsrq);
    if (d->agent >= 0)
        close(d->agent);           /* the agent destroys what it made for us */
    if (d->cmd_fd >= 0)
        close(d->cmd_fd);
    d->agent = d->cmd_fd = -1;
}

int fmpl_dcfa_dev_open(fmpl_dcfa_t *d, int cqe)
{
    d->agent = d->cmd_fd = -1;
    int want;                               /* -1: where it can */
    if (fmpl_env_bool("FMPL_DCFA_AGENT", -1, "0 (direct mode) or 1 (the host-side agent)",
                      &want) != FMPL_SUCCESS)
        return FMPL_ERR_ARG;
    const char *why = "FMPL_DCFA_AGENT=0";
    if (want != 0) {
        d->split = 1;
        int rc = split_open(d, cqe, &why);
        if (rc == FMPL_SUCCESS)
            return FMPL_SUCCESS;
        split_close(d);
        d->split = 0;
        if (want == 1) {
            if (rc == FMPL_ERR_UNSUPPORTED)
                fmpl_log_err("dcfa: FMPL_DCFA_AGENT=1, but no split mode here: %s", why);
            return rc;
        }
        /* by default a host without a working agent still runs */
        if (rc != FMPL_ERR_UNSUPPORTED)
            why = "the host agent failed (said above)";
    }
    snprintf(d->mode_why, sizeof d->mode_why, "%s", why);
    int rc = fmpl_dcfa_open_device(d);
    struct ibv_device_attr da;
    if (rc == FMPL_SUCCESS && fmpl_ibv.ibv_query_device(d->ctx, &da) != 0)
        rc = fmpl_dcfa_error(d, errno ? errno : EIO, "ibv_query_device", -1);
    if (rc != FMPL_SUCCESS)
        return rc;
    snprintf(d->devname, sizeof d->devname, "%s", fmpl_ibv.ibv_get_device_name(d->ctx->device));
    d->vendor = da.vendor_id;
    d->rd_atom = da.max_qp_rd_atom < 16 ? (uint8_t)da.max_qp_rd_atom : 16;
    if (!d->rd_atom)
        d->rd_atom = 1;
    if (cqe > da.max_cqe)
        cqe = da.max_cqe;
    if (!(d->pd = fmpl_ibv.ibv_alloc_pd(d->ctx)))
        return fmpl_dcfa_error(d, errno, "ibv_alloc_pd", -1);
    if (!(d->cq = fmpl_ibv.ibv_create_cq(d->ctx, cqe, NULL, NULL, 0)))
        return fmpl_dcfa_error(d, errno, "ibv_create_cq", -1);
    struct ibv_srq_init_attr sa = { .attr = { .max_wr = FMPL_DCFA_NRECV, .max_sge = 1 } };
    if (!(d->srq = fmpl_ibv.ibv_create_srq(d->pd, &sa)))
        return fmpl_dcfa_error(d, errno, "ibv_create_srq", -1);
    return FMPL_SUCCESS;
}

/* after every queue pair and registration is gone */
void fmpl_dcfa_dev_close(fmpl_dcfa_t *d)
{
    if (d->split) {
        split_close(d);
        return;
    }
    if (d->srq)
        fmpl_ibv.ibv_destroy_srq(d->srq);
    if (d->cq)
        fmpl_ibv.ibv_destroy_cq(d->cq);
    if (d->pd)
        fmpl_ibv.ibv_dealloc_pd(d->pd);
    if (d->ctx)
        fmpl_ibv.ibv_close_device(d->ctx);
    d->srq = NULL;
    d->cq = NULL;
    d->pd = NULL;
    d->ctx = NULL;
}

/* Split mode: is the agent still there?  Looked at every 0.2 s at most:
 * the clock read every 16th call (fmpl_dcfa_agent_check) - and an idle progress comes here every
 * 16th time (fmpl_dcfa_progress), so one progress in 256 reads it,
 * every 0.26 to 1 s from the ticker alone - then a poll of its socket (the
 * agent writes nothing unasked, so anything to read is its end).  A rank
 * without its agent cannot make queue pairs, and its job cannot end
 * cleanly: it ends the job, naming the agent. */
void fmpl_dcfa_agent_look(fmpl_dcfa_t *d)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &t);
    double now = (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
    if (now - d->agent_seen < 0.2)
        return;
    d->agent_seen = now;
    struct pollfd pf = { .fd = d->agent, .events = POLLIN | POLLRDHUP };
    if (poll(&pf, 1, 0) == 1 && (pf.revents & (POLLIN | POLLRDHUP | POLLHUP | POLLERR))) {
        fmpl_log_err("dcfa: the host agent (pid %d), which owns this host's InfiniBand "
                     "resources, died: ending the job", d->agent_pid);
        fmpl_boot_abort(d->tl->boot, FMPL_ERR_PEER);
    }
}
