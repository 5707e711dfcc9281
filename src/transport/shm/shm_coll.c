/*
 * shm_coll.c - the shm transport's "hardware" collectives: what the
 * SR8000's barrier and broadcast hardware do, done by the node's shared
 * memory.
 *
 * Barrier: one counter for the whole node, in rank 0's segment.  Every
 * process adds one and waits until the count reaches n times the number
 * of barriers so far: the counter itself is the sense, it never needs a
 * reset (64 bits do not wrap), and the critical path is the last
 * arrival's increment plus one read by everybody - two cache-line
 * transfers where a reset-and-flip counter needs three.
 *
 * Broadcast: the root copies the message into FMPL_SHM_HB_NSLOT slots of
 * its own segment, chunk by chunk, and publishes each chunk's sequence
 * number; every reader copies from the same slot and acknowledges in its
 * own segment.  A slot is reused once every reader has acknowledged the
 * chunk that was in it.  The root returns when its last chunk is in a
 * slot, and readers return when they have copied the last chunk, so
 * consecutive broadcasts pipeline.  Every process counts the chunks of
 * each root identically, so the counters need no exchange.
 *
 * Both are split-phase (transport.h): they never wait themselves.
 */
#include <string.h>

#include "fmpl.h"
#include "transport/shm/shm.h"

int fmpl_shm_barrier(fmpl_tl_t *tl, fmpl_tl_coll_t *st)
{
    fmpl_shm_t *s = fmpl_shm_of(tl);
    int rc = fmpl_shm_mapped(s, 0);   /* the counter is in rank 0's segment */
    if (rc != FMPL_SUCCESS)
        return rc;
    _Atomic uint64_t *count = fmpl_shm_coll_word(s, 0, FMPL_SHM_BAR_COUNT);
    if (!st->started) {
        st->started = 1;
        st->base = (s->bar_gen + 1) * (uint64_t)tl->size;   /* count when all are in */
        atomic_fetch_add_explicit(count, 1, memory_order_acq_rel);
    }
    if (atomic_load_explicit(count, memory_order_acquire) < st->base)
        return 0;
    s->bar_gen++;
    return 1;
}

static uint8_t *hb_slot(fmpl_shm_t *s, int root, uint64_t k)
{
    return fmpl_shm_common(s, root) + s->layout.hb_data_off +
           (size_t)(k % FMPL_SHM_HB_NSLOT) * FMPL_SHM_HB_CHUNK;
}

/* chunks of `root` that `reader` has copied (in the reader's segment) */
static _Atomic uint64_t *hb_ack(fmpl_shm_t *s, int reader, int root)
{
    return fmpl_shm_coll_word(s, reader, FMPL_SHM_HB_ACK + 64 * (size_t)root);
}

/* the slot for chunk k is free when every reader acknowledged k - NSLOT */
static int slot_free(fmpl_shm_t *s, int root, uint64_t k)
{
    if (k < FMPL_SHM_HB_NSLOT)
        return 1;
    for (int r = 0; r < s->tl->size; r++)
        if (r != root &&
            atomic_load_explicit(hb_ack(s, r, root), memory_order_acquire) <
                k - FMPL_SHM_HB_NSLOT + 1)
            return 0;
    return 1;
}

int fmpl_shm_bcast(fmpl_tl_t *tl, void *buf, size_t len, int root, fmpl_tl_coll_t *st)
{
    fmpl_shm_t *s = fmpl_shm_of(tl);
    uint64_t nchunk = (len + FMPL_SHM_HB_CHUNK - 1) / FMPL_SHM_HB_CHUNK;
    /* the root's slots, and the readers' acknowledgements the root reads */
    int rc = fmpl_shm_mapped(s, root);
    for (int r = 0; rc == FMPL_SUCCESS && tl->rank == root && r < tl->size; r++)
        rc = fmpl_shm_mapped(s, r);
    if (rc != FMPL_SUCCESS)
        return rc;
    if (!st->started) {
        st->started = 1;
        st->base = s->hb_count[root];
        st->pos = 0;
    }
    uint8_t *b = buf;
    while (st->pos < nchunk) {
        uint64_t k = st->base + st->pos;
        size_t off = (size_t)st->pos * FMPL_SHM_HB_CHUNK;
        size_t n = len - off < FMPL_SHM_HB_CHUNK ? len - off : FMPL_SHM_HB_CHUNK;
        _Atomic uint64_t *desc =
            fmpl_shm_coll_word(s, root, FMPL_SHM_HB_DESC + 64 * (size_t)(k % FMPL_SHM_HB_NSLOT));
        if (tl->rank == root) {
            if (!slot_free(s, root, k))
                return 0;
            memcpy(hb_slot(s, root, k), b + off, n);
            atomic_store_explicit(desc, k + 1, memory_order_release);
        } else {
            if (atomic_load_explicit(desc, memory_order_acquire) != k + 1)
                return 0;
            memcpy(b + off, hb_slot(s, root, k), n);
            atomic_store_explicit(hb_ack(s, tl->rank, root), k + 1, memory_order_release);
        }
        st->pos++;
    }
    s->hb_count[root] = st->base + nchunk;
    return 1;
}
