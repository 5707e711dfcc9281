/*
 * tcw_area.c - combuf remote-DMA areas: the memory a peer may write.
 *
 * Every node has a table of areas in the engine's shared segment (only its
 * owner writes it; a kicking NIA reads the destination's): address,
 * length, and a generation that is odd while the area exists.  A key
 * names (area id, generation, address), so a write through a key whose
 * area is gone, or beyond its end, is refused with a message - the NIA
 * checks what the hardware checked.  Ids 1 .. FMPL_TCW_STATIC_AREAS - 1
 * are fmpl_alloc_mem's static areas (a hardware broadcast targets one of
 * those at the same offset on every node); the rest are the buffers FMPL
 * hands to peers for the length of one message.  Registering costs nothing
 * in the model: the paper's FMPL made the whole user space a remote-DMA
 * area (4.2).
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fmpl.h"
#include "core/log.h"
#include "transport/tcw/tcw.h"

static tcw_area_t *area(fmpl_tcw_t *t, int rank, uint32_t id)
{
    return &t->areas[(size_t)rank * FMPL_TCW_MAX_AREAS + id];
}

int fmpl_tcw_area_init(fmpl_tcw_t *t)
{
    int nstatic = FMPL_TCW_STATIC_AREAS - 1, ndyn = FMPL_TCW_MAX_AREAS - FMPL_TCW_STATIC_AREAS;
    t->free_static = malloc((size_t)nstatic * sizeof *t->free_static);
    t->free_dyn = malloc((size_t)ndyn * sizeof *t->free_dyn);
    t->alloc_base = calloc(FMPL_TCW_STATIC_AREAS, sizeof *t->alloc_base);
    if (!t->free_static || !t->free_dyn || !t->alloc_base)
        return FMPL_ERR_NOMEM;
    /* lowest ids first: ranks allocating in the same order get the same */
    for (int i = 0; i < nstatic; i++)
        t->free_static[i] = FMPL_TCW_STATIC_AREAS - 1 - i;
    t->nfree_static = nstatic;
    for (int i = 0; i < ndyn; i++)
        t->free_dyn[i] = FMPL_TCW_MAX_AREAS - 1 - i;
    t->nfree_dyn = ndyn;
    /* area 0, the matching area: written by records, never by bytes */
    tcw_area_t *a = area(t, t->et.tl->rank, FMPL_TCW_MBOX_AREA);
    a->addr = (uint64_t)(uintptr_t)t->et.mbox;
    a->len = (uint64_t)t->et.tl->size * (uint64_t)t->et.tl->nidx * FMPL_TL_LINE;
    atomic_store(&a->gen, 1);
    return FMPL_SUCCESS;
}

void fmpl_tcw_area_fini(fmpl_tcw_t *t)
{
    if (t->alloc_base)
        for (int i = 1; i < FMPL_TCW_STATIC_AREAS; i++)
            if (t->alloc_base[i])
                munmap(t->alloc_base[i], area(t, t->et.tl->rank, (uint32_t)i)->len);
    free(t->free_static);
    free(t->free_dyn);
    free(t->alloc_base);
}

static int area_new(fmpl_tcw_t *t, int32_t id, void *addr, size_t len, fmpl_tl_key_t *key)
{
    tcw_area_t *a = area(t, t->et.tl->rank, (uint32_t)id);
    a->addr = (uint64_t)(uintptr_t)addr;
    a->len = len;
    uint32_t gen = atomic_load(&a->gen) + 1;     /* even (free) -> odd */
    atomic_store_explicit(&a->gen, gen, memory_order_release);
    *key = (fmpl_tl_key_t){ .addr = a->addr, .kind = gen, .id = (uint32_t)id };
    return FMPL_SUCCESS;
}

static void area_drop(fmpl_tcw_t *t, uint32_t id)
{
    tcw_area_t *a = area(t, t->et.tl->rank, id);
    atomic_store_explicit(&a->gen, atomic_load(&a->gen) + 1, memory_order_release);
}

int fmpl_tcw_mem_reg(fmpl_tl_t *tl, void *addr, size_t len, fmpl_tl_key_t *key)
{
    fmpl_tcw_t *t = fmpl_tcw_of(tl);
    if (t->nfree_dyn == 0) {
        fmpl_log_err("tcw: more than %d remote-DMA areas at once", FMPL_TCW_MAX_AREAS -
                     FMPL_TCW_STATIC_AREAS);
        return FMPL_ERR_NOMEM;
    }
    return area_new(t, t->free_dyn[--t->nfree_dyn], addr, len, key);
}

void fmpl_tcw_mem_dereg(fmpl_tl_t *tl, const fmpl_tl_key_t *key)
{
    fmpl_tcw_t *t = fmpl_tcw_of(tl);
    if (key->id < FMPL_TCW_STATIC_AREAS || key->id >= FMPL_TCW_MAX_AREAS)
        return;
    area_drop(t, key->id);
    t->free_dyn[t->nfree_dyn++] = (int32_t)key->id;
}

void *fmpl_tcw_mem_alloc(fmpl_tl_t *tl, size_t len)
{
    fmpl_tcw_t *t = fmpl_tcw_of(tl);
    if (t->nfree_static == 0) {
        fmpl_log_err("tcw: more than %d fmpl_alloc_mem areas at once",
                     FMPL_TCW_STATIC_AREAS - 1);
        return NULL;
    }
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    size_t n = (len ? len + pg - 1 : pg) / pg * pg;
    void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    int32_t id = t->free_static[--t->nfree_static];
    fmpl_tl_key_t key;
    area_new(t, id, p, n, &key);
    t->alloc_base[id] = p;
    return p;
}

int fmpl_tcw_mem_free(fmpl_tl_t *tl, void *p)
{
    fmpl_tcw_t *t = fmpl_tcw_of(tl);
    for (int i = 1; i < FMPL_TCW_STATIC_AREAS; i++)
        if (t->alloc_base[i] == p) {
            tcw_area_t *a = area(t, tl->rank, (uint32_t)i);
            area_drop(t, (uint32_t)i);
            munmap(p, a->len);
            t->alloc_base[i] = NULL;
            t->free_static[t->nfree_static++] = i;
            return FMPL_SUCCESS;
        }
    return FMPL_ERR_ARG;
}

uint64_t fmpl_tcw_area_check(fmpl_tcw_t *t, int peer, const fmpl_tl_key_t *key,
                             uint64_t roff, size_t len)
{
    if (key->id == FMPL_TCW_MBOX_AREA || key->id >= FMPL_TCW_MAX_AREAS) {
        fmpl_log_err("tcw: no remote-DMA area %u on rank %d", key->id, peer);
        return 0;
    }
    tcw_area_t *a = area(t, peer, key->id);
    uint32_t gen = atomic_load_explicit(&a->gen, memory_order_acquire);
    uint64_t base = a->addr, alen = a->len;
    if (gen != key->kind || !(gen & 1)) {
        fmpl_log_err("tcw: remote-DMA area %u of rank %d is gone (the key is stale)",
                     key->id, peer);
        return 0;
    }
    uint64_t at = key->addr + roff;
    if (at < base || at > base + alen || len > base + alen - at) {
        fmpl_log_err("tcw: a write of %zu bytes at offset %llu is outside remote-DMA area "
                     "%u of rank %d (%llu bytes)", len, (unsigned long long)(at - base),
                     key->id, peer, (unsigned long long)alen);
        return 0;
    }
    return at;
}

int fmpl_tcw_area_static(fmpl_tcw_t *t, const void *p, size_t len, uint64_t *off)
{
    uintptr_t q = (uintptr_t)p;
    for (int i = 1; i < FMPL_TCW_STATIC_AREAS; i++) {
        uintptr_t b = (uintptr_t)t->alloc_base[i];
        if (!b)
            continue;
        size_t alen = area(t, t->et.tl->rank, (uint32_t)i)->len;
        if (q >= b && q - b <= alen && len <= alen - (q - b)) {
            *off = q - b;
            return i;
        }
    }
    return -1;
}
