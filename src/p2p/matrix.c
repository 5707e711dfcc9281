/*
 * matrix.c - matrix messages (see matrix.h): the receiver posts its
 * header (and its layout when its columns are apart), the sender writes
 * every column straight into place, then the data record.  A send that
 * had to be queued is announced, so its receiver can pull it instead.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "p2p/progress.h"
#include "p2p/matrix.h"
#include "p2p/p2p.h"

/* The LAYOUT record a strided receive writes on the AUX index. */
typedef struct mx_layout {
    uint64_t word;                 /* seq << 32 | 1 */
    uint64_t ld;                   /* bytes between columns */
} mx_layout_t;

/* The ANNOUNCE record of a queued send: where its packed copy is.  Send
 * `seq` uses slot (seq - 1) % MX_NSLOT, so the oldest MX_NSLOT queued
 * sends of a pair are announced at once (pdgetrf on a 1 x 2 grid queues
 * up to 4).  Slot 0 is the data half of the layout line, the others fill
 * the next auxiliary lines two by two.  MX_NSLOT divides 2^32 - 1, the
 * period of sequence numbers (which skip 0), so slots stay distinct
 * across the wrap. */
typedef struct mx_ann {
    uint64_t word;                 /* seq << 32 | MX_ANN */
    uint64_t size;                 /* bytes | shape tag << FMPL_HDR_SIZE_BITS */
    fmpl_tl_key_t key;
} mx_ann_t;
_Static_assert(sizeof(mx_ann_t) == 32, "an announcement is half a line");
#define MX_NSLOT (2 * FMPL_MX_NAUX - 1)
_Static_assert(UINT32_MAX % MX_NSLOT == 0, "slots survive the sequence wrap");
#define MX_ANN   0xa5u
/* pull column by column (one get each) when columns are at least this
 * long, else into a scratch copy and unpack: a get costs a system call */
#define MX_PULL_COL_MIN 4096
/* A general matrix whose columns are shorter than this (a row of a
 * column-major array, say) goes as one run of bytes: its sender packs,
 * its receiver takes it into a scratch copy and unpacks.  A put per
 * column pays the transport's start-up every time (a work request, an
 * emulated NIA's microseconds): ScaLAPACK's row swaps in pdgetrf on a
 * 2 x 1 grid of the emulated SR8000 took 1.09 s for N = 1000 so, against
 * 17 ms on 1 x 2.  Each side decides from its own shape. */
#define MX_PACK_COL_MAX 256

static inline uint64_t ann_word(uint32_t seq) { return (uint64_t)seq << 32 | MX_ANN; }
static inline unsigned ann_slot(uint32_t seq) { return (seq - 1) % MX_NSLOT; }
static inline int ann_index(int aux, uint32_t seq) { return aux + (int)(ann_slot(seq) + 1) / 2; }
static inline unsigned ann_off(uint32_t seq) { return ann_slot(seq) % 2 ? 0 : 32; }

/* One send: on the caller's stack while it waits, on the queue once its
 * data has been packed aside.  Only the oldest queued send of a (peer,
 * index) can meet its receive, so the queue is a list of those heads,
 * each with the later sends of its pair behind it: progress looks at one
 * send per pair, however many are queued. */
typedef struct mx_op {
    struct mx_op *next;            /* next head */
    struct mx_op *later, *last;    /* same (peer, idx): FIFO; `last` in heads */
    int peer, idx, aux;
    uint32_t seq;
    const unsigned char *a;        /* the user's matrix, or the packed copy */
    fmpl_mshape_t s;
    int packed;                    /* `a` holds s's elements back to back */
    int issued;                    /* data on its way: wait for comp */
    int plain;                     /* both sides contiguous: `req` does it */
    int announced;                 /* the receiver may pull it: claim first */
    int claimed;                   /* we won the claim (or the pull failed) */
    int posted_m;                  /* ... on a strided receive */
    int status;
    fmpl_tl_comp_t comp;
    /* set when used (announced, plain), not before: see fmpl_mx_send */
    fmpl_tl_key_t ann_key;         /* the announced copy's registration */
    fmpl_request_t req;
} mx_op_t;

static mx_op_t *heads;

/* A queued send leaves: nobody reads its packed copy any more, and puts
 * still on their way (a send dropped by fmpl_mx_forget) must not count
 * down in freed memory. */
static void op_free(mx_op_t *o)
{
    fmpl_tl_forget(&fmpl_g.tl, &o->comp);
    fmpl_tl_forget(&fmpl_g.tl, fmpl_req_comp(&o->req));
    if (o->announced)
        fmpl_tl_mem_dereg(&fmpl_g.tl, &o->ann_key);
    free(o);
}

int fmpl_mx_pending(void) { return heads != NULL; }

void fmpl_mx_forget(void)
{
    while (heads) {
        mx_op_t *h = heads;
        heads = h->next;
        while (h) {
            mx_op_t *l = h->later;
            op_free(h);
            h = l;
        }
    }
}

static size_t nbytes(const fmpl_mshape_t *s) { return s->count * s->esize; }

/* Write every element into the receiver's matrix at `key`, columns
 * `dld` bytes apart; the data record goes out after (ordered). */
static int put_cols(mx_op_t *o, const fmpl_tl_key_t *key, uint64_t dld)
{
    fmpl_tl_t *tl = &fmpl_g.tl;
    const fmpl_mshape_t *s = &o->s;
    size_t es = s->esize;
    if (s->uplo == 'G') {
        size_t sld = o->packed ? s->m * es : s->ld * es;
        return fmpl_tl_put_strided(tl, o->peer, o->a, s->m * es, s->n, sld, key, 0, dld,
                                   &o->comp);
    }
    /* a trapezoid: one piece per column, in batches */
    enum { BATCH = 32 };
    fmpl_tl_iov_t iov[BATCH];
    int k = 0;
    size_t at = 0;
    for (size_t j = 0; j < s->n; j++) {
        size_t lo, hi;
        fmpl_mshape_col(s, j, &lo, &hi);
        size_t len = (hi - lo) * es;
        if (!len)
            continue;
        const unsigned char *src = o->packed ? o->a + at : o->a + (j * s->ld + lo) * es;
        iov[k++] = (fmpl_tl_iov_t){ .src = src, .len = len, .roff = j * dld + lo * es };
        at += len;
        if (k == BATCH) {
            int rc = fmpl_tl_put_iov(tl, o->peer, iov, k, key, &o->comp);
            if (rc != FMPL_SUCCESS)
                return rc;
            k = 0;
        }
    }
    return k ? fmpl_tl_put_iov(tl, o->peer, iov, k, key, &o->comp) : FMPL_SUCCESS;
}

/* The data record: OK (with inline bytes) or an error the receiver reports. */
static int finish(mx_op_t *o, int status, const void *inl, unsigned len)
{
    fmpl_data_rec_t rec;
    unsigned reclen = 8;
    if (status == FMPL_SUCCESS) {
        rec.word = fmpl_data_word(o->seq, FMPL_DST_OK, inl ? FMPL_DFLAG_INLINE : 0, len);
        if (len)
            memcpy(rec.inl, inl, len);
        reclen += len;
    } else {
        int32_t e = status;
        rec.word = fmpl_data_word(o->seq, FMPL_DST_ERROR, 0, 0);
        memcpy(rec.inl, &e, sizeof e);
        reclen += sizeof e;
    }
    o->status = status;
    o->issued = 1;
    reclen = fmpl_p2p_add_ack(&rec, reclen, o->peer, o->idx);
    int rc = fmpl_tl_notify(&fmpl_g.tl, o->peer, o->idx, FMPL_DATA_OFF, &rec, reclen, 0,
                            &o->comp);
    if (rc != FMPL_SUCCESS && o->status == FMPL_SUCCESS)
        o->status = rc;
    return 0;
}

/* An early send (p2p.h) of a small matrix, packed into the record with
 * its shape tag, when the receiver's last receive here had exactly our
 * shape: the receiver checks the tag.  1 if it went. */
static int early_send(mx_op_t *o)
{
    size_t bytes = nbytes(&o->s);
    uint64_t tag = fmpl_mshape_tag(&o->s);
    if (bytes > FMPL_MX_EARLY_MAX ||
        !fmpl_p2p_early_ok(o->peer, o->idx, o->seq, bytes, bytes | tag << FMPL_HDR_SIZE_BITS))
        return 0;
    fmpl_data_rec_t rec;
    rec.word = fmpl_data_word(o->seq, FMPL_DST_OK,
                              FMPL_DFLAG_INLINE | FMPL_DFLAG_EARLY | FMPL_DFLAG_TAG,
                              (unsigned)bytes);
    if (o->packed || fmpl_mshape_contig(&o->s))
        memcpy(rec.inl, o->a, bytes);
    else
        fmpl_mshape_pack(&o->s, o->a, rec.inl);
    uint32_t t = (uint32_t)tag;
    memcpy(rec.inl + FMPL_TAG_OFF, &t, sizeof t);
    unsigned reclen = fmpl_p2p_add_ack(&rec, 8 + FMPL_TAG_OFF + sizeof t, o->peer, o->idx);
    o->status = FMPL_SUCCESS;
    o->issued = 1;
    int rc = fmpl_tl_notify(&fmpl_g.tl, o->peer, o->idx, FMPL_DATA_OFF, &rec, reclen, 0,
                            &o->comp);
    if (rc != FMPL_SUCCESS)
        o->status = rc;
    return 1;
}

/* Write the message into the receive the header describes (we own it:
 * it is ours alone, or we claimed it); `posted_m`: its layout record
 * waits on the AUX index.  0 while that record is still on its way. */
static int push(mx_op_t *o, volatile uint8_t *line, int posted_m)
{
    fmpl_tl_t *tl = &fmpl_g.tl;
    const fmpl_hdr_rec_t *h = (const fmpl_hdr_rec_t *)(const void *)(line + FMPL_HDR_OFF);
    uint64_t hsize = h->size;
    fmpl_tl_key_t key = h->key;
    size_t bytes = nbytes(&o->s);
    if (hsize >> FMPL_HDR_SIZE_BITS != fmpl_mshape_tag(&o->s) ||
        (hsize & FMPL_HDR_SIZE_MASK) != bytes)
        return finish(o, FMPL_ERR_SHAPE, NULL, 0);
    if (bytes <= FMPL_INLINE_MAX) {
        unsigned char tmp[FMPL_INLINE_MAX];
        if (o->packed)
            memcpy(tmp, o->a, bytes);
        else
            fmpl_mshape_pack(&o->s, o->a, tmp);
        return finish(o, FMPL_SUCCESS, tmp, (unsigned)bytes);
    }
    uint64_t dld = o->s.m * o->s.esize;
    if (posted_m) {
        volatile uint8_t *al = fmpl_tl_mbox_in(tl, o->peer, o->aux);
        uint64_t aw = fmpl_line_word(al, FMPL_HDR_OFF);
        if ((uint32_t)(aw >> 32) != o->seq)
            return 0;              /* its layout is still on the way */
        dld = ((const mx_layout_t *)(const void *)(al + FMPL_HDR_OFF))->ld;
    }
    return finish(o, put_cols(o, &key, dld), NULL, 0);
}

/* An announced send: the receiver and we race for its posted header by
 * CAS.  It wins (READING): it copies, then answers READ_DONE, or
 * READ_FAIL and we write after all.  We win (CLAIMED): we write. */
static int announced_try(mx_op_t *o, volatile uint8_t *line, uint64_t w)
{
    fmpl_tl_t *tl = &fmpl_g.tl;
    unsigned state = (unsigned)(w & 0xff);
    if (!o->claimed) {
        if (state == FMPL_HDR_READ_DONE) {
            o->status = FMPL_SUCCESS;
            return 1;
        }
        if (state == FMPL_HDR_POSTED || state == FMPL_HDR_POSTED_M) {
            if (fmpl_tl_mbox_cas(tl, o->peer, o->idx, FMPL_HDR_OFF, 0, w,
                                 fmpl_hdr_word(o->seq, FMPL_HDR_CLAIMED), NULL) != FMPL_SUCCESS)
                return 0;          /* the receiver was first: look again */
            o->posted_m = state == FMPL_HDR_POSTED_M;
        } else if (state == FMPL_HDR_READ_FAIL) {
            /* it could not read; was its receive strided? */
            volatile uint8_t *al = fmpl_tl_mbox_in(tl, o->peer, o->aux);
            o->posted_m = (uint32_t)(fmpl_line_word(al, FMPL_HDR_OFF) >> 32) == o->seq;
        } else {
            return 0;              /* READING */
        }
        o->claimed = 1;
    }
    return push(o, line, o->posted_m);
}

/* 1 once the send is complete (o->status final), 0 while it waits. */
static int mx_try(mx_op_t *o)
{
    if (o->plain) {
        if (!fmpl_p2p_send_try(&o->req))
            return 0;
        o->status = o->req.status;
        return 1;
    }
    if (o->issued) {
        if (fmpl_tl_comp_pending(&o->comp))
            return 0;
        if (o->status == FMPL_SUCCESS && o->comp.status != FMPL_SUCCESS)
            o->status = fmpl_put_status(o->peer, o->comp.status);   /* failed on its way */
        return 1;
    }
    volatile uint8_t *line = fmpl_tl_mbox_in(&fmpl_g.tl, o->peer, o->idx);
    uint64_t w = fmpl_line_word(line, FMPL_HDR_OFF);
    uint32_t hseq = (uint32_t)(w >> 32);
    if (o->announced && !o->claimed && (int32_t)(hseq - o->seq) > 0) {
        /* the receiver pulled it and has posted its next receive over
         * the READ_DONE we did not see (it cannot pass a receive we
         * claimed, or whose read failed, before we write it) */
        o->status = FMPL_SUCCESS;
        return 1;
    }
    if (hseq != o->seq)
        return !o->announced && early_send(o) ? mx_try(o) : 0;
    if (o->announced)
        return announced_try(o, line, w);
    unsigned state = (unsigned)(w & 0xff);
    if (state != FMPL_HDR_POSTED && state != FMPL_HDR_POSTED_M)
        return 0;
    size_t bytes = nbytes(&o->s);
    if (state == FMPL_HDR_POSTED && bytes > FMPL_INLINE_MAX &&
        (o->packed || fmpl_mshape_contig(&o->s))) {
        const fmpl_hdr_rec_t *h = (const fmpl_hdr_rec_t *)(const void *)(line + FMPL_HDR_OFF);
        if (h->size >> FMPL_HDR_SIZE_BITS == fmpl_mshape_tag(&o->s) &&
            (h->size & FMPL_HDR_SIZE_MASK) == bytes) {
            /* both contiguous: the plain protocol, split copies and all */
            o->req = (fmpl_request_t){ .kind = FMPL_REQ_SEND, .peer = o->peer, .mai = o->idx,
                                       .seq = o->seq, .buf = (void *)o->a, .size = bytes };
            o->plain = 1;
            return mx_try(o);
        }
    }
    return push(o, line, state == FMPL_HDR_POSTED_M);
}

/* Tell the receiver where queued send `o` waits, so that it can pull it
 * without us (we may be computing, or blocked outside FMPL). */
static void announce(mx_op_t *o)
{
    fmpl_tl_t *tl = &fmpl_g.tl;
    if (o->announced || o->issued || o->plain || !fmpl_split_ok(tl))
        return;
    mx_ann_t ann = { .word = ann_word(o->seq),
                     .size = nbytes(&o->s) | fmpl_mshape_tag(&o->s) << FMPL_HDR_SIZE_BITS };
    if (fmpl_tl_mem_reg(tl, (void *)o->a, nbytes(&o->s), &ann.key) != FMPL_SUCCESS)
        return;
    if (fmpl_tl_notify(tl, o->peer, ann_index(o->aux, o->seq), ann_off(o->seq), &ann,
                       sizeof ann, FMPL_TL_NOTIFY_UNORDERED, NULL) == FMPL_SUCCESS) {
        o->announced = 1;
        o->ann_key = ann.key;
    } else {
        fmpl_tl_mem_dereg(tl, &ann.key);
    }
}

/* Announce the oldest MX_NSLOT sends of a pair: the older ones are done,
 * so their slots are free. */
static void announce_pair(mx_op_t *head)
{
    mx_op_t *o = head;
    for (int i = 0; o && i < MX_NSLOT; i++, o = o->later)
        announce(o);
}

/* Copy a send that found no receive aside and queue it; its caller may
 * reuse the matrix at once. */
static int queue(const mx_op_t *o)
{
    size_t bytes = nbytes(&o->s);
    mx_op_t *q = malloc(sizeof *q + bytes);
    if (!q)
        return FMPL_ERR_NOMEM;
    *q = *o;
    unsigned char *copy = (unsigned char *)(q + 1);
    if (o->packed)
        memcpy(copy, o->a, bytes);
    else
        fmpl_mshape_pack(&o->s, o->a, copy);
    fmpl_tl_work(&fmpl_g.tl, FMPL_TL_WORK_COPY, bytes);
    q->a = copy;
    q->packed = 1;
    q->next = q->later = NULL;
    q->last = q;
    mx_op_t **pp = &heads;
    for (; *pp; pp = &(*pp)->next)
        if ((*pp)->peer == q->peer && (*pp)->idx == q->idx) {
            (*pp)->last->later = q;
            (*pp)->last = q;
            announce_pair(*pp);
            return FMPL_SUCCESS;
        }
    *pp = q;
    announce(q);
    return FMPL_SUCCESS;
}

int fmpl_mx_progress(void)
{
    int n = 0;
    for (mx_op_t **pp = &heads; *pp;) {
        mx_op_t *o = *pp;
        if (!mx_try(o)) {
            pp = &o->next;
            continue;
        }
        if (o->status != FMPL_SUCCESS)
            fmpl_log_err("a queued matrix message to rank %d failed: %s", o->peer,
                         fmpl_strerror(o->status));
        /* the pair's next send becomes its head (its receive comes later) */
        mx_op_t *l = o->later;
        if (l) {
            l->last = o->last;
            l->next = o->next;
            *pp = l;
            pp = &l->next;
            announce_pair(l);
        } else {
            *pp = o->next;
        }
        op_free(o);
        n++;
    }
    return n;
}

int fmpl_mx_stalled(void)
{
    for (const mx_op_t *h = heads; h; h = h->next)
        for (const mx_op_t *o = h; o; o = o->later)
            if (!o->announced && !o->issued && !o->plain)
                return 1;
    return 0;
}

int fmpl_mx_drain(void)
{
    fmpl_wait_t w;
    fmpl_wait_init(&w, heads ? heads->peer : -1);
    while (heads) {
        int rc = fmpl_progress() ? FMPL_SUCCESS : fmpl_wait_idle(&w);
        if (rc != FMPL_SUCCESS)
            return rc;
    }
    return FMPL_SUCCESS;
}

static int short_cols(const fmpl_mshape_t *s)
{
    return s->uplo == 'G' && !fmpl_mshape_contig(s) && s->m * s->esize < MX_PACK_COL_MAX &&
           nbytes(s) > FMPL_INLINE_MAX;
}

/* s as one run of bytes: the same tag (ld is not in it) */
static fmpl_mshape_t packed_shape(const fmpl_mshape_t *s)
{
    fmpl_mshape_t c = *s;
    c.ld = s->m;
    return c;
}

/* Once fmpl_mx_send returns, its data is delivered or in a queued copy of
 * its own (queue()), so the packed copy may go. */
static int send_packed(const void *a, const fmpl_mshape_t *s, int peer, int idx, int aux)
{
    fmpl_mshape_t c = packed_shape(s);
    void *tmp = malloc(nbytes(s));
    if (!tmp)
        return FMPL_ERR_NOMEM;
    fmpl_mshape_pack(s, a, tmp);
    fmpl_tl_work(&fmpl_g.tl, FMPL_TL_WORK_COPY, nbytes(s));
    int rc = fmpl_mx_send(tmp, &c, peer, idx, aux);
    free(tmp);
    return rc;
}

int fmpl_mx_send(const void *a, const fmpl_mshape_t *s, int peer, int idx, int aux)
{
    if (short_cols(s))
        return send_packed(a, s, peer, idx, aux);
    fmpl_slot_t *sl = fmpl_slot(peer, idx);
    /* zero all but the tail that is set when used: clearing the whole op
     * (300 bytes, rep stos) was over a third of the time a small send
     * spent in this function */
    mx_op_t o;
    memset(&o, 0, offsetof(mx_op_t, ann_key));
    o.peer = peer;
    o.idx = idx;
    o.aux = aux;
    o.a = a;
    o.s = *s;
    o.seq = sl->send_seq = fmpl_seq_next(sl->send_seq);
    if (mx_try(&o))
        return o.status;
    /* Wait about as long as packing would take (a copy at ~4 GB/s), then
     * pack: never more than twice the best choice in hindsight. */
    double grace = 2e-6 + (double)nbytes(s) * 0.25e-9, t0 = 0;
    int timed = 0;
    fmpl_wait_t w;
    fmpl_wait_init(&w, peer);
    for (unsigned i = 0;; i++) {
        int n = fmpl_progress();
        if (mx_try(&o))
            return o.status;
        /* the clock only after a few polls: most receives are there (an
         * emulated clock moves only when we wait: look at once, and tell
         * the wait when we give up) */
        if (!o.issued && !o.plain && (i % 16 == 15 || fmpl_g.tl.clock)) {
            double now = fmpl_wtime();
            if (!timed) {
                timed = 1;
                t0 = now;
                fmpl_wait_deadline(&w, t0 + grace);
            } else if (now - t0 >= grace) {
                return queue(&o);
            }
        }
        int rc = n ? FMPL_SUCCESS : fmpl_wait_idle(&w);
        if (rc != FMPL_SUCCESS) {
            if (!o.issued && !o.plain)   /* never matched: give its number back */
                sl->send_seq = o.seq - 1 ? o.seq - 1 : UINT32_MAX;
            return rc;
        }
    }
}

/* a strided receive's completion: the data is in place or inline */
static int strided_try(volatile uint8_t *line, int peer, int idx, uint32_t seq,
                       const fmpl_mshape_t *s, void *a, int *status)
{
    uint64_t w = fmpl_line_word(line, FMPL_DATA_OFF);
    if ((uint32_t)(w >> 32) != seq)
        return 0;
    const uint8_t *inl = (const uint8_t *)line + FMPL_DATA_OFF + 8, *data;
    size_t n;
    if (((w >> 16) & 0xff) == FMPL_DST_OK) {
        *status = FMPL_SUCCESS;
        if (!(w & (FMPL_DFLAG_INLINE << 8))) {
            /* the sender wrote the columns */
        } else if ((data = fmpl_rec_inline(line, w, &n)) && n == nbytes(s)) {
            fmpl_mshape_unpack(s, data, a);
        } else {
            /* no correct sender inlines another size than ours (recv.c:
             * a broken peer's record ends the receive, and never makes
             * us read past the record) */
            fmpl_log_err("rank %d broke the protocol on index %d (inline matrix of %u "
                         "bytes for %zu, record %#llx): receive ended with an error", peer,
                         idx, fmpl_data_len(w), nbytes(s), (unsigned long long)w);
            *status = FMPL_ERR_INTERNAL;
        }
    } else {
        int32_t e;
        memcpy(&e, inl, sizeof e);
        *status = e < 0 ? e : FMPL_ERR_INTERNAL;
    }
    fmpl_p2p_rec_taken(peer, idx, seq, w, inl);
    return 1;
}

/* An early send of another shape than ours (the sender checked our
 * previous receive only): take it as FMPL_ERR_SHAPE, our matrix untouched. */
static int early_mismatch(volatile uint8_t *line, int peer, int idx, uint32_t seq,
                          const fmpl_mshape_t *s)
{
    uint64_t w = fmpl_line_word(line, FMPL_DATA_OFF);
    if ((uint32_t)(w >> 32) != seq || !(w & (FMPL_DFLAG_TAG << 8)))
        return 0;
    const uint8_t *inl = (const uint8_t *)line + FMPL_DATA_OFF + 8;
    uint32_t tag;
    memcpy(&tag, inl + FMPL_TAG_OFF, sizeof tag);
    if (tag == (uint32_t)fmpl_mshape_tag(s) && (w & 0xff) == nbytes(s))
        return 0;
    fmpl_p2p_rec_taken(peer, idx, seq, w, inl);
    return 1;
}

/* Copy the sender's packed copy at `key` into our matrix. */
static int pull_data(void *a, const fmpl_mshape_t *s, int peer, const fmpl_tl_key_t *key)
{
    fmpl_tl_t *tl = &fmpl_g.tl;
    size_t bytes = nbytes(s), es = s->esize;
    if (fmpl_mshape_contig(s))
        return fmpl_tl_get(tl, peer, a, bytes, key, 0);
    size_t cols = 0;
    for (size_t j = 0; j < s->n; j++) {
        size_t lo, hi;
        fmpl_mshape_col(s, j, &lo, &hi);
        cols += hi > lo;
    }
    if (bytes / (cols ? cols : 1) < MX_PULL_COL_MIN) {
        unsigned char *tmp = malloc(bytes);
        if (!tmp)
            return FMPL_ERR_NOMEM;
        int rc = fmpl_tl_get(tl, peer, tmp, bytes, key, 0);
        if (rc == FMPL_SUCCESS)
            fmpl_mshape_unpack(s, tmp, a);
        free(tmp);
        return rc;
    }
    uint64_t at = 0;
    for (size_t j = 0; j < s->n; j++) {
        size_t lo, hi;
        fmpl_mshape_col(s, j, &lo, &hi);
        size_t len = (hi - lo) * es;
        int rc = fmpl_tl_get(tl, peer, (unsigned char *)a + (j * s->ld + lo) * es, len, key, at);
        if (rc != FMPL_SUCCESS)
            return rc;
        at += len;
    }
    return FMPL_SUCCESS;
}

/* Pull message `seq` if its sender announced it (it sits in the sender's
 * queue): claim our own header (`posted` -> READING) against the sender,
 * read, answer.  1 when the message is here. */
static int try_pull(void *a, const fmpl_mshape_t *s, int peer, int idx, int aux, uint32_t seq,
                    unsigned posted)
{
    fmpl_tl_t *tl = &fmpl_g.tl;
    volatile uint8_t *al = fmpl_tl_mbox_in(tl, peer, ann_index(aux, seq));
    unsigned off = ann_off(seq);
    uint64_t w = fmpl_line_word(al, off);
    if (w != ann_word(seq))
        return 0;
    mx_ann_t ann;
    memcpy(&ann, (const void *)(al + off), sizeof ann);
    if (ann.size != (nbytes(s) | fmpl_mshape_tag(s) << FMPL_HDR_SIZE_BITS))
        return 0;                  /* the sender will report the mismatch */
    if (fmpl_tl_mbox_cas(tl, peer, idx, FMPL_HDR_OFF, 1, fmpl_hdr_word(seq, posted),
                         fmpl_hdr_word(seq, FMPL_HDR_READING), NULL) != FMPL_SUCCESS)
        return 0;                  /* the sender claimed it: it writes */
    int rc = pull_data(a, s, peer, &ann.key);
    uint64_t ans = fmpl_hdr_word(seq, rc == FMPL_SUCCESS ? FMPL_HDR_READ_DONE
                                                         : FMPL_HDR_READ_FAIL);
    fmpl_tl_notify(tl, peer, idx, FMPL_HDR_OFF, &ans, sizeof ans, FMPL_TL_NOTIFY_UNORDERED,
                   NULL);
    return rc == FMPL_SUCCESS;     /* else the sender writes after all */
}

/* The receive with its header `h` (the key of `a` in it when needed). */
static int mx_recv_posted(void *a, const fmpl_mshape_t *s, int peer, int idx, int aux,
                          fmpl_hdr_rec_t h)
{
    fmpl_tl_t *tl = &fmpl_g.tl;
    fmpl_slot_t *sl = fmpl_slot(peer, idx);
    size_t bytes = nbytes(s);
    uint32_t seq = fmpl_seq_next(sl->recv_seq);
    int contig = fmpl_mshape_contig(s), rc;
    unsigned state = FMPL_HDR_POSTED;
    volatile uint8_t *line = fmpl_tl_mbox_in(tl, peer, idx);
    /* an early send (p2p.h) may be here already: then no header */
    if ((uint32_t)(fmpl_line_word(line, FMPL_DATA_OFF) >> 32) != seq) {
        if (!contig && bytes > FMPL_INLINE_MAX) {
            mx_layout_t lay = { .word = (uint64_t)seq << 32 | 1, .ld = s->ld * s->esize };
            rc = fmpl_tl_notify(tl, peer, aux, FMPL_HDR_OFF, &lay, sizeof lay,
                                FMPL_TL_NOTIFY_UNORDERED, NULL);
            if (rc != FMPL_SUCCESS)
                return rc;
            state = FMPL_HDR_POSTED_M;
        }
        h.word = fmpl_hdr_word(seq, state);
        rc = fmpl_tl_notify(tl, peer, idx, FMPL_HDR_OFF, &h, sizeof h,
                            FMPL_TL_NOTIFY_UNORDERED, NULL);
        if (rc != FMPL_SUCCESS)
            return rc;
    }
    sl->recv_seq = seq;

    /* contiguous: the plain receive (inline copies, split reads) */
    fmpl_request_t req = { .kind = FMPL_REQ_RECV, .peer = peer, .mai = idx, .seq = seq,
                           .buf = a, .size = bytes, .flags = FMPL_RF_BLOCKING };
    fmpl_wait_t w;
    fmpl_wait_init(&w, peer);
    /* a pull only helps when the sender is away: look now and then, off
     * the path of a receive whose send comes at once */
    unsigned pull = fmpl_split_ok(tl) ? 31 : 0;
    for (unsigned i = 1;; i++) {
        if (early_mismatch(line, peer, idx, seq, s))
            return FMPL_ERR_SHAPE;
        int status, done = contig ? fmpl_p2p_recv_try(&req)
                                  : strided_try(line, peer, idx, seq, s, a, &status);
        if (done)
            return contig ? req.status : status;
        if (pull && (i & pull) == pull && try_pull(a, s, peer, idx, aux, seq, state))
            return FMPL_SUCCESS;
        int n = fmpl_progress();
        rc = n ? FMPL_SUCCESS : fmpl_wait_idle(&w);
        if (rc != FMPL_SUCCESS)
            return rc;
    }
}

static int recv_packed(void *a, const fmpl_mshape_t *s, int peer, int idx, int aux)
{
    fmpl_mshape_t c = packed_shape(s);
    void *tmp = malloc(nbytes(s));
    if (!tmp)
        return FMPL_ERR_NOMEM;
    int rc = fmpl_mx_recv(tmp, &c, peer, idx, aux);
    if (rc == FMPL_SUCCESS) {
        fmpl_mshape_unpack(s, tmp, a);
        fmpl_tl_work(&fmpl_g.tl, FMPL_TL_WORK_COPY, nbytes(s));
    }
    free(tmp);
    return rc;
}

int fmpl_mx_recv(void *a, const fmpl_mshape_t *s, int peer, int idx, int aux)
{
    if (short_cols(s))
        return recv_packed(a, s, peer, idx, aux);
    fmpl_tl_t *tl = &fmpl_g.tl;
    size_t bytes = nbytes(s);
    fmpl_hdr_rec_t h = { .size = bytes | fmpl_mshape_tag(s) << FMPL_HDR_SIZE_BITS };
    if (bytes <= FMPL_INLINE_MAX)
        return mx_recv_posted(a, s, peer, idx, aux, h);
    int rc = fmpl_tl_mem_reg(tl, a, fmpl_mshape_extent(s), &h.key);
    if (rc != FMPL_SUCCESS)
        return rc;
    /* once it returns, the sender has written or we have read: the
     * message is here, or failed, or the peer is gone */
    rc = mx_recv_posted(a, s, peer, idx, aux, h);
    fmpl_tl_mem_dereg(tl, &h.key);
    return rc;
}
