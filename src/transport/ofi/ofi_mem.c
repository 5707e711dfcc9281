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
 */
#include <stdlib.h>
#include <string.h>

#include <rdma/fi_domain.h>
#include <rdma/fi_errno.h>

#include "fmpl.h"
#include "base/log.h"
#include "transport/ofi/ofi.h"

void fmpl_ofi_mem_policy(fmpl_ofi_t *o, int by_address, int setting)
{
    o->cache_idle = setting >= 0 ? setting : by_address;
}

int fmpl_ofi_register(fmpl_ofi_t *o, void *addr, size_t len, struct fid_mr **mr,
                      uint64_t *key)
{
    uint64_t want = o->prov_key ? 0 : o->next_key++;
    int rc = fi_mr_reg(o->domain, addr, len ? len : 1,
                       FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE, 0, want, 0, mr,
                       NULL);
    if (rc)
        return fmpl_ofi_error(o, rc, "fi_mr_reg", -1);
    *key = fi_mr_key(*mr);
    return FMPL_SUCCESS;
}

static void to_key(const fmpl_ofi_t *o, const fmpl_ofi_reg_t *r, const void *addr,
                   fmpl_tl_key_t *key)
{
    uintptr_t a = (uintptr_t)addr;
    key->addr = o->virt_addr ? (uint64_t)a : (uint64_t)(a - r->base);
    key->kind = (uint32_t)r->key;
    key->id = (uint32_t)(r->key >> 32);
}

/* Close registration i and take it out of the table (order is free). */
static void drop(fmpl_ofi_t *o, int i)
{
    fmpl_ofi_reg_t *r = &o->reg[i];
    if (r->mr)
        fi_close(&r->mr->fid);
    if (r->allocated)
        free((void *)r->base);
    o->reg[i] = o->reg[--o->nreg];
}

/* A free entry at the end of the table, or NULL. */
static fmpl_ofi_reg_t *grow(fmpl_ofi_t *o)
{
    if (o->nreg == o->cap) {
        int cap = o->cap ? 2 * o->cap : FMPL_OFI_NREG;
        fmpl_ofi_reg_t *n = realloc(o->reg, (size_t)cap * sizeof *n);
        if (!n)
            return NULL;
        o->reg = n;
        o->cap = cap;
    }
    fmpl_ofi_reg_t *r = &o->reg[o->nreg];
    memset(r, 0, sizeof *r);
    return r;
}

/* Keep at most FMPL_OFI_NREG unused registrations: close the least
 * recently used beyond that. */
static void trim(fmpl_ofi_t *o)
{
    for (;;) {
        int idle = 0, lru = -1;
        for (int i = 0; i < o->nreg; i++) {
            const fmpl_ofi_reg_t *r = &o->reg[i];
            if (r->refs || r->allocated)
                continue;
            idle++;
            if (lru < 0 || r->used < o->reg[lru].used)
                lru = i;
        }
        if (idle <= FMPL_OFI_NREG)
            return;
        drop(o, lru);
    }
}

int fmpl_ofi_mem_reg(fmpl_tl_t *tl, void *addr, size_t len, fmpl_tl_key_t *key)
{
    fmpl_ofi_t *o = fmpl_ofi_of(tl);
    uintptr_t a = (uintptr_t)addr;
    for (int i = 0; i < o->nreg; i++) {
        fmpl_ofi_reg_t *r = &o->reg[i];
        if (a >= r->base && a + len <= r->base + r->len) {
            r->refs++;
            r->used = ++o->clock;
            to_key(o, r, addr, key);
            return FMPL_SUCCESS;
        }
    }
    fmpl_ofi_reg_t *r = grow(o);
    if (!r)
        return FMPL_ERR_NOMEM;
    /* whole pages: neighbouring buffers then share the registration */
    uintptr_t base = a & ~(uintptr_t)4095, end = (a + len + 4095) & ~(uintptr_t)4095;
    int rc = fmpl_ofi_register(o, (void *)base, end - base, &r->mr, &r->key);
    if (rc != FMPL_SUCCESS)
        return rc;
    r->base = base;
    r->len = end - base;
    r->refs = 1;
    r->used = ++o->clock;
    o->nreg++;
    to_key(o, r, addr, key);
    trim(o);
    return FMPL_SUCCESS;
}

void fmpl_ofi_mem_dereg(fmpl_tl_t *tl, const fmpl_tl_key_t *key)
{
    fmpl_ofi_t *o = fmpl_ofi_of(tl);
    uint64_t k = (uint64_t)key->kind | (uint64_t)key->id << 32;
    for (int i = 0; i < o->nreg; i++) {
        fmpl_ofi_reg_t *r = &o->reg[i];
        if (r->key != k || r->refs == 0)
            continue;
        if (--r->refs == 0 && !r->allocated) {
            if (o->cache_idle)
                trim(o);
            else
                drop(o, i);
        }
        return;
    }
    fmpl_log_err("ofi: internal: deregistration of key 0x%llx, which is not registered",
                 (unsigned long long)k);
}

void *fmpl_ofi_mem_alloc(fmpl_tl_t *tl, size_t len)
{
    fmpl_ofi_t *o = fmpl_ofi_of(tl);
    fmpl_ofi_reg_t *r = grow(o);
    if (!r)
        return NULL;
    void *p = NULL;
    size_t n = (len + 4095) & ~(size_t)4095;
    if (!n)
        n = 4096;
    if (posix_memalign(&p, 4096, n) != 0)
        return NULL;
    if (fmpl_ofi_register(o, p, n, &r->mr, &r->key) != FMPL_SUCCESS) {
        free(p);
        return NULL;
    }
    r->base = (uintptr_t)p;
    r->len = n;
    r->allocated = 1;
    r->used = ++o->clock;
    o->nreg++;
    return p;
}

int fmpl_ofi_mem_free(fmpl_tl_t *tl, void *p)
{
    fmpl_ofi_t *o = fmpl_ofi_of(tl);
    for (int i = 0; i < o->nreg; i++)
        if (o->reg[i].allocated && o->reg[i].base == (uintptr_t)p) {
            drop(o, i);
            return FMPL_SUCCESS;
        }
    return FMPL_ERR_ARG;
}

void fmpl_ofi_mem_cleanup(fmpl_ofi_t *o)
{
    int held = 0;
    for (int i = 0; i < o->nreg; i++)
        held += o->reg[i].refs > 0 && !o->reg[i].allocated;
    /* requests the application never waited for keep theirs; anything
     * else is a missing mem_dereg */
    if (held)
        fmpl_log_info("ofi: %d registrations still in use at close", held);
    while (o->nreg)
        drop(o, o->nreg - 1);
    free(o->reg);
    o->reg = NULL;
    o->cap = 0;
}
