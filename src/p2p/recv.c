/*
 * recv.c - the receiver's half: write our header into the sender's
 * matching area, then watch our completion record.
 */
#include "fmpl.h"
#include "base/log.h"
#include "base/memcheck.h"
#include "p2p/progress.h"
#include "p2p/trace.h"
#include "p2p/p2p.h"

/* active irecvs large enough to be split (see p2p.h) */
static fmpl_request_t *watched;

/* how long a deferred header waits for its early message (p2p.h) */
static double patience = FMPL_EARLY_PATIENCE;

int fmpl_p2p_recv_watched(void) { return watched != NULL; }
void fmpl_p2p_recv_forget(void) { watched = NULL; }

/* Called by fmpl_progress(): read our part of split messages. */
int fmpl_p2p_recv_progress(void)
{
    int n = 0;
    for (fmpl_request_t *r = watched, *next; r; r = next) {
        next = *fmpl_req_next(r);
        unsigned before = r->flags;
        fmpl_p2p_recv_try(r);
        n += r->flags != before;
    }
    return n;
}

/* Write req's header into the sender's matching area. */
static int post_header(fmpl_request_t *req)
{
    fmpl_tl_t *tl = &fmpl_g.tl;
    fmpl_hdr_rec_t h = { .size = req->size };
    /* messages that fit the data record never need the buffer's key */
    int reg = req->size > fmpl_g.inline_max;
    if (reg) {
        int rc = fmpl_tl_mem_reg(tl, req->buf, req->size, &h.key);
        if (rc != FMPL_SUCCESS)
            return rc;
    }
    h.word = fmpl_hdr_word(req->seq, req->flags & FMPL_RF_BLOCKING ? FMPL_HDR_POSTED
                                                                    : FMPL_HDR_POSTED_C);
    fmpl_trace_mark(FMPL_TR_RECV_KICK);
    int rc = fmpl_tl_notify(tl, req->peer, req->mai, FMPL_HDR_OFF, &h, sizeof h,
                            FMPL_TL_NOTIFY_UNORDERED, NULL);
    fmpl_trace_mark(FMPL_TR_RECV_KICKED);
    if (rc != FMPL_SUCCESS) {
        if (reg)
            fmpl_tl_mem_dereg(tl, &h.key);
        return rc;
    }
    if (reg) {
        *fmpl_req_key(req) = h.key;   /* until the sender is done with buf */
        req->flags |= FMPL_RF_REG;
    }
    return FMPL_SUCCESS;
}

int fmpl_p2p_recv_start(fmpl_request_t *req, void *buf, size_t size, int src, int mai,
                        unsigned how)
{
    fmpl_tl_t *tl = &fmpl_g.tl;
    fmpl_slot_t *sl = fmpl_slot(src, mai);
    if (sl->recv_busy)
        return FMPL_ERR_BUSY;
    uint32_t seq = fmpl_seq_next(sl->recv_seq);
    fmpl_request_t r = { .kind = FMPL_REQ_RECV, .peer = src, .mai = mai, .seq = seq,
                         .buf = buf, .size = size,
                         .flags = how & FMPL_RS_BLOCKING ? FMPL_RF_BLOCKING : 0 };
    /* an early send (p2p.h) may be here before our header: then no header
     * is needed; after one, the next small one may come early too */
    volatile uint8_t *line = fmpl_tl_mbox_in(tl, src, mai);
    int here = fmpl_data_is(fmpl_line_word(line, FMPL_DATA_OFF), seq), watch = 0;
    if (here) {
        /* nothing to post */
    } else if ((how & FMPL_RS_WAITS) && size <= fmpl_g.inline_max && sl->recv_early &&
               fmpl_tl_kernel(tl, src)) {
        r.flags |= FMPL_RF_DEFER;
        *fmpl_req_t_split(&r) = fmpl_wtime();
    } else {
        int rc = post_header(&r);
        if (rc != FMPL_SUCCESS)
            return rc;
        watch = !(how & FMPL_RS_BLOCKING) && fmpl_split_size(size) && fmpl_split_ok(tl);
    }
    sl->recv_seq = seq;
    sl->recv_busy = 1;
    *req = r;
    if (watch)
        fmpl_req_list_add(&watched, req, FMPL_RF_WATCHED);
    return FMPL_SUCCESS;
}

/* Data record `w` of receive `seq` from `peer` on `mai` is read (inline
 * bytes at `inl`): note the peer's acknowledgement (p2p.h), and that the
 * record is free for the peer's next message. */
void fmpl_p2p_rec_taken(int peer, int mai, uint32_t seq, uint64_t w, const uint8_t *inl)
{
    fmpl_slot_t *sl = fmpl_slot(peer, mai);
    if (w & (FMPL_DFLAG_ACK << 8))
        memcpy(&sl->peer_done, inl + FMPL_ACK_OFF, sizeof sl->peer_done);
    sl->recv_done = seq;
    sl->recv_early = !!(w & (FMPL_DFLAG_EARLY << 8));
}

/* A record that no correct sender writes: a rank that broke the protocol
 * (memory corrupted, a version mismatch) ends the receive with an error
 * and never makes us write outside its buffer. */
static void bad_record(fmpl_request_t *req, uint64_t w, const char *what)
{
    fmpl_log_err("rank %d broke the protocol on index %d (%s, record %#llx): "
                 "receive ended with an error", req->peer, req->mai, what,
                 (unsigned long long)w);
    req->status = FMPL_ERR_INTERNAL;
}

/* A split record (p2p.h) only comes where splitting is possible, for a
 * receive that can take the message, and leaves the receiver a part to
 * read (what the sender checked before it split). */
static int split_record_ok(const fmpl_request_t *req, uint64_t sz)
{
    return fmpl_split_ok(&fmpl_g.tl) && !(req->flags & FMPL_RF_DEFER) &&
           sz <= req->size && fmpl_split_point(sz) > 0;
}

/* 1 when complete (req->status final), 0 otherwise. */
int fmpl_p2p_recv_try(fmpl_request_t *req)
{
    if (req->flags & FMPL_RF_DONE)
        return 1;
    volatile uint8_t *line = fmpl_tl_mbox_in(&fmpl_g.tl, req->peer, req->mai);
    if (req->size > FMPL_ACK_OFF && req->size <= FMPL_EXT_PREFETCH &&
        fmpl_g.inline_max > FMPL_INLINE_MAX) {
        /* A message in the record's extension (p2p.h) is read after its
         * word: a second cache miss, one transfer after the first.  Asked
         * for while we poll, the extension's lines come with the word's
         * (bench/latency, 24 to 256 B one-way: 0.45-0.47 us without,
         * 0.33-0.34 with, as 8 B; medians of 5 interleaved runs).  Not
         * for a receive too large for the record: its message comes
         * another way (4 KiB one-way: 0.39 us, and 0.42 when its polls
         * asked for 2 KiB of extension each).  Nor above
         * FMPL_EXT_PREFETCH: the lines we hold the sender must take back
         * before it writes them, which costs more than it saves. */
        const volatile uint8_t *x = line + FMPL_DATA_OFF + FMPL_EXT_OFF;
        for (size_t o = 0; o < req->size; o += 64)
            __builtin_prefetch((const void *)(x + o));
    }
    uint64_t w = fmpl_line_word(line, FMPL_DATA_OFF);
    if (!fmpl_data_is(w, req->seq)) {
        if ((req->flags & FMPL_RF_DEFER) && (++*fmpl_req_polls(req) & 63) == 0 &&
            fmpl_wtime() - *fmpl_req_t_split(req) >= patience) {
            /* the message did not come early: ask for it */
            req->flags &= ~FMPL_RF_DEFER;
            req->flags |= FMPL_RF_LATE;
            fmpl_slot(req->peer, req->mai)->recv_early = 0;
            int rc = post_header(req);
            if (rc != FMPL_SUCCESS) {
                fmpl_p2p_recv_fail(req, rc);
                return 1;
            }
        }
        return 0;
    }
    const uint8_t *inl = (const uint8_t *)line + FMPL_DATA_OFF + 8;
    switch ((w >> 16) & 0xff) {
    case FMPL_DST_OK:
        req->status = FMPL_SUCCESS;
        if (w & (FMPL_DFLAG_INLINE << 8)) {
            size_t n;
            const uint8_t *data = fmpl_rec_inline(line, w, &n);
            if (!data) {
                bad_record(req, w, "inline length");
                break;
            }
            if (n > req->size)
                req->status = FMPL_ERR_TRUNCATE;   /* an early send: only we can tell */
            else if (n)
                memcpy(req->buf, data, n);
            req->size = n;
        }
        break;
    case FMPL_DST_SPLIT:
        if (!(req->flags & FMPL_RF_GOT)) {
            /* read once: the line is the peer's, and what is checked is
             * what is used */
            fmpl_tl_key_t skey;
            uint64_t sz;
            _Static_assert(sizeof skey % 8 == 0, "the split record is read by words");
            fmpl_line_copy(&skey, inl, sizeof skey);
            fmpl_line_copy(&sz, inl + sizeof skey, sizeof sz);
            if (!split_record_ok(req, sz)) {
                bad_record(req, w, "split message");
                break;
            }
            /* read our part of the sender's buffer while it writes its own,
             * unless the sender took it back (the CAS decides) */
            fmpl_tl_t *tl = &fmpl_g.tl;
            unsigned mine = req->flags & FMPL_RF_BLOCKING ? FMPL_HDR_POSTED : FMPL_HDR_CLAIMED;
            req->flags |= FMPL_RF_GOT;
            if (fmpl_tl_mbox_cas(tl, req->peer, req->mai, FMPL_HDR_OFF, 1,
                                 fmpl_hdr_word(req->seq, mine),
                                 fmpl_hdr_word(req->seq, FMPL_HDR_READING), NULL) != FMPL_SUCCESS)
                return 0;
            uint64_t a = fmpl_split_point(sz);
            int rc = fmpl_tl_get(tl, req->peer, (uint8_t *)req->buf + a, sz - a,
                                 &skey, a);
            uint64_t ans = fmpl_hdr_word(req->seq, rc == FMPL_SUCCESS ? FMPL_HDR_READ_DONE
                                                                      : FMPL_HDR_READ_FAIL);
            fmpl_tl_notify(tl, req->peer, req->mai, FMPL_HDR_OFF, &ans, sizeof ans,
                           FMPL_TL_NOTIFY_UNORDERED, NULL);
        }
        return 0;                  /* the sender's final record completes it */
    case FMPL_DST_TRUNCATE:
        memcpy(&req->size, inl, sizeof(uint64_t));   /* the sender's size */
        req->status = FMPL_ERR_TRUNCATE;
        break;
    default: {
        int32_t e;
        memcpy(&e, inl, sizeof e);
        req->status = e < 0 ? e : FMPL_ERR_INTERNAL;
    }
    }
    req->flags |= FMPL_RF_DONE;   /* the index stays busy until the wait */
    if (req->flags & FMPL_RF_LATE) {
        /* came early anyway: we gave up too soon; else it waited for us */
        if (w & (FMPL_DFLAG_EARLY << 8))
            patience = patience * 2 < FMPL_EARLY_PATIENCE_MAX ? patience * 2
                                                              : FMPL_EARLY_PATIENCE_MAX;
        else
            patience = patience / 2 > FMPL_EARLY_PATIENCE ? patience / 2 : FMPL_EARLY_PATIENCE;
    }
    if (req->status == FMPL_SUCCESS && req->size)
        FMPL_MEM_DEFINED(req->buf, req->size);   /* a peer's CMA wrote it */
    fmpl_tl_work(&fmpl_g.tl, FMPL_TL_WORK_RECV, req->size);
    fmpl_p2p_rec_taken(req->peer, req->mai, req->seq, w, inl);
    fmpl_req_list_del(&watched, req, FMPL_RF_WATCHED);
    fmpl_req_dereg(req);
    return 1;
}

/* End a receive with an error (its peer is gone). */
int fmpl_p2p_recv_fail(fmpl_request_t *req, int rc)
{
    req->status = rc;
    req->flags |= FMPL_RF_DONE;
    fmpl_req_list_del(&watched, req, FMPL_RF_WATCHED);
    fmpl_req_dereg(req);
    return rc;
}

int fmpl_p2p_recv_wait(fmpl_request_t *req)
{
    if (fmpl_p2p_recv_try(req))
        return req->status;
    fmpl_wait_t w;
    fmpl_wait_init(&w, req->peer);
    for (;;) {
        int n = fmpl_progress();
        if (fmpl_p2p_recv_try(req))
            return req->status;
        int rc = n ? FMPL_SUCCESS : fmpl_wait_idle(&w);
        if (rc != FMPL_SUCCESS)
            return fmpl_p2p_recv_fail(req, rc);
    }
}

int fmpl_recv(void *buf, size_t size, int src, int mai)
{
    int rc = fmpl_p2p_check(buf, size, src, mai);
    if (rc != FMPL_SUCCESS)
        return rc;
    fmpl_request_t req;
    fmpl_trace_mark(FMPL_TR_RECV_CALL);
    fmpl_enter();
    rc = fmpl_p2p_recv_start(&req, buf, size, src, mai, FMPL_RS_BLOCKING | FMPL_RS_WAITS);
    if (rc == FMPL_SUCCESS) {
        rc = fmpl_p2p_recv_wait(&req);
        fmpl_slot(src, mai)->recv_busy = 0;
    }
    fmpl_trace_mark(FMPL_TR_RECV_END);
    fmpl_leave();
    return rc;
}

int fmpl_irecv(void *buf, size_t size, int src, int mai, fmpl_request_t *req)
{
    int rc = fmpl_p2p_check(buf, size, src, mai);
    if (rc != FMPL_SUCCESS)
        return rc;
    if (!req)
        return FMPL_ERR_ARG;
    fmpl_enter();
    rc = fmpl_p2p_recv_start(req, buf, size, src, mai, 0);
    fmpl_leave();
    return rc;
}

int fmpl_wait_irecv(fmpl_request_t *req)
{
    if (!fmpl_g.initialized)
        return FMPL_ERR_NOT_INIT;
    if (!req || req->kind != FMPL_REQ_RECV)
        return FMPL_ERR_REQUEST;
    fmpl_enter();
    int rc = fmpl_p2p_recv_wait(req);
    fmpl_slot(req->peer, req->mai)->recv_busy = 0;
    req->kind = FMPL_REQ_NONE;
    fmpl_leave();
    return rc;
}

/* A receive that will not happen after all (cancel.c): its sequence number
 * is handed back, so the next receive on the slot meets the send this one
 * would have met. */
void fmpl_p2p_recv_withdraw(fmpl_request_t *req)
{
    fmpl_slot_t *sl = fmpl_slot(req->peer, req->mai);
    sl->recv_seq = req->seq - 1 ? req->seq - 1 : UINT32_MAX;
    sl->recv_busy = 0;
    fmpl_req_list_del(&watched, req, FMPL_RF_WATCHED);
    fmpl_req_dereg(req);
    req->kind = FMPL_REQ_NONE;
}
