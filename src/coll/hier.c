/*
 * hier.c - collectives of a communicator that spans hosts: node leaders.
 *
 * Between hosts a message costs tens of microseconds, inside one a fraction
 * of one; so a communicator with members on several hosts, some host
 * holding more than one, runs its barrier, broadcast and allreduce in
 * three steps: inside each host (over shared memory), among one leader per
 * host (the host's first member), inside each host again.  Every host
 * then sends one message where the flat algorithms send one per member.
 *
 * The node and leaders groups are communicator records of their own but
 * share the parent's indices: a pair of processes meets in at most one of
 * the three groups (leaders live on different hosts, a node on one), and
 * every member runs the same steps in the same order, so the per-pair
 * sequence numbers of point-to-point messages and signals stay in step
 * with the parent's own collectives.  Each step sends at most one signal
 * per ordered pair, and a member completes the collective only after
 * every member entered it, which keeps the two-slot signal argument of
 * signal.c valid.  Each group sets up an eager area of its own the first
 * time a step needs one (its layout is by group rank, so it cannot borrow
 * the parent's): up to 8 KiB then travel as one signal, a write and its
 * record, instead of a point-to-point handshake.  The two-slot argument
 * still holds across the areas: signal k of a pair goes to slot k & 1 of
 * whichever area, and signal k - 2 has been read by then.
 *
 * The results stay bitwise the same on every member: the allreduce's
 * value is computed by the leaders (bitwise the same among them) and
 * broadcast inside each host.  The order of operations is fixed by the
 * placement, so a run on the same hosts repeats itself.
 *
 * Only where a host's members are near each other: when the transport
 * reaches them through shared memory (FMPL_TL_CAP_GROUP_NEAR: shm, route),
 * or through PEACH2 (tca: a "host" here is a sub-cluster, tl->group, and
 * the leaders talk over InfiniBand: the hybrid broadcast of Odajima et
 * al. 2015, 5.3).
 * Where every peer costs the same (FMPL_TRANSPORT=ofi across hosts: tcp
 * to the next namespace or to the rank beside us), the three steps are
 * one trip more than the flat algorithms' and the flat ones run.
 *
 * The decision is local: every process knows every rank's host
 * (fmpl_host) and the transport is the same everywhere, so the members
 * agree without a message.
 */
#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"
#include "base/log.h"

void fmpl_hier_free(fmpl_comm_rec_t *c)
{
    fmpl_hier_t *h = c->hier;
    if (h) {
        fmpl_sig_eager_free(&h->node);
        fmpl_sig_eager_free(&h->leaders);
        free(h->node.ranks);
        free(h->leaders.ranks);
        free(h->leader_of_host);
        free(h);
    }
    c->hier = NULL;
    c->hier_state = 0;
}

static fmpl_comm_rec_t group(int *ranks, int n, int me, int idx)
{
    return (fmpl_comm_rec_t){ .used = 1, .size = n, .rank = me, .ranks = ranks, .idx = idx,
                              .hier_state = -1 };
}

/*
 * Whether a latency-bound collective costs less flat: the leaders' way
 * takes log2 g rounds inside a group, log2 h among the leaders and log2 g
 * back; the flat one log2 n rounds, none slower than the far network's.
 * Only where the transport says what a round costs near and far (the
 * members of a comm compute the same from the same numbers): on emulated
 * HA-PACS/TCA, where InfiniBand reaches every node in about 1.3 us and a
 * PEACH2 hop takes about 1.0, the flat way always wins (64 nodes, 8-byte
 * allreduce: 6.60 -> 5.2 us; bench/scale), while across hosts of shared
 * memory the leaders' way saves whole network round trips.
 */
static int small_flat(int n, int hosts, int gmax)
{
    const fmpl_tl_t *tl = &fmpl_g.tl;
    if (tl->near_oneway_ns <= 0 || tl->oneway_ns <= 0)
        return 0;
    double lead = 2.0 * fmpl_log2_up(gmax) * tl->near_oneway_ns +
                  fmpl_log2_up(hosts) * tl->oneway_ns;
    return lead >= fmpl_log2_up(n) * tl->oneway_ns;
}

static int build(fmpl_comm_rec_t *c)
{
    const fmpl_tl_t *tl = &fmpl_g.tl;
    if (!(tl->caps & FMPL_TL_CAP_GROUP_NEAR))
        return FMPL_SUCCESS;       /* flat */
    int nh = tl->ngroups, mine = tl->group[c->ranks[c->rank]];
    fmpl_hier_t *h = calloc(1, sizeof *h);
    int *count = calloc((size_t)nh, sizeof *count);
    if (!h || !count) {
        free(h);
        free(count);
        return FMPL_ERR_NOMEM;
    }
    int hosts = 0, crowded = 0, gmax = 0;
    for (int i = 0; i < c->size; i++) {
        int k = tl->group[c->ranks[i]];
        hosts += count[k] == 0;
        crowded |= ++count[k] > 1;
        gmax = count[k] > gmax ? count[k] : gmax;
    }
    if (hosts < 2 || !crowded) {   /* one host, or one member per host */
        free(h);
        free(count);
        return FMPL_SUCCESS;
    }
    h->node.ranks = malloc((size_t)count[mine] * sizeof(int));
    h->leaders.ranks = malloc((size_t)hosts * sizeof(int));
    h->leader_of_host = malloc((size_t)nh * sizeof(int));
    free(count);
    if (!h->node.ranks || !h->leaders.ranks || !h->leader_of_host) {
        c->hier = h;
        fmpl_hier_free(c);
        return FMPL_ERR_NOMEM;
    }
    int nn = 0, nl = 0, node_me = -1, lead_me = -1;
    for (int k = 0; k < nh; k++)
        h->leader_of_host[k] = -1;
    for (int i = 0; i < c->size; i++) {
        int w = c->ranks[i], k = tl->group[w];
        if (h->leader_of_host[k] < 0) {
            h->leader_of_host[k] = nl;
            if (i == c->rank)
                lead_me = nl;
            h->leaders.ranks[nl++] = w;
        }
        if (k == mine) {
            if (i == c->rank)
                node_me = nn;
            h->node.ranks[nn++] = w;
        }
    }
    h->small_flat = small_flat(c->size, hosts, gmax);
    h->node = group(h->node.ranks, nn, node_me, c->idx);
    h->leaders = group(h->leaders.ranks, nl, lead_me, c->idx);
    c->hier = h;
    c->hier_state = 1;
    fmpl_log_info("coll: %d members on %d hosts, %d on this one: node leaders", c->size, nl,
                  nn);
    return FMPL_SUCCESS;
}

fmpl_hier_t *fmpl_hier_of(fmpl_comm_rec_t *c)
{
    if (c->hier_state == 0) {
        c->hier_state = -1;
        /* out of memory: flat, which needs nothing */
        build(c);
    }
    return c->hier_state > 0 ? c->hier : NULL;
}

fmpl_hier_t *fmpl_hier_small(fmpl_comm_rec_t *c)
{
    fmpl_hier_t *h = fmpl_hier_of(c);
    return h && !h->small_flat ? h : NULL;
}

/* The members tell their leader they are in, the leaders meet, and each
 * leader lets its members go: one signal each way per member. */
int fmpl_hier_barrier(fmpl_comm_rec_t *c, fmpl_hier_t *h)
{
    (void)c;
    fmpl_comm_rec_t *n = &h->node;
    int rc = FMPL_SUCCESS;
    if (n->rank != 0) {
        rc = fmpl_sig_send(n, FMPL_SIG_SYNC, 0, NULL, 0);
        return rc == FMPL_SUCCESS ? fmpl_sig_wait(n, FMPL_SIG_SYNC, 0, NULL, 0) : rc;
    }
    for (int i = 1; i < n->size && rc == FMPL_SUCCESS; i++)
        rc = fmpl_sig_wait(n, FMPL_SIG_SYNC, i, NULL, 0);
    if (rc == FMPL_SUCCESS)
        rc = fmpl_coll_barrier(&h->leaders);
    for (int i = 1; i < n->size && rc == FMPL_SUCCESS; i++)
        rc = fmpl_sig_send(n, FMPL_SIG_SYNC, i, NULL, 0);
    return rc;
}

/* The crossing first, as the hybrid paper's broadcast (Odajima et al.
 * 2015, 5.4):
 * the root hands the message to its host's leader (unless it leads),
 * the leaders broadcast it among themselves, then every host broadcasts
 * it from its leader, all hosts at once.  The slow network is crossed
 * once, at the start, and the near steps of all hosts overlap (the root's
 * host first and the others after it, as before, put the near steps of
 * the root's host before the crossing: log2(host) steps more). */
int fmpl_hier_bcast(fmpl_comm_rec_t *c, fmpl_hier_t *h, void *buf, size_t size, int root)
{
    const fmpl_tl_t *tl = &fmpl_g.tl;
    int rhost = tl->group[c->ranks[root]], mine = tl->group[c->ranks[c->rank]];
    int rc = FMPL_SUCCESS;
    if (rhost == mine && h->node.ranks[0] != c->ranks[root]) {
        int nroot = 0;
        while (h->node.ranks[nroot] != c->ranks[root])
            nroot++;
        if (h->node.rank == nroot)
            rc = fmpl_coll_sendrecv(&h->node, buf, size, 0, NULL, 0, -1, FMPL_CI_A);
        else if (h->node.rank == 0)
            rc = fmpl_coll_sendrecv(&h->node, NULL, 0, -1, buf, size, nroot, FMPL_CI_A);
    }
    if (rc == FMPL_SUCCESS && h->leaders.rank >= 0)
        rc = fmpl_coll_bcast(&h->leaders, buf, size, h->leader_of_host[rhost]);
    /* the root, when it does not lead, receives its own bytes again: one
     * message, and every member of a host runs the same steps */
    if (rc == FMPL_SUCCESS)
        rc = fmpl_coll_bcast(&h->node, buf, size, 0);
    return rc;
}

/* Reduce inside each host to its leader, allreduce among the leaders,
 * broadcast the result inside each host. */
int fmpl_hier_allreduce(fmpl_comm_rec_t *c, fmpl_hier_t *h, fmpl_red_t *v)
{
    (void)c;
    size_t len = (size_t)v->count * v->esize;
    int rc = fmpl_red_work(v);
    if (rc == FMPL_SUCCESS)
        rc = fmpl_coll_reduce(&h->node, v, 0);
    if (rc == FMPL_SUCCESS && h->leaders.rank >= 0)
        rc = fmpl_coll_allreduce(&h->leaders, v);
    if (rc == FMPL_SUCCESS)
        rc = fmpl_coll_bcast(&h->node, v->buf, len, 0);
    return rc;
}
