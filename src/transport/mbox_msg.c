/*
 * mbox_msg.c - building and applying mailbox messages (mbox_msg.h).
 */
#include <stdlib.h>
#include <string.h>

#include "fmpl.h"
#include "base/log.h"
#include "transport/mbox_msg.h"

int fmpl_mmsg_open(fmpl_mmsg_box_t *b, int rank, int size, int nidx, unsigned ext)
{
    b->rank = rank;
    b->size = size;
    b->nidx = nidx;
    if (ext > FMPL_TL_EXT_MAX || ext % FMPL_TL_LINE)
        return FMPL_ERR_ARG;
    b->slot = FMPL_TL_LINE + ext;
    b->rec_max = b->slot - 32;
    b->len = (size_t)size * (size_t)nidx * b->slot;
    /* calloc: a block this large is fresh zero pages that it does not
     * write, so only the slots peers write become resident (1024 ranks
     * with 256-byte extensions: 241 MB of address space, a few pages a
     * peer that talks); lines aligned to the cache's */
    b->mem = calloc(1, b->len + FMPL_TL_LINE);
    if (!b->mem)
        return FMPL_ERR_NOMEM;
    b->mbox = (uint8_t *)(((uintptr_t)b->mem + FMPL_TL_LINE - 1) & ~(uintptr_t)(FMPL_TL_LINE - 1));
    return FMPL_SUCCESS;
}

void fmpl_mmsg_close(fmpl_mmsg_box_t *b)
{
    free(b->mem);
    b->mem = NULL;
    b->mbox = NULL;
}

int fmpl_mmsg_notify_hdr(const fmpl_mmsg_box_t *b, fmpl_mmsg_t *h, int rank, int idx,
                         unsigned off, unsigned len)
{
    if (len < 8 || len > b->rec_max || off % 8 || off >= FMPL_TL_LINE || off + len > b->slot)
        return 0;
    h->kind = FMPL_MMSG_NOTIFY;
    h->off = (uint8_t)off;
    h->len = (uint16_t)len;
    h->writer = rank;
    h->idx = (uint32_t)idx;
    h->cookie = 0;
    return 1;
}

size_t fmpl_mmsg_notify(const fmpl_mmsg_box_t *b, fmpl_mmsg_buf_t *m, int rank, int idx,
                        unsigned off, const void *rec, unsigned len)
{
    if (!fmpl_mmsg_notify_hdr(b, &m->m, rank, idx, off, len))
        return 0;
    memcpy(fmpl_mmsg_rec(&m->m), rec, len);
    return FMPL_MMSG_HDR + len;
}

size_t fmpl_mmsg_cas_request(fmpl_mmsg_box_t *b, fmpl_mmsg_t *m, int rank, int idx,
                             unsigned off, uint64_t expect, uint64_t desired)
{
    *m = (fmpl_mmsg_t){ .kind = FMPL_MMSG_CAS, .off = (uint8_t)off, .writer = rank,
                        .idx = (uint32_t)idx, .cookie = ++b->cas_cookie };
    m->u.cas.expect = expect;
    m->u.cas.desired = desired;
    b->cas = (fmpl_tl_comp_t){ 1, FMPL_SUCCESS };
    return FMPL_MMSG_HDR + sizeof m->u.cas;
}

/* the slot (writer, idx) and bytes [off, off + len) are in the mailbox:
 * a record starts in the line, and may run on to the slot's end */
static int slot_ok(const fmpl_mmsg_box_t *b, int writer, const fmpl_mmsg_t *m, unsigned len)
{
    return writer >= 0 && writer < b->size && m->idx < (unsigned)b->nidx && m->off % 8 == 0 &&
           m->off < FMPL_TL_LINE && len >= 8 && m->off + len <= b->slot;
}

void fmpl_mmsg_cas_local(fmpl_mmsg_box_t *b, int peer, int idx, unsigned off, uint64_t expect,
                         uint64_t desired, uint64_t *res)
{
    *res = expect;
    atomic_compare_exchange_strong_explicit(fmpl_mmsg_word(b, peer, idx, off), res, desired,
                                            memory_order_acq_rel, memory_order_acquire);
}

int fmpl_mmsg_cas(fmpl_mmsg_box_t *b, int peer, int idx, unsigned off, int outgoing,
                  uint64_t expect, uint64_t desired, uint64_t *old)
{
    if (off % 8 || off + 8 > FMPL_TL_LINE)
        return FMPL_ERR_ARG;
    uint64_t res;
    if (!outgoing) {
        fmpl_mmsg_cas_local(b, peer, idx, off, expect, desired, &res);
    } else {
        fmpl_mmsg_t m;
        size_t n = fmpl_mmsg_cas_request(b, &m, b->rank, idx, off, expect, desired);
        int rc = b->request(b, peer, &m, n);
        if (rc == FMPL_SUCCESS)
            rc = b->wait(b, &b->cas.pending, peer);
        if (rc != FMPL_SUCCESS) {
            b->cas.pending = 0;    /* a late answer finds nobody waiting */
            return rc;
        }
        atomic_thread_fence(memory_order_acquire);   /* cas_old came before */
        res = b->cas_old;
    }
    if (old)
        *old = res;
    return res == expect ? FMPL_SUCCESS : FMPL_ERR_BUSY;
}

/* Relaxed atomic stores of n bytes to dst (8-aligned): words, then the
 * tail byte by byte, so that no byte beyond the record is written. */
static void store_rest(uint8_t *dst, const uint8_t *src, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t v;
        memcpy(&v, src + i, 8);
        atomic_store_explicit((_Atomic uint64_t *)(void *)(dst + i), v, memory_order_relaxed);
    }
    for (; i < n; i++)
        atomic_store_explicit((_Atomic uint8_t *)(void *)(dst + i), src[i],
                              memory_order_relaxed);
}

void fmpl_mmsg_apply(fmpl_mmsg_box_t *b, int from, const fmpl_mmsg_t *m, size_t len)
{
    if (len < FMPL_MMSG_HDR)
        return;
    if (from != FMPL_MMSG_FROM_ANY && (int)m->writer != from) {
        if (from == FMPL_MMSG_FROM_STRANGER)
            fmpl_log_err("a message from outside the job, written as rank %d's: dropped",
                         (int)m->writer);
        else
            fmpl_log_err("rank %d sent a message written as rank %d's: dropped", from,
                         (int)m->writer);
        return;
    }
    int w = m->writer;
    switch (m->kind) {
    case FMPL_MMSG_NOTIFY: {
        if (len < FMPL_MMSG_HDR + m->len || !slot_ok(b, w, m, m->len))
            break;
        _Atomic uint64_t *word = fmpl_mmsg_word(b, w, (int)m->idx, m->off);
        const uint8_t *rec = (const uint8_t *)m + FMPL_MMSG_HDR;
        uint64_t first;
        memcpy(&first, rec, sizeof first);
        /* the rest of the record, then the word that publishes it; the
         * rest by atomic stores, for a reader may be reading the record
         * this one replaces (p2p.h, fmpl_line_copy) */
        store_rest((uint8_t *)(void *)word + 8, rec + 8, m->len - 8u);
        atomic_store_explicit(word, first, memory_order_release);
        break;
    }
    case FMPL_MMSG_CAS: {
        if (len < FMPL_MMSG_HDR + sizeof m->u.cas || !slot_ok(b, w, m, 8) ||
            m->off + 8 > FMPL_TL_LINE)
            break;
        fmpl_mmsg_t a = { .kind = FMPL_MMSG_ANSWER, .writer = b->rank, .cookie = m->cookie };
        fmpl_mmsg_cas_local(b, w, (int)m->idx, m->off, m->u.cas.expect, m->u.cas.desired,
                            &a.u.old);
        b->answer(b, w, &a, FMPL_MMSG_HDR + sizeof a.u.old);
        break;
    }
    case FMPL_MMSG_ANSWER:
        if (len >= FMPL_MMSG_HDR + sizeof m->u.old && m->cookie == b->cas_cookie &&
            b->cas.pending > 0) {
            b->cas_old = m->u.old;
            __atomic_fetch_sub(&b->cas.pending, 1, __ATOMIC_RELEASE);
        }
        break;
    default:
        break;                     /* a failed receive: nothing came */
    }
}
