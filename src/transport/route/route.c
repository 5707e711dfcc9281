/*
 * route.c - one job on several hosts: shm to the peers on our host, ofi
 * (libfabric) to the others, at the same time.
 *
 * The route transport owns two complete transports and sends every call
 * that names a peer to the one serving that peer, so each peer always
 * meets the same transport and the ordering promises of transport.h hold
 * per peer as they do inside each.  Both start up over the whole job
 * (their bootstrap fences are collective); the shm part maps only the
 * segments of the ranks on our host (fmpl_shm_open_for, given near[]).
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
 * The choice of part and the forwarding are the near/far routing layer's
 * (route_core.h): here every peer on our host is near, and near always
 * means shm.
 *
 * What the route does not offer: the shm "hardware" collectives (they
 * span every rank of the job) and strided puts without packing (ofi has
 * none; the capabilities are what both parts have).
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "fmpl.h"
#include "base/hosts.h"
#include "base/log.h"
#include "transport/route/route_core.h"
#include "transport/shm/shm.h"
#include "transport/transport.h"

enum { VIA_SHM = FMPL_ROUTE_NEAR, VIA_OFI = FMPL_ROUTE_FAR };

/* see route_progress */
#define ROUTE_OFI_EVERY 8

typedef struct route {
    fmpl_route_t core;             /* first: part[VIA_SHM], part[VIA_OFI] */
    int ofi_vaddr;                 /* ofi keys hold virtual addresses */
    _Atomic unsigned polls;        /* route_progress calls, for its cadence */
    unsigned ofi_every;            /* drive ofi on every n-th call (route_progress) */
    uint8_t *kernel;               /* [size]: tl->kernel_peer */
} route_t;

static inline route_t *route_of(fmpl_tl_t *tl) { return (route_t *)tl->priv; }

/* A route key as the ofi part's key (see the top). */
static inline const fmpl_tl_key_t *ofi_key(const route_t *r, const fmpl_tl_key_t *key,
                                           fmpl_tl_key_t *tmp)
{
    if (r->ofi_vaddr)
        return key;
    *tmp = (fmpl_tl_key_t){ .addr = key->id, .kind = key->kind, .id = 0 };
    return tmp;
}

/* The part of a route key that `part` needs (route_core.h). */
static const fmpl_tl_key_t *key_for(fmpl_route_t *core, int part, int peer,
                                    const fmpl_tl_key_t *key, fmpl_tl_key_t *tmp)
{
    (void)peer;
    route_t *r = (route_t *)core;
    if (part != VIA_SHM)
        return ofi_key(r, key, tmp);
    *tmp = (fmpl_tl_key_t){ .addr = key->addr, .kind = FMPL_SHM_KEY_USER, .id = 0 };
    return tmp;
}

/* peers on our host are near, and near is always shm */
static int choose(fmpl_route_t *core, int peer, int op, size_t bytes)
{
    (void)core, (void)peer, (void)op, (void)bytes;
    return VIA_SHM;
}

static const fmpl_route_class_t route_class = {
    .name = "route", .part_name = { "shm", "libfabric" }, .choose = choose, .key = key_for,
};

static void route_close(fmpl_tl_t *tl)
{
    route_t *r = route_of(tl);
    if (!r)
        return;
    for (int i = 1; i >= 0; i--)
        if (r->core.part[i].priv)
            r->core.part[i].ops->close(&r->core.part[i]);
    fmpl_route_core_fini(&r->core, tl->rank);
    free(r->kernel);
    free(r);
    tl->priv = NULL;
    tl->kernel_peer = NULL;
    tl->kernel_any = 0;
}

static int route_open(fmpl_tl_t *tl)
{
    route_t *r = calloc(1, sizeof *r);
    if (!r)
        return FMPL_ERR_NOMEM;
    tl->priv = r;
    int rc = fmpl_route_core_init(&r->core, &route_class, tl->size);
    if (rc != FMPL_SUCCESS) {
        route_close(tl);
        return rc;
    }
    int near = 0;                  /* other ranks on our host */
    for (int p = 0; p < tl->size; p++) {
        r->core.near[p] = tl->hosts->host[p] == tl->hosts->host[tl->rank];
        near += r->core.near[p] && p != tl->rank;
    }
    /* the shm part serves the near ranks alone */
    static const fmpl_tl_ops_t *const ops[2] = { &fmpl_shm_ops, &fmpl_ofi_ops };
    for (int i = 0; i < 2 && rc == FMPL_SUCCESS; i++) {
        fmpl_tl_t *p = &r->core.part[i];
        *p = (fmpl_tl_t){ .ops = ops[i], .rank = tl->rank, .size = tl->size,
                          .nidx = tl->nidx, .boot = tl->boot, .hosts = tl->hosts };
        rc = i == VIA_SHM ? fmpl_shm_open_for(p, r->core.near) : ops[i]->open(p);
        if (rc != FMPL_SUCCESS)
            p->priv = NULL;
    }
    if (rc != FMPL_SUCCESS) {
        route_close(tl);
        return rc;
    }
    fmpl_tl_t *part = r->core.part;
    r->ofi_vaddr = (part[VIA_OFI].caps & FMPL_TL_CAP_VADDR) != 0;
    r->ofi_every = near ? ROUTE_OFI_EVERY : 1;
    /* waits on off-host peers yield early when ofi's do (p2p/progress.c) */
    tl->kernel_any = 0;
    if (part[VIA_OFI].kernel_any) {
        r->kernel = malloc((size_t)tl->size);
        if (!r->kernel) {
            route_close(tl);
            return FMPL_ERR_NOMEM;
        }
        for (int p = 0; p < tl->size; p++) {
            r->kernel[p] = !r->core.near[p];
            tl->kernel_any |= r->kernel[p];
        }
    }
    tl->kernel_peer = r->kernel;

    unsigned both = part[VIA_SHM].caps & part[VIA_OFI].caps;
    tl->caps = (both & (FMPL_TL_CAP_CAS | FMPL_TL_CAP_GET)) | FMPL_TL_CAP_VADDR |
               FMPL_TL_CAP_GROUP_NEAR |
               (part[VIA_SHM].caps & FMPL_TL_CAP_SELF);
    tl->group = tl->hosts->host;   /* near groups: hosts */
    tl->ngroups = tl->hosts->nhosts;
    tl->max_inline = part[VIA_SHM].max_inline < part[VIA_OFI].max_inline
                         ? part[VIA_SHM].max_inline : part[VIA_OFI].max_inline;
    return FMPL_SUCCESS;
}

/* memory: registered with ofi, which peers on other hosts need */
static int route_mem_reg(fmpl_tl_t *tl, void *addr, size_t len, fmpl_tl_key_t *key)
{
    route_t *r = route_of(tl);
    fmpl_tl_t *o = &r->core.part[VIA_OFI];
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
    route_t *r = route_of(tl);
    fmpl_tl_t *o = &r->core.part[VIA_OFI];
    fmpl_tl_key_t k;
    o->ops->mem_dereg(o, ofi_key(r, key, &k));
}
static void *route_mem_alloc(fmpl_tl_t *tl, size_t len)
{
    fmpl_tl_t *o = &route_of(tl)->core.part[VIA_OFI];
    return o->ops->mem_alloc(o, len);
}
static int route_mem_free(fmpl_tl_t *tl, void *p)
{
    fmpl_tl_t *o = &route_of(tl)->core.part[VIA_OFI];
    return o->ops->mem_free(o, p);
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
    route_t *r = route_of(tl);
    fmpl_tl_t *part = r->core.part;
    int n = part[VIA_SHM].ops->progress(&part[VIA_SHM]);
    if (atomic_fetch_add_explicit(&r->polls, 1, memory_order_relaxed) % r->ofi_every == 0)
        n += part[VIA_OFI].ops->progress(&part[VIA_OFI]);
    return n;
}

/* a comp may count puts on both parts */
static void route_forget(fmpl_tl_t *tl, fmpl_tl_comp_t *comp)
{
    fmpl_tl_t *part = route_of(tl)->core.part;
    for (int i = 0; i < 2; i++)
        if (part[i].ops->forget)
            part[i].ops->forget(&part[i], comp);
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
    .put = fmpl_route_put,
    .put_strided = fmpl_route_put_strided,
    .put_iov = fmpl_route_put_iov,
    .get = fmpl_route_get,
    .mbox_in = fmpl_route_mbox_in,
    .notify = fmpl_route_notify,
    .put_notify = fmpl_tl_put_notify_by_parts,
    .mbox_cas = fmpl_route_mbox_cas,
    .progress = route_progress,
    .peer_ok = fmpl_route_peer_ok,
    .forget = route_forget,
    .barrier = fmpl_tl_unsupported_barrier,
    .bcast = fmpl_tl_unsupported_bcast,
};
