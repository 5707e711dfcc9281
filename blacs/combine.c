/*
 * combine.c - ?gsum2d, ?gamx2d, ?gamn2d: element-wise sum, absolute
 * maximum, absolute minimum of an M x N array over a scope.
 *
 * Every process copies its M x N values into a contiguous vector (its own
 * LDA is nobody else's business; a contiguous array without locations is
 * combined in place).  With location arrays (LDIA != -1) an element is
 * (value, distance): distance = scope rank, or with a destination the
 * rank's distance from it, as in the reference; on equal magnitude the
 * smaller distance wins, so the winner's coordinates come back in RA/CA.
 *
 * Topologies:
 *   ' '            fmpl_allreduce / fmpl_reduce (a user op for locations)
 *   'I' 'D' 'S' 'M'  rings (1, -1, 2, blacs_set WHAT 13 of them) towards the
 *                  destination, then multipath back when all get it
 *   '1'-'9' 'T' 'F'  trees (digit + 1, WHAT 14 + 1, everyone-to-one)
 *   'H'            bidirectional exchange when all get the answer and
 *                  coherence is not asked for, else a binary tree
 * then a binary tree broadcast from scope rank 0 when everyone gets it.
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
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "blacs.h"

typedef void (*vv_fn)(void *inout, const void *in, int n);

/* ---- element operations ---- */

static void isum(void *io_, const void *in_, int n)
{
    int *io = io_;
    const int *in = in_;
    for (int i = 0; i < n; i++)    /* wraps like the hardware, without UB */
        io[i] = (int)((unsigned)io[i] + (unsigned)in[i]);
}
#define SUM(name, T)                                                           \
    static void name(void *io_, const void *in_, int n)                        \
    {                                                                          \
        T *io = io_;                                                           \
        const T *in = in_;                                                     \
        for (int i = 0; i < n; i++)                                            \
            io[i] += in[i];                                                    \
    }
SUM(ssum, float)
SUM(dsum, double)
static void csum(void *io, const void *in, int n) { ssum(io, in, 2 * n); }
static void zsum(void *io, const void *in, int n) { dsum(io, in, 2 * n); }

static long long iabs_(int x) { return x < 0 ? -(long long)x : x; }

/* Values only: ties of magnitude (3 and -3, 0 and -0) go to the greater
 * value, +0 before -0, so the order of combination never shows. */
#define AFTER(x, y) ((x) > (y) || ((x) == (y) && !signbit(x) && signbit(y)))
#define IAFTER(x, y) ((x) > (y))
#define VAL(name, T, M, MAG, BETTER, TIE)                                      \
    static void name(void *io_, const void *in_, int n)                        \
    {                                                                          \
        T *io = io_;                                                           \
        const T *in = in_;                                                     \
        for (int i = 0; i < n; i++) {                                          \
            M a = MAG(in[i]), b = MAG(io[i]);                                  \
            if (a BETTER b || (a == b && TIE(in[i], io[i])))                   \
                io[i] = in[i];                                                 \
        }                                                                      \
    }
#define CVAL(name, T, MAG, BETTER)                                             \
    static void name(void *io_, const void *in_, int n)                        \
    {                                                                          \
        T *io = io_;                                                           \
        const T *in = in_;                                                     \
        for (int i = 0; i < 2 * n; i += 2) {                                   \
            T a = MAG(in[i]) + MAG(in[i + 1]), b = MAG(io[i]) + MAG(io[i + 1]); \
            if (a BETTER b ||                                                  \
                (a == b && (AFTER(in[i], io[i]) ||                             \
                            (in[i] == io[i] && signbit(in[i]) == signbit(io[i]) && \
                             AFTER(in[i + 1], io[i + 1]))))) {                 \
                io[i] = in[i];                                                 \
                io[i + 1] = in[i + 1];                                         \
            }                                                                  \
        }                                                                      \
    }
VAL(iamx, int, long long, iabs_, >, IAFTER)
VAL(samx, float, float, fabsf, >, AFTER)
VAL(damx, double, double, fabs, >, AFTER)
CVAL(camx, float, fabsf, >)
CVAL(zamx, double, fabs, >)
VAL(iamn, int, long long, iabs_, <, IAFTER)
VAL(samn, float, float, fabsf, <, AFTER)
VAL(damn, double, double, fabs, <, AFTER)
CVAL(camn, float, fabsf, <)
CVAL(zamn, double, fabs, <)

/* With locations: (value, distance); equal magnitudes go to the smaller
 * distance (the reference's rule; distances differ, so it commutes). */
typedef struct { int v; int d; } li_t;
typedef struct { float v; int d; } ls_t;
typedef struct { double v; int d; } ld_t;
typedef struct { float re, im; int d; } lc_t;
typedef struct { double re, im; int d; } lz_t;
#define LOC(name, ST, M, MAG, BETTER)                                          \
    static void name(void *io_, const void *in_, int n)                        \
    {                                                                          \
        ST *io = io_;                                                          \
        const ST *in = in_;                                                    \
        for (int i = 0; i < n; i++) {                                          \
            M a = MAG(in[i].v), b = MAG(io[i].v);                              \
            if (a BETTER b || (a == b && in[i].d < io[i].d))                   \
                io[i] = in[i];                                                 \
        }                                                                      \
    }
#define CLOC(name, ST, T, MAG, BETTER)                                         \
    static void name(void *io_, const void *in_, int n)                        \
    {                                                                          \
        ST *io = io_;                                                          \
        const ST *in = in_;                                                    \
        for (int i = 0; i < n; i++) {                                          \
            T a = MAG(in[i].re) + MAG(in[i].im), b = MAG(io[i].re) + MAG(io[i].im); \
            if (a BETTER b || (a == b && in[i].d < io[i].d))                   \
                io[i] = in[i];                                                 \
        }                                                                      \
    }
LOC(iamx_l, li_t, long long, iabs_, >)
LOC(samx_l, ls_t, float, fabsf, >)
LOC(damx_l, ld_t, double, fabs, >)
CLOC(camx_l, lc_t, float, fabsf, >)
CLOC(zamx_l, lz_t, double, fabs, >)
LOC(iamn_l, li_t, long long, iabs_, <)
LOC(samn_l, ls_t, float, fabsf, <)
LOC(damn_l, ld_t, double, fabs, <)
CLOC(camn_l, lc_t, float, fabsf, <)
CLOC(zamn_l, lz_t, double, fabs, <)

static const vv_fn vals[3][BLACS_NTYPES] = {
    { isum, ssum, dsum, csum, zsum },
    { iamx, samx, damx, camx, zamx },
    { iamn, samn, damn, camn, zamn },
};
static const vv_fn locs[3][BLACS_NTYPES] = {
    { NULL },
    { iamx_l, samx_l, damx_l, camx_l, zamx_l },
    { iamn_l, samn_l, damn_l, camn_l, zamn_l },
};
static const size_t loc_size[BLACS_NTYPES] = { sizeof(li_t), sizeof(ls_t), sizeof(ld_t),
                                               sizeof(lc_t), sizeof(lz_t) };
static const size_t loc_off[BLACS_NTYPES] = { offsetof(li_t, d), offsetof(ls_t, d),
                                              offsetof(ld_t, d), offsetof(lc_t, d),
                                              offsetof(lz_t, d) };

/* the FMPL operation of (op, type, locations) for the default topology */
static int fmpl_op(int op, int type, int loc, fmpl_op_t *h)
{
    static fmpl_op_t made[3][BLACS_NTYPES];       /* user ops, made once */
    static const fmpl_op_t base[3] = { fmpl_isum, fmpl_imax, fmpl_imin };
    if (!loc) {
        *h = base[op] + type;                      /* i s d c z in order */
        return FMPL_SUCCESS;
    }
    if (!made[op][type]) {
        int rc = fmpl_op_create(loc_size[type], locs[op][type], &made[op][type]);
        if (rc != FMPL_SUCCESS)
            return rc;
    }
    *h = made[op][type];
    return FMPL_SUCCESS;
}

/* ---- topologies, on a vector of n elements of es bytes ---- */

typedef struct comb {
    fmpl_comm_t comm;
    int me, np;
    void *buf, *tmp;               /* my vector, a receive area */
    fmpl_matrix_t v;               /* the vector's shape */
    vv_fn fn;
    int n;
} comb_t;

static int send_(comb_t *k, int to) { return fmpl_comm_sendm(k->buf, &k->v, to, k->comm); }

static int take(comb_t *k, int from)
{
    int rc = fmpl_comm_recvm(k->tmp, &k->v, from, k->comm);
    if (rc == FMPL_SUCCESS)
        k->fn(k->buf, k->tmp, k->n);
    return rc;
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
    size_t es = loc_size[type], off = loc_off[type];
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
    size_t vs = blacs_esize(type), es = loc ? loc_size[type] : vs;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++, v += es) {
            memcpy(a + ((size_t)j * lda + (size_t)i) * vs, v, vs);
            if (!loc)
                continue;
            int d, q;
            memcpy(&d, v + loc_off[type], sizeof d);
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
    size_t es = loc ? loc_size[type] : blacs_esize(type), bytes = (size_t)cnt * es;
    int dist = all ? s.rank : (s.rank - dest + np) % np;
    fmpl_comm_t comm = blacs_coll_comm(ictxt, rout, c, sc, &s);

    comb_t k = { .comm = comm, .me = s.rank, .np = np, .n = cnt,
                 .fn = loc ? locs[op][type] : vals[op][type],
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
    int rc = FMPL_SUCCESS;
    if (t != ' ' && np > 1) {
        k.tmp = blacs_coll_scratch(BLACS_SCRATCH_B, bytes);
        if (!k.tmp)
            blacs_fatal(ictxt, rout, "out of memory");
    }
    switch (t) {
    case ' ': {
        fmpl_op_t h;
        rc = fmpl_op(op, type, loc, &h);
        if (rc == FMPL_SUCCESS)
            rc = all ? fmpl_allreduce(k.buf, cnt, h, comm, NULL)
                     : fmpl_reduce(k.buf, cnt, h, dest, comm, NULL);
        break;
    }
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
    /* A matrix message whose receive was not posted yet waits in the
     * sender's queue until the sender calls FMPL again.  A process that
     * left the combine and then blocked outside FMPL (in MPI, say, as the
     * BLACS tester does) would hold up its receiver forever.  Every
     * process enters the barrier only after its last receive, and
     * progresses its queue while it waits: past it, nothing is pending. */
    if (rc == FMPL_SUCCESS && t != ' ' && np > 1)
        rc = fmpl_barrier(comm);
    if (rc != FMPL_SUCCESS)
        blacs_fatal(ictxt, rout, "combine failed: %s (%s)", fmpl_error_name(rc),
                    fmpl_strerror(rc));
    if ((all || s.rank == dest) && (k.buf != a || loc))
        unpack(type, loc, c, sc, np, all ? 0 : dest, m, n, a, tlda, ra, ca, tldia, k.buf);
}
