/*
 * combine.c - ?gsum2d, ?gamx2d, ?gamn2d: element-wise sum, absolute
 * maximum, absolute minimum of an M x N array over a scope.
 *
 * Every process copies its M x N values into a contiguous vector (its own
 * LDA is nobody else's business; a contiguous array without locations is
 * combined in place).  With location arrays (LDIA != -1) an element is
 * (value, distance): distance = scope rank, or with a destination the
 * rank's distance from it, as in the reference; on equal magnitude the
 * smaller distance wins, so the winner's coordinates come back in RA/CA
 * (the operations are in comb_ops.c).
 *
 * Topologies (the reference's patterns, as matrix messages):
 *   ' '              fmpl_allreduce / fmpl_reduce (a user op for locations)
 *   'I' 'D' 'S' 'M'  rings (1, -1, 2, blacs_set WHAT 13 of them) that end
 *                    at the destination; when all get the answer, scope
 *                    rank 0 is the destination and multipath rings bring
 *                    it back
 *   '1'-'9' 'T' 'F'  trees of digit + 1, WHAT 14 + 1, all branches (every
 *                    process sends to the destination); when all get the
 *                    answer, to rank 0 and back down a binary tree
 *   'H'              bidirectional exchange when all get the answer and
 *                    coherence is not asked for, else a binary tree
 *
 * Repeatability and coherence (blacs_set WHAT 15/16) hold for every
 * topology, always: receives name their source, so every process combines
 * in a fixed order; a result broadcast gives every process the same bits;
 * the exchange pairs combine mine-op-theirs and theirs-op-mine, which are
 * bitwise equal because every operation here is exactly commutative (IEEE
 * addition, and maximum/minimum with a total order on ties).  fmpl_allreduce
 * (src/coll/allreduce.c) chooses its algorithm from the size alone,
 * combines in fixed orders and gives every member the same bits, so ' '
 * needs no switch to a tree when repeatability is asked for.
 */
#include <string.h>

#include "blacs.h"

/* ---- topologies, on a vector of n elements of es bytes ---- */

typedef struct comb {
    fmpl_comm_t comm;
    int me, np;
    void *buf, *tmp;               /* my vector, a receive area */
    fmpl_matrix_t v;               /* the vector's shape */
    fmpl_op_t op;
    int n;
} comb_t;

static int send_(comb_t *k, int to) { return fmpl_comm_sendm(k->buf, &k->v, to, k->comm); }

static int take(comb_t *k, int from)
{
    int rc = fmpl_comm_recvm(k->tmp, &k->v, from, k->comm);
    return rc == FMPL_SUCCESS ? fmpl_op_apply(k->op, k->buf, k->tmp, k->n) : rc;
}

/* the result from scope rank 0 to everybody */
static int rebroadcast(comb_t *k, int kind, int arg)
{
    int *kids = blacs_coll_scratch(BLACS_SCRATCH_KIDS, (size_t)k->np * sizeof *kids);
    if (!kids)
        return FMPL_ERR_NOMEM;
    int parent, nk = blacs_bcast_plan(kind, arg, k->np, k->me, 0, &parent, kids);
    int rc = parent >= 0 ? fmpl_comm_recvm(k->buf, &k->v, parent, k->comm) : FMPL_SUCCESS;
    for (int i = 0; i < nk && rc == FMPL_SUCCESS; i++)
        rc = send_(k, kids[i]);
    return rc;
}

/* Tree with nb branches (nb >= np: everybody sends to the destination).
 * In distances from the destination: at level i, a node that is not a
 * multiple of nb sends and is done; the others take from their up to
 * nb - 1 right neighbours at distance i, 2i, ... in that order. */
static int tree(comb_t *k, int dest, int nb)
{
    int all = dest < 0, np = k->np, rc = FMPL_SUCCESS;
    if (all)
        dest = 0;
    if (nb < 2 || nb > np)
        nb = nb < 2 ? 2 : np;
    int d = (k->me - dest + np) % np, right = np - 1 - (np - 1) % nb;
    for (int i = 1; i < np && rc == FMPL_SUCCESS; i *= nb) {
        if (d % nb) {
            rc = send_(k, (dest + (d - d % nb) * i) % np);
            break;
        }
        int nr = d != right ? nb - 1 : (np + i - 1) / i - right - 1;
        d /= nb;
        right /= nb;
        right -= right % nb;
        for (int j = 1; j <= nr && rc == FMPL_SUCCESS; j++)
            rc = take(k, (k->me + j * i) % np);
        if (i > np / nb)
            break;                 /* the next level would overflow */
    }
    if (rc == FMPL_SUCCESS && all)
        rc = rebroadcast(k, BLACS_TOPO_TREE, 2);
    return rc;
}

/* |nr| rings end at the destination, each a pipeline in direction
 * sign(nr); the last ring takes the (np-1) % |nr| extra nodes. */
static int rings(comb_t *k, int dest, int nr)
{
    int all = dest < 0, np = k->np, rc = FMPL_SUCCESS;
    if (all)
        dest = 0;
    int inc = nr > 0 ? 1 : -1;
    nr = nr < 0 ? -nr : nr;
    if (nr > np - 1)
        nr = np - 1;
    if (nr < 1)
        nr = 1;
    int len = (np - 1) / nr;
    if (k->me != dest) {
        int d = inc > 0 ? (dest - k->me + np) % np : (k->me - dest + np) % np;
        int ring = (d - 1) / len < nr ? (d - 1) / len : nr - 1;
        int near = ring * len + 1, far = near + len - 1;
        if (ring == nr - 1)
            far += (np - 1) % nr;
        if (d != far)
            rc = take(k, (k->me - inc + np) % np);
        if (rc == FMPL_SUCCESS)
            rc = send_(k, d == near ? dest : (k->me + inc + np) % np);
    } else {
        int src = (k->me - inc + np) % np;
        for (int r = 0; r < nr && rc == FMPL_SUCCESS; r++) {
            rc = take(k, src);
            src = ((src - inc * len) % np + np) % np;
        }
    }
    if (rc == FMPL_SUCCESS && all)
        rc = rebroadcast(k, BLACS_TOPO_PATHS, nr);
    return rc;
}

/* Bidirectional exchange (everybody gets the answer): the processes
 * beyond the largest power of two np2 hand in their vector first and get
 * the result back at the end; inside, exchange along every bit. */
static int exchange(comb_t *k)
{
    int np = k->np, me = k->me, np2 = 1, rc = FMPL_SUCCESS;
    while (np2 * 2 <= np)
        np2 *= 2;
    if (me >= np2) {
        rc = send_(k, me ^ np2);
        return rc == FMPL_SUCCESS ? fmpl_comm_recvm(k->buf, &k->v, me ^ np2, k->comm) : rc;
    }
    if (me < np - np2)
        rc = take(k, me ^ np2);
    for (int bit = 1; bit < np2 && rc == FMPL_SUCCESS; bit <<= 1) {
        rc = send_(k, me ^ bit);
        if (rc == FMPL_SUCCESS)
            rc = take(k, me ^ bit);
    }
    if (rc == FMPL_SUCCESS && me < np - np2)
        rc = send_(k, me ^ np2);
    return rc;
}

/* ---- the combine ---- */

/* The caller's M x N values (+ my distance) into a contiguous vector. */
static void pack(int type, int loc, int dist, int m, int n, const char *a, size_t lda,
                 char *v)
{
    size_t vs = blacs_esize(type);
    if (!loc) {
        for (int j = 0; j < n; j++)
            memcpy(v + (size_t)j * (size_t)m * vs, a + (size_t)j * lda * vs, (size_t)m * vs);
        return;
    }
    size_t es = blacs_comb_esize(type, 1), off = blacs_comb_locoff(type);
    memset(v, 0, (size_t)m * (size_t)n * es);     /* no undefined padding on the wire */
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++, v += es) {
            memcpy(v, a + ((size_t)j * lda + (size_t)i) * vs, vs);
            memcpy(v + off, &dist, sizeof dist);
        }
}

/* The result back into A, and with locations the winners' coordinates:
 * scope rank (base + distance) % size, base = the destination or 0. */
static void unpack(int type, int loc, const blacs_ctx_t *c, char sc, int size, int base,
                   int m, int n, char *a, size_t lda, int *ra, int *ca, size_t ldia,
                   const char *v)
{
    size_t vs = blacs_esize(type), es = blacs_comb_esize(type, loc);
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++, v += es) {
            memcpy(a + ((size_t)j * lda + (size_t)i) * vs, v, vs);
            if (!loc)
                continue;
            int d, q;
            memcpy(&d, v + blacs_comb_locoff(type), sizeof d);
            q = (base + d) % size;
            size_t h = (size_t)j * ldia + (size_t)i;
            ra[h] = sc == 'R' ? c->myrow : sc == 'C' ? q : q / c->npcol;
            ca[h] = sc == 'R' ? q : sc == 'C' ? c->mycol : q % c->npcol;
        }
}

void blacs_comb(int type, int op, int ictxt, const char *scope, const char *top, int m,
                int n, void *a, int lda, int *ra, int *ca, int ldia, int rdest, int cdest,
                const char *rout)
{
    blacs_ctx_t *c = blacs_ctx(ictxt, rout);
    char sc = blacs_upper(scope), t = blacs_upper(top);
    blacs_scope_t s;
    if (blacs_scope(c, sc, &s, rout))
        return;
    if (!strchr(" IDSMHFT123456789", t) || !t)
        blacs_fatal(ictxt, rout, "Unknown topology '%c'", top ? *top : ' ');
    /* as the reference: either coordinate -1 leaves the answer on all */
    int all = rdest == -1 || cdest == -1, dest = -1;
    if (!all) {
        if ((sc != 'R' && (rdest < 0 || rdest >= c->nprow)) ||
            (sc != 'C' && (cdest < 0 || cdest >= c->npcol)))
            blacs_fatal(ictxt, rout, "Illegal destination {%d,%d} of a %d x %d grid",
                        rdest, cdest, c->nprow, c->npcol);
        dest = sc == 'R' ? cdest : sc == 'C' ? rdest : rdest * c->npcol + cdest;
    }
    if (m <= 0 || n <= 0)
        return;                    /* nothing anywhere: no message */
    if ((long long)m * n > 0x7fffffff)
        blacs_fatal(ictxt, rout, "M x N = %d x %d is too large", m, n);
    int loc = op != BLACS_SUM && ldia != -1, cnt = m * n, np = s.size;
    size_t tlda = lda > m ? (size_t)lda : (size_t)m;
    size_t tldia = ldia > m ? (size_t)ldia : (size_t)m;
    size_t es = blacs_comb_esize(type, loc), bytes = (size_t)cnt * es;
    int dist = all ? s.rank : (s.rank - dest + np) % np;
    fmpl_comm_t comm = blacs_coll_comm(ictxt, rout, c, sc, &s);

    comb_t k = { .comm = comm, .me = s.rank, .np = np, .n = cnt,
                 .v = { .esize = es, .m = (size_t)cnt, .n = 1, .ld = (size_t)cnt,
                        .uplo = 'G', .diag = 'N' } };
    /* a contiguous array without locations is combined in place */
    if (!loc && (tlda == (size_t)m || n == 1)) {
        k.buf = a;
    } else {
        k.buf = blacs_coll_scratch(BLACS_SCRATCH_A, bytes);
        if (!k.buf)
            blacs_fatal(ictxt, rout, "out of memory");
        pack(type, loc, dist, m, n, a, tlda, k.buf);
    }
    int rc = blacs_comb_fmpl_op(op, type, loc, &k.op);
    if (rc != FMPL_SUCCESS)
        blacs_fatal(ictxt, rout, "cannot make the combine's operation: %s", fmpl_strerror(rc));
    if (t != ' ' && np > 1) {
        k.tmp = blacs_coll_scratch(BLACS_SCRATCH_B, bytes);
        if (!k.tmp)
            blacs_fatal(ictxt, rout, "out of memory");
    }
    switch (t) {
    case ' ':
        rc = all ? fmpl_allreduce(k.buf, cnt, k.op, comm, NULL)
                 : fmpl_reduce(k.buf, cnt, k.op, dest, comm, NULL);
        break;
    case 'I': rc = np > 1 ? rings(&k, dest, 1) : rc; break;
    case 'D': rc = np > 1 ? rings(&k, dest, -1) : rc; break;
    case 'S': rc = np > 1 ? rings(&k, dest, 2) : rc; break;
    case 'M': rc = np > 1 ? rings(&k, dest, c->nr_co ? c->nr_co : 1) : rc; break;
    case 'F': rc = np > 1 ? tree(&k, dest, np) : rc; break;
    case 'T': rc = np > 1 ? tree(&k, dest, blacs_tree_branches(c->nb_co)) : rc; break;
    case 'H':
        if (np > 1)
            rc = all && !c->coherent ? exchange(&k) : tree(&k, dest, 2);
        break;
    default: rc = np > 1 ? tree(&k, dest, blacs_tree_branches(t - '0')) : rc; break;
    }
    if (rc != FMPL_SUCCESS)
        blacs_fatal(ictxt, rout, "combine failed: %s (%s)", fmpl_error_name(rc),
                    fmpl_strerror(rc));
    if ((all || s.rank == dest) && (k.buf != a || loc))
        unpack(type, loc, c, sc, np, all ? 0 : dest, m, n, a, tlda, ra, ca, tldia, k.buf);
}
