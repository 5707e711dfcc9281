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
 * the monitor cannot watch (a file mapping): then a use registers and
 * its last user deregisters.  fmpl_alloc_mem memory is registered once,
 * until freed.  The table and its policies are the transports'
 * registration cache (transport/regcache.h); here is what verbs does for
 * it.
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

/* ---- what verbs does for the registration cache (transport/regcache.h) -- */

static int dcfa_reg(void *ctx, void *addr, size_t len, void **mr, uint64_t *key)
{
    struct ibv_mr *m = fmpl_dcfa_reg_mr(ctx, addr, len, ACCESS_ALL);
    if (!m)
        return errno ? errno : EINVAL;   /* (never 0: that is success here) */
    *mr = m;
    *key = m->rkey;
    return 0;
}

static void dcfa_dereg(void *ctx, void *mr)
{
    fmpl_dcfa_dereg_mr(ctx, mr);
}

static int dcfa_fail(void *ctx, int err, int alloc)
{
    return fmpl_dcfa_error(ctx, err, alloc ? "ibv_reg_mr (fmpl_alloc_mem)" : "ibv_reg_mr", -1);
}

static const fmpl_rcache_ops_t dcfa_rcache_ops = {
    .reg = dcfa_reg, .dereg = dcfa_dereg, .fail = dcfa_fail,
};

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
    fmpl_memmon_t *mon = NULL;
    if (d->cache_max) {
        const char *why = NULL;
        mon = fmpl_memmon_open(&why);
        if (!mon)
            fmpl_log_info("dcfa: no registration cache: %s", why);
    }
    /* kept, with whole pages watched, only with a monitor */
    d->rc = (fmpl_rcache_t){ .ops = &dcfa_rcache_ops, .ctx = d, .keep_idle = mon != NULL,
                             .round = mon ? (size_t)sysconf(_SC_PAGESIZE) : 0,
                             .max_idle_bytes = d->cache_max, .max_kept = CACHE_ENTRIES,
                             .mon = mon };
    return FMPL_SUCCESS;
}

void fmpl_dcfa_mem_close(fmpl_dcfa_t *d)
{
    const fmpl_rcache_stat_t *st = &d->rc.stat;
    if (d->rc.mon || st->uncacheable)
        fmpl_log_info("dcfa: registration cache: %lu hits, %lu misses, %lu invalidated "
                      "(memory freed or moved), %lu evicted, %lu uncacheable",
                      st->hits, st->misses, st->invalidated, st->evicted, st->uncacheable);
    fmpl_rcache_close(&d->rc);
    fmpl_memmon_close(d->rc.mon);
    d->rc.mon = NULL;
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

/* ---- the ops ------------------------------------------------------------ */

int fmpl_dcfa_mem_reg(fmpl_tl_t *tl, void *addr, size_t len, fmpl_tl_key_t *key)
{
    fmpl_dcfa_t *d = fmpl_dcfa_of(tl);
    int i;
    int rc = fmpl_rcache_take(&d->rc, addr, len, &i);
    if (rc != FMPL_SUCCESS)
        return rc;
    key->addr = (uint64_t)(uintptr_t)addr;
    key->kind = fmpl_dcfa_mr_of(d, i)->rkey;
    key->id = (uint32_t)i;
    return FMPL_SUCCESS;
}

void fmpl_dcfa_mem_dereg(fmpl_tl_t *tl, const fmpl_tl_key_t *key)
{
    fmpl_rcache_put(&fmpl_dcfa_of(tl)->rc, key->id > (uint32_t)INT32_MAX ? -1 : (int)key->id);
}

void *fmpl_dcfa_mem_alloc(fmpl_tl_t *tl, size_t len)
{
    fmpl_dcfa_t *d = fmpl_dcfa_of(tl);
    void *p = NULL;
    if (posix_memalign(&p, 4096, len ? len : 1) != 0)
        return NULL;
    if (fmpl_rcache_add(&d->rc, p, len ? len : 1) != FMPL_SUCCESS) {
        free(p);
        return NULL;
    }
    return p;
}

int fmpl_dcfa_mem_free(fmpl_tl_t *tl, void *p)
{
    return fmpl_rcache_free(&fmpl_dcfa_of(tl)->rc, p);
}
