/*
 * topology.c - what the broadcast and combine topologies share: who sends
 * to whom in a broadcast, the communicator the collectives travel on, and
 * scratch space.
 *
 * The reference BLACS receive broadcasts from "any node"; FMPL has no
 * ANY_SOURCE, so every receiver computes its parent from the root and the
 * topology, and a broadcast is: receive from the parent, send to the
 * children in order.  The parent / children relations are the reference's
 * (tree with nb branches, hypercube, multipath rings, split ring), so each
 * topology moves data as its name says.
 */
#include <stdlib.h>
#include <string.h>

#include "blacs.h"

/* ---- scratch: grown, never shrunk (collectives do not nest) ---- */

void *blacs_coll_scratch(int slot, size_t bytes)
{
    static void *buf[BLACS_SCRATCH_N];
    static size_t cap[BLACS_SCRATCH_N];
    if (bytes > cap[slot]) {
        size_t want = bytes < 4096 ? 4096 : bytes + bytes / 2;
        void *p = realloc(buf[slot], want);
        if (!p)
            return NULL;
        buf[slot] = p;
        cap[slot] = want;
    }
    return buf[slot];
}

/* ---- the communicator of scope 'A' collectives ----
 * Point-to-point messages travel as matrix messages on ctx->all, one FIFO
 * per pair.  A scope-'A' broadcast on the same FIFO could be taken by a
 * blacs_gerv2d (or take a pending point-to-point message), where the
 * reference keeps them apart by message id.  So 'A' collectives run on a
 * duplicate of `all`, made by the first one: every grid process calls
 * every 'A' collective, in the same order, so the collective split is
 * safe there.  An entry is found by `all`'s handle (the same on every
 * member) and the grid's processes: every member finds it or none does,
 * even if a context was freed without blacs_coll_free() and FMPL reused
 * the handle. */

typedef struct dup_entry {
    fmpl_comm_t all, dup;          /* all == FMPL_COMM_NULL: a free entry */
    int np;
    int *pmap;                     /* [np] world ranks, as ctx->pmap */
} dup_entry_t;

static dup_entry_t *dups;
static int ndups;

static dup_entry_t *dup_find(const blacs_ctx_t *c)
{
    int np = c->nprow * c->npcol;
    for (int i = 0; i < ndups; i++)
        if (dups[i].all == c->all && dups[i].np == np &&
            !memcmp(dups[i].pmap, c->pmap, (size_t)np * sizeof *c->pmap))
            return &dups[i];
    return NULL;
}

fmpl_comm_t blacs_coll_comm(int ictxt, const char *rout, const blacs_ctx_t *c, char scope,
                            const blacs_scope_t *s)
{
    if (scope != 'A')
        return s->comm;
    dup_entry_t *e = dup_find(c);
    if (e)
        return e->dup;
    int i = 0;
    while (i < ndups && dups[i].all != FMPL_COMM_NULL)
        i++;
    if (i == ndups) {
        dup_entry_t *d = realloc(dups, (size_t)(ndups + 8) * sizeof *d);
        if (!d)
            blacs_fatal(ictxt, rout, "out of memory");
        for (int k = ndups; k < ndups + 8; k++)
            d[k] = (dup_entry_t){ FMPL_COMM_NULL, FMPL_COMM_NULL, 0, NULL };
        dups = d;
        ndups += 8;
    }
    e = &dups[i];
    e->pmap = malloc((size_t)s->size * sizeof *e->pmap);
    if (!e->pmap)
        blacs_fatal(ictxt, rout, "out of memory");
    int rc = fmpl_comm_split(c->all, 0, s->rank, &e->dup);
    if (rc != FMPL_SUCCESS)
        blacs_fatal(ictxt, rout, "cannot make the scope 'A' communicator: %s",
                    fmpl_strerror(rc));
    memcpy(e->pmap, c->pmap, (size_t)s->size * sizeof *e->pmap);
    e->np = s->size;
    e->all = c->all;
    return e->dup;
}

void blacs_coll_free(const blacs_ctx_t *c)
{
    dup_entry_t *e = dup_find(c);
    if (!e)
        return;
    fmpl_comm_free(&e->dup);       /* every grid process frees its context */
    free(e->pmap);
    *e = (dup_entry_t){ FMPL_COMM_NULL, FMPL_COMM_NULL, 0, NULL };
}

/* ---- broadcast plans ---- */

/* Tree with nb branches (BLACS 'T', '1'-'9'): in distances d from the
 * root, written in base nb, a node's parent is d with its lowest nonzero
 * digit cleared; it sends to the nodes below that digit, highest level
 * first. */
static int tree(int nb, int n, int me, int root, int *parent, int *kids)
{
    int d = (me - root + n) % n, nk = 0, top = 1, level;
    if (nb < 2 || nb > n)          /* more branches than nodes: all from the root */
        nb = nb < 2 ? 2 : n;
    while (top < (n + nb - 1) / nb)    /* the top level: top * nb >= n */
        top *= nb;
    if (d == 0) {
        level = top * nb;
    } else {
        level = top;
        while (d % level)
            level /= nb;
        *parent = (root + d - (d / level) % nb * level) % n;
    }
    for (int i = level / nb; i > 0; i /= nb)
        for (int j = 1; j < nb; j++)
            if (d + j * i < n)
                kids[nk++] = (root + d + j * i) % n;
    return nk;
}

/* Hypercube ('H', n a power of two): relative node r = me ^ root gets the
 * data from r without its highest bit, and sends along every higher bit. */
static int hyper(int n, int me, int root, int *parent, int *kids)
{
    int r = me ^ root, nk = 0, high = 0;
    for (int bit = 1; bit < n; bit <<= 1) {
        if (r & bit)
            high = bit;
        if (bit > r)
            kids[nk++] = me ^ bit;
    }
    if (r)
        *parent = me ^ high;
    return nk;
}

/* Multipath: |np| rings leave the root, increasing (np > 0) or decreasing;
 * the first (n-1) % |np| of them one node longer.  'I', 'D' and 'F' are
 * 1, -1 and n-1 paths. */
static int paths(int np, int n, int me, int root, int *parent, int *kids)
{
    int dir = np > 0 ? 1 : -1, nk = 0;
    np = abs(np);
    if (np > n - 1)
        np = n - 1;
    if (np < 1)
        np = 1;
    int pl = (n - 1) / np, lastlong = (n - 1) % np * (pl + 1);
    int d = dir > 0 ? (me - root + n) % n : (root - me + n) % n;
    if (d == 0) {
        int dist = 1;
        for (; dist < lastlong; dist += pl + 1)
            kids[nk++] = ((root + dir * dist) % n + n) % n;
        for (; dist < n; dist += pl)
            kids[nk++] = ((root + dir * dist) % n + n) % n;
        return nk;
    }
    int start, far;
    if (d <= lastlong) {
        start = (d - 1) / (pl + 1) * (pl + 1) + 1;
        far = start + pl;
    } else {
        start = lastlong + (d - lastlong - 1) / pl * pl + 1;
        far = start + pl - 1;
    }
    *parent = d == start ? root : ((me - dir) % n + n) % n;
    if (d < far)
        kids[nk++] = ((me + dir) % n + n) % n;
    return nk;
}

/* Split ring ('S'): one ring goes right over the nearer half, one left
 * over the rest. */
static int split(int n, int me, int root, int *parent, int *kids)
{
    int d = (me - root + n) % n, right = n / 2, nk = 0;
    if (d == 0) {
        kids[nk++] = (me + 1) % n;
        if (n > 2)
            kids[nk++] = (me - 1 + n) % n;
    } else if (d <= right) {
        *parent = (me - 1 + n) % n;
        if (d < right)
            kids[nk++] = (me + 1) % n;
    } else {
        *parent = (me + 1) % n;
        if (d > right + 1)
            kids[nk++] = (me - 1 + n) % n;
    }
    return nk;
}

int blacs_bcast_plan(int kind, int arg, int n, int me, int root, int *parent, int *kids)
{
    *parent = -1;
    if (n < 2)
        return 0;
    switch (kind) {
    case BLACS_TOPO_HYPER:
        if ((n & (n - 1)) == 0)
            return hyper(n, me, root, parent, kids);
        return tree(2, n, me, root, parent, kids);    /* as the reference */
    case BLACS_TOPO_PATHS:
        return paths(arg, n, me, root, parent, kids);
    case BLACS_TOPO_SPLIT:
        return split(n, me, root, parent, kids);
    default:
        return tree(arg, n, me, root, parent, kids);
    }
}

/* blacs_set WHAT 12/14 keep the user's "number of branches" k; the
 * reference's tree then has k + 1 (so k = 1 is a binary tree), and so do
 * the topologies '1'..'9'. */
int blacs_tree_branches(int k)
{
    return k < 1 ? 2 : k + 1;
}
