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
#include "core/log.h"
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

/* A key of ours, as a local pointer. */
uint8_t *fmpl_shm_key_local(fmpl_shm_t *s, const fmpl_tl_key_t *key)
{
    if ((key->kind & 0xff) == FMPL_SHM_KEY_USER)
        return (uint8_t *)(uintptr_t)key->addr;
    for (fmpl_shm_alloc_t *m = s->allocs; m; m = m->next)
        if (m->gen == key->id)
            return key->addr < m->len ? m->base + key->addr : NULL;
    return NULL;
}

/* A peer's key as a pointer here: only for its fmpl_alloc_mem memory. */
uint8_t *fmpl_shm_key_remote(fmpl_shm_t *s, int peer, const fmpl_tl_key_t *key)
{
    if ((key->kind & 0xff) != FMPL_SHM_KEY_ALLOC)
        return NULL;
    for (unsigned i = 0; i < FMPL_SHM_RMAP_MAX; i++) {
        fmpl_shm_rmap_t *r = &s->rmap[i];
        if (r->base && r->peer == peer && r->gen == key->id)
            return key->addr < r->len ? r->base + key->addr : NULL;
    }
    /* first use: map it, evicting the oldest entry */
    size_t len = 0;
    uint8_t *base = fmpl_seg_map_of(s->peers[peer].pid, (int)(key->kind >> 8), &len);
    if (!base)
        return NULL;
    fmpl_shm_rmap_t *r = &s->rmap[s->rmap_next++ % FMPL_SHM_RMAP_MAX];
    if (r->base)
        munmap(r->base, r->len);
    *r = (fmpl_shm_rmap_t){ .peer = peer, .gen = key->id, .base = base, .len = len };
    return key->addr < r->len ? r->base + key->addr : NULL;
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
