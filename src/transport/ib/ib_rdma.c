/*
 * ib_rdma.c - what a node's CPU and its HCA do with a write: RDMA WRITE
 * work requests on reliable-connected queue pairs (Odajima et al. 2015,
 * 4; the InfiniBand architecture's RC service).
 *
 * Every write goes to registered memory named by the same key PEACH2
 * uses (a place in the owner's window: tca registers memory once for
 * both networks); the HCA checks it against the owner's table as it
 * checks an rkey, and the bytes move at once by cross-memory attach.  The
 * engine times the packets through the switch.
 *
 *  - A put is one write; a list put one write a piece, posted as one
 *    list with one doorbell; a block-stride put one write a block (an
 *    RDMA WRITE has one contiguous destination: MPI over InfiniBand packs
 *    instead, Odajima et al. 2015, 4.2, and so do the layers above where
 *    they can).
 *  - A mailbox record is an inline write (the CPU copies it into the work
 *    request) on the peer's queue pair.  InfiniBand executes the requests
 *    of one RC queue pair in order, so a record posted after the data it
 *    announces is placed after it: the order transport.h promises, here
 *    by the specification rather than by a fence.
 *  - Queue pairs: the HCA serves FMPL_IB_QPS send engines, the peer's
 *    (peer mod FMPL_IB_QPS), so what goes to one peer keeps its order
 *    while writes to others overlap.
 *  - A write is complete at its source once its ACK is back (ack_ns after
 *    the data is in the responder's memory): the source may then change.
 *  - With the buffers in GPU memory (tca's FMPL_TCA_MV2), MVAPICH2-GDR's
 *    copies and slow GPUDirect reads come on top of a put (ib_gpu_model.c).
 */
#include <string.h>

#include "fmpl.h"
#include "base/log.h"
#include "transport/ib/ib.h"

static int chan_of(const fmpl_ib_t *t, const fmpl_tl_t *tl, int peer)
{
    return t->chan0 + tl->rank * FMPL_IB_QPS + peer % FMPL_IB_QPS;
}

/* One RDMA write of `len` payload bytes: the HCA starts it `start` after
 * it is posted, `gap` after the write before it on its queue pair. */
static int write_wr(fmpl_ib_t *t, fmpl_tl_t *tl, int peer, uint64_t len, double start_ns,
                    double gap_ns, const fmpl_emu_msg_t *rec, fmpl_tl_comp_t *comp)
{
    fmpl_emu_xfer_t x = {
        .chan = chan_of(t, tl, peer),
        .ready = fmpl_emu_now(t->et->emu),
        .bytes = fmpl_ib_wire(&t->m, len),
        .path = t->route[peer],
        .dst = rec ? peer : -1,
        .comp = comp,
    };
    x.path.start = fmpl_emu_ps(start_ns);
    x.path.gap = fmpl_emu_ps(gap_ns);
    if (rec)
        x.msg = *rec;
    t->wrs++;
    return fmpl_emu_kick(t->et->emu, &x);
}

static uint64_t target(fmpl_ib_t *t, int peer, const fmpl_tl_key_t *key, uint64_t roff,
                       size_t len)
{
    return fmpl_emu_area_check(&t->et->areas, peer, key, roff, len);
}

int fmpl_ib_put(fmpl_tl_t *tl, int peer, const void *src, size_t len,
                const fmpl_tl_key_t *key, uint64_t roff, unsigned flags,
                fmpl_tl_comp_t *comp)
{
    (void)flags;                   /* one path for every put */
    fmpl_tl_iov_t one = { .src = src, .len = len, .roff = roff };
    return fmpl_ib_put_iov(tl, peer, &one, 1, key, comp);
}

int fmpl_ib_put_iov(fmpl_tl_t *tl, int peer, const fmpl_tl_iov_t *iov, int n,
                    const fmpl_tl_key_t *key, fmpl_tl_comp_t *comp)
{
    fmpl_ib_t *t = fmpl_ib_of(tl);
    int wrs = 0;
    uint64_t total = 0;
    for (int i = 0; i < n; i++) {
        if (!iov[i].len)
            continue;
        total += iov[i].len;
        uint64_t at = target(t, peer, key, iov[i].roff, iov[i].len);
        if (!at)
            return FMPL_ERR_ARG;
        int rc = fmpl_emu_tl_write(t->et, peer, iov[i].src, iov[i].len, at);
        if (rc != FMPL_SUCCESS)
            return rc;
        wrs++;
    }
    if (!wrs)
        return FMPL_SUCCESS;
    const ib_model_t *m = &t->m;
    double cpu_ns, hca_ns;
    fmpl_ib_gpu_cost(&t->gpu, m->link_mbps, (double)total, &cpu_ns, &hca_ns);
    fmpl_emu_charge(t->et->emu, fmpl_emu_ps(cpu_ns + m->post_ns + m->wqe_ns * (wrs - 1)));
    t->writes++;
    int k = 0;
    for (int i = 0; i < n; i++) {
        if (!iov[i].len)
            continue;
        int rc = write_wr(t, tl, peer, iov[i].len, k ? 0 : m->hca_ns + hca_ns,
                          k ? m->wr_ns : 0, NULL, comp);
        if (rc != FMPL_SUCCESS)
            return rc;
        k++;
    }
    return FMPL_SUCCESS;
}

int fmpl_ib_put_strided(fmpl_tl_t *tl, int peer, const void *src, size_t blklen, size_t nblk,
                        size_t sstride, const fmpl_tl_key_t *key, uint64_t roff,
                        size_t dstride, fmpl_tl_comp_t *comp)
{
    fmpl_ib_t *t = fmpl_ib_of(tl);
    if (!blklen || !nblk)
        return FMPL_SUCCESS;
    if (nblk > 1 && dstride < blklen)
        return FMPL_ERR_ARG;
    size_t span = (nblk - 1) * dstride + blklen;
    uint64_t at = target(t, peer, key, roff, span);
    if (!at)
        return FMPL_ERR_ARG;
    int rc = fmpl_emu_tl_write_blocks(t->et, peer, src, blklen, nblk, sstride, at, dstride);
    if (rc != FMPL_SUCCESS)
        return rc;
    /* one write a block, posted as one list */
    const ib_model_t *m = &t->m;
    double cpu_ns, hca_ns;
    fmpl_ib_gpu_cost(&t->gpu, m->link_mbps, (double)blklen * (double)nblk, &cpu_ns, &hca_ns);
    fmpl_emu_charge(t->et->emu,
                    fmpl_emu_ps(cpu_ns + m->post_ns + m->wqe_ns * (double)(nblk - 1)));
    t->writes++;
    for (size_t b = 0; b < nblk && rc == FMPL_SUCCESS; b++)
        rc = write_wr(t, tl, peer, blklen, b ? 0 : m->hca_ns + hca_ns, b ? m->wr_ns : 0, NULL,
                      comp);
    return rc;
}

int fmpl_ib_notify(fmpl_tl_t *tl, int peer, int idx, unsigned off, const void *rec,
                   unsigned len, unsigned flags, fmpl_tl_comp_t *comp)
{
    (void)flags;                   /* one queue pair a peer: every record is ordered */
    fmpl_ib_t *t = fmpl_ib_of(tl);
    fmpl_emu_msg_t m;
    int rc = fmpl_emu_tl_stage(t->et, peer, idx, off, rec, len, &m);
    if (rc != FMPL_SUCCESS)
        return rc;
    /* inline: the source is the work request, free at once */
    fmpl_emu_charge(t->et->emu, fmpl_emu_ps(t->m.post_ns));
    t->writes++;
    (void)comp;
    return write_wr(t, tl, peer, len, t->m.hca_ns, 0, &m, NULL);
}
