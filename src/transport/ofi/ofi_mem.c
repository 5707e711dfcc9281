/*
 * ofi_mem.c - registration keys for the libfabric transport.
 *
 * Registering costs a system call (and pins pages on RDMA hardware), so
 * registrations are cached: a buffer inside a cached region reuses it.
 * The cache is small and evicts the least recently used user region when
 * full; fmpl_alloc_mem memory stays registered until it is freed.
 */
#include <stdlib.h>
#include <string.h>

#include <rdma/fi_domain.h>
#include <rdma/fi_errno.h>

#include "fmpl.h"
#include "core/log.h"
#include "transport/ofi/ofi.h"

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

int fmpl_ofi_mem_reg(fmpl_tl_t *tl, void *addr, size_t len, fmpl_tl_key_t *key)
{
    fmpl_ofi_t *o = fmpl_ofi_of(tl);
    uintptr_t a = (uintptr_t)addr;
    fmpl_ofi_reg_t *victim = NULL;
    for (int i = 0; i < FMPL_OFI_NREG; i++) {
        fmpl_ofi_reg_t *r = &o->reg[i];
        if (r->mr && a >= r->base && a + len <= r->base + r->len) {
            r->used = ++o->clock;
            to_key(o, r, addr, key);
            return FMPL_SUCCESS;
        }
        if (!r->allocated && (!victim || !r->mr || (victim->mr && r->used < victim->used)))
            victim = r;
    }
    if (!victim) {
        fmpl_log_err("ofi: every registration slot holds fmpl_alloc_mem memory");
        return FMPL_ERR_NOMEM;
    }
    if (victim->mr)
        fi_close(&victim->mr->fid);
    memset(victim, 0, sizeof *victim);
    /* whole pages: neighbouring buffers then share the registration */
    uintptr_t base = a & ~(uintptr_t)4095, end = (a + len + 4095) & ~(uintptr_t)4095;
    int rc = fmpl_ofi_register(o, (void *)base, end - base, &victim->mr, &victim->key);
    if (rc != FMPL_SUCCESS) {
        victim->mr = NULL;
        return rc;
    }
    victim->base = base;
    victim->len = end - base;
    victim->used = ++o->clock;
    to_key(o, victim, addr, key);
    return FMPL_SUCCESS;
}

void *fmpl_ofi_mem_alloc(fmpl_tl_t *tl, size_t len)
{
    fmpl_ofi_t *o = fmpl_ofi_of(tl);
    for (int i = 0; i < FMPL_OFI_NREG; i++) {
        fmpl_ofi_reg_t *r = &o->reg[i];
        if (r->allocated)
            continue;
        void *p = NULL;
        size_t n = (len + 4095) & ~(size_t)4095;
        if (posix_memalign(&p, 4096, n ? n : 4096) != 0)
            return NULL;
        if (r->mr)
            fi_close(&r->mr->fid);
        memset(r, 0, sizeof *r);
        if (fmpl_ofi_register(o, p, n ? n : 4096, &r->mr, &r->key) != FMPL_SUCCESS) {
            r->mr = NULL;
            free(p);
            return NULL;
        }
        r->base = (uintptr_t)p;
        r->len = n ? n : 4096;
        r->allocated = 1;
        r->used = ++o->clock;
        return p;
    }
    return NULL;
}

int fmpl_ofi_mem_free(fmpl_tl_t *tl, void *p)
{
    fmpl_ofi_t *o = fmpl_ofi_of(tl);
    for (int i = 0; i < FMPL_OFI_NREG; i++) {
        fmpl_ofi_reg_t *r = &o->reg[i];
        if (r->allocated && r->base == (uintptr_t)p) {
            fi_close(&r->mr->fid);
            free(p);
            memset(r, 0, sizeof *r);
            return FMPL_SUCCESS;
        }
    }
    return FMPL_ERR_ARG;
}

void fmpl_ofi_mem_cleanup(fmpl_ofi_t *o)
{
    for (int i = 0; i < FMPL_OFI_NREG; i++) {
        fmpl_ofi_reg_t *r = &o->reg[i];
        if (r->mr)
            fi_close(&r->mr->fid);
        if (r->allocated)
            free((void *)r->base);
        memset(r, 0, sizeof *r);
    }
}
