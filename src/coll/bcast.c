/*
 * bcast.c - fmpl_bcast: the paper's binary-tree broadcast on the cheap
 * point-to-point, any root, any communicator.
 *
 * Tiny messages (256 bytes, up to 16 members): the root writes every copy
 * itself, one round.  Otherwise a binomial tree rooted at `root` (ranks
 * relative to the root), ceil(log2 n) rounds: up to 8 KiB of one-way
 * signals (signal.c), beyond of point-to-point messages whose receives
 * are posted on entry, so a parent's send finds the child's header
 * waiting; above 64 KiB pipelined in 64 KiB segments.
 *
 * Large messages where each process has a link of its own (a transport
 * that knows its link's rate, tl->byte_ns): scatter + allgather (van de
 * Geijn), when its cost - about twice the message through each link plus
 * 2 log2 n latencies (n + log2 n off powers of two) - is below the tree's, whose root sends the
 * message log2 n times.  Emulated InfiniBand fat tree, 1 MiB: 64 nodes
 * 2102 -> 823 us, 256 nodes 2813 -> 906 us (bench/scale); SimGrid's SMPI
 * with MVAPICH2's selection takes 738 and 1076 us there.  Not on shared
 * memory, where every process moving twice the message loses: 1 MiB over
 * 8 processes on 2 cores took 1.4-2.1 ms, the plain binomial tree
 * 1.3-1.5 ms, the pipelined one 0.7 ms (bench/bcast).  FMPL_BCAST=tree
 * keeps the tree at every size (the papers' algorithm), =scatter takes
 * scatter + allgather for every message past the signals.
 *
 * fmpl_bcast on FMPL_COMM_WORLD takes the transport's broadcast from
 * tl->hw_bcast_min (shm's node-wide slots, where no rank forwards to
 * another: shm_ops.c has the measurements).
 *
 * FMPL_COLL=paper: the hybrid paper's broadcast (Odajima et al. 2015,
 * 5.4, Fig. 7) - the binomial tree of log2 n steps whose first step
 * halves the communicator (across sub-clusters when there are two), each
 * step the whole message, one after the other; no leaders, no segments,
 * no scatter.
 */
#include "coll/coll.h"
#include "p2p/progress.h"

/* above this size the message travels in segments of BCAST_SEG.  64 KiB
 * segments were fastest from 2 to 8 ranks on shm (they ride the pipelined
 * FIFO, which needs no system call): 1 MiB on 8 ranks 0.70 ms against
 * 1.2-1.3 ms with 256 KiB segments and 1.5-1.6 ms with 32 KiB ones. */
#define BCAST_LARGE (64 * 1024)
#define BCAST_SEG   (64 * 1024)

/* Small messages as flow-controlled signals down the same tree: a parent
 * writes each child's copy and moves on, without waiting for the child to
 * post a receive (which, with more processes than cores, costs a trip
 * through the scheduler per level). */
static int by_signals(fmpl_comm_rec_t *c, void *buf, size_t size, int root)
{
    int n = c->size, vr = (c->rank - root + n) % n, mask = 1, rc = FMPL_SUCCESS;
    while (mask < n) {
        if (vr & mask) {
            rc = fmpl_sig_wait(c, FMPL_SIG_FLOW, (vr - mask + root) % n, buf, (unsigned)size);
            break;
        }
        mask <<= 1;
    }
    fmpl_tl_comp_t comp = { 0, FMPL_SUCCESS };
    for (mask >>= 1; mask > 0 && rc == FMPL_SUCCESS; mask >>= 1)
        if (vr + mask < n)
            rc = fmpl_sig_post(c, FMPL_SIG_FLOW, (vr + mask + root) % n, buf, (unsigned)size,
                               &comp);
    int wrc = fmpl_wait_comp(&comp, -1);
    return rc != FMPL_SUCCESS ? rc : wrc;
}

/* Post the receive of segment `s` (indices A and B alternate, so two
 * segments can be on their way from the parent at once). */
static int post_seg(fmpl_comm_rec_t *c, uint8_t *b, size_t size, size_t seg, size_t s,
                    int parent, fmpl_request_t *r)
{
    size_t off = s * seg, len = size - off < seg ? size - off : seg;
    *r = (fmpl_request_t){ .kind = FMPL_REQ_NONE };
    return fmpl_coll_irecv(c, b + off, len, parent, s % 2 ? FMPL_CI_B : FMPL_CI_A, r);
}

/*
 * Binomial tree of point-to-point messages, pipelined: a large message
 * travels in segments, and a process forwards segment s to its children
 * while segment s + 1 arrives.  Every process receives the message once,
 * the least memory traffic a broadcast can make - what counts when
 * processes share cores and memory bandwidth.
 *
 * Where a NIC carries the puts (FMPL_TL_CAP_SHARED_LINK), writes in
 * flight to several children share its link packet by packet and all end
 * late, the largest subtree's as late as the leaf's; so the first segment
 * goes to one child after the other, each once the previous one is
 * complete, and the deepest subtree starts forwarding a child's share of
 * the link time earlier.  Later segments keep the link busy instead
 * (waiting for each would leave it idle for an acknowledgement a time).
 * Emulated HA-PACS/TCA, InfiniBand alone, 16 nodes: 64 KiB 203 -> 86 us,
 * 1 MiB 1204 -> 1147 us; PEACH2, 8 nodes: 64 KiB 120 -> 66 us, 1 MiB
 * 913 -> 937 us (bench/tca_coll).  On shm the same costs: the sender's
 * CPU copies, and waiting keeps it from the next copy (8 ranks, 16 KiB
 * 23 -> 27 us, bench/bcast).  Where a write pays a protocol by its size
 * (tl->seg_min: emulated GPU memory copies writes up to 256 KiB to host
 * memory first) no segment is smaller than that: 16 nodes of emulated
 * HA-PACS/TCA, 2 MiB from GPU memory, 3066 -> 2088 us (bench/tca).
 */
static int binomial(fmpl_comm_rec_t *c, void *buf, size_t size, int root, int whole)
{
    int n = c->size, vr = (c->rank - root + n) % n, parent = -1, child[32], nch = 0, mask;
    for (mask = 1; mask < n; mask <<= 1)
        if (vr & mask) {
            parent = (vr - mask + root) % n;
            break;
        }
    for (mask >>= 1; mask > 0; mask >>= 1)           /* largest subtree first */
        if (vr + mask < n)
            child[nch++] = (vr + mask + root) % n;
    uint8_t *b = buf;
    size_t seg = size > BCAST_LARGE && !whole ? BCAST_SEG : size;
    size_t least = (size_t)fmpl_g.tl.seg_min;
    if (least > seg)               /* as many segments as fit, none under it */
        seg = size / least > 1 ? (size + size / least - 1) / (size / least) : size;
    size_t nseg = (size + seg - 1) / seg;
    fmpl_request_t in[2], out[2][32];
    for (int k = 0; k < 2; k++) {
        in[k] = (fmpl_request_t){ .kind = FMPL_REQ_NONE };
        for (int i = 0; i < 32; i++)
            out[k][i] = (fmpl_request_t){ .kind = FMPL_REQ_NONE };
    }
    int rc = FMPL_SUCCESS, one_by_one = (fmpl_g.tl.caps & FMPL_TL_CAP_SHARED_LINK) != 0;
    for (size_t s = 0; parent >= 0 && s < 2 && s < nseg && rc == FMPL_SUCCESS; s++)
        rc = post_seg(c, b, size, seg, s, parent, &in[s % 2]);
    for (size_t s = 0; s < nseg && rc == FMPL_SUCCESS; s++) {
        size_t off = s * seg, len = size - off < seg ? size - off : seg;
        if (parent >= 0) {
            rc = fmpl_p2p_waitall_raw(&in[s % 2], 1);
            if (rc == FMPL_SUCCESS && s + 2 < nseg)
                rc = post_seg(c, b, size, seg, s + 2, parent, &in[s % 2]);
        }
        /* the index is free again once segment s - 2 has left */
        int wrc = fmpl_p2p_waitall_raw(out[s % 2], nch);
        if (rc == FMPL_SUCCESS)
            rc = wrc;
        for (int i = 0; i < nch && rc == FMPL_SUCCESS; i++) {
            rc = fmpl_coll_isend(c, b + off, len, child[i], s % 2 ? FMPL_CI_B : FMPL_CI_A,
                                 &out[s % 2][i]);
            if (rc == FMPL_SUCCESS && one_by_one && s == 0)
                rc = fmpl_p2p_waitall_raw(&out[0][i], 1);
        }
    }
    /* on an error, the waits end every request still active */
    int wrc = fmpl_p2p_waitall_raw(in, 2);
    if (rc == FMPL_SUCCESS)
        rc = wrc;
    for (int k = 0; k < 2; k++) {
        wrc = fmpl_p2p_waitall_raw(out[k], nch);
        if (rc == FMPL_SUCCESS)
            rc = wrc;
    }
    return rc;
}

/* Relative rank v's share of the message: [v * chunk, (v + k) * chunk)
 * clipped to size, for k consecutive ranks. */
static size_t share(size_t size, size_t chunk, int v, int k, size_t *off)
{
    size_t a = (size_t)v * chunk, b = (size_t)(v + k) * chunk;
    a = a < size ? a : size;
    b = b < size ? b : size;
    *off = a;
    return b - a;
}

/*
 * Scatter down the binomial tree (relative rank v ends with its chunk and
 * sends each child the chunks of the child's subtree, contiguous in the
 * buffer), then an allgather of the chunks: recursive doubling for a
 * power of two (log2 n steps; on an emulated machine each step of every
 * rank is an event, and 1023 ring steps on 1024 nodes cost minutes of
 * this machine's time), a ring otherwise.
 */
static int scatter_allgather(fmpl_comm_rec_t *c, void *buf, size_t size, int root)
{
    int n = c->size, vr = (c->rank - root + n) % n, mask = 1, rc = FMPL_SUCCESS;
    uint8_t *b = buf;
    size_t chunk = (size + (size_t)n - 1) / (size_t)n, off, len;
    while (mask < n) {
        if (vr & mask) {
            len = share(size, chunk, vr, mask < n - vr ? mask : n - vr, &off);
            if (len)
                rc = fmpl_coll_sendrecv(c, NULL, 0, -1, b + off, len, (vr - mask + root) % n,
                                        FMPL_CI_A);
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0 && rc == FMPL_SUCCESS; mask >>= 1) {
        if (vr + mask >= n)
            continue;
        int k = 2 * mask < n - vr ? mask : n - vr - mask;
        len = share(size, chunk, vr + mask, k, &off);
        if (len)
            rc = fmpl_coll_sendrecv(c, b + off, len, (vr + mask + root) % n, NULL, 0, -1,
                                    FMPL_CI_A);
    }
    if ((n & (n - 1)) == 0) {      /* recursive doubling: log2 n steps, not n - 1 */
        for (mask = 1; mask < n && rc == FMPL_SUCCESS; mask <<= 1) {
            int peer = vr ^ mask;
            size_t soff, roff;
            size_t slen = share(size, chunk, vr & ~(mask - 1), mask, &soff);
            size_t rlen = share(size, chunk, peer & ~(mask - 1), mask, &roff);
            rc = fmpl_coll_sendrecv(c, b + soff, slen, slen ? (peer + root) % n : -1, b + roff,
                                    rlen, rlen ? (peer + root) % n : -1, FMPL_CI_B);
        }
        return rc;
    }
    int right = (c->rank + 1) % n, left = (c->rank - 1 + n) % n;
    for (int s = 0; s < n - 1 && rc == FMPL_SUCCESS; s++) {
        size_t soff, roff;
        size_t slen = share(size, chunk, (vr - s + n) % n, 1, &soff);
        size_t rlen = share(size, chunk, (vr - s - 1 + n) % n, 1, &roff);
        rc = fmpl_coll_sendrecv(c, b + soff, slen, slen ? right : -1, b + roff, rlen,
                                rlen ? left : -1, FMPL_CI_B);
    }
    return rc;
}

/* Whether scatter + allgather beats the tree for `size` bytes (above). */
static int scatter_wins(const fmpl_comm_rec_t *c, size_t size)
{
    const fmpl_tl_t *tl = &fmpl_g.tl;
    int n = c->size, rounds = fmpl_log2_up(n);
    if (fmpl_coll_g.bcast_alg != FMPL_BCAST_AUTO)
        return fmpl_coll_g.bcast_alg == FMPL_BCAST_SCATTER;
    if (tl->byte_ns <= 0 || n < 4 || size <= BCAST_LARGE)
        return 0;
    double tree = rounds * ((double)size * tl->byte_ns + tl->oneway_ns);
    int steps = (n & (n - 1)) == 0 ? rounds : n - 1;
    double sa = 2.0 * (double)size * tl->byte_ns * (n - 1) / n + (rounds + steps) * tl->oneway_ns;
    return sa < tree;
}

int fmpl_coll_bcast(fmpl_comm_rec_t *c, void *buf, size_t size, int root)
{
    if (c->size == 1 || size == 0)
        return FMPL_SUCCESS;
    if (fmpl_coll_g.paper)         /* the paper's: the tree, the whole message a step */
        return fmpl_sig_fits(c, size) ? by_signals(c, buf, size, root)
                                      : binomial(c, buf, size, root, 1);
    fmpl_hier_t *h = fmpl_hier_of(c);
    if (h)
        return fmpl_hier_bcast(c, h, buf, size, root);
    if (fmpl_direct_ok(c, size)) {
        /* tiny: the root writes everybody's copy, one round */
        if (c->rank != root)
            return fmpl_sig_wait(c, FMPL_SIG_FLOW, root, buf, (unsigned)size);
        int rc = FMPL_SUCCESS;
        fmpl_tl_comp_t comp = { 0, FMPL_SUCCESS };
        for (int i = 1; i < c->size && rc == FMPL_SUCCESS; i++)
            rc = fmpl_sig_post(c, FMPL_SIG_FLOW, (root + i) % c->size, buf, (unsigned)size,
                               &comp);
        int wrc = fmpl_wait_comp(&comp, -1);
        return rc != FMPL_SUCCESS ? rc : wrc;
    }
    if (fmpl_sig_fits(c, size))
        return by_signals(c, buf, size, root);
    if (scatter_wins(c, size))
        return scatter_allgather(c, buf, size, root);
    return binomial(c, buf, size, root, 0);
}

int fmpl_bcast(void *buf, size_t size, int root, fmpl_comm_t comm)
{
    fmpl_comm_rec_t *c;
    int rc = fmpl_coll_begin(comm, &c);
    if (rc != FMPL_SUCCESS)
        return rc;
    if (root < 0 || root >= c->size)
        return FMPL_ERR_RANK;
    if (!buf && size)
        return FMPL_ERR_BUFFER;
    fmpl_enter();
    /* the whole job, large: the transport's broadcast where it says it
     * wins (tl->hw_bcast_min: shm's node-wide slots), unless an algorithm
     * was asked for (FMPL_BCAST, FMPL_COLL=paper) */
    const fmpl_tl_t *tl = &fmpl_g.tl;
    if (comm == FMPL_COMM_WORLD && c->size > 1 && (tl->caps & FMPL_TL_CAP_HW_BCAST) &&
        tl->hw_bcast_min && size >= tl->hw_bcast_min &&
        fmpl_coll_g.bcast_alg == FMPL_BCAST_AUTO && !fmpl_coll_g.paper)
        rc = fmpl_coll_hw(1, buf, size, root);
    else
        rc = fmpl_coll_bcast(c, buf, size, root);
    fmpl_leave();
    return rc;
}

int fmpl_hbcast(void *buf, size_t size, int root)
{
    if (!fmpl_g.initialized)
        return FMPL_ERR_NOT_INIT;
    if (root < 0 || root >= fmpl_g.boot.size)
        return FMPL_ERR_RANK;
    if (!buf && size)
        return FMPL_ERR_BUFFER;
    fmpl_tl_t *tl = &fmpl_g.tl;
    if (!(tl->caps & FMPL_TL_CAP_HW_BCAST))
        return FMPL_ERR_UNSUPPORTED;
    if (fmpl_g.boot.size == 1 || size == 0)
        return FMPL_SUCCESS;
    fmpl_enter();
    int rc = fmpl_coll_hw(1, buf, size, root);
    fmpl_leave();
    return rc;
}
