/*
 * signal.c - the lightest message FMPL has: written one way, no
 * handshake.  The paper's barrier uses the same kind of signal (a
 * TCW-reuse kick); here it also carries data, which is all a small
 * allreduce or allgather needs:
 *   up to 24 bytes     inside the cache-line record itself;
 *   up to eager_max    written first into the receiver's EAGER area (memory
 *   (8 KiB; the        from the transport's mem_alloc, which peers write
 *   transport's        directly), then the record, ordered after it.
 *   tl.sig_eager)
 *
 * On the communicator's signal index the line a peer writes to us holds
 * two 32-byte halves, used alternately by sequence number (k-th signal in
 * half k & 1):  word = seq << 32 | eager << 31 | length, then up to 24
 * bytes.  The eager area has, per sender, two slots the same way.  The
 * sequence numbers are the (peer, index) slot's send/receive counters, so
 * they survive a communicator slot being freed and reused.
 *
 * Two channels.  FMPL_SIG_SYNC (barrier, allreduce, allgather): two
 * halves (and two eager slots) are enough without any acknowledgement,
 * because the k-th signal to a peer is written only after the sender
 * finished the collective that carried signal k-2 to the same peer, and
 * each of those collectives sends at most one signal to a given peer and
 * completes only when every member has entered it; so by then the peer
 * has finished the collective before, and read signal k-2.
 * FMPL_SIG_FLOW (broadcast, where the root may run ahead of everybody):
 * the receiver acknowledges each signal with its sequence number in a line
 * of its own (index FMPL_CI_ACK), and the sender of signal k first waits
 * for the acknowledgement of k-2 - almost always there already.
 */
#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"
#include "base/log.h"
#include "p2p/progress.h"

#define HALF 32
#define EAGER_BIT (1ull << 31)
/* largest eager area of one communicator: beyond, no eager signals */
#define EAGER_AREA_MAX (4u << 20)

static size_t eager_off(const fmpl_comm_rec_t *c, int sender, int chan, uint32_t seq)
{
    return (((size_t)sender * 2 + (size_t)chan) * 2 + (seq & 1)) * c->eager_max;
}

static int chan_idx(const fmpl_comm_rec_t *c, int chan)
{
    return fmpl_cidx(c, chan == FMPL_SIG_SYNC ? FMPL_CI_SIG : FMPL_CI_FLOW);
}

/*
 * Set up the communicator's eager area the first time a collective needs
 * it.  Collective: every member calls it at the same point (the same
 * collective with the same size), and all agree on the outcome because
 * they all see every member's answer.
 */
int fmpl_sig_eager(fmpl_comm_rec_t *c)
{
    if (c->eager_state)
        return c->eager_state > 0;
    fmpl_tl_t *tl = &fmpl_g.tl;
    /* per sender: 2 channels x 2 slots; smaller slots for big groups */
    size_t slot = EAGER_AREA_MAX / ((size_t)c->size * 4) / 64 * 64;
    size_t most = tl->sig_eager ? tl->sig_eager : FMPL_SIG_EAGER;
    if (most > FMPL_SIG_EAGER_MAX)
        most = FMPL_SIG_EAGER_MAX;
    c->eager_max = (unsigned)(slot < most ? slot : most);
    size_t len = (size_t)c->size * 4 * c->eager_max;
    typedef struct { fmpl_tl_key_t key; uint64_t ok; } pub_t;
    pub_t *all = calloc((size_t)c->size, sizeof *all);
    c->eager_keys = calloc((size_t)c->size, sizeof *c->eager_keys);
    if (c->eager_max > FMPL_SIG_MAX)
        c->eager = fmpl_tl_mem_alloc(tl, len);
    c->eager_reg = all && c->eager_keys && c->eager &&
                   fmpl_tl_mem_reg(tl, c->eager, len, &c->eager_key) == FMPL_SUCCESS;
    int ok = c->eager_reg;
    if (ok)
        all[c->rank].key = c->eager_key;
    c->eager_state = -1;
    if (all) {
        all[c->rank].ok = (uint64_t)ok;
        if (fmpl_coll_allgather(c, all, sizeof *all) == FMPL_SUCCESS) {
            c->eager_state = 1;
            for (int i = 0; i < c->size; i++) {
                if (!all[i].ok)
                    c->eager_state = -1;
                if (c->eager_keys)
                    c->eager_keys[i] = all[i].key;
            }
        }
    }
    free(all);
    if (c->eager_state < 0)
        fmpl_sig_eager_free(c);
    return c->eager_state > 0;
}

void fmpl_sig_eager_free(fmpl_comm_rec_t *c)
{
    if (c->eager_reg)
        fmpl_tl_mem_dereg(&fmpl_g.tl, &c->eager_key);
    c->eager_reg = 0;
    if (c->eager)
        fmpl_tl_mem_free(&fmpl_g.tl, c->eager);
    free(c->eager_keys);
    c->eager = NULL;
    c->eager_keys = NULL;
}

/* `burst`: the caller posts several before it waits (fmpl_sig_post),
 * not one (fmpl_sig_send): the transport's hint (FMPL_TL_PUT_BURST) */
static int post(fmpl_comm_rec_t *c, int chan, int peer, const void *data, unsigned len,
                fmpl_tl_comp_t *comp, int burst)
{
    fmpl_tl_t *tl = &fmpl_g.tl;
    int wpeer = c->ranks[peer], idx = chan_idx(c, chan);
    fmpl_slot_t *sl = fmpl_slot(wpeer, idx);
    uint32_t seq = fmpl_seq_next(sl->send_seq);
    struct { uint64_t word; uint8_t data[FMPL_SIG_MAX]; } rec;
    int rc = FMPL_SUCCESS;
    fmpl_wait_t w;
    fmpl_wait_init(&w, wpeer);
    if (chan == FMPL_SIG_FLOW && seq > 2) {
        /* the slot we are about to write must have been read */
        volatile uint8_t *ack = fmpl_tl_mbox_in(tl, wpeer, fmpl_cidx(c, FMPL_CI_ACK));
        while ((int32_t)((uint32_t)fmpl_line_word(ack, 0) - (seq - 2)) < 0)
            if (fmpl_progress() == 0 && (rc = fmpl_wait_idle(&w)) != FMPL_SUCCESS)
                return rc;
    }
    if (len <= FMPL_SIG_MAX) {
        rec.word = (uint64_t)seq << 32 | len;
        if (len)
            memcpy(rec.data, data, len);
        /* no data travels before it, so it may overtake queued puts */
        rc = fmpl_tl_notify(tl, wpeer, idx, (seq & 1) * HALF, &rec, 8 + len,
                            FMPL_TL_NOTIFY_UNORDERED | (burst ? FMPL_TL_NOTIFY_BURST : 0),
                            NULL);
    } else {
        if (len > c->eager_max || c->eager_state <= 0)
            return FMPL_ERR_INTERNAL;
        rec.word = (uint64_t)seq << 32 | EAGER_BIT | len;
        rc = fmpl_tl_put(tl, wpeer, data, len, &c->eager_keys[peer],
                         eager_off(c, c->rank, chan, seq), burst ? FMPL_TL_PUT_BURST : 0, comp);
        if (rc == FMPL_SUCCESS)
            rc = fmpl_tl_notify(tl, wpeer, idx, (seq & 1) * HALF, &rec, 8, 0, comp);
        /* `data` may change once *comp has nothing pending */
    }
    if (rc == FMPL_SUCCESS)
        sl->send_seq = seq;
    return rc;
}

int fmpl_sig_send(fmpl_comm_rec_t *c, int chan, int peer, const void *data, unsigned len)
{
    fmpl_tl_comp_t comp = { 0, FMPL_SUCCESS };
    int rc = post(c, chan, peer, data, len, &comp, 0);
    int wrc = fmpl_wait_comp(&comp, -1);
    return rc != FMPL_SUCCESS ? rc : wrc;
}

int fmpl_sig_post(fmpl_comm_rec_t *c, int chan, int peer, const void *data, unsigned len,
                  fmpl_tl_comp_t *comp)
{
    return post(c, chan, peer, data, len, comp, 1);
}

/* Wait for the next signal from `peer`; *data points at its bytes (in
 * the record or the eager area), valid until fmpl_sig_done(). */
int fmpl_sig_peek(fmpl_comm_rec_t *c, int chan, int peer, unsigned len, const void **data)
{
    int wpeer = c->ranks[peer], idx = chan_idx(c, chan);
    uint32_t seq = fmpl_seq_next(fmpl_slot(wpeer, idx)->recv_seq);
    volatile uint8_t *line = fmpl_tl_mbox_in(&fmpl_g.tl, wpeer, idx);
    unsigned off = (seq & 1) * HALF;
    uint64_t w = fmpl_line_word(line, off);
    if ((uint32_t)(w >> 32) != seq) {
        fmpl_wait_t wt;
        fmpl_wait_init(&wt, wpeer);
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
    if ((w & ~EAGER_BIT & 0xffffffffu) != len)
        return FMPL_ERR_INTERNAL;   /* members disagree about the collective */
    /* where the bytes are must hold them: a signal in the record fits it,
     * an eager one its slot (a peer's broken record must not make us read
     * past either) */
    if ((w & EAGER_BIT) ? c->eager_state <= 0 || len > c->eager_max : len > FMPL_SIG_MAX) {
        fmpl_log_err("rank %d broke the protocol on index %d (a signal of %u bytes %s, "
                     "record %#llx)", wpeer, idx, len,
                     (w & EAGER_BIT) ? "in no eager slot" : "in a record",
                     (unsigned long long)w);
        return FMPL_ERR_INTERNAL;
    }
    *data = (w & EAGER_BIT) ? (const void *)(c->eager + eager_off(c, peer, chan, seq))
                            : (const void *)(line + off + 8);
    return FMPL_SUCCESS;
}

/* The signal fmpl_sig_peek() returned has been used: its slot is free. */
int fmpl_sig_done(fmpl_comm_rec_t *c, int chan, int peer)
{
    int wpeer = c->ranks[peer], idx = chan_idx(c, chan);
    fmpl_slot_t *sl = fmpl_slot(wpeer, idx);
    sl->recv_seq = fmpl_seq_next(sl->recv_seq);
    if (chan != FMPL_SIG_FLOW)
        return FMPL_SUCCESS;
    uint64_t ack = sl->recv_seq;
    return fmpl_tl_notify(&fmpl_g.tl, wpeer, fmpl_cidx(c, FMPL_CI_ACK), 0, &ack, sizeof ack,
                          FMPL_TL_NOTIFY_UNORDERED, NULL);
}

int fmpl_sig_wait(fmpl_comm_rec_t *c, int chan, int peer, void *data, unsigned len)
{
    const void *p;
    int rc = fmpl_sig_peek(c, chan, peer, len, &p);
    if (rc != FMPL_SUCCESS)
        return rc;
    if (len)
        fmpl_coll_copy(data, p, len);
    return fmpl_sig_done(c, chan, peer);
}
