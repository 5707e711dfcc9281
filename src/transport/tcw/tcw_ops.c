/*
 * tcw_ops.c - the tcw transport's lifecycle, its clock and its ops table.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "fmpl.h"
#include "core/boot.h"
#include "core/log.h"
#include "transport/seg.h"
#include "transport/tcw/tcw.h"

/* transfers and entries on their way at once, over the whole job */
#define TCW_MAX_XFERS   65536
#define TCW_MAX_ENTRIES 131072

static void tcw_close(fmpl_tl_t *tl);

/* ---- the SR8000's clock (transport.h) ----------------------------------- */

static double clk_now(fmpl_tl_t *tl)
{
    return (double)fmpl_emu_now(fmpl_tcw_of(tl)->emu) * 1e-12;
}

static void clk_enter(fmpl_tl_t *tl)
{
    fmpl_tcw_t *t = fmpl_tcw_of(tl);
    if (fmpl_emu_enter(t->emu))
        fmpl_emu_charge(t->emu, fmpl_tcw_ps(t->m.call_ns));
}

static void clk_exit(fmpl_tl_t *tl) { fmpl_emu_exit(fmpl_tcw_of(tl)->emu); }

static int clk_settle(fmpl_tl_t *tl)
{
    fmpl_tcw_t *t = fmpl_tcw_of(tl);
    int n = fmpl_emu_poll(t->emu);
    if (n < 0)
        return 0;
    t->delivered += n;
    return 1;
}

static int clk_idle(fmpl_tl_t *tl, double deadline)
{
    fmpl_tcw_t *t = fmpl_tcw_of(tl);
    /* rounded up, and a picosecond more: at the deadline, fmpl_wtime() -
     * t0 must be >= the caller's timeout, not a rounding short of it */
    fmpl_emu_time_t d = deadline < 0 ? FMPL_EMU_NEVER : (fmpl_emu_time_t)ceil(deadline * 1e12) + 1;
    return fmpl_emu_idle(t->emu, d);
}

static void clk_work(fmpl_tl_t *tl, int kind, size_t amount)
{
    fmpl_tcw_t *t = fmpl_tcw_of(tl);
    double ns = 0;
    switch (kind) {
    case FMPL_TL_WORK_COPY: ns = (double)amount * 1e3 / t->m.copy_mbps; break;
    case FMPL_TL_WORK_OP:   ns = (double)amount * 1e3 / t->m.op_mbps; break;
    case FMPL_TL_WORK_RECV: ns = t->m.recv_done_ns; break;
    case FMPL_TL_WORK_NS:   ns = (double)amount; break;
    }
    fmpl_emu_charge(t->emu, fmpl_tcw_ps(ns));
}

static void clk_finish(fmpl_tl_t *tl) { fmpl_emu_leave_job(fmpl_tcw_of(tl)->emu); }

static const fmpl_tl_clock_t tcw_clock = {
    .now = clk_now, .enter = clk_enter, .exit = clk_exit, .settle = clk_settle,
    .idle = clk_idle, .work = clk_work, .finish = clk_finish,
};

/* ---- lifecycle ---------------------------------------------------------- */

/* The NIA moves bytes with cross-memory attach: try it on our right-hand
 * neighbour's matching area before anything depends on it. */
static int cma_probe(fmpl_tcw_t *t)
{
    fmpl_tl_t *tl = t->tl;
    if (tl->size == 1)
        return FMPL_SUCCESS;
    int peer = (tl->rank + 1) % tl->size;
    uint64_t word;
    uint64_t addr = t->areas[(size_t)peer * FMPL_TCW_MAX_AREAS + FMPL_TCW_MBOX_AREA].addr;
    int e = fmpl_cma_copy(t->pid[peer], &word, sizeof word, addr, 0);
    if (e == 0)
        return FMPL_SUCCESS;
    if (e == -ESRCH) {
        fmpl_log_err("tcw: rank %d (pid %d) died during start-up", peer, (int)t->pid[peer]);
        return FMPL_ERR_PEER;
    }
    fmpl_log_err("tcw: cross-memory attach to rank %d refused (%s): the emulated NIA writes "
                 "the other nodes' memory with it (same user, kernel.yama.ptrace_scope <= 1)",
                 peer, strerror(-e));
    return FMPL_ERR_SYSTEM;
}

static int tcw_open(fmpl_tl_t *tl)
{
    fmpl_tcw_t *t = calloc(1, sizeof *t);
    if (!t)
        return FMPL_ERR_NOMEM;
    t->tl = tl;
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
    tl->caps = FMPL_TL_CAP_SELF | FMPL_TL_CAP_VADDR | FMPL_TL_CAP_HW_BCAST |
               (fmpl_tcw_hw_refusal(&t->x) ? 0 : FMPL_TL_CAP_HW_BARRIER);
    tl->max_inline = FMPL_TCW_HALF;

    size_t lines = (size_t)tl->size * (size_t)tl->nidx;
    t->mbox = aligned_alloc(FMPL_TL_LINE, lines * FMPL_TL_LINE);
    t->route = calloc((size_t)tl->size, sizeof *t->route);
    t->pid = calloc((size_t)tl->size, sizeof *t->pid);
    fmpl_emu_time_t *ps = calloc((size_t)t->x.nlinks, sizeof *ps);
    if (!t->mbox || !t->route || !t->pid || !ps) {
        free(ps);
        tcw_close(tl);
        return FMPL_ERR_NOMEM;
    }
    memset(t->mbox, 0, lines * FMPL_TL_LINE);
    for (int r = 0; r < tl->size; r++)
        fmpl_tcw_route(&t->x, &t->m, tl->rank, r, &t->route[r]);
    fmpl_tcw_link_ps(&t->x, &t->m, ps);

    /* Nothing a kick brings is seen sooner than a start-up and a write to
     * memory later, nor a hardware collective's end sooner than its
     * latency: the engine's lookahead (emu.h). */
    double la = t->m.nia_send_ns + t->m.nia_recv_ns;
    if (t->m.hwbar_ns < la)
        la = t->m.hwbar_ns;
    size_t areas = (size_t)tl->size * FMPL_TCW_MAX_AREAS * sizeof(tcw_area_t);
    /* every rank must emulate the same machine: a digest of its settings */
    uint64_t sig = 1469598103934665603ull;
    const unsigned char *pm = (const unsigned char *)&t->m, *px = (const unsigned char *)&t->x;
    for (size_t i = 0; i < sizeof t->m; i++)
        sig = (sig ^ pm[i]) * 1099511628211ull;
    for (size_t i = 0; i < sizeof t->x; i++)
        sig = (sig ^ px[i]) * 1099511628211ull;
    fmpl_emu_config_t cfg = {
        .name = "tcw", .model = t->m.on, .nchan = t->x.X * t->x.Y, .nlinks = t->x.nlinks,
        .link_ps_per_byte = ps, .packet = (uint32_t)t->m.packet,
        .lookahead = fmpl_tcw_ps(la), .cpu_scale = t->m.cpu_scale,
        .cpu_threshold = (int64_t)t->m.cpu_threshold_ns,
        .fabric_bytes = areas + fmpl_tcw_hw_bytes(tl->size),
        .max_xfers = TCW_MAX_XFERS, .max_entries = TCW_MAX_ENTRIES,
        .signature = sig, .settings = "FMPL_TCW_*",
    };
    if (t->m.on && la <= 0) {
        fmpl_log_err("tcw: NIA_SEND_NS + NIA_RECV_NS and HWBAR_NS must be > 0 with the "
                     "timing model on (they are its lookahead)");
        rc = FMPL_ERR_ARG;
    }
    if (rc == FMPL_SUCCESS)
        rc = fmpl_emu_open(tl, &cfg, fmpl_tcw_apply, t, &t->emu);
    free(ps);
    if (rc == FMPL_SUCCESS) {
        uint8_t *fab = fmpl_emu_fabric(t->emu);
        t->areas = (tcw_area_t *)(void *)fab;
        t->hw = (tcw_hw_shared_t *)(void *)(fab + areas);
        for (int r = 0; r < tl->size; r++)
            t->pid[r] = fmpl_emu_pid(t->emu, r);
        rc = fmpl_tcw_area_init(t);
    }
    if (rc == FMPL_SUCCESS)
        rc = fmpl_tcw_tcw_init(t);
    /* every matching area is registered before anybody probes one */
    if (rc == FMPL_SUCCESS)
        rc = tl->boot->ops->fence(tl->boot);
    if (rc == FMPL_SUCCESS)
        rc = cma_probe(t);
    /* once everybody has probed, a rank may leave at any time without
     * breaking anybody's start-up */
    if (rc == FMPL_SUCCESS)
        rc = tl->boot->ops->fence(tl->boot);
    if (rc != FMPL_SUCCESS) {
        tcw_close(tl);
        return rc;
    }
    tl->clock = t->m.on ? &tcw_clock : NULL;
    const char *hw = fmpl_tcw_hw_refusal(&t->x);
    fmpl_log_info("tcw: %d ranks on %d nodes of a %dx%d partition, %d per node; hardware "
                  "barrier %s", tl->size, t->x.nodes, t->x.X, t->x.Y, t->x.ppn,
                  hw ? hw : "on");
    fmpl_tcw_model_log(&t->m);
    return FMPL_SUCCESS;
}

static void tcw_close(fmpl_tl_t *tl)
{
    fmpl_tcw_t *t = fmpl_tcw_of(tl);
    if (!t)
        return;
    if (t->areas)
        fmpl_tcw_area_fini(t);
    fmpl_tcw_tcw_fini(t);
    fmpl_emu_close(t->emu);
    free(t->mbox);
    free(t->route);
    free(t->pid);
    free(t);
    tl->priv = NULL;
    tl->clock = NULL;
}

static int tcw_progress(fmpl_tl_t *tl)
{
    fmpl_tcw_t *t = fmpl_tcw_of(tl);
    int n = fmpl_emu_poll(t->emu);
    n = (n > 0 ? n : 0) + t->delivered;
    t->delivered = 0;
    return n;
}

static int tcw_peer_ok(fmpl_tl_t *tl, int peer)
{
    return fmpl_emu_alive(fmpl_tcw_of(tl)->emu, peer);
}

const fmpl_tl_ops_t fmpl_tcw_ops = {
    .size = sizeof(fmpl_tl_ops_t),
    .name = "tcw",
    .open = tcw_open,
    .close = tcw_close,
    .mem_reg = fmpl_tcw_mem_reg,
    .mem_dereg = fmpl_tcw_mem_dereg,
    .mem_alloc = fmpl_tcw_mem_alloc,
    .mem_free = fmpl_tcw_mem_free,
    .put = fmpl_tcw_put,
    .put_strided = fmpl_tl_put_strided_by_put,
    .put_iov = fmpl_tl_put_iov_by_put,
    .get = fmpl_tl_unsupported_get,
    .mbox_in = fmpl_tcw_mbox_in,
    .notify = fmpl_tcw_notify,
    .mbox_cas = fmpl_tl_unsupported_cas,
    .progress = tcw_progress,
    .peer_ok = tcw_peer_ok,
    .barrier = fmpl_tcw_barrier,
    .bcast = fmpl_tcw_bcast,
};
