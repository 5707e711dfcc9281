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
#include <sys/uio.h>
#include <unistd.h>

#include "fmpl.h"
#include "base/boot.h"
#include "base/env.h"
#include "base/log.h"
#include "transport/seg.h"
#include "transport/shm/shm.h"
#include "transport/wait.h"

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
    memset(h, 0, sizeof *h);
    h->magic = FMPL_SHM_MAGIC;
    h->size = size;
    h->nidx = nidx;
    h->slot = FMPL_TL_LINE + fmpl_tl_slot_ext(size, nidx);
    size_t off = 4096;
    h->contact_off = off;
    off = round_up(off + ((size_t)size + 63) / 64 * 8 + 64, 4096);
    h->coll_off = off;
    off = round_up(off + FMPL_SHM_HB_ACK + (size_t)size * 64, 4096);
    h->hb_data_off = off;
    off += (size_t)FMPL_SHM_HB_NSLOT * FMPL_SHM_HB_CHUNK;
    h->blocks_off = off;
    h->ack_off = (size_t)nidx * h->slot;
    h->fifo_off = round_up(h->ack_off + sizeof(fmpl_shm_ack_t), 4096);
    h->fifo_nchunk = nchunk;
    h->fifo_stride = round_up((size_t)nchunk * (sizeof(fmpl_shm_chunk_t) + FMPL_SHM_CHUNK),
                              4096);
    h->block_len = h->fifo_off + h->fifo_stride;
    h->seg_len = off + (size_t)size * h->block_len;
}

/* where the modex says a rank's segment is */
typedef struct seg_addr {
    int32_t pid, fd;
    uint64_t len, self;
} seg_addr_t;

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
    seg_addr_t addr = { getpid(), s->fd, s->seg_len, h->self_addr };
    return tl->boot->ops->put(tl->boot, "shm", &addr, sizeof addr);
}

/* The modex's word on `peer`'s segment, into its peer entry. */
static int learn(fmpl_shm_t *s, int peer, seg_addr_t *addr)
{
    fmpl_tl_t *tl = s->tl;
    size_t len = sizeof *addr;
    int rc = tl->boot->ops->get(tl->boot, peer, "shm", addr, &len);
    if (rc != FMPL_SUCCESS || len != sizeof *addr) {
        fmpl_log_err("rank %d published no shared-memory address", peer);
        return rc ? rc : FMPL_ERR_INTERNAL;
    }
    if (addr->len != s->seg_len) {
        fmpl_log_err("rank %d has a different segment layout (the count of fmpl_init "
                     "or FMPL_SHM_FIFO differ between the ranks)", peer);
        return FMPL_ERR_ARG;
    }
    s->peers[peer].pid = addr->pid;
    s->peers[peer].fd = addr->fd;
    return FMPL_SUCCESS;
}

pid_t fmpl_shm_pid(fmpl_shm_t *s, int peer)
{
    seg_addr_t addr;
    if (peer == s->tl->rank)
        return getpid();
    if (!s->peers[peer].pid && learn(s, peer, &addr) != FMPL_SUCCESS)
        return 0;
    return s->peers[peer].pid;
}

/*
 * Whether the ranks on this host agree on the segment layout, checked at
 * start-up without mapping anyone: each rank compares its own with the
 * lowest other rank's here, and that rank with every rank's, so that a
 * mismatch fails fmpl_init on both sides of it.
 */
int fmpl_shm_layout_check(fmpl_shm_t *s)
{
    fmpl_tl_t *tl = s->tl;
    int first = -1;
    for (int r = 0; r < tl->size && first < 0; r++)
        if (r != tl->rank && fmpl_shm_here(tl, r))
            first = r;
    if (first < 0)
        return FMPL_SUCCESS;
    for (int r = first; r < tl->size; r++) {
        seg_addr_t addr;
        if (r == tl->rank || !fmpl_shm_here(tl, r))
            continue;
        int rc = learn(s, r, &addr);
        if (rc != FMPL_SUCCESS)
            return rc;
        if (tl->rank > first)
            break;
    }
    return FMPL_SUCCESS;
}

/*
 * Read 8 bytes of one peer's segment header through its own mapping (the
 * next rank on this host): whether the kernel lets this process attach
 * to another's memory is the process's own matter (Yama ptrace_scope 2
 * or 3, a seccomp filter), the same towards every peer.  Where it
 * refuses, copies go through the FIFO, and remote reads are off for the
 * whole transport: a receiver that could not read would otherwise wait
 * for a sender that relies on it (split copies, pulled queued matrix
 * messages).  A later refusal towards one peer turns CMA off for it
 * alone (shm_put.c).  0 when the read works.
 */
int fmpl_shm_cma_probe(fmpl_shm_t *s)
{
    fmpl_tl_t *tl = s->tl;
    for (int k = 1; k < tl->size; k++) {
        int r = (tl->rank + k) % tl->size;
        seg_addr_t addr;
        if (!fmpl_shm_here(tl, r))
            continue;
        if (learn(s, r, &addr) != FMPL_SUCCESS)
            return -1;
        uint64_t v;
        struct iovec l = { &v, sizeof v }, rm = { (void *)(uintptr_t)addr.self, sizeof v };
        if (process_vm_readv(addr.pid, &l, 1, &rm, 1, 0) == (ssize_t)sizeof v)
            return 0;
        fmpl_log_info("cross-memory attach to rank %d refused (%s); using the "
                      "pipelined path", r, strerror(errno));
        for (int q = 0; q < tl->size; q++)
            s->peers[q].cma_ok = 0;
        return -1;
    }
    return 0;
}

/*
 * Map `peer`'s common part and its block for us (shm.h), the first time
 * we talk to it: a process's address space and start-up grow with the
 * peers it talks to, not with the job.  A peer that has finalised may
 * be gone by then; nobody needs one after the job's last fence, and
 * before it every rank is here.
 */
int fmpl_shm_map(fmpl_shm_t *s, int peer)
{
    fmpl_tl_t *tl = s->tl;
    fmpl_shm_peer_t *p = &s->peers[peer];
    if (p->block || peer == tl->rank)
        return FMPL_SUCCESS;
    if (!fmpl_shm_here(tl, peer)) {
        fmpl_log_err("rank %d is on another host: shared memory cannot reach it", peer);
        return FMPL_ERR_INTERNAL;
    }
    seg_addr_t addr;
    int rc = learn(s, peer, &addr);
    if (rc != FMPL_SUCCESS)
        return rc;
    void *block = NULL;
    uint8_t *common = fmpl_seg_map_range(p->pid, p->fd, 0, s->layout.blocks_off,
                                         s->layout.blocks_off +
                                             (size_t)tl->rank * s->layout.block_len,
                                         s->layout.block_len, &block);
    if (!common && kill(p->pid, 0) != 0 && errno == ESRCH) {
        return fmpl_tl_peer_gone(tl, peer, (int)p->pid);
    }
    if (!common) {
        fmpl_log_err("cannot map the segment of rank %d (pid %d): %s "
                     "(is it on another host? start with FMPL_TRANSPORT=ofi)",
                     peer, (int)p->pid, strerror(errno));
        return FMPL_ERR_SYSTEM;
    }
    const fmpl_shm_seg_hdr_t *h = (const fmpl_shm_seg_hdr_t *)(void *)common;
    if (h->magic != FMPL_SHM_MAGIC || h->rank != peer || h->nidx != tl->nidx ||
        h->fifo_nchunk != s->layout.fifo_nchunk) {
        fmpl_log_err("rank %d's segment does not match (count %d vs %d, FIFOs of "
                     "%u vs %u chunks: FMPL_SHM_FIFO differs?)", peer, h->nidx, tl->nidx,
                     h->fifo_nchunk, s->layout.fifo_nchunk);
        munmap(common, s->layout.blocks_off);
        munmap(block, s->layout.block_len);
        return FMPL_ERR_ARG;
    }
    p->common = common;
    p->block = block;
    p->next = NULL;
    s->active[s->nactive++] = peer;
    s->direct[peer].in = fmpl_shm_line(s, peer, tl->rank, 0);
    return FMPL_SUCCESS;
}

/* our contact words in `owner`'s common part: [size bits], then gen */
static _Atomic uint64_t *contact_words(fmpl_shm_t *s, int owner)
{
    return (_Atomic uint64_t *)(void *)(fmpl_shm_common(s, owner) + s->layout.contact_off);
}

int fmpl_shm_contact(fmpl_shm_t *s, int peer)
{
    fmpl_shm_peer_t *p = &s->peers[peer];
    if (p->contacted)
        return FMPL_SUCCESS;
    int rc = fmpl_shm_mapped(s, peer);
    if (rc != FMPL_SUCCESS)
        return rc;
    int me = s->tl->rank, nwords = (s->tl->size + 63) / 64;
    _Atomic uint64_t *w = contact_words(s, peer);
    atomic_fetch_or_explicit(&w[me / 64], 1ull << (me % 64), memory_order_release);
    atomic_fetch_add_explicit(&w[nwords], 1, memory_order_release);
    p->contacted = 1;
    return FMPL_SUCCESS;
}

int fmpl_shm_contacts(fmpl_shm_t *s)
{
    int nwords = (s->tl->size + 63) / 64, n = 0;
    _Atomic uint64_t *w = contact_words(s, s->tl->rank);
    uint64_t gen = atomic_load_explicit(&w[nwords], memory_order_acquire);
    if (gen == s->contact_seen)
        return 0;
    s->contact_seen = gen;
    for (int k = 0; k < nwords; k++) {
        uint64_t bits = atomic_load_explicit(&w[k], memory_order_acquire);
        while (bits) {
            int r = k * 64 + __builtin_ctzll(bits);
            bits &= bits - 1;
            if (!s->peers[r].block && fmpl_shm_map(s, r) == FMPL_SUCCESS)
                n++;
        }
    }
    return n;
}

void fmpl_shm_seg_destroy(fmpl_shm_t *s)
{
    if (s->peers)
        for (int r = 0; r < s->tl->size; r++)
            if (s->peers[r].block && r != s->tl->rank) {
                munmap(s->peers[r].common, s->layout.blocks_off);
                munmap(s->peers[r].block, s->layout.block_len);
            }
    if (s->seg)
        munmap(s->seg, s->seg_len);
    if (s->fd >= 0)
        close(s->fd);
    s->seg = NULL;
    s->fd = -1;
}
