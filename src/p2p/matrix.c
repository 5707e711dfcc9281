/*
 * matrix.c - matrix messages (see matrix.h): the receiver posts its
 * header (and its layout when its columns are apart), the sender writes
 * every column straight into place, then the data record.
 */
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "core/progress.h"
#include "p2p/matrix.h"
#include "p2p/p2p.h"

/* The LAYOUT record a strided receive writes on the AUX index. */
typedef struct mx_layout {
    uint64_t word;                 /* seq << 32 | 1 */
    uint64_t ld;                   /* bytes between columns */
} mx_layout_t;

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
    int status;
    fmpl_tl_comp_t comp;
    fmpl_request_t req;
} mx_op_t;

static mx_op_t *heads;

int fmpl_mx_pending(void) { return heads != NULL; }

void fmpl_mx_forget(void)
{
    while (heads) {
        mx_op_t *h = heads;
        heads = h->next;
        while (h) {
            mx_op_t *l = h->later;
            free(h);
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
        return tl->ops->put_strided(tl, o->peer, o->a, s->m * es, s->n, sld, key, 0, dld,
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
            int rc = tl->ops->put_iov(tl, o->peer, iov, k, key, &o->comp);
            if (rc != FMPL_SUCCESS)
                return rc;
            k = 0;
        }
    }
    return k ? tl->ops->put_iov(tl, o->peer, iov, k, key, &o->comp) : FMPL_SUCCESS;
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
    int rc = fmpl_tl_notify(&fmpl_g.tl, o->peer, o->idx, FMPL_DATA_OFF, &rec, reclen, 0,
                            &o->comp);
    if (rc != FMPL_SUCCESS && o->status == FMPL_SUCCESS)
        o->status = rc;
    return 0;
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
    if (o->issued)
        return !o->comp.pending;
    fmpl_tl_t *tl = &fmpl_g.tl;
    volatile uint8_t *line = fmpl_tl_mbox_in(tl, o->peer, o->idx);
    uint64_t w = fmpl_line_word(line, FMPL_HDR_OFF);
    unsigned state = (unsigned)(w & 0xff);
    if ((uint32_t)(w >> 32) != o->seq || (state != FMPL_HDR_POSTED && state != FMPL_HDR_POSTED_M))
        return 0;
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
    int src_contig = o->packed || fmpl_mshape_contig(&o->s);
    if (state == FMPL_HDR_POSTED && src_contig) {
        /* both contiguous: the plain protocol, split copies and all */
        o->req = (fmpl_request_t){ .kind = FMPL_REQ_SEND, .peer = o->peer, .mai = o->idx,
                                   .seq = o->seq, .buf = (void *)o->a, .size = bytes };
        o->plain = 1;
        return mx_try(o);
    }
    uint64_t dld = o->s.m * o->s.esize;
    if (state == FMPL_HDR_POSTED_M) {
        volatile uint8_t *al = fmpl_tl_mbox_in(tl, o->peer, o->aux);
        uint64_t aw = fmpl_line_word(al, FMPL_HDR_OFF);
        if ((uint32_t)(aw >> 32) != o->seq)
            return 0;              /* its layout is still on the way */
        dld = ((const mx_layout_t *)(const void *)(al + FMPL_HDR_OFF))->ld;
    }
    return finish(o, put_cols(o, &key, dld), NULL, 0);
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
    q->a = copy;
    q->packed = 1;
    q->next = q->later = NULL;
    q->last = q;
    mx_op_t **pp = &heads;
    for (; *pp; pp = &(*pp)->next)
        if ((*pp)->peer == q->peer && (*pp)->idx == q->idx) {
            (*pp)->last->later = q;
            (*pp)->last = q;
            return FMPL_SUCCESS;
        }
    *pp = q;
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
        } else {
            *pp = o->next;
        }
        free(o);
        n++;
    }
    return n;
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

int fmpl_mx_send(const void *a, const fmpl_mshape_t *s, int peer, int idx, int aux)
{
    fmpl_slot_t *sl = fmpl_slot(peer, idx);
    mx_op_t o = { .peer = peer, .idx = idx, .aux = aux, .a = a, .s = *s };
    o.seq = sl->send_seq = fmpl_seq_next(sl->send_seq);
    if (mx_try(&o))
        return o.status;
    /* Wait about as long as packing would take (a copy at ~4 GB/s), then
     * pack: never more than twice the best choice in hindsight. */
    double grace = 2e-6 + (double)nbytes(s) * 0.25e-9, t0 = 0;
    fmpl_wait_t w;
    fmpl_wait_init(&w, peer);
    for (unsigned i = 0;; i++) {
        int n = fmpl_progress();
        if (mx_try(&o))
            return o.status;
        /* the clock only after a few polls: most receives are there */
        if (!o.issued && !o.plain && i % 16 == 15) {
            double now = fmpl_wtime();
            if (t0 == 0)
                t0 = now;
            else if (now - t0 >= grace)
                return queue(&o);
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
static int strided_try(volatile uint8_t *line, uint32_t seq, const fmpl_mshape_t *s, void *a,
                       int *status)
{
    uint64_t w = fmpl_line_word(line, FMPL_DATA_OFF);
    if ((uint32_t)(w >> 32) != seq)
        return 0;
    const uint8_t *inl = (const uint8_t *)line + FMPL_DATA_OFF + 8;
    if (((w >> 16) & 0xff) == FMPL_DST_OK) {
        if (w & (FMPL_DFLAG_INLINE << 8))
            fmpl_mshape_unpack(s, inl, a);
        *status = FMPL_SUCCESS;
    } else {
        int32_t e;
        memcpy(&e, inl, sizeof e);
        *status = e < 0 ? e : FMPL_ERR_INTERNAL;
    }
    return 1;
}

int fmpl_mx_recv(void *a, const fmpl_mshape_t *s, int peer, int idx, int aux)
{
    fmpl_tl_t *tl = &fmpl_g.tl;
    fmpl_slot_t *sl = fmpl_slot(peer, idx);
    size_t bytes = nbytes(s);
    uint32_t seq = fmpl_seq_next(sl->recv_seq);
    fmpl_hdr_rec_t h = { .size = bytes | fmpl_mshape_tag(s) << FMPL_HDR_SIZE_BITS };
    int contig = fmpl_mshape_contig(s), rc;
    if (bytes > FMPL_INLINE_MAX) {
        rc = fmpl_tl_mem_reg(tl, a, fmpl_mshape_extent(s), &h.key);
        if (rc != FMPL_SUCCESS)
            return rc;
    }
    unsigned state = FMPL_HDR_POSTED;
    if (!contig && bytes > FMPL_INLINE_MAX) {
        mx_layout_t lay = { .word = (uint64_t)seq << 32 | 1, .ld = s->ld * s->esize };
        rc = fmpl_tl_notify(tl, peer, aux, FMPL_HDR_OFF, &lay, sizeof lay,
                            FMPL_TL_NOTIFY_UNORDERED, NULL);
        if (rc != FMPL_SUCCESS)
            return rc;
        state = FMPL_HDR_POSTED_M;
    }
    h.word = fmpl_hdr_word(seq, state);
    rc = fmpl_tl_notify(tl, peer, idx, FMPL_HDR_OFF, &h, sizeof h, FMPL_TL_NOTIFY_UNORDERED,
                        NULL);
    if (rc != FMPL_SUCCESS)
        return rc;
    sl->recv_seq = seq;

    /* contiguous: the plain receive (inline copies, split reads) */
    fmpl_request_t req = { .kind = FMPL_REQ_RECV, .peer = peer, .mai = idx, .seq = seq,
                           .buf = a, .size = bytes, .flags = FMPL_RF_BLOCKING };
    volatile uint8_t *line = fmpl_tl_mbox_in(tl, peer, idx);
    fmpl_wait_t w;
    fmpl_wait_init(&w, peer);
    for (;;) {
        int status, done = contig ? fmpl_p2p_recv_try(&req)
                                  : strided_try(line, seq, s, a, &status);
        if (done)
            return contig ? req.status : status;
        int n = fmpl_progress();
        rc = n ? FMPL_SUCCESS : fmpl_wait_idle(&w);
        if (rc != FMPL_SUCCESS)
            return rc;
    }
}
