/*
 * regcache.c - the registration cache (regcache.h): a table of
 * registrations, each with its users, searched linearly (a rank holds
 * a few hundred at most).
 */
#include <errno.h>
#include <stdlib.h>

#include "fmpl.h"
#include "transport/regcache.h"

/* A live registration covering [a, a + len) - fmpl_alloc_mem's first -,
 * or -1.  One whose memory went is found by nobody. */
static int covering(const fmpl_rcache_t *c, uintptr_t a, size_t len)
{
    int found = -1;
    for (int i = 0; i < c->n; i++) {
        const fmpl_rcache_reg_t *r = &c->reg[i];
        if (!r->mr || r->stale || a < r->base || a + len > r->base + r->len)
            continue;
        if (r->allocated)
            return i;
        if (found < 0)
            found = i;
    }
    return found;
}

/* A free entry of the table (its index), or -1 without memory. */
static int slot(fmpl_rcache_t *c)
{
    for (int i = 0; i < c->n; i++)
        if (!c->reg[i].mr)
            return i;
    if (c->n == c->cap) {
        int cap = c->cap ? 2 * c->cap : 64;
        fmpl_rcache_reg_t *r = realloc(c->reg, (size_t)cap * sizeof *r);
        if (!r)
            return -1;
        c->reg = r;
        c->cap = cap;
    }
    c->reg[c->n] = (fmpl_rcache_reg_t){ 0 };
    return c->n++;
}

/* Close registration i and free its entry (and fmpl_alloc_mem's memory).
 * A kept one's pages are no longer watched unless another kept
 * registration covers some of them (left watched then: a watch costs
 * nothing until its pages go). */
static void drop(fmpl_rcache_t *c, int i)
{
    fmpl_rcache_reg_t *r = &c->reg[i];
    if (r->kept) {
        int shared = 0;
        for (int j = 0; j < c->n && !shared && c->mon; j++)
            shared = j != i && c->reg[j].mr && c->reg[j].kept &&
                     c->reg[j].base < r->base + r->len && r->base < c->reg[j].base + c->reg[j].len;
        if (c->mon && !shared)
            fmpl_memmon_unwatch(c->mon, r->base, r->len);
        if (!r->stale && r->refs == 0)
            c->idle_bytes -= r->len;       /* it was counted as kept unused */
    }
    c->ops->dereg(c->ctx, r->mr);
    if (r->allocated)
        free((void *)r->base);
    *r = (fmpl_rcache_reg_t){ 0 };
}

/* Its memory went: close it now, or when its last user is done. */
static void invalidate(fmpl_rcache_t *c, int i)
{
    c->stat.invalidated++;
    if (c->reg[i].refs == 0)
        drop(c, i);
    else
        c->reg[i].stale = 1;
}

/* Take in what the monitor saw go since last time. */
static void take_news(fmpl_rcache_t *c)
{
    if (!c->mon)
        return;
    fmpl_memmon_range_t g[64];
    int n;
    while ((n = fmpl_memmon_gone(c->mon, g, 64)) != 0)
        for (int i = 0; i < c->n; i++) {
            const fmpl_rcache_reg_t *r = &c->reg[i];
            if (!r->mr || !r->kept || r->stale)
                continue;
            int hit = n < 0;
            for (int k = 0; k < n && !hit; k++)
                hit = g[k].start < r->base + r->len && r->base < g[k].end;
            if (hit)
                invalidate(c, i);
        }
}

/* Close kept registrations nobody uses, least recently used first, while
 * they pass one of the policy's bounds (or while there are any: all). */
static void evict(fmpl_rcache_t *c, int all)
{
    for (;;) {
        int lru = -1;
        unsigned kept = 0, idle = 0;
        for (int i = 0; i < c->n; i++) {
            const fmpl_rcache_reg_t *r = &c->reg[i];
            if (!r->mr || !r->kept)
                continue;
            kept++;
            if (r->refs == 0) {
                idle++;
                if (lru < 0 || r->used < c->reg[lru].used)
                    lru = i;
            }
        }
        if (lru < 0)
            return;
        if (!all && !(c->max_idle && idle > c->max_idle) &&
            !(c->max_idle_bytes && c->idle_bytes > c->max_idle_bytes) &&
            !(c->max_kept && kept > c->max_kept))
            return;
        c->stat.evicted++;
        drop(c, lru);
    }
}

int fmpl_rcache_take(fmpl_rcache_t *c, void *addr, size_t len, int *idx)
{
    uintptr_t a = (uintptr_t)addr;
    if (len == 0)
        len = 1;
    take_news(c);
    int i = covering(c, a, len);
    if (i >= 0) {
        fmpl_rcache_reg_t *r = &c->reg[i];
        if (r->kept) {
            c->stat.hits++;
            if (r->refs == 0)
                c->idle_bytes -= r->len;
        }
        r->used = ++c->clock;
        r->refs++;
        *idx = i;
        return FMPL_SUCCESS;
    }
    i = slot(c);
    if (i < 0)
        return FMPL_ERR_NOMEM;
    uintptr_t base = a, end = a + len;
    if (c->round) {
        base = a & ~(uintptr_t)(c->round - 1);
        end = (a + len + c->round - 1) & ~(uintptr_t)(c->round - 1);
    }
    if (c->keep_idle)
        c->stat.misses++;
    void *mr = NULL;
    uint64_t key = 0;
    int err = c->ops->reg(c->ctx, (void *)base, end - base, &mr, &key);
    if ((err == ENOMEM || err == EAGAIN) && c->keep_idle) {
        /* over the locked-memory limit, maybe through what we keep */
        evict(c, 1);
        err = c->ops->reg(c->ctx, (void *)base, end - base, &mr, &key);
    }
    if (err)
        return c->ops->fail(c->ctx, err, 0);
    fmpl_rcache_reg_t *r = &c->reg[i];
    *r = (fmpl_rcache_reg_t){ .base = base, .len = end - base, .mr = mr, .key = key,
                              .refs = 1, .used = ++c->clock };
    if (c->keep_idle) {
        /* watched only once registered: pinning faults its pages in */
        if (!c->mon || fmpl_memmon_watch(c->mon, base, end - base) == 0)
            r->kept = 1;
        else
            c->stat.uncacheable++;
    }
    *idx = i;
    return FMPL_SUCCESS;
}

void fmpl_rcache_put(fmpl_rcache_t *c, int idx)
{
    if (idx < 0 || idx >= c->n)
        return;
    fmpl_rcache_reg_t *r = &c->reg[idx];
    if (!r->mr || r->refs == 0 || --r->refs != 0 || r->allocated)
        return;
    if (!r->kept || r->stale) {
        drop(c, idx);
        return;
    }
    c->idle_bytes += r->len;
    evict(c, 0);
}

int fmpl_rcache_by_key(const fmpl_rcache_t *c, uint64_t key)
{
    for (int i = 0; i < c->n; i++)
        if (c->reg[i].mr && c->reg[i].refs && c->reg[i].key == key)
            return i;
    return -1;
}

int fmpl_rcache_add(fmpl_rcache_t *c, void *p, size_t len)
{
    int i = slot(c);
    if (i < 0)
        return FMPL_ERR_NOMEM;
    void *mr = NULL;
    uint64_t key = 0;
    int err = c->ops->reg(c->ctx, p, len, &mr, &key);
    if (err)
        return c->ops->fail(c->ctx, err, 1);
    c->reg[i] = (fmpl_rcache_reg_t){ .base = (uintptr_t)p, .len = len, .mr = mr, .key = key,
                                     .allocated = 1, .used = ++c->clock };
    return FMPL_SUCCESS;
}

int fmpl_rcache_free(fmpl_rcache_t *c, void *p)
{
    for (int i = 0; i < c->n; i++)
        if (c->reg[i].mr && c->reg[i].allocated && c->reg[i].base == (uintptr_t)p) {
            drop(c, i);
            return FMPL_SUCCESS;
        }
    return FMPL_ERR_ARG;
}

int fmpl_rcache_held(const fmpl_rcache_t *c)
{
    int held = 0;
    for (int i = 0; i < c->n; i++)
        held += c->reg[i].mr && c->reg[i].refs > 0 && !c->reg[i].allocated;
    return held;
}

void fmpl_rcache_close(fmpl_rcache_t *c)
{
    for (int i = 0; i < c->n; i++)
        if (c->reg[i].mr) {
            c->ops->dereg(c->ctx, c->reg[i].mr);
            if (c->reg[i].allocated)
                free((void *)c->reg[i].base);
        }
    free(c->reg);
    c->reg = NULL;
    c->n = c->cap = 0;
    c->idle_bytes = 0;
}
