/*
 * dcfa_mem.c - registrations and bounce slots of the verbs transport.
 *
 * A verbs registration pins the pages it covered when it was made, and
 * making one costs system calls and page-table walks on every size of
 * message: so registrations are kept after use, in a cache, and a buffer
 * sent or received again is found there.  What makes that correct is the
 * memory monitor (transport/memmon.h): a cached registration's pages are
 * watched, and when the application unmaps them, discards them or moves
 * them (free() and a new malloc() at the same address do), the
 * registration is closed before anything can use it again - at once if
 * nobody uses it, else when its last user is done (it is no longer
 * found).  Every user holds a reference: a receive's key until its
 * mem_dereg, a write or read until its completion.
 *
 * Cached registrations cover whole pages (a buffer next to another on
 * the same page finds it) and are always writable (registering for
 * writing makes the kernel break copy-on-write sharing now - of the zero
 * page under memory never written, say - and not after, when the
 * application's first store would move the buffer off the pinned page).
 * FMPL_DCFA_RCACHE_MB (default 256) bounds the bytes kept registered with
 * no user, least recently used out first; 0 turns the cache off, and so
 * does a system without userfaultfd (said under FMPL_VERBOSE) or memory
 * the monitor cannot watch (a file mapping): then each use registers and
 * deregisters.  fmpl_alloc_mem memory is registered once, until freed.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fmpl.h"
#include "base/log.h"
#include "transport/dcfa/dcfa.h"

#define ACCESS_ALL (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)
#define CACHE_ENTRIES 1024         /* cached registrations at most */

int fmpl_dcfa_mem_open(fmpl_dcfa_t *d)
{
    /* a receive holds the longest message: a record that fills a slot */
    d->rx_len = (FMPL_MMSG_HDR + d->box.rec_max + 63) & ~(size_t)63;
    if (posix_memalign((void **)&d->rx, 64, FMPL_DCFA_NRECV * d->rx_len) != 0 ||
        posix_memalign((void **)&d->bounce, 4096, (size_t)FMPL_DCFA_NBOUNCE * FMPL_DCFA_BOUNCE) !=
            0)
        return FMPL_ERR_NOMEM;
    memset(d->rx, 0, FMPL_DCFA_NRECV * d->rx_len);
    d->rx_mr = fmpl_dcfa_reg_mr(d, d->rx, FMPL_DCFA_NRECV * d->rx_len, IBV_ACCESS_LOCAL_WRITE);
    if (!d->rx_mr)
        return fmpl_dcfa_error(d, errno, "ibv_reg_mr (receive buffers)", -1);
    d->bounce_mr = fmpl_dcfa_reg_mr(d, d->bounce, (size_t)FMPL_DCFA_NBOUNCE * FMPL_DCFA_BOUNCE,
                              IBV_ACCESS_LOCAL_WRITE);
    if (!d->bounce_mr)
        return fmpl_dcfa_error(d, errno, "ibv_reg_mr (bounce slots)", -1);
    for (int i = 0; i < FMPL_DCFA_NBOUNCE; i++)
        d->bounce_free[i] = FMPL_DCFA_NBOUNCE - 1 - i;
    d->nbounce_free = FMPL_DCFA_NBOUNCE;
    if (d->cache_max) {
        const char *why = NULL;
        d->mon = fmpl_memmon_open(&why);
        if (!d->mon)
            fmpl_log_info("dcfa: no registration cache: %s", why);
    }
    return FMPL_SUCCESS;
}

void fmpl_dcfa_mem_close(fmpl_dcfa_t *d)
{
    if (d->mon || d->rstat.uncacheable)
        fmpl_log_info("dcfa: registration cache: %lu hits, %lu misses, %lu invalidated "
                      "(memory freed or moved), %lu evicted, %lu uncacheable",
                      d->rstat.hits, d->rstat.misses, d->rstat.invalidated, d->rstat.evicted,
                      d->rstat.uncacheable);
    for (int i = 0; i < d->nreg; i++) {
        if (d->reg[i].mr)
            fmpl_dcfa_dereg_mr(d, d->reg[i].mr);
        if (d->reg[i].allocated)
            free((void *)d->reg[i].base);
    }
    fmpl_memmon_close(d->mon);
    d->mon = NULL;
    free(d->reg);
    d->reg = NULL;
    d->nreg = d->cap = 0;
    if (d->rx_mr)
        fmpl_dcfa_dereg_mr(d, d->rx_mr);
    if (d->bounce_mr)
        fmpl_dcfa_dereg_mr(d, d->bounce_mr);
    free(d->rx);
    free(d->bounce);
}

int fmpl_dcfa_bounce_get(fmpl_dcfa_t *d)
{
    return d->nbounce_free ? d->bounce_free[--d->nbounce_free] : -1;
}

void fmpl_dcfa_bounce_put(fmpl_dcfa_t *d, int slot)
{
    d->bounce_free[d->nbounce_free++] = slot;
}

/* ---- the table ---------------------------------------------------------- */

/* A registration usable for [a, a + len) - fmpl_alloc_mem's first -, or -1. */
static int covering(const fmpl_dcfa_t *d, uintptr_t a, size_t len)
{
    int found = -1;
    for (int i = 0; i < d->nreg; i++) {
        const fmpl_dcfa_reg_t *r = &d->reg[i];
        if (!r->mr || r->stale || !(r->allocated || r->cached) || a < r->base ||
            a + len > r->base + r->len)
            continue;
        if (r->allocated)
            return i;
        found = i;
    }
    return found;
}

/* A free entry of the table (its index), or -1 without memory. */
static int slot(fmpl_dcfa_t *d)
{
    for (int i = 0; i < d->nreg; i++)
        if (!d->reg[i].mr)
            return i;
    if (d->nreg == d->cap) {
        int cap = d->cap ? 2 * d->cap : 64;
        fmpl_dcfa_reg_t *r = realloc(d->reg, (size_t)cap * sizeof *r);
        if (!r)
            return -1;
        d->reg = r;
        d->cap = cap;
    }
    d->reg[d->nreg] = (fmpl_dcfa_reg_t){ 0 };
    return d->nreg++;
}

/* Close registration i and free its entry; a cached one's pages are no
 * longer watched unless another cached registration covers some of them
 * (left watched then: a watch costs nothing until its pages go). */
static void drop(fmpl_dcfa_t *d, int i)
{
    fmpl_dcfa_reg_t *r = &d->reg[i];
    if (r->cached) {
        int shared = 0;
        for (int j = 0; j < d->nreg && !shared; j++)
            shared = j != i && d->reg[j].mr && d->reg[j].cached &&
                     d->reg[j].base < r->base + r->len && r->base < d->reg[j].base + d->reg[j].len;
        if (!shared)
            fmpl_memmon_unwatch(d->mon, r->base, r->len);
        if (!r->stale && r->refs == 0)
            d->cache_bytes -= r->len;      /* it was counted as kept */
    }
    fmpl_dcfa_dereg_mr(d, r->mr);
    *r = (fmpl_dcfa_reg_t){ 0 };
}

/* Its memory went: close it now, or when its last user is done. */
static void invalidate(fmpl_dcfa_t *d, int i)
{
    fmpl_dcfa_reg_t *r = &d->reg[i];
    d->rstat.invalidated++;
    if (r->refs == 0) {
        drop(d, i);
    } else {
        r->stale = 1;
    }
}

/* Take in what the monitor saw go since last time. */
static void take_news(fmpl_dcfa_t *d)
{
    if (!d->mon)
        return;
    fmpl_memmon_range_t g[64];
    int n;
    while ((n = fmpl_memmon_gone(d->mon, g, 64)) != 0)
        for (int i = 0; i < d->nreg; i++) {
            fmpl_dcfa_reg_t *r = &d->reg[i];
            if (!r->mr || !r->cached || r->stale)
                continue;
            int hit = n < 0;
            for (int k = 0; k < n && !hit; k++)
                hit = g[k].start < r->base + r->len && r->base < g[k].end;
            if (hit)
                invalidate(d, i);
        }
}

/* Close cached registrations nobody uses, least recently used first,
 * until those left fit in `keep` bytes and the entry bound. */
static void evict(fmpl_dcfa_t *d, size_t keep)
{
    for (;;) {
        int lru = -1, ncached = 0;
        for (int i = 0; i < d->nreg; i++) {
            const fmpl_dcfa_reg_t *r = &d->reg[i];
            if (!r->mr || !r->cached)
                continue;
            ncached++;
            if (r->refs == 0 && (lru < 0 || r->used < d->reg[lru].used))
                lru = i;
        }
        if (lru < 0 || (d->cache_bytes <= keep && ncached <= CACHE_ENTRIES))
            return;
        d->rstat.evicted++;
        drop(d, lru);
    }
}

int fmpl_dcfa_reg_take(fmpl_dcfa_t *d, void *addr, size_t len, int *idx)
{
    uintptr_t a = (uintptr_t)addr;
    if (len == 0)
        len = 1;
    take_news(d);
    int i = covering(d, a, len);
    if (i >= 0) {
        fmpl_dcfa_reg_t *r = &d->reg[i];
        if (r->cached) {
            d->rstat.hits++;
            if (r->refs == 0)
                d->cache_bytes -= r->len;
            r->used = ++d->clock;
        }
        r->refs++;
        *idx = i;
        return FMPL_SUCCESS;
    }
    i = slot(d);
    if (i < 0)
        return FMPL_ERR_NOMEM;
    fmpl_dcfa_reg_t *r = &d->reg[i];
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t base = a, end = a + len;
    if (d->mon) {
        d->rstat.misses++;
        base = a & ~(page - 1);
        end = (a + len + page - 1) & ~(page - 1);
    }
    struct ibv_mr *mr = fmpl_dcfa_reg_mr(d, (void *)base, end - base, ACCESS_ALL);
    if (!mr && (errno == ENOMEM || errno == EAGAIN) && d->mon) {
        /* over the locked-memory limit, maybe through our cache */
        evict(d, 0);
        mr = fmpl_dcfa_reg_mr(d, (void *)base, end - base, ACCESS_ALL);
    }
    if (!mr)
        return fmpl_dcfa_error(d, errno, "ibv_reg_mr", -1);
    *r = (fmpl_dcfa_reg_t){ .base = base, .len = end - base, .mr = mr, .refs = 1 };
    if (d->mon) {
        /* watched only once registered: pinning faults its pages in */
        if (fmpl_memmon_watch(d->mon, base, end - base) == 0) {
            r->cached = 1;
            r->used = ++d->clock;
        } else {
            d->rstat.uncacheable++;
        }
    }
    *idx = i;
    return FMPL_SUCCESS;
}

void fmpl_dcfa_reg_put(fmpl_dcfa_t *d, int idx)
{
    if (idx < 0 || idx >= d->nreg)
        return;
    fmpl_dcfa_reg_t *r = &d->reg[idx];
    if (!r->mr || r->refs == 0 || --r->refs != 0 || r->allocated)
        return;
    if (!r->cached || r->stale) {
        drop(d, idx);
        return;
    }
    d->cache_bytes += r->len;
    evict(d, d->cache_max);
}

/* ---- the ops ------------------------------------------------------------ */

int fmpl_dcfa_mem_reg(fmpl_tl_t *tl, void *addr, size_t len, fmpl_tl_key_t *key)
{
    fmpl_dcfa_t *d = fmpl_dcfa_of(tl);
    int i;
    int rc = fmpl_dcfa_reg_take(d, addr, len, &i);
    if (rc != FMPL_SUCCESS)
        return rc;
    key->addr = (uint64_t)(uintptr_t)addr;
    key->kind = d->reg[i].mr->rkey;
    key->id = (uint32_t)i;
    return FMPL_SUCCESS;
}

void fmpl_dcfa_mem_dereg(fmpl_tl_t *tl, const fmpl_tl_key_t *key)
{
    fmpl_dcfa_reg_put(fmpl_dcfa_of(tl), key->id > (uint32_t)INT32_MAX ? -1 : (int)key->id);
}

void *fmpl_dcfa_mem_alloc(fmpl_tl_t *tl, size_t len)
{
    fmpl_dcfa_t *d = fmpl_dcfa_of(tl);
    void *p = NULL;
    if (posix_memalign(&p, 4096, len ? len : 1) != 0)
        return NULL;
    int i = slot(d);
    struct ibv_mr *mr = i < 0 ? NULL : fmpl_dcfa_reg_mr(d, p, len ? len : 1, ACCESS_ALL);
    if (!mr) {
        if (i >= 0)
            fmpl_dcfa_error(d, errno, "ibv_reg_mr (fmpl_alloc_mem)", -1);
        free(p);
        return NULL;
    }
    d->reg[i] = (fmpl_dcfa_reg_t){ .base = (uintptr_t)p, .len = len ? len : 1, .mr = mr,
                                   .allocated = 1 };
    return p;
}

int fmpl_dcfa_mem_free(fmpl_tl_t *tl, void *p)
{
    fmpl_dcfa_t *d = fmpl_dcfa_of(tl);
    for (int i = 0; i < d->nreg; i++)
        if (d->reg[i].mr && d->reg[i].allocated && d->reg[i].base == (uintptr_t)p) {
            fmpl_dcfa_dereg_mr(d, d->reg[i].mr);
            free(p);
            d->reg[i] = (fmpl_dcfa_reg_t){ 0 };
            return FMPL_SUCCESS;
        }
    return FMPL_ERR_ARG;
}
