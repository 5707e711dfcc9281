/*
 * tcw_nia.c - transfer control words, kicks, and what the NIA does with
 * them (Tatebe et al. 2002, 3.1 and 4.2).
 *
 * A TCW describes one remote-DMA write: source, size, destination node,
 * remote-DMA id, offset.  A kick hands the TCW to the node's NIA, which
 * here (1) checks it against the destination's area table, (2) moves the
 * bytes - into the destination's memory at once for a data area, or, for
 * the matching area, as a record the destination sees at the modeled
 * time - and (3) gives the transfer to the engine (emu/), which cuts it
 * into packets and times them through the crossbars.  One NIA per node:
 * every kick of the node's ranks leaves in the order of its time, so a
 * completion flag kicked after its data is seen after it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fmpl.h"
#include "base/boot.h"
#include "base/log.h"
#include "transport/seg.h"
#include "transport/tcw/tcw.h"
#include "transport/wait.h"

typedef struct tcw_word {
    uint64_t src;                  /* local source */
    uint64_t size;
    int32_t dst;                   /* destination rank (its node is the NIA's business) */
    uint32_t area;                 /* remote-DMA id there */
    uint64_t off;                  /* offset in that area */
} tcw_word_t;

static size_t mbox_slot(const fmpl_tl_t *tl, int peer, int idx, unsigned half)
{
    return ((size_t)peer * (size_t)tl->nidx + (size_t)idx) * 2 + half;
}

int fmpl_tcw_nia_init(fmpl_tcw_t *t)
{
    fmpl_tl_t *tl = t->et->tl;
    size_t n = (size_t)tl->size * (size_t)tl->nidx * 2;
    /* zero pages (seg.h): the words and their sources of a peer become
     * resident when we first write to it */
    t->mbox_tcw = fmpl_seg_zalloc(n * sizeof *t->mbox_tcw);
    t->staging = fmpl_seg_zalloc(n * FMPL_TCW_HALF);
    t->data_tcw = calloc((size_t)tl->size, sizeof *t->data_tcw);
    if (!t->mbox_tcw || !t->staging || !t->data_tcw)
        return FMPL_ERR_NOMEM;
    return FMPL_SUCCESS;
}

void fmpl_tcw_nia_fini(fmpl_tcw_t *t)
{
    size_t n = (size_t)t->et->tl->size * (size_t)t->et->tl->nidx * 2;
    fmpl_seg_zfree(t->mbox_tcw, n * sizeof *t->mbox_tcw);
    fmpl_seg_zfree(t->staging, n * FMPL_TCW_HALF);
    free(t->data_tcw);
}

/* The TCW-reuse word for our line at `peer` about `idx`, half `h`, each
 * half with a source of its own: built the first time it is kicked, then
 * only kicked (the paper built them at start-up; here a peer we never
 * write to costs nothing). */
static const tcw_word_t *mbox_word(fmpl_tcw_t *t, int peer, int idx, unsigned h)
{
    fmpl_tl_t *tl = t->et->tl;
    size_t k = mbox_slot(tl, peer, idx, h);
    tcw_word_t *w = &t->mbox_tcw[k];
    if (w->size == 0)
        *w = (tcw_word_t){
            .src = (uint64_t)(uintptr_t)(t->staging + k * FMPL_TCW_HALF),
            .size = FMPL_TCW_HALF, .dst = peer, .area = FMPL_TCW_MBOX_AREA,
            .off = ((uint64_t)tl->rank * (uint64_t)tl->nidx + (uint64_t)idx) * FMPL_TL_LINE +
                   h * FMPL_TCW_HALF };
    return w;
}

/* The NIA takes the TCW: the transfer on its way through the crossbars. */
static int nia_start(fmpl_tcw_t *t, const tcw_word_t *w, const fmpl_emu_msg_t *rec,
                     fmpl_tl_comp_t *comp)
{
    fmpl_emu_xfer_t x = {
        .chan = fmpl_tcw_node(&t->x, t->et->tl->rank),
        .ready = fmpl_emu_now(t->et->emu),
        .bytes = w->size,
        .path = t->route[w->dst],
        .dst = rec ? w->dst : -1,
        .comp = comp,
    };
    if (rec)
        x.msg = *rec;
    return fmpl_emu_kick(t->et->emu, &x);
}

int fmpl_tcw_put(fmpl_tl_t *tl, int peer, const void *src, size_t len,
                 const fmpl_tl_key_t *key, uint64_t roff, unsigned flags,
                 fmpl_tl_comp_t *comp)
{
    (void)flags;                   /* one path for every put */
    fmpl_tcw_t *t = fmpl_tcw_of(tl);
    if (len == 0)
        return FMPL_SUCCESS;
    uint64_t at = fmpl_emu_area_check(&t->et->areas, peer, key, roff, len);
    if (!at)
        return FMPL_ERR_ARG;
    /* a data transfer modifies its TCW, then kicks it (Table 1) */
    fmpl_emu_charge(t->et->emu, fmpl_tcw_ps(t->m.modify_ns + t->m.kick_ns));
    tcw_word_t *w = &t->data_tcw[peer];
    *w = (tcw_word_t){ .src = (uint64_t)(uintptr_t)src, .size = len, .dst = peer,
                       .area = key->id, .off = at - key->addr + roff };
    int e = peer == tl->rank ? (memcpy((void *)(uintptr_t)at, src, len), 0)
                             : fmpl_cma_copy(t->et->pid[peer], (void *)src, len, at, 1);
    if (e == -ESRCH) {
        return fmpl_tl_peer_gone(tl, peer, (int)t->et->pid[peer]);
    }
    if (e != 0) {
        fmpl_log_err("tcw: the NIA cannot write rank %d's memory: %s", peer, strerror(-e));
        return FMPL_ERR_SYSTEM;
    }
    return nia_start(t, w, NULL, comp);
}

int fmpl_tcw_notify(fmpl_tl_t *tl, int peer, int idx, unsigned off, const void *rec,
                    unsigned len, unsigned flags, fmpl_tl_comp_t *comp)
{
    (void)flags;                   /* everything a node kicks leaves in order */
    fmpl_tcw_t *t = fmpl_tcw_of(tl);
    if (off % FMPL_TCW_HALF || off >= FMPL_TL_LINE || len < 8 || len > FMPL_TCW_HALF)
        return FMPL_ERR_ARG;
    const tcw_word_t *w = mbox_word(t, peer, idx, off / FMPL_TCW_HALF);
    /* the record into the reused TCW's source, then the kick alone; bytes
     * past `len` are what this TCW wrote last time, so the line keeps them */
    uint8_t *staging = (uint8_t *)(uintptr_t)w->src;
    memcpy(staging, rec, len);
    fmpl_emu_charge(t->et->emu, fmpl_tcw_ps(t->m.kick_ns));
    fmpl_emu_msg_t m;
    fmpl_emu_tl_record(&m, idx, off, staging);
    if (comp || !t->m.on)
        return nia_start(t, w, &m, comp);
    /* Nobody counts it: the kick completes before we go on, as the
     * paper's receive waited for its header (Table 1: header send 6.1 us).
     * The counter is ours, not the stack's: a wait that ends early (a dead
     * peer) leaves its completion to come, into a counter that lives on. */
    t->et->sync.status = FMPL_SUCCESS;
    int rc = nia_start(t, w, &m, &t->et->sync);
    if (rc == FMPL_SUCCESS)
        rc = fmpl_emu_tl_wait_comp(t->et, &t->et->sync, peer);
    return rc;
}
