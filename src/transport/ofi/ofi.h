/*
 * ofi.h - the libfabric transport (private to src/transport/ofi/).
 *
 * Two FI_EP_RDM endpoints per process with FI_MSG and FI_RMA, sharing one
 * completion queue and an address vector of every rank's two addresses:
 * DATA carries puts, gets and the notifications ordered after them; CTL
 * the unordered notifications (receive headers), CAS requests and their
 * answers.  Why two: in a ping-pong each side sends the completion record
 * of one message and right after it the header of its next receive.  On
 * one TCP connection (tcp;ofi_rxm) those are two small segments in a row,
 * and the kernel then acknowledges at once, inside the receiver's recv(),
 * instead of with the reply: several microseconds on every one-way trip.
 * On two connections each carries one segment per trip.  transport.h
 * orders a notification only behind the puts before it; the two kinds
 * are not ordered with respect to each other (on shm an unordered one
 * overtakes queued ordered ones; here either may overtake the other), and
 * no record relies on it: each record word is written by one kind only,
 * or (signal.c's halves) rewritten only after its reader consumed it.
 * Each kind keeps its own order: behind the puts on DATA, and on CTL
 * together with the CASes on the same words.  The model of transport.h
 * maps onto it so:
 *
 *   mailbox   kept by messages (transport/mbox_msg.h: the area, the
 *             records, CAS by request).  A notification is one message
 *             (fi_inject) to the peer.  The endpoints are opened with
 *             FI_ORDER_SAW and FI_ORDER_SAS, so the message is
 *             transmitted, and processed at the target, behind every
 *             earlier put and notify on its endpoint to that peer
 *             (libfabric's message order; on tcp, shm and verbs RC a
 *             receive completes only after the data of the writes before
 *             it is in place).  The reader applies each endpoint's
 *             messages in the order its receives were posted, which is
 *             the order they matched.
 *   put/get   fi_write / fi_read on a registered region; a put's
 *             completion decrements its fmpl_tl_comp_t.
 *   progress  fi_cq_read, and applying the messages that came, from every
 *             FMPL wait.  The provider moves data on its own where it can
 *             (FI_PROGRESS_AUTO: tcp) unless FMPL_OFI_PROGRESS=manual, but
 *             applying messages is ours: so that a process that computes
 *             outside FMPL (or waits in the launcher's fence in
 *             fmpl_finalize) never holds up its peers' notifications,
 *             CASes and, with manual progress, puts and gets, a thread of
 *             ours calls progress when nobody else has for a whole tick.
 *             The domain is thread safe for it.
 *
 * Keys: fmpl_tl_key_t.addr is the remote address (the buffer's address
 * with FI_MR_VIRT_ADDR, else its offset in the registered region), kind
 * and id are the low and high halves of the 64-bit protection key.
 */
#ifndef FMPL_OFI_H
#define FMPL_OFI_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>

#include "transport/mbox_msg.h"
#include "transport/ticker.h"
#include "transport/regcache.h"
#include "transport/transport.h"
#include "transport/wait.h"

#define FMPL_OFI_NREG     64       /* unused registrations kept at most */
#define FMPL_OFI_NRECV    256      /* receives kept posted for messages */

/* One posted receive. */
typedef struct fmpl_ofi_rx {
    fmpl_mmsg_t msg;
    int done;                      /* its completion came */
    int from;                      /* its sender as libfabric says (FI_SOURCE):
                                      a rank, or FMPL_MMSG_FROM_* */
} __attribute__((aligned(64))) fmpl_ofi_rx_t;

/* The two endpoints (see above). */
enum { FMPL_OFI_DATA = 0, FMPL_OFI_CTL = 1, FMPL_OFI_NEP = 2 };

/* One endpoint, the peers' addresses on it and its receives for
 * messages: posted in ring order, applied in the same order. */
typedef struct fmpl_ofi_chan {
    struct fid_ep *ep;
    fi_addr_t *addr;               /* [size] */
    fmpl_ofi_rx_t *rx;             /* [FMPL_OFI_NRECV] */
    unsigned long posted, applied;
} fmpl_ofi_chan_t;

/* The context of one RMA operation in flight (ofi_op.c): the comp it
 * counts in, NULL once forgotten (ops->forget), so that its completion
 * never touches memory that may have gone. */
typedef struct fmpl_ofi_op {
    fmpl_tl_comp_t *comp;
    struct fmpl_ofi_op *next;      /* free list */
} fmpl_ofi_op_t;

typedef struct fmpl_ofi_op_block fmpl_ofi_op_block_t;

typedef struct fmpl_ofi {
    fmpl_tl_t *tl;
    struct fi_info *info;
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_av *av;
    struct fid_cq *cq;             /* both endpoints' */
    fmpl_ofi_chan_t ch[FMPL_OFI_NEP];
    fmpl_mmsg_box_t box;           /* the mailbox, our CAS in flight */
    int virt_addr;                 /* FI_MR_VIRT_ADDR: remote addresses are virtual */
    int prov_key;                  /* FI_MR_PROV_KEY: the provider picks keys */
    uint64_t next_key;             /* else ours, unique in the domain */
    size_t max_msg;                /* largest single transfer */
    fmpl_rcache_t rc;              /* registrations (ofi_mem.c) */
    int failed_peer;               /* a peer the provider reported unreachable */
    /* senders: with FI_SOURCE the provider says where each message came
     * from, and a message is applied only to its sender's own lines (a
     * rank's word in the payload is not believed); rank_of maps an
     * address (FI_AV_TABLE: an index) back to its rank */
    int check_src;
    int *rank_of;                  /* [naddr], -1: none */
    size_t naddr;
    /* progress: one caller at a time; the ticker steps in when idle */
    pthread_mutex_t lock;
    fmpl_ticker_t ticker;
    /* operations' contexts: posted by any thread, completed by progress */
    pthread_mutex_t op_lock;
    fmpl_ofi_op_t *op_free;
    fmpl_ofi_op_block_t *op_blocks;
} fmpl_ofi_t;

/* ofi_op.c: an operation counted in c (NULL: out of memory); its end,
 * with the status it ended with (the first error is kept in its comp);
 * the operations counted in c forgotten; all of them freed at close */
fmpl_ofi_op_t *fmpl_ofi_op_start(fmpl_ofi_t *o, fmpl_tl_comp_t *c);
void fmpl_ofi_op_end(fmpl_ofi_t *o, fmpl_ofi_op_t *op, int status);
void fmpl_ofi_op_forget(fmpl_ofi_t *o, fmpl_tl_comp_t *c);
void fmpl_ofi_op_cleanup(fmpl_ofi_t *o);

static inline fmpl_ofi_t *fmpl_ofi_of(fmpl_tl_t *tl) { return (fmpl_ofi_t *)tl->priv; }

/* ofi_lib.c: libfabric's real entry points, from dlopen (base/dlib.h) */
typedef struct fmpl_ofi_lib {
    __typeof__(fi_getinfo) *getinfo;
    __typeof__(fi_freeinfo) *freeinfo;
    __typeof__(fi_dupinfo) *dupinfo;
    __typeof__(fi_fabric) *fabric;
    __typeof__(fi_strerror) *strerror;
} fmpl_ofi_lib_t;
extern fmpl_ofi_lib_t fmpl_fi;
int fmpl_ofi_lib_load(void);

/* ofi_ops.c */
int  fmpl_ofi_error(fmpl_ofi_t *o, int fi_rc, const char *what, int peer);
int  fmpl_ofi_progress(fmpl_tl_t *tl);
/* Read the completion queue; receives are only marked done.  The caller
 * holds o->lock. */
int  fmpl_ofi_cq_drain(fmpl_ofi_t *o);
/* Wait until *pending is 0, making progress; an error (or `peer` gone)
 * ends the wait. */
int  fmpl_ofi_wait(fmpl_ofi_t *o, volatile int *pending, int peer);
/* A post to `peer` found the provider busy (FI_EAGAIN): make progress
 * (`locked`: the caller holds o->lock, so only read completions) before
 * the caller tries again; FMPL_ERR_PEER once the peer is gone. */
int  fmpl_ofi_busy(fmpl_ofi_t *o, int peer, fmpl_tl_wait_t *w, int locked);

/* ofi_msg.c */
int  fmpl_ofi_msg_open(fmpl_ofi_t *o, fmpl_ofi_chan_t *ch);
void fmpl_ofi_msg_close(fmpl_ofi_chan_t *ch);
/* the receive of `ctx` on some endpoint, or NULL */
fmpl_ofi_rx_t *fmpl_ofi_msg_rx(fmpl_ofi_t *o, void *ctx);
int  fmpl_ofi_msg_apply(fmpl_ofi_t *o);
int  fmpl_ofi_msg_send(fmpl_ofi_t *o, int ch, int peer, const fmpl_mmsg_t *m, size_t len,
                       int locked);
/* mbox_msg.h's answer hook: a CAS answer, sent from inside progress */
int  fmpl_ofi_answer(fmpl_mmsg_box_t *b, int peer, const fmpl_mmsg_t *m, size_t len);
int  fmpl_ofi_request(fmpl_mmsg_box_t *b, int peer, const fmpl_mmsg_t *m, size_t len);
int  fmpl_ofi_box_wait(fmpl_mmsg_box_t *b, volatile int *pending, int peer);
volatile void *fmpl_ofi_mbox_in(fmpl_tl_t *tl, int peer, int idx);
int  fmpl_ofi_notify(fmpl_tl_t *tl, int peer, int idx, unsigned off, const void *rec,
                     unsigned len, unsigned flags, fmpl_tl_comp_t *comp);
int  fmpl_ofi_mbox_cas(fmpl_tl_t *tl, int peer, int idx, unsigned off, int outgoing,
                       uint64_t expect, uint64_t desired, uint64_t *old);
/* ofi_mem.c */
int  fmpl_ofi_mem_reg(fmpl_tl_t *tl, void *addr, size_t len, fmpl_tl_key_t *key);
void fmpl_ofi_mem_dereg(fmpl_tl_t *tl, const fmpl_tl_key_t *key);
/* set up the registration cache; whether it keeps unused registrations:
 * `by_address`, the provider reaches registered memory through its
 * virtual address at each transfer; `setting`, FMPL_OFI_MR_CACHE's 0 or
 * 1, or -1 when unset */
void fmpl_ofi_mem_policy(fmpl_ofi_t *o, int by_address, int setting);
void *fmpl_ofi_mem_alloc(fmpl_tl_t *tl, size_t len);
int  fmpl_ofi_mem_free(fmpl_tl_t *tl, void *p);
void fmpl_ofi_mem_cleanup(fmpl_ofi_t *o);

/* ofi_rma.c */
int  fmpl_ofi_put(fmpl_tl_t *tl, int peer, const void *src, size_t len,
                  const fmpl_tl_key_t *key, uint64_t roff, unsigned flags,
                  fmpl_tl_comp_t *comp);
int  fmpl_ofi_get(fmpl_tl_t *tl, int peer, void *dst, size_t len, const fmpl_tl_key_t *key,
                  uint64_t roff);

#endif
