/*
 * emu_area.h - the memory a peer may write on an emulated fabric: every
 * node's table of registered regions (the SR8000's combuf remote-DMA
 * areas, PEACH2's pinned pages in the PCIe window), shared by the fabrics
 * so that each checks a remote write the way its hardware did.
 *
 * The tables live in the engine's shared segment: node r's is written
 * only by rank r, read by every kicking rank.  An entry is a region's
 * virtual address, its length, the address a peer names it by (its
 * BASE), and a generation that is odd while the region exists.  A key
 * carries (id, generation, base), so a write through a key whose region
 * is gone, or beyond its end, is refused with a message.
 *
 * The base is the virtual address itself on a fabric whose peers name a
 * node's memory by its addresses (tcw), or a place in a global WINDOW
 * (PEACH2's PCIe address window): node r owns the slice [win_base + r x
 * slice, ... + slice) and a registration pins whole pages into the first
 * free place of its slice, as a driver maps pinned pages for a device.
 *
 * Id 0 is the matching area; ids 1 .. nstatic - 1 are fmpl_alloc_mem's
 * (static: a hardware broadcast targets one of those at the same offset
 * on every node); the rest are the buffers FMPL hands to peers for the
 * length of one message.
 */
#ifndef FMPL_EMU_AREA_H
#define FMPL_EMU_AREA_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "transport/transport.h"

typedef struct fmpl_emu_area {
    uint64_t addr, len;            /* virtual address (in the owner), bytes */
    uint64_t base;                 /* the address peers name it by */
    _Atomic uint32_t gen;          /* odd: in use; a key carries it */
    uint32_t pad;
} fmpl_emu_area_t;

typedef struct fmpl_emu_span { uint64_t off, len; } fmpl_emu_span_t;

typedef struct fmpl_emu_areas {
    const char *name;              /* the fabric, in messages */
    const char *what;              /* "remote-DMA area": what a region is called */
    int rank, size;
    int max, nstatic;              /* ids per node; 1 .. nstatic - 1 static */
    uint64_t win_base, win_slice;  /* the window (slice 0: bases are addresses) */
    int win_nodes;                 /* nodes a window (0: the job); rank r owns
                                      slice r mod win_nodes of its own window */
    fmpl_emu_area_t *table;        /* [size][max], shared */
    int32_t *free_static, nfree_static;
    int32_t *free_dyn, nfree_dyn;
    void **alloc_base;             /* [nstatic]: fmpl_alloc_mem's mappings */
    fmpl_emu_span_t *used;         /* our slice's places in use, by offset */
    int nused, used_cap;
} fmpl_emu_areas_t;

/* Shared bytes the tables of `size` nodes need. */
size_t fmpl_emu_areas_bytes(int size, int max);
/* Our table in `table` (zeroed by rank 0); area 0 is the matching area
 * [mbox, mbox + mbox_len).  The caller has set name, what, rank, size,
 * max, nstatic, win_base and win_slice.  An FMPL code. */
int  fmpl_emu_areas_init(fmpl_emu_areas_t *A, fmpl_emu_area_t *table, void *mbox,
                         size_t mbox_len);
void fmpl_emu_areas_fini(fmpl_emu_areas_t *A);

/* the memory ops of transport.h */
int   fmpl_emu_area_reg(fmpl_emu_areas_t *A, void *addr, size_t len, fmpl_tl_key_t *key);
void  fmpl_emu_area_dereg(fmpl_emu_areas_t *A, const fmpl_tl_key_t *key);
void *fmpl_emu_area_alloc(fmpl_emu_areas_t *A, size_t len);
int   fmpl_emu_area_free(fmpl_emu_areas_t *A, void *p);

/* A write of len bytes at key + roff into rank `peer`: where it lands in
 * the peer's memory (a virtual address there), or 0 (logged) when the key
 * does not cover it. */
uint64_t fmpl_emu_area_check(const fmpl_emu_areas_t *A, int peer, const fmpl_tl_key_t *key,
                             uint64_t roff, size_t len);
/* The static region holding [p, p + len) here: its id and the offset of
 * p in it, or -1. */
int fmpl_emu_area_static(const fmpl_emu_areas_t *A, const void *p, size_t len, uint64_t *off);
/* The base of our region `id` (the matching area: 0). */
uint64_t fmpl_emu_area_base(const fmpl_emu_areas_t *A, int rank, uint32_t id);

#endif
