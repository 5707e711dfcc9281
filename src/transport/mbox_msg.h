/*
 * mbox_msg.h - a mailbox kept by messages, for the transports whose
 * network can order a message behind the RMA writes before it but not the
 * bytes of one write (libfabric, InfiniBand verbs).
 *
 * Each process keeps its mailbox area [size][nidx] slots in its own
 * memory: slot (w, i) is what writer w tells us about index i, and only
 * our own CPU writes it.  A slot is a line, and its extension when the
 * transport gives records one (transport.h): the extension lives only in
 * our memory, so a longer record costs the network one longer message,
 * not a longer mailbox that peers write into.  A peer's notification
 * arrives as a message (which slot, offset, the record); applying it
 * copies the record's bytes [8, len) into the slot and then stores the
 * first word with release order, so a reader that sees the new word sees
 * the whole record, and -
 * because the network completed the message only after the writes before
 * it - every put before it.  An RMA write of the record itself could make
 * its first word visible before the rest: neither libfabric nor the
 * InfiniBand specification orders the bytes inside one transfer.
 *
 * CAS on a word of our own lines is a CPU compare-and-swap; on our line
 * in a peer's mailbox it is a request message that the peer applies with
 * a CPU CAS there and answers.  Every change to a mailbox word is then
 * made by its owner's CPU in message order, so CASes are atomic with
 * respect to notifications (network atomics need not be atomic with
 * respect to CPU stores, and could overtake a notification still queued).
 *
 * The transport moves the messages; this file builds and applies them
 * (mbox_msg.c).  Used by src/transport/ofi and src/transport/dcfa.
 */
#ifndef FMPL_MBOX_MSG_H
#define FMPL_MBOX_MSG_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "transport/transport.h"

#define FMPL_MMSG_REC_BASE 32      /* a record inside the line */
#define FMPL_MMSG_REC_MAX (32 + FMPL_TL_EXT_MAX)   /* ... and one at offset 32
                                                      that fills the longest slot */

enum { FMPL_MMSG_NOTIFY = 1, FMPL_MMSG_CAS = 2, FMPL_MMSG_ANSWER = 3 };

/* What peers send each other: a notification, a CAS request on the
 * sender's line in our mailbox, or the answer to one of ours. */
typedef struct fmpl_mmsg {
    uint8_t kind;
    uint8_t off;                   /* NOTIFY, CAS: offset in the slot */
    uint16_t len;                  /* NOTIFY: record bytes */
    int32_t writer;                /* the sender's rank: whose line */
    uint32_t idx;                  /* NOTIFY, CAS: the line's index */
    uint32_t cookie;               /* CAS, ANSWER: which request */
    union {
        uint8_t rec[FMPL_MMSG_REC_BASE];                /* NOTIFY: a longer one
                                                           runs on (fmpl_mmsg_buf_t) */
        struct { uint64_t expect, desired; } cas;       /* CAS */
        uint64_t old;                                   /* ANSWER */
    } u;
} fmpl_mmsg_t;

#define FMPL_MMSG_HDR offsetof(fmpl_mmsg_t, u)

/* Room for any message: a notification's record may run on past
 * fmpl_mmsg_t's, up to the box's rec_max bytes. */
typedef union fmpl_mmsg_buf {
    fmpl_mmsg_t m;
    uint8_t bytes[FMPL_MMSG_HDR + FMPL_MMSG_REC_MAX];
} fmpl_mmsg_buf_t;

/* the record's bytes, which may run on past the struct in a larger buffer */
static inline uint8_t *fmpl_mmsg_rec(fmpl_mmsg_t *m) { return (uint8_t *)m + FMPL_MMSG_HDR; }

typedef struct fmpl_mmsg_box fmpl_mmsg_box_t;

/* The mailbox and our one outgoing CAS (FMPL makes one at a time). */
struct fmpl_mmsg_box {
    uint8_t *mbox;                 /* [size][nidx] slots, in ... */
    void *mem;                     /* ... this allocation */
    size_t len;
    int rank, size, nidx;
    unsigned slot;                 /* bytes a slot: the line and its extension */
    unsigned rec_max;              /* the longest record (slot - 32): the
                                      transport's max_inline */
    uint32_t cas_cookie;
    fmpl_tl_comp_t cas;            /* pending until the answer comes */
    uint64_t cas_old;
    /* send `m` (`len` bytes) to `peer` from inside apply: the answer to a
     * CAS request (the transport's progress is running) */
    int (*answer)(fmpl_mmsg_box_t *b, int peer, const fmpl_mmsg_t *m, size_t len);
    /* send a CAS request from an entry point, and make progress until
     * *pending is 0 (an error, or `peer` gone, ends it) */
    int (*request)(fmpl_mmsg_box_t *b, int peer, const fmpl_mmsg_t *m, size_t len);
    int (*wait)(fmpl_mmsg_box_t *b, volatile int *pending, int peer);
    void *ctx;                     /* the transport's */
};

/* Allocate and clear the mailbox area, slots of a line and `ext` bytes
 * after it (0, or transport.h's fmpl_tl_slot_ext). */
int  fmpl_mmsg_open(fmpl_mmsg_box_t *b, int rank, int size, int nidx, unsigned ext);
void fmpl_mmsg_close(fmpl_mmsg_box_t *b);

/* where word `off` of slot (writer, idx) sits in our mailbox */
static inline _Atomic uint64_t *fmpl_mmsg_word(const fmpl_mmsg_box_t *b, int writer, int idx,
                                               unsigned off)
{
    size_t at = ((size_t)writer * (size_t)b->nidx + (size_t)idx) * b->slot + off;
    return (_Atomic uint64_t *)(void *)(b->mbox + at);
}

/* Build in `m` the notification `rank` sends about (idx, off): its length
 * to send, or 0 when the record does not fit a slot (FMPL_ERR_ARG).
 * Every rank's box has the same slots, so what fits ours fits the
 * peer's.  (`rank` is the transport's word, not the box's: test/progs/
 * forge lies in it to prove that the receiver drops a forgery.) */
size_t fmpl_mmsg_notify(const fmpl_mmsg_box_t *b, fmpl_mmsg_buf_t *m, int rank, int idx,
                        unsigned off, const void *rec, unsigned len);
/* The same message's header alone (its first FMPL_MMSG_HDR bytes; the
 * record follows it on the wire): for a transport that sends the two
 * from where they are.  1, or 0 as above. */
int fmpl_mmsg_notify_hdr(const fmpl_mmsg_box_t *b, fmpl_mmsg_t *h, int rank, int idx,
                         unsigned off, unsigned len);

/* Build the CAS request `rank` sends about its line (idx, off) in a
 * peer's mailbox and mark our CAS pending; returns the length to send. */
size_t fmpl_mmsg_cas_request(fmpl_mmsg_box_t *b, fmpl_mmsg_t *m, int rank, int idx,
                             unsigned off, uint64_t expect, uint64_t desired);

/* Who sent a message, as the network says: a rank, or one of these. */
#define FMPL_MMSG_FROM_ANY      (-1)   /* the network cannot say: the message's
                                          own writer field is taken */
#define FMPL_MMSG_FROM_STRANGER (-2)   /* nobody of the job */

/* Apply a message of `len` bytes that came from `from` (above).  A
 * message that names a line outside the mailbox, or another writer than
 * its sender (a peer writing as another rank, or a stranger), is dropped
 * with an error message: a peer can write only its own lines. */
void fmpl_mmsg_apply(fmpl_mmsg_box_t *b, int from, const fmpl_mmsg_t *m, size_t len);

/* CAS on our own line (writer `peer`, idx, off): *res gets the old value. */
void fmpl_mmsg_cas_local(fmpl_mmsg_box_t *b, int peer, int idx, unsigned off, uint64_t expect,
                         uint64_t desired, uint64_t *res);

/* The transport's mbox_cas (transport.h): our own lines here; our line
 * at a peer there, by request (b->request, b->wait), behind every
 * notification we sent it before - also to ourselves: a direct CAS could
 * overtake our own notification still on its way. */
int  fmpl_mmsg_cas(fmpl_mmsg_box_t *b, int peer, int idx, unsigned off, int outgoing,
                   uint64_t expect, uint64_t desired, uint64_t *old);

#endif
