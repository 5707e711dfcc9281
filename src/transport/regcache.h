/*
 * regcache.h - the registration cache of every transport that registers
 * memory with a device library (ofi: libfabric; dcfa: verbs), one for
 * all of them as UCX's rcache serves all of UCX's transports.
 *
 * A registration in use is never closed or evicted, however many there
 * are: a peer may be writing into the buffer or reading from it until
 * its user lets go (a rank may post hundreds of receives before their
 * sends come).  A use (fmpl_rcache_take) finds a registration already
 * open that covers its bytes - fmpl_alloc_mem's first - and holds a
 * reference to it until fmpl_rcache_put; else it registers, whole blocks
 * of `round` bytes when the transport asks (a buffer next to another on
 * the same page then finds it).
 *
 * What becomes of a registration nobody uses any more is the transport's
 * policy, set in the cache before use:
 *   keep_idle 0     closed at once;
 *   keep_idle 1     kept for the next use: least recently used out first
 *                   beyond max_idle unused ones, max_idle_bytes unused
 *                   bytes, or max_kept kept ones in use or not (ofi keeps
 *                   64 where the provider reaches memory by its address;
 *                   dcfa keeps FMPL_DCFA_RCACHE_MB, at most 1024);
 *   mon             with a memory monitor (memmon.h) a kept registration's
 *                   pages are watched, and one whose memory went is closed
 *                   at once if nobody uses it, else when its last user is
 *                   done (and no use finds it meanwhile); one whose pages
 *                   cannot be watched is not kept.
 * A registration that fails for want of memory (ENOMEM, EAGAIN: the
 * locked-memory limit, maybe through the cache) is tried once more after
 * closing every kept one nobody uses.
 * Memory from fmpl_alloc_mem (fmpl_rcache_add) stays registered until
 * fmpl_rcache_free.
 */
#ifndef FMPL_REGCACHE_H
#define FMPL_REGCACHE_H

#include <stddef.h>
#include <stdint.h>

#include "transport/memmon.h"

/* What the transport does for the cache. */
typedef struct fmpl_rcache_ops {
    /* register [addr, addr + len), len > 0: 0 with the registration in
     * *mr and its key in *key, or an errno value (nothing said) */
    int  (*reg)(void *ctx, void *addr, size_t len, void **mr, uint64_t *key);
    void (*dereg)(void *ctx, void *mr);
    /* registering failed with errno value `err` (alloc: fmpl_alloc_mem's
     * memory): say so, return the FMPL code */
    int  (*fail)(void *ctx, int err, int alloc);
} fmpl_rcache_ops_t;

typedef struct fmpl_rcache_reg {
    uintptr_t base;
    size_t len;
    void *mr;                      /* the transport's registration; NULL: a free entry */
    uint64_t key;                  /* its key */
    uint64_t used;                 /* when last taken (least recently used out first) */
    unsigned refs;                 /* users: keys handed out, transfers in flight */
    uint8_t allocated;             /* fmpl_alloc_mem's: ours to free, never evicted */
    uint8_t kept;                  /* kept at refs 0 (with a monitor: its pages watched) */
    uint8_t stale;                 /* its memory went while in use: closed at refs 0 */
} fmpl_rcache_reg_t;

/* What the cache did (a transport may say it under FMPL_VERBOSE). */
typedef struct fmpl_rcache_stat {
    unsigned long hits, misses, invalidated, evicted, uncacheable;
} fmpl_rcache_stat_t;

typedef struct fmpl_rcache {
    const fmpl_rcache_ops_t *ops;
    void *ctx;
    /* the policy (see the top), set before the first use */
    int keep_idle;
    size_t round;                  /* a power of 2, 0: the bytes asked */
    unsigned max_idle;             /* 0: no bound */
    size_t max_idle_bytes;         /* 0: no bound */
    unsigned max_kept;             /* 0: no bound */
    fmpl_memmon_t *mon;            /* NULL: none (the cache does not close it) */
    /* the table: indices stay valid while their registration lives */
    fmpl_rcache_reg_t *reg;        /* [n], [cap] room */
    int n, cap;
    uint64_t clock;
    size_t idle_bytes;             /* bytes of kept registrations nobody uses */
    fmpl_rcache_stat_t stat;
} fmpl_rcache_t;

/* A registration covering [addr, addr + len) with a reference for the
 * caller: its index in *idx.  An FMPL code (said through ops->fail). */
int  fmpl_rcache_take(fmpl_rcache_t *c, void *addr, size_t len, int *idx);
/* The caller's reference to registration idx goes (any idx is checked). */
void fmpl_rcache_put(fmpl_rcache_t *c, int idx);
static inline const fmpl_rcache_reg_t *fmpl_rcache_get(const fmpl_rcache_t *c, int idx)
{
    return &c->reg[idx];
}
/* The registration in use whose key is `key`, or -1. */
int  fmpl_rcache_by_key(const fmpl_rcache_t *c, uint64_t key);
/* Memory the transport allocated for fmpl_alloc_mem, [p, p + len):
 * registered until fmpl_rcache_free, which frees it too (free()). */
int  fmpl_rcache_add(fmpl_rcache_t *c, void *p, size_t len);
int  fmpl_rcache_free(fmpl_rcache_t *c, void *p);   /* FMPL_ERR_ARG: not ours */
/* Registrations still in use, fmpl_alloc_mem's aside. */
int  fmpl_rcache_held(const fmpl_rcache_t *c);
/* Close every registration, free fmpl_alloc_mem's memory and the table. */
void fmpl_rcache_close(fmpl_rcache_t *c);

#endif
