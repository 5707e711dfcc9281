/*
 * bcast.c - fmpl_bcast: the paper's binary-tree broadcast on the cheap
 * point-to-point, any root, any communicator.
 *
 * Tiny messages (256 bytes, up to 16 members): the root writes every copy
 * itself, one round.  Small messages: a binomial tree rooted at `root`
 * (ranks relative to the root), ceil(log2 n) rounds: up to 8 KiB of one-way signals (signal.c),
 * beyond of point-to-point messages whose receives are posted on entry,
 * so a parent's send finds the child's header waiting.
 * Large messages (van de Geijn): a binomial scatter of n pieces, then a
 * ring allgather of the pieces; every process sends about twice the
 * message instead of log2(n) times, and all links copy at once.
 */
#include "coll/coll.h"

/* from this size, and with at least this many members, scatter+allgather */
#define BCAST_LARGE   (512 * 1024)
#define BCAST_LARGE_N 3

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
    for (mask >>= 1; mask > 0 && rc == FMPL_SUCCESS; mask >>= 1)
        if (vr + mask < n)
            rc = fmpl_sig_send(c, FMPL_SIG_FLOW, (vr + mask + root) % n, buf, (unsigned)size);
    return rc;
}

static int binomial(fmpl_comm_rec_t *c, void *buf, size_t size, int root)
{
    int n = c->size, vr = (c->rank - root + n) % n, mask = 1, rc = FMPL_SUCCESS;
    while (mask < n) {
        if (vr & mask) {
            fmpl_request_t r = { .kind = FMPL_REQ_NONE };
            rc = fmpl_coll_irecv(c, buf, size, (vr - mask + root) % n, FMPL_CI_A, &r);
            int wrc = fmpl_p2p_waitall_raw(&r, 1);
            if (rc == FMPL_SUCCESS)
                rc = wrc;
            break;
        }
        mask <<= 1;
    }
    if (rc != FMPL_SUCCESS)
        return rc;
    /* send to the children, largest subtree first */
    fmpl_request_t r[32];
    int nr = 0;
    for (mask >>= 1; mask > 0 && rc == FMPL_SUCCESS; mask >>= 1)
        if (vr + mask < n) {
            r[nr] = (fmpl_request_t){ .kind = FMPL_REQ_NONE };
            rc = fmpl_coll_isend(c, buf, size, (vr + mask + root) % n, FMPL_CI_A, &r[nr++]);
        }
    int wrc = fmpl_p2p_waitall_raw(r, nr);
    return rc != FMPL_SUCCESS ? rc : wrc;
}

/* piece i of n: [i * cs, min((i + 1) * cs, size)) */
static size_t piece_off(size_t cs, size_t size, int i)
{
    size_t o = (size_t)i * cs;
    return o < size ? o : size;
}
static size_t piece_len(size_t cs, size_t size, int i, int count)
{
    return piece_off(cs, size, i + count) - piece_off(cs, size, i);
}

static int scatter_allgather(fmpl_comm_rec_t *c, void *buf, size_t size, int root)
{
    int n = c->size, vr = (c->rank - root + n) % n, mask = 1, rc = FMPL_SUCCESS;
    size_t cs = (size + (size_t)n - 1) / (size_t)n;
    uint8_t *b = buf;
    /* binomial scatter: the subtree of vr owns pieces [vr, vr + its span) */
    while (mask < n) {
        if (vr & mask) {
            int cnt = mask < n - vr ? mask : n - vr;
            fmpl_request_t r = { .kind = FMPL_REQ_NONE };
            rc = fmpl_coll_irecv(c, b + piece_off(cs, size, vr), piece_len(cs, size, vr, cnt),
                                 (vr - mask + root) % n, FMPL_CI_A, &r);
            int wrc = fmpl_p2p_waitall_raw(&r, 1);
            if (rc == FMPL_SUCCESS)
                rc = wrc;
            break;
        }
        mask <<= 1;
    }
    fmpl_request_t r[32];
    int nr = 0;
    for (mask >>= 1; mask > 0 && rc == FMPL_SUCCESS; mask >>= 1)
        if (vr + mask < n) {
            int ch = vr + mask, cnt = mask < n - ch ? mask : n - ch;
            r[nr] = (fmpl_request_t){ .kind = FMPL_REQ_NONE };
            rc = fmpl_coll_isend(c, b + piece_off(cs, size, ch), piece_len(cs, size, ch, cnt),
                                 (ch + root) % n, FMPL_CI_A, &r[nr++]);
        }
    int wrc = fmpl_p2p_waitall_raw(r, nr);
    if (rc == FMPL_SUCCESS)
        rc = wrc;
    /* ring allgather of the pieces, in relative ranks */
    int right = (c->rank + 1) % n, left = (c->rank - 1 + n) % n;
    for (int s = 0; s < n - 1 && rc == FMPL_SUCCESS; s++) {
        int sp = (vr - s + n) % n, rp = (vr - s - 1 + n) % n;
        rc = fmpl_coll_sendrecv(c, b + piece_off(cs, size, sp), piece_len(cs, size, sp, 1),
                                right, b + piece_off(cs, size, rp), piece_len(cs, size, rp, 1),
                                left, FMPL_CI_B);
    }
    return rc;
}

int fmpl_coll_bcast(fmpl_comm_rec_t *c, void *buf, size_t size, int root)
{
    if (c->size == 1 || size == 0)
        return FMPL_SUCCESS;
    if (size >= BCAST_LARGE && c->size >= BCAST_LARGE_N)
        return scatter_allgather(c, buf, size, root);
    if (fmpl_direct_ok(c, size)) {
        /* tiny: the root writes everybody's copy, one round */
        if (c->rank != root)
            return fmpl_sig_wait(c, FMPL_SIG_FLOW, root, buf, (unsigned)size);
        int rc = FMPL_SUCCESS;
        for (int i = 1; i < c->size && rc == FMPL_SUCCESS; i++)
            rc = fmpl_sig_send(c, FMPL_SIG_FLOW, (root + i) % c->size, buf, (unsigned)size);
        return rc;
    }
    if (fmpl_sig_fits(c, size))
        return by_signals(c, buf, size, root);
    return binomial(c, buf, size, root);
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
