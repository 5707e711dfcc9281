/*
 * coll_halo - the persistent halo exchange against the global array.
 *
 *   coll_halo -g GRID [-p PERIODIC] [-n EXTENTS] [-w WIDTHS] [-e ELEM] [-f]
 *             [-i ITERS] [-S] [-m] [-c CYCLES] [-L LIMIT] [-K KINDS] [-s SEED] [-o]
 *     -g  process grid, "2x2" (2-D) or "2x1x2" (3-D); the job may have more
 *         ranks than the grid: the rest sit out (with -S)
 *     -p  periodic flags per dimension, "11", "10", ... (default all 1)
 *     -n  GLOBAL interior extents, "24x20" (default 13x11 or 9x8x7);
 *         distributed in blocks, the first ranks one element more
 *     -w  shadow widths per dimension, "1", "2x1", "2x1x0" (default 1)
 *     -e  element size in bytes (default 8)
 *     -f  FMPL_HALO_FACES: faces only, corners not checked
 *     -i  iterations of fmpl_halo_do with new data each (default 6)
 *     -S  on a sub-communicator: WORLD split, grid ranks in reverse world
 *         order (key -rank), ranks beyond the grid FMPL_UNDEFINED
 *     -m  a second halo exchange alive at once (other element size, the
 *         other mode, shadow width 1) on a second array, the two
 *         exchanged alternately
 *     -c  init / iterate / free this many times (default 1; more than
 *         FMPL_MAX_HALOS shows that slots are reused)
 *     -L  then create exchanges until FMPL_ERR_LIMIT: exactly LIMIT alive
 *     -K  expected fmpl_halo_kind per dimension, letters B (block), T
 *         (block-stride), S (stride), N (none), e.g. "BTS"; checked on
 *         every grid rank besides the geometric rule below
 *     -o  fmpl_halo_start ... fmpl_halo_test / fmpl_halo_wait instead of
 *         fmpl_halo_do: on even iterations tested until done (the
 *         interior that is not sent is written meanwhile, and must not
 *         disturb the exchange), on odd ones waited for; with -m both
 *         exchanges started before either ends.  A second start, a do or
 *         a free of a started exchange is FMPL_ERR_BUSY, a test or wait
 *         of one not started FMPL_ERR_REQUEST
 *
 * Every interior element holds f(global coordinates, iteration); every
 * shadow element is set to a poison value before the exchange (on even
 * iterations; on odd ones the previous results stay, so a face that is
 * not rewritten shows old data).  After fmpl_halo_do:
 *   - the interior is unchanged;
 *   - a shadow element that lies beyond a physical boundary (-1
 *     neighbour) in any of its shadow dimensions keeps the poison;
 *   - every other shadow element (edges and corners included, in the
 *     default mode; only elements in the shadow of exactly one dimension
 *     with FMPL_HALO_FACES) equals f at the neighbour's global coordinate,
 *     wrapped around periodic dimensions.
 * fmpl_halo_kind must be what the face's layout in memory says: BLOCK if
 * the face (the shadow box: whole extent of the dimensions before d, with
 * their shadows; interior of those after d; interior of all others with
 * FMPL_HALO_FACES) is one contiguous piece; otherwise pieces of at most
 * 32 bytes must be STRIDE and pieces of 256 bytes or more BLOCK_STRIDE
 * (between the two either); NONE for a width of 0.
 */
#include "prog.h"

#include <sched.h>

#define MAXD 3

static long seed = 11;

struct geo {
    int nd;
    int P[MAXD], periodic[MAXD], G[MAXD], w[MAXD];
    int c[MAXD];                 /* my grid coordinates */
    int x[MAXD], off[MAXD];      /* my interior extent and global offset */
    int N[MAXD];                 /* allocated extent */
    int nbr[2 * MAXD];
    size_t es;
    unsigned flags;
};

static int parse_list(const char *s, int *out, int max)
{
    int n = 0;
    char *end;
    while (*s && n < max) {
        long v = strtol(s, &end, 10);
        if (end == s)
            return -1;
        out[n++] = (int)v;
        s = end;
        if (*s == 'x' || *s == ',')
            s++;
    }
    return n;
}

static int grid_rank(const struct geo *g, const int *c)
{
    int q = 0, d;
    for (d = 0; d < g->nd; d++)
        q = q * g->P[d] + c[d];
    return q;
}

static void setup(struct geo *g, int me)
{
    int d, q = me;
    for (d = g->nd - 1; d >= 0; d--) {
        g->c[d] = q % g->P[d];
        q /= g->P[d];
    }
    for (d = 0; d < MAXD; d++) {
        if (d >= g->nd) {
            g->x[d] = g->N[d] = g->G[d] = 1;
            g->off[d] = g->w[d] = 0;
            continue;
        }
        {
            int base = g->G[d] / g->P[d], rem = g->G[d] % g->P[d];
            g->x[d] = base + (g->c[d] < rem);
            g->off[d] = g->c[d] * base + (g->c[d] < rem ? g->c[d] : rem);
        }
        g->N[d] = g->x[d] + 2 * g->w[d];
        CHECK(g->x[d] >= g->w[d] && g->x[d] >= 1, "dimension %d: extent %d, width %d", d,
              g->x[d], g->w[d]);
    }
    for (d = 0; d < g->nd; d++) {
        int s;
        for (s = 0; s < 2; s++) {
            int cc[MAXD], k;
            for (k = 0; k < g->nd; k++)
                cc[k] = g->c[k];
            cc[d] += s ? 1 : -1;
            if (cc[d] < 0 || cc[d] >= g->P[d]) {
                if (!g->periodic[d]) {
                    g->nbr[2 * d + s] = -1;
                    continue;
                }
                cc[d] = (cc[d] + g->P[d]) % g->P[d];
            }
            g->nbr[2 * d + s] = grid_rank(g, cc);
        }
    }
}

static size_t nelem(const struct geo *g)
{
    return (size_t)g->N[0] * (size_t)g->N[1] * (size_t)g->N[2];
}

/* byte b of f(global coordinates, iteration) */
static unsigned char fval(const int *gc, int it, int hid, size_t b)
{
    uint64_t h = prog_mix64(((uint64_t)(uint32_t)gc[0] << 40) ^ ((uint64_t)(uint32_t)gc[1] << 20) ^
                            (uint64_t)(uint32_t)gc[2] ^ ((uint64_t)seed << 52) ^
                            ((uint64_t)hid << 60));
    h = prog_mix64(h ^ ((uint64_t)it << 32) ^ (b / 8));
    return (unsigned char)(h >> (8 * (b % 8)));
}

static unsigned char poison(int it) { return (unsigned char)(0xc0 ^ (it & 0x3f)); }

/* fill: interior f(it); shadows poison(it) when `repoison` */
static void fill(const struct geo *g, unsigned char *a, int it, int hid, int repoison)
{
    int l[MAXD];
    size_t b;
    for (l[0] = 0; l[0] < g->N[0]; l[0]++)
        for (l[1] = 0; l[1] < g->N[1]; l[1]++)
            for (l[2] = 0; l[2] < g->N[2]; l[2]++) {
                unsigned char *e = a + (((size_t)l[0] * g->N[1] + l[1]) * g->N[2] + l[2]) * g->es;
                int d, inner = 1, gc[MAXD];
                for (d = 0; d < MAXD; d++) {
                    if (l[d] < g->w[d] || l[d] >= g->w[d] + g->x[d])
                        inner = 0;
                    gc[d] = g->off[d] + l[d] - g->w[d];
                }
                if (inner)
                    for (b = 0; b < g->es; b++)
                        e[b] = fval(gc, it, hid, b);
                else if (repoison)
                    memset(e, poison(it), g->es);
            }
}

static long total_checked;

static void verify(const struct geo *g, const unsigned char *a, int it, int hid, int last_poison,
                   const char *what)
{
    int l[MAXD];
    size_t b;
    long checked = 0;
    for (l[0] = 0; l[0] < g->N[0]; l[0]++)
        for (l[1] = 0; l[1] < g->N[1]; l[1]++)
            for (l[2] = 0; l[2] < g->N[2]; l[2]++) {
                const unsigned char *e =
                    a + (((size_t)l[0] * g->N[1] + l[1]) * g->N[2] + l[2]) * g->es;
                int d, nshadow = 0, beyond = 0, gc[MAXD], lc[MAXD];
                const char *kind;
                for (d = 0; d < MAXD; d++) {
                    int s = -1;
                    gc[d] = g->off[d] + l[d] - g->w[d];
                    lc[d] = l[d];
                    if (l[d] < g->w[d])
                        s = 0;
                    else if (l[d] >= g->w[d] + g->x[d])
                        s = 1;
                    if (s < 0)
                        continue;
                    nshadow++;
                    if (g->nbr[2 * d + s] < 0)
                        beyond = 1;
                    gc[d] = (gc[d] + g->G[d]) % g->G[d];   /* periodic wrap */
                }
                if (nshadow > 1 && (g->flags & FMPL_HALO_FACES))
                    continue;                   /* corners: not promised */
                if (nshadow == 0)
                    kind = "interior element";
                else if (beyond)
                    kind = "shadow beyond a boundary (must stay untouched)";
                else
                    kind = nshadow == 1 ? "face shadow" : "edge/corner shadow";
                checked++;
                for (b = 0; b < g->es; b++) {
                    unsigned char want = beyond ? poison(last_poison) : fval(gc, it, hid, b);
                    if (e[b] != want) {
                        char nb[64] = "";
                        int q, u = 0;
                        for (q = 0; q < 2 * g->nd; q++)
                            u += snprintf(nb + u, sizeof nb - (size_t)u, "%s%d", q ? "," : "",
                                          g->nbr[q]);
                        prog_fail(__FILE__, __LINE__,
                                  "%s, iteration %d: %s at local (%d,%d,%d) [interior %dx%dx%d, "
                                  "widths %d,%d,%d, grid coords (%d,%d,%d), neighbours %s], "
                                  "global (%d,%d,%d): byte %zu of %zu is 0x%02x, expected "
                                  "0x%02x%s", what, it, kind, lc[0], lc[1], lc[2], g->x[0],
                                  g->x[1], g->x[2], g->w[0], g->w[1], g->w[2], g->c[0],
                                  g->c[1], g->c[2], nb, gc[0], gc[1], gc[2], b, g->es, e[b],
                                  want, e[b] == poison(last_poison) ? " (the poison: never "
                                  "written)" : "");
                    }
                }
            }
    CHECK(checked > 0, "nothing checked");
    total_checked += checked;
}

/* the kind the layout calls for: see the comment at the top.  Returns
 * the kind, or -1 when both BLOCK_STRIDE and STRIDE are acceptable. */
static int expected_kind(const struct geo *g, int d, size_t *run_out, size_t *pieces_out)
{
    int e, k = -1;
    size_t cnt[MAXD], run, pieces = 1;
    if (g->w[d] == 0)
        return FMPL_HALO_NONE;
    for (e = 0; e < g->nd; e++) {
        if (e == d)
            cnt[e] = (size_t)g->w[e];
        else if (e < d && !(g->flags & FMPL_HALO_FACES))
            cnt[e] = (size_t)g->N[e];
        else
            cnt[e] = (size_t)g->x[e];
    }
    /* innermost dimension not spanned whole */
    for (e = g->nd - 1; e >= 0; e--)
        if (cnt[e] < (size_t)g->N[e]) {
            k = e;
            break;
        }
    run = g->es;
    if (k < 0) {
        for (e = 0; e < g->nd; e++)
            run *= cnt[e];
    } else {
        run *= cnt[k];
        for (e = k + 1; e < g->nd; e++)
            run *= (size_t)g->N[e];
        for (e = 0; e < k; e++)
            pieces *= cnt[e];
    }
    *run_out = run;
    *pieces_out = pieces;
    if (pieces == 1)
        return FMPL_HALO_BLOCK;
    if (run <= 32)
        return FMPL_HALO_STRIDE;
    if (run >= 256)            /* strided puts: shm's, PEACH2's */
        return prog_strided_puts() ? FMPL_HALO_BLOCK_STRIDE : FMPL_HALO_STRIDE;
    return -1;
}

static const char *kind_name(int k)
{
    switch (k) {
    case FMPL_HALO_NONE: return "NONE";
    case FMPL_HALO_BLOCK: return "BLOCK";
    case FMPL_HALO_BLOCK_STRIDE: return "BLOCK_STRIDE";
    case FMPL_HALO_STRIDE: return "STRIDE";
    default: return fmpl_error_name(k);
    }
}

static void check_kinds(const struct geo *g, fmpl_halo_t h, const char *want, int print)
{
    int d;
    char line[128];
    int u = snprintf(line, sizeof line, "coll_halo: rank %d kinds", prog_me);
    for (d = 0; d < g->nd; d++) {
        size_t run = 0, pieces = 0;
        int k = fmpl_halo_kind(h, d), ex = expected_kind(g, d, &run, &pieces);
        if (ex >= 0)
            CHECK(k == ex, "fmpl_halo_kind(dimension %d) = %s, expected %s (face of %zu "
                  "pieces of %zu bytes)", d, kind_name(k), kind_name(ex), pieces, run);
        else
            CHECK(k == FMPL_HALO_STRIDE || k == FMPL_HALO_BLOCK_STRIDE,
                  "fmpl_halo_kind(dimension %d) = %s, expected STRIDE or BLOCK_STRIDE (face of "
                  "%zu pieces of %zu bytes)", d, kind_name(k), pieces, run);
        if (want && want[d]) {
            /* 'T' (block-stride) needs strided puts (shm, PEACH2) */
            int w = want[d] == 'B' ? FMPL_HALO_BLOCK
                    : want[d] == 'T' ? (prog_strided_puts() ? FMPL_HALO_BLOCK_STRIDE
                                                            : FMPL_HALO_STRIDE)
                    : want[d] == 'S' ? FMPL_HALO_STRIDE : FMPL_HALO_NONE;
            CHECK(k == w, "fmpl_halo_kind(dimension %d) = %s, -K says %s", d, kind_name(k),
                  kind_name(w));
        }
        u += snprintf(line + u, sizeof line - (size_t)u, " %s", kind_name(k));
    }
    if (print)
        printf("%s\n", line);
}

/* -o: the exchange in parts.  Started: what may not happen meanwhile is
 * refused. */
static void xstart(fmpl_halo_t h)
{
    fmpl_halo_t keep = h;
    CHECK_RC(fmpl_halo_start(h), FMPL_SUCCESS);
    CHECK_RC(fmpl_halo_start(h), FMPL_ERR_BUSY);
    CHECK_RC(fmpl_halo_do(h), FMPL_ERR_BUSY);
    CHECK_RC(fmpl_halo_free(&keep), FMPL_ERR_BUSY);
    CHECK(keep == h, "fmpl_halo_free of a started exchange changed the handle");
}

/* ... and ended, by tests in a loop that computes between them, or by a
 * wait; afterwards neither applies until the next start */
static void xend(fmpl_halo_t h, int by_test)
{
    int done = 0;
    volatile double x = 1.0;
    if (by_test) {
        for (long k = 0; !done; k++) {
            CHECK_RC(fmpl_halo_test(h, &done), FMPL_SUCCESS);
            for (int j = 0; j < 200; j++)
                x = x * 1.0000001 + 1e-9;
            if (k % 64 == 63)
                sched_yield();
        }
    } else {
        CHECK_RC(fmpl_halo_wait(h), FMPL_SUCCESS);
    }
    CHECK_RC(fmpl_halo_test(h, &done), FMPL_ERR_REQUEST);
    CHECK_RC(fmpl_halo_wait(h), FMPL_ERR_REQUEST);
}

int main(int argc, char **argv)
{
    const char *grid = NULL, *per = NULL, *ext = NULL, *wid = "1", *kinds = NULL;
    size_t es = 8;
    long iters = 6, cycles = 1, limit = 0;
    int faces = 0, sub = 0, multi = 0, split = 0;
    struct prog_opt opts[] = {
        {'g', OPT_STR, &grid, "process grid, 2x2 or 2x1x2"},
        {'p', OPT_STR, &per, "periodic flags, e.g. 10"},
        {'n', OPT_STR, &ext, "global extents"},
        {'w', OPT_STR, &wid, "shadow widths"},
        {'e', OPT_SIZE, &es, "element size"},
        {'f', OPT_FLAG, &faces, "FMPL_HALO_FACES"},
        {'i', OPT_INT, &iters, "iterations"},
        {'S', OPT_FLAG, &sub, "on a sub-communicator"},
        {'m', OPT_FLAG, &multi, "a second exchange alive at once"},
        {'c', OPT_INT, &cycles, "init/free cycles"},
        {'L', OPT_INT, &limit, "FMPL_MAX_HALOS to check"},
        {'K', OPT_STR, &kinds, "expected kinds (B T S N per dimension)"},
        {'s', OPT_INT, &seed, "data seed"},
        {'o', OPT_FLAG, &split, "start / test / wait instead of do"},
    };
    struct geo g, g2;
    fmpl_comm_t comm = FMPL_COMM_WORLD;
    int d, n, me, gsize = 1, cyc;
    char what[256];

    prog_name = "coll_halo";
    prog_parse(argc, argv, opts, 14);
    prog_init("coll_halo", 1);
    CHECK(grid != NULL, "-g GRID is required");
    memset(&g, 0, sizeof g);
    g.nd = parse_list(grid, g.P, MAXD);
    CHECK(g.nd == 2 || g.nd == 3, "bad grid %s", grid);
    for (d = 0; d < g.nd; d++) {
        gsize *= g.P[d];
        g.periodic[d] = per ? per[d] == '1' : 1;
        g.G[d] = g.nd == 2 ? (d == 0 ? 13 : 11) : 9 - d;
    }
    if (ext)
        CHECK(parse_list(ext, g.G, MAXD) == g.nd, "bad -n %s", ext);
    {
        int w[MAXD], nw = parse_list(wid, w, MAXD);
        CHECK(nw == 1 || nw == g.nd, "bad -w %s", wid);
        for (d = 0; d < g.nd; d++)
            g.w[d] = nw == 1 ? w[0] : w[d];
    }
    g.es = es;
    g.flags = faces ? FMPL_HALO_FACES : 0;
    CHECK(gsize <= prog_np && (sub || gsize == prog_np),
          "grid %s needs %d ranks (more only with -S), the job has %d", grid, gsize, prog_np);

    if (sub) {
        int color = prog_me < gsize ? 0 : FMPL_UNDEFINED;
        CHECK_RC(fmpl_comm_split(FMPL_COMM_WORLD, color, -prog_me, &comm), FMPL_SUCCESS);
        if (color == FMPL_UNDEFINED) {
            CHECK(comm == FMPL_COMM_NULL, "split gave %d", comm);
            CHECK_RC(fmpl_barrier(FMPL_COMM_WORLD), FMPL_SUCCESS);
            return prog_finish();
        }
    }
    CHECK_RC(fmpl_comm_size(comm, &n), FMPL_SUCCESS);
    CHECK_RC(fmpl_comm_rank(comm, &me), FMPL_SUCCESS);
    CHECK(n == gsize, "communicator of %d ranks for a grid of %d", n, gsize);
    if (sub)
        CHECK(me == gsize - 1 - prog_me, "rank %d in the reversed communicator, expected %d", me,
              gsize - 1 - prog_me);
    setup(&g, me);
    g2 = g;
    for (d = 0; d < g.nd; d++)
        g2.w[d] = 1;
    g2.es = es == 24 ? 1 : es == 1 ? 8 : 24;
    g2.flags = faces ? 0 : FMPL_HALO_FACES;
    setup(&g2, me);

    for (cyc = 0; cyc < cycles; cyc++) {
        unsigned char *a = prog_xmalloc(nelem(&g) * g.es), *a2 = NULL;
        fmpl_halo_t h = NULL, h2 = NULL;
        int it, lastp = 0;
        int e0[MAXD], s0[MAXD], e2[MAXD], s2[MAXD];
        for (d = 0; d < g.nd; d++) {
            e0[d] = g.x[d];
            s0[d] = g.w[d];
            e2[d] = g2.x[d];
            s2[d] = g2.w[d];
        }
        fill(&g, a, 0, 0, 1);
        CHECK_RC(fmpl_halo_init(a, g.es, g.nd, e0, s0, g.nbr, g.flags, comm, &h), FMPL_SUCCESS);
        CHECK(h != NULL, "fmpl_halo_init gave NULL");
        check_kinds(&g, h, kinds, cyc == 0 && me == 0);
        if (multi) {
            a2 = prog_xmalloc(nelem(&g2) * g2.es);
            fill(&g2, a2, 0, 1, 1);
            CHECK_RC(fmpl_halo_init(a2, g2.es, g2.nd, e2, s2, g2.nbr, g2.flags, comm, &h2),
                     FMPL_SUCCESS);
            CHECK(h2 != NULL && h2 != h, "second fmpl_halo_init gave %p", (void *)h2);
            check_kinds(&g2, h2, NULL, 0);
        }
        for (it = 0; it < iters; it++) {
            int rep = it % 2 == 0;
            if (rep)
                lastp = it + 100 * cyc;
            fill(&g, a, it + 100 * cyc, 0, rep);
            if (multi)
                fill(&g2, a2, it + 100 * cyc, 1, rep);
            if (split) {
                /* both exchanges in flight at once with -m */
                xstart(h);
                if (multi)
                    xstart(h2);
                xend(h, it % 2 == 0);
                if (multi)
                    xend(h2, it % 2 == 1);
            } else if (multi && it % 3 == 1) {
                /* the second one first this time */
                CHECK_RC(fmpl_halo_do(h2), FMPL_SUCCESS);
                CHECK_RC(fmpl_halo_do(h), FMPL_SUCCESS);
            } else {
                CHECK_RC(fmpl_halo_do(h), FMPL_SUCCESS);
                if (multi)
                    CHECK_RC(fmpl_halo_do(h2), FMPL_SUCCESS);
            }
            snprintf(what, sizeof what, "grid %s%s, %d-byte elements, %s, cycle %d", grid,
                     sub ? " (sub-communicator)" : "", (int)g.es,
                     faces ? "FMPL_HALO_FACES" : "corners", cyc);
            verify(&g, a, it + 100 * cyc, 0, lastp, what);
            if (multi) {
                snprintf(what, sizeof what, "second exchange: grid %s, %d-byte elements, %s, "
                         "cycle %d", grid, (int)g2.es, faces ? "corners" : "FMPL_HALO_FACES",
                         cyc);
                verify(&g2, a2, it + 100 * cyc, 1, lastp, what);
            }
        }
        CHECK_RC(fmpl_halo_free(&h), FMPL_SUCCESS);
        CHECK(h == NULL, "fmpl_halo_free left %p", (void *)h);
        if (multi) {
            CHECK_RC(fmpl_halo_free(&h2), FMPL_SUCCESS);
            free(a2);
        }
        free(a);
    }

    if (limit > 0) {
        fmpl_halo_t *hs = prog_xmalloc(sizeof *hs * (size_t)(limit + 1));
        unsigned char **arr = prog_xmalloc(sizeof *arr * (size_t)(limit + 1));
        int e0[MAXD], s0[MAXD], k, rc = FMPL_SUCCESS, made = 0;
        for (d = 0; d < g.nd; d++) {
            e0[d] = g.x[d];
            s0[d] = g.w[d];
        }
        for (k = 0; k <= limit; k++) {
            arr[k] = prog_xmalloc(nelem(&g) * g.es);
            hs[k] = NULL;
            rc = fmpl_halo_init(arr[k], g.es, g.nd, e0, s0, g.nbr, g.flags, comm, &hs[k]);
            if (rc != FMPL_SUCCESS)
                break;
            made++;
        }
        CHECK(made == limit && rc == FMPL_ERR_LIMIT,
              "%d halo exchanges alive, then %s (FMPL_MAX_HALOS is %ld)", made,
              fmpl_error_name(rc), limit);
        CHECK(hs[made] == NULL, "failed fmpl_halo_init left a handle");
        /* the last one still works; one freed, one made again */
        fill(&g, arr[made - 1], 7, 0, 1);
        CHECK_RC(fmpl_halo_do(hs[made - 1]), FMPL_SUCCESS);
        verify(&g, arr[made - 1], 7, 0, 7, "last exchange at the limit");
        CHECK_RC(fmpl_halo_free(&hs[0]), FMPL_SUCCESS);
        CHECK_RC(fmpl_halo_init(arr[0], g.es, g.nd, e0, s0, g.nbr, g.flags, comm, &hs[0]),
                 FMPL_SUCCESS);
        fill(&g, arr[0], 8, 0, 1);
        CHECK_RC(fmpl_halo_do(hs[0]), FMPL_SUCCESS);
        verify(&g, arr[0], 8, 0, 8, "exchange re-made at the limit");
        for (k = 0; k < made; k++)
            CHECK_RC(fmpl_halo_free(&hs[k]), FMPL_SUCCESS);
        for (k = 0; k <= made && k <= limit; k++)
            free(arr[k]);
        free(hs);
        free(arr);
    }
    if (me == 0)
        printf("coll_halo: %ld cycles of %ld exchanges, %ld elements checked on rank 0\n",
               cycles, iters * (multi ? 2 : 1), total_checked);
    if (sub) {
        CHECK_RC(fmpl_comm_free(&comm), FMPL_SUCCESS);
        CHECK_RC(fmpl_barrier(FMPL_COMM_WORLD), FMPL_SUCCESS);
    }
    return prog_finish();
}
