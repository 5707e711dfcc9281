/*
 * alltoall.c - fmpl_alltoall, fmpl_alltoallv: a distinct block from every
 * member to every member.
 *
 * Small blocks among up to 16 members: one signal to each member at once,
 * then one from each (as allgather's direct path, with a different block
 * per destination).  Otherwise every member posts its receives straight
 * into the user's blocks and sends its own, pairs in the order of
 * increasing distance (step s: to rank + s, from rank - s), WINDOW steps
 * in flight: every member's step s meets its partners' step s, so no
 * member waits for one that is busy with another, and the receive headers
 * of a window are out before its sends look for them.  A zero-copy write
 * per block, no staging; the window bounds the requests (and matching
 * lines) a member has in flight among thousands of ranks.  A member's own
 * block is copied once its first window (or its signals) is on the way,
 * beside the transfers rather than before them.
 */
#include <stdint.h>
#include <string.h>

#include "coll/coll.h"
#include "p2p/progress.h"

/* steps of the pairwise exchange in flight at once */
#define WINDOW 16
/* up to this many members small blocks go straight to everybody */
#define ALLTOALL_DIRECT_N 16

/* Our own block: a copy, truncated as a message would be. */
static int self_copy(int me, const fmpl_blocks_t *s, const fmpl_blocks_t *r)
{
    size_t len = fmpl_block_len(s, me), room = fmpl_block_len(r, me);
    int rc = len > room ? FMPL_ERR_TRUNCATE : FMPL_SUCCESS;
    if (len > room)
        len = room;
    if (len && fmpl_block_at(r, me) != fmpl_block_at(s, me))
        fmpl_coll_copy(fmpl_block_at(r, me), fmpl_block_at(s, me), len);
    return rc;
}

static int direct(fmpl_comm_rec_t *c, const fmpl_blocks_t *s, const fmpl_blocks_t *r,
                  int *self)
{
    int n = c->size, rc = FMPL_SUCCESS;
    fmpl_tl_comp_t comp = { 0, FMPL_SUCCESS };
    for (int i = 1; i < n && rc == FMPL_SUCCESS; i++) {
        int peer = (c->rank + i) % n;
        rc = fmpl_sig_post(c, FMPL_SIG_SYNC, peer, fmpl_block_at(s, peer),
                           (unsigned)fmpl_block_len(s, peer), &comp);
    }
    *self = self_copy(c->rank, s, r);   /* while the signals travel */
    int wrc = fmpl_wait_comp(&comp, -1);
    if (rc == FMPL_SUCCESS)
        rc = wrc;
    for (int i = 1; i < n && rc == FMPL_SUCCESS; i++) {
        int peer = (c->rank - i + n) % n;
        rc = fmpl_sig_wait(c, FMPL_SIG_SYNC, peer, fmpl_block_at(r, peer),
                           (unsigned)fmpl_block_len(r, peer));
    }
    return rc;
}

static int pairwise(fmpl_comm_rec_t *c, const fmpl_blocks_t *s, const fmpl_blocks_t *r,
                    int *self)
{
    int n = c->size, rc = FMPL_SUCCESS;
    fmpl_request_t q[2 * WINDOW];
    for (int first = 1; first < n && rc == FMPL_SUCCESS; first += WINDOW) {
        int steps = n - first < WINDOW ? n - first : WINDOW, nq = 0;
        for (int k = 0; k < 2 * steps; k++)
            q[k] = (fmpl_request_t){ .kind = FMPL_REQ_NONE };
        for (int k = 0; k < steps && rc == FMPL_SUCCESS; k++) {
            int from = (c->rank - first - k + 2 * n) % n;
            rc = fmpl_coll_irecv(c, fmpl_block_at(r, from), fmpl_block_len(r, from), from,
                                 FMPL_CI_B, &q[nq++]);
        }
        for (int k = 0; k < steps && rc == FMPL_SUCCESS; k++) {
            int to = (c->rank + first + k) % n;
            fmpl_request_t *x = &q[nq++];
            rc = fmpl_p2p_send_start(x, fmpl_block_at(s, to), fmpl_block_len(s, to),
                                     c->ranks[to], fmpl_cidx(c, FMPL_CI_B));
            if (rc == FMPL_SUCCESS) {
                /* every core copies its own share already (sendrecv.c) */
                x->flags |= FMPL_RF_WHOLE;
                fmpl_p2p_send_queue(x);
            }
        }
        if (first == 1)            /* while the first window's blocks travel */
            *self = self_copy(c->rank, s, r);
        int wrc = fmpl_p2p_waitall_raw(q, nq);
        if (rc == FMPL_SUCCESS)
            rc = wrc;
    }
    return rc;
}

int fmpl_coll_alltoall(fmpl_comm_rec_t *c, const fmpl_blocks_t *s, const fmpl_blocks_t *r)
{
    if (c->size == 1)
        return self_copy(c->rank, s, r);
    /* the direct path only for equal blocks: every member must take the
     * same path, and only alltoall's size is known everywhere */
    int wrc, rc = FMPL_SUCCESS;
    if (!s->sizes && c->size <= ALLTOALL_DIRECT_N && fmpl_fanout_ok(c) &&
        fmpl_sig_fits(c, s->size))
        wrc = direct(c, s, r, &rc);
    else
        wrc = pairwise(c, s, r, &rc);
    return wrc != FMPL_SUCCESS ? wrc : rc;
}

int fmpl_alltoall(const void *sendbuf, size_t size, void *recvbuf, fmpl_comm_t comm)
{
    fmpl_comm_rec_t *c;
    int rc = fmpl_coll_begin(comm, &c);
    if (rc != FMPL_SUCCESS)
        return rc;
    size_t total = size * (size_t)c->size;
    if (size && (!sendbuf || !recvbuf))
        return FMPL_ERR_BUFFER;
    if (sendbuf != recvbuf && fmpl_overlap(sendbuf, total, recvbuf, total))
        return FMPL_ERR_BUFFER;
    if (size == 0)
        return FMPL_SUCCESS;
    fmpl_enter();
    if (sendbuf == recvbuf && c->size > 1) {
        /* in place: what we send is copied out first */
        void *copy = fmpl_coll_scratch(FMPL_SCRATCH_XCHG, total);
        if (!copy) {
            fmpl_leave();
            return FMPL_ERR_NOMEM;
        }
        fmpl_coll_copy(copy, sendbuf, total);
        sendbuf = copy;
    }
    fmpl_blocks_t s = { (uint8_t *)sendbuf, size, NULL, NULL };
    fmpl_blocks_t r = { recvbuf, size, NULL, NULL };
    rc = fmpl_coll_alltoall(c, &s, &r);
    fmpl_leave();
    return rc;
}

int fmpl_alltoallv(const void *sendbuf, const size_t sendsizes[], const size_t sdispls[],
                   void *recvbuf, const size_t recvsizes[], const size_t rdispls[],
                   fmpl_comm_t comm)
{
    fmpl_comm_rec_t *c;
    int rc = fmpl_coll_begin(comm, &c);
    if (rc != FMPL_SUCCESS)
        return rc;
    if (!sendsizes || !sdispls || !recvsizes || !rdispls)
        return FMPL_ERR_ARG;
    fmpl_blocks_t s = { (uint8_t *)sendbuf, 0, sendsizes, sdispls };
    fmpl_blocks_t r = { recvbuf, 0, recvsizes, rdispls };
    /* the spans the blocks cover must not overlap (one pass, not n^2) */
    size_t slo = SIZE_MAX, shi = 0, rlo = SIZE_MAX, rhi = 0;
    for (int i = 0; i < c->size; i++) {
        if ((sendsizes[i] && !sendbuf) || (recvsizes[i] && !recvbuf))
            return FMPL_ERR_BUFFER;
        if (sendsizes[i]) {
            slo = sdispls[i] < slo ? sdispls[i] : slo;
            shi = sdispls[i] + sendsizes[i] > shi ? sdispls[i] + sendsizes[i] : shi;
        }
        if (recvsizes[i]) {
            rlo = rdispls[i] < rlo ? rdispls[i] : rlo;
            rhi = rdispls[i] + recvsizes[i] > rhi ? rdispls[i] + recvsizes[i] : rhi;
        }
    }
    if (shi && rhi && fmpl_overlap(s.base + slo, shi - slo, r.base + rlo, rhi - rlo))
        return FMPL_ERR_BUFFER;
    fmpl_enter();
    rc = fmpl_coll_alltoall(c, &s, &r);
    fmpl_leave();
    return rc;
}
