/*
 * transport.c - choosing the transports, and what every transport inherits.
 *
 * The routing decision lives here and nowhere else, from the job's host
 * layout (base/hosts.h: ranks with the same host name share a host):
 *   every rank on this host          shm for every peer (no routing cost)
 *   ranks on several hosts           route: shm to the peers on our host,
 *                                    ofi (libfabric) to the others; ofi
 *                                    alone when no host has two ranks
 *   FMPL_TRANSPORT=shm|ofi|route     that one, for every peer
 *   FMPL_TRANSPORT=tcw               the emulated SR8000 (every rank a node)
 *   FMPL_TRANSPORT=peach2            an emulated PEACH2 sub-cluster (up to 16 nodes)
 *   FMPL_TRANSPORT=tca               emulated HA-PACS/TCA: PEACH2 sub-clusters
 *                                    and InfiniBand, routed per peer and size
 *   FMPL_TRANSPORT=dcfa              InfiniBand (or RoCE) verbs, every peer
 * The decision is a function of what every rank published, so every rank
 * makes the same one (the transports' start-ups are collective).
 */
#include <stdlib.h>
#include <string.h>

#include "fmpl.h"
#include "base/hosts.h"
#include "base/log.h"
#include "transport/transport.h"

static const fmpl_tl_ops_t *const all_ops[] = { &fmpl_shm_ops, &fmpl_tcw_ops, &fmpl_peach2_ops,
                                                &fmpl_tca_ops, &fmpl_ib_ops,
#ifdef FMPL_HAVE_OFI
                                                &fmpl_ofi_ops, &fmpl_route_ops,
#endif
#ifdef FMPL_HAVE_VERBS
                                                &fmpl_dcfa_ops,
#endif
};

static const fmpl_tl_ops_t *by_name(const char *want)
{
    for (size_t i = 0; i < sizeof all_ops / sizeof all_ops[0]; i++)
        if (strcmp(all_ops[i]->name, want) == 0)
            return all_ops[i];
    fmpl_log_err("FMPL_TRANSPORT=%s: no such transport in this build (have: shm, tcw, peach2, "
                 "tca, ib%s%s)", want,
#ifdef FMPL_HAVE_OFI
                 ", ofi, route",
#else
                 "",
#endif
#ifdef FMPL_HAVE_VERBS
                 ", dcfa"
#else
                 ""
#endif
    );
    return NULL;
}

int fmpl_tl_open(fmpl_tl_t *tl)
{
    const int *host = tl->hosts->host;
    int here = 0, shared = 0;      /* ranks on our host; a host with two */
    int *count = calloc((size_t)tl->hosts->nhosts, sizeof *count);
    if (!count) {
        fmpl_tl_close(tl);
        return FMPL_ERR_NOMEM;
    }
    for (int r = 0; r < tl->size; r++)
        shared |= ++count[host[r]] > 1;
    here = count[host[tl->rank]];
    free(count);
    (void)here;                    /* only the route's log below reads it */

    const char *want = getenv("FMPL_TRANSPORT");
    const fmpl_tl_ops_t *ops;
    if (want && *want)
        ops = by_name(want);
    else if (tl->hosts->nhosts == 1)
        ops = &fmpl_shm_ops;
    else {
#ifdef FMPL_HAVE_OFI
        ops = shared ? &fmpl_route_ops : &fmpl_ofi_ops;
#else
        fmpl_log_err("the job spans %d hosts, but this FMPL was built without "
                     "libfabric (install libfabric-dev and rebuild)", tl->hosts->nhosts);
        ops = NULL;
#endif
    }
    if (!ops) {
        fmpl_tl_close(tl);
        return FMPL_ERR_ARG;
    }
    tl->ops = ops;
    int rc = ops->open(tl);
    if (rc != FMPL_SUCCESS) {
        tl->priv = NULL;
        fmpl_tl_close(tl);
        return rc;
    }
#ifdef FMPL_HAVE_OFI
    if (ops == &fmpl_route_ops)
        fmpl_log_info("route: rank %d on host %d of %d: shm to the %d other ranks there, "
                      "ofi to the %d elsewhere", tl->rank, host[tl->rank], tl->hosts->nhosts,
                      here - 1, tl->size - here);
    else
#endif
        fmpl_log_info("route: rank %d on host %d of %d: %s to all %d ranks", tl->rank,
                      host[tl->rank], tl->hosts->nhosts, ops->name, tl->size);
    return FMPL_SUCCESS;
}

void fmpl_tl_close(fmpl_tl_t *tl)
{
    if (tl->ops && tl->priv)
        tl->ops->close(tl);
    tl->priv = NULL;
    free(tl->watch.peer);
    free(tl->watch.listed);
    tl->watch = (fmpl_tl_watch_t){ .idx = -1 };
}

int fmpl_tl_watch(fmpl_tl_t *tl, int idx)
{
    if (!(tl->caps & FMPL_TL_CAP_WATCH))
        return FMPL_ERR_UNSUPPORTED;
    fmpl_tl_watch_t *w = &tl->watch;
    if (!w->peer) {
        w->peer = calloc((size_t)tl->size, sizeof *w->peer);
        w->listed = calloc((size_t)tl->size, sizeof *w->listed);
        if (!w->peer || !w->listed) {
            free(w->peer);
            free(w->listed);
            *w = (fmpl_tl_watch_t){ .idx = -1 };
            return FMPL_ERR_NOMEM;
        }
    }
    w->idx = idx;
    w->n = 0;
    return FMPL_SUCCESS;
}

int fmpl_tl_unsupported_put_strided(fmpl_tl_t *tl, int peer, const void *src, size_t blklen,
                                    size_t nblk, size_t sstride, const fmpl_tl_key_t *key,
                                    uint64_t roff, size_t dstride, fmpl_tl_comp_t *comp)
{
    (void)tl; (void)peer; (void)src; (void)blklen; (void)nblk; (void)sstride;
    (void)key; (void)roff; (void)dstride; (void)comp;
    return FMPL_ERR_UNSUPPORTED;
}

int fmpl_tl_unsupported_cas(fmpl_tl_t *tl, int peer, int idx, unsigned off, int out,
                            uint64_t expect, uint64_t desired, uint64_t *old)
{
    (void)tl; (void)peer; (void)idx; (void)off; (void)out; (void)expect; (void)desired;
    (void)old;
    return FMPL_ERR_UNSUPPORTED;
}

int fmpl_tl_unsupported_get(fmpl_tl_t *tl, int peer, void *dst, size_t len,
                            const fmpl_tl_key_t *key, uint64_t roff)
{
    (void)tl; (void)peer; (void)dst; (void)len; (void)key; (void)roff;
    return FMPL_ERR_UNSUPPORTED;
}

int fmpl_tl_unsupported_barrier(fmpl_tl_t *tl, fmpl_tl_coll_t *st)
{
    (void)tl; (void)st;
    return FMPL_ERR_UNSUPPORTED;
}

int fmpl_tl_unsupported_bcast(fmpl_tl_t *tl, void *buf, size_t len, int root,
                              fmpl_tl_coll_t *st)
{
    (void)tl; (void)buf; (void)len; (void)root; (void)st;
    return FMPL_ERR_UNSUPPORTED;
}

/* A 2-D block-stride put as one put per block, for transports without
 * strided DMA. */
int fmpl_tl_put_strided_by_put(fmpl_tl_t *tl, int peer, const void *src, size_t blklen,
                               size_t nblk, size_t sstride, const fmpl_tl_key_t *key,
                               uint64_t roff, size_t dstride, fmpl_tl_comp_t *comp)
{
    const uint8_t *s = src;
    for (size_t b = 0; b < nblk; b++) {
        int rc = tl->ops->put(tl, peer, s + b * sstride, blklen, key, roff + b * dstride, 0,
                              comp);
        if (rc != FMPL_SUCCESS)
            return rc;
    }
    return FMPL_SUCCESS;
}

int fmpl_tl_put_iov_by_put(fmpl_tl_t *tl, int peer, const fmpl_tl_iov_t *iov, int n,
                           const fmpl_tl_key_t *key, fmpl_tl_comp_t *comp)
{
    for (int i = 0; i < n; i++) {
        int rc = tl->ops->put(tl, peer, iov[i].src, iov[i].len, key, iov[i].roff, 0, comp);
        if (rc != FMPL_SUCCESS)
            return rc;
    }
    return FMPL_SUCCESS;
}

/* put_notify as the two calls it stands for (the ordering is notify's) */
int fmpl_tl_put_notify_by_parts(fmpl_tl_t *tl, int peer, const void *src, size_t len,
                                const fmpl_tl_key_t *key, uint64_t roff, int idx, unsigned off,
                                const void *rec, unsigned reclen, fmpl_tl_comp_t *comp)
{
    int rc = tl->ops->put(tl, peer, src, len, key, roff, 0, comp);
    if (rc != FMPL_SUCCESS)
        return rc;
    return tl->ops->notify(tl, peer, idx, off, rec, reclen, 0, comp);
}

unsigned fmpl_tl_slot_ext(int size, int nidx)
{
    unsigned ext = FMPL_TL_EXT_MAX;
    while (ext > FMPL_TL_EXT_MIN &&
           (size_t)size * (size_t)nidx * (FMPL_TL_LINE + ext) > FMPL_TL_SLOT_BUDGET)
        ext /= 2;
    return ext;
}
