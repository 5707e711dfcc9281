/*
 * dcfa_offload.h - nonblocking collectives run by the host's agent for
 * its ranks: the DCFA-MPI split (Si and Ishikawa, "DCFA: direct
 * communication facility for many-core clusters", 2011, section 3: the
 * compute side does point-to-point, "heavy" communication is offloaded
 * to a process on the host, so that the compute side keeps computing).
 * What the rank and its agent share, and what two agents say to each
 * other.
 *
 *   FMPL_DCFA_OFFLOAD=LIST   the collectives the agent runs, by name:
 *                            barrier, bcast, gather, scatter, allgather,
 *                            alltoall (comma-separated), "all", "off",
 *                            or "auto" (the default): alltoall,
 *                            allgather, bcast where every machine of the
 *                            job has a CPU its ranks leave free for the
 *                            agent (base/hosts.h: spare_all), else off
 *   FMPL_DCFA_OFFLOAD_MIN=B  ... when their blocks are at least B bytes
 *                            (default 262144; 0 takes the barrier too)
 *
 * Why these defaults (bench/overlap -t ialltoall, 2 ranks, medians of 3
 * interleaved rounds in the soft-RoCE test bed): with one rank on each
 * of two 2-CPU guests, so that each agent has a CPU, the offloaded
 * ialltoall took 0.49x the direct path's time at 256 KiB and 0.52x at
 * 1 MiB, and a computation as long as it hid all but a fifth of it (the
 * whole step 0.30x and 0.31x), but 3.5x and 2.2x at 16 and 64 KiB (the
 * agent's hops cost more than the blocks).  With both ranks and the agent
 * on one guest's two CPUs it was slower at every size.
 * Both must be the same on every rank of the job (as every FMPL setting
 * that shapes the protocol).  Only in split mode (the agent exists), and
 * only among ranks that all have an agent (a rank's card says so).  The
 * reductions stay with the rank: the agent never touches the rank's data
 * with its CPU, only the NIC does (and so the rank's memory is never
 * mapped into the agent).
 *
 * The channel between a rank and its agent is a segment of shared memory
 * (a memfd the rank makes, registers in its protection domain and hands
 * over): a table of slots, each one collective's messages, posted by the
 * rank with a store and taken by the agent, which polls the table - the
 * rank enters no system call to start one, and learns the end from the
 * slot's state word, never from a completion queue.  The agent's queue
 * pairs for the offloaded traffic are made in the rank's context, one
 * per peer beside the rank's own (made and connected with them,
 * dcfa_conn.c), so that their work requests name the rank's registered
 * buffers by its keys: every block moves by one zero-copy RDMA WRITE
 * from the sender's buffer into the receiver's.
 *
 * The protocol between two agents is FMPL's: the receiver pushes its
 * buffer's header (address, key, length, and a token naming its
 * message) as a SEND when the message's round starts; the sender's agent
 * answers with an RDMA WRITE WITH IMMEDIATE of the block, the token as
 * the immediate, which completes the receive where it lands.  A header
 * names its collective by (chan, seq) - the communicator's first index,
 * the collective's number among those it offloaded - and its message by
 * j, the message's rank among the messages from that sender in it; a
 * header that comes before its collective is posted waits in the agent.
 */
#ifndef FMPL_DCFA_OFFLOAD_H
#define FMPL_DCFA_OFFLOAD_H

#include <stdatomic.h>
#include <stdint.h>

#define FMPL_OFF_SLOTS 16          /* collectives in flight per rank */
#define FMPL_OFF_NRECV 256         /* receives posted for the agent's traffic */
#define FMPL_OFF_RECV_LEN 64       /* ... of this many bytes */

/* a slot's state: written by the rank (POSTED, CANCEL, FREE after taking
 * an end) or by the agent (DONE, FAILED, FREE after a cancel) */
enum { FMPL_OFF_FREE = 0, FMPL_OFF_POSTED, FMPL_OFF_DONE, FMPL_OFF_FAILED, FMPL_OFF_CANCEL };

/* One message of a slot. */
typedef struct fmpl_off_msg {
    uint64_t addr, len;
    uint32_t key;                  /* send: the lkey of addr; receive: its rkey */
    int32_t peer;
    uint16_t round, send;
    uint32_t j;                    /* its rank among the messages with peer, this way */
} fmpl_off_msg_t;

typedef struct fmpl_off_slot {
    _Atomic uint32_t state;
    uint32_t n;                    /* messages */
    uint32_t chan, seq;
    int32_t err_peer;              /* FAILED: the peer it failed on */
    int32_t err;                   /* FAILED: an FMPL code */
    uint32_t err_wc;               /* ... and the completion's status, if one failed */
    uint32_t pad;
    fmpl_off_msg_t m[];            /* [cap] */
} fmpl_off_slot_t;

/* The segment: this header, the slots, the receive buffers. */
typedef struct fmpl_off_seg {
    uint32_t nslots, cap;          /* slots, messages a slot */
    uint32_t slot_len;             /* bytes a slot */
    uint32_t lkey;                 /* the segment's registration */
    uint64_t recv_off;             /* where the receive buffers start */
    uint64_t len;
    uint64_t base;                 /* its address in the rank, which its
                                      registration knows it by */
} fmpl_off_seg_t;

static inline fmpl_off_slot_t *fmpl_off_slot(const fmpl_off_seg_t *g, int i)
{
    return (fmpl_off_slot_t *)(void *)((char *)g + 64 + (size_t)i * g->slot_len);
}

static inline size_t fmpl_off_seg_len(int cap, uint32_t *slot_len, uint64_t *recv_off)
{
    size_t sl = (sizeof(fmpl_off_slot_t) + (size_t)cap * sizeof(fmpl_off_msg_t) + 63) & ~(size_t)63;
    *slot_len = (uint32_t)sl;
    *recv_off = 64 + FMPL_OFF_SLOTS * sl;
    return (size_t)*recv_off + FMPL_OFF_NRECV * FMPL_OFF_RECV_LEN;
}

/* A receiver's header, agent to agent (an inline SEND). */
typedef struct fmpl_off_hdr {
    uint32_t chan, seq, j;
    uint32_t rkey;
    uint64_t addr;
    uint32_t len;                  /* offloaded blocks are below 4 GiB */
    uint32_t token;                /* the immediate of the write back */
} fmpl_off_hdr_t;

/* a token: the receiver's slot and message */
#define FMPL_OFF_TOKEN(slot, msg) (((uint32_t)(slot) << 24) | (uint32_t)(msg))
#define FMPL_OFF_TOKEN_SLOT(t) ((int)((t) >> 24))
#define FMPL_OFF_TOKEN_MSG(t) ((int)((t) & 0xffffffu))

/* ---- the agent's engine (dcfa_agent_off.c) ---------------------------- */

#include "transport/dcfa/dcfa_uverbs.h"
#include "transport/peer_index.h"

typedef struct fmpl_off_peer {
    fmpl_rxe_q_t sq;               /* its queue pair's send queue, mapped here */
    uint32_t handle, num;
    int made, used, room, dirty;   /* requests in flight, at most; a doorbell due */
} fmpl_off_peer_t;

typedef struct fmpl_off_op {       /* a slot as the engine runs it */
    int active;
    uint32_t gen;                  /* counts the slot's uses: stale completions */
    int round, first, left;        /* the round under way, its first message,
                                      its messages not complete */
    int err, err_peer, wc_status;
    int trunc, trunc_peer;         /* a block's size differed, with this peer */
} fmpl_off_op_t;

typedef struct fmpl_off_agent {
    int on, dev, size, cap;
    uint32_t pd, cq_handle, srq_handle;
    int has_cq, has_srq;
    fmpl_rxe_q_t cq, srq;
    fmpl_off_seg_t *seg;
    size_t seg_len;
    fmpl_off_peer_t *peer;         /* [size] */
    fmpl_peer_index_t by_qpn;      /* the peers' queue pairs' numbers -> peers */
    fmpl_off_op_t op[FMPL_OFF_SLOTS];
    uint8_t *st;                   /* [slots][cap] message states */
    fmpl_off_hdr_t *hdr;           /* [slots][cap] the headers of sends */
    struct { int peer; fmpl_off_hdr_t h; } *unexp;   /* headers before their slot */
    int nunexp, capunexp;
} fmpl_off_agent_t;

/* Map the rank's segment (its file memfd; registered as lkey), make the
 * completion and receive queues of its offloaded traffic in its context
 * (the device file dev, protection domain pd): 0 or an errno value. */
int  fmpl_off_agent_open(fmpl_off_agent_t *o, int dev, uint32_t pd, int memfd, int size,
                         uint32_t lkey, int max_cqe);
/* The rank's queue pair for the offloaded traffic to `peer` */
int  fmpl_off_agent_qp(fmpl_off_agent_t *o, int peer, struct ibv_qp_cap *cap,
                       uint32_t *handle, uint32_t *num);
/* One pass; the events it handled */
int  fmpl_off_agent_run(fmpl_off_agent_t *o);
int  fmpl_off_agent_busy(const fmpl_off_agent_t *o);
void fmpl_off_agent_close(fmpl_off_agent_t *o);

#endif
