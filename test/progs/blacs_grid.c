/*
 * blacs_grid - BLACS process grids and contexts.
 *
 *   blacs_grid [-w WHAT] [-f]
 *     -w  letters, run in this order (default "imosbre"):
 *         i  pinfo; blacs_get WHAT 0 (system context); gridinit 'R' and
 *            'C' for every factorisation of np: gridinfo, Cblacs_pnum and
 *            Cblacs_pcoord for every coordinate; gridmap with a permuted
 *            map and ldumap > nprow; blacs_get WHAT 10
 *         m  several contexts alive at once (every factorisation of np,
 *            plus a gridmap grid): broadcasts, sums and point-to-point
 *            messages interleaved over them, messages in flight on every
 *            context during the collectives, received afterwards in
 *            another order of the contexts than sent
 *         o  grids that leave processes out (gridinit smaller than np,
 *            gridmap of a subset): the others get context -1 and
 *            gridinfo -1 -1 -1 -1, and the grid works without them; a
 *            grid made on the subset's system handle (blacs_get WHAT 10)
 *         s  blacs_get/blacs_set WHAT 11..16: defaults (1 1 1 1 0 0),
 *            round trips, contexts independent
 *         b  Cblacs_barrier scopes A, R, C: each process in turn enters
 *            late; no member of the scope may leave before the last one
 *            entered
 *         r  200 gridinit/gridexit cycles, and 8 contexts alive at once
 *            with a broadcast on each
 *         e  (must be last) blacs_exit(1), then the message-passing
 *            system is still usable: fmpl_barrier and fmpl_allreduce
 *            (MPI_Barrier, MPI_Allreduce), then fmpl_finalize
 *            (MPI_Finalize)
 *     -f  the program calls fmpl_init itself before any BLACS call and
 *         sends FMPL messages of its own on index 0 between BLACS calls
 *         (fmpl-blacs must use that FMPL, not start another); with 'e'
 *         it ends with fmpl_finalize
 */
#include "blacs_test.h"
#ifdef BT_MPI
#include <mpi.h>
#endif

static int user_fmpl;

/* a little user FMPL traffic on index 0: a ring exchange */
static void user_traffic(int k)
{
#ifdef BT_FMPL
    if (!user_fmpl || bt_np < 2)
        return;
    int next = (bt_me + 1) % bt_np, prev = (bt_me + bt_np - 1) % bt_np;
    long out = (long)bt_me * 1000 + k, in = -1;
    fmpl_request_t rq, sq;
    memset(&rq, 0, sizeof rq);
    memset(&sq, 0, sizeof sq);
    CHECK(fmpl_irecv(&in, sizeof in, prev, 0, &rq) == FMPL_SUCCESS, "fmpl_irecv");
    CHECK(fmpl_isend(&out, sizeof out, next, 0, &sq) == FMPL_SUCCESS, "fmpl_isend");
    CHECK(fmpl_wait_isend(&sq) == FMPL_SUCCESS, "fmpl_wait_isend");
    CHECK(fmpl_wait_irecv(&rq) == FMPL_SUCCESS, "fmpl_wait_irecv");
    CHECK(in == (long)prev * 1000 + k, "user FMPL message %d: got %ld, expected %ld", k, in,
          (long)prev * 1000 + k);
#else
    (void)k;
#endif
}

static int sysctx(void)
{
    int s = -7;
    Cblacs_get(-1, 0, &s);
    CHECK(s >= 0, "blacs_get(-1, 0) gave system context %d", s);
    return s;
}

/* A grid whose process (i, j) is system process pnum_of[i + j * r]:
 * gridinfo must place me there, and Cblacs_pnum / Cblacs_pcoord number
 * the grid processes as the reference (MPI) BLACS do, row-major in the
 * grid (pnum = i * npcol + j), whatever the map. */
static void check_grid(int ctx, int r, int c, const int *pnum_of /* [r*c] col-major */,
                       const char *what)
{
    int nr, nc, mr, mc, found = 0;
    Cblacs_gridinfo(ctx, &nr, &nc, &mr, &mc);
    CHECK(nr == r && nc == c, "%s: gridinfo %dx%d, expected %dx%d", what, nr, nc, r, c);
    for (int j = 0; j < c; j++)
        for (int i = 0; i < r; i++) {
            int p = Cblacs_pnum(ctx, i, j), pr = -5, pc = -5;
            CHECK(p == i * c + j, "%s: Cblacs_pnum(%d,%d) = %d, expected %d (row-major in "
                  "the grid, as MPI-BLACS)", what, i, j, p, i * c + j);
            Cblacs_pcoord(ctx, i * c + j, &pr, &pc);
            CHECK(pr == i && pc == j, "%s: Cblacs_pcoord(%d) = (%d,%d), expected (%d,%d)", what,
                  i * c + j, pr, pc, i, j);
            if (pnum_of[i + j * r] == bt_me) {
                CHECK(mr == i && mc == j, "%s: system process %d is at (%d,%d) in the map but "
                      "gridinfo says (%d,%d)", what, bt_me, i, j, mr, mc);
                found = 1;
            }
        }
    CHECK(found || (mr == -1 && mc == -1), "%s: not in the grid but gridinfo (%d,%d)", what,
          mr, mc);
}

/* ---- i ------------------------------------------------------------------- */
static void w_info(void)
{
    int me2, np2;
    Cblacs_pinfo(&me2, &np2);
    CHECK(me2 == bt_me && np2 == bt_np, "second pinfo %d %d", me2, np2);
    int *map = malloc(sizeof(int) * (size_t)bt_np * 2 + 8);
    for (int r = 1; r <= bt_np; r++) {
        if (bt_np % r)
            continue;
        int c = bt_np / r, ctx;
        char what[64];
        for (int order = 0; order < 2; order++) {
            ctx = sysctx();
            Cblacs_gridinit(&ctx, order ? "Col-major" : "Row-major", r, c);
            CHECK(ctx >= 0, "gridinit %dx%d gave context %d", r, c, ctx);
            for (int j = 0; j < c; j++)
                for (int i = 0; i < r; i++)
                    map[i + j * r] = order ? j * r + i : i * c + j;
            snprintf(what, sizeof what, "gridinit %dx%d '%c'", r, c, order ? 'C' : 'R');
            check_grid(ctx, r, c, map, what);
            int v = -7;
            Cblacs_get(ctx, 10, &v);
            CHECK(v >= 0, "%s: blacs_get WHAT 10 gave %d", what, v);
            Cblacs_gridexit(ctx);
        }
        /* gridmap: reversed order, ldumap = r + 2 */
        int ld = r + 2;
        int *um = malloc(sizeof(int) * (size_t)(ld * c));
        for (int q = 0; q < ld * c; q++)
            um[q] = -99;
        for (int j = 0; j < c; j++)
            for (int i = 0; i < r; i++) {
                int p = bt_np - 1 - (i + j * r);   /* reversed */
                um[i + j * ld] = p;
                map[i + j * r] = p;
            }
        ctx = sysctx();
        Cblacs_gridmap(&ctx, um, ld, r, c);
        snprintf(what, sizeof what, "gridmap %dx%d ldumap %d", r, c, ld);
        check_grid(ctx, r, c, map, what);
        /* it works: a broadcast from the last grid process */
        {
            int x = bt_me == map[r * c - 1] ? 4242 : 0;
            if (bt_me == map[r * c - 1])
                Cigebs2d(ctx, "A", " ", 1, 1, &x, 1);
            else
                Cigebr2d(ctx, "A", " ", 1, 1, &x, 1, r - 1, c - 1);
            CHECK(x == 4242, "%s: broadcast from (%d,%d) gave %d", what, r - 1, c - 1, x);
        }
        Cblacs_gridexit(ctx);
        free(um);
        user_traffic(r);
    }
    free(map);
}

/* ---- m ------------------------------------------------------------------- */
#define MAXCTX 16
/* grid coordinates of system process p on context k of w_multi: the
 * gridinit grids are row-major, the last one (gridmap) has (0, j) = j + 1 */
static void where(int k, int c, int n, int p, int *r, int *col)
{
    if (k == n - 1 && bt_np >= 2) {
        *r = 0;
        *col = (p - 1 + bt_np) % bt_np;
    } else {
        *r = p / c;
        *col = p % c;
    }
}

static void w_multi(void)
{
    int ctx[MAXCTX], gr[MAXCTX], gc[MAXCTX], n = 0;
    for (int r = 1; r <= bt_np && n < MAXCTX - 1; r++)
        if (bt_np % r == 0) {
            ctx[n] = sysctx();
            Cblacs_gridinit(&ctx[n], "R", r, bt_np / r);
            gr[n] = r;
            gc[n] = bt_np / r;
            n++;
        }
    if (bt_np >= 2) {   /* a gridmap grid on top */
        int *um = malloc(sizeof(int) * (size_t)bt_np);
        for (int q = 0; q < bt_np; q++)
            um[q] = (q + 1) % bt_np;   /* 1 x np, rotated: (0, j) is pnum j + 1 */
        ctx[n] = sysctx();
        Cblacs_gridmap(&ctx[n], um, 1, 1, bt_np);
        gr[n] = 1;
        gc[n] = bt_np;
        n++;
        free(um);
    }
    for (int round = 0; round < 20; round++) {
        int next = (bt_me + 1) % bt_np, prev = (bt_me + bt_np - 1) % bt_np;
        /* point-to-point messages in flight on every context during the
         * collectives: sent now, received after them */
        for (int k = 0; k < n; k++) {
            double early[2] = {round + 0.5, k * 1000 + bt_me + 0.25};
            int pr, pc;
            where(k, gc[k], n, next, &pr, &pc);
            Cdgesd2d(ctx[k], 1, 2, early, 1, pr, pc);
        }
        /* collectives interleaved over the contexts */
        for (int k = 0; k < n; k++) {
            int nr, nc, mr, mc;
            Cblacs_gridinfo(ctx[k], &nr, &nc, &mr, &mc);
            CHECK(nr == gr[k] && nc == gc[k], "context %d: gridinfo %dx%d", k, nr, nc);
            int N = nr * nc, root = (round + k) % N, me = mr * nc + mc;
            double v[3] = {0, 0, 0};
            if (me == root) {
                v[0] = round * 100 + k;
                v[1] = -k;
                v[2] = root;
                Cdgebs2d(ctx[k], "All", "I", 3, 1, v, 3);
            } else {
                Cdgebr2d(ctx[k], "All", "I", 3, 1, v, 3, root / nc, root % nc);
            }
            CHECK(v[0] == round * 100 + k && v[1] == -k && v[2] == root,
                  "context %d round %d: broadcast gave %g %g %g", k, round, v[0], v[1], v[2]);
            int s = me + 1;
            Cigsum2d(ctx[k], "A", round % 2 ? "T" : " ", 1, 1, &s, 1, -1, -1);
            CHECK(s == N * (N + 1) / 2, "context %d round %d: sum %d, expected %d", k, round, s,
                  N * (N + 1) / 2);
        }
        /* a message to the next pnum on every context, received in the
         * reverse order of the contexts (after the early ones) */
        for (int k = 0; k < n; k++) {
            int val[2] = {round, k * 1000 + bt_me};
            int pr, pc;
            where(k, gc[k], n, next, &pr, &pc);
            Cigesd2d(ctx[k], 2, 1, val, 2, pr, pc);
        }
        for (int k = n - 1; k >= 0; k--) {
            int val[2] = {-1, -1}, pr, pc;
            where(k, gc[k], n, prev, &pr, &pc);
            double early[2] = {-1, -1};
            Cdgerv2d(ctx[k], 1, 2, early, 1, pr, pc);
            CHECK(early[0] == round + 0.5 && early[1] == k * 1000 + prev + 0.25,
                  "round %d: the message sent on context %d before the collectives from pnum "
                  "%d is (%g,%g), expected (%g,%g)", round, k, prev, early[0], early[1],
                  round + 0.5, k * 1000 + prev + 0.25);
            Cigerv2d(ctx[k], 2, 1, val, 2, pr, pc);
            CHECK(val[0] == round && val[1] == k * 1000 + prev,
                  "round %d: the message on context %d from pnum %d is (%d,%d), expected "
                  "(%d,%d)", round, k, prev, val[0], val[1], round, k * 1000 + prev);
        }
        user_traffic(round);
    }
    for (int k = 0; k < n; k++)
        Cblacs_gridexit(ctx[k]);
}

/* ---- o ------------------------------------------------------------------- */
static void w_out(void)
{
    if (bt_np < 2)
        return;
    /* gridinit smaller than np: the first (np - 1) processes, as (np-1) x 1 */
    int ctx = sysctx(), nr, nc, mr, mc;
    Cblacs_gridinit(&ctx, "R", bt_np - 1, 1);
    Cblacs_gridinfo(ctx, &nr, &nc, &mr, &mc);
    if (bt_me == bt_np - 1) {
        CHECK(ctx == -1, "gridinit %dx1 on %d: the process left out got context %d", bt_np - 1,
              bt_np, ctx);
        CHECK(nr == -1 && nc == -1 && mr == -1 && mc == -1,
              "left out of gridinit: gridinfo %d %d %d %d", nr, nc, mr, mc);
    } else {
        CHECK(ctx >= 0 && nr == bt_np - 1 && nc == 1 && mr == bt_me && mc == 0,
              "gridinit %dx1: ctx %d gridinfo %d %d %d %d", bt_np - 1, ctx, nr, nc, mr, mc);
        int s = bt_me + 1, x = bt_me == 0 ? 77 : 0;
        Cigsum2d(ctx, "C", " ", 1, 1, &s, 1, -1, -1);
        CHECK(s == (bt_np - 1) * bt_np / 2, "sum on the smaller grid %d", s);
        if (bt_me == 0)
            Cigebs2d(ctx, "A", "S", 1, 1, &x, 1);
        else
            Cigebr2d(ctx, "A", "S", 1, 1, &x, 1, 0, 0);
        CHECK(x == 77, "broadcast on the smaller grid %d", x);
        Cblacs_barrier(ctx, "A");
        Cblacs_gridexit(ctx);
    }
    /* gridmap of a subset: 2 x 1 of processes np-1 and 0 when np >= 3
     * (1 x 1 of process 1 when np == 2); everybody else left out */
    int um[2], r = bt_np >= 3 ? 2 : 1;
    um[0] = bt_np >= 3 ? bt_np - 1 : 1;
    um[1] = 0;
    ctx = sysctx();
    Cblacs_gridmap(&ctx, um, r, r, 1);
    Cblacs_gridinfo(ctx, &nr, &nc, &mr, &mc);
    int in = bt_me == um[0] || (r == 2 && bt_me == um[1]);
    if (!in) {
        CHECK(ctx == -1 && nr == -1 && nc == -1 && mr == -1 && mc == -1,
              "left out of gridmap: ctx %d gridinfo %d %d %d %d", ctx, nr, nc, mr, mc);
        int d0 = -9, d1 = -9;
        Cblacs_gridinfo(-1, &d0, &d1, &d0, &d1);
        CHECK(d0 == -1 && d1 == -1, "gridinfo(-1) gave %d %d", d0, d1);
    } else {
        int myr = bt_me == um[0] ? 0 : 1;
        CHECK(ctx >= 0 && nr == r && nc == 1 && mr == myr && mc == 0,
              "gridmap %dx1: ctx %d gridinfo %d %d %d %d", r, ctx, nr, nc, mr, mc);
        double v = bt_me == um[0] ? 2.5 : 0;
        if (r == 2) {
            if (myr == 0)
                Cdgesd2d(ctx, 1, 1, &v, 1, 1, 0);
            else
                Cdgerv2d(ctx, 1, 1, &v, 1, 0, 0);
        }
        CHECK(v == 2.5, "message on the gridmap grid: %g", v);
        /* blacs_get WHAT 10: the system handle of the grid's processes, in
         * the grid's pnum order; a 1 x r grid on it has the same processes */
        int h = -7, h2, a, b, mr2, mc2;
        Cblacs_get(ctx, 10, &h);
        CHECK(h >= 0, "blacs_get(ctx, 10) of the gridmap grid gave %d", h);
        h2 = h;
        Cblacs_gridinit(&h2, "R", 1, r);
        Cblacs_gridinfo(h2, &a, &b, &mr2, &mc2);
        CHECK(h2 >= 0 && a == 1 && b == r && mr2 == 0 && mc2 == myr,
              "gridinit 1x%d on the handle of the gridmap grid: ctx %d gridinfo %d %d %d %d, "
              "expected 1 %d 0 %d", r, h2, a, b, mr2, mc2, r, myr);
        int tag = bt_me == um[0] ? 31 : 0;
        if (mc2 == 0)
            Cigebs2d(h2, "A", " ", 1, 1, &tag, 1);
        else
            Cigebr2d(h2, "A", " ", 1, 1, &tag, 1, 0, 0);
        CHECK(tag == 31, "broadcast from (0,0) of the grid on the handle: %d (not from system "
              "process %d?)", tag, um[0]);
        Cblacs_gridexit(h2);
        Cblacs_gridexit(ctx);
    }
    /* everybody again together */
    int all = sysctx();
    Cblacs_gridinit(&all, "R", 1, bt_np);
    Cblacs_barrier(all, "A");
    Cblacs_gridexit(all);
}

/* ---- s ------------------------------------------------------------------- */
static void w_set(void)
{
    int a = sysctx(), b = sysctx(), v;
    Cblacs_gridinit(&a, "R", 1, bt_np);
    Cblacs_gridinit(&b, "C", bt_np, 1);
    static const int defaults[6] = {1, 1, 1, 1, 0, 0};
    for (int w = 11; w <= 16; w++) {
        v = -7;
        Cblacs_get(a, w, &v);
        CHECK(v == defaults[w - 11], "blacs_get WHAT %d default %d, expected %d", w, v,
              defaults[w - 11]);
    }
    for (int w = 11; w <= 16; w++) {
        int x = w <= 14 ? w - 8 : 1;   /* 3 4 5 6 1 1 */
        Cblacs_set(a, w, &x);
    }
    for (int w = 11; w <= 16; w++) {
        int want = w <= 14 ? w - 8 : 1;
        v = -7;
        Cblacs_get(a, w, &v);
        CHECK(v == want, "blacs_get WHAT %d after blacs_set %d gave %d", w, want, v);
        v = -7;
        Cblacs_get(b, w, &v);
        CHECK(v == defaults[w - 11], "blacs_set on one context changed WHAT %d of another: "
              "%d, expected %d", w, v, defaults[w - 11]);
    }
    /* the settings are used: 'M' and 'T' broadcasts and combines work */
    int x = bt_me == 0 ? 5 : 0;
    if (bt_me == 0)
        Cigebs2d(a, "A", "M", 1, 1, &x, 1);
    else
        Cigebr2d(a, "A", "M", 1, 1, &x, 1, 0, 0);
    CHECK(x == 5, "'M' broadcast with 3 rings: %d", x);
    x = 1;
    Cigsum2d(a, "A", "T", 1, 1, &x, 1, -1, -1);
    CHECK(x == bt_np, "'T' sum with 6 branches: %d", x);
    /* and back */
    for (int w = 11; w <= 16; w++) {
        int y = w <= 14 ? 2 : 0;
        Cblacs_set(a, w, &y);
        v = -7;
        Cblacs_get(a, w, &v);
        CHECK(v == y, "blacs_get WHAT %d after blacs_set %d gave %d", w, y, v);
    }
    Cblacs_gridexit(a);
    Cblacs_gridexit(b);
}

/* ---- b ------------------------------------------------------------------- */
static void w_barrier(void)
{
    int r = 1;
    for (int q = 1; q * q <= bt_np; q++)
        if (bt_np % q == 0)
            r = q;
    int c = bt_np / r, ctx = sysctx(), nr, nc, mr, mc;
    Cblacs_gridinit(&ctx, "R", r, c);
    Cblacs_gridinfo(ctx, &nr, &nc, &mr, &mc);
    static const char *scopes[] = {"A", "R", "C", "all", "row", "column"};
    for (int si = 0; si < 6; si++) {
        char sc = (char)(scopes[si][0] & ~0x20);
        for (int late = 0; late < bt_np; late++) {
            double t[2];
            Cblacs_barrier(ctx, "A");
            if (bt_me == late)
                bt_sleep(0.02);
            t[0] = bt_now();
            Cblacs_barrier(ctx, (char *)scopes[si]);
            t[1] = bt_now();
            /* everybody's times to pnum 0 */
            if (bt_me != 0) {
                Cdgesd2d(ctx, 2, 1, t, 2, 0, 0);
                continue;
            }
            double in[64][2];
            in[0][0] = t[0];
            in[0][1] = t[1];
            for (int p = 1; p < bt_np && p < 64; p++)
                Cdgerv2d(ctx, 2, 1, in[p], 2, p / c, p % c);
            /* per scope group: nobody leaves before the last one entered */
            for (int p = 0; p < bt_np && p < 64; p++)
                for (int q = 0; q < bt_np && q < 64; q++) {
                    int same = sc == 'A' || (sc == 'R' && p / c == q / c) ||
                               (sc == 'C' && p % c == q % c);
                    if (same && in[p][1] < in[q][0] - 1e-4)
                        CHECK(0, "barrier scope '%s' on %dx%d: pnum %d left %.1f us before "
                              "pnum %d entered (late: pnum %d)", scopes[si], r, c, p,
                              (in[q][0] - in[p][1]) * 1e6, q, late);
                }
        }
    }
    (void)nr;
    (void)nc;
    (void)mr;
    (void)mc;
    Cblacs_gridexit(ctx);
}

/* ---- r ------------------------------------------------------------------- */
static void w_reuse(void)
{
    for (int k = 0; k < 200; k++) {
        int ctx = sysctx(), s = 1;
        Cblacs_gridinit(&ctx, k % 2 ? "C" : "R", 1, bt_np);
        CHECK(ctx >= 0, "cycle %d: gridinit gave %d", k, ctx);
        if (k % 10 == 0) {
            Cigsum2d(ctx, "A", " ", 1, 1, &s, 1, -1, -1);
            CHECK(s == bt_np, "cycle %d: sum %d", k, s);
        }
        Cblacs_gridexit(ctx);
    }
    int ctx[8];
    for (int k = 0; k < 8; k++) {
        ctx[k] = sysctx();
        Cblacs_gridinit(&ctx[k], "R", 1, bt_np);
        for (int q = 0; q < k; q++)
            CHECK(ctx[q] != ctx[k], "two live contexts with the same handle %d", ctx[k]);
    }
    for (int k = 7; k >= 0; k--) {
        int x = bt_me == k % bt_np ? k + 100 : -1;
        if (bt_me == k % bt_np)
            Cigebs2d(ctx[k], "A", "H", 1, 1, &x, 1);
        else
            Cigebr2d(ctx[k], "A", "H", 1, 1, &x, 1, 0, k % bt_np);
        CHECK(x == k + 100, "context #%d: broadcast gave %d", k, x);
    }
    for (int k = 0; k < 8; k++)
        Cblacs_gridexit(ctx[k]);
}

/* ---- e ------------------------------------------------------------------- */
static int w_exit(void)
{
    int me = bt_me, np = bt_np;
    Cblacs_exit(1);
#ifdef BT_FMPL
    CHECK(fmpl_rank() == me && fmpl_size() == np, "after blacs_exit(1): fmpl_rank %d size %d",
          fmpl_rank(), fmpl_size());
    int rc = fmpl_barrier(FMPL_COMM_WORLD);
    CHECK(rc == FMPL_SUCCESS, "fmpl_barrier after blacs_exit(1): %s", fmpl_strerror(rc));
    double v = me + 1;
    rc = fmpl_allreduce(&v, 1, fmpl_dsum, FMPL_COMM_WORLD, NULL);
    CHECK(rc == FMPL_SUCCESS && v == np * (np + 1) / 2.0,
          "fmpl_allreduce after blacs_exit(1): %s, %g", fmpl_strerror(rc), v);
    rc = fmpl_finalize();
    CHECK(rc == FMPL_SUCCESS, "fmpl_finalize after blacs_exit(1): %s", fmpl_strerror(rc));
#else
    int fl = 0;
    MPI_Finalized(&fl);
    CHECK(!fl, "MPI finalized by blacs_exit(1)");
    CHECK(MPI_Barrier(MPI_COMM_WORLD) == MPI_SUCCESS, "MPI_Barrier after blacs_exit(1)");
    double v = me + 1, s = 0;
    MPI_Allreduce(&v, &s, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    CHECK(s == np * (np + 1) / 2.0, "MPI_Allreduce after blacs_exit(1): %g", s);
    MPI_Finalize();
#endif
    if (me == 0)
        printf("OK %s\n", bt_name);
    fflush(stdout);
    return 0;
}

int main(int argc, char **argv)
{
    const char *what = "imosbre";
    int opt;
    while ((opt = getopt(argc, argv, "w:f")) != -1) {
        switch (opt) {
        case 'w': what = optarg; break;
        case 'f': user_fmpl = 1; break;
        default:
            fprintf(stderr, "usage: blacs_grid [-w imosbre] [-f]\n");
            return 2;
        }
    }
#ifdef BT_FMPL
    if (user_fmpl) {
        int rc = fmpl_init(4);
        if (rc != FMPL_SUCCESS) {
            fprintf(stderr, "blacs_grid: fmpl_init: %s\n", fmpl_strerror(rc));
            return 1;
        }
    }
#else
    user_fmpl = 0;
#endif
    bt_start("blacs_grid");
#ifdef BT_FMPL
    if (user_fmpl)
        CHECK(fmpl_rank() == bt_me && fmpl_size() == bt_np,
              "fmpl says rank %d of %d, Cblacs_pinfo %d of %d", fmpl_rank(), fmpl_size(), bt_me,
              bt_np);
#endif
    for (const char *w = what; *w; w++) {
        switch (*w) {
        case 'i': w_info(); break;
        case 'm': w_multi(); break;
        case 'o': w_out(); break;
        case 's': w_set(); break;
        case 'b': w_barrier(); break;
        case 'r': w_reuse(); break;
        case 'e':
            CHECK(w[1] == 0, "-w: 'e' must be last");
            return w_exit();
        default: CHECK(0, "unknown -w letter %c", *w);
        }
        user_traffic(1000 + (int)(w - what));
    }
    if (user_fmpl) {
#ifdef BT_FMPL
        int me = bt_me;
        Cblacs_exit(1);
        CHECK(fmpl_finalize() == FMPL_SUCCESS, "fmpl_finalize");
        if (me == 0)
            printf("OK %s\n", bt_name);
        return 0;
#endif
    }
    return bt_finish();
}
