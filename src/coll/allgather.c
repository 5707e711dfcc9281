/*
 * allgather.c - fmpl_allgather, fmpl_gather, fmpl_scatter.
 *
 * Allgather: small blocks with up to 16 members straight to everybody as
 * one-way signals (signal.c); otherwise as in the hybrid-communication
 * paper: recursive doubling for
 * powers of two (log2 n steps, the block exchanged doubles each step and
 * lands straight in its final place); a ring (n - 1 steps of one block to
 * the right neighbour) for other sizes and for large blocks, where
 * recursive doubling's last step would move half the result over one
 * pair.  Inside one host over shared memory there is no link for that
 * half to crowd: each member copies n - 1 blocks either way, and the
 * fewer steps win (8 members on 2 cores, 128 KiB each: 490 us doubling
 * against 795 us ring; 4 members, 1 MiB: 682 against 765).  Gather and
 * scatter are linear: the root posts all its receives (or sends) at once
 * and every other member does one message.
 */
#include <string.h>

#include "coll/coll.h"
#include "p2p/progress.h"

/* total result size from which the ring is used even for powers of two,
 * for blocks of at least ALLGATHER_RING_BLOCK: smaller ones pay the
 * ring's n - 1 latencies for nothing (1 KiB blocks on 1024 emulated
 * InfiniBand nodes: 1023 steps against 10) */
#define ALLGATHER_RING (1024 * 1024)
#define ALLGATHER_RING_BLOCK (32 * 1024)
/* up to this many members small blocks go straight to everybody */
#define ALLGATHER_DIRECT_N 16

/* Small blocks: one signal to every other member, then one from each;
 * no handshake and no step waits for another. */
static int direct(fmpl_comm_rec_t *c, uint8_t *b, size_t size)
{
    int n = c->size, rc = FMPL_SUCCESS;
    fmpl_tl_comp_t comp = { 0, FMPL_SUCCESS };
    for (int i = 1; i < n && rc == FMPL_SUCCESS; i++)
        rc = fmpl_sig_post(c, FMPL_SIG_SYNC, (c->rank + i) % n, b + (size_t)c->rank * size,
                           (unsigned)size, &comp);
    int wrc = fmpl_wait_comp(&comp, -1);
    if (rc == FMPL_SUCCESS)
        rc = wrc;
    if (rc != FMPL_SUCCESS)
        return rc;
    for (int i = 1; i < n; i++) {
        int peer = (c->rank - i + n) % n;
        int rc = fmpl_sig_wait(c, FMPL_SIG_SYNC, peer, b + (size_t)peer * size, (unsigned)size);
        if (rc != FMPL_SUCCESS)
            return rc;
    }
    return FMPL_SUCCESS;
}

static int doubling(fmpl_comm_rec_t *c, uint8_t *b, size_t size)
{
    for (int mask = 1; mask < c->size; mask <<= 1) {
        int peer = c->rank ^ mask;
        size_t mine = (size_t)(c->rank & ~(mask - 1)) * size;
        size_t theirs = (size_t)(peer & ~(mask - 1)) * size;
        int rc = fmpl_coll_sendrecv(c, b + mine, (size_t)mask * size, peer, b + theirs,
                                    (size_t)mask * size, peer, FMPL_CI_A);
        if (rc != FMPL_SUCCESS)
            return rc;
    }
    return FMPL_SUCCESS;
}

static int ring(fmpl_comm_rec_t *c, uint8_t *b, size_t size)
{
    int n = c->size, right = (c->rank + 1) % n, left = (c->rank - 1 + n) % n;
    for (int s = 0; s < n - 1; s++) {
        int sb = (c->rank - s + n) % n, rb = (c->rank - s - 1 + n) % n;
        int rc = fmpl_coll_sendrecv(c, b + (size_t)sb * size, size, right,
                                    b + (size_t)rb * size, size, left, FMPL_CI_B);
        if (rc != FMPL_SUCCESS)
            return rc;
    }
    return FMPL_SUCCESS;
}

/* Are all members on one host, reached through its memory (shm, or
 * route's shared-memory part), not over a link that puts share? */
static int one_host(const fmpl_comm_rec_t *c)
{
    const fmpl_tl_t *tl = &fmpl_g.tl;
    if ((tl->caps & (FMPL_TL_CAP_GROUP_NEAR | FMPL_TL_CAP_SHARED_LINK)) !=
            FMPL_TL_CAP_GROUP_NEAR || !tl->group)
        return 0;
    for (int i = 1; i < c->size; i++)
        if (tl->group[c->ranks[i]] != tl->group[c->ranks[0]])
            return 0;
    return 1;
}

/* recvbuf holds our block at rank * size already */
int fmpl_coll_allgather(fmpl_comm_rec_t *c, void *recvbuf, size_t size)
{
    int n = c->size;
    if (n == 1 || size == 0)
        return FMPL_SUCCESS;
    if (n <= ALLGATHER_DIRECT_N && fmpl_fanout_ok(c) && fmpl_sig_fits(c, size))
        return direct(c, recvbuf, size);
    if ((n & (n - 1)) == 0 && (size * (size_t)n < ALLGATHER_RING ||
                               size < ALLGATHER_RING_BLOCK || one_host(c)))
        return doubling(c, recvbuf, size);
    return ring(c, recvbuf, size);
}

int fmpl_allgather(const void *sendbuf, size_t size, void *recvbuf, fmpl_comm_t comm)
{
    fmpl_comm_rec_t *c;
    int rc = fmpl_coll_begin(comm, &c);
    if (rc != FMPL_SUCCESS)
        return rc;
    if (size && (!sendbuf || !recvbuf))
        return FMPL_ERR_BUFFER;
    uint8_t *mine = (uint8_t *)recvbuf + (size_t)c->rank * size;
    if (size && sendbuf != mine)
        memmove(mine, sendbuf, size);
    fmpl_enter();
    rc = fmpl_coll_allgather(c, recvbuf, size);
    fmpl_leave();
    return rc;
}

/* the root posts one request per member (in batches), the others one */
static int linear(fmpl_comm_rec_t *c, int root, int to_root, uint8_t *rootbuf,
                  uint8_t *own, size_t size)
{
    if (c->rank != root)
        return to_root ? fmpl_coll_sendrecv(c, own, size, root, NULL, 0, -1, FMPL_CI_B)
                       : fmpl_coll_sendrecv(c, NULL, 0, -1, own, size, root, FMPL_CI_B);
    fmpl_request_t r[64];
    int nr = 0, rc = FMPL_SUCCESS;
    for (int i = 0; i < c->size && rc == FMPL_SUCCESS; i++) {
        if (i == root)
            continue;
        if (nr == 64) {
            rc = fmpl_p2p_waitall_raw(r, nr);
            nr = 0;
            if (rc != FMPL_SUCCESS)
                break;
        }
        r[nr] = (fmpl_request_t){ .kind = FMPL_REQ_NONE };
        rc = to_root ? fmpl_coll_irecv(c, rootbuf + (size_t)i * size, size, i, FMPL_CI_B, &r[nr])
                     : fmpl_coll_isend(c, rootbuf + (size_t)i * size, size, i, FMPL_CI_B, &r[nr]);
        nr++;
    }
    int wrc = fmpl_p2p_waitall_raw(r, nr);
    return rc != FMPL_SUCCESS ? rc : wrc;
}

static int rooted(const void *sendbuf, size_t size, void *recvbuf, int root,
                  fmpl_comm_t comm, int to_root)
{
    fmpl_comm_rec_t *c;
    int rc = fmpl_coll_begin(comm, &c);
    if (rc != FMPL_SUCCESS)
        return rc;
    if (root < 0 || root >= c->size)
        return FMPL_ERR_RANK;
    /* gather: everybody sends, the root's recvbuf holds n blocks;
     * scatter: the root's sendbuf holds n blocks, everybody receives */
    const void *whole = to_root ? recvbuf : sendbuf;
    const void *own = to_root ? sendbuf : recvbuf;
    if (size && (!own || (c->rank == root && !whole)))
        return FMPL_ERR_BUFFER;
    if (c->rank == root && size) {
        uint8_t *slot = (uint8_t *)whole + (size_t)root * size;
        if (slot != own)
            memmove(to_root ? slot : (uint8_t *)own, to_root ? own : slot, size);
    }
    if (c->size == 1 || size == 0)
        return FMPL_SUCCESS;
    fmpl_enter();
    rc = linear(c, root, to_root, (uint8_t *)whole, (uint8_t *)own, size);
    fmpl_leave();
    return rc;
}

int fmpl_gather(const void *sendbuf, size_t size, void *recvbuf, int root, fmpl_comm_t comm)
{
    return rooted(sendbuf, size, recvbuf, root, comm, 1);
}

int fmpl_scatter(const void *sendbuf, size_t size, void *recvbuf, int root, fmpl_comm_t comm)
{
    return rooted(sendbuf, size, recvbuf, root, comm, 0);
}
