/*
 * route_core.c - near/far routing, written once (route_core.h): the
 * choice of a part per operation, the pin that keeps records behind
 * their data, and the ops that forward to the chosen part.
 */
#include <stdlib.h>
#include <string.h>

#include "fmpl.h"
#include "base/log.h"
#include "transport/route/route_core.h"

int fmpl_route_core_init(fmpl_route_t *r, const fmpl_route_class_t *cls, int size)
{
    r->cls = cls;
    r->near = calloc((size_t)size, 1);
    r->pinned = malloc((size_t)size);
    if (!r->near || !r->pinned)
        return FMPL_ERR_NOMEM;
    memset(r->pinned, -1, (size_t)size);
    return FMPL_SUCCESS;
}

void fmpl_route_core_fini(fmpl_route_t *r, int rank)
{
    if (r->near)
        for (int p = 0; p < 2; p++)
            fmpl_log_info("%s: rank %d: %s carried %llu puts, %llu block-stride puts, "
                          "%llu list puts, %llu records, %llu contiguous halo faces",
                          r->cls->name, rank, r->cls->part_name[p],
                          (unsigned long long)r->count[p][FMPL_ROUTE_PUT],
                          (unsigned long long)r->count[p][FMPL_ROUTE_STRIDED],
                          (unsigned long long)r->count[p][FMPL_ROUTE_IOV],
                          (unsigned long long)r->count[p][FMPL_ROUTE_RECORD],
                          (unsigned long long)r->count[p][FMPL_ROUTE_FACE]);
    free(r->near);
    free(r->pinned);
    r->near = NULL;
    r->pinned = NULL;
}

/* The part for a put: pinned until the next ordered record.  `burst`:
 * 0 or FMPL_ROUTE_BURST. */
static fmpl_tl_t *put_part(fmpl_route_t *r, int peer, int op, int burst, size_t bytes)
{
    int via = FMPL_ROUTE_FAR;
    if (r->near[peer]) {
        via = r->pinned[peer];
        if (via < 0)
            via = r->cls->choose(r, peer, op | burst, bytes);
        r->pinned[peer] = (int8_t)via;
    }
    r->count[via][op]++;
    return &r->part[via];
}

/* The part that owns everything else about a peer: its mailbox lines,
 * its liveness, reads and atomics. */
static int home(fmpl_route_t *r, int peer)
{
    return r->near[peer] ? FMPL_ROUTE_NEAR : FMPL_ROUTE_FAR;
}

static const fmpl_tl_key_t *key_for(fmpl_route_t *r, fmpl_tl_t *p, int peer,
                                    const fmpl_tl_key_t *key, fmpl_tl_key_t *tmp)
{
    if (!r->cls->key)
        return key;
    return r->cls->key(r, (int)(p - r->part), peer, key, tmp);
}

int fmpl_route_put(fmpl_tl_t *tl, int peer, const void *src, size_t len,
                   const fmpl_tl_key_t *key, uint64_t roff, unsigned flags,
                   fmpl_tl_comp_t *comp)
{
    fmpl_route_t *r = fmpl_route_of(tl);
    int op = flags & FMPL_TL_PUT_FACE ? FMPL_ROUTE_FACE : FMPL_ROUTE_PUT;
    fmpl_tl_t *p = put_part(r, peer, op, flags & FMPL_TL_PUT_BURST ? FMPL_ROUTE_BURST : 0, len);
    fmpl_tl_key_t k;
    /* the part chooses its path too */
    return p->ops->put(p, peer, src, len, key_for(r, p, peer, key, &k), roff, flags, comp);
}

int fmpl_route_put_strided(fmpl_tl_t *tl, int peer, const void *src, size_t blklen,
                           size_t nblk, size_t sstride, const fmpl_tl_key_t *key,
                           uint64_t roff, size_t dstride, fmpl_tl_comp_t *comp)
{
    fmpl_route_t *r = fmpl_route_of(tl);
    fmpl_tl_t *p = put_part(r, peer, FMPL_ROUTE_STRIDED, 0, blklen * nblk);
    fmpl_tl_key_t k;
    return p->ops->put_strided(p, peer, src, blklen, nblk, sstride,
                               key_for(r, p, peer, key, &k), roff, dstride, comp);
}

int fmpl_route_put_iov(fmpl_tl_t *tl, int peer, const fmpl_tl_iov_t *iov, int n,
                       const fmpl_tl_key_t *key, fmpl_tl_comp_t *comp)
{
    fmpl_route_t *r = fmpl_route_of(tl);
    size_t bytes = 0;
    for (int i = 0; i < n; i++)
        bytes += iov[i].len;
    fmpl_tl_t *p = put_part(r, peer, FMPL_ROUTE_IOV, 0, bytes);
    fmpl_tl_key_t k;
    return p->ops->put_iov(p, peer, iov, n, key_for(r, p, peer, key, &k), comp);
}

int fmpl_route_notify(fmpl_tl_t *tl, int peer, int idx, unsigned off, const void *rec,
                      unsigned len, unsigned flags, fmpl_tl_comp_t *comp)
{
    fmpl_route_t *r = fmpl_route_of(tl);
    int via = FMPL_ROUTE_FAR;
    if (r->near[peer]) {
        /* behind the puts it may announce; an ordered record ends the pin */
        via = r->pinned[peer];
        if (via < 0)
            via = r->cls->choose(r, peer, FMPL_ROUTE_RECORD |
                                 (flags & FMPL_TL_NOTIFY_BURST ? FMPL_ROUTE_BURST : 0), len);
        else if (!(flags & FMPL_TL_NOTIFY_UNORDERED))
            r->pinned[peer] = -1;
    }
    r->count[via][FMPL_ROUTE_RECORD]++;
    fmpl_tl_t *p = &r->part[via];
    return p->ops->notify(p, peer, idx, off, rec, len, flags, comp);
}

int fmpl_route_get(fmpl_tl_t *tl, int peer, void *dst, size_t len, const fmpl_tl_key_t *key,
                   uint64_t roff)
{
    fmpl_route_t *r = fmpl_route_of(tl);
    fmpl_tl_t *p = &r->part[home(r, peer)];
    fmpl_tl_key_t k;
    return p->ops->get(p, peer, dst, len, key_for(r, p, peer, key, &k), roff);
}

volatile void *fmpl_route_mbox_in(fmpl_tl_t *tl, int peer, int idx)
{
    fmpl_route_t *r = fmpl_route_of(tl);
    fmpl_tl_t *p = &r->part[home(r, peer)];
    return p->ops->mbox_in(p, peer, idx);
}

int fmpl_route_mbox_cas(fmpl_tl_t *tl, int peer, int idx, unsigned off, int outgoing,
                        uint64_t expect, uint64_t desired, uint64_t *old)
{
    fmpl_route_t *r = fmpl_route_of(tl);
    fmpl_tl_t *p = &r->part[home(r, peer)];
    return p->ops->mbox_cas(p, peer, idx, off, outgoing, expect, desired, old);
}

int fmpl_route_peer_ok(fmpl_tl_t *tl, int peer)
{
    fmpl_route_t *r = fmpl_route_of(tl);
    fmpl_tl_t *p = &r->part[home(r, peer)];
    return p->ops->peer_ok(p, peer);
}
