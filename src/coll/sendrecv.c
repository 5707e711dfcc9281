/*
 * sendrecv.c - the exchange step most collective algorithms are made of.
 */
#include "coll/coll.h"

/* Receive from `src` and send to `dst` at once; either may be -1.  The
 * receive is posted first so that its header is on its way before we
 * start waiting for the peer's.
 *
 * In an exchange every member of the step sends and receives, so every
 * core copies already: a large send is written whole, not split with its
 * receiver (p2p.h), unless what we receive is far smaller (then the
 * receiver has time to spare).  Split, both halves' hand-overs cost more
 * than they saved: fmpl_allgather of 2 ranks, 128 KiB 19-21 us split
 * against 10.3-11.1 whole, 1 MiB 183-207 against 90-105 (bench/allgather,
 * FMPL_SPLIT_MIN=0, 5 runs each).  Where ranks share cores
 * (hosts.crowded_any) no collective send is split: the receiver's half
 * waits for its turn on a core (bench/reduce, 8 ranks on 2 cores, 128 KiB
 * by the tree: 97-105 us whole against 143-156 split, 4 runs). */
int fmpl_coll_sendrecv(const fmpl_comm_rec_t *c, const void *sbuf, size_t ssize, int dst,
                       void *rbuf, size_t rsize, int src, int k)
{
    fmpl_request_t r[2] = { { .kind = FMPL_REQ_NONE }, { .kind = FMPL_REQ_NONE } };
    int rc = FMPL_SUCCESS;
    if (src >= 0)
        rc = fmpl_coll_irecv(c, rbuf, rsize, src, k, &r[0]);
    if (rc == FMPL_SUCCESS && dst >= 0) {
        rc = fmpl_p2p_send_start(&r[1], sbuf, ssize, c->ranks[dst], fmpl_cidx(c, k));
        if (rc == FMPL_SUCCESS) {
            if ((src >= 0 && rsize >= ssize / 2) || fmpl_g.hosts.crowded_any)
                r[1].flags |= FMPL_RF_WHOLE;
            fmpl_p2p_send_queue(&r[1]);
        }
    }
    int wrc = fmpl_p2p_waitall_raw(r, 2);
    return rc != FMPL_SUCCESS ? rc : wrc;
}

/* A send to a member that receives from many at once (the root of a
 * gather): split, the receiver would copy half of every message itself,
 * one after another, and each sender would wait for its turn.  Whole,
 * the senders copy in parallel and the transport may buffer.  bench/reduce
 * of 2 ranks, 256 KiB-1 MiB: over libfabric's tcp provider 139-295 us
 * whole against 214-446 split (3 interleaved runs); on shm with
 * FMPL_SHM_SPLIT_MAX=4M split took 1.33x as long (5 runs). */
int fmpl_coll_send_whole(const fmpl_comm_rec_t *c, const void *buf, size_t size, int dst,
                         int k)
{
    fmpl_request_t r = { .kind = FMPL_REQ_NONE };
    int rc = fmpl_p2p_send_start(&r, buf, size, c->ranks[dst], fmpl_cidx(c, k));
    if (rc != FMPL_SUCCESS)
        return rc;
    r.flags |= FMPL_RF_WHOLE;
    fmpl_p2p_send_queue(&r);
    return fmpl_p2p_waitall_raw(&r, 1);
}
