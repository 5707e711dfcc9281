/*
 * emu_tl.h - what every emulated fabric's transport does the same way, on
 * top of the engine (emu.h): FMPL's matching area as records that arrive
 * at their modeled time, the clock behind fmpl_wtime (transport.h's
 * fmpl_tl_clock_t), progress, liveness, the cross-memory-attach probe, and
 * the wait for a kick that must complete.  A fabric (tcw, peach2) keeps
 * its state in a struct that begins with a pointer to an fmpl_emu_tl_t,
 * and writes only what its machine has of its own: descriptors,
 * topology, costs, hardware collectives.
 */
#ifndef FMPL_EMU_TL_H
#define FMPL_EMU_TL_H

#include <sys/types.h>

#include "transport/emu/emu.h"
#include "transport/emu/emu_area.h"
#include "transport/transport.h"

#define FMPL_EMU_HALF 32           /* a mailbox record: half a line */

/* The emulated CPU's costs of FMPL's own work, in the fabric's model. */
typedef struct fmpl_emu_costs {
    double call_ns;                /* an FMPL call's own start */
    double recv_done_ns;           /* a receive seeing its flag and ending */
    double copy_mbps, op_mbps;     /* a CPU copy; combining a reduction */
    double pack_ns, pack_mbps;     /* packing a face where the data lives (a GPU
                                      kernel: tca); pack_mbps 0: a CPU copy */
} fmpl_emu_costs_t;

typedef struct fmpl_emu_tl {
    fmpl_tl_t *tl;
    fmpl_emu_t *emu;
    fmpl_emu_costs_t cost;
    uint8_t *mbox;                 /* our matching area: [size][nidx] lines */
    uint8_t *staging;              /* our lines at the peers as we last wrote them:
                                      [size][nidx] lines, whichever network wrote */
    pid_t *pid;                    /* [size] */
    int delivered;                 /* entries applied since progress looked */
    fmpl_tl_comp_t sync;           /* kicks that complete before the call returns */
    fmpl_emu_areas_t areas;        /* the memory peers may write (emu_area.h) */
    void *fabric;                  /* the fabric's own shared area, after the tables */
    /* a fabric signal (hardware collectives) reached us */
    void (*signal)(struct fmpl_emu_tl *et, const fmpl_emu_msg_t *m);
} fmpl_emu_tl_t;

/* A fabric's state (tl->priv) begins with a pointer to its machine's
 * glue: the networks of one machine (tca's PEACH2 and InfiniBand) share
 * one engine, clock, matching area and area tables. */
static inline fmpl_emu_tl_t *fmpl_emu_tl_of(fmpl_tl_t *tl) { return *(fmpl_emu_tl_t **)tl->priv; }

/* The mailbox and the engine: allocates the matching area, opens the
 * engine (collective) with room for the area tables before the fabric's
 * own shared bytes (et->fabric), makes the matching area region 0,
 * probes cross-memory attach to the next rank, and sets tl->clock (and
 * tl->clock_priv) when the model is on.  The fabric has set et->tl, et->cost, et->signal and
 * et->areas' name, what, max, nstatic and window.  An FMPL code, logged. */
int  fmpl_emu_tl_open(fmpl_emu_tl_t *et, const fmpl_emu_config_t *cfg);
void fmpl_emu_tl_close(fmpl_emu_tl_t *et);

/* ops every fabric shares */
volatile void *fmpl_emu_tl_mbox_in(fmpl_tl_t *tl, int peer, int idx);
int  fmpl_emu_tl_progress(fmpl_tl_t *tl);
int  fmpl_emu_tl_mem_reg(fmpl_tl_t *tl, void *addr, size_t len, fmpl_tl_key_t *key);
void fmpl_emu_tl_mem_dereg(fmpl_tl_t *tl, const fmpl_tl_key_t *key);
void *fmpl_emu_tl_mem_alloc(fmpl_tl_t *tl, size_t len);
int  fmpl_emu_tl_mem_free(fmpl_tl_t *tl, void *p);
int  fmpl_emu_tl_peer_ok(fmpl_tl_t *tl, int peer);

/* Our line at `peer` about `idx`, the half at `off`: the record `rec` as
 * an entry for a transfer (bytes of the half past `len` as `keep` has
 * them: the last record written there). */
void fmpl_emu_tl_record(fmpl_emu_msg_t *m, int idx, unsigned off, const void *half);
/* A notify's record as an entry: `rec` into our copy of the half line
 * (et->staging; bytes past `len` stay what we wrote there last, so the
 * line keeps them), then as fmpl_emu_tl_record.  FMPL_ERR_ARG for an
 * offset or length that is not one half line's. */
int  fmpl_emu_tl_stage(fmpl_emu_tl_t *et, int peer, int idx, unsigned off, const void *rec,
                       unsigned len, fmpl_emu_msg_t *m);
/* The bytes of a write, moved at once (emu.h): len bytes from src to the
 * address `at` in `peer`'s memory (fmpl_emu_area_check's), or nblk
 * blocks of blklen with strides on both sides.  FMPL_ERR_PEER (logged)
 * when the peer is gone. */
int  fmpl_emu_tl_write(fmpl_emu_tl_t *et, int peer, const void *src, size_t len, uint64_t at);
int  fmpl_emu_tl_write_blocks(fmpl_emu_tl_t *et, int peer, const void *src, size_t blklen,
                              size_t nblk, size_t sstride, uint64_t at, size_t dstride);
/* Wait until *comp has nothing pending (progress and liveness as any
 * FMPL wait); its status, or FMPL_ERR_PEER. */
int  fmpl_emu_tl_wait_comp(fmpl_emu_tl_t *et, fmpl_tl_comp_t *comp, int peer);
/* ops->forget of the emulated machines (transport.h) */
void fmpl_emu_tl_forget(fmpl_tl_t *tl, fmpl_tl_comp_t *comp);
/* A digest of a fabric's settings (fmpl_emu_config_t.signature): every
 * rank must emulate the same machine.  Start with h = 0. */
uint64_t fmpl_emu_digest(uint64_t h, const void *p, size_t n);
/* A model's parameters: one table per fabric, each a double in the
 * fabric's model struct, settable as <prefix><name> (FMPL_TCW_XBAR_NS),
 * with its default, its least value and where the default comes from. */
typedef struct fmpl_emu_param {
    const char *name;
    size_t off;                    /* in the model struct */
    double def, lo;
    const char *unit, *source;
} fmpl_emu_param_t;
/* Defaults, then the environment; *on from <prefix>MODEL (0: off).
 * FMPL_ERR_ARG (logged) for a bad value. */
int  fmpl_emu_params_read(const char *prefix, const fmpl_emu_param_t *p, size_t n,
                          void *model, int *on);
void fmpl_emu_params_log(const char *fabric, const char *prefix, const fmpl_emu_param_t *p,
                         size_t n, const void *model, int on);

/* `ns` of modeled time as the engine's picoseconds */
static inline fmpl_emu_time_t fmpl_emu_ps(double ns) { return FMPL_EMU_NS(ns); }

#endif
