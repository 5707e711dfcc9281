/*
 * ofi_mem.c - registrations for the libfabric transport.
 *
 * A key handed out by mem_reg stays valid until its mem_dereg: a peer may
 * be writing into the buffer or reading from it all that time, so a
 * registration with references is never closed or evicted, however many
 * there are (a rank may post hundreds of receives before their sends
 * come).  A buffer inside a registration already open shares it: its
 * pages are mapped for as long as the owner of that registration uses it.
 *
 * What happens to a registration whose last key is deregistered depends
 * on what the provider does with memory:
 *   - tcp, sockets, udp and shm treat a registration as an address range
 *     and a protection key, and reach the memory through its virtual
 *     address at the time of each transfer.  Memory freed and mapped
 *     again at the same address is then reached correctly through the old
 *     registration, so FMPL caches up to FMPL_OFI_NREG unused ones (least
 *     recently used out first): registering costs a system call.
 *   - Hardware providers (verbs, efa, cxi, ...) pin the pages a
 *     registration covered when it was made.  A cached registration of
 *     memory the application has since freed would read and write the old
 *     pages.  FMPL closes those at once and leaves caching to the provider,
 *     whose own cache watches for freed memory (libfabric's memory monitor,
 *     FI_MR_CACHE_MONITOR).
 * FMPL_OFI_MR_CACHE=0 or 1 overrides the choice.
 * fmpl_alloc_mem memory stays registered until it is freed.
 * The table and its policies are the transports' registration cache
 * (transport/regcache.h); here is what libfabric does for it.
 */
#include <stdlib.h>

#include <rdma/fi_domain.h>
#include <rdma/fi_errno.h>

#include "fmpl.h"
#include "base/log.h"
#include "transport/ofi/ofi.h"

static int ofi_reg(void *ctx, void *addr, size_t len, void **mr, uint64_t *key)
{
    fmpl_ofi_t *o = ctx;
    uint64_t want = o->prov_key ? 0 : o->next_key++;
    struct fid_mr *m = NULL;
    int rc = fi_mr_reg(o->domain, addr, len,
                       FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE, 0, want, 0, &m,
                       NULL);
    if (rc)
        return rc < 0 ? -rc : rc;
    *mr = m;
    *key = fi_mr_key(m);
    return 0;
}

static void ofi_dereg(void *ctx, void *mr)
{
    (void)ctx;
    fi_close(&((struct fid_mr *)mr)->fid);
}

static int ofi_fail(void *ctx, int err, int alloc)
{
    (void)alloc;
    return fmpl_ofi_error(ctx, err, "fi_mr_reg", -1);
}

static const fmpl_rcache_ops_t ofi_rcache_ops = {
    .reg = ofi_reg, .dereg = ofi_dereg, .fail = ofi_fail,
};

void fmpl_ofi_mem_policy(fmpl_ofi_t *o, int by_address, int setting)
{
    /* whole pages: neighbouring buffers then share the registration */
    o->rc = (fmpl_rcache_t){ .ops = &ofi_rcache_ops, .ctx = o,
                             .keep_idle = setting >= 0 ? setting : by_address,
                             .round = 4096, .max_idle = FMPL_OFI_NREG };
}

static void to_key(const fmpl_ofi_t *o, const fmpl_rcache_reg_t *r, const void *addr,
                   fmpl_tl_key_t *key)
{
    uintptr_t a = (uintptr_t)addr;
    key->addr = o->virt_addr ? (uint64_t)a : (uint64_t)(a - r->base);
    key->kind = (uint32_t)r->key;
    key->id = (uint32_t)(r->key >> 32);
}

int fmpl_ofi_mem_reg(fmpl_tl_t *tl, void *addr, size_t len, fmpl_tl_key_t *key)
{
    fmpl_ofi_t *o = fmpl_ofi_of(tl);
    int i;
    int rc = fmpl_rcache_take(&o->rc, addr, len, &i);
    if (rc == FMPL_SUCCESS)
        to_key(o, fmpl_rcache_get(&o->rc, i), addr, key);
    return rc;
}

void fmpl_ofi_mem_dereg(fmpl_tl_t *tl, const fmpl_tl_key_t *key)
{
    fmpl_ofi_t *o = fmpl_ofi_of(tl);
    uint64_t k = (uint64_t)key->kind | (uint64_t)key->id << 32;
    int i = fmpl_rcache_by_key(&o->rc, k);
    if (i < 0) {
        fmpl_log_err("ofi: internal: deregistration of key 0x%llx, which is not registered",
                     (unsigned long long)k);
        return;
    }
    fmpl_rcache_put(&o->rc, i);
}

void *fmpl_ofi_mem_alloc(fmpl_tl_t *tl, size_t len)
{
    fmpl_ofi_t *o = fmpl_ofi_of(tl);
    void *p = NULL;
    size_t n = (len + 4095) & ~(size_t)4095;
    if (!n)
        n = 4096;
    if (posix_memalign(&p, 4096, n) != 0)
        return NULL;
    if (fmpl_rcache_add(&o->rc, p, n) != FMPL_SUCCESS) {
        free(p);
        return NULL;
    }
    return p;
}

int fmpl_ofi_mem_free(fmpl_tl_t *tl, void *p)
{
    return fmpl_rcache_free(&fmpl_ofi_of(tl)->rc, p);
}

void fmpl_ofi_mem_cleanup(fmpl_ofi_t *o)
{
    /* requests the application never waited for keep theirs; anything
     * else is a missing mem_dereg */
    int held = fmpl_rcache_held(&o->rc);
    if (held)
        fmpl_log_info("ofi: %d registrations still in use at close", held);
    fmpl_rcache_close(&o->rc);
}
