/*
 * coll_comm - communicators: creation, splitting, isolation from each
 * other and from the user's point-to-point traffic, freeing and reuse.
 *
 *   coll_comm [-t TESTS] [-F ROUNDS] [-L LIMIT]
 *     -t  letters of the parts to run (default "csnipfl"):
 *           c  fmpl_comm_create: several key patterns (key != 0 joins,
 *              negative keys too, none, one, all), members in world order,
 *              non-members get FMPL_COMM_NULL, the handle equal on every
 *              member, collectives on it checked
 *           s  fmpl_comm_split of WORLD: colors, keys that reorder ranks
 *              (ties keep parent order), FMPL_UNDEFINED and other negative
 *              colors give FMPL_COMM_NULL; a split of a split
 *           n  collectives on several communicators interleaved: WORLD and
 *              two copies with the same members alternately; a ring of
 *              pair communicators {k, k+1} where each rank works on its two
 *              pairs in increasing order, so different ranks are in
 *              different communicators' collectives at the same time
 *           i  user point-to-point in flight: isend/irecv on user indices
 *              0 and 1 posted before the collectives (barrier, bcast,
 *              hbcast, allreduce, allgather, gather, scatter, reduce) and
 *              completed after them;
 *              receives whose sends come after the collective; a spilled
 *              blocking send; all data checked
 *           p  the same with the collectives on a sub-communicator
 *           f  free and create again ROUNDS times (default 150, more than
 *              FMPL_MAX_COMMS) with changing members, a few communicators
 *              alive throughout; a freed handle is FMPL_ERR_COMM
 *           l  create until FMPL_ERR_LIMIT: LIMIT (-L, default 64 =
 *              FMPL_MAX_COMMS) communicators alive at most, WORLD included
 *              or not (LIMIT-1 or LIMIT new ones); one freed, one created
 * User indices: 0 and 1 carry the in-flight traffic, 2 the test's own
 * point-to-point checks.
 */
#include "prog.h"

#define MAXNP 64
#define CHK_IDX 2

struct cinfo {
    fmpl_comm_t h;
    int n, me;
    int wr[MAXNP];
};

static void info(fmpl_comm_t h, struct cinfo *c, const char *what)
{
    int i;
    c->h = h;
    CHECK_RC(fmpl_comm_size(h, &c->n), FMPL_SUCCESS);
    CHECK_RC(fmpl_comm_rank(h, &c->me), FMPL_SUCCESS);
    CHECK(c->n >= 1 && c->n <= MAXNP && c->me >= 0 && c->me < c->n, "%s: rank %d of %d", what,
          c->me, c->n);
    for (i = 0; i < c->n; i++)
        CHECK_RC(fmpl_comm_world_rank(h, i, &c->wr[i]), FMPL_SUCCESS);
    CHECK(c->wr[c->me] == prog_me, "%s: world rank of my rank %d is %d, I am %d", what, c->me,
          c->wr[c->me], prog_me);
    CHECK_RC(fmpl_comm_world_rank(h, c->n, &i), FMPL_ERR_RANK);
    CHECK_RC(fmpl_comm_world_rank(h, -1, &i), FMPL_ERR_RANK);
}

/* The members are exactly `exp` (world ranks in communicator order). */
static void expect_members(fmpl_comm_t h, const int *exp, int n, const char *what)
{
    struct cinfo c;
    int i;
    CHECK(h != FMPL_COMM_NULL && h != FMPL_COMM_WORLD, "%s: handle %d for a member", what, h);
    info(h, &c, what);
    CHECK(c.n == n, "%s: size %d, expected %d", what, c.n, n);
    for (i = 0; i < n; i++)
        CHECK(c.wr[i] == exp[i], "%s: rank %d is world rank %d, expected %d", what, i, c.wr[i],
              exp[i]);
}

/* Point-to-point only: every member has the same value of `v`. */
static void same_on_members(const struct cinfo *c, int v, const char *what)
{
    int i, o;
    if (c->me == 0) {
        for (i = 1; i < c->n; i++) {
            CHECK_RC(fmpl_recv(&o, sizeof o, c->wr[i], CHK_IDX), FMPL_SUCCESS);
            CHECK(o == v, "%s: member %d (world %d) has %d, member 0 has %d", what, i, c->wr[i],
                  o, v);
        }
    } else {
        CHECK_RC(fmpl_send(&v, sizeof v, c->wr[0], CHK_IDX), FMPL_SUCCESS);
    }
}

/* A few collectives on `h`, results checked against what the members are. */
static void exercise(fmpl_comm_t h, int salt, const char *what)
{
    struct cinfo c;
    int i, j, v[5], *all;
    long expect;
    unsigned char *b;
    size_t bs = 3000 + (size_t)salt % 5000;

    info(h, &c, what);
    same_on_members(&c, h, what);
    /* allreduce of world ranks */
    for (j = 0; j < 5; j++)
        v[j] = prog_me * 1000 + j + salt;
    CHECK_RC(fmpl_allreduce(v, 5, fmpl_isum, h, NULL), FMPL_SUCCESS);
    for (j = 0; j < 5; j++) {
        expect = 0;
        for (i = 0; i < c.n; i++)
            expect += c.wr[i] * 1000 + j + salt;
        CHECK(v[j] == expect, "%s: allreduce element %d is %d, expected %ld", what, j, v[j],
              expect);
    }
    /* bcast from the last member */
    b = prog_xmalloc(bs);
    if (c.me == c.n - 1)
        pat_fill(b, bs, (uint64_t)salt, c.wr[c.n - 1], h);
    CHECK_RC(fmpl_bcast(b, bs, c.n - 1, h), FMPL_SUCCESS);
    {
        long off = pat_find_error(b, bs, (uint64_t)salt, c.wr[c.n - 1], h);
        CHECK(off < 0, "%s: bcast of %zu bytes from rank %d: byte %ld wrong", what, bs,
              c.n - 1, off);
    }
    free(b);
    /* allgather of world ranks: the membership in order */
    all = prog_xmalloc(sizeof(int) * (size_t)c.n);
    CHECK_RC(fmpl_allgather(&prog_me, sizeof(int), all, h), FMPL_SUCCESS);
    for (i = 0; i < c.n; i++)
        CHECK(all[i] == c.wr[i], "%s: allgather block %d is %d, expected world rank %d", what,
              i, all[i], c.wr[i]);
    free(all);
    CHECK_RC(fmpl_barrier(h), FMPL_SUCCESS);
}

static void free_comm(fmpl_comm_t *h, const char *what)
{
    fmpl_comm_t old = *h;
    int r;
    CHECK_RC(fmpl_comm_free(h), FMPL_SUCCESS);
    CHECK(*h == FMPL_COMM_NULL, "%s: fmpl_comm_free left the handle %d", what, *h);
    /* nothing was created since: the old handle is invalid here */
    CHECK_RC(fmpl_comm_rank(old, &r), FMPL_ERR_COMM);
    CHECK_RC(fmpl_barrier(old), FMPL_ERR_COMM);
}

/* ------------------------------------------------------------------ */

static void part_create(void)
{
    /* key pattern p for world rank r */
    static const char *names[] = {"all join (key 1)", "even ranks (key r%2==0)",
                                  "odd ranks, key -r", "only rank 0 (key 7)",
                                  "only the last rank", "r%3 != 1 (key r%3)", "nobody (key 0)"};
    int p, r, i;
    for (p = 0; p < 7; p++) {
        int keys[MAXNP], exp[MAXNP], n = 0;
        fmpl_comm_t h = 12345;
        char what[128];
        for (r = 0; r < prog_np; r++) {
            switch (p) {
            case 0: keys[r] = 1; break;
            case 1: keys[r] = r % 2 == 0; break;
            case 2: keys[r] = r % 2 ? -r : 0; break;
            case 3: keys[r] = r == 0 ? 7 : 0; break;
            case 4: keys[r] = r == prog_np - 1 ? 3 : 0; break;
            case 5: keys[r] = r % 3; break;
            default: keys[r] = 0; break;
            }
            if (keys[r] != 0)
                exp[n++] = r;
        }
        snprintf(what, sizeof what, "fmpl_comm_create(%s)", names[p]);
        CHECK_RC(fmpl_comm_create(keys[prog_me], &h), FMPL_SUCCESS);
        if (keys[prog_me] == 0) {
            CHECK(h == FMPL_COMM_NULL, "%s: key 0 gave handle %d", what, h);
            continue;
        }
        expect_members(h, exp, n, what);
        for (i = 0; i < 2; i++)
            exercise(h, p * 10 + i, what);
        free_comm(&h, what);
    }
    /* the same again many ranks later: WORLD unaffected */
    exercise(FMPL_COMM_WORLD, 99, "WORLD after comm_create");
}

/* expected members of a split: those of `parent` (world ranks par[], n)
 * with my color, ordered by (key, parent rank); color[] and key[] are
 * indexed by world rank */
static int split_expect(const int *par, int n, const int *color, const int *key, int mycolor,
                        int *exp)
{
    int i, m = 0, j;
    for (i = 0; i < n; i++) {
        if (color[par[i]] != mycolor)
            continue;
        j = m++;
        while (j > 0 && key[exp[j - 1]] > key[par[i]]) {
            exp[j] = exp[j - 1];
            j--;
        }
        exp[j] = par[i];
    }
    return m;
}

static void part_split(void)
{
    int p, r, world[MAXNP];
    for (r = 0; r < prog_np; r++)
        world[r] = r;
    for (p = 0; p < 6; p++) {
        int color[MAXNP], key[MAXNP], ckey[MAXNP], exp[MAXNP], n;
        fmpl_comm_t h = 777;
        char what[160];
        const char *desc = "";
        for (r = 0; r < prog_np; r++) {
            switch (p) {
            case 0: desc = "color 0, key 0 (a copy of WORLD)"; color[r] = 0; key[r] = 0; break;
            case 1: desc = "color r%3, key (5r)%7 (reordered, ties)"; color[r] = r % 3;
                key[r] = (5 * r) % 7; break;
            case 2: desc = "color r%2, key -r (reversed)"; color[r] = r % 2; key[r] = -r; break;
            case 3: desc = "color r/2, FMPL_UNDEFINED for r%4==3, key 100-r";
                color[r] = r % 4 == 3 ? FMPL_UNDEFINED : r / 2; key[r] = 100 - r; break;
            case 4: desc = "color -5 for odd r (negative: no communicator)";
                color[r] = r % 2 ? -5 : 1; key[r] = 3; break;
            default: desc = "color r (one communicator each)"; color[r] = r; key[r] = 1; break;
            }
        }
        snprintf(what, sizeof what, "fmpl_comm_split(WORLD, %s)", desc);
        for (r = 0; r < prog_np; r++)
            ckey[r] = key[r];
        CHECK_RC(fmpl_comm_split(FMPL_COMM_WORLD, color[prog_me], key[prog_me], &h),
                 FMPL_SUCCESS);
        if (color[prog_me] < 0) {
            CHECK(h == FMPL_COMM_NULL, "%s: color %d gave handle %d", what, color[prog_me], h);
            continue;
        }
        n = split_expect(world, prog_np, color, ckey, color[prog_me], exp);
        expect_members(h, exp, n, what);
        exercise(h, 100 + p, what);
        /* a split of the split: reversed again by key -(rank in h) when
         * p == 1, halves otherwise */
        {
            struct cinfo c;
            int color2[MAXNP], key2[MAXNP], exp2[MAXNP], n2, i;
            fmpl_comm_t h2 = 555;
            char what2[200];
            info(h, &c, what);
            for (i = 0; i < prog_np; i++)
                color2[i] = key2[i] = -1;
            for (i = 0; i < c.n; i++) {
                color2[c.wr[i]] = i < (c.n + 1) / 2 ? 0 : 1;
                key2[c.wr[i]] = -i;
            }
            for (i = 0; i < prog_np; i++)
                if (color2[i] < 0)
                    color2[i] = -100;   /* not in h */
            snprintf(what2, sizeof what2, "split(color half, key -rank) of %s", what);
            CHECK_RC(fmpl_comm_split(h, color2[prog_me], key2[prog_me], &h2), FMPL_SUCCESS);
            n2 = split_expect(c.wr, c.n, color2, key2, color2[prog_me], exp2);
            expect_members(h2, exp2, n2, what2);
            exercise(h2, 200 + p, what2);
            exercise(h, 300 + p, what);     /* the parent still works */
            free_comm(&h2, what2);
        }
        free_comm(&h, what);
    }
    /* comm_split on a freed handle */
    {
        fmpl_comm_t h;
        CHECK_RC(fmpl_comm_split(FMPL_COMM_WORLD, 0, 0, &h), FMPL_SUCCESS);
        fmpl_comm_t old = h, h3 = 42;
        free_comm(&h, "copy of WORLD");
        CHECK_RC(fmpl_comm_split(old, 0, 0, &h3), FMPL_ERR_COMM);
    }
}

/* ------------------------------------------------------------------ */

/* interleaved collectives: an allreduce (isum, count ints) and a bcast of
 * bs bytes on h, checked; tag distinguishes the data of each call */
static void ar_bc(fmpl_comm_t h, int count, size_t bs, int tag)
{
    struct cinfo c;
    int *v = prog_xmalloc(sizeof(int) * (size_t)count), i, j;
    unsigned char *b = prog_xmalloc(bs);
    int root;
    info(h, &c, "interleave");
    for (j = 0; j < count; j++)
        v[j] = (prog_me + 1) * (j % 100 + tag);
    CHECK_RC(fmpl_allreduce(v, count, fmpl_isum, h, NULL), FMPL_SUCCESS);
    for (j = 0; j < count; j++) {
        long e = 0;
        for (i = 0; i < c.n; i++)
            e += (long)(c.wr[i] + 1) * (j % 100 + tag);
        CHECK(v[j] == e, "interleaved allreduce tag %d on comm %d: element %d is %d, "
              "expected %ld", tag, h, j, v[j], e);
    }
    root = tag % c.n;
    if (c.me == root)
        pat_fill(b, bs, (uint64_t)tag, root, h);
    CHECK_RC(fmpl_bcast(b, bs, root, h), FMPL_SUCCESS);
    {
        long off = pat_find_error(b, bs, (uint64_t)tag, root, h);
        CHECK(off < 0, "interleaved bcast tag %d on comm %d root %d: byte %ld of %zu wrong",
              tag, h, root, off, bs);
    }
    free(v);
    free(b);
}

static void part_interleave(void)
{
    fmpl_comm_t dup = FMPL_COMM_NULL, rev = FMPL_COMM_NULL, pair[MAXNP];
    int k, round, mine[2], nmine = 0;

    /* WORLD and two communicators with the same members */
    CHECK_RC(fmpl_comm_split(FMPL_COMM_WORLD, 0, 0, &dup), FMPL_SUCCESS);
    CHECK_RC(fmpl_comm_split(FMPL_COMM_WORLD, 0, -prog_me, &rev), FMPL_SUCCESS);
    CHECK(dup != rev && dup != FMPL_COMM_WORLD && rev != FMPL_COMM_WORLD,
          "handles WORLD %d, dup %d, rev %d", FMPL_COMM_WORLD, dup, rev);
    for (round = 0; round < 12; round++) {
        size_t bs = round % 3 == 2 ? 300000 : 100 + 37 * (size_t)round;
        ar_bc(dup, 1 + round * 50, bs, 1000 + round);
        ar_bc(FMPL_COMM_WORLD, 3, bs, 2000 + round);
        ar_bc(rev, round % 2 ? 20000 : 7, bs, 3000 + round);
        CHECK_RC(fmpl_barrier(round % 2 ? dup : rev), FMPL_SUCCESS);
    }
    free_comm(&dup, "dup");
    free_comm(&rev, "rev");

    if (prog_np < 2)
        return;
    /* pair communicators {k, k+1 mod n}: rank r is in pairs r-1 and r */
    for (k = 0; k < prog_np; k++) {
        int a = k, b = (k + 1) % prog_np;
        int key = prog_me == a || prog_me == b;
        pair[k] = FMPL_COMM_NULL;
        CHECK_RC(fmpl_comm_create(key, &pair[k]), FMPL_SUCCESS);
        if (key) {
            int exp[2] = {a < b ? a : b, a < b ? b : a};
            expect_members(pair[k], exp, 2, "pair communicator");
            mine[nmine++] = k;
        } else {
            CHECK(pair[k] == FMPL_COMM_NULL, "pair %d: non-member got %d", k, pair[k]);
        }
    }
    CHECK(nmine == 2, "in %d pair communicators", nmine);
    /* increasing k on every rank: no cycle of waits, but rank r works on
     * pair r while rank r+2 works on pair r+1, ... */
    for (round = 0; round < 10; round++) {
        for (k = 0; k < 2; k++) {
            int p = mine[k];
            ar_bc(pair[p], round % 4 == 3 ? 30000 : 4, round % 5 == 4 ? 200000 : 64,
                  (p + 1) * 100 + round);
        }
    }
    for (k = 0; k < 2; k++)
        free_comm(&pair[mine[k]], "pair communicator");
    CHECK_RC(fmpl_barrier(FMPL_COMM_WORLD), FMPL_SUCCESS);
}

/* ------------------------------------------------------------------ */

/* User traffic in flight on indices 0 and 1 while collectives run on `h`.
 * Every rank exchanges with its left and right neighbours (itself when
 * alone) on both indices. */
static void collectives_on(fmpl_comm_t h, int salt)
{
    struct cinfo c;
    int v[4], i, j;
    unsigned char *b, *rb;
    size_t bs = 70000, gs = 5000;
    info(h, &c, "sub");
    CHECK_RC(fmpl_barrier(h), FMPL_SUCCESS);
    for (j = 0; j < 4; j++)
        v[j] = prog_me + j + salt;
    CHECK_RC(fmpl_allreduce(v, 4, fmpl_isum, h, NULL), FMPL_SUCCESS);
    for (j = 0; j < 4; j++) {
        long e = 0;
        for (i = 0; i < c.n; i++)
            e += c.wr[i] + j + salt;
        CHECK(v[j] == e, "allreduce amid user traffic: element %d is %d, expected %ld", j,
              v[j], e);
    }
    b = prog_xmalloc(bs);
    if (c.me == 0)
        pat_fill(b, bs, 77 + (uint64_t)salt, 0, 0);
    CHECK_RC(fmpl_bcast(b, bs, 0, h), FMPL_SUCCESS);
    PAT_VERIFY(b, bs, 77 + (uint64_t)salt, 0, 0);
    if (h == FMPL_COMM_WORLD && !prog_hbcast_ok(bs))
        CHECK_RC(fmpl_hbcast(b, bs, c.n - 1), FMPL_ERR_UNSUPPORTED);
    else if (h == FMPL_COMM_WORLD) {
        if (c.me == c.n - 1)
            pat_fill(b, bs, 79 + (uint64_t)salt, c.n - 1, 0);
        CHECK_RC(fmpl_hbcast(b, bs, c.n - 1), FMPL_SUCCESS);
        PAT_VERIFY(b, bs, 79 + (uint64_t)salt, c.n - 1, 0);
    }
    free(b);
    rb = prog_xmalloc(gs * (size_t)c.n);
    b = prog_xmalloc(gs);
    pat_fill(b, gs, 78 + (uint64_t)salt, c.me, 0);
    CHECK_RC(fmpl_allgather(b, gs, rb, h), FMPL_SUCCESS);
    for (i = 0; i < c.n; i++)
        PAT_VERIFY(rb + gs * (size_t)i, gs, 78 + (uint64_t)salt, i, 0);
    CHECK_RC(fmpl_gather(b, gs, c.me == c.n - 1 ? rb : NULL, c.n - 1, h), FMPL_SUCCESS);
    if (c.me == c.n - 1)
        for (i = 0; i < c.n; i++)
            PAT_VERIFY(rb + gs * (size_t)i, gs, 78 + (uint64_t)salt, i, 0);
    memset(b, 0, gs);
    CHECK_RC(fmpl_scatter(rb, gs, b, c.n - 1, h), FMPL_SUCCESS);
    PAT_VERIFY(b, gs, 78 + (uint64_t)salt, c.me, 0);
    {
        double d[3] = {prog_me, -prog_me - 1.0, 2.0};
        CHECK_RC(fmpl_reduce(d, 3, fmpl_dmax, 0, h, NULL), FMPL_SUCCESS);
        if (c.me == 0) {
            int mx = 0;
            for (i = 0; i < c.n; i++)
                if (c.wr[i] > mx)
                    mx = c.wr[i];
            CHECK(d[0] == mx && d[1] == -mx - 1.0, "reduce(dmax) amid user traffic: %g %g, "
                  "expected %d %d", d[0], d[1], mx, -mx - 1);
        }
    }
    free(b);
    free(rb);
    CHECK_RC(fmpl_barrier(h), FMPL_SUCCESS);
}

static void part_inflight(fmpl_comm_t h, const char *what)
{
    static const size_t sizes[] = {0, 8, 1000, 65536, 1 << 20};
    int left = (prog_me + prog_np - 1) % prog_np, right = (prog_me + 1) % prog_np;
    int round, ndir = prog_np > 2 ? 2 : 1;   /* left == right with 2 ranks */
    for (round = 0; round < 10; round++) {
        size_t s = sizes[round % 5];
        int mode = round % 2, idx;
        fmpl_request_t rr[2][2], sr[2][2];
        unsigned char *rbuf[2][2], *sbuf[2][2];
        /* [index][0: from left / to right, 1: from right / to left]; on
         * each index one receive from each distinct neighbour */
        memset(rr, 0, sizeof rr);
        memset(sr, 0, sizeof sr);
        for (idx = 0; idx < 2; idx++) {
            int d;
            for (d = 0; d < ndir; d++) {
                int src = d == 0 ? left : right, dst = d == 0 ? right : left;
                rbuf[idx][d] = prog_xmalloc(s + 16);
                memset(rbuf[idx][d], PROG_POISON, s + 16);
                sbuf[idx][d] = prog_xmalloc(s);
                pat_fill(sbuf[idx][d], s, (uint64_t)round * 4 + (uint64_t)d, prog_me, idx);
                CHECK_RC(fmpl_irecv(rbuf[idx][d], s, src, idx, &rr[idx][d]), FMPL_SUCCESS);
                /* mode 0: the sends too go out before the collectives;
                 * mode 1: the sends on index 1 only after them */
                if (mode == 0 || idx == 0)
                    CHECK_RC(fmpl_isend(sbuf[idx][d], s, dst, idx, &sr[idx][d]), FMPL_SUCCESS);
            }
        }
        collectives_on(h, round);
        for (idx = 0; idx < 2; idx++) {
            int d;
            for (d = 0; d < ndir; d++) {
                int src = d == 0 ? left : right, dst = d == 0 ? right : left;
                if (!(mode == 0 || idx == 0))
                    CHECK_RC(fmpl_isend(sbuf[idx][d], s, dst, idx, &sr[idx][d]), FMPL_SUCCESS);
                (void)src;
            }
        }
        for (idx = 0; idx < 2; idx++) {
            int d;
            for (d = 0; d < ndir; d++) {
                int src = d == 0 ? left : right;
                CHECK_RC(fmpl_wait_irecv(&rr[idx][d]), FMPL_SUCCESS);
                CHECK_RC(fmpl_wait_isend(&sr[idx][d]), FMPL_SUCCESS);
                {
                    long off = pat_find_error(rbuf[idx][d], s, (uint64_t)round * 4 + (uint64_t)d,
                                              src, idx);
                    CHECK(off < 0, "%s: user message of %zu bytes from %d on index %d (round "
                          "%d), in flight during collectives: byte %ld wrong", what, s, src,
                          idx, round, off);
                }
                POISON_VERIFY(rbuf[idx][d] + s, 16, PROG_POISON,
                              "bytes after a user receive buffer");
                free(rbuf[idx][d]);
                free(sbuf[idx][d]);
            }
        }
    }
    /* a blocking user send spilled before the collectives, received after */
    {
        size_t sp = 1 << 20, s = 4000;
        void *spill = prog_xmalloc(sp);
        unsigned char *sb = prog_xmalloc(s), *rb = prog_xmalloc(s);
        int nsend, nspool;
        CHECK_RC(fmpl_sendbuff_set(spill, sp, 0), FMPL_SUCCESS);
        pat_fill(sb, s, 991, prog_me, 0);
        /* the send to the right is spilled (nobody has posted its receive yet;
         * with one rank the send to self is spilled too) */
        CHECK_RC(fmpl_send(sb, s, right, 0), FMPL_SUCCESS);
        memset(sb, 0, s);
        collectives_on(h, 50);
        CHECK_RC(fmpl_recv(rb, s, left, 0), FMPL_SUCCESS);
        PAT_VERIFY(rb, s, 991, left, 0);
        /* drain: the spilled message goes out once its receive is posted */
        do {
            CHECK_RC(fmpl_sendbuff_check(&nsend, &nspool), FMPL_SUCCESS);
        } while (nspool > 0);
        collectives_on(h, 51);
        do {
            CHECK_RC(fmpl_sendbuff_check(&nsend, &nspool), FMPL_SUCCESS);
        } while (nspool > 0);
        CHECK_RC(fmpl_sendbuff_set(NULL, 0, 0), FMPL_SUCCESS);
        free(spill);
        free(sb);
        free(rb);
    }
}

/* ------------------------------------------------------------------ */

static void part_free(int rounds)
{
    fmpl_comm_t keep[3];
    int i, r;
    /* three communicators alive throughout */
    CHECK_RC(fmpl_comm_split(FMPL_COMM_WORLD, 0, prog_me, &keep[0]), FMPL_SUCCESS);
    CHECK_RC(fmpl_comm_split(FMPL_COMM_WORLD, prog_me % 2, 0, &keep[1]), FMPL_SUCCESS);
    CHECK_RC(fmpl_comm_create(1, &keep[2]), FMPL_SUCCESS);
    for (i = 0; i < rounds; i++) {
        fmpl_comm_t h = FMPL_COMM_NULL, h2 = FMPL_COMM_NULL;
        char what[96];
        int color;
        switch (i % 4) {
        case 0:
            CHECK_RC(fmpl_comm_create(1, &h), FMPL_SUCCESS);
            break;
        case 1:
            /* members change from round to round */
            CHECK_RC(fmpl_comm_create((prog_me + i) % 3 != 0 || prog_np == 1, &h),
                     FMPL_SUCCESS);
            break;
        case 2:
            color = (prog_me + i) % 2;
            CHECK_RC(fmpl_comm_split(FMPL_COMM_WORLD, color, i % 3 - prog_me, &h),
                     FMPL_SUCCESS);
            break;
        default:
            /* two at once, freed in the other order */
            CHECK_RC(fmpl_comm_split(FMPL_COMM_WORLD, 0, 0, &h), FMPL_SUCCESS);
            CHECK_RC(fmpl_comm_split(keep[1], 0, -prog_me, &h2), FMPL_SUCCESS);
            break;
        }
        snprintf(what, sizeof what, "free/create round %d (kind %d)", i, i % 4);
        if (h != FMPL_COMM_NULL) {
            if (i % 10 == 0 || i % 4 == 1)
                exercise(h, i, what);
            else {
                int v = i, n;
                CHECK_RC(fmpl_allreduce(&v, 1, fmpl_isum, h, NULL), FMPL_SUCCESS);
                CHECK_RC(fmpl_comm_size(h, &n), FMPL_SUCCESS);
                CHECK(v == i * n, "%s: allreduce %d, expected %d", what, v, i * n);
            }
        }
        if (h2 != FMPL_COMM_NULL) {
            exercise(h2, i + 1, what);
            free_comm(&h2, what);
        }
        if (h != FMPL_COMM_NULL)
            free_comm(&h, what);
        if (i % 25 == 0)
            for (r = 0; r < 3; r++)
                exercise(keep[r], i + r, "long-lived communicator");
    }
    for (r = 0; r < 3; r++) {
        exercise(keep[r], 7 + r, "long-lived communicator");
        free_comm(&keep[r], "long-lived communicator");
    }
}

static void part_limit(int limit)
{
    fmpl_comm_t *h = prog_xmalloc(sizeof *h * (size_t)(limit + 2));
    int n = 0, rc, i;
    for (;;) {
        h[n] = 4242;
        rc = fmpl_comm_create(1, &h[n]);
        if (rc != FMPL_SUCCESS)
            break;
        n++;
        CHECK(n <= limit, "%d communicators alive besides WORLD with FMPL_MAX_COMMS=%d", n,
              limit);
    }
    CHECK(rc == FMPL_ERR_LIMIT, "comm_create number %d returned %s, expected FMPL_ERR_LIMIT",
          n + 1, fmpl_error_name(rc));
    CHECK(h[n] == FMPL_COMM_NULL, "comm_create past the limit left handle %d", h[n]);
    CHECK(n == limit - 1 || n == limit, "only %d communicators (besides WORLD) with "
          "FMPL_MAX_COMMS=%d", n, limit);
    rc = fmpl_comm_split(FMPL_COMM_WORLD, 0, 0, &h[n]);
    CHECK(rc == FMPL_ERR_LIMIT, "comm_split at the limit returned %s", fmpl_error_name(rc));
    /* all still work; the failed creations did not upset anything */
    exercise(h[0], 1, "first communicator at the limit");
    exercise(h[n - 1], 2, "last communicator at the limit");
    exercise(FMPL_COMM_WORLD, 3, "WORLD at the limit");
    /* one freed: one can be created again */
    free_comm(&h[n / 2], "at the limit");
    CHECK_RC(fmpl_comm_create(1, &h[n / 2]), FMPL_SUCCESS);
    exercise(h[n / 2], 4, "re-created at the limit");
    CHECK_RC(fmpl_comm_create(1, &h[n]), FMPL_ERR_LIMIT);
    for (i = 0; i < n; i++)
        free_comm(&h[i], "at the limit");
    free(h);
}

int main(int argc, char **argv)
{
    const char *tests = "csnipfl";
    long rounds = 150, limit = 64;
    struct prog_opt opts[] = {
        {'t', OPT_STR, &tests, "parts: c s n i p f l (default all)"},
        {'F', OPT_INT, &rounds, "free/create rounds (default 150)"},
        {'L', OPT_INT, &limit, "FMPL_MAX_COMMS in effect (default 64)"},
    };
    prog_name = "coll_comm";
    prog_parse(argc, argv, opts, 3);
    prog_init("coll_comm", 3);
    CHECK(prog_np <= MAXNP, "at most %d ranks", MAXNP);
    if (strchr(tests, 'c'))
        part_create();
    if (strchr(tests, 's'))
        part_split();
    if (strchr(tests, 'n'))
        part_interleave();
    if (strchr(tests, 'i'))
        part_inflight(FMPL_COMM_WORLD, "collectives on WORLD");
    if (strchr(tests, 'p')) {
        fmpl_comm_t h;
        CHECK_RC(fmpl_comm_split(FMPL_COMM_WORLD, 0, -prog_me, &h), FMPL_SUCCESS);
        part_inflight(h, "collectives on a reversed copy of WORLD");
        free_comm(&h, "reversed copy");
    }
    if (strchr(tests, 'f'))
        part_free((int)rounds);
    if (strchr(tests, 'l'))
        part_limit((int)limit);
    return prog_finish();
}
