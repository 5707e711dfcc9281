/*
 * send.c - the sender's half: wait for the receiver's header in our
 * matching area, write the data once, then the receiver's completion.
 * Small messages may go before the header (early sends, p2p.h).
 */
#include "fmpl.h"
#include "p2p/progress.h"
#include "p2p/trace.h"
#include "p2p/p2p.h"
#include "p2p/spill.h"

/* May send `seq` of `size` bytes go out before its header (p2p.h)?  The
 * peer has taken our previous message, and its last receive here (not
 * this one yet) had room for it: any room when `want` is 0, else exactly
 * the size word `want` (a matrix receive: bytes and shape tag).  `line`:
 * the line `dst` writes to us on `mai` (fmpl_tl_mbox_in's). */
static inline int early_ok(volatile uint8_t *line, int dst, int mai, uint32_t seq, size_t size,
                           uint64_t want)
{
    if (!fmpl_g.early || size > fmpl_g.inline_max ||
        fmpl_seq_next(fmpl_slot(dst, mai)->peer_done) != seq)
        return 0;
    uint64_t hw = fmpl_line_word(line, FMPL_HDR_OFF);
    uint32_t hseq = (uint32_t)(hw >> 32);
    if (hseq == 0 || hseq == seq || (hw & 0xff) == FMPL_HDR_CANCEL_REQ)
        return 0;                  /* no receive seen yet, this one is posted, or the
                                      last was cancelled (its size word is not one) */
    const fmpl_hdr_rec_t *h = (const fmpl_hdr_rec_t *)(const void *)(line + FMPL_HDR_OFF);
    uint64_t hsize = h->size;
    return want ? hsize == want : (hsize & FMPL_HDR_SIZE_MASK) >= size;
}

int fmpl_p2p_early_ok(int dst, int mai, uint32_t seq, size_t size, uint64_t want)
{
    return early_ok(fmpl_tl_mbox_in(&fmpl_g.tl, dst, mai), dst, mai, seq, size, want);
}

/* Tell the peer, in the free tail of our record, the last of its messages
 * on this index we have received: it may then send its next small one
 * early.  Returns the record's new length. */
unsigned fmpl_p2p_add_ack(fmpl_data_rec_t *rec, unsigned reclen, int dst, int mai)
{
    uint32_t done = fmpl_slot(dst, mai)->recv_done;
    int ext = !!(rec->word & (FMPL_DFLAG_EXT << 8));   /* the data is past the ack */
    if ((reclen > 8 + FMPL_ACK_OFF && !ext) || done == 0)
        return reclen;
    memcpy(rec->inl + FMPL_ACK_OFF, &done, sizeof done);
    rec->word |= (uint64_t)FMPL_DFLAG_ACK << 8;
    return ext ? reclen : 8 + FMPL_INLINE_MAX;
}

/* A message of `size` <= fmpl_g.inline_max bytes inside its record: in
 * the record's own bytes while they leave room for the acknowledgement,
 * else in the extension where the transport has one (p2p.h).  Returns
 * the record's length. */
static unsigned inline_rec(fmpl_data_rec_x_t *x, uint32_t seq, unsigned flags,
                           const void *buf, size_t size)
{
    if (size <= FMPL_ACK_OFF || fmpl_g.inline_max <= FMPL_INLINE_MAX) {
        x->r.word = fmpl_data_word(seq, FMPL_DST_OK, flags, (unsigned)size);
        if (size)
            memcpy(x->r.inl, buf, size);
        return 8 + (unsigned)size;
    }
    x->r.word = fmpl_data_word(seq, FMPL_DST_OK, flags | FMPL_DFLAG_EXT, (unsigned)size);
    memset(x->r.inl, 0, sizeof x->r.inl);
    memcpy(x->ext, buf, size);
    return FMPL_EXT_OFF + (unsigned)size;
}

/*
 * The direct path (transport.h, fmpl_tl_direct_t): a message its record
 * carries, to a receive already posted or early, written with stores into
 * our line for the peer - what fmpl_p2p_issue below does for it, without
 * the layers around it: request, pending list, the record built on the
 * stack and copied again.  An 8-byte fmpl_isend took 389 instructions
 * through them and takes 244 here (callgrind).  This and the direct
 * wrappers together: bench/bw -s 8 streams 1.88x as fast, bench/latency
 * -s 8 takes 0.73x the time (6 and 8 interleaved runs against the build
 * before them).  Returns 1 when the record is written (*status:
 * FMPL_SUCCESS, or FMPL_ERR_TRUNCATE for a receive too small), 0 when
 * the general path must decide (nothing was done).
 */
static int direct_write(const fmpl_tl_direct_t *d, int dst, int mai, uint32_t seq,
                        const void *buf, size_t size, int *status)
{
    fmpl_tl_t *tl = &fmpl_g.tl;
    size_t at = (size_t)mai * tl->direct_slot;
    volatile uint8_t *in = d->in + at;
    uint64_t w = fmpl_line_word(in, FMPL_HDR_OFF);
    unsigned flags = FMPL_DFLAG_INLINE;
    uint64_t room = size;
    if ((uint32_t)(w >> 32) == seq) {
        unsigned state = (unsigned)(w & 0xff);
        if (state != FMPL_HDR_POSTED && state != FMPL_HDR_POSTED_C)
            return 0;
        /* a cancellable receive: claim it first (p2p.h); its size is
         * final only then */
        if (state == FMPL_HDR_POSTED_C &&
            fmpl_tl_word_cas(in + FMPL_HDR_OFF, w, fmpl_hdr_word(seq, FMPL_HDR_CLAIMED),
                             NULL) != FMPL_SUCCESS)
            return 0;
        fmpl_trace_mark(FMPL_TR_SEND_HDR);
        room = ((const fmpl_hdr_rec_t *)(const void *)(in + FMPL_HDR_OFF))->size &
               FMPL_HDR_SIZE_MASK;
    } else if (early_ok(in, dst, mai, seq, size, 0)) {
        fmpl_trace_mark(FMPL_TR_SEND_HDR);   /* it waits for no header */
        flags |= FMPL_DFLAG_EARLY;
    } else {
        return 0;
    }
    /* the record: as inline_rec and fmpl_p2p_add_ack build it, in place
     * (the peer reads it only after the word below) */
    uint8_t *rec = d->out + at + FMPL_DATA_OFF;
    uint32_t done = fmpl_slot(dst, mai)->recv_done;
    uint64_t word;
    if (size > room) {
        uint64_t sz = size;
        memcpy(rec + 8, &sz, sizeof sz);
        word = fmpl_data_word(seq, FMPL_DST_TRUNCATE, 0, 0);
        flags = 0;
        *status = FMPL_ERR_TRUNCATE;
    } else {
        if (size <= FMPL_ACK_OFF || fmpl_g.inline_max <= FMPL_INLINE_MAX) {
            if (size)
                memcpy(rec + 8, buf, size);
        } else {
            memcpy(rec + FMPL_EXT_OFF, buf, size);
            flags |= FMPL_DFLAG_EXT;
        }
        word = fmpl_data_word(seq, FMPL_DST_OK, 0, (unsigned)size);
        *status = FMPL_SUCCESS;
    }
    /* the acknowledgement wherever the record's own bytes leave it room */
    int ack_room = !(flags & FMPL_DFLAG_INLINE) || (flags & FMPL_DFLAG_EXT) ||
                   size <= FMPL_ACK_OFF;
    if (done && ack_room) {
        memcpy(rec + 8 + FMPL_ACK_OFF, &done, sizeof done);
        flags |= FMPL_DFLAG_ACK;
    }
    atomic_store_explicit((_Atomic uint64_t *)(void *)rec, word | (uint64_t)flags << 8,
                          memory_order_release);
    fmpl_slot(dst, mai)->send_issued = seq;
    return 1;
}

/* Whether the direct path may take it, in line: on the other transports
 * the call above would cost a send about 20 instructions for nothing
 * (callgrind, FMPL_SHM_DIRECT=0). */
static inline int send_direct(int dst, int mai, uint32_t seq, const void *buf, size_t size,
                              int *status)
{
    const fmpl_tl_direct_t *d = fmpl_tl_direct(&fmpl_g.tl, dst);
    if (!d || d->queued || size > fmpl_g.inline_max)
        return 0;                  /* (queued: the record must follow FIFO data) */
    return direct_write(d, dst, mai, seq, buf, size, status);
}

/*
 * The short path on the other transports (no direct lines: dcfa, ofi,
 * route, the emulated fabrics): a blocking send of a message its record
 * carries goes straight to fmpl_p2p_issue below, with a completion of its
 * own, without the request, its start, its wait and its try around it.
 * On dcfa in the soft-RoCE test bed an 8-byte fmpl_send took 870 emulated
 * instructions through them and 750 without (callgrind, bench/latency
 * -s 8).  Returns 1 when the record is on its way (*status set), 0 when
 * the general path must wait for the header.
 */
static int send_short(int dst, int mai, uint32_t seq, const void *buf, size_t size,
                      int *status)
{
    /* a record that cannot leave at once counts in `c` (transport.h): the
     * send is complete once it has */
    fmpl_tl_comp_t c = { 0, FMPL_SUCCESS };
    if (!fmpl_p2p_issue(dst, mai, seq, buf, size, &c, status, NULL, NULL))
        return 0;
    int rc = fmpl_wait_comp(&c, dst);
    if (rc != FMPL_SUCCESS && *status == FMPL_SUCCESS)
        *status = rc;
    return 1;
}

/*
 * Match send `seq` to `dst` on `mai` with its receive header and deliver.
 * Returns 0 while the receive is not posted (and the message may not go
 * early), 1 once the data and the completion record are written or queued
 * (*status tells the outcome; the source may be reused when comp->pending
 * is 0).  With `split` non-NULL a large message may be split: *split = 1
 * says the receiver is reading its part through *skey (registered:
 * deregister it once the send is done) and split_done() must finish the
 * send.
 */
int fmpl_p2p_issue(int dst, int mai, uint32_t seq, const void *buf, size_t size,
                   fmpl_tl_comp_t *comp, int *status, int *split, fmpl_tl_key_t *skey)
{
    fmpl_tl_t *tl = &fmpl_g.tl;
    if (send_direct(dst, mai, seq, buf, size, status))
        return 1;
    volatile uint8_t *line = fmpl_tl_mbox_in(tl, dst, mai);
    uint64_t w = fmpl_line_word(line, FMPL_HDR_OFF);
    fmpl_data_rec_x_t rx;
    fmpl_data_rec_t *rec = &rx.r;
    unsigned reclen = 8;
    if ((uint32_t)(w >> 32) != seq) {
        if (size > fmpl_g.inline_max || !early_ok(line, dst, mai, seq, size, 0))
            return 0;
        /* the receive is not posted yet: write the record now (and
         * wait for no header) */
        fmpl_trace_mark(FMPL_TR_SEND_HDR);
        reclen = inline_rec(&rx, seq, FMPL_DFLAG_INLINE | FMPL_DFLAG_EARLY, buf, size);
        *status = FMPL_SUCCESS;
        goto notify;
    }
    unsigned state = (unsigned)(w & 0xff);
    if (state == FMPL_HDR_CANCEL_REQ) {
        /* no remote atomics: the receiver asks to withdraw it (cancel.c) */
        const fmpl_hdr_rec_t *h = (const fmpl_hdr_rec_t *)(const void *)(line + FMPL_HDR_OFF);
        fmpl_p2p_cancel_answer(dst, mai, seq, h->size);
        return 0;                  /* wait for the repost */
    }
    if (state == FMPL_HDR_POSTED_C && (tl->caps & FMPL_TL_CAP_CAS)) {
        /* a cancellable receive: claim it first, or lose to the cancel */
        if (fmpl_tl_mbox_cas(tl, dst, mai, FMPL_HDR_OFF, 0, w,
                             fmpl_hdr_word(seq, FMPL_HDR_CLAIMED), NULL) != FMPL_SUCCESS)
            return 0;
    } else if (state != FMPL_HDR_POSTED && state != FMPL_HDR_POSTED_C) {
        return 0;                  /* cancelled: wait for the repost */
    }
    /* (without remote atomics a cancel needs our consent: it is ours) */
    fmpl_trace_mark(FMPL_TR_SEND_HDR);
    /* the header's body is stable now: the receiver waits for us */
    const fmpl_hdr_rec_t *h = (const fmpl_hdr_rec_t *)(const void *)(line + FMPL_HDR_OFF);
    uint64_t room = h->size & FMPL_HDR_SIZE_MASK;
    fmpl_tl_key_t key = h->key;

    int rc = FMPL_SUCCESS;
    if (size > room) {
        uint64_t sz = size;
        rec->word = fmpl_data_word(seq, FMPL_DST_TRUNCATE, 0, 0);
        memcpy(rec->inl, &sz, sizeof sz);
        reclen += sizeof sz;
        *status = FMPL_ERR_TRUNCATE;
    } else if (split && fmpl_split_size(size) && fmpl_split_ok(tl) &&
               fmpl_split_point(size) > 0) {
        /* tell the receiver where to read its part, then write ours */
        uint64_t sz = size;
        int reg = fmpl_tl_mem_reg(tl, (void *)buf, size, skey);
        rc = reg;
        if (rc == FMPL_SUCCESS) {
            rec->word = fmpl_data_word(seq, FMPL_DST_SPLIT, 0, 0);
            memcpy(rec->inl, skey, sizeof *skey);
            memcpy(rec->inl + sizeof *skey, &sz, sizeof sz);
            rc = fmpl_tl_notify(tl, dst, mai, FMPL_DATA_OFF, rec, 8 + 24, 0, comp);
        }
        if (rc == FMPL_SUCCESS) {
            rc = fmpl_tl_put(tl, dst, buf, fmpl_split_point(size), &key, 0, FMPL_TL_PUT_SPLIT,
                             comp);
        }
        *status = rc;
        *split = rc == FMPL_SUCCESS;
        if (*split) {
            fmpl_slot(dst, mai)->send_issued = seq;
            return 1;
        }
        /* a failure: the error record below ends the receiver's read */
        if (reg == FMPL_SUCCESS)
            fmpl_tl_mem_dereg(tl, skey);
        int32_t e = rc;
        rec->word = fmpl_data_word(seq, FMPL_DST_ERROR, 0, 0);
        memcpy(rec->inl, &e, sizeof e);
        reclen += sizeof e;
    } else if (size <= fmpl_g.inline_max) {
        /* (the receiver registered its buffer above that room: recv.c) */
        reclen = inline_rec(&rx, seq, FMPL_DFLAG_INLINE, buf, size);
        *status = FMPL_SUCCESS;
    } else {
        /* the data and then its record, in one hand-over where the
         * transport has one */
        rec->word = fmpl_data_word(seq, FMPL_DST_OK, 0, 0);
        reclen = fmpl_p2p_add_ack(rec, reclen, dst, mai);
        rc = fmpl_tl_put_notify(tl, dst, buf, size, &key, 0, mai, FMPL_DATA_OFF, rec, reclen,
                                comp);
        *status = rc;
        if (rc == FMPL_SUCCESS) {
            fmpl_slot(dst, mai)->send_issued = seq;
            return 1;
        }
        /* tell the receiver, so it does not wait for data that never comes */
        int32_t e = rc;
        rec->word = fmpl_data_word(seq, FMPL_DST_ERROR, 0, 0);
        memcpy(rec->inl, &e, sizeof e);
        reclen = 8 + sizeof e;
    }
notify:
    reclen = fmpl_p2p_add_ack(rec, reclen, dst, mai);
    int nrc = fmpl_tl_notify(tl, dst, mai, FMPL_DATA_OFF, rec, reclen, 0, comp);
    if (nrc != FMPL_SUCCESS && *status == FMPL_SUCCESS)
        *status = nrc;
    fmpl_slot(dst, mai)->send_issued = seq;
    return 1;
}

int fmpl_p2p_send_start(fmpl_request_t *req, const void *buf, size_t size, int dst, int mai)
{
    fmpl_slot_t *sl = fmpl_slot(dst, mai);
    if (sl->send_busy)
        return FMPL_ERR_BUSY;
    sl->send_busy = 1;
    sl->send_seq = fmpl_seq_next(sl->send_seq);
    *req = (fmpl_request_t){ .kind = FMPL_REQ_SEND, .peer = dst, .mai = mai,
                             .seq = sl->send_seq, .buf = (void *)buf, .size = size };
    return FMPL_SUCCESS;
}

/* the active isends not yet complete */
static fmpl_request_t *pending;

/* Complete: the index stays busy until the owner's wait (the overlap
 * rule counts an operation from its start to its wait). */
static void send_finish(fmpl_request_t *req)
{
    req->flags |= FMPL_RF_DONE;
    fmpl_req_list_del(&pending, req, FMPL_RF_QUEUED);
}

/* End a send with an error (its peer is gone). */
int fmpl_p2p_send_fail(fmpl_request_t *req, int rc)
{
    /* the request may be a stack frame of fmpl_send: puts still on
     * their way must not count down in it later */
    fmpl_tl_forget(&fmpl_g.tl, fmpl_req_comp(req));
    req->status = rc;
    fmpl_req_dereg(req);
    send_finish(req);
    return rc;
}

/* A started isend: the receive is often posted already; if not, every
 * progress call will push it. */
void fmpl_p2p_send_queue(fmpl_request_t *req)
{
    if (!fmpl_p2p_send_try(req))
        fmpl_req_list_add(&pending, req, FMPL_RF_QUEUED);
}

/* Called by fmpl_progress(): push every isend whose receive has come. */
int fmpl_p2p_send_progress(void)
{
    int n = 0;
    for (fmpl_request_t *r = pending, *next; r; r = next) {
        next = *fmpl_req_next(r);
        unsigned before = r->flags;
        fmpl_p2p_send_try(r);
        n += r->flags != before;
    }
    return n;
}

int fmpl_p2p_send_pending(void) { return pending != NULL; }

/* fmpl_finalize: requests never waited for are the user's to drop */
void fmpl_p2p_send_forget(void) { pending = NULL; }

/* A split send: once the receiver has read its part (or could not), write
 * the final record.  Returns 1 when done, 0 while the receiver reads. */
static int split_done(fmpl_request_t *req)
{
    fmpl_tl_t *tl = &fmpl_g.tl;
    volatile uint8_t *line = fmpl_tl_mbox_in(tl, req->peer, req->mai);
    uint64_t w = fmpl_line_word(line, FMPL_HDR_OFF);
    unsigned state = (unsigned)(w & 0xff);
    if ((uint32_t)(w >> 32) != req->seq || state == FMPL_HDR_READING)
        return 0;
    if (state == FMPL_HDR_POSTED || state == FMPL_HDR_CLAIMED) {
        /* the receiver has not started its part: after a short grace, take
         * it back (it may win the race and start reading instead) */
        double *t = fmpl_req_t_split(req);
        if (*t == 0)
            *t = fmpl_wtime();
        if (fmpl_wtime() - *t < FMPL_SPLIT_PATIENCE ||
            fmpl_tl_mbox_cas(tl, req->peer, req->mai, FMPL_HDR_OFF, 0, w,
                             fmpl_hdr_word(req->seq, FMPL_HDR_READ_FAIL), NULL) != FMPL_SUCCESS)
            return 0;
        state = FMPL_HDR_READ_FAIL;
    }
    fmpl_data_rec_t rec = { .word = fmpl_data_word(req->seq, FMPL_DST_OK, 0, 0) };
    if (state == FMPL_HDR_READ_FAIL) {
        /* the receiver could not read: write its part too */
        const fmpl_hdr_rec_t *h = (const fmpl_hdr_rec_t *)(const void *)(line + FMPL_HDR_OFF);
        fmpl_tl_key_t key = h->key;
        uint64_t a = fmpl_split_point(req->size);
        int rc = fmpl_tl_put(tl, req->peer, (const uint8_t *)req->buf + a, req->size - a,
                             &key, a, 0, fmpl_req_comp(req));
        if (rc != FMPL_SUCCESS) {
            int32_t e = rc;
            rec.word = fmpl_data_word(req->seq, FMPL_DST_ERROR, 0, 0);
            memcpy(rec.inl, &e, sizeof e);
            req->status = rc;
        }
    }
    int rc = fmpl_tl_notify(tl, req->peer, req->mai, FMPL_DATA_OFF, &rec, 8 + 4, 0,
                            fmpl_req_comp(req));
    if (rc != FMPL_SUCCESS && req->status == FMPL_SUCCESS)
        req->status = rc;
    req->flags &= ~FMPL_RF_SPLIT;
    return 1;
}

/* 1 when complete, 0 otherwise. */
int fmpl_p2p_send_try(fmpl_request_t *req)
{
    if (req->flags & FMPL_RF_DONE)
        return 1;
    fmpl_tl_comp_t *comp = fmpl_req_comp(req);
    if (!(req->flags & FMPL_RF_ISSUED)) {
        int split = 0;
        if (!fmpl_p2p_issue(req->peer, req->mai, req->seq, req->buf, req->size, comp,
                            &req->status, req->flags & FMPL_RF_WHOLE ? NULL : &split,
                            fmpl_req_key(req)))
            return 0;
        req->flags |= FMPL_RF_ISSUED | (split ? FMPL_RF_SPLIT | FMPL_RF_REG : 0);
        *fmpl_req_t_split(req) = 0;
    }
    if ((req->flags & FMPL_RF_SPLIT) && !split_done(req))
        return 0;
    if (fmpl_tl_comp_pending(comp))
        return 0;
    /* a put that failed on its way (the receiver's key was refused, the
     * connection broke) fails the send */
    if (req->status == FMPL_SUCCESS && comp->status != FMPL_SUCCESS)
        req->status = fmpl_put_status(req->peer, comp->status);
    fmpl_req_dereg(req);
    send_finish(req);
    return 1;
}

/* Wait for a send; past the spill timeout, copy it to the spill buffer. */
int fmpl_p2p_send_wait(fmpl_request_t *req)
{
    if (fmpl_p2p_send_try(req))
        return req->status;
    double timeout = fmpl_spill_timeout();
    double t0 = timeout >= 0 ? fmpl_wtime() : 0;
    fmpl_wait_t w;
    fmpl_wait_init(&w, req->peer);
    if (timeout >= 0)
        fmpl_wait_deadline(&w, t0 + timeout);
    for (unsigned i = 1;; i++) {
        int n = fmpl_progress();
        if (fmpl_p2p_send_try(req))
            return req->status;
        /* (an emulated clock reaches the deadline in one step: look every time) */
        if (timeout >= 0 && !(req->flags & FMPL_RF_ISSUED) &&
            (i % 64 == 0 || timeout == 0 || fmpl_g.tl.clock) &&
            fmpl_wtime() - t0 >= timeout && fmpl_spill_send(req) == FMPL_SUCCESS) {
            send_finish(req);
            return FMPL_SUCCESS;
        }
        int rc = n ? FMPL_SUCCESS : fmpl_wait_idle(&w);
        if (rc != FMPL_SUCCESS)
            return fmpl_p2p_send_fail(req, rc);
    }
}

int fmpl_send(const void *buf, size_t size, int dst, int mai)
{
    int rc = fmpl_p2p_check(buf, size, dst, mai);
    if (rc != FMPL_SUCCESS)
        return rc;
    fmpl_request_t req;
    fmpl_trace_mark(FMPL_TR_SEND_CALL);
    fmpl_enter();
    fmpl_trace_mark(FMPL_TR_SEND_READY);
    if (size <= fmpl_g.inline_max) {
        fmpl_slot_t *sl = fmpl_slot(dst, mai);
        uint32_t seq = fmpl_seq_next(sl->send_seq);
        if (!sl->send_busy && (fmpl_g.tl.direct ? send_direct(dst, mai, seq, buf, size, &rc)
                                                 : send_short(dst, mai, seq, buf, size, &rc))) {
            sl->send_seq = seq;
            fmpl_trace_mark(FMPL_TR_SEND_END);
            fmpl_leave();
            return rc;
        }
    }
    rc = fmpl_p2p_send_start(&req, buf, size, dst, mai);
    if (rc == FMPL_SUCCESS) {
        rc = fmpl_p2p_send_wait(&req);
        fmpl_slot(dst, mai)->send_busy = 0;
    }
    fmpl_trace_mark(FMPL_TR_SEND_END);
    fmpl_leave();
    return rc;
}

int fmpl_isend(const void *buf, size_t size, int dst, int mai, fmpl_request_t *req)
{
    int rc = fmpl_p2p_check(buf, size, dst, mai);
    if (rc != FMPL_SUCCESS)
        return rc;
    if (!req)
        return FMPL_ERR_ARG;
    fmpl_enter();
    if (fmpl_g.tl.direct) {
        fmpl_slot_t *sl = fmpl_slot(dst, mai);
        uint32_t seq = fmpl_seq_next(sl->send_seq);
        int st;
        if (!sl->send_busy && send_direct(dst, mai, seq, buf, size, &st)) {
            /* complete already; the index is busy until the wait */
            sl->send_busy = 1;
            sl->send_seq = seq;
            *req = (fmpl_request_t){ .kind = FMPL_REQ_SEND, .peer = dst, .mai = mai,
                                     .status = st, .seq = seq,
                                     .flags = FMPL_RF_ISSUED | FMPL_RF_DONE,
                                     .buf = (void *)buf, .size = size };
            fmpl_leave();
            return FMPL_SUCCESS;
        }
    }
    rc = fmpl_p2p_send_start(req, buf, size, dst, mai);
    if (rc == FMPL_SUCCESS)
        fmpl_p2p_send_queue(req);
    fmpl_leave();
    return rc;
}

int fmpl_wait_isend(fmpl_request_t *req)
{
    if (!fmpl_g.initialized)
        return FMPL_ERR_NOT_INIT;
    if (!req || req->kind != FMPL_REQ_SEND)
        return FMPL_ERR_REQUEST;
    fmpl_enter();
    int rc = fmpl_p2p_send_wait(req);
    fmpl_slot(req->peer, req->mai)->send_busy = 0;
    req->kind = FMPL_REQ_NONE;
    fmpl_leave();
    return rc;
}
