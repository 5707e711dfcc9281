/*
 * dcfa_uverbs.h - the kernel's verbs commands and soft-RoCE's (rxe) queues
 * without libibverbs: what the split of the verbs transport needs, where
 * one process (the host's agent, dcfa_agent.c) makes the objects of a
 * device context and another (a rank) drives the queues made in it.
 *
 * libibverbs cannot do this on rxe: an object of one context can move to
 * another process only through the provider's import_context, which rxe
 * lacks, and the queues of a CQ or QP can be mapped only once (rxe's
 * mmap hands out each queue to the first mapper).  The kernel's command
 * set can.  The rank opens the device file and hands it to the agent
 * (SCM_RIGHTS); the agent creates the context, protection domain, CQ,
 * SRQ, QPs and AHs in it with the commands below and does not map their
 * queues; the rank maps them from its file and works them as rdma-core's
 * rxe provider does (dcfa_verbs.c).
 *
 * Two ways to issue a command (include/uapi/rdma/ib_user_verbs.h):
 *   write()   the legacy path: only the process whose credentials opened
 *             the file may use it (the kernel's ib_safe_file_access
 *             compares the file's credentials with the caller's, by
 *             pointer, so not even a forked child may): the rank's
 *             (memory registration - a registration pins the caller's
 *             pages, so only the rank can register its own memory - and
 *             the doorbell of a send queue, the one command on the data
 *             path, whose write() form costs half the ioctl's);
 *   ioctl()   UVERBS_METHOD_INVOKE_WRITE carries any write command in the
 *             ioctl marshalling, with no such check: the agent's, on the
 *             rank's file.
 */
#ifndef FMPL_DCFA_UVERBS_H
#define FMPL_DCFA_UVERBS_H

#include <stddef.h>
#include <stdint.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_user_ioctl_cmds.h>
#include <rdma/rdma_user_rxe.h>
#include <infiniband/verbs.h>

/* One command: `req` is the command's structure (and the driver's input
 * after core_req bytes), `resp` its response (and the driver's output
 * after core_resp bytes).  Returns 0 or an errno value. */
int fmpl_uv_cmd(int fd, int via_ioctl, uint32_t cmd, void *req, size_t core_req,
                size_t req_len, void *resp, size_t core_resp, size_t resp_len);

/* The commands (errno values; handles and numbers out).  The agent's,
 * through the ioctl: */
int fmpl_uv_get_context(int fd);
int fmpl_uv_alloc_pd(int fd, uint32_t *handle);
int fmpl_uv_create_cq(int fd, int cqe, uint32_t *handle, uint32_t *got_cqe,
                      struct mminfo *mi);
int fmpl_uv_create_srq(int fd, uint32_t pd, uint32_t max_wr, uint32_t max_sge,
                       uint32_t *handle, struct mminfo *mi);
int fmpl_uv_create_qp(int fd, uint32_t pd, uint32_t cq, uint32_t srq, int use_srq,
                      enum ibv_qp_type type, struct ibv_qp_cap *cap, uint32_t *handle,
                      uint32_t *qpn, struct mminfo *sq, struct mminfo *rq);
int fmpl_uv_modify_qp(int fd, const struct ib_uverbs_modify_qp *m);
int fmpl_uv_create_ah(int fd, uint32_t pd, const struct ib_uverbs_ah_attr *a,
                      uint32_t *handle, uint32_t *ah_num);
int fmpl_uv_destroy(int fd, uint32_t cmd, uint32_t handle);
/* The rank's, through write() on its own file: */
int fmpl_uv_reg_mr(int fd, uint32_t pd, void *addr, size_t len, int access,
                   uint32_t *handle, uint32_t *lkey, uint32_t *rkey);
int fmpl_uv_dereg_mr(int fd, uint32_t handle);

/* A send queue's doorbell: the command that has the kernel work what was
 * queued (a post_send with no work requests, by write() on the rank's
 * own file), built once for its queue pair and then issued as it is.  A
 * send's user-space path on rxe is mostly this command and the queue's
 * element; under qemu's emulation every instruction of it counts (issue
 * 17's note).  The command points at the response inside the structure,
 * so it is built again wherever it finds itself moved (`self` says where
 * it was built; a new queue pair's is zeroed). */
typedef struct fmpl_uv_db {
    const struct fmpl_uv_db *self;
    struct {
        struct ib_uverbs_cmd_hdr h;
        struct ib_uverbs_post_send c;     /* no work requests after it */
    } cmd;
    struct ib_uverbs_post_send_resp resp;
} fmpl_uv_db_t;

/* Ring qp_handle's (building it first if it is new or moved): 0 or an
 * errno value */
int fmpl_uv_doorbell(int fd, fmpl_uv_db_t *db, uint32_t qp_handle);

/* The same doorbell through the ioctl: from a process that did not open
 * the file (the agent ringing the queue pairs it works for a rank,
 * dcfa_offload.h) */
int fmpl_uv_doorbell_ioctl(int fd, uint32_t qp_handle);

/* ibv_qp_attr and its mask as the kernel's command (libibverbs's
 * marshalling of ibv_modify_qp) */
void fmpl_uv_modify_of(struct ib_uverbs_modify_qp *m, uint32_t qp_handle,
                       const struct ibv_qp_attr *a, int mask);

/* ---- rxe's queues, as its provider works them (rdma-core providers/rxe) */

typedef struct fmpl_rxe_q {
    struct rxe_queue_buf *q;       /* mapped from the device file, or NULL */
    size_t len;
} fmpl_rxe_q_t;

int  fmpl_rxe_map(int fd, const struct mminfo *mi, fmpl_rxe_q_t *q);
void fmpl_rxe_unmap(fmpl_rxe_q_t *q);
/* Queue one work request (SGEs inline, or one not; UD: the AH's
 * number); ENOMEM when the queue is full.  No doorbell. */
int  fmpl_rxe_post_send(fmpl_rxe_q_t *sq, const struct ibv_send_wr *wr, uint32_t ah_num);
/* The same for an unsignalled inline SEND on a connected queue pair (a
 * mailbox message, the one request of a small message's path): only
 * what it needs written.  In the test bed's emulation every instruction
 * counts: fmpl_rxe_post_send took 117 of an 8-byte message's, this 93,
 * not counting the copies of the pieces (callgrind). */
int  fmpl_rxe_post_inline_send(fmpl_rxe_q_t *sq, uint64_t wr_id, const struct ibv_sge *sg,
                               int n);
int  fmpl_rxe_post_recv(fmpl_rxe_q_t *rq, const struct ibv_recv_wr *wr);
/* Up to n completions (ibv_wc's layout is the kernel's ib_uverbs_wc) */
int  fmpl_rxe_poll(fmpl_rxe_q_t *cq, int n, struct ibv_wc *wc);
/* 1 when the kernel has put no completion in cq that we have not taken:
 * a look that takes nothing, safe beside a poll in another thread */
int  fmpl_rxe_empty(const fmpl_rxe_q_t *cq);

#endif
