/*
 * emu_tl.c - the transport glue every emulated fabric shares (emu_tl.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmpl.h"
#include "base/boot.h"
#include "base/clock.h"
#include "base/env.h"
#include "base/log.h"
#include "transport/emu/emu_tl.h"
#include "transport/seg.h"
#include "transport/wait.h"

/* ---- the emulated machine's clock (transport.h) ---------------------- */

/* the clock's machine: the transport that set tl->clock says which */
static inline fmpl_emu_tl_t *clk_et(fmpl_tl_t *tl) { return tl->clock_priv; }

static double clk_now(fmpl_tl_t *tl)
{
    return (double)fmpl_emu_now(clk_et(tl)->emu) * 1e-12;
}

static void clk_enter(fmpl_tl_t *tl)
{
    fmpl_emu_tl_t *et = clk_et(tl);
    if (fmpl_emu_enter(et->emu))
        fmpl_emu_charge(et->emu, fmpl_emu_ps(et->cost.call_ns));
}

static void clk_exit(fmpl_tl_t *tl) { fmpl_emu_exit(clk_et(tl)->emu); }

static int clk_settle(fmpl_tl_t *tl)
{
    fmpl_emu_tl_t *et = clk_et(tl);
    int n = fmpl_emu_poll(et->emu);
    if (n < 0)
        return 0;
    et->delivered += n;
    return 1;
}

static int clk_idle(fmpl_tl_t *tl, double deadline)
{
    /* rounded up, and a picosecond more: at the deadline, fmpl_wtime() -
     * t0 must be >= the caller's timeout, not a rounding short of it
     * (by hand: ceil() was all libfmpl took from libm) */
    if (deadline < 0)
        return fmpl_emu_idle(clk_et(tl)->emu, FMPL_EMU_NEVER);
    double ps = deadline * 1e12;
    fmpl_emu_time_t d = (fmpl_emu_time_t)ps;
    d += (double)d < ps;
    return fmpl_emu_idle(clk_et(tl)->emu, d + 1);
}

static void clk_work(fmpl_tl_t *tl, int kind, size_t amount)
{
    fmpl_emu_tl_t *et = clk_et(tl);
    double ns = 0;
    switch (kind) {
    case FMPL_TL_WORK_COPY: ns = (double)amount * 1e3 / et->cost.copy_mbps; break;
    case FMPL_TL_WORK_PACK:
        ns = et->cost.pack_mbps > 0 ? et->cost.pack_ns + (double)amount * 1e3 / et->cost.pack_mbps
                                    : (double)amount * 1e3 / et->cost.copy_mbps;
        break;
    case FMPL_TL_WORK_OP:   ns = (double)amount * 1e3 / et->cost.op_mbps; break;
    case FMPL_TL_WORK_RECV: ns = et->cost.recv_done_ns; break;
    case FMPL_TL_WORK_NS:   ns = (double)amount; break;
    }
    fmpl_emu_charge(et->emu, fmpl_emu_ps(ns));
}

static void clk_finish(fmpl_tl_t *tl) { fmpl_emu_leave_job(clk_et(tl)->emu); }

static const fmpl_tl_clock_t emu_clock = {
    .now = clk_now, .enter = clk_enter, .exit = clk_exit, .settle = clk_settle,
    .idle = clk_idle, .work = clk_work, .finish = clk_finish,
};

/* ---- the matching area ---------------------------------------------------- */

volatile void *fmpl_emu_tl_mbox_in(fmpl_tl_t *tl, int peer, int idx)
{
    return fmpl_emu_tl_of(tl)->mbox +
           ((size_t)peer * (size_t)tl->nidx + (size_t)idx) * FMPL_TL_LINE;
}

void fmpl_emu_tl_record(fmpl_emu_msg_t *m, int idx, unsigned off, const void *half)
{
    *m = (fmpl_emu_msg_t){ .kind = FMPL_EMU_E_REC, .a = (uint32_t)idx, .b = off,
                           .len = FMPL_EMU_HALF };
    memcpy(m->payload, half, FMPL_EMU_HALF);
}

static int moved(fmpl_emu_tl_t *et, int peer, int e)
{
    if (e == 0)
        return FMPL_SUCCESS;
    if (e == -ESRCH) {
        return fmpl_tl_peer_gone(et->tl, peer, (int)et->pid[peer]);
    }
    fmpl_log_err("%s: cannot write rank %d's memory: %s", et->areas.name, peer, strerror(-e));
    return FMPL_ERR_SYSTEM;
}

int fmpl_emu_tl_write(fmpl_emu_tl_t *et, int peer, const void *src, size_t len, uint64_t at)
{
    if (peer == et->tl->rank) {
        memmove((void *)(uintptr_t)at, src, len);
        return FMPL_SUCCESS;
    }
    return moved(et, peer, fmpl_cma_copy(et->pid[peer], (void *)src, len, at, 1));
}

int fmpl_emu_tl_write_blocks(fmpl_emu_tl_t *et, int peer, const void *src, size_t blklen,
                             size_t nblk, size_t sstride, uint64_t at, size_t dstride)
{
    if (peer == et->tl->rank) {
        const uint8_t *s = src;
        for (size_t b = 0; b < nblk; b++)
            memmove((void *)(uintptr_t)(at + b * dstride), s + b * sstride, blklen);
        return FMPL_SUCCESS;
    }
    return moved(et, peer, fmpl_cma_write_blocks(et->pid[peer], src, blklen, nblk, sstride, at,
                                                 dstride, NULL));
}

int fmpl_emu_tl_stage(fmpl_emu_tl_t *et, int peer, int idx, unsigned off, const void *rec,
                      unsigned len, fmpl_emu_msg_t *m)
{
    if (off % FMPL_EMU_HALF || off >= FMPL_TL_LINE || len < 8 || len > FMPL_EMU_HALF ||
        idx < 0 || idx >= et->tl->nidx)
        return FMPL_ERR_ARG;
    uint8_t *half = et->staging +
                    ((size_t)peer * (size_t)et->tl->nidx + (size_t)idx) * FMPL_TL_LINE + off;
    memcpy(half, rec, len);
    fmpl_emu_tl_record(m, idx, off, half);
    return FMPL_SUCCESS;
}

/* An entry reached us at its modeled time: a record into its line (the
 * body first, then the word, as transport.h promises), or a signal. */
static void apply(void *ctx, const fmpl_emu_msg_t *m)
{
    fmpl_emu_tl_t *et = ctx;
    fmpl_tl_t *tl = et->tl;
    et->delivered++;
    if (m->kind == FMPL_EMU_E_SIG) {
        if (et->signal)
            et->signal(et, m);
        return;
    }
    if (m->src < 0 || m->src >= tl->size || (int)m->a >= tl->nidx ||
        m->b + FMPL_EMU_HALF > FMPL_TL_LINE)
        return;                    /* the engine's own doing: cannot happen */
    uint8_t *line = et->mbox + ((size_t)m->src * (size_t)tl->nidx + m->a) * FMPL_TL_LINE + m->b;
    memcpy(line + 8, m->payload + 8, FMPL_EMU_HALF - 8);
    uint64_t word;
    memcpy(&word, m->payload, sizeof word);
    atomic_store_explicit((_Atomic uint64_t *)(void *)line, word, memory_order_release);
    fmpl_tl_watch_note(tl, m->src, (int)m->a);
}

int fmpl_emu_tl_progress(fmpl_tl_t *tl)
{
    fmpl_emu_tl_t *et = fmpl_emu_tl_of(tl);
    int n = fmpl_emu_poll(et->emu);
    n = (n > 0 ? n : 0) + et->delivered;
    et->delivered = 0;
    return n;
}

int fmpl_emu_tl_mem_reg(fmpl_tl_t *tl, void *addr, size_t len, fmpl_tl_key_t *key)
{
    return fmpl_emu_area_reg(&fmpl_emu_tl_of(tl)->areas, addr, len, key);
}

void fmpl_emu_tl_mem_dereg(fmpl_tl_t *tl, const fmpl_tl_key_t *key)
{
    fmpl_emu_area_dereg(&fmpl_emu_tl_of(tl)->areas, key);
}

void *fmpl_emu_tl_mem_alloc(fmpl_tl_t *tl, size_t len)
{
    return fmpl_emu_area_alloc(&fmpl_emu_tl_of(tl)->areas, len);
}

int fmpl_emu_tl_mem_free(fmpl_tl_t *tl, void *p)
{
    return fmpl_emu_area_free(&fmpl_emu_tl_of(tl)->areas, p);
}

int fmpl_emu_tl_peer_ok(fmpl_tl_t *tl, int peer)
{
    return fmpl_emu_alive(fmpl_emu_tl_of(tl)->emu, peer);
}

void fmpl_emu_tl_forget(fmpl_tl_t *tl, fmpl_tl_comp_t *comp)
{
    fmpl_emu_forget(fmpl_emu_tl_of(tl)->emu, comp);
}

int fmpl_emu_tl_wait_comp(fmpl_emu_tl_t *et, fmpl_tl_comp_t *comp, int peer)
{
    double next_check = 0, t0 = 0;
    while (comp->pending > 0) {
        int n = fmpl_emu_poll(et->emu);
        if (comp->pending <= 0)
            break;
        if (n == 0)
            fmpl_emu_idle(et->emu, FMPL_EMU_NEVER);
        /* a peer gone, or silent past FMPL_PEER_TIMEOUT: a stopped rank
         * holds the emulated clock, so nothing would ever come */
        double now = fmpl_rtime();
        if (next_check == 0) {
            next_check = now + FMPL_TL_WAIT_PERIOD;
        } else if (now >= next_check) {
            next_check = now + FMPL_TL_WAIT_PERIOD;
            int rc = fmpl_tl_wait_check(et->tl, peer >= 0 && !fmpl_emu_alive(et->emu, peer),
                                        peer, &t0);
            if (rc != FMPL_SUCCESS)
                return rc;              /* the caller's wait reports it */
        }
    }
    return comp->status;
}

/* ---- a model's parameters ------------------------------------------------ */

static double *param_field(void *model, const fmpl_emu_param_t *p)
{
    return (double *)(void *)((char *)model + p->off);
}

int fmpl_emu_params_read(const char *prefix, const fmpl_emu_param_t *p, size_t n,
                         void *model, int *on)
{
    char name[96], what[256];
    snprintf(name, sizeof name, "%sMODEL", prefix);
    int rc = fmpl_env_bool(name, 1, "0 (functional emulation, this machine's clock) or 1 "
                           "(the timing model)", on);
    for (size_t i = 0; i < n && rc == FMPL_SUCCESS; i++) {
        snprintf(name, sizeof name, "%s%s", prefix, p[i].name);
        snprintf(what, sizeof what, "not a number >= %g (%s: %s)", p[i].lo, p[i].unit,
                 p[i].source);
        rc = fmpl_env_double(name, p[i].def, p[i].lo, HUGE_VAL, what, param_field(model, &p[i]));
    }
    return rc;
}

void fmpl_emu_params_log(const char *fabric, const char *prefix, const fmpl_emu_param_t *p,
                         size_t n, const void *model, int on)
{
    if (!on) {
        fmpl_log_info("%s: timing model off (%sMODEL=0): functional emulation, "
                      "fmpl_wtime() is this machine's clock", fabric, prefix);
        return;
    }
    for (size_t i = 0; i < n; i++)
        fmpl_log_info("%s: %s%s=%g %s  (%s)", fabric, prefix, p[i].name,
                      *param_field((void *)model, &p[i]), p[i].unit, p[i].source);
}

/* ---- lifecycle ------------------------------------------------------------- */

uint64_t fmpl_emu_digest(uint64_t h, const void *p, size_t n)
{
    const unsigned char *c = p;
    if (!h)
        h = 1469598103934665603ull;    /* FNV-1a */
    for (size_t i = 0; i < n; i++)
        h = (h ^ c[i]) * 1099511628211ull;
    return h;
}

/* The NIA, the DMA engine, moves bytes with cross-memory attach: try it
 * on the next rank's matching area before anything depends on it. */
static int cma_probe(fmpl_emu_tl_t *et, const char *name)
{
    fmpl_tl_t *tl = et->tl;
    if (tl->size == 1)
        return FMPL_SUCCESS;
    int peer = (tl->rank + 1) % tl->size;
    uint64_t word;
    int e = fmpl_cma_copy(et->pid[peer], &word, sizeof word,
                          fmpl_emu_probe_addr(et->emu, peer), 0);
    if (e == 0)
        return FMPL_SUCCESS;
    if (e == -ESRCH) {
        fmpl_log_err("%s: rank %d (pid %d) died during start-up", name, peer,
                     (int)et->pid[peer]);
        return FMPL_ERR_PEER;
    }
    fmpl_log_err("%s: cross-memory attach to rank %d refused (%s): the emulated fabric "
                 "writes the other nodes' memory with it (same user, "
                 "kernel.yama.ptrace_scope <= 1)", name, peer, strerror(-e));
    return FMPL_ERR_SYSTEM;
}

int fmpl_emu_tl_open(fmpl_emu_tl_t *et, const fmpl_emu_config_t *cfg)
{
    fmpl_tl_t *tl = et->tl;
    size_t lines = (size_t)tl->size * (size_t)tl->nidx;
    /* fresh zero pages, never written here: a peer's lines become
     * resident when it first writes one, so the matching area grows with
     * the peers a rank talks to (a page holds 64 lines of one peer's) */
    et->mbox = fmpl_seg_zalloc(lines * FMPL_TL_LINE);
    et->pid = calloc((size_t)tl->size, sizeof *et->pid);
    et->staging = fmpl_seg_zalloc(lines * FMPL_TL_LINE);
    if (!et->mbox || !et->pid || !et->staging)
        return FMPL_ERR_NOMEM;
    /* the area tables first in the fabric's shared bytes, 64-byte aligned */
    fmpl_emu_config_t c = *cfg;
    size_t tables = fmpl_emu_areas_bytes(tl->size, et->areas.max);
    tables = (tables + 63) & ~(size_t)63;
    c.fabric_bytes += tables;
    int rc = fmpl_emu_open(tl, &c, apply, et, &et->emu);
    if (rc != FMPL_SUCCESS)
        return rc;
    uint8_t *fab = fmpl_emu_fabric(et->emu);
    et->fabric = fab + tables;
    et->areas.rank = tl->rank;
    et->areas.size = tl->size;
    rc = fmpl_emu_areas_init(&et->areas, (fmpl_emu_area_t *)(void *)fab, et->mbox,
                             lines * FMPL_TL_LINE);
    if (rc != FMPL_SUCCESS)
        return rc;
    for (int r = 0; r < tl->size; r++)
        et->pid[r] = fmpl_emu_pid(et->emu, r);
    fmpl_emu_set_probe_addr(et->emu, (uint64_t)(uintptr_t)et->mbox);
    /* every probe target is published before anybody probes, and nobody
     * leaves before every probe is done */
    rc = tl->boot->ops->fence(tl->boot);
    if (rc == FMPL_SUCCESS)
        rc = cma_probe(et, cfg->name);
    if (rc == FMPL_SUCCESS)
        rc = tl->boot->ops->fence(tl->boot);
    if (rc == FMPL_SUCCESS) {
        tl->clock = cfg->model ? &emu_clock : NULL;
        tl->clock_priv = et;
    }
    return rc;
}

void fmpl_emu_tl_close(fmpl_emu_tl_t *et)
{
    fmpl_emu_areas_fini(&et->areas);
    fmpl_emu_close(et->emu);
    et->emu = NULL;
    fmpl_seg_zfree(et->mbox, (size_t)et->tl->size * (size_t)et->tl->nidx * FMPL_TL_LINE);
    free(et->pid);
    fmpl_seg_zfree(et->staging, (size_t)et->tl->size * (size_t)et->tl->nidx * FMPL_TL_LINE);
    et->staging = NULL;
    et->mbox = NULL;
    et->pid = NULL;
    if (et->tl)
        et->tl->clock = NULL;
}
