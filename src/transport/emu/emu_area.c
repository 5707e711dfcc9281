/*
 * emu_area.c - the registered regions of an emulated fabric's nodes
 * (emu_area.h).  Registering costs nothing in the models: the SR8000's
 * FMPL made the whole user space a remote-DMA area (Tatebe et al. 2002,
 * 4.2), and a TCA program pins its buffers once, before it communicates.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fmpl.h"
#include "base/log.h"
#include "transport/emu/emu_area.h"

#define PAGE 4096ull               /* the window maps whole pages */

/* our slice's place in our window: sub-clusters (tca) have a window each */
static uint64_t win_slot(const fmpl_emu_areas_t *A)
{
    return (uint64_t)(A->win_nodes ? A->rank % A->win_nodes : A->rank);
}

static fmpl_emu_area_t *area(const fmpl_emu_areas_t *A, int rank, uint32_t id)
{
    return &A->table[(size_t)rank * (size_t)A->max + id];
}

size_t fmpl_emu_areas_bytes(int size, int max)
{
    return (size_t)size * (size_t)max * sizeof(fmpl_emu_area_t);
}

/* ---- the window: first fit over our slice, page-granular --------------- */

/* Place [addr, addr + len) in our slice: its base, or 0 when full. */
static uint64_t place(fmpl_emu_areas_t *A, uint64_t addr, uint64_t len)
{
    if (!A->win_slice)
        return addr;
    uint64_t first = addr & ~(PAGE - 1);
    uint64_t span = ((addr + (len ? len : 1) + PAGE - 1) & ~(PAGE - 1)) - first;
    if (A->nused == A->used_cap) {
        int cap = A->used_cap ? 2 * A->used_cap : 64;
        fmpl_emu_span_t *u = realloc(A->used, (size_t)cap * sizeof *u);
        if (!u)
            return 0;
        A->used = u;
        A->used_cap = cap;
    }
    /* offset 0 stays unused: a base of 0 means "none" */
    uint64_t at = PAGE;
    int i = 0;
    for (; i < A->nused; i++) {
        if (A->used[i].off >= at + span)
            break;
        at = A->used[i].off + A->used[i].len;
    }
    if (at + span > A->win_slice)
        return 0;
    memmove(&A->used[i + 1], &A->used[i], (size_t)(A->nused - i) * sizeof *A->used);
    A->used[i] = (fmpl_emu_span_t){ at, span };
    A->nused++;
    return A->win_base + win_slot(A) * A->win_slice + at + (addr - first);
}

static void unplace(fmpl_emu_areas_t *A, uint64_t base)
{
    if (!A->win_slice)
        return;
    uint64_t off = (base - A->win_base - win_slot(A) * A->win_slice) & ~(PAGE - 1);
    for (int i = 0; i < A->nused; i++)
        if (A->used[i].off == off) {
            memmove(&A->used[i], &A->used[i + 1], (size_t)(A->nused - i - 1) * sizeof *A->used);
            A->nused--;
            return;
        }
}

/* ---- the table ----------------------------------------------------------- */

static int area_new(fmpl_emu_areas_t *A, int32_t id, void *addr, size_t len,
                    fmpl_tl_key_t *key)
{
    fmpl_emu_area_t *a = area(A, A->rank, (uint32_t)id);
    uint64_t base = place(A, (uint64_t)(uintptr_t)addr, len);
    if (!base) {
        fmpl_log_err("%s: no room for %zu more bytes in rank %d's %llu-byte slice of the "
                     "address window", A->name, len, A->rank,
                     (unsigned long long)A->win_slice);
        return FMPL_ERR_NOMEM;
    }
    a->addr = (uint64_t)(uintptr_t)addr;
    a->len = len;
    a->base = base;
    uint32_t gen = atomic_load(&a->gen) + 1;     /* even (free) -> odd */
    atomic_store_explicit(&a->gen, gen, memory_order_release);
    if (key)
        *key = (fmpl_tl_key_t){ .addr = base, .kind = gen, .id = (uint32_t)id };
    return FMPL_SUCCESS;
}

static void area_drop(fmpl_emu_areas_t *A, uint32_t id)
{
    fmpl_emu_area_t *a = area(A, A->rank, id);
    atomic_store_explicit(&a->gen, atomic_load(&a->gen) + 1, memory_order_release);
    unplace(A, a->base);
}

int fmpl_emu_areas_init(fmpl_emu_areas_t *A, fmpl_emu_area_t *table, void *mbox,
                        size_t mbox_len)
{
    A->table = table;
    int nstatic = A->nstatic - 1, ndyn = A->max - A->nstatic;
    A->free_static = malloc((size_t)nstatic * sizeof *A->free_static);
    A->free_dyn = malloc((size_t)ndyn * sizeof *A->free_dyn);
    A->alloc_base = calloc((size_t)A->nstatic, sizeof *A->alloc_base);
    if (!A->free_static || !A->free_dyn || !A->alloc_base)
        return FMPL_ERR_NOMEM;
    /* lowest ids first: ranks allocating in the same order get the same */
    for (int i = 0; i < nstatic; i++)
        A->free_static[i] = A->nstatic - 1 - i;
    A->nfree_static = nstatic;
    for (int i = 0; i < ndyn; i++)
        A->free_dyn[i] = A->max - 1 - i;
    A->nfree_dyn = ndyn;
    /* area 0, the matching area: written by records, never by bytes */
    return area_new(A, 0, mbox, mbox_len, NULL);
}

void fmpl_emu_areas_fini(fmpl_emu_areas_t *A)
{
    if (A->alloc_base && A->table)
        for (int i = 1; i < A->nstatic; i++)
            if (A->alloc_base[i])
                munmap(A->alloc_base[i], area(A, A->rank, (uint32_t)i)->len);
    free(A->free_static);
    free(A->free_dyn);
    free(A->alloc_base);
    free(A->used);
    A->free_static = A->free_dyn = NULL;
    A->alloc_base = NULL;
    A->used = NULL;
}

int fmpl_emu_area_reg(fmpl_emu_areas_t *A, void *addr, size_t len, fmpl_tl_key_t *key)
{
    if (A->nfree_dyn == 0) {
        fmpl_log_err("%s: more than %d %ss at once", A->name, A->max - A->nstatic, A->what);
        return FMPL_ERR_NOMEM;
    }
    int rc = area_new(A, A->free_dyn[A->nfree_dyn - 1], addr, len, key);
    if (rc == FMPL_SUCCESS)
        A->nfree_dyn--;
    return rc;
}

void fmpl_emu_area_dereg(fmpl_emu_areas_t *A, const fmpl_tl_key_t *key)
{
    if (key->id < (uint32_t)A->nstatic || key->id >= (uint32_t)A->max)
        return;
    area_drop(A, key->id);
    A->free_dyn[A->nfree_dyn++] = (int32_t)key->id;
}

void *fmpl_emu_area_alloc(fmpl_emu_areas_t *A, size_t len)
{
    if (A->nfree_static == 0) {
        fmpl_log_err("%s: more than %d fmpl_alloc_mem regions at once", A->name,
                     A->nstatic - 1);
        return NULL;
    }
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    size_t n = (len ? len + pg - 1 : pg) / pg * pg;
    void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    int32_t id = A->free_static[A->nfree_static - 1];
    if (area_new(A, id, p, n, NULL) != FMPL_SUCCESS) {
        munmap(p, n);
        return NULL;
    }
    A->nfree_static--;
    A->alloc_base[id] = p;
    return p;
}

int fmpl_emu_area_free(fmpl_emu_areas_t *A, void *p)
{
    for (int i = 1; i < A->nstatic; i++)
        if (A->alloc_base[i] == p) {
            fmpl_emu_area_t *a = area(A, A->rank, (uint32_t)i);
            area_drop(A, (uint32_t)i);
            munmap(p, a->len);
            A->alloc_base[i] = NULL;
            A->free_static[A->nfree_static++] = i;
            return FMPL_SUCCESS;
        }
    return FMPL_ERR_ARG;
}

uint64_t fmpl_emu_area_check(const fmpl_emu_areas_t *A, int peer, const fmpl_tl_key_t *key,
                             uint64_t roff, size_t len)
{
    if (key->id == 0 || key->id >= (uint32_t)A->max) {
        fmpl_log_err("%s: no %s %u on rank %d", A->name, A->what, key->id, peer);
        return 0;
    }
    const fmpl_emu_area_t *a = area(A, peer, key->id);
    uint32_t gen = atomic_load_explicit(&((fmpl_emu_area_t *)a)->gen, memory_order_acquire);
    uint64_t base = a->base, alen = a->len, addr = a->addr;
    if (gen != key->kind || !(gen & 1)) {
        fmpl_log_err("%s: %s %u of rank %d is gone (the key is stale)", A->name, A->what,
                     key->id, peer);
        return 0;
    }
    uint64_t at = key->addr + roff;
    if (at < base || at > base + alen || len > base + alen - at) {
        fmpl_log_err("%s: a write of %zu bytes at offset %llu is outside %s %u of rank %d "
                     "(%llu bytes)", A->name, len, (unsigned long long)(at - base), A->what,
                     key->id, peer, (unsigned long long)alen);
        return 0;
    }
    return addr + (at - base);
}

int fmpl_emu_area_static(const fmpl_emu_areas_t *A, const void *p, size_t len, uint64_t *off)
{
    uintptr_t q = (uintptr_t)p;
    for (int i = 1; i < A->nstatic; i++) {
        uintptr_t b = (uintptr_t)A->alloc_base[i];
        if (!b)
            continue;
        size_t alen = area(A, A->rank, (uint32_t)i)->len;
        if (q >= b && q - b <= alen && len <= alen - (q - b)) {
            *off = q - b;
            return i;
        }
    }
    return -1;
}

uint64_t fmpl_emu_area_base(const fmpl_emu_areas_t *A, int rank, uint32_t id)
{
    return area(A, rank, id)->base;
}
