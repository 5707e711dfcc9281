/*
 * gather.c - fmpl_gather, fmpl_scatter and their v-variants: one root and
 * one block per member.  Linear: the root posts all its receives (or
 * sends) at once, in batches, straight from and into the user's blocks,
 * and every other member does one message.
 */
#include <string.h>

#include "coll/coll.h"

/* requests the root has in flight at once */
#define LINEAR_BATCH 64

int fmpl_coll_linear(fmpl_comm_rec_t *c, int root, int to_root, const fmpl_blocks_t *whole,
                     uint8_t *own, size_t ownlen)
{
    if (c->rank != root)
        return to_root ? fmpl_coll_sendrecv(c, own, ownlen, root, NULL, 0, -1, FMPL_CI_B)
                       : fmpl_coll_sendrecv(c, NULL, 0, -1, own, ownlen, root, FMPL_CI_B);
    fmpl_request_t r[LINEAR_BATCH];
    int nr = 0, rc = FMPL_SUCCESS;
    for (int i = 0; i < c->size && rc == FMPL_SUCCESS; i++) {
        if (i == root)
            continue;
        if (nr == LINEAR_BATCH) {
            rc = fmpl_p2p_waitall_raw(r, nr);
            nr = 0;
            if (rc != FMPL_SUCCESS)
                break;
        }
        r[nr] = (fmpl_request_t){ .kind = FMPL_REQ_NONE };
        uint8_t *blk = fmpl_block_at(whole, i);
        size_t len = fmpl_block_len(whole, i);
        rc = to_root ? fmpl_coll_irecv(c, blk, len, i, FMPL_CI_B, &r[nr])
                     : fmpl_coll_isend(c, blk, len, i, FMPL_CI_B, &r[nr]);
        nr++;
    }
    int wrc = fmpl_p2p_waitall_raw(r, nr);
    return rc != FMPL_SUCCESS ? rc : wrc;
}

/* gather: everybody sends `own`, the root's `whole` receives n blocks;
 * scatter: the root's `whole` holds n blocks, everybody receives `own`.
 * `blocks` describes whole; its sizes[]/displs[] (v-variants) are read at
 * root only. */
static int rooted(fmpl_comm_t comm, int root, int to_root, int v, const void *whole_p,
                  const fmpl_blocks_t *blocks, const void *own_p, size_t ownlen)
{
    fmpl_comm_rec_t *c;
    int rc = fmpl_coll_begin(comm, &c);
    if (rc != FMPL_SUCCESS)
        return rc;
    if (root < 0 || root >= c->size)
        return FMPL_ERR_RANK;
    fmpl_blocks_t whole = *blocks;
    whole.base = (uint8_t *)whole_p;
    uint8_t *own = (uint8_t *)own_p;
    size_t most = 0;               /* the largest of the blocks `whole` holds */
    if (c->rank == root) {
        if (v && (!whole.sizes || !whole.displs))
            return FMPL_ERR_ARG;
        for (int i = 0; i < c->size; i++)
            if (fmpl_block_len(&whole, i) > most)
                most = fmpl_block_len(&whole, i);
        if (most && !whole.base)
            return FMPL_ERR_BUFFER;
    }
    if (ownlen && !own)
        return FMPL_ERR_BUFFER;
    int self_rc = FMPL_SUCCESS;
    if (c->rank == root) {
        /* our own block, as a message to ourselves would go: a longer one
         * is truncated, and the others' blocks still move */
        uint8_t *slot = fmpl_block_at(&whole, root);
        size_t slen = fmpl_block_len(&whole, root);
        size_t len = to_root ? ownlen : slen, room = to_root ? slen : ownlen;
        if (len > room) {
            self_rc = FMPL_ERR_TRUNCATE;
            len = room;
        }
        if (len && slot != own)
            memmove(to_root ? slot : own, to_root ? own : slot, len);
    }
    /* plain gather and scatter of 0 bytes: every member knows there is
     * nothing to move; a v-variant's member does not know the others' */
    if (c->size == 1 || (!v && ownlen == 0))
        return self_rc;
    fmpl_enter();
    rc = fmpl_coll_linear(c, root, to_root, &whole, own, ownlen);
    fmpl_leave();
    return rc != FMPL_SUCCESS ? rc : self_rc;
}

int fmpl_gather(const void *sendbuf, size_t size, void *recvbuf, int root, fmpl_comm_t comm)
{
    fmpl_blocks_t b = { NULL, size, NULL, NULL };
    return rooted(comm, root, 1, 0, recvbuf, &b, sendbuf, size);
}

int fmpl_scatter(const void *sendbuf, size_t size, void *recvbuf, int root, fmpl_comm_t comm)
{
    fmpl_blocks_t b = { NULL, size, NULL, NULL };
    return rooted(comm, root, 0, 0, sendbuf, &b, recvbuf, size);
}

int fmpl_gatherv(const void *sendbuf, size_t size, void *recvbuf, const size_t sizes[],
                 const size_t displs[], int root, fmpl_comm_t comm)
{
    fmpl_blocks_t b = { NULL, 0, sizes, displs };
    return rooted(comm, root, 1, 1, recvbuf, &b, sendbuf, size);
}

int fmpl_scatterv(const void *sendbuf, const size_t sizes[], const size_t displs[],
                  void *recvbuf, size_t size, int root, fmpl_comm_t comm)
{
    fmpl_blocks_t b = { NULL, 0, sizes, displs };
    return rooted(comm, root, 0, 1, sendbuf, &b, recvbuf, size);
}
