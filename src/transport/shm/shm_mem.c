/*
 * shm_mem.c - registration keys and fmpl_alloc_mem memory.
 *
 * Registration is free here: a key is either the plain address (ordinary
 * memory, reached by CMA or the FIFO) or (allocation generation, offset)
 * for fmpl_alloc_mem memory.  Each allocation is its own memfd, so a peer
 * can map it on first use through /proc/<pid>/fd/<fd> and then write it
 * with a plain memcpy.  Generations are never reused, so a stale mapping
 * is never mistaken for a new allocation.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fmpl.h"
#include "base/log.h"
#include "transport/seg.h"
#include "transport/shm/shm.h"

static fmpl_shm_alloc_t *find_alloc(fmpl_shm_t *s, const void *addr, size_t len)
{
    const uint8_t *a = addr;
    for (fmpl_shm_alloc_t *m = s->allocs; m; m = m->next)
        if (a >= m->base && a + len <= m->base + m->len)
            return m;
    return NULL;
}

int fmpl_shm_mem_reg(fmpl_tl_t *tl, void *addr, size_t len, fmpl_tl_key_t *key)
{
    fmpl_shm_t *s = fmpl_shm_of(tl);
    fmpl_shm_alloc_t *m = s->allocs ? find_alloc(s, addr, len) : NULL;
    if (m) {
        key->addr = (uint64_t)((uint8_t *)addr - m->base);
        key->kind = FMPL_SHM_KEY_ALLOC | ((uint32_t)m->fd << 8);
        key->id = m->gen;
    } else {
        key->addr = (uint64_t)(uintptr_t)addr;
        key->kind = FMPL_SHM_KEY_USER;
        key->id = 0;
    }
    return FMPL_SUCCESS;
}

/* Keys are addresses or segment offsets: nothing is held per key. */
void fmpl_shm_mem_dereg(fmpl_tl_t *tl, const fmpl_tl_key_t *key)
{
    (void)tl;
    (void)key;
}

/* Are [addr + roff, + len) inside a region of `size` bytes?  (A peer's
 * key and the sizes it comes with may be anything: no sum may wrap.) */
static int in_region(uint64_t addr, uint64_t roff, uint64_t len, size_t size)
{
    return addr <= size && roff <= size - addr && len <= size - addr - roff;
}

static uint8_t *outside(int peer, const fmpl_tl_key_t *key, uint64_t roff, uint64_t len,
                        size_t size)
{
    fmpl_log_err("%llu bytes at offset %llu + %llu of an fmpl_alloc_mem region of rank %d "
                 "(%zu bytes): outside it, refused", (unsigned long long)len,
                 (unsigned long long)key->addr, (unsigned long long)roff, peer, size);
    return NULL;
}

/* [roff, roff + len) of a key of ours, as a local pointer; NULL if the
 * key names no region of ours or the range leaves it.  Ordinary memory
 * is the address itself: the key says nothing of its size. */
uint8_t *fmpl_shm_key_local(fmpl_shm_t *s, const fmpl_tl_key_t *key, uint64_t roff,
                            uint64_t len)
{
    if ((key->kind & 0xff) == FMPL_SHM_KEY_USER)
        return (uint8_t *)(uintptr_t)(key->addr + roff);
    for (fmpl_shm_alloc_t *m = s->allocs; m; m = m->next)
        if (m->gen == key->id)
            return in_region(key->addr, roff, len, m->len)
                       ? m->base + key->addr + roff
                       : outside(s->tl->rank, key, roff, len, m->len);
    return NULL;
}

/* [roff, roff + len) of a peer's key as a pointer here: only for its
 * fmpl_alloc_mem memory, and only inside the region (the peer's header
 * says how much we may write: a wrong one must not reach past the
 * mapping into our own memory). */
uint8_t *fmpl_shm_key_remote(fmpl_shm_t *s, int peer, const fmpl_tl_key_t *key,
                             uint64_t roff, uint64_t len)
{
    if ((key->kind & 0xff) != FMPL_SHM_KEY_ALLOC)
        return NULL;
    fmpl_shm_rmap_t *r = NULL;
    for (unsigned i = 0; i < FMPL_SHM_RMAP_MAX && !r; i++)
        if (s->rmap[i].base && s->rmap[i].peer == peer && s->rmap[i].gen == key->id)
            r = &s->rmap[i];
    if (!r) {
        /* first use: map it, evicting the oldest entry */
        size_t n = 0;
        uint8_t *base = fmpl_seg_map_of(fmpl_shm_pid(s, peer), (int)(key->kind >> 8), &n);
        if (!base)
            return NULL;
        r = &s->rmap[s->rmap_next++ % FMPL_SHM_RMAP_MAX];
        if (r->base)
            munmap(r->base, r->len);
        *r = (fmpl_shm_rmap_t){ .peer = peer, .gen = key->id, .base = base, .len = n };
    }
    return in_region(key->addr, roff, len, r->len) ? r->base + key->addr + roff
                                                   : outside(peer, key, roff, len, r->len);
}

void *fmpl_shm_mem_alloc(fmpl_tl_t *tl, size_t len)
{
    fmpl_shm_t *s = fmpl_shm_of(tl);
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    size_t n = (len ? len + pg - 1 : pg) / pg * pg;
    fmpl_shm_alloc_t *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->fd = memfd_create("fmpl-mem", MFD_CLOEXEC);
    if (m->fd < 0 || ftruncate(m->fd, (off_t)n) != 0)
        goto fail;
    fchmod(m->fd, 0600);
    m->base = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED, m->fd, 0);
    if (m->base == MAP_FAILED)
        goto fail;
    m->len = n;
    m->gen = ++s->alloc_gen;
    m->next = s->allocs;
    s->allocs = m;
    return m->base;
fail:
    if (m->fd >= 0)
        close(m->fd);
    free(m);
    return NULL;
}

int fmpl_shm_mem_free(fmpl_tl_t *tl, void *p)
{
    fmpl_shm_t *s = fmpl_shm_of(tl);
    for (fmpl_shm_alloc_t **pp = &s->allocs; *pp; pp = &(*pp)->next) {
        fmpl_shm_alloc_t *m = *pp;
        if (m->base == p) {
            *pp = m->next;
            munmap(m->base, m->len);
            close(m->fd);
            free(m);
            return FMPL_SUCCESS;
        }
    }
    return FMPL_ERR_ARG;
}

void fmpl_shm_mem_cleanup(fmpl_shm_t *s)
{
    while (s->allocs)
        fmpl_shm_mem_free(s->tl, s->allocs->base);
    for (unsigned i = 0; i < FMPL_SHM_RMAP_MAX; i++)
        if (s->rmap[i].base)
            munmap(s->rmap[i].base, s->rmap[i].len);
    memset(s->rmap, 0, sizeof s->rmap);
}
