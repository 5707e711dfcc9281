/*
 * cancel.c - fmpl_cancel_irecv: withdrawing a posted receive, the paper's
 * replacement for ANY_SOURCE.
 *
 * A receive posted by fmpl_irecv has handed its buffer to the sender, who
 * writes into it as soon as it sees the header.  Withdrawing it is a race
 * between the two, and exactly one must win.
 *
 * With remote atomics (FMPL_TL_CAP_CAS): the header says POSTED_C; the
 * sender CLAIMs it by CAS before it writes, the cancel CASes it to
 * CANCELLED.  The receiver decides alone, at once.
 *
 * Without them (the SR8000 and PEACH2 have remote writes only): the
 * sender, who is the only one to know whether it has written, decides.
 * The receiver overwrites its header with CANCEL_REQ (the request's number
 * in the size word) and rings the sender's doorbell - a record on the
 * control index naming the index and sequence number, so the sender finds
 * it without searching.  The sender, in any FMPL call it makes, answers:
 * if it has written that message (or is writing it), its data record is
 * the answer and the receive completes; if not, it writes a CANCELLED data
 * record carrying the request's number, and waits for the next header on
 * that slot before it sends.  The cancel waits for whichever comes.  So a
 * cancel costs a round trip and needs the sender to call FMPL; a dead
 * sender ends it with FMPL_ERR_PEER, and fmpl_finalize keeps answering
 * until every rank has arrived (init.c).
 */
#include <stdlib.h>

#include "fmpl.h"
#include "p2p/progress.h"
#include "p2p/p2p.h"

/* The doorbell on the control index: the receiver's latest request. */
typedef struct bell {
    uint64_t id;                   /* the requests so far from this receiver to us */
    uint32_t mai, seq;
} bell_t;

static uint64_t *asked;            /* [size]: requests we made of each sender */
static uint64_t *heard;            /* [size]: the last doorbell each receiver rang we handled */
static int watched = -1;           /* the transport lists who rang (fmpl_tl_watch), -1: ask */

static int ensure_tables(void)
{
    if (asked)
        return 1;
    asked = calloc((size_t)fmpl_g.boot.size, sizeof *asked);
    heard = calloc((size_t)fmpl_g.boot.size, sizeof *heard);
    if (asked && heard)
        return 1;
    fmpl_p2p_cancel_forget();
    return 0;
}

void fmpl_p2p_cancel_forget(void)
{
    free(asked);
    free(heard);
    asked = heard = NULL;
    watched = -1;
}

/* ---- the sender's half -------------------------------------------------- */

/* The receiver of our message `seq` on `mai` asks to withdraw it (request
 * `id`).  Answer unless our record for it is out already; 1 when done. */
int fmpl_p2p_cancel_answer(int peer, int mai, uint32_t seq, uint64_t id)
{
    fmpl_slot_t *sl = fmpl_slot(peer, mai);
    if (sl->cancel_done == (uint32_t)id)
        return 1;
    sl->cancel_done = (uint32_t)id;
    if (sl->send_issued && (int32_t)(sl->send_issued - seq) >= 0)
        return 1;                  /* our data record is the answer */
    fmpl_data_rec_t rec = { .word = fmpl_data_word(seq, FMPL_DST_CANCELLED, 0, 0) };
    memcpy(rec.inl, &id, sizeof id);
    fmpl_tl_notify(&fmpl_g.tl, peer, mai, FMPL_DATA_OFF, &rec, 8 + sizeof id,
                   FMPL_TL_NOTIFY_UNORDERED, NULL);
    return 1;
}

/* Called by fmpl_progress() on transports without CAS: the doorbells. */
/* Receiver p's doorbell: answered (1), or to be looked at again (0). */
static int doorbell(fmpl_tl_t *tl, int p)
{
    volatile uint8_t *line = fmpl_tl_mbox_in(tl, p, fmpl_g.ctl_idx);
    uint64_t id = fmpl_line_word(line, 0);
    if (id == heard[p])
        return 1;
    bell_t b;
    memcpy(&b, (const void *)line, sizeof b);
    if (b.id != id || (int)b.mai < 0 || (int)b.mai >= fmpl_g.user_nidx)
        return 0;                  /* half written? look again next time */
    volatile uint8_t *hl = fmpl_tl_mbox_in(tl, p, (int)b.mai);
    uint64_t w = fmpl_line_word(hl, FMPL_HDR_OFF);
    const fmpl_hdr_rec_t *h = (const fmpl_hdr_rec_t *)(const void *)(hl + FMPL_HDR_OFF);
    fmpl_slot_t *sl = fmpl_slot(p, (int)b.mai);
    if (w == fmpl_hdr_word(b.seq, FMPL_HDR_CANCEL_REQ) && h->size == id)
        fmpl_p2p_cancel_answer(p, (int)b.mai, b.seq, id);
    else if (sl->cancel_done != (uint32_t)id &&
             !(sl->send_issued && (int32_t)(sl->send_issued - b.seq) >= 0))
        return 0;                  /* its header is still on the way */
    heard[p] = id;
    return 2;
}

/* Called by fmpl_progress() on transports without CAS: the doorbells.
 * Where the transport lists who wrote the control index (fmpl_tl_watch),
 * only those; otherwise every receiver's line, every pass. */
int fmpl_p2p_cancel_progress(void)
{
    fmpl_tl_t *tl = &fmpl_g.tl;
    if (!heard && !ensure_tables())
        return 0;
    int n = 0;
    int first = watched < 0;       /* what came before the watch: look at all once */
    if (first)
        watched = fmpl_tl_watch(tl, fmpl_g.ctl_idx) == FMPL_SUCCESS;
    if (watched && !first) {
        int peers[64], k;
        while ((k = fmpl_tl_watch_take(tl, peers, 64)) > 0) {
            int again[64], na = 0;
            for (int i = 0; i < k; i++) {
                int r = doorbell(tl, peers[i]);
                if (r == 0)
                    again[na++] = peers[i];
                n += r == 2;
            }
            for (int i = 0; i < na; i++)
                fmpl_tl_watch_note(tl, again[i], fmpl_g.ctl_idx);
            if (na == k)
                break;             /* only what must wait is left */
        }
        return n;
    }
    for (int p = 0; p < tl->size; p++)
        n += doorbell(tl, p) == 2;
    return n;
}

/* ---- the receiver's half ------------------------------------------------ */

static int cancel_cas(fmpl_request_t *req)
{
    fmpl_tl_t *tl = &fmpl_g.tl;
    if (!(req->flags & FMPL_RF_DONE) &&
        fmpl_tl_mbox_cas(tl, req->peer, req->mai, FMPL_HDR_OFF, 1,
                         fmpl_hdr_word(req->seq, FMPL_HDR_POSTED_C),
                         fmpl_hdr_word(req->seq, FMPL_HDR_CANCELLED), NULL) == FMPL_SUCCESS) {
        fmpl_p2p_recv_withdraw(req);
        return FMPL_SUCCESS;
    }
    return FMPL_ERR_BUSY;
}

static int cancel_ask(fmpl_request_t *req)
{
    fmpl_tl_t *tl = &fmpl_g.tl;
    fmpl_progress();
    if (fmpl_p2p_recv_try(req))
        return FMPL_ERR_BUSY;      /* the message came */
    if (req->flags & FMPL_RF_DEFER) {
        fmpl_p2p_recv_withdraw(req);   /* its header never went out */
        return FMPL_SUCCESS;
    }
    if (!ensure_tables())
        return FMPL_ERR_NOMEM;
    uint64_t id = ++asked[req->peer];
    fmpl_hdr_rec_t h = { .word = fmpl_hdr_word(req->seq, FMPL_HDR_CANCEL_REQ), .size = id };
    bell_t b = { .id = id, .mai = (uint32_t)req->mai, .seq = req->seq };
    int rc = fmpl_tl_notify(tl, req->peer, req->mai, FMPL_HDR_OFF, &h, 16,
                            FMPL_TL_NOTIFY_UNORDERED, NULL);
    if (rc == FMPL_SUCCESS)
        rc = fmpl_tl_notify(tl, req->peer, fmpl_g.ctl_idx, 0, &b, sizeof b,
                            FMPL_TL_NOTIFY_UNORDERED, NULL);
    if (rc != FMPL_SUCCESS)
        return fmpl_p2p_recv_fail(req, rc);
    volatile uint8_t *line = fmpl_tl_mbox_in(tl, req->peer, req->mai);
    fmpl_wait_t w;
    fmpl_wait_init(&w, req->peer);
    for (;;) {
        if (fmpl_p2p_recv_try(req))
            return FMPL_ERR_BUSY;  /* the sender had written it */
        uint64_t d = fmpl_line_word(line, FMPL_DATA_OFF);
        uint64_t got;
        memcpy(&got, (const void *)(line + FMPL_DATA_OFF + 8), sizeof got);
        if (d == fmpl_data_word(req->seq, FMPL_DST_CANCELLED, 0, 0) && got == id) {
            fmpl_p2p_recv_withdraw(req);
            return FMPL_SUCCESS;
        }
        rc = fmpl_progress() ? FMPL_SUCCESS : fmpl_wait_idle(&w);
        if (rc != FMPL_SUCCESS)
            return fmpl_p2p_recv_fail(req, rc);
    }
}

int fmpl_cancel_irecv(fmpl_request_t *req)
{
    if (!fmpl_g.initialized)
        return FMPL_ERR_NOT_INIT;
    if (!req)
        return FMPL_ERR_REQUEST;
    /* the flags under the lock: the progress thread sets DONE */
    fmpl_enter();
    int rc = FMPL_ERR_BUSY;
    if (req->kind != FMPL_REQ_RECV || (req->flags & FMPL_RF_BLOCKING))
        rc = FMPL_ERR_REQUEST;
    else if (!(req->flags & FMPL_RF_DONE))
        rc = fmpl_g.tl.caps & FMPL_TL_CAP_CAS ? cancel_cas(req) : cancel_ask(req);
    fmpl_leave();
    return rc;
}
