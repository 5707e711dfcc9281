/*
 * dcfa_agent.h - the host-side agent of the verbs transport's split mode
 * (dcfa_agent.c) and what a rank asks it.
 *
 * One agent per host and job serves every rank of the host over a UNIX
 * socket (SOCK_SEQPACKET, in the abstract namespace: nothing to remove,
 * and one name per network namespace, i.e. per host).  The first rank of
 * the host to find no agent there starts it (a process of its own,
 * forked twice so that no rank has to reap it).  The agent finds the
 * device and port; a rank opens that device's file and hands it over
 * (SCM_RIGHTS), and in it the agent creates the rank's context and
 * protection domain, the completion queue, the shared receive queue, the
 * queue pairs and the address handles, and moves the queue pairs through
 * their states: the control plane of the DCFA paper's host.  The rank
 * maps the queues the agent made (dcfa_uverbs.h) and posts and polls them
 * itself, with no agent in the data path.
 *
 * Why the rank's file and not the agent's: the one system call on rxe's
 * data path, a send's doorbell, is cheapest as write(), and the kernel
 * lets only the process that opened a file write() to it (dcfa_uverbs.h).
 *
 * The agent ends when its last rank has gone (or when none came within
 * FMPL_DCFA_AGENT_WAIT s of its start); what it made for a rank goes when
 * that rank's socket closes.  A rank that finds the agent gone ends the
 * job, naming it.
 */
#ifndef FMPL_DCFA_AGENT_H
#define FMPL_DCFA_AGENT_H

#include <stdint.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_user_rxe.h>
#include <infiniband/verbs.h>

enum {
    FMPL_AG_HELLO = 1,             /* -> the device, port and address */
    FMPL_AG_ATTACH,                /* with the rank's file of the device
                                    * (SCM_RIGHTS) -> pd: its context and
                                    * protection domain made */
    FMPL_AG_CQ,                    /* a = entries */
    FMPL_AG_SRQ,                   /* a = work requests */
    FMPL_AG_QP,                    /* a = type, b = on the SRQ; cap; b = 2:
                                    * the agent's for the offloaded traffic to
                                    * rank `peer` (RC) */
    FMPL_AG_MODIFY,                /* modify (its qp_handle one of ours) */
    FMPL_AG_AH,                    /* ah */
    FMPL_AG_DESTROY_QP,            /* a = handle */
    FMPL_AG_DESTROY_AH,            /* a = handle */
    FMPL_AG_OFFLOAD                /* with the rank's segment (dcfa_offload.h,
                                    * SCM_RIGHTS): a = the job's size, b = the
                                    * segment's lkey */
};

typedef struct fmpl_dcfa_areq {
    uint32_t op;
    int32_t rank, peer;
    uint32_t a, b;
    struct ibv_qp_cap cap;
    struct ib_uverbs_modify_qp modify;
    struct ib_uverbs_ah_attr ah;
} fmpl_dcfa_areq_t;

typedef struct fmpl_dcfa_arep {
    int32_t err;                   /* 0 or an errno value */
    uint32_t handle, num;          /* object's handle; CQ entries, QP or AH number */
    struct mminfo mi[2];           /* queues to map: CQ, SRQ, QP send [0] receive [1] */
    struct ibv_qp_cap cap;
    /* HELLO (pd: ATTACH) */
    uint32_t pd, vendor;
    int32_t pid, gid_index, max_cqe;
    uint16_t lid;
    uint8_t port, mtu, roce, rd_atom;
    uint8_t gid[16];
    char dev[32];
    char file[64];                 /* the device's file under /dev/infiniband */
} fmpl_dcfa_arep_t;

/* rxe's vendor id: the provider whose queues dcfa_uverbs.c can work */
#define FMPL_DCFA_RXE_VENDOR 0xffffffu
/* siw's (the kernel's SIW_VENDOR_ID, "bmt"): iWARP in software over TCP */
#define FMPL_DCFA_SIW_VENDOR 0x626d74u

/* Connect to this host's agent for job `jobid`, starting it if there is
 * none: the socket, or -1 with errno. */
int fmpl_dcfa_agent_connect(const char *jobid);
/* One request (with the file fd_in, unless it is -1) and its answer: 0 or
 * an errno value. */
int fmpl_dcfa_agent_call(int sock, const fmpl_dcfa_areq_t *q, int fd_in, fmpl_dcfa_arep_t *p);

#endif
