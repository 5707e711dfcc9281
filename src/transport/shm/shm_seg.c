/*
 * shm_seg.c - the per-process segment: create, publish, map the peers'.
 *
 * A memfd is used rather than shm_open: it has no name, so a segment can
 * never be left behind in /dev/shm (kill -9, a crashed launcher), and it is
 * private to processes allowed to open /proc/<pid>/fd of its owner (same
 * user, ptrace-read access) - job-private by construction.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fmpl.h"
#include "base/boot.h"
#include "base/env.h"
#include "base/log.h"
#include "transport/seg.h"
#include "transport/shm/shm.h"

static size_t round_up(size_t x, size_t a) { return (x + a - 1) / a * a; }

/* Chunks per FIFO: FMPL_SHM_FIFO bytes, else the budget over the peers
 * we serve (shm.h).  Every rank of the segment group computes the same
 * unless their environments differ, which mapping the peers detects. */
static int fifo_nchunk(const fmpl_tl_t *tl, uint32_t *nchunk)
{
    char what[128];
    snprintf(what, sizeof what, "bytes of each FIFO to a peer, %u to %u (K, M allowed)",
             2 * FMPL_SHM_CHUNK, FMPL_SHM_FIFO_LIMIT);
    uint64_t v;
    int rc = fmpl_env_size("FMPL_SHM_FIFO", 0, 2 * FMPL_SHM_CHUNK, FMPL_SHM_FIFO_LIMIT, what, &v);
    if (rc != FMPL_SUCCESS)
        return rc;
    if (v != 0) {
        *nchunk = (uint32_t)(v / FMPL_SHM_CHUNK);
        return FMPL_SUCCESS;
    }
    int peers = 0;
    for (int r = 0; r < tl->size; r++)
        peers += r != tl->rank && fmpl_shm_here(tl, r);
    size_t bytes = FMPL_SHM_FIFO_BUDGET / (size_t)(peers ? peers : 1);
    bytes = bytes < FMPL_SHM_FIFO_MIN ? FMPL_SHM_FIFO_MIN
          : bytes > FMPL_SHM_FIFO_MAX ? FMPL_SHM_FIFO_MAX : bytes;
    *nchunk = (uint32_t)(bytes / FMPL_SHM_CHUNK);
    return FMPL_SUCCESS;
}

/* Every rank computes the same layout from (size, nidx, FIFO depth). */
static void layout(fmpl_shm_seg_hdr_t *h, int size, int nidx, uint32_t nchunk)
{
    size_t off = 4096;
    memset(h, 0, sizeof *h);
    h->magic = FMPL_SHM_MAGIC;
    h->size = size;
    h->nidx = nidx;
    h->slot = FMPL_TL_LINE + fmpl_tl_slot_ext(size, nidx);
    h->lines_off = off;
    off = round_up(off + (size_t)size * (size_t)nidx * h->slot, 4096);
    h->fifo_off = off;
    h->fifo_nchunk = nchunk;
    h->fifo_stride = round_up((size_t)nchunk * (sizeof(fmpl_shm_chunk_t) + FMPL_SHM_CHUNK),
                              4096);
    off = round_up(off + (size_t)size * h->fifo_stride, 4096);
    h->acks_off = off;
    off = round_up(off + (size_t)size * sizeof(fmpl_shm_ack_t), 4096);
    h->coll_off = off;
    off = round_up(off + FMPL_SHM_HB_ACK + (size_t)size * 64, 4096);
    h->hb_data_off = off;
    off += (size_t)FMPL_SHM_HB_NSLOT * FMPL_SHM_HB_CHUNK;
    h->seg_len = off;
}

int fmpl_shm_seg_create(fmpl_shm_t *s)
{
    fmpl_tl_t *tl = s->tl;
    uint32_t nchunk;
    int rc = fifo_nchunk(tl, &nchunk);
    if (rc != FMPL_SUCCESS)
        return rc;
    layout(&s->layout, tl->size, tl->nidx, nchunk);
    fmpl_log_info("shm: FIFOs of %u KiB to each peer",
                  s->layout.fifo_nchunk * (FMPL_SHM_CHUNK / 1024));
    s->seg_len = s->layout.seg_len;

    void *base;
    rc = fmpl_seg_create("fmpl-shm", s->seg_len, &s->fd, &base);
    if (rc != FMPL_SUCCESS)
        return rc;
    s->seg = base;
    fmpl_shm_seg_hdr_t *h = (fmpl_shm_seg_hdr_t *)s->seg;
    *h = s->layout;
    h->pid = getpid();
    h->rank = tl->rank;
    h->self_addr = (uint64_t)(uintptr_t)s->seg;

    /* publish where to find it */
    struct { int32_t pid, fd; uint64_t len; } addr = { getpid(), s->fd, s->seg_len };
    return tl->boot->ops->put(tl->boot, "shm", &addr, sizeof addr);
}

/* After the fence: map every peer's segment and check it. */
int fmpl_shm_seg_map_peers(fmpl_shm_t *s)
{
    fmpl_tl_t *tl = s->tl;
    for (int r = 0; r < tl->size; r++) {
        fmpl_shm_peer_t *p = &s->peers[r];
        if (r == tl->rank) {
            p->base = s->seg;
            p->len = s->seg_len;
            p->pid = getpid();
            continue;
        }
        if (!fmpl_shm_here(tl, r))
            continue;

        struct { int32_t pid, fd; uint64_t len; } addr;
        size_t len = sizeof addr;
        int rc = tl->boot->ops->get(tl->boot, r, "shm", &addr, &len);
        if (rc != FMPL_SUCCESS || len != sizeof addr) {
            fmpl_log_err("rank %d published no shared-memory address", r);
            return rc ? rc : FMPL_ERR_INTERNAL;
        }
        if (addr.len != s->seg_len) {
            fmpl_log_err("rank %d has a different segment layout (the count of fmpl_init "
                         "or FMPL_SHM_FIFO differ between the ranks)", r);
            return FMPL_ERR_ARG;
        }
        len = addr.len;            /* now the segment's size */
        p->base = fmpl_seg_map_of(addr.pid, addr.fd, &len);
        if (!p->base && kill(addr.pid, 0) != 0 && errno == ESRCH) {
            fmpl_log_err("rank %d (pid %d) died during start-up", r, addr.pid);
            return FMPL_ERR_PEER;
        }
        if (!p->base) {
            fmpl_log_err("cannot map the segment of rank %d (pid %d): %s "
                         "(is it on another host? start with FMPL_TRANSPORT=ofi)",
                         r, addr.pid, strerror(errno));
            return FMPL_ERR_SYSTEM;
        }
        p->len = addr.len;
        p->pid = addr.pid;
        const fmpl_shm_seg_hdr_t *h = (const fmpl_shm_seg_hdr_t *)p->base;
        if (h->magic != FMPL_SHM_MAGIC || h->rank != r || h->nidx != tl->nidx ||
            h->fifo_nchunk != s->layout.fifo_nchunk) {
            fmpl_log_err("rank %d's segment does not match (count %d vs %d, FIFOs of "
                         "%u vs %u chunks: FMPL_SHM_FIFO differs?)", r, h->nidx, tl->nidx,
                         h->fifo_nchunk, s->layout.fifo_nchunk);
            return FMPL_ERR_ARG;
        }
    }
    return FMPL_SUCCESS;
}

void fmpl_shm_seg_destroy(fmpl_shm_t *s)
{
    if (s->peers)
        for (int r = 0; r < s->tl->size; r++)
            if (s->peers[r].base && r != s->tl->rank)
                munmap(s->peers[r].base, s->peers[r].len);
    if (s->seg)
        munmap(s->seg, s->seg_len);
    if (s->fd >= 0)
        close(s->fd);
    s->seg = NULL;
    s->fd = -1;
}
