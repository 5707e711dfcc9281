/*
 * dcfa.h - the InfiniBand verbs transport (private to src/transport/dcfa/).
 *
 * FMPL straight on InfiniBand verbs, after the DCFA paper (Si and
 * Ishikawa 2011): the process posts work requests and polls completions
 * itself, with no library in between.  Two modes (dcfa_verbs.c): split,
 * the paper's - a host-side agent (dcfa_agent.h) makes the device context
 * and the queues in the device file the process hands it, the process
 * maps and works them (dcfa_uverbs.h) - where the provider allows it
 * (rxe), and direct elsewhere - the process opens the device through
 * libibverbs and owns everything.
 *
 *   queue pairs  one RC queue pair per peer, created and connected when
 *                one of the two first talks to the other, by datagrams
 *                on a UD queue pair whose address the bootstrap's modex
 *                carries (dcfa_conn.c).
 *   put          RDMA WRITE from the sender's buffer straight into the
 *                receiver's (the paper's one zero-copy write).  A source
 *                of up to FMPL_DCFA_BOUNCE bytes is copied into a
 *                registered bounce slot first (registering it would cost
 *                more than the copy) and is free again at once; a larger
 *                one is written from a registration of its pages, held
 *                until the write completes.
 *   get          RDMA READ into the destination, registered the same way.
 *   registrations  kept after use in a cache (dcfa_mem.c) that a memory
 *                monitor (transport/memmon.h) keeps correct when the
 *                application frees memory and maps new pages at the same
 *                addresses.
 *   mailbox      kept by messages (transport/mbox_msg.h): a notification
 *                or CAS request is a SEND on the peer's queue pair, into
 *                receives posted on one shared receive queue.  Slots have
 *                transport.h's extension, so a message of up to its
 *                length (2 KiB up to 8 ranks, 256 bytes from 64 on) is
 *                one SEND with its record, early sends included, where it
 *                took a receive header, an RDMA WRITE and the record.  A
 *                notification's header and record go as two pieces of
 *                the request's inline data, each from where it is.
 *                Why a SEND and not an RDMA WRITE of the record: the
 *                InfiniBand specification (vol. 1, 9.5, transaction
 *                ordering) has an RC responder execute requests in the
 *                order sent, and reports a receive's completion only once
 *                the request is executed - so when our progress sees the
 *                SEND, every RDMA WRITE sent before it on that queue pair
 *                has been placed in our memory; nothing in the
 *                specification orders the placement of the bytes of a
 *                WRITE against a CPU polling them.  Progress then applies
 *                the record (first word last, with release order).
 *   threads      the mailbox's messages are applied, and CAS requests
 *                answered, only in our progress: when the process computes
 *                outside FMPL, or waits in the launcher's fence in
 *                fmpl_finalize, a ticker thread (transport/ticker.h) makes
 *                it.  One recursive lock (transport/rlock.h) serialises
 *                every entry point with it (progress only tries it: a
 *                caller that finds the lock taken has nothing to do).
 *   completions  one CQ for sends and receives.  A send request that
 *                holds something - a bounce slot, a registration, an
 *                fmpl_tl_comp_t to count down - is signalled, and its
 *                completion releases it; one whose data is inline and
 *                that nobody waits for goes unsignalled, and every
 *                FMPL_DCFA_UNSIG-th is signalled to give their places in
 *                the send queue back (fmpl_dcfa_post_bare).  A completion
 *                in error names the verb and the peer, marks the peer
 *                failed, and ends waits on it with FMPL_ERR_PEER.
 *                Receive buffers go back to the shared queue when
 *                progress finds the CQ empty (dcfa_ops.c: repost).
 *
 * Keys: fmpl_tl_key_t.addr is the buffer's virtual address (InfiniBand
 * addresses registered memory by it), kind the rkey, id the registration's
 * slot in our table (for mem_dereg).
 */
#ifndef FMPL_DCFA_H
#define FMPL_DCFA_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <infiniband/verbs.h>

#include "base/dlib.h"
#include "transport/dcfa/dcfa_agent.h"
#include "transport/dcfa/dcfa_offload.h"
#include "transport/dcfa/dcfa_uverbs.h"
#include "transport/mbox_msg.h"
#include "transport/memmon.h"
#include "transport/peer_index.h"
#include "transport/regcache.h"
#include "transport/rlock.h"
#include "transport/ticker.h"
#include "transport/transport.h"
#include "transport/wait.h"

#define FMPL_DCFA_SQ      128      /* send requests in flight per queue pair */
#define FMPL_DCFA_PROBE   1.0      /* s between keepalives to a peer waited on */
#define FMPL_DCFA_NRECV   512      /* receives kept posted on the shared queue */
#define FMPL_DCFA_BOUNCE  8192     /* sources up to this size are copied */
#define FMPL_DCFA_NBOUNCE 64       /* bounce slots */
#define FMPL_DCFA_MAX_WR  (1u << 30)   /* largest single transfer */
#define FMPL_DCFA_UD_NRX  64       /* connection datagrams: receives posted */
#define FMPL_DCFA_UD_NTX  16       /* ... sends in flight */
#define FMPL_DCFA_UD_BUF  128      /* ... their buffers (40 bytes of GRH first) */
/* work request ids: receives on the shared queue carry their buffer's
 * index with FMPL_DCFA_RECV_TAG, datagrams theirs with FMPL_DCFA_UD_TAG
 * (and FMPL_DCFA_UD_SEND when sent), other sends their op's address
 * (user-space pointers never have these bits) */
#define FMPL_DCFA_RECV_TAG (1ull << 63)
#define FMPL_DCFA_UD_TAG   (1ull << 62)
#define FMPL_DCFA_UD_SEND  (1ull << 61)
/* an unsignalled request (fmpl_dcfa_post_bare): its peer in the low 24
 * bits, its verb (FMPL_DCFA_BARE_*) in bit 40 */
#define FMPL_DCFA_BARE_TAG (1ull << 60)
#define FMPL_DCFA_BARE_SEND  0     /* a mailbox record, inline */
#define FMPL_DCFA_BARE_WRITE 1     /* an RDMA WRITE, inline */
/* at most this many unsignalled requests in a row to a peer: the next is
 * signalled, and its completion frees their places in the send queue too
 * (a quarter of it, so that signalled ones are always in flight when it
 * fills) */
#define FMPL_DCFA_UNSIG   (FMPL_DCFA_SQ / 4)
/* receive buffers taken back but not yet posted again, at most: they go
 * back while progress finds the completion queue empty (progress_locked) */
#define FMPL_DCFA_REPOST  64

/* What a rank publishes (modex key "dcfa"). */
typedef struct fmpl_dcfa_card {
    uint8_t gid[16];
    uint32_t ud_qpn;               /* its connection queue pair */
    uint16_t lid;
    uint8_t mtu;                   /* enum ibv_mtu */
    uint8_t roce;
    uint8_t offload;               /* its agent runs offloaded collectives */
} fmpl_dcfa_card_t;

/* A queue pair: libibverbs's (direct mode), or one the agent made whose
 * queues we map (split mode). */
typedef struct fmpl_dcfa_qp {
    struct ibv_qp *ib;             /* direct */
    uint32_t num;                  /* its number */
    uint32_t handle;               /* split: its handle in our context */
    fmpl_rxe_q_t sq, rq;           /* split: its send and receive queues */
    fmpl_uv_db_t db;               /* split: its send queue's doorbell */
    uint8_t made;
} fmpl_dcfa_qp_t;

/* An address handle, either way (split: the kernel's number for it) */
typedef struct fmpl_dcfa_ah {
    struct ibv_ah *ib;
    uint32_t handle, num;
    uint8_t made;
} fmpl_dcfa_ah_t;

/* A peer, as far as we have met it. */
typedef struct fmpl_dcfa_peer {
    fmpl_dcfa_qp_t qp;             /* ours for it, not made until first contact */
    fmpl_dcfa_qp_t oqp;            /* the agent's for it (offload), made with qp;
                                      its queues are mapped in the agent only */
    fmpl_dcfa_ah_t ah;             /* to its connection queue pair */
    fmpl_dcfa_card_t card;
    uint32_t qpn;                  /* its queue pair for us, once ready */
    uint32_t oqpn;                 /* ... and its agent's (offload) */
    uint8_t ready, have_card;      /* ready: ours connected to it */
    uint8_t probing;               /* a keepalive write in flight (dcfa_ops.c) */
    int sq_used;                   /* our send requests in flight to it */
    int unsig;                     /* of which unsignalled since the last signalled */
    double probed;                 /* when the last keepalive went */
} fmpl_dcfa_peer_t;

/* One send request in flight: what its completion releases. */
typedef struct fmpl_dcfa_op {
    struct fmpl_dcfa_op *next;     /* free list */
    fmpl_tl_comp_t *comp;          /* counted down, or NULL */
    int reg;                       /* a registration it holds a reference to, or -1 */
    int bounce;                    /* its bounce slot, or -1 */
    int peer;
    const char *verb;              /* for the message when it fails */
    int probe;                     /* a keepalive write */
    int covers;                    /* unsignalled requests before it that its
                                      completion completes too */
} fmpl_dcfa_op_t;

/* The offloaded collectives, the rank's side (dcfa_offload.c) */
struct fmpl_dcfa_offh;
typedef struct fmpl_dcfa_off {
    int on;                        /* the agent runs them */
    unsigned what;                 /* FMPL_DCFA_OFFLOAD: a mask of collectives */
    size_t min;                    /* FMPL_DCFA_OFFLOAD_MIN */
    const char *why;               /* why not on */
    fmpl_off_seg_t *seg;           /* shared with the agent */
    size_t len;
    struct ibv_mr *mr;
    struct fmpl_dcfa_offh *held[FMPL_OFF_SLOTS];   /* each slot's under way */
    unsigned long started;         /* collectives handed to the agent */
} fmpl_dcfa_off_t;

typedef struct fmpl_dcfa {
    fmpl_tl_t *tl;
    /* direct mode */
    struct ibv_context *ctx;
    struct ibv_pd *pd;
    struct ibv_cq *cq;
    struct ibv_srq *srq;
    /* split mode: our context, the agent's objects in it */
    int split;
    int agent, agent_pid;          /* our socket to the agent, its pid */
    int cmd_fd;                    /* our device file, the agent made our objects in */
    uint32_t pd_handle;
    fmpl_rxe_q_t rcq, rsrq;        /* our completion and shared receive queues */
    unsigned agent_check;
    double agent_seen;             /* when its socket was last looked at */
    int dev_opened;
    char mode_why[96];             /* why direct mode */
    char devname[32];
    uint8_t port;
    int gid_index;
    union ibv_gid gid;
    uint16_t lid;
    enum ibv_mtu mtu;
    int roce;                      /* Ethernet link layer: addressed by GID */
    uint32_t max_inline;
    uint32_t vendor;               /* the device's vendor id (software providers) */
    uint8_t rd_atom;               /* RDMA READs in flight per queue pair */
    fmpl_dcfa_peer_t *peer;        /* [size] */
    int nqp;                       /* RC queue pairs created */
    fmpl_peer_index_t by_qpn;      /* our RC queue pairs' numbers -> peers */
    fmpl_dcfa_qp_t ud;             /* the connection queue pair */
    uint8_t *ud_buf;               /* [UD_NRX receives + UD_NTX sends][UD_BUF] */
    struct ibv_mr *ud_mr;
    int ud_tx_busy;
    unsigned ud_tx_next;
    double connect_timeout;        /* s */
    size_t write_max;              /* FMPL_DCFA_WRITE_MAX: bytes a RDMA WRITE request */
    fmpl_mmsg_box_t box;           /* the mailbox, our CAS in flight */
    uint8_t *rx;                   /* [FMPL_DCFA_NRECV] receive buffers ... */
    size_t rx_len;                 /* ... of this many bytes each */
    struct ibv_mr *rx_mr;
    int repost[FMPL_DCFA_REPOST], nrepost;   /* receive buffers to post again */
    uint8_t *bounce;               /* [FMPL_DCFA_NBOUNCE][FMPL_DCFA_BOUNCE] */
    struct ibv_mr *bounce_mr;
    int bounce_free[FMPL_DCFA_NBOUNCE], nbounce_free;
    fmpl_dcfa_op_t *ops, *op_free;  /* [nops] */
    int nops;
    /* registrations: mem_alloc's, cached ones (a monitor: rc.mon), ones
     * for one use; the users of each are its keys and requests */
    fmpl_rcache_t rc;
    size_t cache_max;              /* registered bytes kept at refs 0, at most */
    int failed_peer;               /* a peer a completion reported unreachable */
    fmpl_dcfa_off_t off;
    fmpl_rlock_t lock;             /* entry points; progress only tries it */
    fmpl_ticker_t ticker;
} fmpl_dcfa_t;

static inline fmpl_dcfa_t *fmpl_dcfa_of(fmpl_tl_t *tl) { return (fmpl_dcfa_t *)tl->priv; }

/* receive buffer i, where a message lands */
static inline fmpl_mmsg_t *fmpl_dcfa_rx(const fmpl_dcfa_t *d, int i)
{
    return (fmpl_mmsg_t *)(void *)(d->rx + (size_t)i * d->rx_len);
}

/* dcfa_verbs.c: the device in either mode (errno values unless said) */
int  fmpl_dcfa_dev_open(fmpl_dcfa_t *d, int cqe);          /* FMPL code */
void fmpl_dcfa_dev_close(fmpl_dcfa_t *d);
struct ibv_mr *fmpl_dcfa_reg_mr(fmpl_dcfa_t *d, void *addr, size_t len, int access);
void fmpl_dcfa_dereg_mr(fmpl_dcfa_t *d, struct ibv_mr *mr);
int  fmpl_dcfa_qp_create(fmpl_dcfa_t *d, enum ibv_qp_type type, int on_srq,
                         struct ibv_qp_cap *cap, fmpl_dcfa_qp_t *qp);
int  fmpl_dcfa_qp_modify(fmpl_dcfa_t *d, fmpl_dcfa_qp_t *qp, struct ibv_qp_attr *a, int mask);
void fmpl_dcfa_qp_destroy(fmpl_dcfa_t *d, fmpl_dcfa_qp_t *qp);
int  fmpl_dcfa_qp_recv(fmpl_dcfa_t *d, fmpl_dcfa_qp_t *qp, struct ibv_recv_wr *wr);
int  fmpl_dcfa_cq_poll(fmpl_dcfa_t *d, int n, struct ibv_wc *wc);
int  fmpl_dcfa_ah_create(fmpl_dcfa_t *d, struct ibv_ah_attr *a, fmpl_dcfa_ah_t *ah);
void fmpl_dcfa_ah_destroy(fmpl_dcfa_t *d, fmpl_dcfa_ah_t *ah);
void fmpl_dcfa_agent_look(fmpl_dcfa_t *d);
/* A request to the agent (with the file fd unless it is -1): 0 or an
 * errno value (EPIPE, said, when the agent does not answer) */
int  fmpl_dcfa_ask(fmpl_dcfa_t *d, fmpl_dcfa_areq_t *q, int fd, fmpl_dcfa_arep_t *p);

/* Post one send request (UD: to `ah`), ringing the doorbell.  In line:
 * it is on every message's path, and in the test bed's emulation every
 * call costs (callgrind). */
static inline int fmpl_dcfa_qp_post(fmpl_dcfa_t *d, fmpl_dcfa_qp_t *qp, struct ibv_send_wr *wr,
                                    const fmpl_dcfa_ah_t *ah)
{
    wr->next = NULL;
    if (!d->split) {
        struct ibv_send_wr *bad = NULL;
        if (ah)
            wr->wr.ud.ah = ah->ib;
        return ibv_post_send(qp->ib, wr, &bad);
    }
    int e = !ah && wr->opcode == IBV_WR_SEND && wr->send_flags == IBV_SEND_INLINE
                ? fmpl_rxe_post_inline_send(&qp->sq, wr->wr_id, wr->sg_list, wr->num_sge)
                : fmpl_rxe_post_send(&qp->sq, wr, ah ? ah->num : 0);
    return e ? e : fmpl_uv_doorbell(d->cmd_fd, &qp->db, qp->handle);
}

/* Split mode: is the agent still there?  Looked at in earnest one call
 * in 16 (fmpl_dcfa_agent_look, dcfa_verbs.c). */
static inline void fmpl_dcfa_agent_check(fmpl_dcfa_t *d)
{
    if (d->split && d->agent >= 0 && (++d->agent_check & 15) == 0)
        fmpl_dcfa_agent_look(d);
}

/* dcfa_ops.c */
/* Open the device as the direct mode does (FMPL_DCFA_DEVICE, _PORT,
 * _GID_INDEX): d->ctx, port, lid, mtu, roce, gid (the agent's too). */
int  fmpl_dcfa_open_device(fmpl_dcfa_t *d);
int  fmpl_dcfa_progress(fmpl_tl_t *tl);
/* Wait until *pending is 0, making progress; `peer` gone ends it. */
int  fmpl_dcfa_wait(fmpl_dcfa_t *d, volatile int *pending, int peer);
/* Post `wr` (one request) on `peer`'s queue pair, waiting for room in its
 * send queue; `op` (taken from the free list) is released on failure. */
int  fmpl_dcfa_post(fmpl_dcfa_t *d, int peer, struct ibv_send_wr *wr, fmpl_dcfa_op_t *op);
/* Post `wr`, a request that holds nothing once posted (its data inline,
 * nobody to tell when it is done), unsignalled where it may be: `kind` is
 * FMPL_DCFA_BARE_SEND or _WRITE, for the message should it fail. */
int  fmpl_dcfa_post_bare(fmpl_dcfa_t *d, int peer, struct ibv_send_wr *wr, int kind);
/* A free op (making progress until one is), or NULL when `peer` is gone. */
fmpl_dcfa_op_t *fmpl_dcfa_op_get(fmpl_dcfa_t *d, int peer);
void fmpl_dcfa_op_put(fmpl_dcfa_t *d, fmpl_dcfa_op_t *op);
/* A verbs call failed with errno value `err`: say so, return the code. */
int  fmpl_dcfa_error(fmpl_dcfa_t *d, int err, const char *verb, int peer);

/* dcfa_conn.c */
int  fmpl_dcfa_conn_open(fmpl_dcfa_t *d);
void fmpl_dcfa_conn_close(fmpl_dcfa_t *d);
/* Make sure our queue pair for `peer` is connected (asking it, making
 * progress until it answered): FMPL_SUCCESS or FMPL_ERR_PEER. */
int  fmpl_dcfa_connect(fmpl_dcfa_t *d, int peer);
/* A datagram received in slot `slot`, or one of ours sent. */
void fmpl_dcfa_conn_recv(fmpl_dcfa_t *d, int slot, const struct ibv_wc *wc);
void fmpl_dcfa_conn_sent(fmpl_dcfa_t *d);
/* Does `peer` have an agent that runs offloaded collectives (its card)? */
int  fmpl_dcfa_peer_offloads(fmpl_dcfa_t *d, int peer);

/* dcfa_offload.c */
int  fmpl_dcfa_off_open(fmpl_dcfa_t *d);
void fmpl_dcfa_off_close(fmpl_dcfa_t *d);
int  fmpl_dcfa_off_qp(fmpl_dcfa_t *d, int peer, fmpl_dcfa_qp_t *qp);
/* FMPL_DCFA_OFFLOAD's collectives in words */
void fmpl_dcfa_off_what(const fmpl_dcfa_t *d, char *buf, size_t len);
int  fmpl_dcfa_off_ok(fmpl_tl_t *tl, const char *what, size_t size, const int *peers, int n);
int  fmpl_dcfa_off_start(fmpl_tl_t *tl, uint32_t chan, uint32_t seq, const fmpl_tl_xfer_t *x,
                         int n, void **h);
int  fmpl_dcfa_off_test(fmpl_tl_t *tl, void *h);
void fmpl_dcfa_off_cancel(fmpl_tl_t *tl, void *h);

/* dcfa_mem.c */
int  fmpl_dcfa_mem_open(fmpl_dcfa_t *d);
void fmpl_dcfa_mem_close(fmpl_dcfa_t *d);
int  fmpl_dcfa_mem_reg(fmpl_tl_t *tl, void *addr, size_t len, fmpl_tl_key_t *key);
void fmpl_dcfa_mem_dereg(fmpl_tl_t *tl, const fmpl_tl_key_t *key);
void *fmpl_dcfa_mem_alloc(fmpl_tl_t *tl, size_t len);
int  fmpl_dcfa_mem_free(fmpl_tl_t *tl, void *p);
/* Registration idx of d->rc (fmpl_rcache_take's, for the caller's use
 * until its fmpl_rcache_put). */
static inline struct ibv_mr *fmpl_dcfa_mr_of(const fmpl_dcfa_t *d, int idx)
{
    return fmpl_rcache_get(&d->rc, idx)->mr;
}
/* A bounce slot (-1: none free) */
int  fmpl_dcfa_bounce_get(fmpl_dcfa_t *d);
void fmpl_dcfa_bounce_put(fmpl_dcfa_t *d, int slot);

/* dcfa_rma.c */
int  fmpl_dcfa_put(fmpl_tl_t *tl, int peer, const void *src, size_t len,
                   const fmpl_tl_key_t *key, uint64_t roff, fmpl_tl_comp_t *comp);
int  fmpl_dcfa_get(fmpl_tl_t *tl, int peer, void *dst, size_t len, const fmpl_tl_key_t *key,
                   uint64_t roff);
int  fmpl_dcfa_send_msg(fmpl_dcfa_t *d, int peer, const fmpl_mmsg_t *m, size_t len);
int  fmpl_dcfa_box_send(fmpl_mmsg_box_t *b, int peer, const fmpl_mmsg_t *m, size_t len);
volatile void *fmpl_dcfa_mbox_in(fmpl_tl_t *tl, int peer, int idx);
int  fmpl_dcfa_notify(fmpl_tl_t *tl, int peer, int idx, unsigned off, const void *rec,
                      unsigned len, unsigned flags, fmpl_tl_comp_t *comp);
int  fmpl_dcfa_box_wait(fmpl_mmsg_box_t *b, volatile int *pending, int peer);

/* dcfa_lib.c: libibverbs' real entry points, from dlopen (base/dlib.h);
 * ibv_reg_mr and ibv_query_port are verbs.h macros over
 * ibv_reg_mr_iova2 and fmpl_dcfa_query_port's logic */
#define FMPL_IBV_FNS(X) X(ibv_get_device_list) X(ibv_free_device_list) \
    X(ibv_get_device_name) X(ibv_open_device) X(ibv_close_device) X(ibv_query_device) \
    X(ibv_query_port) X(ibv_query_gid) X(ibv_alloc_pd) X(ibv_dealloc_pd) \
    X(ibv_reg_mr_iova2) X(ibv_dereg_mr) X(ibv_create_cq) X(ibv_destroy_cq) \
    X(ibv_create_srq) X(ibv_destroy_srq) X(ibv_create_qp) X(ibv_modify_qp) \
    X(ibv_destroy_qp) X(ibv_create_ah) X(ibv_destroy_ah) X(ibv_wc_status_str)
typedef struct fmpl_ibv_lib { FMPL_IBV_FNS(FMPL_DLIB_FIELD) } fmpl_ibv_lib_t;
extern fmpl_ibv_lib_t fmpl_ibv;
/* before any other verb: FMPL_ERR_UNSUPPORTED (logged) without the library */
int fmpl_dcfa_lib_load(void);
int fmpl_dcfa_query_port(struct ibv_context *c, uint8_t port, struct ibv_port_attr *a);
/* a completion's status in words; a rank in split mode, which never
 * loads libibverbs otherwise, loads it here */
const char *fmpl_dcfa_wc_str(enum ibv_wc_status s);

#endif
