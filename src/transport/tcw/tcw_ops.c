/*
 * tcw_ops.c - the tcw transport's lifecycle and its ops table (the clock,
 * the matching area and progress are emu_tl's, shared by every emulated
 * fabric).
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "fmpl.h"
#include "base/boot.h"
#include "base/log.h"
#include "transport/tcw/tcw.h"

/* transfers and entries on their way at once, over the whole job */
#define TCW_MAX_XFERS   65536
#define TCW_MAX_ENTRIES 131072

static void tcw_close(fmpl_tl_t *tl)
{
    fmpl_tcw_t *t = fmpl_tcw_of(tl);
    if (!t)
        return;
    fmpl_tcw_nia_fini(t);
    fmpl_emu_tl_close(t->et);
    free(t->route);
    free(t);
    tl->priv = NULL;
}

static int tcw_open(fmpl_tl_t *tl)
{
    fmpl_tcw_t *t = calloc(1, sizeof *t);
    if (!t)
        return FMPL_ERR_NOMEM;
    t->et = &t->own;
    t->et->tl = tl;
    t->et->signal = fmpl_tcw_hw_signal;
    t->et->areas = (fmpl_emu_areas_t){ .name = "tcw", .what = "remote-DMA area",
                                      .max = FMPL_TCW_MAX_AREAS,
                                      .nstatic = FMPL_TCW_STATIC_AREAS };
    tl->priv = t;
    int rc = fmpl_tcw_model_read(&t->m);
    if (rc == FMPL_SUCCESS)
        rc = fmpl_tcw_xbar_init(&t->x, tl->size);
    if (rc != FMPL_SUCCESS) {
        tcw_close(tl);
        return rc;
    }
    /* remote DMA writes and the hardware collectives; no remote atomics,
     * no remote read, no strided DMA (each block is a TCW of its own) */
    tl->caps = FMPL_TL_CAP_SELF | FMPL_TL_CAP_VADDR | FMPL_TL_CAP_HW_BCAST | FMPL_TL_CAP_SHARED_LINK |
               FMPL_TL_CAP_WATCH |
               (fmpl_tcw_hw_refusal(&t->x) ? 0 : FMPL_TL_CAP_HW_BARRIER);
    tl->max_inline = FMPL_TCW_HALF;
    /* a mailbox kick nobody counts completes before the call returns
     * (tcw_nia.c): one more destination costs the sender its round trip */
    if (t->m.on) {
        double hop = t->m.nia_send_ns + t->m.xbar_ns + t->m.nia_recv_ns;
        tl->fanout_ns = t->m.kick_ns + hop + t->m.xbar_ns + t->m.ack_ns;
        tl->oneway_ns = t->m.call_ns + t->m.kick_ns + hop + t->m.recv_done_ns;
        tl->byte_ns = 1000.0 / t->m.link_mbps;
    }

    t->et->cost = (fmpl_emu_costs_t){ .call_ns = t->m.call_ns, .recv_done_ns = t->m.recv_done_ns,
                                     .copy_mbps = t->m.copy_mbps, .op_mbps = t->m.op_mbps };
    t->route = calloc((size_t)tl->size, sizeof *t->route);
    fmpl_emu_time_t *ps = calloc((size_t)t->x.nlinks, sizeof *ps);
    if (!t->route || !ps) {
        free(ps);
        tcw_close(tl);
        return FMPL_ERR_NOMEM;
    }
    for (int r = 0; r < tl->size; r++)
        fmpl_tcw_route(&t->x, &t->m, tl->rank, r, &t->route[r]);
    fmpl_tcw_link_ps(&t->x, &t->m, ps);

    /* Nothing a kick brings is seen sooner than a start-up and a write to
     * memory later, nor a hardware collective's end sooner than its
     * latency: the engine's lookahead (emu.h). */
    double la = t->m.nia_send_ns + t->m.nia_recv_ns;
    if (t->m.hwbar_ns < la)
        la = t->m.hwbar_ns;
    /* every rank must emulate the same machine: a digest of its settings */
    uint64_t sig = fmpl_emu_digest(fmpl_emu_digest(0, &t->m, sizeof t->m), &t->x, sizeof t->x);
    fmpl_emu_config_t cfg = {
        .name = "tcw", .model = t->m.on, .nchan = t->x.X * t->x.Y * t->x.Z, .nlinks = t->x.nlinks,
        .link_ps_per_byte = ps, .packet = (uint32_t)t->m.packet,
        .lookahead = fmpl_tcw_ps(la), .cpu_scale = t->m.cpu_scale,
        .cpu_threshold = (int64_t)t->m.cpu_threshold_ns,
        .fabric_bytes = fmpl_tcw_hw_bytes(tl->size),
        .max_xfers = TCW_MAX_XFERS, .max_entries = TCW_MAX_ENTRIES,
        .signature = sig, .settings = "FMPL_TCW_*",
    };
    if (t->m.on && la <= 0) {
        fmpl_log_err("tcw: NIA_SEND_NS + NIA_RECV_NS and HWBAR_NS must be > 0 with the "
                     "timing model on (they are its lookahead)");
        rc = FMPL_ERR_ARG;
    }
    if (rc == FMPL_SUCCESS)
        rc = fmpl_emu_tl_open(t->et, &cfg);
    free(ps);
    if (rc == FMPL_SUCCESS)
        t->hw = t->et->fabric;
    if (rc == FMPL_SUCCESS)
        rc = fmpl_tcw_nia_init(t);
    if (rc != FMPL_SUCCESS) {
        tcw_close(tl);
        return rc;
    }
    const char *hw = fmpl_tcw_hw_refusal(&t->x);
    fmpl_log_info("tcw: %d ranks on %d nodes of a %s partition, %d per node; hardware "
                  "barrier %s", tl->size, t->x.nodes, fmpl_tcw_shape(&t->x), t->x.ppn,
                  hw ? hw : "on");
    fmpl_tcw_model_log(&t->m);
    return FMPL_SUCCESS;
}

const fmpl_tl_ops_t fmpl_tcw_ops = {
    .size = sizeof(fmpl_tl_ops_t),
    .name = "tcw",
    .open = tcw_open,
    .close = tcw_close,
    .mem_reg = fmpl_emu_tl_mem_reg,
    .mem_dereg = fmpl_emu_tl_mem_dereg,
    .mem_alloc = fmpl_emu_tl_mem_alloc,
    .mem_free = fmpl_emu_tl_mem_free,
    .put = fmpl_tcw_put,
    .put_strided = fmpl_tl_put_strided_by_put,
    .put_iov = fmpl_tl_put_iov_by_put,
    .get = fmpl_tl_unsupported_get,
    .mbox_in = fmpl_emu_tl_mbox_in,
    .notify = fmpl_tcw_notify,
    .put_notify = fmpl_tl_put_notify_by_parts,
    .mbox_cas = fmpl_tl_unsupported_cas,
    .progress = fmpl_emu_tl_progress,
    .forget = fmpl_emu_tl_forget,
    .peer_ok = fmpl_emu_tl_peer_ok,
    .barrier = fmpl_tcw_barrier,
    .bcast = fmpl_tcw_bcast,
};
