/*
 * allgather.c - fmpl_allgather, fmpl_allgatherv: every member's block to
 * every member.
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
 * against 795 us ring; 4 members, 1 MiB: 682 against 765).  Blocks of
 * different sizes (allgatherv) go by signals or by the ring: doubling's
 * ranges of blocks are not contiguous in the user's layout.
 * FMPL_COLL=paper: recursive doubling at every size (Odajima et al. 2015,
 * 5.5, Fig. 8), the partner nearest first, so that with two sub-clusters
 * only the last, largest step crosses them.
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
static int direct(fmpl_comm_rec_t *c, const fmpl_blocks_t *b)
{
    int n = c->size, rc = FMPL_SUCCESS;
    fmpl_tl_comp_t comp = { 0, FMPL_SUCCESS };
    for (int i = 1; i < n && rc == FMPL_SUCCESS; i++)
        rc = fmpl_sig_post(c, FMPL_SIG_SYNC, (c->rank + i) % n, fmpl_block_at(b, c->rank),
                           (unsigned)fmpl_block_len(b, c->rank), &comp);
    int wrc = fmpl_wait_comp(&comp, -1);
    if (rc == FMPL_SUCCESS)
        rc = wrc;
    if (rc != FMPL_SUCCESS)
        return rc;
    for (int i = 1; i < n; i++) {
        int peer = (c->rank - i + n) % n;
        int rc = fmpl_sig_wait(c, FMPL_SIG_SYNC, peer, fmpl_block_at(b, peer),
                               (unsigned)fmpl_block_len(b, peer));
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

static int ring(fmpl_comm_rec_t *c, const fmpl_blocks_t *b)
{
    int n = c->size, right = (c->rank + 1) % n, left = (c->rank - 1 + n) % n;
    for (int s = 0; s < n - 1; s++) {
        int sb = (c->rank - s + n) % n, rb = (c->rank - s - 1 + n) % n;
        int rc = fmpl_coll_sendrecv(c, fmpl_block_at(b, sb), fmpl_block_len(b, sb), right,
                                    fmpl_block_at(b, rb), fmpl_block_len(b, rb), left,
                                    FMPL_CI_B);
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
    fmpl_blocks_t b = { recvbuf, size, NULL, NULL };
    if (n == 1 || size == 0)
        return FMPL_SUCCESS;
    if (fmpl_coll_g.paper)
        return (n & (n - 1)) == 0 ? doubling(c, recvbuf, size) : ring(c, &b);
    if (n <= ALLGATHER_DIRECT_N && fmpl_fanout_ok(c) && fmpl_sig_fits(c, size))
        return direct(c, &b);
    /* blocks a write pays a protocol for (tl->seg_min) go in doubling's
     * log2 n larger writes, not the ring's n - 1 */
    if ((n & (n - 1)) == 0 && (size * (size_t)n < ALLGATHER_RING ||
                               size < ALLGATHER_RING_BLOCK || size < fmpl_g.tl.seg_min ||
                               one_host(c)))
        return doubling(c, recvbuf, size);
    return ring(c, &b);
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

int fmpl_allgatherv(const void *sendbuf, size_t size, void *recvbuf, const size_t sizes[],
                    const size_t displs[], fmpl_comm_t comm)
{
    fmpl_comm_rec_t *c;
    int rc = fmpl_coll_begin(comm, &c);
    if (rc != FMPL_SUCCESS)
        return rc;
    if (!sizes || !displs)
        return FMPL_ERR_ARG;
    /* sizes[] is the same everywhere: every member finds the same largest
     * block and so takes the same path */
    size_t most = 0;
    for (int i = 0; i < c->size; i++)
        most = sizes[i] > most ? sizes[i] : most;
    if (size != sizes[c->rank])
        return FMPL_ERR_ARG;
    if (most && !recvbuf)
        return FMPL_ERR_BUFFER;
    if (size && !sendbuf)
        return FMPL_ERR_BUFFER;
    fmpl_blocks_t b = { recvbuf, 0, sizes, displs };
    uint8_t *mine = fmpl_block_at(&b, c->rank);
    if (size && sendbuf != mine)
        memmove(mine, sendbuf, size);
    if (c->size == 1 || most == 0)
        return FMPL_SUCCESS;
    fmpl_enter();
    if (c->size <= ALLGATHER_DIRECT_N && fmpl_fanout_ok(c) && fmpl_sig_fits(c, most))
        rc = direct(c, &b);
    else
        rc = ring(c, &b);
    fmpl_leave();
    return rc;
}
