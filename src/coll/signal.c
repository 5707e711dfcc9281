/*
 * signal.c - the lightest message FMPL has: one cache-line record, written
 * one way, no handshake.  The paper's barrier uses the same kind of signal
 * (a TCW-reuse kick); here it also carries up to 24 bytes, which is all a
 * small allreduce needs.
 *
 * On a signal index the line a peer writes to us holds two 32-byte halves,
 * used alternately by sequence number (k-th signal in half k & 1):
 *   word = seq << 32 | length, then up to 24 bytes of data.
 * The sequence numbers are the (peer, index) slot's send/receive counters,
 * so they survive a communicator slot being freed and reused.
 *
 * Why two halves are enough: the k-th signal to a peer is written only
 * after the sender finished the collective that carried signal k-2 to the
 * same peer.  Every collective that uses signals (barrier, allreduce)
 * completes only when every member has entered it, so by then the peer has
 * finished the collective before, and read signal k-2.
 */
#include <string.h>

#include "coll/coll.h"
#include "core/progress.h"

#define HALF 32

int fmpl_sig_send(int peer, int idx, const void *data, unsigned len)
{
    fmpl_slot_t *sl = fmpl_slot(peer, idx);
    uint32_t seq = fmpl_seq_next(sl->send_seq);
    struct { uint64_t word; uint8_t data[FMPL_SIG_MAX]; } rec;
    rec.word = (uint64_t)seq << 32 | len;
    if (len)
        memcpy(rec.data, data, len);
    /* no data travels before it, so it may overtake queued puts */
    int rc = fmpl_tl_notify(&fmpl_g.tl, peer, idx, (seq & 1) * HALF, &rec, 8 + len,
                            FMPL_TL_NOTIFY_UNORDERED, NULL);
    if (rc == FMPL_SUCCESS)
        sl->send_seq = seq;
    return rc;
}

int fmpl_sig_wait(int peer, int idx, void *data, unsigned len)
{
    fmpl_slot_t *sl = fmpl_slot(peer, idx);
    uint32_t seq = fmpl_seq_next(sl->recv_seq);
    volatile uint8_t *line = fmpl_tl_mbox_in(&fmpl_g.tl, peer, idx);
    unsigned off = (seq & 1) * HALF;
    uint64_t w = fmpl_line_word(line, off);
    if ((uint32_t)(w >> 32) != seq) {
        fmpl_wait_t wt;
        fmpl_wait_init(&wt, peer);
        for (;;) {
            int n = fmpl_progress();
            w = fmpl_line_word(line, off);
            if ((uint32_t)(w >> 32) == seq)
                break;
            int rc = n ? FMPL_SUCCESS : fmpl_wait_idle(&wt);
            if (rc != FMPL_SUCCESS)
                return rc;
        }
    }
    if ((w & 0xff) != len)
        return FMPL_ERR_INTERNAL;   /* members disagree about the collective */
    if (len)
        memcpy(data, (const uint8_t *)line + off + 8, len);
    sl->recv_seq = seq;
    return FMPL_SUCCESS;
}
