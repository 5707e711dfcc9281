/*
 * p2p.h - the receiver-initiated protocol (internal).
 *
 * The matching area of the paper is the transport's mailbox: for each peer
 * and index one 64-byte line written only by that peer.  FMPL puts two
 * records in it, so that one cache line carries everything a peer tells us
 * about an index:
 *
 *   offset  0  header record  (the peer posts a receive of OUR message)
 *              word = seq << 32 | state, then size and the buffer's key
 *   offset 32  data record    (the peer's message to US is complete)
 *              word = seq << 32 | inline length's high byte << 24 |
 *              status << 16 | flags << 8 | its low byte, then up to 24
 *              bytes of inline data
 *
 * A transport whose records may be longer than half a line (max_inline,
 * shm: up to 2 KiB) has slots of several lines: there a message of up to
 * fmpl_g.inline_max bytes rides in the data record's extension, at slot
 * offset 64 (FMPL_DFLAG_EXT), with the acknowledgement in front of it.
 * One record, written by the sender into its own memory and read by the
 * receiver line after line, where the data would otherwise pass through
 * the receive's header, a FIFO chunk and the record (about three cache
 * lines on the critical path for one).
 *
 * The k-th receive from src on index i posts header seq k into our line at
 * src; src's k-th send to us on i waits for it, writes the data once into
 * our buffer (or inline), then the data record with seq k.  Sequence
 * numbers, not resets: a slot is never cleared, so a reset can't race with
 * the next header.
 *
 * A receive posted by fmpl_irecv may be cancelled: its header state is
 * POSTED_C and the sender must CLAIM it (CAS) before writing, while
 * fmpl_cancel_irecv CASes it to CANCELLED.  Exactly one of them wins.
 * Blocking receives cannot be cancelled and skip the CAS.
 *
 * Large messages are copied by both sides at once when the transport can
 * read remotely (FMPL_TL_CAP_GET): the sender's SPLIT record carries its
 * buffer's key and size; the sender writes the first part while the
 * receiver reads the rest and answers READ_DONE (or READ_FAIL, and the
 * sender writes the rest too) in its header word; then the sender writes
 * the final data record.  Two cores copy: about twice one core's memcpy.
 * The receiver claims its part by CAS (POSTED/CLAIMED -> READING); a sender
 * that finds it idle after writing its own part takes the rest back by CAS
 * (-> READ_FAIL) and writes it, so no send waits on a receiver that is
 * busy elsewhere.
 *
 * Early sends.  A message that fits the data record does not need the
 * receiver's buffer, only a free record: the receiver must have taken the
 * previous one.  Over a network each notification costs a message, and in
 * a ping-pong the header of the next receive travels right behind the
 * reply it waits for, so two messages per exchange sit on the critical
 * path where MPI's eager protocol has one.  So a data record (plain or
 * matrix) also carries, in its last four bytes (FMPL_DFLAG_ACK), the last
 * of the peer's messages on the same index that we have received: with it
 * the peer may write its next small message at once, before our header
 * comes.  The receiver finds such a record already there when it starts
 * the receive and then posts no header at all.  Exactness is kept where
 * it is cheap: an early send goes out only if the receiver's last header
 * had room for it (a matrix: had exactly its size and shape tag, and the
 * tag travels along, FMPL_DFLAG_TAG), and a mismatch is still the
 * receiver's FMPL_ERR_TRUNCATE or FMPL_ERR_SHAPE with its buffer
 * untouched; the sender, which has returned, sees FMPL_SUCCESS (fmpl.h).
 *
 * Direct lines.  Where the transport's mailbox lines are plain memory here
 * (shm: transport.h, fmpl_tl_direct_t), fmpl_send and fmpl_isend write a
 * message that fits its record straight into the line when its receive is
 * posted or it may go early (send.c: send_direct): no request, no call
 * into the transport.  The protocol is the same; only the path is short.
 *
 * Where a notification costs a system call on each side (the kernel's
 * network stack), the header the receiver posts anyway still costs about
 * a quarter of the exchange.  So a blocking receive of a small message
 * whose predecessor came early holds its header back for up to
 * FMPL_EARLY_PATIENCE: the message usually comes first.  A sender that
 * may not go early (no acknowledgement: a one-way stream) waits that long
 * once, and the receiver then posts its headers at once again.  Where a
 * round trip takes longer than that (the soft-RoCE test bed: 80-100 us),
 * the header went out just before the message came anyway, on every
 * exchange; so when a message comes early after its header was posted
 * late, the patience doubles, up to FMPL_EARLY_PATIENCE_MAX, and when the
 * sender did wait for a late header it halves (recv.c).
 */
#ifndef FMPL_P2P_H
#define FMPL_P2P_H

#include <stdint.h>
#include <string.h>

#include "fmpl.h"
#include "p2p/state.h"

#define FMPL_HDR_OFF     0
#define FMPL_DATA_OFF    32
#define FMPL_INLINE_MAX  24

enum { FMPL_HDR_POSTED = 1, FMPL_HDR_POSTED_C = 2, FMPL_HDR_CLAIMED = 3,
       FMPL_HDR_CANCELLED = 4, FMPL_HDR_READ_DONE = 5, FMPL_HDR_READ_FAIL = 6,
       FMPL_HDR_READING = 7, FMPL_HDR_CANCEL_REQ = 9 /* cancel.c, after POSTED_M */ };
/* A header's size word: the receive's bytes below, a matrix receive's
 * shape tag (matrix.h) above; FMPL_HDR_POSTED_M: a matrix receive whose
 * layout record waits on the communicator's AUX index. */
#define FMPL_HDR_SIZE_BITS 40
#define FMPL_HDR_SIZE_MASK ((UINT64_C(1) << FMPL_HDR_SIZE_BITS) - 1)
#define FMPL_HDR_POSTED_M  8
/* how long a blocking small receive after an early one holds its header:
 * at first, and at least (recv.c adapts it up to the most) */
#define FMPL_EARLY_PATIENCE     100e-6
#define FMPL_EARLY_PATIENCE_MAX 2e-3
/* how long a split sender waits for an idle receiver to start reading */
#define FMPL_SPLIT_PATIENCE 20e-6
enum { FMPL_DST_OK = 0, FMPL_DST_TRUNCATE = 1, FMPL_DST_ERROR = 2, FMPL_DST_SPLIT = 3,
       FMPL_DST_CANCELLED = 4 /* cancel.c: not a message, the sender's consent */ };

/* Where a split message's halves meet: both sides compute it from the
 * size alone (page aligned, so each side copies whole pages). */
static inline int fmpl_split_ok(const fmpl_tl_t *tl)
{
    return (tl->caps & (FMPL_TL_CAP_GET | FMPL_TL_CAP_CAS)) ==
           (FMPL_TL_CAP_GET | FMPL_TL_CAP_CAS);
}
static inline uint64_t fmpl_split_point(uint64_t size) { return (size / 2) & ~(uint64_t)4095; }
/* Is a message of `size` bytes one to split (FMPL_SPLIT_MIN, tl.split_max)? */
static inline int fmpl_split_size(uint64_t size)
{
    return size > fmpl_g.split_min && size <= fmpl_g.split_max;
}
#define FMPL_DFLAG_INLINE 1u
#define FMPL_DFLAG_ACK    2u   /* inl[FMPL_ACK_OFF..+4]: our last receive done */
#define FMPL_DFLAG_EARLY  4u   /* sent before its header */
#define FMPL_DFLAG_TAG    8u   /* inl[FMPL_TAG_OFF..+4]: an early matrix send's shape tag */
#define FMPL_DFLAG_EXT   16u   /* with INLINE: the data at record offset 32 (p2p.h) */
#define FMPL_ACK_OFF      (FMPL_INLINE_MAX - 4)
#define FMPL_TAG_OFF      (FMPL_ACK_OFF - 4)
#define FMPL_MX_EARLY_MAX FMPL_TAG_OFF   /* the bytes an early matrix send carries */
/* the most bytes a record's extension carries (the length has 16 bits) */
#define FMPL_EXT_MAX      2048
#define FMPL_EXT_OFF      32   /* where the extension starts in the record */
/* The largest receive whose polls prefetch the record's extension
 * (recv.c).  bench/latency one-way, against prefetching it all (6
 * interleaved runs each): 1 KiB 0.80x, 2 KiB 0.66x the time without;
 * 128 B and 512 B 1.2x without. */
#define FMPL_EXT_PREFETCH 512
typedef struct fmpl_hdr_rec {
    uint64_t word;
    uint64_t size;
    fmpl_tl_key_t key;
} fmpl_hdr_rec_t;

typedef struct fmpl_data_rec {
    uint64_t word;
    uint8_t inl[FMPL_INLINE_MAX];
} fmpl_data_rec_t;

/* a data record with room for its extension */
typedef struct fmpl_data_rec_x {
    fmpl_data_rec_t r;
    uint8_t ext[FMPL_EXT_MAX];
} fmpl_data_rec_x_t;

_Static_assert(sizeof(fmpl_hdr_rec_t) == 32, "header record is half a line");
_Static_assert(sizeof(fmpl_data_rec_t) == 32, "data record is half a line");
_Static_assert(sizeof(fmpl_data_rec_x_t) == FMPL_EXT_OFF + FMPL_EXT_MAX,
               "the extension follows the record");

static inline uint64_t fmpl_hdr_word(uint32_t seq, unsigned state)
{
    return (uint64_t)seq << 32 | state;
}
static inline uint64_t fmpl_data_word(uint32_t seq, unsigned status, unsigned flags,
                                      unsigned len)
{
    return (uint64_t)seq << 32 | (uint64_t)(len >> 8 & 0xff) << 24 | status << 16 |
           flags << 8 | (len & 0xff);
}
static inline unsigned fmpl_data_len(uint64_t w)
{
    return (unsigned)(w & 0xff) | (unsigned)(w >> 24 & 0xff) << 8;
}
static inline uint32_t fmpl_seq_next(uint32_t s) { return s + 1 ? s + 1 : 1; }

static inline uint64_t fmpl_line_word(volatile void *line, unsigned off)
{
    return atomic_load_explicit((_Atomic uint64_t *)((volatile uint8_t *)line + off),
                                memory_order_acquire);
}

/* Copy n bytes (a multiple of 8, 8-aligned) out of a line the peer may be
 * rewriting as we read: a split record, which the sender may take back and
 * overwrite with its final record before our CAS tells us so (recv.c).
 * What is read may then be torn, and the CAS that follows throws it away:
 * a seqlock's reader, whose reads must be atomic to be defined - relaxed
 * ones, plain loads on the machine.  The writer of a record applied in
 * our own memory (mbox_msg.c) stores its words the same way. */
static inline void fmpl_line_copy(void *dst, const volatile void *src, size_t n)
{
    uint64_t *d = dst;
    for (size_t i = 0; i < n / 8; i++)
        d[i] = atomic_load_explicit((_Atomic uint64_t *)((volatile uint8_t *)src + 8 * i),
                                    memory_order_relaxed);
}

/* Is data record word `w` the message `seq` (not a cancel's answer)? */
static inline int fmpl_data_is(uint64_t w, uint32_t seq)
{
    return (uint32_t)(w >> 32) == seq && ((w >> 16) & 0xff) != FMPL_DST_CANCELLED;
}

/* The inline bytes of data record `w` in `line` (w has FMPL_DFLAG_INLINE):
 * their address, and their count in *n; NULL for a length no correct
 * sender writes (so a broken peer never makes us read past its record). */
static inline const uint8_t *fmpl_rec_inline(volatile uint8_t *line, uint64_t w, size_t *n)
{
    *n = fmpl_data_len(w);
    if (w & (FMPL_DFLAG_EXT << 8))
        return *n <= fmpl_g.inline_max ? (const uint8_t *)line + FMPL_DATA_OFF + FMPL_EXT_OFF
                                       : NULL;
    return *n <= FMPL_INLINE_MAX ? (const uint8_t *)line + FMPL_DATA_OFF + 8 : NULL;
}

/* request kinds and flags */
/* FMPL_REQ_COLL: a nonblocking collective (coll/sched.h) */
enum { FMPL_REQ_NONE = 0, FMPL_REQ_SEND = 1, FMPL_REQ_RECV = 2, FMPL_REQ_COLL = 3 };
#define FMPL_RF_ISSUED   1u     /* send: data written, waiting for the source */
#define FMPL_RF_DONE     2u     /* complete; status is final */
#define FMPL_RF_BLOCKING 4u     /* receive: not cancellable */
#define FMPL_RF_QUEUED   8u     /* send: on the pending-send list */
#define FMPL_RF_SPLIT   16u     /* send: split, waiting for the receiver's part */
#define FMPL_RF_GOT     32u     /* receive: our part of a split is copied */
#define FMPL_RF_WATCHED 64u     /* receive: on the large-receive list */
#define FMPL_RF_REG    128u     /* holds a registration key (priv[4..5]) */
#define FMPL_RF_DEFER  256u     /* receive: header held back since priv[3] */
#define FMPL_RF_WHOLE  512u     /* send: never split (an exchange, sendrecv.c) */
#define FMPL_RF_LATE  1024u     /* receive: its header held back, then posted */

/* fmpl_p2p_recv_start's `how` */
#define FMPL_RS_BLOCKING 1u     /* not cancellable */
#define FMPL_RS_WAITS    2u     /* the caller waits at once: may defer its header */

/* priv[0]: put completion; priv[1..2]: pending-send links, or a deferred
 * receive's polls (FMPL_RF_DEFER: the clock is read every 64th); priv[3]:
 * the time a split send finished its own part, or a deferred receive
 * started (FMPL_RF_DEFER); priv[4..5]: the key of the buffer's
 * registration while a peer may use it (FMPL_RF_REG) */
static inline double *fmpl_req_t_split(fmpl_request_t *r)
{
    return (double *)(void *)&r->priv[3];
}

static inline uint64_t *fmpl_req_polls(fmpl_request_t *r)
{
    return &r->priv[2];
}

static inline fmpl_tl_key_t *fmpl_req_key(fmpl_request_t *r)
{
    _Static_assert(sizeof(fmpl_tl_key_t) <= 2 * sizeof r->priv[0], "key fits");
    return (fmpl_tl_key_t *)(void *)&r->priv[4];
}

/* The request's buffer is no longer in any peer's hands. */
static inline void fmpl_req_dereg(fmpl_request_t *r)
{
    if (r->flags & FMPL_RF_REG) {
        r->flags &= ~FMPL_RF_REG;
        fmpl_tl_mem_dereg(&fmpl_g.tl, fmpl_req_key(r));
    }
}

static inline fmpl_tl_comp_t *fmpl_req_comp(fmpl_request_t *r)
{
    _Static_assert(sizeof(fmpl_tl_comp_t) <= sizeof r->priv, "comp fits");
    return (fmpl_tl_comp_t *)(void *)r->priv;
}

/* argument checks shared by every point-to-point call */
static inline int fmpl_p2p_check(const void *buf, size_t size, int peer, int mai)
{
    if (!fmpl_g.initialized)
        return FMPL_ERR_NOT_INIT;
    if (peer < 0 || peer >= fmpl_g.boot.size)
        return FMPL_ERR_RANK;
    if (mai < 0 || mai >= fmpl_g.user_nidx)
        return FMPL_ERR_INDEX;
    if (!buf && size)
        return FMPL_ERR_BUFFER;
    return FMPL_SUCCESS;
}

/* Unmatched isends wait on an intrusive list (priv[1] next, priv[2]
 * prev) that every FMPL call's progress walks, so that `isend; recv;
 * wait_isend` on both sides cannot deadlock.  Active large irecvs sit on
 * a list of their own, so that the receiver's half of a split message is
 * read by whichever FMPL call comes first, not only by its wait. */
static inline fmpl_request_t **fmpl_req_next(fmpl_request_t *r)
{
    return (fmpl_request_t **)(void *)&r->priv[1];
}
static inline fmpl_request_t **fmpl_req_prev(fmpl_request_t *r)
{
    return (fmpl_request_t **)(void *)&r->priv[2];
}

/* Put `r` on `*list` and mark it with `flag`. */
static inline void fmpl_req_list_add(fmpl_request_t **list, fmpl_request_t *r, unsigned flag)
{
    *fmpl_req_prev(r) = NULL;
    *fmpl_req_next(r) = *list;
    if (*list)
        *fmpl_req_prev(*list) = r;
    *list = r;
    r->flags |= flag;
}

/* Take `r` off `*list` if it carries `flag`. */
static inline void fmpl_req_list_del(fmpl_request_t **list, fmpl_request_t *r, unsigned flag)
{
    if (!(r->flags & flag))
        return;
    fmpl_request_t *n = *fmpl_req_next(r), *p = *fmpl_req_prev(r);
    if (p)
        *fmpl_req_next(p) = n;
    else
        *list = n;
    if (n)
        *fmpl_req_prev(n) = p;
    r->flags &= ~flag;
}

/* send.c */
int fmpl_p2p_early_ok(int dst, int mai, uint32_t seq, size_t size, uint64_t want);
unsigned fmpl_p2p_add_ack(fmpl_data_rec_t *rec, unsigned reclen, int dst, int mai);
int fmpl_p2p_send_progress(void);
int fmpl_p2p_send_pending(void);
void fmpl_p2p_send_forget(void);
int fmpl_p2p_issue(int dst, int mai, uint32_t seq, const void *buf, size_t size,
                   fmpl_tl_comp_t *comp, int *status, int *split, fmpl_tl_key_t *skey);
int fmpl_p2p_send_start(fmpl_request_t *req, const void *buf, size_t size, int dst, int mai);
int fmpl_p2p_send_try(fmpl_request_t *req);
void fmpl_p2p_send_queue(fmpl_request_t *req);
int fmpl_p2p_send_wait(fmpl_request_t *req);
int fmpl_p2p_send_fail(fmpl_request_t *req, int rc);

/* raw.c: point-to-point on any index, for the library's own layers
 * (collectives, halo exchange): no argument checks, no lock (the caller
 * holds it); ranks are world ranks. */
int fmpl_p2p_isend_raw(const void *buf, size_t size, int dst, int idx, fmpl_request_t *req);
int fmpl_p2p_irecv_raw(void *buf, size_t size, int src, int idx, fmpl_request_t *req);
int fmpl_p2p_waitall_raw(fmpl_request_t *reqs, int n);
int fmpl_p2p_testall_raw(fmpl_request_t *reqs, int n, int *rc);
void fmpl_p2p_failall_raw(fmpl_request_t *reqs, int n, int rc);
/* request.c: fmpl_test of a send or receive (lock held) */
int fmpl_p2p_test(fmpl_request_t *req, int *done);

/* cancel.c: the sender's half of a cancel without remote atomics */
int  fmpl_p2p_cancel_answer(int peer, int mai, uint32_t seq, uint64_t id);
int  fmpl_p2p_cancel_progress(void);
void fmpl_p2p_cancel_forget(void);
void fmpl_p2p_recv_withdraw(fmpl_request_t *req);

/* recv.c */
int fmpl_p2p_recv_start(fmpl_request_t *req, void *buf, size_t size, int src, int mai,
                        unsigned how);
int fmpl_p2p_recv_try(fmpl_request_t *req);
int fmpl_p2p_recv_wait(fmpl_request_t *req);
int fmpl_p2p_recv_fail(fmpl_request_t *req, int rc);
void fmpl_p2p_rec_taken(int peer, int mai, uint32_t seq, uint64_t w, const uint8_t *inl);
int fmpl_p2p_recv_progress(void);
int fmpl_p2p_recv_watched(void);
void fmpl_p2p_recv_forget(void);

#endif
