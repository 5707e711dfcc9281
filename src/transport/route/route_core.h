/*
 * route_core.h - near/far routing, written once: one transport over two
 * (docs/transports.md, "route: per peer").
 *
 * Real clusters and the TCA papers share one idea: a NEAR network that
 * reaches some peers cheaply (shared memory on a host; PEACH2 inside a
 * sub-cluster) and a FAR one that reaches everyone (libfabric;
 * InfiniBand).  A routing transport owns both as complete transports
 * (part[NEAR], part[FAR]) and sends every call that names a peer to one
 * of them:
 *  - a peer the near part does not reach: always the far part;
 *  - otherwise its class decides per operation and size (choose): the
 *    shm/ofi route always near, tca by its policy (Odajima et al. 2015,
 *    5: PEACH2 for small messages and block-stride, InfiniBand for large
 *    ones).
 * ORDER.  transport.h promises that an ordered record is seen after every
 * earlier put to its peer, and each part keeps that promise only for its
 * own puts.  So the first put to a peer after an ordered record chooses a
 * part and PINS it: later puts and the next record to that peer follow
 * the pinned part, and that record unpins it.  Where both parts write
 * one matching area (tca), the machine also keeps a peer's records from
 * overtaking one already on its way on the other network
 * (fmpl_emu_config_t.pair_order).
 * The class's struct begins with an fmpl_route_t (tl->priv).
 */
#ifndef FMPL_ROUTE_CORE_H
#define FMPL_ROUTE_CORE_H

#include <stdint.h>

#include "transport/transport.h"

enum { FMPL_ROUTE_NEAR = 0, FMPL_ROUTE_FAR = 1 };
/* what an operation is, for the class's choice */
enum { FMPL_ROUTE_PUT = 0, FMPL_ROUTE_STRIDED = 1, FMPL_ROUTE_IOV = 2, FMPL_ROUTE_RECORD = 3,
       FMPL_ROUTE_FACE = 4,        /* a put with FMPL_TL_PUT_FACE: a halo face */
       FMPL_ROUTE_OPS = 5 };
/* or'ed into choose()'s op: one of several the caller sends at once
 * (FMPL_TL_PUT_BURST, FMPL_TL_NOTIFY_BURST) */
#define FMPL_ROUTE_BURST 0x100

typedef struct fmpl_route fmpl_route_t;

typedef struct fmpl_route_class {
    const char *name;              /* in messages */
    const char *part_name[2];      /* "PEACH2", "InfiniBand" */
    /* The part for an operation to a near peer that nothing pins:
     * FMPL_ROUTE_NEAR or _FAR.  `bytes`: what it moves. */
    int (*choose)(fmpl_route_t *r, int peer, int op, size_t bytes);
    /* The key `part` understands for `peer`, from the route's key (NULL:
     * both parts understand the route's keys). */
    const fmpl_tl_key_t *(*key)(fmpl_route_t *r, int part, int peer, const fmpl_tl_key_t *key,
                                fmpl_tl_key_t *tmp);
} fmpl_route_class_t;

struct fmpl_route {
    const fmpl_route_class_t *cls;
    fmpl_tl_t part[2];
    uint8_t *near;                 /* [size]: the near part reaches the rank */
    int8_t *pinned;                /* [size]: the part puts are pinned to, -1 */
    uint64_t count[2][FMPL_ROUTE_OPS];   /* operations a part carried (FMPL_VERBOSE) */
};

static inline fmpl_route_t *fmpl_route_of(fmpl_tl_t *tl) { return (fmpl_route_t *)tl->priv; }

/* near[] and pinned[] for tl->size ranks (near: none yet); an FMPL code. */
int  fmpl_route_core_init(fmpl_route_t *r, const fmpl_route_class_t *cls, int size);
/* Logs the counts (FMPL_VERBOSE), frees near[] and pinned[]. */
void fmpl_route_core_fini(fmpl_route_t *r, int rank);

/* The ops that name a peer, for a routing transport's table. */
int  fmpl_route_put(fmpl_tl_t *tl, int peer, const void *src, size_t len,
                    const fmpl_tl_key_t *key, uint64_t roff, unsigned flags,
                    fmpl_tl_comp_t *comp);
int  fmpl_route_put_strided(fmpl_tl_t *tl, int peer, const void *src, size_t blklen,
                            size_t nblk, size_t sstride, const fmpl_tl_key_t *key,
                            uint64_t roff, size_t dstride, fmpl_tl_comp_t *comp);
int  fmpl_route_put_iov(fmpl_tl_t *tl, int peer, const fmpl_tl_iov_t *iov, int n,
                        const fmpl_tl_key_t *key, fmpl_tl_comp_t *comp);
int  fmpl_route_get(fmpl_tl_t *tl, int peer, void *dst, size_t len, const fmpl_tl_key_t *key,
                    uint64_t roff);
volatile void *fmpl_route_mbox_in(fmpl_tl_t *tl, int peer, int idx);
int  fmpl_route_notify(fmpl_tl_t *tl, int peer, int idx, unsigned off, const void *rec,
                       unsigned len, unsigned flags, fmpl_tl_comp_t *comp);
int  fmpl_route_mbox_cas(fmpl_tl_t *tl, int peer, int idx, unsigned off, int outgoing,
                         uint64_t expect, uint64_t desired, uint64_t *old);
int  fmpl_route_peer_ok(fmpl_tl_t *tl, int peer);

#endif
