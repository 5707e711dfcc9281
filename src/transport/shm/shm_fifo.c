/*
 * shm_fifo.c - the pipelined path: one FIFO per ordered pair of processes.
 *
 * This is the transport's emulated NIC.  The sender copies data into
 * the fifo_nchunk chunks (shm.h) of its own segment and publishes each chunk's
 * descriptor; the receiver's progress copies each chunk to its final
 * place (the key's address in the receiver) and acknowledges.  Sender and
 * receiver copy at the same time, so a medium message costs little more
 * than one copy.  Notifications queued behind FIFO data travel in the FIFO
 * and are applied by the receiver in order: flag after data.
 *
 * When the FIFO is full the rest waits in a per-peer software queue that
 * fmpl_shm_fifo_push() moves on as acknowledgements arrive.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fmpl.h"
#include "base/clock.h"
#include "base/log.h"
#include "transport/seg.h"
#include "transport/shm/shm.h"
#include "transport/wait.h"

static fmpl_shm_fifo_t out_fifo(fmpl_shm_t *s, int peer)
{
    return fmpl_shm_fifo(s, s->tl->rank, peer);
}

/* Room for `want` more chunks with at most `limit` in flight?  Re-read
 * the receiver's ack only when needed. */
static int room_for(fmpl_shm_t *s, int peer, uint64_t want, uint64_t limit)
{
    fmpl_shm_peer_t *p = &s->peers[peer];
    if (p->produced - p->acked + want <= limit)
        return 1;
    p->acked = atomic_load_explicit(&fmpl_shm_ack(s, peer, s->tl->rank)->consumed,
                                    memory_order_acquire);
    return p->produced - p->acked + want <= limit;
}

static int has_room(fmpl_shm_t *s, int peer)
{
    return room_for(s, peer, 1, s->layout.fifo_nchunk);
}

int fmpl_shm_fifo_busy(fmpl_shm_t *s, int peer)
{
    fmpl_shm_peer_t *p = &s->peers[peer];
    if (p->pend)
        return 1;
    if (p->produced != p->acked)
        p->acked = atomic_load_explicit(&fmpl_shm_ack(s, peer, s->tl->rank)->consumed,
                                        memory_order_acquire);
    if (p->produced != p->acked)
        return 1;
    s->direct[peer].queued = 0;    /* records may go straight to the line again */
    return 0;
}

/* A descriptor and the `span` chunks from it: the receiver looks for the
 * next one span chunks on (a span never wraps the ring). */
static void publish(fmpl_shm_t *s, int peer, fmpl_shm_chunk_t *d, unsigned span)
{
    fmpl_shm_peer_t *p = &s->peers[peer];
    atomic_store_explicit(&d->seq, p->produced + 1, memory_order_release);
    p->produced += span;
    s->direct[peer].queued = 1;    /* ordered records now follow it here */
}

/* Copy as many chunks of [src, src+len) as fit; returns bytes sent.  A
 * stream (shm.h) goes FMPL_SHM_SPAN chunks to a descriptor and uses the
 * ring's first FMPL_SHM_STREAM_DEPTH bytes only: from there a SKIP
 * descriptor sends the receiver back to the start, so the memory the
 * two cores pass between them stays in their caches. */
static size_t push_data(fmpl_shm_t *s, int peer, const uint8_t *src, size_t len,
                        const fmpl_tl_key_t *key, uint64_t roff, int stream)
{
    fmpl_shm_peer_t *p = &s->peers[peer];
    fmpl_shm_fifo_t f = out_fifo(s, peer);
    uint64_t nchunk = s->layout.fifo_nchunk;
    /* A stream leaves a few chunks free: a stream that stalls and ends by
     * CMA (stream_stalled) still needs room behind its data for the
     * record that completes it, and so may the next few. */
    uint64_t keep = stream && nchunk >= 8 * FMPL_SHM_SPAN ? FMPL_SHM_SPAN : 0;
    size_t done = 0;
    while (done < len) {
        unsigned k = (unsigned)(p->produced % nchunk), span = 1;
        if (stream && k >= FMPL_SHM_STREAM_DEPTH / FMPL_SHM_CHUNK) {
            unsigned skip = (unsigned)(nchunk - k);
            if (!room_for(s, peer, skip + keep, nchunk))
                break;
            fmpl_shm_chunk_t *d = &f.desc[k];
            d->kind = FMPL_SHM_CH_SKIP;
            d->len = 0;
            d->key_id = skip;
            publish(s, peer, d, skip);
            continue;
        }
        if (stream) {
            size_t need = (len - done + FMPL_SHM_CHUNK - 1) / FMPL_SHM_CHUNK;
            span = FMPL_SHM_SPAN;
            if (span > nchunk - k)
                span = (unsigned)(nchunk - k);
            if (span > need)
                span = (unsigned)need;
        }
        if (!room_for(s, peer, span + keep, nchunk))
            break;
        size_t n = len - done < (size_t)span * FMPL_SHM_CHUNK ? len - done
                                                              : (size_t)span * FMPL_SHM_CHUNK;
        fmpl_shm_chunk_t *d = &f.desc[k];
        memcpy(fmpl_shm_fifo_chunk(f, k), src + done, n);
        d->kind = stream == FMPL_SHM_STREAM_NT ? FMPL_SHM_CH_DATA_NT : FMPL_SHM_CH_DATA;
        d->len = (uint32_t)n;
        d->addr = key->addr + roff + done;
        d->key_kind = key->kind;
        d->key_id = key->id;
        publish(s, peer, d, span);
        done += n;
    }
    return done;
}

static int push_notify(fmpl_shm_t *s, int peer, int idx, unsigned off,
                       const void *rec, unsigned len)
{
    if (!has_room(s, peer))
        return 0;
    fmpl_shm_peer_t *p = &s->peers[peer];
    fmpl_shm_fifo_t f = out_fifo(s, peer);
    unsigned k = (unsigned)(p->produced % s->layout.fifo_nchunk);
    fmpl_shm_chunk_t *d = &f.desc[k];
    d->kind = FMPL_SHM_CH_NOTIFY;
    d->len = len;
    d->addr = (uint64_t)idx;
    d->key_kind = off;
    memcpy(len <= sizeof d->rec ? d->rec : fmpl_shm_fifo_chunk(f, k), rec, len);
    publish(s, peer, d, 1);
    return 1;
}

/* a DATA_NOTIFY chunk's record (both sides check it): 8..DREC_MAX bytes,
 * 8-aligned, in the slot */
static int dn_rec_ok(const fmpl_shm_t *s, uint32_t w)
{
    uint32_t off = FMPL_SHM_DN_OFF(w), len = FMPL_SHM_DN_LEN(w);
    return len >= 8 && len <= FMPL_SHM_DREC_MAX && off % 8 == 0 && off <= s->layout.slot - len;
}

/* Data and its record in one chunk, if both fit one, the FIFO has room
 * now and nothing is queued before it (else 0: the caller puts and
 * notifies as two). */
int fmpl_shm_fifo_put_notify(fmpl_shm_t *s, int peer, const void *src, size_t len,
                             uint64_t addr, int idx, unsigned off, const void *rec,
                             unsigned reclen)
{
    fmpl_shm_peer_t *p = &s->peers[peer];
    if (p->pend || len > FMPL_SHM_CHUNK || idx < 0 || idx >= s->layout.nidx ||
        reclen > FMPL_SHM_DREC_MAX || !dn_rec_ok(s, FMPL_SHM_DN_WORD(off, reclen)) ||
        fmpl_shm_contact(s, peer) != FMPL_SUCCESS || !has_room(s, peer))
        return 0;
    fmpl_shm_fifo_t f = out_fifo(s, peer);
    unsigned k = (unsigned)(p->produced % s->layout.fifo_nchunk);
    fmpl_shm_chunk_t *d = &f.desc[k];
    memcpy(fmpl_shm_fifo_chunk(f, k), src, len);
    d->kind = FMPL_SHM_CH_DATA_NOTIFY;
    d->len = (uint32_t)len;
    d->addr = addr;
    d->key_kind = (uint32_t)idx;
    d->key_id = FMPL_SHM_DN_WORD(off, reclen);
    memcpy(d->rec, rec, reclen);
    publish(s, peer, d, 1);
    return 1;
}

static int enqueue(fmpl_shm_t *s, int peer, fmpl_shm_pend_t *e)
{
    fmpl_shm_peer_t *p = &s->peers[peer];
    fmpl_shm_pend_t *n = s->pend_free;
    if (n)
        s->pend_free = n->next;
    else if (!(n = malloc(sizeof *n)))
        return FMPL_ERR_NOMEM;
    *n = *e;
    n->next = NULL;
    s->direct[peer].queued = 1;
    if (p->pend_tail)
        p->pend_tail->next = n;
    else {
        p->pend = n;
        s->npend++;
    }
    p->pend_tail = n;
    return FMPL_SUCCESS;
}

int fmpl_shm_fifo_put(fmpl_shm_t *s, int peer, const void *src, size_t len,
                      const fmpl_tl_key_t *key, uint64_t roff, int stream,
                      fmpl_tl_comp_t *comp)
{
    size_t done = 0;
    int rc = fmpl_shm_contact(s, peer);
    if (rc != FMPL_SUCCESS)
        return rc;
    if (!s->peers[peer].pend)
        done = push_data(s, peer, src, len, key, roff, stream);
    if (done == len)
        return FMPL_SUCCESS;
    fmpl_shm_pend_t e = { .kind = FMPL_SHM_CH_DATA, .src = (const uint8_t *)src + done,
                          .len = len - done, .key = *key, .roff = roff + done,
                          .comp = comp, .stream = stream };
    rc = enqueue(s, peer, &e);
    if (rc == FMPL_SUCCESS)
        comp->pending++;
    return rc;
}

int fmpl_shm_fifo_notify(fmpl_shm_t *s, int peer, int idx, unsigned off,
                         const void *rec, unsigned len, fmpl_tl_comp_t *comp)
{
    int rc = fmpl_shm_contact(s, peer);
    if (rc != FMPL_SUCCESS)
        return rc;
    if (!s->peers[peer].pend && push_notify(s, peer, idx, off, rec, len))
        return FMPL_SUCCESS;
    fmpl_shm_pend_t e = { .kind = FMPL_SHM_CH_NOTIFY, .idx = idx, .off = off,
                          .reclen = len, .comp = comp };
    memcpy(e.rec, rec, len);
    rc = enqueue(s, peer, &e);
    if (rc == FMPL_SUCCESS && comp)
        comp->pending++;
    return rc;
}

/* A stream whose receiver has taken nothing for FMPL_SHM_STREAM_PATIENCE
 * (it computes, or waits elsewhere): write the rest by CMA, as a large
 * put would without streaming.  The receiver applies what the FIFO holds
 * and the record queued behind it later; the bytes are disjoint. */
static void stream_stalled(fmpl_shm_t *s, int peer, fmpl_shm_pend_t *e, size_t moved)
{
    fmpl_shm_peer_t *p = &s->peers[peer];
    if (!s->cma || !p->cma_ok || (e->key.kind & 0xff) != FMPL_SHM_KEY_USER)
        return;
    double now = fmpl_rtime();
    if (moved || e->since == 0 || p->acked != e->seen) {
        e->seen = p->acked;
        e->since = now;
        return;
    }
    if (now - e->since < FMPL_SHM_STREAM_PATIENCE)
        return;
    int rc = fmpl_cma_copy(p->pid, (void *)(uintptr_t)e->src, e->len, e->key.addr + e->roff, 1);
    if (rc == 0 || rc == -ESRCH) {
        if (rc && e->comp)         /* gone: the put fails, as a CMA put would */
            e->comp->status = fmpl_tl_peer_gone(s->tl, peer, (int)p->pid);
        e->len = 0;
        return;
    }
    /* refused (ptrace policy) or a bad address: the FIFO carries the rest,
     * and the receiver's drain reports an address it does not know */
    if (rc != -EFAULT)
        p->cma_ok = 0;
    e->stream = 0;
}

/* Move queued work into the FIFO, in order.  Returns chunks published. */
int fmpl_shm_fifo_push(fmpl_shm_t *s, int peer)
{
    fmpl_shm_peer_t *p = &s->peers[peer];
    uint64_t before = p->produced;
    while (p->pend) {
        fmpl_shm_pend_t *e = p->pend;
        if (e->kind == FMPL_SHM_CH_DATA) {
            size_t n = push_data(s, peer, e->src, e->len, &e->key, e->roff, e->stream);
            e->src += n;
            e->len -= n;
            e->roff += n;
            if (e->len && e->stream)
                stream_stalled(s, peer, e, n);
            if (e->len)
                break;
            if (e->comp)
                e->comp->pending--;
        } else if (push_notify(s, peer, e->idx, e->off, e->rec, e->reclen)) {
            if (e->comp)
                e->comp->pending--;
        } else {
            break;
        }
        p->pend = e->next;
        if (!p->pend) {
            p->pend_tail = NULL;
            s->npend--;
        }
        e->next = s->pend_free;
        s->pend_free = e;
    }
    return (int)(p->produced - before);
}

/* Apply what `peer` has queued for us.  Returns chunks consumed. */
int fmpl_shm_fifo_drain(fmpl_shm_t *s, int peer)
{
    fmpl_shm_peer_t *p = &s->peers[peer];
    fmpl_shm_fifo_t f = fmpl_shm_fifo(s, peer, s->tl->rank);
    uint64_t n = p->consumed;
    for (;;) {
        unsigned k = (unsigned)(n % s->layout.fifo_nchunk);
        fmpl_shm_chunk_t *d = &f.desc[k];
        if (atomic_load_explicit(&d->seq, memory_order_acquire) != n + 1)
            break;
        /* the descriptor is the peer's word: what it says is checked
         * where we can (a chunk's length, a record's place in our
         * lines); ordinary memory is named by its address alone, and a
         * rank of the job may write our memory anyway (cross-memory
         * attach, docs/security.md) */
        uint32_t len = d->len, kind = d->kind;
        uint64_t span = 1;         /* (64 bits: a forged length must not wrap it to 0) */
        int data = kind == FMPL_SHM_CH_DATA || kind == FMPL_SHM_CH_DATA_NT;
        if (data && len > FMPL_SHM_CHUNK)
            span = ((uint64_t)len + FMPL_SHM_CHUNK - 1) / FMPL_SHM_CHUNK;   /* a stream's */
        if (data && span <= s->layout.fifo_nchunk - k) {
            fmpl_tl_key_t key = { .addr = d->addr, .kind = d->key_kind, .id = d->key_id };
            uint8_t *dst = fmpl_shm_key_local(s, &key, 0, len);
            if (dst && kind == FMPL_SHM_CH_DATA_NT)
                fmpl_shm_copy_nt(dst, fmpl_shm_fifo_chunk(f, k), len);
            else if (dst)
                memcpy(dst, fmpl_shm_fifo_chunk(f, k), len);
            else
                fmpl_log_err("data from rank %d for an unknown region dropped", peer);
        } else if (kind == FMPL_SHM_CH_NOTIFY && d->addr < (uint64_t)s->layout.nidx &&
                   len >= 8 && len <= FMPL_SHM_REC_MAX && d->key_kind % 8 == 0 &&
                   d->key_kind <= s->layout.slot - len) {
            uint8_t *line = fmpl_shm_line(s, peer, s->tl->rank, (int)d->addr);
            fmpl_tl_line_write(line, d->key_kind,
                                len <= sizeof d->rec ? d->rec : fmpl_shm_fifo_chunk(f, k), len);
        } else if (kind == FMPL_SHM_CH_SKIP && d->key_id >= 1 &&
                   d->key_id <= s->layout.fifo_nchunk - k) {
            span = d->key_id;      /* a stream went back to the ring's start */
        } else if (kind == FMPL_SHM_CH_DATA_NOTIFY && len <= FMPL_SHM_CHUNK &&
                   d->key_kind < (uint32_t)s->layout.nidx && dn_rec_ok(s, d->key_id)) {
            /* the data where the receive said, then its record: the
             * reader of the line sees the data (the copy is ours) */
            memcpy((void *)(uintptr_t)d->addr, fmpl_shm_fifo_chunk(f, k), len);
            uint8_t *line = fmpl_shm_line(s, peer, s->tl->rank, (int)d->key_kind);
            fmpl_tl_line_write(line, FMPL_SHM_DN_OFF(d->key_id), d->rec,
                                FMPL_SHM_DN_LEN(d->key_id));
        } else {
            fmpl_log_err("a malformed FIFO chunk from rank %d dropped (kind %u, %u bytes)",
                         peer, kind, len);
            span = 1;
        }
        n += span;
    }
    int got = (int)(n - p->consumed);
    p->next = &f.desc[n % s->layout.fifo_nchunk].seq;
    if (got) {
        p->consumed = n;
        atomic_store_explicit(&fmpl_shm_ack(s, s->tl->rank, peer)->consumed, n,
                              memory_order_release);
    }
    return got;
}
