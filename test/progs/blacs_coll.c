/*
 * blacs_coll - BLACS broadcasts and combines against serial references, on
 * every grid shape of the job and on a grid (gridmap) that leaves a
 * process out.
 *
 *   blacs_coll [-w WHAT] [-t TOPS] [-T TYPES] [-g GRIDS] [-B]
 *     -w  what to run (default "bck"):
 *         b  C?gebs2d/C?gebr2d and C?trbs2d/C?trbr2d: every type, scopes R
 *            C A (upper and lower case), every topology, every root of the
 *            scope, general matrices and U/L x unit/non-unit trapezoids
 *            (m < n, m = n, m > n, zero-size), the root's LDA odd, every
 *            receiver with an LDA of its own, guards around and between
 *            the columns; the root's matrix must stay as it was.  Then
 *            'M' and 'T' again after blacs_set WHAT 11 and 12 (rings,
 *            branches).
 *         c  C?gsum2d, C?gamx2d, C?gamn2d: every type, scopes R C A, every
 *            topology, rdest = -1 (cdest -1 and 0) and a specific
 *            destination (rotating over the scope), location arrays with
 *            LDIA = M, LDIA > M and LDIA = -1; values from a small range
 *            so that |value| ties are frequent: the reference BLACS rule
 *            picks, among equal |values|, the process nearest the
 *            destination (scope rank - dest mod size; lowest scope rank
 *            for rdest = -1), and without location arrays the larger
 *            signed value (complex: real part, then imaginary part).
 *            Only the destination's A is defined; guards everywhere, and
 *            around the location arrays, must stay untouched.  Then 'M'
 *            and 'T' again after blacs_set WHAT 13 and 14.
 *         k  blacs_set WHAT 15 and 16 (repeatable, coherent): sums of
 *            non-integer values with rdest = -1 must be bitwise the same
 *            on every process of the scope and from one call to the next,
 *            and close to the serial sum
 *     -t  topologies (default " IDSMHFT123456789")
 *     -T  types (default "isdcz")
 *     -g  grids, comma-separated: RxC (gridinit, row-major), RxCc
 *         (gridinit, column-major), RxCm (gridmap: processes in reverse
 *         order, the middle one left out when R*C < np).  Default: every
 *         factorisation of np, then for np >= 3 a gridmap grid of np - 1
 *         processes.
 *     -B  also a few big messages (300 x 200, 480 KB)
 */
#include "blacs_test.h"

static const char *tops = " IDSMHFT123456789";
static const char *types = "isdcz";
static int big;

/* the current grid */
static int ctx, nprow, npcol, myrow, mycol, gridno;
static long cnt;                  /* operations so far: varies shapes */

/* members of scope `sc` of this process: their coordinates by scope rank */
static int scope_size(char sc)
{
    return sc == 'R' ? npcol : sc == 'C' ? nprow : nprow * npcol;
}
static int scope_rank(char sc)
{
    return sc == 'R' ? mycol : sc == 'C' ? myrow : myrow * npcol + mycol;
}
static void scope_coords(char sc, int s, int *r, int *c)
{
    if (sc == 'R')
        *r = myrow, *c = s;
    else if (sc == 'C')
        *r = s, *c = mycol;
    else
        *r = s / npcol, *c = s % npcol;
}

static char *str1(char *b, char c)
{
    b[0] = c;
    b[1] = 0;
    return b;
}

/* ------------------------------------------------------------------ */
/* Broadcast                                                            */
/* ------------------------------------------------------------------ */

struct bshape {
    int m, n, lda_root, lda_recv;
    char uplo, diag;
};
static const struct bshape bshapes[] = {
    {4, 3, 5, 4, 'G', 'N'},   {1, 1, 1, 1, 'G', 'N'},   {7, 2, 9, 8, 'G', 'N'},
    {3, 5, 3, 6, 'U', 'N'},   {3, 5, 5, 3, 'U', 'U'},   {3, 5, 7, 4, 'L', 'N'},
    {3, 5, 3, 5, 'L', 'U'},   {4, 4, 5, 6, 'U', 'N'},   {4, 4, 7, 4, 'U', 'U'},
    {4, 4, 5, 9, 'L', 'N'},   {4, 4, 9, 5, 'L', 'U'},   {6, 2, 7, 6, 'U', 'N'},
    {6, 2, 9, 7, 'U', 'U'},   {6, 2, 7, 8, 'L', 'N'},   {6, 2, 11, 6, 'L', 'U'},
    {0, 3, 1, 2, 'G', 'N'},   {3, 0, 3, 4, 'G', 'N'},   {0, 2, 1, 1, 'U', 'N'},
    {17, 9, 19, 18, 'G', 'N'}, {1, 1, 1, 2, 'L', 'U'},
};
#define NBSHAPES ((int)(sizeof bshapes / sizeof bshapes[0]))

static void bcast_one(const bt_type_t *t, char sc, char top, int root,
                      const struct bshape *s, uint64_t seed)
{
    char scs[2], tps[2], u[2], d[2];
    int me = scope_rank(sc), rr, rc;
    int lda = me == root ? s->lda_root : s->lda_recv + me % 3;
    bt_mat_t x;
    /* lower-case scope and topology every other call */
    char scc = (cnt & 1) ? (char)(sc - 'A' + 'a') : sc;
    char tpc = (cnt & 2) && top >= 'A' && top <= 'Z' ? (char)(top - 'A' + 'a') : top;
    str1(scs, scc);
    str1(tps, tpc);
    str1(u, s->uplo);
    str1(d, s->diag);
    scope_coords(sc, root, &rr, &rc);
    bt_mat_init(&x, t, s->m, s->n, lda);
    if (me == root) {
        bt_mat_fill(&x, s->uplo, s->diag, seed);
        if (s->uplo == 'G')
            t->gebs2d(ctx, scs, tps, s->m, s->n, x.a, lda);
        else
            t->trbs2d(ctx, scs, tps, u, d, s->m, s->n, x.a, lda);
    } else {
        if (s->uplo == 'G')
            t->gebr2d(ctx, scs, tps, s->m, s->n, x.a, lda, rr, rc);
        else
            t->trbr2d(ctx, scs, tps, u, d, s->m, s->n, x.a, lda, rr, rc);
    }
    BT_MAT_CHECK(&x, s->uplo, s->diag, seed,
                 "grid %d (%dx%d) %s scope '%c' top '%c' root %d (%d,%d)%s", gridno, nprow,
                 npcol, s->uplo == 'G' ? "gebs2d/gebr2d" : "trbs2d/trbr2d", scc, tpc, root, rr,
                 rc, me == root ? ", the root's own matrix changed" : "");
    bt_mat_free(&x);
    cnt++;
}

static void run_bcast(const char *tp)
{
    for (const char *tc = types; *tc; tc++) {
        const bt_type_t *t = bt_type(*tc);
        for (const char *sc = "RCA"; *sc; sc++)
            for (const char *top = tp; *top; top++)
                for (int root = 0; root < scope_size(*sc); root++) {
                    const struct bshape *s = &bshapes[cnt % NBSHAPES];
                    uint64_t seed = bt_hash((uint64_t)gridno << 40 | (uint64_t)cnt,
                                            (uint64_t)*tc << 8 | (uint64_t)*sc,
                                            (uint64_t)(unsigned char)*top << 8 | (uint64_t)root);
                    bcast_one(t, *sc, *top, root, s, seed);
                }
    }
    if (big) {
        static const struct bshape bs[] = {{300, 200, 301, 307, 'G', 'N'},
                                           {300, 200, 303, 300, 'L', 'U'}};
        const char *bt = " ST";
        for (int k = 0; k < 2; k++)
            for (const char *top = bt; *top; top++)
                for (int root = 0; root < scope_size('A'); root++)
                    bcast_one(bt_type(k ? 'z' : 'd'), 'A', *top, root, &bs[k],
                              bt_hash(99, (uint64_t)cnt, (uint64_t)gridno));
    }
}

/* ------------------------------------------------------------------ */
/* Combine                                                              */
/* ------------------------------------------------------------------ */

enum { OP_SUM, OP_AMX, OP_AMN };
static const char *opname[] = {"gsum2d", "gamx2d", "gamn2d"};

struct cshape {
    int m, n, lda;
};
static const struct cshape cshapes[] = {
    {3, 4, 5}, {1, 1, 1}, {7, 2, 9}, {2, 3, 2}, {5, 1, 8}, {0, 3, 1}, {4, 0, 4}, {13, 5, 16},
};
#define NCSHAPES ((int)(sizeof cshapes / sizeof cshapes[0]))

/* the value component k of element (i, j) on the process with scope rank
 * s: a small integer (frequent |value| ties for max/min) */
static double cval(uint64_t seed, int op, int s, int i, int j, int k)
{
    uint64_t h = bt_hash(seed, (uint64_t)s << 40 | (uint64_t)i << 20 | (uint64_t)j,
                         (uint64_t)k);
    if (op == OP_SUM)
        return (double)(int64_t)(h % 2001u) - 1000.0;
    return (double)(int64_t)(h % 7u) - 3.0;          /* -3 .. 3 */
}

/* |x| as the BLACS compare it (complex: |re| + |im|) */
static double cabs1(const double *v, int nc)
{
    return nc == 1 ? fabs(v[0]) : fabs(v[0]) + fabs(v[1]);
}

static int ties_seen, ties_loc_seen;

/* the reference result of element (i, j): value v[ncomp], winner scope
 * rank *who (max/min) */
static void cref(const bt_type_t *t, uint64_t seed, int op, int N, int dest, int withloc, int i,
                 int j, double *v, int *who)
{
    int nc = t->ncomp;
    if (op == OP_SUM) {
        v[0] = v[1] = 0;
        for (int s = 0; s < N; s++)
            for (int k = 0; k < nc; k++)
                v[k] += cval(seed, op, s, i, j, k);
        *who = -1;
        return;
    }
    int best = -1;
    double bv[2] = {0, 0};
    for (int s = 0; s < N; s++) {
        double x[2] = {cval(seed, op, s, i, j, 0), nc > 1 ? cval(seed, op, s, i, j, 1) : 0};
        if (best < 0) {
            best = s, bv[0] = x[0], bv[1] = x[1];
            continue;
        }
        double diff = cabs1(x, nc) - cabs1(bv, nc);
        int take;
        if (op == OP_AMN)
            diff = -diff;
        if (diff > 0) {
            take = 1;
        } else if (diff < 0) {
            take = 0;
        } else if (withloc) {
            /* tie: the smaller distance from the destination */
            int dx = dest < 0 ? s : (s - dest + N) % N;
            int db = dest < 0 ? best : (best - dest + N) % N;
            take = dx < db;
            ties_loc_seen++;
        } else {
            /* tie: the larger signed value (complex: real, then imaginary) */
            if (x[0] != bv[0])
                take = x[0] > bv[0];
            else
                take = nc > 1 && x[1] > bv[1];
            if (x[0] != bv[0] || (nc > 1 && x[1] != bv[1]))
                ties_seen++;
        }
        if (take)
            best = s, bv[0] = x[0], bv[1] = x[1];
    }
    v[0] = bv[0];
    v[1] = bv[1];
    *who = best;
}

static void comb_one(const bt_type_t *t, char sc, char top, int op, int dest, int cdm1,
                     const struct cshape *s, int ldia_kind, uint64_t seed)
{
    char scs[2], tps[2];
    int N = scope_size(sc), me = scope_rank(sc);
    int m = s->m, n = s->n, lda = s->lda;
    int ldia = ldia_kind == 0 ? -1 : ldia_kind == 1 ? (m > 0 ? m : 1) : m + 3;
    int rdest = -1, cdest = cdm1 ? -1 : 0;
    bt_mat_t x;
    int *ri = NULL, *ci = NULL;
    size_t nia = 0;
    const int GI = BT_GUARD;
    char scc = (cnt & 1) ? (char)(sc - 'A' + 'a') : sc;
    char tpc = (cnt & 2) && top >= 'A' && top <= 'Z' ? (char)(top - 'A' + 'a') : top;

    str1(scs, scc);
    str1(tps, tpc);
    if (dest >= 0)
        scope_coords(sc, dest, &rdest, &cdest);
    bt_mat_init(&x, t, m, n, lda);
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++)
            for (int k = 0; k < t->ncomp; k++)
                bt_setc(t, x.a, (size_t)j * lda + i, k, cval(seed, op, me, i, j, k));
    if (op != OP_SUM && ldia != -1) {
        nia = (size_t)ldia * (size_t)n + 2 * GI;
        ri = malloc(nia * sizeof(int) + 1);
        ci = malloc(nia * sizeof(int) + 1);
        CHECK(ri && ci, "malloc");
        for (size_t q = 0; q < nia; q++)
            ri[q] = ci[q] = -777;
    }
    if (op == OP_SUM)
        t->gsum2d(ctx, scs, tps, m, n, x.a, lda, rdest, cdest);
    else
        (op == OP_AMX ? t->gamx2d : t->gamn2d)(ctx, scs, tps, m, n, x.a, lda,
                                               ri ? ri + GI : NULL, ci ? ci + GI : NULL, ldia,
                                               rdest, cdest);

    char what[300];
    snprintf(what, sizeof what,
             "grid %d (%dx%d) C%c%s scope '%c' top '%c' %dx%d lda %d ldia %d rdest %d cdest %d "
             "(dest scope rank %d of %d, I am %d)", gridno, nprow, npcol, t->ch, opname[op], scc,
             tpc, m, n, lda, op == OP_SUM ? 0 : ldia, rdest, cdest, dest, N, me);
    int receiver = dest < 0 || dest == me;
    unsigned char pois[16];
    memset(pois, BT_POISON, sizeof pois);
    for (size_t q = 0; q < x.nel; q++) {
        const unsigned char *p = x.buf + q * t->esize;
        long off = (long)q - BT_GUARD;
        int i = -1, j = -1;
        if (off >= 0 && off < (long)lda * n)
            j = (int)(off / lda), i = (int)(off % lda);
        if (i >= 0 && i < m) {
            if (!receiver)
                continue;
            double v[2];
            int who;
            cref(t, seed, op, N, dest, ldia != -1, i, j, v, &who);
            for (int k = 0; k < t->ncomp; k++) {
                double got = bt_getc(t, p, 0, k);
                if (got != v[k]) {
                    if (t->ncomp == 1)
                        bt_fail(__FILE__, __LINE__, "%s: element (%d,%d) is %.9g, expected "
                                "%.9g (from scope rank %d)", what, i, j, got, v[0], who);
                    bt_fail(__FILE__, __LINE__, "%s: element (%d,%d) is (%.9g,%.9g), expected "
                            "(%.9g,%.9g) (from scope rank %d)", what, i, j,
                            bt_getc(t, p, 0, 0), bt_getc(t, p, 0, 1), v[0], v[1], who);
                }
            }
            if (ri) {
                int wr, wc;
                scope_coords(sc, who, &wr, &wc);
                int gr = ri[GI + (size_t)j * ldia + i], gc = ci[GI + (size_t)j * ldia + i];
                if (gr != wr || gc != wc)
                    bt_fail(__FILE__, __LINE__, "%s: location of element (%d,%d) (value "
                            "%.9g) is (%d,%d), expected (%d,%d), scope rank %d (ties go to "
                            "the process nearest the destination)", what, i, j, v[0], gr, gc,
                            wr, wc, who);
            }
        } else if (memcmp(p, pois, t->esize) != 0) {
            bt_fail(__FILE__, __LINE__, "%s: %s element %ld of A was overwritten", what,
                    (i >= m) ? "an in-between (row >= m)" : "a guard", off);
        }
    }
    if (ri) {
        for (size_t q = 0; q < nia; q++) {
            long off = (long)q - GI;
            int i = -1;
            if (off >= 0 && off < (long)ldia * n)
                i = (int)(off % ldia);
            if (i >= 0 && i < m)
                continue;
            if (ri[q] != -777 || ci[q] != -777)
                bt_fail(__FILE__, __LINE__, "%s: location arrays: element %ld (%s) was "
                        "overwritten (rA %d, cA %d)", what, off,
                        i >= m ? "row >= m" : "guard", ri[q], ci[q]);
        }
        free(ri);
        free(ci);
    }
    bt_mat_free(&x);
    cnt++;
}

static void run_comb(const char *tp)
{
    for (const char *tc = types; *tc; tc++) {
        const bt_type_t *t = bt_type(*tc);
        for (const char *sc = "RCA"; *sc; sc++) {
            int N = scope_size(*sc);
            for (const char *top = tp; *top; top++)
                for (int op = 0; op < 3; op++)
                    for (int dk = 0; dk < 2; dk++) {
                        /* dk 0: everybody (cdest -1 or 0); 1: one destination */
                        int dest = dk == 0 ? -1 : (int)(cnt % N);
                        const struct cshape *s = &cshapes[cnt % NCSHAPES];
                        uint64_t seed = bt_hash((uint64_t)gridno << 40 | (uint64_t)cnt,
                                                (uint64_t)*tc << 8 | (uint64_t)*sc,
                                                (uint64_t)(unsigned char)*top << 8 |
                                                    (uint64_t)op);
                        comb_one(t, *sc, *top, op, dest, (int)((cnt >> 2) & 1), s,
                                 op == OP_SUM ? 0 : (int)((cnt / 3) % 3), seed);
                    }
        }
    }
    if (big) {
        static const struct cshape bs = {300, 200, 301};
        for (const char *top = " ST"; *top; top++)
            for (int op = 0; op < 3; op++)
                comb_one(bt_type('d'), 'A', *top, op, -1, 1, &bs, op ? 1 : 0,
                         bt_hash(98, (uint64_t)cnt, (uint64_t)gridno));
    }
}

/* ------------------------------------------------------------------ */
/* Repeatable, coherent                                                 */
/* ------------------------------------------------------------------ */

static void run_coherent(const char *tp)
{
    int one = 1, val;
    Cblacs_set(ctx, 15, &one);
    Cblacs_set(ctx, 16, &one);
    Cblacs_get(ctx, 15, &val);
    CHECK(val == 1, "blacs_get WHAT 15 after set 1 gave %d", val);
    Cblacs_get(ctx, 16, &val);
    CHECK(val == 1, "blacs_get WHAT 16 after set 1 gave %d", val);
    for (const char *tc = "sdcz"; *tc; tc++) {
        const bt_type_t *t = bt_type(*tc);
        if (!strchr(types, *tc))
            continue;
        for (const char *sc = "RCA"; *sc; sc++) {
            int N = scope_size(*sc), me = scope_rank(*sc);
            for (const char *top = tp; *top; top++) {
                const int m = 37, n = 3;
                size_t ne = (size_t)m * n;
                char scs[2], tps[2];
                uint64_t seed = bt_hash(555, (uint64_t)cnt, (uint64_t)gridno);
                unsigned char *a = malloc(ne * t->esize), *b = malloc(ne * t->esize);
                unsigned char *o = malloc(ne * t->esize);
                CHECK(a && b && o, "malloc");
                str1(scs, *sc);
                str1(tps, *top);
                for (size_t e = 0; e < ne; e++)
                    for (int k = 0; k < t->ncomp; k++) {
                        uint64_t h = bt_hash(seed, (uint64_t)me << 32 | e, (uint64_t)k);
                        bt_setc(t, a, e, k, (double)(h >> 11) * 0x1p-53 * 2.0 - 1.0);
                    }
                memcpy(b, a, ne * t->esize);
                t->gsum2d(ctx, scs, tps, m, n, a, m, -1, -1);
                t->gsum2d(ctx, scs, tps, m, n, b, m, -1, -1);
                CHECK(memcmp(a, b, ne * t->esize) == 0,
                      "grid %d C%cgsum2d scope '%c' top '%c' with WHAT 15 = 1: two calls on "
                      "the same data gave different bits", gridno, t->ch, *sc, *top);
                /* close to the serial sum */
                for (size_t e = 0; e < ne; e++)
                    for (int k = 0; k < t->ncomp; k++) {
                        double want = 0;
                        for (int s = 0; s < N; s++) {
                            uint64_t h = bt_hash(seed, (uint64_t)s << 32 | e, (uint64_t)k);
                            double v = (double)(h >> 11) * 0x1p-53 * 2.0 - 1.0;
                            want += t->isfloat ? (double)(float)v : v;
                        }
                        double got = bt_getc(t, a, e, k);
                        double tol = (t->isfloat ? 1e-5 : 1e-13) * N;
                        CHECK(fabs(got - want) <= tol,
                              "grid %d C%cgsum2d scope '%c' top '%c': element %zu.%d is %.17g, "
                              "serial sum %.17g", gridno, t->ch, *sc, *top, e, k, got, want);
                    }
                /* bitwise the same on every member of the scope */
                for (int s = 0; s < N; s++) {
                    int r, c;
                    scope_coords(*sc, s, &r, &c);
                    t->gesd2d(ctx, m, n, a, m, r, c);
                }
                for (int s = 0; s < N; s++) {
                    int r, c;
                    scope_coords(*sc, s, &r, &c);
                    t->gerv2d(ctx, m, n, o, m, r, c);
                    CHECK(memcmp(a, o, ne * t->esize) == 0,
                          "grid %d C%cgsum2d scope '%c' top '%c' with WHAT 16 = 1: scope rank "
                          "%d got other bits than scope rank %d", gridno, t->ch, *sc, *top, s,
                          me);
                }
                free(a);
                free(b);
                free(o);
                cnt++;
            }
        }
    }
    int zero = 0;
    Cblacs_set(ctx, 15, &zero);
    Cblacs_set(ctx, 16, &zero);
}

/* ------------------------------------------------------------------ */

static void run_grid(const char *spec, const char *what)
{
    int r, c, colmajor = 0, mapped = 0, ng;
    char x, suffix = 0;
    int k = sscanf(spec, "%d%c%d%c", &r, &x, &c, &suffix);
    CHECK(k >= 3 && r > 0 && c > 0 && r * c <= bt_np, "bad grid %s for %d processes", spec,
          bt_np);
    colmajor = suffix == 'c';
    mapped = suffix == 'm';
    ng = r * c;
    Cblacs_get(-1, 0, &ctx);
    if (mapped) {
        /* reverse order, the middle process left out if one is left over */
        int *map = malloc(sizeof(int) * (size_t)ng), out = ng < bt_np ? bt_np / 2 : -1, q = 0;
        for (int p = bt_np - 1; p >= 0 && q < ng; p--)
            if (p != out)
                map[q++] = p;
        /* usermap is column-major with ldumap = r: map[i + j * r] */
        Cblacs_gridmap(&ctx, map, r, r, c);
        free(map);
    } else {
        Cblacs_gridinit(&ctx, colmajor ? "C" : "R", r, c);
    }
    Cblacs_gridinfo(ctx, &nprow, &npcol, &myrow, &mycol);
    if (ctx < 0 || myrow < 0) {
        CHECK(ctx < 0 && nprow == -1 && npcol == -1 && myrow == -1 && mycol == -1,
              "grid %s: a process outside has ctx %d and gridinfo %d %d %d %d", spec, ctx,
              nprow, npcol, myrow, mycol);
        gridno++;
        return;
    }
    CHECK(nprow == r && npcol == c, "grid %s: gridinfo says %dx%d", spec, nprow, npcol);
    for (const char *w = what; *w; w++) {
        switch (*w) {
        case 'b':
            run_bcast(tops);
            if (strchr(tops, 'M') || strchr(tops, 'T')) {
                int v2 = 2, v3 = 3;
                Cblacs_set(ctx, 11, &v2);
                Cblacs_set(ctx, 12, &v3);
                run_bcast(strchr(tops, 'M') && strchr(tops, 'T') ? "MT"
                          : strchr(tops, 'M')                    ? "M"
                                                                 : "T");
            }
            break;
        case 'c':
            run_comb(tops);
            if (strchr(tops, 'M') || strchr(tops, 'T')) {
                int v2 = 2, v3 = 3;
                Cblacs_set(ctx, 13, &v2);
                Cblacs_set(ctx, 14, &v3);
                run_comb(strchr(tops, 'M') && strchr(tops, 'T') ? "MT"
                         : strchr(tops, 'M')                    ? "M"
                                                                : "T");
            }
            break;
        case 'k':
            run_coherent(tops);
            break;
        default:
            CHECK(0, "unknown -w letter %c", *w);
        }
        Cblacs_barrier(ctx, "A");
    }
    Cblacs_gridexit(ctx);
    gridno++;
}

int main(int argc, char **argv)
{
    const char *what = "bck", *grids = NULL;
    int opt;
    while ((opt = getopt(argc, argv, "w:t:T:g:B")) != -1) {
        switch (opt) {
        case 'w': what = optarg; break;
        case 't': tops = optarg; break;
        case 'T': types = optarg; break;
        case 'g': grids = optarg; break;
        case 'B': big = 1; break;
        default:
            fprintf(stderr, "usage: blacs_coll [-w bck] [-t TOPS] [-T TYPES] [-g GRIDS] [-B]\n");
            return 2;
        }
    }
    for (const char *c = types; *c; c++)
        if (!bt_type(*c)) {
            fprintf(stderr, "blacs_coll: unknown type %c\n", *c);
            return 2;
        }
    bt_start("blacs_coll");
    char def[256] = "";
    if (!grids) {
        size_t u = 0;
        for (int r = 1; r <= bt_np; r++)
            if (bt_np % r == 0)
                u += (size_t)snprintf(def + u, sizeof def - u, "%s%dx%d", u ? "," : "", r,
                                      bt_np / r);
        if (bt_np >= 3) {
            int ng = bt_np - 1, r = 1;
            for (int q = 1; q * q <= ng; q++)
                if (ng % q == 0)
                    r = q;
            snprintf(def + u, sizeof def - u, ",%dx%dm", r, ng / r);
        }
        grids = def;
    }
    char buf[256];
    snprintf(buf, sizeof buf, "%s", grids);
    char *save = NULL;
    for (char *g = strtok_r(buf, ",", &save); g; g = strtok_r(NULL, ",", &save))
        run_grid(g, what);
    if (bt_me == 0)
        printf("blacs_coll: %ld operations; |value| ties: %d without, %d with location "
               "arrays\n", cnt, ties_seen, ties_loc_seen);
    return bt_finish();
}
