/*
 * p2_ops.c - the peach2 transport's lifecycle and its ops table (the
 * clock, the matching area, memory registration and progress are
 * emu_tl's, shared by every emulated fabric).
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "fmpl.h"
#include "base/boot.h"
#include "base/log.h"
#include "transport/peach2/p2.h"

/* transfers and entries on their way at once, over the whole job */
#define P2_MAX_XFERS   65536
#define P2_MAX_ENTRIES 131072

void fmpl_peach2_net_close(fmpl_peach2_t *t)
{
    if (t->et && t->et->emu)
        fmpl_log_info("peach2: rank %d: %llu PIO stores, %llu DMA requests (%llu register "
                      "mode, %llu descriptors)", t->et->tl->rank,
                      (unsigned long long)t->pio_stores, (unsigned long long)t->dma_kicks,
                      (unsigned long long)t->dma_reg, (unsigned long long)t->dma_desc);
    free(t->route);
    free(t->hops);
    free(t->dma_dirty);
    t->route = NULL;
    t->hops = NULL;
    t->dma_dirty = NULL;
}

int fmpl_peach2_net_open(fmpl_peach2_t *t, fmpl_tl_t *tl, fmpl_emu_tl_t *et, int base, int nodes)
{
    t->et = et;
    t->base = base;
    int rc = fmpl_peach2_model_read(&t->m);
    if (rc == FMPL_SUCCESS)
        rc = fmpl_peach2_ring_init(&t->ring, nodes);
    if (rc != FMPL_SUCCESS)
        return rc;
    size_t n = (size_t)tl->size;
    t->route = calloc((size_t)nodes, sizeof *t->route);
    t->hops = calloc((size_t)nodes, sizeof *t->hops);
    t->dma_dirty = calloc(n, 1);
    if (!t->route || !t->hops || !t->dma_dirty)
        return FMPL_ERR_NOMEM;
    rc = fmpl_peach2_routes(&t->ring, &t->m, tl->rank - base, t->route, t->hops);
    /* the machine numbers links by global rank: ours are node (base + k)'s */
    for (int d = 0; d < nodes; d++)
        for (int k = 0; k < t->route[d].n; k++)
            t->route[d].link[k] += base * P2_LINKS_PER_NODE;
    return rc;
}

double fmpl_peach2_lookahead(const p2_model_t *m)
{
    /* Nothing a kick brings is seen sooner than the least of: a PIO
     * store into our own memory, a register-mode DMA's completion, a
     * chained one's - the engine's lookahead (emu.h). */
    double la = m->pio_ns + m->mem_ns;
    if (m->reg_start_ns + m->poll_ns < la)
        la = m->reg_start_ns + m->poll_ns;
    if (m->dma_start_ns + m->desc_ns + m->poll_ns < la)
        la = m->dma_start_ns + m->desc_ns + m->poll_ns;
    return la + m->board_ns;
}

void fmpl_peach2_costs(const p2_model_t *m, fmpl_emu_costs_t *c)
{
    *c = (fmpl_emu_costs_t){ .call_ns = m->call_ns, .recv_done_ns = m->recv_done_ns,
                             .copy_mbps = m->copy_mbps, .op_mbps = m->op_mbps };
}

static void p2_close(fmpl_tl_t *tl)
{
    fmpl_peach2_t *t = fmpl_peach2_of(tl);
    if (!t)
        return;
    fmpl_peach2_net_close(t);
    fmpl_emu_tl_close(&t->own);
    free(t);
    tl->priv = NULL;
}

static int p2_open(fmpl_tl_t *tl)
{
    if (tl->size > FMPL_PEACH2_MAX_NODES) {
        fmpl_log_err("peach2: %d ranks, but a PEACH2 sub-cluster joins at most %d nodes: "
                     "use FMPL_TRANSPORT=tca (PEACH2 inside sub-clusters, InfiniBand "
                     "between them)", tl->size, FMPL_PEACH2_MAX_NODES);
        return FMPL_ERR_ARG;
    }
    fmpl_peach2_t *t = calloc(1, sizeof *t);
    if (!t)
        return FMPL_ERR_NOMEM;
    tl->priv = t;
    fmpl_emu_tl_t *et = &t->own;
    et->tl = tl;
    et->areas = (fmpl_emu_areas_t){ .name = "peach2", .what = "registered region",
                                    .max = FMPL_PEACH2_MAX_AREAS,
                                    .nstatic = FMPL_PEACH2_STATIC_AREAS,
                                    .win_base = FMPL_PEACH2_WIN_BASE,
                                    .win_slice = 1ull << FMPL_PEACH2_SLICE_BITS };
    int rc = fmpl_peach2_net_open(t, tl, et, 0, tl->size);
    fmpl_emu_time_t *ps = calloc((size_t)t->ring.nlinks, sizeof *ps);
    if (rc == FMPL_SUCCESS && !ps)
        rc = FMPL_ERR_NOMEM;
    if (rc != FMPL_SUCCESS) {
        free(ps);
        p2_close(tl);
        return rc;
    }
    /* remote writes, block-stride without packing; no remote atomics, no
     * remote read, no hardware collectives; keys are window addresses */
    tl->caps = FMPL_TL_CAP_SELF | FMPL_TL_CAP_STRIDED | FMPL_TL_CAP_SHARED_LINK |
               FMPL_TL_CAP_WATCH;
    tl->max_inline = FMPL_EMU_HALF;
    const p2_model_t *m = &t->m;
    fmpl_peach2_costs(m, &et->cost);
    fmpl_peach2_link_ps(&t->ring, m, ps);
    double la = fmpl_peach2_lookahead(m);
    if (m->on && la <= 0) {
        fmpl_log_err("peach2: with the timing model on, BOARD_NS plus the least of PIO_NS + "
                     "MEM_NS, REG_START_NS + POLL_NS and DMA_START_NS + DESC_NS + POLL_NS "
                     "must be > 0 (the emulation's lookahead)");
        rc = FMPL_ERR_ARG;
    }
    uint64_t sig = fmpl_emu_digest(fmpl_emu_digest(0, m, sizeof *m), &t->ring, sizeof t->ring);
    fmpl_emu_config_t cfg = {
        .name = "peach2", .model = m->on, .nchan = tl->size * FMPL_PEACH2_CHANS_PER_NODE,
        .nlinks = t->ring.nlinks, .link_ps_per_byte = ps,
        .packet = (uint32_t)(m->tlp_payload + m->tlp_overhead),
        .lookahead = fmpl_emu_ps(la), .cpu_scale = m->cpu_scale,
        .cpu_threshold = (int64_t)m->cpu_threshold_ns,
        .fabric_bytes = 0, .max_xfers = P2_MAX_XFERS, .max_entries = P2_MAX_ENTRIES,
        .signature = sig, .settings = "FMPL_TCA_*",
    };
    if (rc == FMPL_SUCCESS)
        rc = fmpl_emu_tl_open(et, &cfg);
    free(ps);
    if (rc != FMPL_SUCCESS) {
        p2_close(tl);
        return rc;
    }
    int far = 0;
    for (int r = 0; r < tl->size; r++)
        far = t->hops[r] > far ? t->hops[r] : far;
    fmpl_log_info("peach2: %d nodes, two rings of %d; rank %d at position %d of ring %d, "
                  "window slice 0x%llx, peers at most %d hops away", tl->size, t->ring.R,
                  tl->rank, fmpl_peach2_pos_of(&t->ring, tl->rank),
                  fmpl_peach2_ring_of(&t->ring, tl->rank),
                  (unsigned long long)fmpl_peach2_slice(tl->rank), far);
    fmpl_peach2_model_log(m);
    return FMPL_SUCCESS;
}

const fmpl_tl_ops_t fmpl_peach2_ops = {
    .size = sizeof(fmpl_tl_ops_t),
    .name = "peach2",
    .open = p2_open,
    .close = p2_close,
    .mem_reg = fmpl_emu_tl_mem_reg,
    .mem_dereg = fmpl_emu_tl_mem_dereg,
    .mem_alloc = fmpl_emu_tl_mem_alloc,
    .mem_free = fmpl_emu_tl_mem_free,
    .put = fmpl_peach2_put,
    .put_strided = fmpl_peach2_put_strided,
    .put_iov = fmpl_peach2_put_iov,
    .get = fmpl_tl_unsupported_get,
    .mbox_in = fmpl_emu_tl_mbox_in,
    .notify = fmpl_peach2_notify,
    .put_notify = fmpl_tl_put_notify_by_parts,
    .mbox_cas = fmpl_tl_unsupported_cas,
    .progress = fmpl_emu_tl_progress,
    .forget = fmpl_emu_tl_forget,
    .peer_ok = fmpl_emu_tl_peer_ok,
    .barrier = fmpl_tl_unsupported_barrier,
    .bcast = fmpl_tl_unsupported_bcast,
};
