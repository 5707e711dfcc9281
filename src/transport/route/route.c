/*
 * route.c - one job on several hosts: shm to the peers on our host, ofi
 * (libfabric) to the others, at the same time.
 *
 * The route transport owns two complete transports and sends every call
 * that names a peer to the one serving that peer, so each peer always
 * meets the same transport and the ordering promises of transport.h hold
 * per peer as they do inside each.  Both start up over the whole job
 * (their bootstrap fences are collective); the shm part maps only the
 * segments of the ranks on our host (fmpl_tl_t.host_only).
 *
 * Keys.  A key travels to one peer, which uses it with its own transport
 * to that peer, but mem_reg does not know the peer.  So memory is
 * registered with ofi, and the route's key holds both what a peer on
 * another host needs (the provider's protection key and the remote
 * address) and what a peer on our host needs (the shm key of ordinary
 * memory: the virtual address).  When the provider addresses by virtual
 * address (FI_MR_VIRT_ADDR) the ofi key is already both.  Otherwise
 * (tcp;ofi_rxm) it holds an offset into the registered region, and the
 * route key is { virtual address, protection key, offset }, which needs
 * a 32-bit protection key and an offset below 4 GiB - mem_reg says so
 * when a provider breaks that.  Memory from mem_alloc is ofi's too, which
 * costs peers on our host the mapped-memory shortcut of shm (they reach
 * it through the FIFO or cross-memory attach instead).
 *
 * What the route does not offer: the shm "hardware" collectives (they
 * span every rank of the job) and strided puts without packing (ofi has
 * none; the capabilities are what both parts have).
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "fmpl.h"
#include "core/log.h"
#include "transport/shm/shm.h"
#include "transport/transport.h"

enum { VIA_SHM = 0, VIA_OFI = 1 };

/* see route_progress */
#define ROUTE_OFI_EVERY 8

typedef struct fmpl_route {
    fmpl_tl_t part[2];             /* [VIA_SHM], [VIA_OFI] */
    uint8_t *via;                  /* [size]: the part serving each rank */
    int ofi_vaddr;                 /* ofi keys hold virtual addresses */
    _Atomic unsigned polls;        /* route_progress calls, for its cadence */
    unsigned ofi_every;            /* drive ofi on every n-th call (route_progress) */
    uint8_t *kernel;               /* [size]: tl->kernel_peer */
} fmpl_route_t;

static inline fmpl_route_t *route_of(fmpl_tl_t *tl) { return (fmpl_route_t *)tl->priv; }
static inline fmpl_tl_t *part_for(fmpl_tl_t *tl, int peer)
{
    fmpl_route_t *r = route_of(tl);
    return &r->part[r->via[peer]];
}

/* A route key as the ofi part's key (see the top). */
static inline const fmpl_tl_key_t *ofi_key(const fmpl_route_t *r, const fmpl_tl_key_t *key,
                                           fmpl_tl_key_t *tmp)
{
    if (r->ofi_vaddr)
        return key;
    *tmp = (fmpl_tl_key_t){ .addr = key->id, .kind = key->kind, .id = 0 };
    return tmp;
}

/* The part of a route key that `peer`'s transport needs. */
static inline const fmpl_tl_key_t *key_for(fmpl_tl_t *tl, int peer, const fmpl_tl_key_t *key,
                                           fmpl_tl_key_t *tmp)
{
    fmpl_route_t *r = route_of(tl);
    if (r->via[peer] != VIA_SHM)
        return ofi_key(r, key, tmp);
    *tmp = (fmpl_tl_key_t){ .addr = key->addr, .kind = FMPL_SHM_KEY_USER, .id = 0 };
    return tmp;
}

static void route_close(fmpl_tl_t *tl)
{
    fmpl_route_t *r = route_of(tl);
    if (!r)
        return;
    for (int i = 1; i >= 0; i--)
        if (r->part[i].priv)
            r->part[i].ops->close(&r->part[i]);
    free(r->via);
    free(r->kernel);
    free(r);
    tl->priv = NULL;
    tl->kernel_peer = NULL;
    tl->kernel_any = 0;
}

static int route_open(fmpl_tl_t *tl)
{
    fmpl_route_t *r = calloc(1, sizeof *r);
    if (!r)
        return FMPL_ERR_NOMEM;
    tl->priv = r;
    r->via = malloc((size_t)tl->size);
    if (!r->via) {
        route_close(tl);
        return FMPL_ERR_NOMEM;
    }
    static const fmpl_tl_ops_t *const ops[2] = { &fmpl_shm_ops, &fmpl_ofi_ops };
    int rc = FMPL_SUCCESS;
    for (int i = 0; i < 2 && rc == FMPL_SUCCESS; i++) {
        fmpl_tl_t *p = &r->part[i];
        *p = (fmpl_tl_t){ .ops = ops[i], .rank = tl->rank, .size = tl->size,
                          .nidx = tl->nidx, .boot = tl->boot, .host = tl->host,
                          .nhosts = tl->nhosts, .host_only = i == VIA_SHM };
        rc = ops[i]->open(p);
        if (rc != FMPL_SUCCESS)
            p->priv = NULL;
    }
    if (rc != FMPL_SUCCESS) {
        route_close(tl);
        return rc;
    }
    r->ofi_vaddr = (r->part[VIA_OFI].caps & FMPL_TL_CAP_VADDR) != 0;
    int near = 0;                  /* other ranks on our host */
    for (int p = 0; p < tl->size; p++) {
        r->via[p] = tl->host[p] == tl->host[tl->rank] ? VIA_SHM : VIA_OFI;
        near += r->via[p] == VIA_SHM && p != tl->rank;
    }
    r->ofi_every = near ? ROUTE_OFI_EVERY : 1;
    /* waits on off-host peers yield early when ofi's do (core/progress.c) */
    tl->kernel_any = 0;
    if (r->part[VIA_OFI].kernel_any) {
        r->kernel = malloc((size_t)tl->size);
        if (!r->kernel) {
            route_close(tl);
            return FMPL_ERR_NOMEM;
        }
        for (int p = 0; p < tl->size; p++) {
            r->kernel[p] = r->via[p] == VIA_OFI;
            tl->kernel_any |= r->kernel[p];
        }
    }
    tl->kernel_peer = r->kernel;

    unsigned both = r->part[VIA_SHM].caps & r->part[VIA_OFI].caps;
    tl->caps = (both & (FMPL_TL_CAP_CAS | FMPL_TL_CAP_GET)) | FMPL_TL_CAP_VADDR |
               FMPL_TL_CAP_HOST_NEAR |
               (r->part[VIA_SHM].caps & FMPL_TL_CAP_SELF);
    tl->max_inline = r->part[VIA_SHM].max_inline < r->part[VIA_OFI].max_inline
                         ? r->part[VIA_SHM].max_inline : r->part[VIA_OFI].max_inline;
    return FMPL_SUCCESS;
}

/* memory: registered with ofi, which peers on other hosts need */
static int route_mem_reg(fmpl_tl_t *tl, void *addr, size_t len, fmpl_tl_key_t *key)
{
    fmpl_route_t *r = route_of(tl);
    fmpl_tl_t *o = &r->part[VIA_OFI];
    fmpl_tl_key_t k;
    int rc = o->ops->mem_reg(o, addr, len, &k);
    if (rc != FMPL_SUCCESS || r->ofi_vaddr) {
        *key = k;
        return rc;
    }
    if (k.id != 0 || k.addr > UINT32_MAX) {
        fmpl_log_err("route: the libfabric provider's key 0x%llx or offset %llu does not "
                     "fit a route key (32 bits each); start with FMPL_TRANSPORT=ofi",
                     (unsigned long long)((uint64_t)k.id << 32 | k.kind),
                     (unsigned long long)k.addr);
        o->ops->mem_dereg(o, &k);
        return FMPL_ERR_UNSUPPORTED;
    }
    *key = (fmpl_tl_key_t){ .addr = (uint64_t)(uintptr_t)addr, .kind = k.kind,
                            .id = (uint32_t)k.addr };
    return FMPL_SUCCESS;
}
static void route_mem_dereg(fmpl_tl_t *tl, const fmpl_tl_key_t *key)
{
    fmpl_route_t *r = route_of(tl);
    fmpl_tl_t *o = &r->part[VIA_OFI];
    fmpl_tl_key_t k;
    o->ops->mem_dereg(o, ofi_key(r, key, &k));
}
static void *route_mem_alloc(fmpl_tl_t *tl, size_t len)
{
    fmpl_tl_t *o = &route_of(tl)->part[VIA_OFI];
    return o->ops->mem_alloc(o, len);
}
static int route_mem_free(fmpl_tl_t *tl, void *p)
{
    fmpl_tl_t *o = &route_of(tl)->part[VIA_OFI];
    return o->ops->mem_free(o, p);
}

static int route_put(fmpl_tl_t *tl, int peer, const void *src, size_t len,
                     const fmpl_tl_key_t *key, uint64_t roff, fmpl_tl_comp_t *comp)
{
    fmpl_tl_t *p = part_for(tl, peer);
    fmpl_tl_key_t k;
    return p->ops->put(p, peer, src, len, key_for(tl, peer, key, &k), roff, comp);
}

static int route_put_strided(fmpl_tl_t *tl, int peer, const void *src, size_t blklen,
                             size_t nblk, size_t sstride, const fmpl_tl_key_t *key,
                             uint64_t roff, size_t dstride, fmpl_tl_comp_t *comp)
{
    fmpl_tl_t *p = part_for(tl, peer);
    fmpl_tl_key_t k;
    return p->ops->put_strided(p, peer, src, blklen, nblk, sstride, key_for(tl, peer, key, &k),
                               roff, dstride, comp);
}

static int route_put_iov(fmpl_tl_t *tl, int peer, const fmpl_tl_iov_t *iov, int n,
                         const fmpl_tl_key_t *key, fmpl_tl_comp_t *comp)
{
    fmpl_tl_t *p = part_for(tl, peer);
    fmpl_tl_key_t k;
    return p->ops->put_iov(p, peer, iov, n, key_for(tl, peer, key, &k), comp);
}

static int route_get(fmpl_tl_t *tl, int peer, void *dst, size_t len,
                     const fmpl_tl_key_t *key, uint64_t roff)
{
    fmpl_tl_t *p = part_for(tl, peer);
    fmpl_tl_key_t k;
    return p->ops->get(p, peer, dst, len, key_for(tl, peer, key, &k), roff);
}

static volatile void *route_mbox_in(fmpl_tl_t *tl, int peer, int idx)
{
    fmpl_tl_t *p = part_for(tl, peer);
    return p->ops->mbox_in(p, peer, idx);
}

static int route_notify(fmpl_tl_t *tl, int peer, int idx, unsigned off, const void *rec,
                        unsigned len, unsigned flags, fmpl_tl_comp_t *comp)
{
    fmpl_tl_t *p = part_for(tl, peer);
    return p->ops->notify(p, peer, idx, off, rec, len, flags, comp);
}

static int route_mbox_cas(fmpl_tl_t *tl, int peer, int idx, unsigned off, int outgoing,
                          uint64_t expect, uint64_t desired, uint64_t *old)
{
    fmpl_tl_t *p = part_for(tl, peer);
    return p->ops->mbox_cas(p, peer, idx, off, outgoing, expect, desired, old);
}

/*
 * shm progress costs a few loads, ofi progress a completion-queue read
 * (about half a microsecond on tcp: a poll() inside the provider).  Done
 * on every call, it doubled the latency between peers on one host.  So
 * ofi is driven on every ROUTE_OFI_EVERY-th call only: its peers are tens
 * of microseconds away, and a poll loop turns in well under 100 ns, so
 * they wait a fraction of a microsecond more - while the waiter spins.
 * A wait on a peer behind the kernel soon yields on every call, and then
 * the eight calls cost microseconds (bench/compare -o, 8 B latency over
 * tcp: 26.8 us routed against 22.1 us with ofi alone): a rank alone on
 * its host, with no shm peer to be quick for, drives ofi on every call
 * (ofi_every).
 */
static int route_progress(fmpl_tl_t *tl)
{
    fmpl_route_t *r = route_of(tl);
    int n = r->part[VIA_SHM].ops->progress(&r->part[VIA_SHM]);
    if (atomic_fetch_add_explicit(&r->polls, 1, memory_order_relaxed) % r->ofi_every == 0)
        n += r->part[VIA_OFI].ops->progress(&r->part[VIA_OFI]);
    return n;
}

static int route_peer_ok(fmpl_tl_t *tl, int peer)
{
    fmpl_tl_t *p = part_for(tl, peer);
    return p->ops->peer_ok(p, peer);
}

const fmpl_tl_ops_t fmpl_route_ops = {
    .size = sizeof(fmpl_tl_ops_t),
    .name = "route",
    .open = route_open,
    .close = route_close,
    .mem_reg = route_mem_reg,
    .mem_dereg = route_mem_dereg,
    .mem_alloc = route_mem_alloc,
    .mem_free = route_mem_free,
    .put = route_put,
    .put_strided = route_put_strided,
    .put_iov = route_put_iov,
    .get = route_get,
    .mbox_in = route_mbox_in,
    .notify = route_notify,
    .mbox_cas = route_mbox_cas,
    .progress = route_progress,
    .peer_ok = route_peer_ok,
    .barrier = fmpl_tl_unsupported_barrier,
    .bcast = fmpl_tl_unsupported_bcast,
};
