/*
 * shm_put.c - write local bytes into a peer's registered memory.
 *
 * The cheapest path that is correct for the target:
 *   - to ourselves, or into a peer's fmpl_alloc_mem memory (mapped here):
 *     one memcpy, no system call;
 *   - into a peer's ordinary memory, large, while the ranks have a core
 *     each: streamed through the FIFO (shm.h: both cores copy, each
 *     byte once, and the two copies overlap);
 *   - into a peer's ordinary memory, large on a crowded machine (or the
 *     sender's part of a split, FMPL_TL_PUT_SPLIT): one
 *     process_vm_writev (Linux cross-memory attach), the single copy MPI
 *     needs a rendezvous for, done by the sender alone;
 *   - otherwise (medium, or CMA refused): the pipelined FIFO.
 * A get (remote read) is a memcpy or one process_vm_readv; without CMA it
 * is unsupported and the caller lets the sender write instead.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/uio.h>

#include "fmpl.h"
#include "base/log.h"
#include "transport/seg.h"
#include "transport/shm/shm.h"
#include "transport/wait.h"

int fmpl_shm_put(fmpl_tl_t *tl, int peer, const void *src, size_t len,
                 const fmpl_tl_key_t *key, uint64_t roff, unsigned flags,
                 fmpl_tl_comp_t *comp)
{
    fmpl_shm_t *s = fmpl_shm_of(tl);
    if (len == 0)
        return FMPL_SUCCESS;

    uint8_t *dst = peer == tl->rank ? fmpl_shm_key_local(s, key, roff, len)
                                    : fmpl_shm_key_remote(s, peer, key, roff, len);
    if (dst) {
        memcpy(dst, src, len);
        return FMPL_SUCCESS;
    }
    if ((key->kind & 0xff) != FMPL_SHM_KEY_USER) {
        fmpl_log_err("cannot map the registered memory of rank %d", peer);
        return FMPL_ERR_SYSTEM;
    }

    /* (the sender's part of a split goes by CMA at any size: through the
     * FIFO it would wait for the receiver to read its own part first) */
    fmpl_shm_peer_t *p = &s->peers[peer];
    int stream = !fmpl_shm_streams(s, len) || (flags & FMPL_TL_PUT_SPLIT)
                     ? FMPL_SHM_STREAM_NO
                 : s->nt_min && len >= s->nt_min ? FMPL_SHM_STREAM_NT   /* shm_copy.c */
                                                 : FMPL_SHM_STREAM_YES;
    if (!stream && s->cma && p->cma_ok && (len > s->eager || (flags & FMPL_TL_PUT_SPLIT)) &&
        !p->pend) {
        int e = fmpl_cma_copy(fmpl_shm_pid(s, peer), (uint8_t *)src, len, key->addr + roff, 1);
        if (e == 0)
            return FMPL_SUCCESS;
        if (e == -ESRCH) {
            return fmpl_tl_peer_gone(tl, peer, (int)fmpl_shm_pid(s, peer));
        }
        if (e == -EFAULT) {
            fmpl_log_err("bad receive buffer address from rank %d", peer);
            return FMPL_ERR_SYSTEM;
        }
        /* EPERM (ptrace policy), ENOSYS (no CMA): use the FIFO from now on */
        fmpl_log_info("cross-memory attach to rank %d refused (%s); using the "
                      "pipelined path", peer, strerror(-e));
        p->cma_ok = 0;
    }
    return fmpl_shm_fifo_put(s, peer, src, len, key, roff, stream, comp);
}

/*
 * A put and its record.  Into a peer's ordinary memory through the FIFO
 * (a medium message, the path DATA takes below the CMA threshold), both
 * go in one chunk: the receiver copies the data out and then writes the
 * record, as it would for the two chunks it replaces.  Anything else (a
 * mapped target, CMA, a queue before it, a full FIFO) is a put and a
 * notify.
 */
int fmpl_shm_put_notify(fmpl_tl_t *tl, int peer, const void *src, size_t len,
                        const fmpl_tl_key_t *key, uint64_t roff, int idx, unsigned off,
                        const void *rec, unsigned reclen, fmpl_tl_comp_t *comp)
{
    fmpl_shm_t *s = fmpl_shm_of(tl);
    fmpl_shm_peer_t *p = &s->peers[peer];
    if (peer != tl->rank && len && (key->kind & 0xff) == FMPL_SHM_KEY_USER &&
        !(s->cma && p->cma_ok && len > s->eager) && !fmpl_shm_streams(s, len) &&
        fmpl_shm_fifo_put_notify(s, peer, src, len, key->addr + roff, idx, off, rec, reclen))
        return FMPL_SUCCESS;
    return fmpl_tl_put_notify_by_parts(tl, peer, src, len, key, roff, idx, off, rec, reclen,
                                       comp);
}

int fmpl_shm_get(fmpl_tl_t *tl, int peer, void *dst, size_t len, const fmpl_tl_key_t *key,
                 uint64_t roff)
{
    fmpl_shm_t *s = fmpl_shm_of(tl);
    if (len == 0)
        return FMPL_SUCCESS;
    uint8_t *src = peer == tl->rank ? fmpl_shm_key_local(s, key, roff, len)
                                    : fmpl_shm_key_remote(s, peer, key, roff, len);
    if (src) {
        memcpy(dst, src, len);
        return FMPL_SUCCESS;
    }
    fmpl_shm_peer_t *p = &s->peers[peer];
    if ((key->kind & 0xff) != FMPL_SHM_KEY_USER || !s->cma || !p->cma_ok)
        return FMPL_ERR_UNSUPPORTED;
    int e = fmpl_cma_copy(fmpl_shm_pid(s, peer), dst, len, key->addr + roff, 0);
    if (e == 0)
        return FMPL_SUCCESS;
    if (e == -ESRCH)
        return FMPL_ERR_PEER;
    if (e != -EFAULT) {
        fmpl_log_info("cross-memory read from rank %d refused (%s)", peer, strerror(-e));
        p->cma_ok = 0;
    }
    return FMPL_ERR_UNSUPPORTED;
}

/*
 * Block-stride put (a 2-D sub-array, e.g. a halo face): nblk blocks of
 * blklen bytes, sstride apart here and dstride apart at the target.  No
 * packing: into mapped memory one memcpy per block; into a peer's ordinary
 * memory, when large and made of long blocks, process_vm_writev with one
 * iovec pair per block (IOV_MAX at a time); otherwise block by block
 * through the FIFO.
 */
/* The kernel pins pages per iovec: about 1 us per block, measured with a
 * 66 x 1 KiB Himeno face (70 us by CMA, 20 us through the FIFO).  Below
 * this block length the FIFO wins. */
#define CMA_BLOCK_MIN (16 * 1024)
int fmpl_shm_put_strided(fmpl_tl_t *tl, int peer, const void *src, size_t blklen,
                         size_t nblk, size_t sstride, const fmpl_tl_key_t *key,
                         uint64_t roff, size_t dstride, fmpl_tl_comp_t *comp)
{
    fmpl_shm_t *s = fmpl_shm_of(tl);
    const uint8_t *sp = src;
    if (!blklen || !nblk)
        return FMPL_SUCCESS;
    /* the span the blocks cover at the target (a wrapped one is refused) */
    uint64_t span = (nblk - 1) > (UINT64_MAX - blklen) / (dstride ? dstride : 1)
                        ? UINT64_MAX : (uint64_t)(nblk - 1) * dstride + blklen;
    uint8_t *dst = peer == tl->rank ? fmpl_shm_key_local(s, key, roff, span)
                                    : fmpl_shm_key_remote(s, peer, key, roff, span);
    if (dst) {
        for (size_t b = 0; b < nblk; b++)
            memcpy(dst + b * dstride, sp + b * sstride, blklen);
        return FMPL_SUCCESS;
    }
    fmpl_shm_peer_t *p = &s->peers[peer];
    if ((key->kind & 0xff) == FMPL_SHM_KEY_USER && s->cma && p->cma_ok &&
        blklen * nblk > s->eager && blklen >= CMA_BLOCK_MIN && !p->pend) {
        size_t b = 0;
        int e = fmpl_cma_write_blocks(fmpl_shm_pid(s, peer), sp, blklen, nblk, sstride, key->addr + roff,
                                      dstride, &b);
        if (e == -ESRCH)
            return FMPL_ERR_PEER;
        if (e == -EFAULT)
            return FMPL_ERR_SYSTEM;
        if (e)
            p->cma_ok = 0;                 /* refused: the FIFO from now on */
        if (b == nblk)
            return FMPL_SUCCESS;
        sp += b * sstride;
        roff += b * dstride;
        nblk -= b;
    }
    return fmpl_tl_put_strided_by_put(tl, peer, sp, blklen, nblk, sstride, key, roff, dstride,
                                      comp);
}

