/*
 * p2_dma.c - what a node's CPU and its PEACH2 board do with a write:
 * PIO stores and the DMA controller (Hanawa et al. 2013, 3.4 and 4).
 *
 * Every write goes to a place in the window: the key names it (emu_area's
 * base), the board routes it by address (p2_ring.c), and the owning board
 * writes host memory.  The bytes move at once by cross-memory attach; the
 * engine (emu/) times the TLPs through the links.
 *
 *  - PIO: the CPU stores into the window - a posted write, complete as
 *    soon as it is issued.  Mailbox records go this way, and puts of at
 *    most PIO_MAX_BYTES.  Each node's stores leave in order (one channel).
 *  - DMA: 4 channels a board; the channel is chosen by the peer (peer mod
 *    4), so that everything to one peer leaves in order while transfers
 *    to others overlap.  A descriptor names physical memory, so a piece
 *    is cut at the 4 KiB pages of both sides (pinned pages are scattered).
 *    A request of at most REG_MAX such pieces and REG_MAX_BYTES bytes
 *    starts in REGISTER MODE (no descriptor table); others are CHAINED
 *    DESCRIPTORS, one a page piece, a block-stride put one for the blocks
 *    of each destination page.  The DMA is complete when its last
 *    write has left the board (posted writes: the paper's driver saw
 *    "done" before the data was in memory, 4.1.1), seen by a poll.
 *  - ORDER.  A record must not overtake the data it announces.  PEACH2
 *    orders nothing between the CPU's stores and a DMA channel's writes,
 *    so an ordered record to a peer with a DMA on its way since our last
 *    record is itself a DMA on that peer's channel - behind the data, as
 *    a TCA program chains its flag after its data; otherwise it is a PIO
 *    store.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fmpl.h"
#include "base/log.h"
#include "transport/peach2/p2.h"
#include "transport/seg.h"

#define CHANS_PER_NODE FMPL_PEACH2_CHANS_PER_NODE
static int chan_dma(const fmpl_tl_t *tl, int peer)
{
    return tl->rank * CHANS_PER_NODE + peer % FMPL_PEACH2_DMA_CHANNELS;
}
static int chan_pio(const fmpl_tl_t *tl)
{
    return tl->rank * CHANS_PER_NODE + FMPL_PEACH2_DMA_CHANNELS;
}

/* Hand one transfer to the engine: `wire` bytes on the route to `peer`. */
static int kick(fmpl_peach2_t *t, int chan, int peer, uint64_t wire, double start_ns, double gap_ns,
                int dma, const fmpl_emu_msg_t *rec, fmpl_tl_comp_t *comp)
{
    fmpl_emu_xfer_t x = {
        .chan = chan,
        .ready = fmpl_emu_now(t->et->emu),
        .bytes = wire,
        .path = t->route[peer - t->base],
        .dst = rec ? peer : -1,
        .comp = comp,
    };
    x.path.start = fmpl_emu_ps(start_ns);
    x.path.gap = fmpl_emu_ps(gap_ns);
    x.path.to_mem = fmpl_emu_ps(t->m.mem_ns);
    if (dma) {
        /* done when the last write leaves our board, seen by a poll */
        x.path.comp_link = 1;
        x.path.ack = fmpl_emu_ps(t->m.poll_ns);
    }
    if (rec)
        x.msg = *rec;
    return fmpl_emu_kick(t->et->emu, &x);
}

/* The key covers [key + roff, + len) at `peer`, and its window address
 * is the peer's: the virtual address there, or 0 (logged). */
static uint64_t target(fmpl_peach2_t *t, int peer, const fmpl_tl_key_t *key, uint64_t roff,
                       size_t len)
{
    int node = fmpl_peach2_node_of(&t->ring, key->addr + roff);
    if (node != peer - t->base) {
        fmpl_log_err("peach2: a write for rank %d at PCIe address 0x%llx, which is %s", peer,
                     (unsigned long long)(key->addr + roff),
                     node < 0 ? "outside the window" : "another node's");
        return 0;
    }
    return fmpl_emu_area_check(&t->et->areas, peer, key, roff, len);
}

/* The DMA controller's start for a request of n pieces, `bytes` in all. */
static int reg_mode(const fmpl_peach2_t *t, size_t n, size_t bytes)
{
    return (double)n <= t->m.reg_max && (double)bytes <= t->m.reg_max_bytes;
}

/* A descriptor (or a register set) names physical memory, and pinned
 * pages are not physically contiguous: a transfer is cut at every 4 KiB
 * page boundary of its source and of its destination.  The pieces. */
static size_t page_pieces(uint64_t src, uint64_t dst, size_t len)
{
    size_t n = 0;
    for (size_t pos = 0; pos < len; n++) {
        size_t a = FMPL_PEACH2_PAGE - (size_t)((src + pos) % FMPL_PEACH2_PAGE);
        size_t b = FMPL_PEACH2_PAGE - (size_t)((dst + pos) % FMPL_PEACH2_PAGE);
        size_t step = a < b ? a : b;
        pos += step < len - pos ? step : len - pos;
    }
    return n;
}

int fmpl_peach2_put(fmpl_tl_t *tl, int peer, const void *src, size_t len,
                    const fmpl_tl_key_t *key, uint64_t roff, unsigned flags,
                    fmpl_tl_comp_t *comp)
{
    (void)flags;                   /* one path for every put */
    fmpl_tl_iov_t one = { .src = src, .len = len, .roff = roff };
    return fmpl_peach2_put_iov(tl, peer, &one, 1, key, comp);
}

int fmpl_peach2_put_iov(fmpl_tl_t *tl, int peer, const fmpl_tl_iov_t *iov, int n,
                        const fmpl_tl_key_t *key, fmpl_tl_comp_t *comp)
{
    fmpl_peach2_t *t = fmpl_peach2_of(tl);
    size_t total = 0, chunks = 0;
    int pieces = 0;
    for (int i = 0; i < n; i++) {
        if (!iov[i].len)
            continue;
        uint64_t at = target(t, peer, key, iov[i].roff, iov[i].len);
        if (!at)
            return FMPL_ERR_ARG;
        int rc = fmpl_emu_tl_write(t->et, peer, iov[i].src, iov[i].len, at);
        if (rc != FMPL_SUCCESS)
            return rc;
        total += iov[i].len;
        chunks += page_pieces((uint64_t)(uintptr_t)iov[i].src, key->addr + iov[i].roff,
                              iov[i].len);
        pieces++;
    }
    if (!pieces)
        return FMPL_SUCCESS;
    const p2_model_t *m = &t->m;
    if (pieces == 1 && (double)total <= m->pio_max_bytes && !t->dma_dirty[peer]) {
        /* a few bytes: the CPU stores them */
        fmpl_emu_charge(t->et->emu, fmpl_emu_ps(m->store_ns));
        t->pio_stores++;
        return kick(t, chan_pio(tl), peer, fmpl_peach2_wire(m, total), m->pio_ns, 0, 0, NULL, NULL);
    }
    fmpl_emu_charge(t->et->emu, fmpl_emu_ps(m->kick_ns));
    int reg = reg_mode(t, chunks, total);
    t->dma_kicks++;
    if (reg)
        t->dma_reg++;
    else
        t->dma_desc += (uint64_t)chunks;
    t->dma_dirty[peer] = 1;
    int chan = chan_dma(tl, peer);
    size_t k = 0;                  /* descriptors so far */
    for (int i = 0; i < n; i++) {
        if (!iov[i].len)
            continue;
        /* Register mode: one start for its few transfers.  Chained: a
         * start for the table, each descriptor's own time (one per page
         * piece, lumped before the piece's bytes), and a link descriptor
         * at the end of every 4 KiB table. */
        size_t c = page_pieces((uint64_t)(uintptr_t)iov[i].src, key->addr + iov[i].roff,
                               iov[i].len);
        size_t links = (k + c) / FMPL_PEACH2_DESC_TABLE - k / FMPL_PEACH2_DESC_TABLE;
        double desc = reg ? 0 : m->desc_ns * (double)(c + links);
        double start = k ? 0 : (reg ? m->reg_start_ns : m->dma_start_ns) + desc + t->gpu_read_ns;
        double gap = k ? desc : 0;
        int rc = kick(t, chan, peer, fmpl_peach2_wire(m, iov[i].len), start, gap, 1, NULL, comp);
        if (rc != FMPL_SUCCESS)
            return rc;
        k += c;
    }
    return FMPL_SUCCESS;
}

int fmpl_peach2_put_strided(fmpl_tl_t *tl, int peer, const void *src, size_t blklen, size_t nblk,
                            size_t sstride, const fmpl_tl_key_t *key, uint64_t roff,
                            size_t dstride, fmpl_tl_comp_t *comp)
{
    fmpl_peach2_t *t = fmpl_peach2_of(tl);
    if (!blklen || !nblk)
        return FMPL_SUCCESS;
    if (nblk > 1 && dstride < blklen)
        return FMPL_ERR_ARG;
    size_t span = (nblk - 1) * dstride + blklen;
    uint64_t at = target(t, peer, key, roff, span);
    if (!at)
        return FMPL_ERR_ARG;
    int rc = fmpl_emu_tl_write_blocks(t->et, peer, src, blklen, nblk, sstride, at, dstride);
    if (rc != FMPL_SUCCESS)
        return rc;
    /* block-stride descriptors, each for the blocks of one destination
     * page (physical memory again), every block its own TLPs */
    const p2_model_t *m = &t->m;
    uint64_t first = (key->addr + roff) / FMPL_PEACH2_PAGE;
    uint64_t last = (key->addr + roff + span - 1) / FMPL_PEACH2_PAGE;
    size_t ndesc = (size_t)(last - first + 1);
    if (ndesc > nblk)
        ndesc = nblk;
    fmpl_emu_charge(t->et->emu, fmpl_emu_ps(m->kick_ns));
    t->dma_kicks++;
    t->dma_desc += ndesc;
    t->dma_dirty[peer] = 1;
    size_t links = ndesc / FMPL_PEACH2_DESC_TABLE;
    return kick(t, chan_dma(tl, peer), peer, (uint64_t)nblk * fmpl_peach2_wire(m, blklen),
                m->dma_start_ns + m->desc_ns * (double)(ndesc + links) + t->gpu_read_ns, 0, 1,
                NULL, comp);
}

int fmpl_peach2_notify(fmpl_tl_t *tl, int peer, int idx, unsigned off, const void *rec,
                       unsigned len, unsigned flags, fmpl_tl_comp_t *comp)
{
    fmpl_peach2_t *t = fmpl_peach2_of(tl);
    fmpl_emu_msg_t m;
    int rc = fmpl_emu_tl_stage(t->et, peer, idx, off, rec, len, &m);
    if (rc != FMPL_SUCCESS)
        return rc;
    const p2_model_t *md = &t->m;
    uint64_t wire = fmpl_peach2_wire(md, len);
    if (!(flags & FMPL_TL_NOTIFY_UNORDERED) && t->dma_dirty[peer]) {
        /* behind the data, on its channel */
        t->dma_dirty[peer] = 0;
        t->dma_kicks++;
        t->dma_reg++;
        fmpl_emu_charge(t->et->emu, fmpl_emu_ps(md->kick_ns));
        return kick(t, chan_dma(tl, peer), peer, wire, md->reg_start_ns, 0, 1, &m, comp);
    }
    t->pio_stores++;
    fmpl_emu_charge(t->et->emu, fmpl_emu_ps(md->store_ns));
    return kick(t, chan_pio(tl), peer, wire, md->pio_ns, 0, 0, &m, NULL);
}
