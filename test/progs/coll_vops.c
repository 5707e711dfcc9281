/*
 * coll_vops - the v-variants, all-to-all, reduce-scatter and the scans
 * against a serial reference.
 *
 *   coll_vops [-M MAXBYTES] [-c COMMS] [-s SEED] [-R ROUNDS] [-v] [-T] [-Z]
 *     -M  largest total of one call (default 256K): the blocks of one
 *         all-to-all per rank, the largest v-variant level, the largest
 *         reduce-scatter vector
 *     -c  communicators to run the battery on, letters of (default "wcs")
 *           w  FMPL_COMM_WORLD
 *           c  fmpl_comm_create: world ranks r with r % 3 != 1 join
 *           s  fmpl_comm_split of WORLD: color r % 2, key -r (reversed
 *              ranks); r % 5 == 4 passes FMPL_UNDEFINED
 *     -s  data seed (default 7)
 *     -R  rounds of the random mix (default 40)
 *     -v  print the time each part took
 *     -T  only the truncation case (a job of its own): an alltoallv in
 *         which one pair sends more than the receiver's recvsizes allows
 *     -Z  never pass a buffer of no bytes as NULL (by default some calls
 *         do, where nothing of it is read or written: a send buffer whose
 *         blocks are all empty, a receive buffer of 0 bytes)
 *
 * Every process computes every other member's contribution from
 * (seed, member rank, element), so it knows the expected result of each
 * call exactly; buffers are compared element by element (byte by byte
 * for the data movers) with an image of what they must hold, poison
 * bytes included.  The battery, on each communicator this rank belongs to:
 *   allgatherv  levels of block sizes (all 0; up to 13, 300, 5000 bytes;
 *               up to MAX / n), odd sizes that differ per member, some
 *               members 0 bytes; displacements in a permuted member order
 *               with gaps; the gaps and the guard bytes after the buffer
 *               must stay untouched; alternately in place
 *               (sendbuf == recvbuf + displs[rank])
 *   gatherv     the same at every root, recvbuf/sizes/displs NULL off
 *               the root; the root's sizes[] larger than some members'
 *               blocks (the bytes past a shorter block stay untouched);
 *               alternately in place at root
 *   scatterv    every root, sendbuf/sizes/displs NULL off the root; the
 *               receivers' `size` larger than their block for some; the
 *               root's send buffer unchanged; alternately in place at root
 *               (recvbuf == sendbuf + displs[root])
 *   alltoall    blocks of 0, 1, 3, 8, 24, 25, 100, 1000, 8191, 8192,
 *               8193, 65537 bytes and MAX / n, as far as n blocks fit in
 *               MAX; alternately in place (sendbuf == recvbuf)
 *   alltoallv   per-pair sizes varying (some 0), send and receive
 *               displacements permuted with gaps, recvsizes larger than
 *               what arrives for some pairs; send buffer unchanged
 *   reduce_scatter
 *               every predefined op fmpl_{i,s,d,c,z}{sum,max,min} and two
 *               user ops (a 12-byte struct: sum/max/xor; 1-byte add mod
 *               256); counts per member: all 0, small, one member only,
 *               medium and ~200 KiB in total varying (some 0), equal
 *               (1500 each, and ~200 KiB in total), MAX in all with -M
 *               above 256K (some ops); sendbuf unchanged; alternately in
 *               place (sendbuf == recvbuf)
 *   scan, exscan
 *               the same ops, counts 0, 1, 5, 1000, 40000; alternately in
 *               place; exscan on member 0 leaves recvbuf as it was
 *   repeat      scan, exscan and reduce_scatter (unequal, equal and small
 *               counts) of inexact float/double/complex sums, three times
 *               (the third in place): bitwise the same each time, close
 *               to the reference
 *   edges       one call of each kind with every buffer ending where a page
 *               without access begins (blocks of 1, 13, 4096, 70001 bytes
 *               and so): nothing read or written past a buffer
 *   mix         ROUNDS calls of these kinds with random sizes, roots and
 *               ops back to back (the same sequence on every member), each
 *               checked
 * Some calls of every kind pass buffers of no bytes as NULL (see -Z).
 * The reductions use the data of coll_ops: sums of small integers (exact
 * in float), max/min on signed data whose magnitudes (|re|+|im| for
 * complex) differ between members, so that every result is one definite
 * element with its sign, whatever the order of combination.
 *
 * -T: on WORLD, member 0 sends member n-1 more than n-1's recvsizes[0]
 * (40 bytes into 16; 70000 into 4000; 1 into 0): the receiver must get
 * FMPL_ERR_TRUNCATE, the sender FMPL_ERR_TRUNCATE or FMPL_SUCCESS, the
 * others FMPL_SUCCESS with their data right (or FMPL_ERR_TRUNCATE); no
 * hang.  Then a barrier: when it works everywhere the next case runs, and
 * last a correct alltoallv; when it does not, the job ends there (the
 * error codes were checked) with OK.
 * Point-to-point messages use matching-area index 0 (fmpl_init(1)).
 */
#include "prog.h"
#include "coll_ref.h"

#include <math.h>
#include <sys/mman.h>

#define GUARD 64
#define MAXNP 64

static size_t max_bytes = 256 << 10;
static long seed = 7;
static int verbose, trunc_only, never_null;
static long mixed_rounds = 40;

/* the communicator under test */
static fmpl_comm_t C;
static int cn, cme, ctag;        /* size, rank, battery number */
static int cwr[MAXNP];           /* world rank of each member */
static const char *cname;
static char ctx[64];             /* "mixed round 7: " or "" */
static int nullz;                /* pass buffers of no bytes as NULL */
static size_t guard_len = GUARD; /* guard bytes compare_image checks */

/* the element types of the reductions here: all of coll_ref.h's but
 * T_USERBIG */
#define NTYPES (T_USER1 + 1)

/* ------------------------------------------------------------------ */
/* helpers                                                               */
/* ------------------------------------------------------------------ */

/* the data of the reductions on the communicator under test */
static struct ref_data rdata(void)
{
    struct ref_data d = {seed, cn, 0};
    return d;
}

/* n bytes and GUARD more, all poison */
static unsigned char *gbuf(size_t n)
{
    unsigned char *b = prog_xmalloc(n + GUARD);
    memset(b, PROG_POISON, n + GUARD);
    return b;
}

static unsigned char *dup_bytes(const unsigned char *p, size_t n)
{
    unsigned char *b = prog_xmalloc(n);
    memcpy(b, p, n);
    return b;
}

/* ------------------------------------------------------------------ */
/* block layouts                                                        */
/* ------------------------------------------------------------------ */

/* The blocks of one buffer that holds a block per member: sz[i] bytes of
 * member i's data at disp[i], in a slot of slot[i] >= sz[i] bytes (the
 * size the receiver gives; the bytes past sz[i] stay untouched); gaps
 * between the slots; len bytes in all (then GUARD guard bytes). */
struct layout {
    size_t sz[MAXNP], slot[MAXNP], disp[MAXNP];
    size_t len;
};

/* Block sizes of a level: 0 for members with (i + phase) % 4 == 1 (and
 * for all when maxsz is 0), else odd sizes in 1 .. maxsz + 1 that differ
 * per member.  With `slack`, members with (i + phase) % 3 == 0 (but
 * `noslack`) get a slot 1 to 40 bytes larger than their block.  Draws
 * from g: the same on every member. */
static void make_sizes(struct layout *L, prog_rng_t *g, size_t maxsz, int phase, int slack,
                       int noslack)
{
    int i, j;
    for (i = 0; i < cn; i++) {
        size_t z = 0;
        if (maxsz > 0 && (i + phase) % 4 != 1) {
            z = 2 * prog_rng_below(g, maxsz / 2 + 1) + 1;
            for (j = 0; j < i; j++)
                if (L->sz[j] == z) {
                    z += 2;
                    j = -1;
                }
        }
        L->sz[i] = z;
        L->slot[i] = z;
        if (slack && i != noslack && (i + phase) % 3 == 0)
            L->slot[i] += 1 + prog_rng_below(g, 40);
    }
}

/* Displacements: the slots in a random order of the members (never rank
 * order when there are two or more), with gaps of 0 to 23 bytes. */
static void place(struct layout *L, prog_rng_t *g)
{
    int order[MAXNP], i, k, ident = 1;
    size_t off;
    for (i = 0; i < cn; i++)
        order[i] = i;
    for (i = cn - 1; i > 0; i--) {
        int j = (int)prog_rng_below(g, (uint64_t)i + 1), x = order[i];
        order[i] = order[j];
        order[j] = x;
    }
    for (i = 0; i < cn; i++)
        ident &= order[i] == i;
    if (ident)
        for (i = 0; i < cn; i++)
            order[i] = cn - 1 - i;
    off = prog_rng_below(g, 8);
    for (k = 0; k < cn; k++) {
        i = order[k];
        L->disp[i] = off;
        off += L->slot[i] + (k % 2 ? 1 + prog_rng_below(g, 23) : prog_rng_below(g, 5));
    }
    L->len = off + prog_rng_below(g, 7);
}

/* blocks of `size` bytes in rank order, no gaps */
static void uniform(struct layout *L, size_t size)
{
    int i;
    for (i = 0; i < cn; i++) {
        L->sz[i] = L->slot[i] = size;
        L->disp[i] = (size_t)i * size;
    }
    L->len = (size_t)cn * size;
}

/* What a buffer with layout L must hold: block i the pattern of
 * (s, i, who) (by_src: the data member i sent to `who`) or of (s, who, i)
 * (what `who` sends to i), everything else poison. */
static unsigned char *image(const struct layout *L, uint64_t s, int who, int by_src)
{
    unsigned char *b = gbuf(L->len);
    int i;
    for (i = 0; i < cn; i++)
        pat_fill(b + L->disp[i], L->sz[i], s, by_src ? i : who, by_src ? who : i);
    return b;
}

/* got[0 .. len + GUARD) must equal exp; the message says where it broke */
static void compare_image(const unsigned char *got, const unsigned char *exp,
                          const struct layout *L, const char *what, const char *which)
{
    size_t o, n = L->len + guard_len, ndiff = 0;
    char where[256];
    int i;
    if (memcmp(got, exp, n) == 0)
        return;
    for (o = 0; o < n && got[o] == exp[o]; o++)
        ;
    for (i = 0; (size_t)i < n; i++)
        ndiff += got[i] != exp[i];
    if (o >= L->len)
        snprintf(where, sizeof where, "guard byte %zu after the %zu-byte buffer", o - L->len,
                 L->len);
    else
        snprintf(where, sizeof where, "a gap between the blocks (must stay untouched)");
    for (i = 0; i < cn && o < L->len; i++) {
        if (o >= L->disp[i] && o < L->disp[i] + L->sz[i]) {
            snprintf(where, sizeof where, "byte %zu of member %d's %zu-byte block (at %zu)",
                     o - L->disp[i], i, L->sz[i], L->disp[i]);
            break;
        }
        if (o >= L->disp[i] + L->sz[i] && o < L->disp[i] + L->slot[i]) {
            snprintf(where, sizeof where, "byte %zu past the end of member %d's %zu-byte "
                     "block (at %zu), inside its %zu-byte slot (must stay untouched)",
                     o - L->disp[i] - L->sz[i], i, L->sz[i], L->disp[i], L->slot[i]);
            break;
        }
    }
    prog_fail(__FILE__, __LINE__, "%s%s on %s (rank %d of %d, world %d): %s: offset %zu, %s: "
              "got 0x%02x, expected 0x%02x (%zu bytes differ)", ctx, what, cname, cme, cn,
              prog_me, which, o, where, got[o], exp[o], ndiff);
}

/* [p, p+n) still all poison */
static void check_untouched(const unsigned char *p, size_t n, const char *what, const char *which)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (p[i] != PROG_POISON)
            prog_fail(__FILE__, __LINE__, "%s%s on %s (rank %d of %d, world %d): %s: byte %zu "
                      "of %zu was overwritten (0x%02x, expected 0x%02x)", ctx, what, cname, cme,
                      cn, prog_me, which, i, n, p[i], PROG_POISON);
}

static void check_rc(int rc, const char *what)
{
    if (rc != FMPL_SUCCESS)
        prog_fail(__FILE__, __LINE__, "%s%s on %s (rank %d of %d) returned %d %s (%s)", ctx,
                  what, cname, cme, cn, rc, fmpl_error_name(rc), fmpl_strerror(rc));
}

/* the sizes of the v-variant levels */
#define NLEV 5
static size_t level_max(int lev)
{
    static const size_t m[NLEV - 1] = {0, 13, 300, 5000};
    size_t big = max_bytes / (size_t)cn;
    if (lev < NLEV - 1)
        return m[lev] < big ? m[lev] : big;
    return big;
}

/* ------------------------------------------------------------------ */
/* allgatherv, gatherv, scatterv                                        */
/* ------------------------------------------------------------------ */

/* buf, or NULL with nullz when nothing of it is read or written */
static void *nz(void *buf, int empty)
{
    return nullz && empty && !never_null ? NULL : buf;
}

static int all_zero(const size_t *a)
{
    int i;
    for (i = 0; i < cn; i++)
        if (a[i])
            return 0;
    return 1;
}

static void do_allgatherv(uint64_t s, size_t maxsz, int inplace, int phase)
{
    struct layout L;
    prog_rng_t g;
    unsigned char *exp, *rb, *sb = NULL;
    char what[160];
    int rc;

    prog_rng_seed(&g, s);
    make_sizes(&L, &g, maxsz, phase, 0, -1);
    place(&L, &g);
    snprintf(what, sizeof what, "fmpl_allgatherv(blocks up to %zu bytes, %zu here%s%s)", maxsz,
             L.sz[cme], inplace ? ", in place" : "", nullz ? ", empty buffers NULL" : "");
    exp = image(&L, s, 0, 1);
    rb = gbuf(L.len);
    if (inplace) {
        pat_fill(rb + L.disp[cme], L.sz[cme], s, cme, 0);
        rc = fmpl_allgatherv(rb + L.disp[cme], L.sz[cme], rb, L.sz, L.disp, C);
    } else {
        sb = gbuf(L.sz[cme]);
        pat_fill(sb, L.sz[cme], s, cme, 0);
        rc = fmpl_allgatherv(nz(sb, !L.sz[cme]), L.sz[cme], nz(rb, all_zero(L.sz)), L.sz, L.disp,
                             C);
    }
    check_rc(rc, what);
    compare_image(rb, exp, &L, what, "receive buffer");
    if (sb) {
        long off = pat_find_error(sb, L.sz[cme], s, cme, 0);
        CHECK(off < 0, "%s%s on %s: the send buffer changed at byte %ld", ctx, what, cname, off);
        check_untouched(sb + L.sz[cme], GUARD, what, "the guard bytes after the send buffer");
    }
    free(exp);
    free(rb);
    free(sb);
}

static void do_gatherv(uint64_t s, size_t maxsz, int root, int inplace, int phase)
{
    struct layout L;
    prog_rng_t g;
    unsigned char *exp = NULL, *rb = NULL, *sb = NULL;
    char what[160];
    int rc;

    prog_rng_seed(&g, s);
    /* the root's sizes[] larger than some members' blocks (not its own
     * in place: its data is already there) */
    make_sizes(&L, &g, maxsz, phase, 1, inplace ? root : -1);
    place(&L, &g);
    snprintf(what, sizeof what, "fmpl_gatherv(root %d, blocks up to %zu bytes, %zu here%s%s)",
             root, maxsz, L.sz[cme], inplace && cme == root ? ", in place" : "",
             nullz ? ", empty buffers NULL" : "");
    if (cme == root) {
        exp = image(&L, s, 0, 1);
        rb = gbuf(L.len);
    }
    if (inplace && cme == root) {
        pat_fill(rb + L.disp[cme], L.sz[cme], s, cme, 0);
        rc = fmpl_gatherv(rb + L.disp[cme], L.sz[cme], rb, L.slot, L.disp, root, C);
    } else {
        sb = gbuf(L.sz[cme]);
        pat_fill(sb, L.sz[cme], s, cme, 0);
        if (cme == root)
            rc = fmpl_gatherv(nz(sb, !L.sz[cme]), L.sz[cme], nz(rb, all_zero(L.slot)), L.slot,
                              L.disp, root, C);
        else
            rc = fmpl_gatherv(nz(sb, !L.sz[cme]), L.sz[cme], NULL, NULL, NULL, root, C);
    }
    check_rc(rc, what);
    if (cme == root)
        compare_image(rb, exp, &L, what, "root's receive buffer");
    if (sb) {
        long off = pat_find_error(sb, L.sz[cme], s, cme, 0);
        CHECK(off < 0, "%s%s on %s: the send buffer changed at byte %ld", ctx, what, cname, off);
        check_untouched(sb + L.sz[cme], GUARD, what, "the guard bytes after the send buffer");
    }
    free(exp);
    free(rb);
    free(sb);
}

static void do_scatterv(uint64_t s, size_t maxsz, int root, int inplace, int phase)
{
    struct layout L;
    prog_rng_t g;
    unsigned char *exp = NULL, *sb = NULL, *rb = NULL;
    char what[160];
    int rc;

    prog_rng_seed(&g, s);
    /* slot[i]: member i's receive size, larger than its block for some */
    make_sizes(&L, &g, maxsz, phase, 1, inplace ? root : -1);
    place(&L, &g);
    snprintf(what, sizeof what, "fmpl_scatterv(root %d, blocks up to %zu bytes, %zu of %zu "
             "here%s%s)", root, maxsz, L.sz[cme], L.slot[cme],
             inplace && cme == root ? ", in place" : "", nullz ? ", empty buffers NULL" : "");
    if (cme == root) {
        exp = image(&L, s, 0, 1);
        sb = dup_bytes(exp, L.len + GUARD);
    }
    if (inplace && cme == root) {
        rc = fmpl_scatterv(sb, L.sz, L.disp, sb + L.disp[root], L.sz[root], root, C);
    } else {
        rb = gbuf(L.slot[cme]);
        if (cme == root)
            rc = fmpl_scatterv(nz(sb, all_zero(L.sz)), L.sz, L.disp, nz(rb, !L.slot[cme]),
                               L.slot[cme], root, C);
        else
            rc = fmpl_scatterv(NULL, NULL, NULL, nz(rb, !L.slot[cme]), L.slot[cme], root, C);
    }
    check_rc(rc, what);
    if (cme == root)   /* the whole send buffer unchanged, our block included */
        compare_image(sb, exp, &L, what, "root's send buffer");
    if (rb) {
        long off = pat_find_error(rb, L.sz[cme], s, cme, 0);
        CHECK(off < 0, "%s%s on %s (rank %d of %d): byte %ld of the block received is 0x%02x, "
              "expected 0x%02x", ctx, what, cname, cme, cn, off, rb[off < 0 ? 0 : off],
              pat_byte(s, cme, 0, (size_t)(off < 0 ? 0 : off)));
        check_untouched(rb + L.sz[cme], L.slot[cme] - L.sz[cme] + GUARD, what,
                        "the bytes after the block received (rest of the receive buffer, "
                        "then its guard)");
    }
    free(exp);
    free(sb);
    free(rb);
}

static void test_allgatherv(void)
{
    int lev, inplace;
    for (lev = 0; lev < NLEV; lev++)
        for (inplace = 0; inplace < 2; inplace++) {
            nullz = (lev + inplace) % 3 == 0;
            do_allgatherv(hash4((uint64_t)seed, 20, (uint64_t)(lev * 2 + inplace), (uint64_t)ctag),
                          level_max(lev), inplace, lev + inplace);
        }
    nullz = 0;
}

static void test_gatherv(void)
{
    int lev, root;
    for (lev = 0; lev < NLEV; lev++)
        for (root = 0; root < cn; root++) {
            nullz = (lev + root) % 3 == 1;
            do_gatherv(hash4((uint64_t)seed, 21, (uint64_t)(lev * MAXNP + root), (uint64_t)ctag),
                       level_max(lev), root, (lev + root) % 2, lev + root);
        }
    nullz = 0;
}

static void test_scatterv(void)
{
    int lev, root;
    for (lev = 0; lev < NLEV; lev++)
        for (root = 0; root < cn; root++) {
            nullz = (lev + root) % 3 == 2;
            do_scatterv(hash4((uint64_t)seed, 22, (uint64_t)(lev * MAXNP + root), (uint64_t)ctag),
                        level_max(lev), root, (lev + root + 1) % 2, lev + root + 2);
        }
    nullz = 0;
}

/* ------------------------------------------------------------------ */
/* alltoall, alltoallv                                                  */
/* ------------------------------------------------------------------ */

static void do_alltoall(uint64_t s, size_t size, int inplace)
{
    struct layout L;
    unsigned char *exp_r, *exp_s, *rb, *sb = NULL;
    char what[128];
    int rc;

    uniform(&L, size);
    snprintf(what, sizeof what, "fmpl_alltoall(%zu bytes%s)", size, inplace ? ", in place" : "");
    exp_r = image(&L, s, cme, 1);
    exp_s = image(&L, s, cme, 0);
    rb = gbuf(L.len);
    if (inplace) {
        memcpy(rb, exp_s, L.len);
        rc = fmpl_alltoall(L.len ? rb : NULL, size, L.len ? rb : NULL, C);
    } else {
        sb = dup_bytes(exp_s, L.len + GUARD);
        rc = fmpl_alltoall(sb, size, rb, C);
    }
    check_rc(rc, what);
    compare_image(rb, exp_r, &L, what, inplace ? "the buffer" : "receive buffer");
    if (sb)
        compare_image(sb, exp_s, &L, what, "send buffer (must not change)");
    free(exp_r);
    free(exp_s);
    free(rb);
    free(sb);
}

/* alltoallv: what member i sends member j, and the slack j's recvsizes
 * give beyond it */
static size_t a2av_size(uint64_t s, size_t maxsz, int i, int j)
{
    uint64_t h = hash4(s, 77, (uint64_t)i, (uint64_t)j);
    if (maxsz == 0 || h % 4 == 0)
        return 0;
    return (size_t)((h >> 8) % (maxsz + 1));
}

static size_t a2av_slack(uint64_t s, int i, int j)
{
    uint64_t h = hash4(s, 78, (uint64_t)i, (uint64_t)j);
    return h % 3 == 0 ? (size_t)(1 + (h >> 8) % 50) : 0;
}

/* Layouts of one alltoallv on this member: Ls its send buffer, Lr its
 * receive buffer (each member places its own blocks). */
static void a2av_layouts(uint64_t s, size_t maxsz, struct layout *Ls, struct layout *Lr)
{
    prog_rng_t g;
    int i;
    for (i = 0; i < cn; i++) {
        Ls->sz[i] = Ls->slot[i] = a2av_size(s, maxsz, cme, i);
        Lr->sz[i] = a2av_size(s, maxsz, i, cme);
        Lr->slot[i] = Lr->sz[i] + a2av_slack(s, i, cme);
    }
    prog_rng_seed(&g, hash4(s, 79, (uint64_t)cme, 0));
    place(Ls, &g);
    prog_rng_seed(&g, hash4(s, 80, (uint64_t)cme, 0));
    place(Lr, &g);
}

static void do_alltoallv(uint64_t s, size_t maxsz)
{
    struct layout Ls, Lr;
    unsigned char *exp_r, *exp_s, *rb, *sb;
    char what[128];
    size_t tot = 0;
    int i;

    a2av_layouts(s, maxsz, &Ls, &Lr);
    for (i = 0; i < cn; i++)
        tot += Lr.sz[i];
    snprintf(what, sizeof what, "fmpl_alltoallv(blocks up to %zu bytes, %zu received here%s)",
             maxsz, tot, nullz ? ", empty buffers NULL" : "");
    exp_r = image(&Lr, s, cme, 1);
    exp_s = image(&Ls, s, cme, 0);
    rb = gbuf(Lr.len);
    sb = dup_bytes(exp_s, Ls.len + GUARD);
    check_rc(fmpl_alltoallv(nz(sb, all_zero(Ls.sz)), Ls.sz, Ls.disp, nz(rb, all_zero(Lr.slot)),
                            Lr.slot, Lr.disp, C), what);
    compare_image(rb, exp_r, &Lr, what, "receive buffer");
    compare_image(sb, exp_s, &Ls, what, "send buffer (must not change)");
    free(exp_r);
    free(exp_s);
    free(rb);
    free(sb);
}

static void test_alltoall(void)
{
    static const size_t sizes[] = {0, 1, 3, 8, 24, 25, 100, 1000, 8191, 8192, 8193, 65537};
    size_t big = max_bytes / (size_t)cn;
    unsigned i, k = 0;
    for (i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        if (sizes[i] > big)
            continue;
        do_alltoall(hash4((uint64_t)seed, 30, sizes[i], (uint64_t)ctag), sizes[i], k % 2);
        k++;
        do_alltoall(hash4((uint64_t)seed, 31, sizes[i], (uint64_t)ctag), sizes[i], k % 2);
    }
    /* the largest that fits, odd, both ways */
    {
        size_t b = big % 2 ? big : big - 1;
        if (b > 1000 && b != 8191 && b != 8193 && b != 65537) {
            do_alltoall(hash4((uint64_t)seed, 32, b, (uint64_t)ctag), b, 0);
            do_alltoall(hash4((uint64_t)seed, 33, b, (uint64_t)ctag), b, 1);
        }
    }
}

static void test_alltoallv(void)
{
    int lev, k;
    for (lev = 0; lev < NLEV; lev++)
        for (k = 0; k < 2; k++) {
            nullz = k == 1;
            do_alltoallv(hash4((uint64_t)seed, 40, (uint64_t)(lev * 2 + k), (uint64_t)ctag),
                         level_max(lev));
        }
    nullz = 0;
}

/* ------------------------------------------------------------------ */
/* reductions                                                           */
/* ------------------------------------------------------------------ */

static void compare_result(const unsigned char *got, const unsigned char *ref, int t, long count,
                           long first, const char *what, const char *which)
{
    long ndiff, i = ref_first_diff(got, ref, t, count, &ndiff);
    char g[128], w[128];
    if (i < 0)
        return;
    describe_elem(g, sizeof g, got, t, i);
    describe_elem(w, sizeof w, ref, t, i);
    prog_fail(__FILE__, __LINE__, "%s%s on %s (rank %d of %d, world %d): %s: element %ld of %ld "
              "(element %ld of the whole vector) is %s, expected %s (%ld elements differ)", ctx,
              what, cname, cme, cn, prog_me, which, i, count, first + i, g, w, ndiff);
}

static int ops_next(int *t, int *k)
{
    /* (t, k) over the predefined ops and the user ops; 0 past the end */
    if (*t >= T_USER12) {
        (*t)++;
        *k = K_USER;
        return *t < NTYPES;
    }
    if (++*k < 3)
        return 1;
    *k = 0;
    (*t)++;
    if (*t >= T_USER12)
        *k = K_USER;
    return *t < NTYPES;
}
#define FOR_OPS(t, k) for (t = 0, k = 0; t < NTYPES; ops_next(&t, &k))

static void do_reduce_scatter(int t, int k, const int counts[], int inplace, int nullz,
                              const char *kind)
{
    size_t es = tsize[t];
    long total = 0, first = 0, mine = counts[cme];
    unsigned char *sb, *rb, *ref, *chk;
    struct ref_data d = rdata();
    char what[192];
    int i;

    for (i = 0; i < cn; i++) {
        if (i < cme)
            first += counts[i];
        total += counts[i];
    }
    snprintf(what, sizeof what, "fmpl_reduce_scatter(op %s%s = %d, %s counts, %ld in all, %ld "
             "here%s)", tname[t], kname[k], op_of(t, k), kind, total, mine,
             inplace ? ", in place" : "");
    sb = gbuf((size_t)total * es);
    ref_fill(&d, sb, t, k, cme, 0, total);
    ref = prog_xmalloc((size_t)mine * es + 1);
    ref_reduce(&d, ref, t, k, first, mine, cn);
    rb = inplace ? sb : gbuf((size_t)mine * es);
    check_rc(fmpl_reduce_scatter(total || !nullz ? sb : NULL,
                                 inplace ? (total || !nullz ? sb : NULL) : (mine || !nullz ? rb : NULL),
                                 counts, op_of(t, k), C), what);
    compare_result(rb, ref, t, mine, first, what, "the block received");
    check_untouched(sb + (size_t)total * es, GUARD, what, "the guard bytes after the send buffer");
    if (!inplace) {
        check_untouched(rb + (size_t)mine * es, GUARD, what,
                        "the guard bytes after the receive buffer");
        chk = prog_xmalloc((size_t)total * es + 1);
        ref_fill(&d, chk, t, k, cme, 0, total);
        compare_result(sb, chk, t, total, 0, what, "the send buffer (must not change)");
        free(chk);
        free(rb);
    }
    free(sb);
    free(ref);
}

/* counts of kind `kind` for elements of es bytes:
 *   0 all 0;  1 small (1..6, every third member 0);  2 one member only;
 *   3 medium (~3000 elements in all, some 0);  4 large (~200 KiB, or MAX
 *   when smaller, some 0);  5 equal (1500 each: more than the small
 *   path's 8 KiB);  6 equal and large (~200 KiB in all);  7 MAX in all
 *   (some 0).  Equal counts with n a power of two take recursive halving,
 *   unequal ones the pairwise exchange, up to 8 KiB an allreduce. */
#define NCOUNTKINDS 8
static const char *count_kind_name[NCOUNTKINDS] = {"all-0", "small", "one-member", "medium",
                                                   "large", "equal", "equal-large", "max"};
static void make_counts(int *counts, int kind, size_t es, uint64_t s)
{
    long target = 0, wsum = 0, w[MAXNP], sum = 0;
    int i;
    for (i = 0; i < cn; i++) {
        uint64_t h = hash4(s, 90, (uint64_t)kind, (uint64_t)i);
        counts[i] = 0;
        switch (kind) {
        case 1: counts[i] = (i % 3 == 1) ? 0 : 1 + (int)(h % 6); break;
        case 2: counts[i] = i == (cn - 1) / 2 ? 7 : 0; break;
        case 5: counts[i] = 1500; break;
        case 6:
            counts[i] = (int)((max_bytes < (200 << 10) ? max_bytes : (200 << 10)) / es /
                              (size_t)cn);
            break;
        default: break;
        }
        w[i] = (cn > 1 && i % 4 == 1) ? 0 : 1 + (long)(h % 5);
        wsum += w[i];
    }
    if (kind == 3)
        target = 3000;
    else if (kind == 4)
        target = (long)((max_bytes < (200 << 10) ? max_bytes : (200 << 10)) / es);
    else if (kind == 7)
        target = (long)(max_bytes / es);
    if (kind == 3 || kind == 4 || kind == 7) {
        for (i = 0; i < cn; i++) {
            counts[i] = (int)(target * w[i] / wsum);
            sum += counts[i];
        }
        /* the rest to the last member with a weight: the total exact */
        for (i = cn - 1; i >= 0; i--)
            if (w[i]) {
                counts[i] += (int)(target - sum);
                break;
            }
    }
}

static void test_reduce_scatter(void)
{
    int t, k, kind, counts[MAXNP];
    FOR_OPS(t, k) {
        for (kind = 0; kind < NCOUNTKINDS; kind++) {
            /* MAX in all: beyond 256K only, and for some ops */
            if (kind == 7 && (max_bytes <= (256 << 10) ||
                              !((t == T_DOUBLE && k == K_SUM) || (t == T_CDOUBLE && k == K_MAX) ||
                                (t == T_INT && k == K_MIN) || t == T_USER12)))
                continue;
            make_counts(counts, kind, tsize[t], hash4((uint64_t)seed, 50, (uint64_t)t,
                                                      (uint64_t)ctag));
            do_reduce_scatter(t, k, counts, (t + k + kind) % 2, (t + kind) % 3 == 0,
                              count_kind_name[kind]);
        }
    }
}

static void do_scan(int t, int k, long count, int ex, int inplace, int nullz)
{
    size_t es = tsize[t], bytes = (size_t)count * es;
    unsigned char *sb, *rb, *ref, *before, *chk;
    const char *fn = ex ? "fmpl_exscan" : "fmpl_scan";
    char what[160];
    int upto = ex ? cme : cme + 1, rc;
    struct ref_data d = rdata();

    snprintf(what, sizeof what, "%s(op %s%s = %d, count %ld%s)", fn, tname[t], kname[k],
             op_of(t, k), count, inplace ? ", in place" : "");
    sb = gbuf(bytes);
    ref_fill(&d, sb, t, k, cme, 0, count);
    if (inplace) {
        rb = sb;
    } else {
        rb = gbuf(bytes);
        pat_fill(rb, bytes, hash4((uint64_t)seed, 60, (uint64_t)count, (uint64_t)ctag), cme, 3);
    }
    before = dup_bytes(rb, bytes + 1);
    ref = prog_xmalloc(bytes + 1);
    if (upto > 0)
        ref_reduce(&d, ref, t, k, 0, count, upto);
    else
        memcpy(ref, before, bytes);
    if (ex)
        rc = fmpl_exscan(count || !nullz ? sb : NULL, count || !nullz ? rb : NULL, (int)count,
                         op_of(t, k), C);
    else
        rc = fmpl_scan(count || !nullz ? sb : NULL, count || !nullz ? rb : NULL, (int)count,
                       op_of(t, k), C);
    check_rc(rc, what);
    compare_result(rb, ref, t, count, 0, what,
                   upto > 0 ? "the prefix reduction"
                            : "member 0's recvbuf (must be left as it was)");
    check_untouched(rb + bytes, GUARD, what, "the guard bytes after the receive buffer");
    if (!inplace) {
        check_untouched(sb + bytes, GUARD, what, "the guard bytes after the send buffer");
        chk = prog_xmalloc(bytes + 1);
        ref_fill(&d, chk, t, k, cme, 0, count);
        compare_result(sb, chk, t, count, 0, what, "the send buffer (must not change)");
        free(chk);
        free(rb);
    }
    free(sb);
    free(before);
    free(ref);
}

static void test_scan(void)
{
    static const long counts[] = {0, 1, 5, 1000, 40000};
    int t, k, ci, ex;
    FOR_OPS(t, k)
        for (ci = 0; ci < 5; ci++)
            for (ex = 0; ex < 2; ex++)
                do_scan(t, k, counts[ci], ex, (t + k + ci + ex) % 2, (t + k) % 2);
}

/* Inexact sums: random values of wildly different magnitudes
 * (ref_inexact).  Each element is combined in one fixed order, so a call
 * repeated with the same data gives bitwise the same result (in place
 * too), close to the reference. */

/* got: components c0 .. c0+n-1 of the sum over members 0 .. upto-1 */
static void inexact_check(const unsigned char *got, int t, size_t c0, size_t n, int upto,
                          const char *what)
{
    struct ref_data d = rdata();
    size_t c;
    for (c = 0; c < n; c++) {
        double tol, ref = ref_inexact_sum(&d, t, c0 + c, upto, &tol);
        double g = ref_component(got, t, c);
        if (!(fabs(g - ref) <= tol))
            prog_fail(__FILE__, __LINE__, "%s on %s (rank %d of %d, world %d): component %zu "
                      "(of the whole vector) is %.17g, the reference %.17g (tolerance %g)", what,
                      cname, cme, cn, prog_me, c0 + c, g, ref, tol);
    }
}

static void same_bits(const unsigned char *a, const unsigned char *b, size_t n, int t,
                      const char *what, const char *which)
{
    long e = ref_first_diff(a, b, t, (long)(n / tsize[t]), NULL);
    char x[128], y[128];
    if (e < 0)
        return;
    describe_elem(x, sizeof x, a, t, e);
    describe_elem(y, sizeof y, b, t, e);
    prog_fail(__FILE__, __LINE__, "%s on %s (rank %d of %d, world %d): %s: element %ld is %s "
              "the first time, %s the second: not bitwise the same", what, cname, cme, cn,
              prog_me, which, e, x, y);
}

static void test_repeat(void)
{
    int t, ex, ki, counts[MAXNP];
    static const int kinds[] = {3, 5, 1};
    struct ref_data d = rdata();
    for (t = T_FLOAT; t <= T_CDOUBLE; t++) {
        size_t es = tsize[t], per = es / (single_prec(t) ? 4 : 8);
        fmpl_op_t op = op_of(t, K_SUM);
        long count = 3000, total, first, mine;
        size_t bytes = (size_t)count * es;
        unsigned char *sb, *r1, *r2, *r3;
        char what[128];
        int i;
        for (ex = 0; ex < 2; ex++) {
            snprintf(what, sizeof what, "%s(%ssum, count %ld) of inexact data",
                     ex ? "fmpl_exscan" : "fmpl_scan", tname[t], count);
            sb = gbuf(bytes);
            ref_inexact_fill(&d, sb, t, cme, 0, (size_t)count * per);
            r1 = gbuf(bytes);
            r2 = gbuf(bytes);
            r3 = dup_bytes(sb, bytes + GUARD);
            check_rc((ex ? fmpl_exscan : fmpl_scan)(sb, r1, (int)count, op, C), what);
            check_rc((ex ? fmpl_exscan : fmpl_scan)(sb, r2, (int)count, op, C), what);
            check_rc((ex ? fmpl_exscan : fmpl_scan)(r3, r3, (int)count, op, C), what);
            if (!ex || cme > 0) {
                inexact_check(r1, t, 0, (size_t)count * per, ex ? cme : cme + 1, what);
                same_bits(r1, r2, bytes, t, what, "called twice");
                same_bits(r1, r3, bytes, t, what, "called again in place");
            }
            free(sb);
            free(r1);
            free(r2);
            free(r3);
        }
        for (ki = 0; ki < 3; ki++) {
            make_counts(counts, kinds[ki], es, hash4((uint64_t)seed, 56, (uint64_t)t,
                                                     (uint64_t)ctag));
            for (i = 0, total = 0, first = 0; i < cn; i++) {
                first += i < cme ? counts[i] : 0;
                total += counts[i];
            }
            mine = counts[cme];
            snprintf(what, sizeof what, "fmpl_reduce_scatter(%ssum, %s counts, %ld in all, %ld "
                     "here) of inexact data", tname[t], count_kind_name[kinds[ki]], total, mine);
            sb = gbuf((size_t)total * es);
            ref_inexact_fill(&d, sb, t, cme, 0, (size_t)total * per);
            r1 = gbuf((size_t)mine * es);
            r2 = gbuf((size_t)mine * es);
            r3 = dup_bytes(sb, (size_t)total * es + GUARD);
            check_rc(fmpl_reduce_scatter(sb, r1, counts, op, C), what);
            check_rc(fmpl_reduce_scatter(sb, r2, counts, op, C), what);
            check_rc(fmpl_reduce_scatter(r3, r3, counts, op, C), what);
            inexact_check(r1, t, (size_t)first * per, (size_t)mine * per, cn, what);
            same_bits(r1, r2, (size_t)mine * es, t, what, "called twice");
            same_bits(r1, r3, (size_t)mine * es, t, what, "called again in place");
            free(sb);
            free(r1);
            free(r2);
            free(r3);
        }
    }
}

/* ------------------------------------------------------------------ */
/* buffers that end where a page without access begins                  */
/* ------------------------------------------------------------------ */

/* n bytes (poison) right before a PROT_NONE page: a call that reads or
 * writes past a buffer faults (or, through cross-memory attach, fails) */
static unsigned char *edge_alloc(size_t n)
{
    size_t pg = (size_t)sysconf(_SC_PAGESIZE), body = (n + pg - 1) / pg * pg + pg;
    unsigned char *m = mmap(NULL, body + pg, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(m != MAP_FAILED, "mmap(%zu): %s", body + pg, strerror(errno));
    CHECK(mprotect(m + body, pg, PROT_NONE) == 0, "mprotect: %s", strerror(errno));
    memset(m, PROG_POISON, body);
    return m + body - n;
}

static void edge_free(unsigned char *p, size_t n)
{
    size_t pg = (size_t)sysconf(_SC_PAGESIZE), body = (n + pg - 1) / pg * pg + pg;
    munmap(p + n - body, body + pg);
}

/* blocks packed without gaps, member n-1's first, member 0's last (its
 * block ends the buffer) */
static void packed(struct layout *L)
{
    size_t off = 0;
    int i;
    for (i = cn - 1; i >= 0; i--) {
        L->slot[i] = L->sz[i];
        L->disp[i] = off;
        off += L->sz[i];
    }
    L->len = off;
}

/* One call of each kind with every buffer ending at a page without
 * access, blocks of m bytes and so (some 0). */
static void test_edges(void)
{
    static const size_t sizes[] = {1, 13, 4096, 70001};
    unsigned k;
    int i, root;
    guard_len = 0;
    for (k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        size_t m = sizes[k] <= max_bytes / (size_t)cn ? sizes[k] : 1;
        uint64_t s = hash4((uint64_t)seed, 95, k, (uint64_t)ctag);
        struct layout L, Ls, Lr;
        unsigned char *exp, *exp2, *sb, *rb;
        char what[128];
        long off;
        root = (int)(k % (unsigned)cn);
        for (i = 0; i < cn; i++)
            L.sz[i] = i % 3 == 1 ? 0 : m + (size_t)i;
        packed(&L);
        exp = image(&L, s, 0, 1);

        snprintf(what, sizeof what, "fmpl_allgatherv(blocks of %zu.., at the end of a page)", m);
        sb = edge_alloc(L.sz[cme]);
        pat_fill(sb, L.sz[cme], s, cme, 0);
        rb = edge_alloc(L.len);
        check_rc(fmpl_allgatherv(sb, L.sz[cme], rb, L.sz, L.disp, C), what);
        compare_image(rb, exp, &L, what, "receive buffer");
        edge_free(rb, L.len);

        snprintf(what, sizeof what, "fmpl_gatherv(root %d, blocks of %zu.., at the end of a "
                 "page)", root, m);
        rb = cme == root ? edge_alloc(L.len) : NULL;
        check_rc(fmpl_gatherv(sb, L.sz[cme], rb, cme == root ? L.sz : NULL,
                              cme == root ? L.disp : NULL, root, C), what);
        if (rb) {
            compare_image(rb, exp, &L, what, "root's receive buffer");
            edge_free(rb, L.len);
        }
        edge_free(sb, L.sz[cme]);

        snprintf(what, sizeof what, "fmpl_scatterv(root %d, blocks of %zu.., at the end of a "
                 "page)", root, m);
        sb = NULL;
        if (cme == root) {
            sb = edge_alloc(L.len);
            memcpy(sb, exp, L.len);
        }
        rb = edge_alloc(L.sz[cme]);
        check_rc(fmpl_scatterv(sb, cme == root ? L.sz : NULL, cme == root ? L.disp : NULL, rb,
                               L.sz[cme], root, C), what);
        off = pat_find_error(rb, L.sz[cme], s, cme, 0);
        CHECK(off < 0, "%s on %s (rank %d of %d): byte %ld of the block received wrong", what,
              cname, cme, cn, off);
        edge_free(rb, L.sz[cme]);
        if (sb) {
            compare_image(sb, exp, &L, what, "root's send buffer");
            edge_free(sb, L.len);
        }
        free(exp);

        snprintf(what, sizeof what, "fmpl_alltoall(%zu bytes, at the end of a page)", m);
        uniform(&Lr, m);
        exp = image(&Lr, s, cme, 0);
        exp2 = image(&Lr, s, cme, 1);
        sb = edge_alloc(Lr.len);
        memcpy(sb, exp, Lr.len);
        rb = edge_alloc(Lr.len);
        check_rc(fmpl_alltoall(sb, m, rb, C), what);
        compare_image(rb, exp2, &Lr, what, "receive buffer");
        compare_image(sb, exp, &Lr, what, "send buffer (must not change)");
        edge_free(sb, Lr.len);
        edge_free(rb, Lr.len);
        free(exp);
        free(exp2);

        snprintf(what, sizeof what, "fmpl_alltoallv(blocks up to %zu bytes, at the end of a "
                 "page)", m);
        for (i = 0; i < cn; i++) {
            Ls.sz[i] = a2av_size(s, m, cme, i);
            Lr.sz[i] = a2av_size(s, m, i, cme);
        }
        packed(&Ls);
        packed(&Lr);
        exp = image(&Ls, s, cme, 0);
        exp2 = image(&Lr, s, cme, 1);
        sb = edge_alloc(Ls.len);
        memcpy(sb, exp, Ls.len);
        rb = edge_alloc(Lr.len);
        check_rc(fmpl_alltoallv(sb, Ls.sz, Ls.disp, rb, Lr.sz, Lr.disp, C), what);
        compare_image(rb, exp2, &Lr, what, "receive buffer");
        compare_image(sb, exp, &Ls, what, "send buffer (must not change)");
        edge_free(sb, Ls.len);
        edge_free(rb, Lr.len);
        free(exp);
        free(exp2);

        /* reductions: m / 8 + 1 doubles a member, scans and reduce_scatter */
        {
            int counts[MAXNP], ex;
            long count = (long)(m / 8 + 1), total = 0, first = 0, mine;
            unsigned char *ref;
            struct ref_data d = rdata();
            for (i = 0; i < cn; i++) {
                counts[i] = i % 3 == 1 ? 0 : (int)count + i;
                first += i < cme ? counts[i] : 0;
                total += counts[i];
            }
            mine = counts[cme];
            snprintf(what, sizeof what, "fmpl_reduce_scatter(dsum, %ld doubles in all, %ld here, "
                     "at the end of a page)", total, mine);
            sb = edge_alloc((size_t)total * 8);
            ref_fill(&d, sb, T_DOUBLE, K_SUM, cme, 0, total);
            rb = edge_alloc((size_t)mine * 8);
            ref = prog_xmalloc((size_t)(total > 2 * count ? total : 2 * count) * 8 + 1);
            check_rc(fmpl_reduce_scatter(sb, rb, counts, fmpl_dsum, C), what);
            ref_reduce(&d, ref, T_DOUBLE, K_SUM, first, mine, cn);
            compare_result(rb, ref, T_DOUBLE, mine, first, what, "the block received");
            ref_fill(&d, ref, T_DOUBLE, K_SUM, cme, 0, total);
            compare_result(sb, ref, T_DOUBLE, total, 0, what, "the send buffer (must not change)");
            edge_free(sb, (size_t)total * 8);
            edge_free(rb, (size_t)mine * 8);
            for (ex = 0; ex < 2; ex++) {
                snprintf(what, sizeof what, "%s(zmax, count %ld, at the end of a page)",
                         ex ? "fmpl_exscan" : "fmpl_scan", count);
                sb = edge_alloc((size_t)count * 16);
                ref_fill(&d, sb, T_CDOUBLE, K_MAX, cme, 0, count);
                rb = edge_alloc((size_t)count * 16);
                check_rc((ex ? fmpl_exscan : fmpl_scan)(sb, rb, (int)count, fmpl_zmax, C), what);
                if (!ex || cme > 0) {
                    ref_reduce(&d, ref, T_CDOUBLE, K_MAX, 0, count, ex ? cme : cme + 1);
                    compare_result(rb, ref, T_CDOUBLE, count, 0, what, "the prefix reduction");
                } else {
                    check_untouched(rb, (size_t)count * 16, what,
                                    "member 0's recvbuf (must be left as it was)");
                }
                edge_free(sb, (size_t)count * 16);
                edge_free(rb, (size_t)count * 16);
            }
            free(ref);
        }
    }
    guard_len = GUARD;
}

/* ------------------------------------------------------------------ */
/* a random mix, back to back                                           */
/* ------------------------------------------------------------------ */

static void test_mixed(int rounds)
{
    static const size_t sizes[] = {0, 1, 13, 300, 5000, 65537};
    static const long scounts[] = {0, 1, 5, 1000, 3000};
    prog_rng_t g;
    int i, counts[MAXNP];
    size_t big = max_bytes / (size_t)cn;
    prog_rng_seed(&g, (uint64_t)seed * 1000003u + (uint64_t)ctag * 31u + (uint64_t)cn);
    for (i = 0; i < rounds; i++) {
        int kind = (int)prog_rng_below(&g, 8), root = (int)prog_rng_below(&g, (uint64_t)cn);
        int inplace = (int)prog_rng_below(&g, 2), phase = (int)prog_rng_below(&g, 12);
        int t = (int)prog_rng_below(&g, NTYPES), k = (int)prog_rng_below(&g, 3);
        size_t size = sizes[prog_rng_below(&g, 6)];
        long count = scounts[prog_rng_below(&g, 5)];
        static const int ckinds[] = {0, 1, 2, 3, 5};
        int ckind = ckinds[prog_rng_below(&g, 5)];
        uint64_t s = hash4((uint64_t)seed, 5000, (uint64_t)i, (uint64_t)ctag);
        if (size > big)
            size = big;
        if (t >= T_USER12)
            k = K_USER;
        snprintf(ctx, sizeof ctx, "mixed round %d: ", i);
        nullz = phase % 3 == 0;
        switch (kind) {
        case 0: do_allgatherv(s, size, inplace, phase); break;
        case 1: do_gatherv(s, size, root, inplace, phase); break;
        case 2: do_scatterv(s, size, root, inplace, phase); break;
        case 3: do_alltoall(s, size, inplace); break;
        case 4: do_alltoallv(s, size); break;
        case 5:
            make_counts(counts, ckind, tsize[t], s);
            do_reduce_scatter(t, k, counts, inplace, phase % 2, count_kind_name[ckind]);
            break;
        default: do_scan(t, k, count, kind == 7, inplace, phase % 2); break;
        }
    }
    ctx[0] = 0;
    nullz = 0;
}

/* ------------------------------------------------------------------ */
/* -T: more than the receiver allows                                     */
/* ------------------------------------------------------------------ */

/* every member decides alike: rank 0 gathers the codes over p2p */
static int all_succeeded(int rc)
{
    int ok = rc == FMPL_SUCCESS, r, x;
    if (prog_np == 1)
        return ok;
    if (prog_me == 0) {
        for (r = 1; r < prog_np; r++) {
            CHECK_RC(fmpl_recv(&x, sizeof x, r, 0), FMPL_SUCCESS);
            ok &= x;
        }
        for (r = 1; r < prog_np; r++)
            CHECK_RC(fmpl_send(&ok, sizeof ok, r, 0), FMPL_SUCCESS);
    } else {
        CHECK_RC(fmpl_send(&ok, sizeof ok, 0, 0), FMPL_SUCCESS);
        CHECK_RC(fmpl_recv(&ok, sizeof ok, 0, 0), FMPL_SUCCESS);
    }
    return ok;
}

static void test_truncate(void)
{
    static const struct { size_t send, cap; } cases[] = {{40, 16}, {70000, 4000}, {1, 0}};
    int ci, i, sender = 0, receiver = cn - 1;
    for (ci = 0; ci < 3; ci++) {
        struct layout Ls, Lr;
        uint64_t s = hash4((uint64_t)seed, 70, (uint64_t)ci, 0);
        unsigned char *sb, *rb, *exp_r, *exp_s;
        int rc, brc;
        prog_rng_t g;
        char what[160];
        for (i = 0; i < cn; i++) {
            Ls.sz[i] = Ls.slot[i] = 5 + (size_t)((cme * 3 + i) % 7);
            Lr.sz[i] = Lr.slot[i] = 5 + (size_t)((i * 3 + cme) % 7);
        }
        if (cme == sender)
            Ls.sz[receiver] = Ls.slot[receiver] = cases[ci].send;
        if (cme == receiver) {
            Lr.sz[sender] = cases[ci].send;      /* what the image would need */
            Lr.slot[sender] = cases[ci].cap;
        }
        prog_rng_seed(&g, hash4(s, 1, (uint64_t)cme, 0));
        place(&Ls, &g);
        prog_rng_seed(&g, hash4(s, 2, (uint64_t)cme, 0));
        place(&Lr, &g);
        exp_s = image(&Ls, s, cme, 0);
        sb = dup_bytes(exp_s, Ls.len + GUARD);
        rb = gbuf(Lr.len + cases[ci].send);
        snprintf(what, sizeof what, "fmpl_alltoallv with member %d sending %zu bytes to member "
                 "%d, whose recvsizes[%d] is %zu", sender, cases[ci].send, receiver, sender,
                 cases[ci].cap);
        rc = fmpl_alltoallv(sb, Ls.sz, Ls.disp, rb, Lr.slot, Lr.disp, C);
        printf("coll_vops: -T case %d: rank %d%s got %s\n", ci, cme,
               cme == receiver ? (cme == sender ? " (sender and receiver)" : " (receiver)")
                               : cme == sender ? " (sender)" : "", fmpl_error_name(rc));
        if (cme == receiver)
            CHECK(rc == FMPL_ERR_TRUNCATE, "%s: the receiver got %d %s, expected "
                  "FMPL_ERR_TRUNCATE", what, rc, fmpl_error_name(rc));
        else
            CHECK(rc == FMPL_SUCCESS || rc == FMPL_ERR_TRUNCATE, "%s: rank %d got %d %s, "
                  "expected FMPL_SUCCESS or FMPL_ERR_TRUNCATE", what, cme, rc,
                  fmpl_error_name(rc));
        /* the send buffer never changes */
        compare_image(sb, exp_s, &Ls, what, "send buffer (must not change)");
        if (rc == FMPL_SUCCESS && cme != receiver) {
            exp_r = image(&Lr, s, cme, 1);
            compare_image(rb, exp_r, &Lr, what, "receive buffer (of a member not involved)");
            free(exp_r);
        }
        free(sb);
        free(rb);
        free(exp_s);
        brc = fmpl_barrier(C);
        printf("coll_vops: -T case %d: rank %d: the barrier after it returned %s\n", ci, cme,
               fmpl_error_name(brc));
        if (!all_succeeded(brc)) {
            if (cme == 0)
                printf("coll_vops: -T: collectives fail after FMPL_ERR_TRUNCATE; the error "
                       "codes were right: stopping here\n");
            return;
        }
    }
    /* the library recovered: a correct alltoallv and a barrier */
    do_alltoallv(hash4((uint64_t)seed, 71, 0, 0), 300);
    do_alltoallv(hash4((uint64_t)seed, 72, 0, 0), 70000);
    CHECK_RC(fmpl_barrier(C), FMPL_SUCCESS);
    if (cme == 0)
        printf("coll_vops: -T: correct alltoallv calls work after the truncations\n");
}

/* ------------------------------------------------------------------ */

static void set_comm(fmpl_comm_t comm, int tag, const char *name)
{
    int i;
    C = comm;
    ctag = tag;
    cname = name;
    CHECK_RC(fmpl_comm_size(comm, &cn), FMPL_SUCCESS);
    CHECK_RC(fmpl_comm_rank(comm, &cme), FMPL_SUCCESS);
    CHECK(cn >= 1 && cn <= MAXNP && cme >= 0 && cme < cn, "%s: rank %d of %d", name, cme, cn);
    for (i = 0; i < cn; i++)
        CHECK_RC(fmpl_comm_world_rank(comm, i, &cwr[i]), FMPL_SUCCESS);
    CHECK(cwr[cme] == prog_me, "%s: world rank of my rank %d is %d, I am %d", name, cme,
          cwr[cme], prog_me);
}

static void battery(fmpl_comm_t comm, int tag, const char *name)
{
    double t0 = prog_now();
    set_comm(comm, tag, name);

#define TIMED(call)                                                           \
    do {                                                                      \
        double t1_ = prog_now();                                              \
        call;                                                                 \
        if (verbose && cme == 0)                                              \
            printf("coll_vops: %s: %s %.2f s\n", name, #call, prog_now() - t1_); \
    } while (0)
    TIMED(test_allgatherv());
    TIMED(test_gatherv());
    TIMED(test_scatterv());
    TIMED(test_alltoall());
    TIMED(test_alltoallv());
    TIMED(test_reduce_scatter());
    TIMED(test_scan());
    TIMED(test_repeat());
    TIMED(test_edges());
    TIMED(test_mixed((int)mixed_rounds));
    TIMED(CHECK_RC(fmpl_barrier(C), FMPL_SUCCESS));
    if (cme == 0)
        printf("coll_vops: %s (%d ranks) done in %.2f s\n", name, cn, prog_now() - t0);
}

int main(int argc, char **argv)
{
    const char *comms = "wcs";
    struct prog_opt opts[] = {
        {'M', OPT_SIZE, &max_bytes, "largest total of one call (default 256K)"},
        {'c', OPT_STR, &comms, "communicators: w, c, s (default wcs)"},
        {'s', OPT_INT, &seed, "data seed"},
        {'R', OPT_INT, &mixed_rounds, "rounds of the random mix (default 40)"},
        {'v', OPT_FLAG, &verbose, "print the time of each part"},
        {'T', OPT_FLAG, &trunc_only, "only the truncation case (alltoallv)"},
        {'Z', OPT_FLAG, &never_null, "never pass buffers of no bytes as NULL"},
    };
    fmpl_comm_t cc = FMPL_COMM_NULL, sc = FMPL_COMM_NULL;

    prog_name = "coll_vops";
    prog_parse(argc, argv, opts, 7);
    prog_init("coll_vops", 1);
    CHECK(prog_np <= MAXNP, "at most %d ranks", MAXNP);
    if (verbose && prog_me == 0)
        printf("coll_vops: %d ranks on the %s transport, -M %zu\n", prog_np, fmpl_transport(),
               max_bytes);

    if (trunc_only) {
        set_comm(FMPL_COMM_WORLD, 0, "WORLD");
        test_truncate();
        return prog_finish();
    }

    ref_ops_create(T_USER1);
    CHECK(ref_op[T_USER12] != 0 && ref_op[T_USER1] != 0 && ref_op[T_USER12] != ref_op[T_USER1],
          "user ops %d %d", ref_op[T_USER12], ref_op[T_USER1]);

    /* the communicators (each creation collective over its parent) */
    ref_make_comms(comms, &cc, &sc);

    if (strchr(comms, 'w'))
        battery(FMPL_COMM_WORLD, 0, "WORLD");
    if (cc != FMPL_COMM_NULL)
        battery(cc, 1, "comm_create(r%3!=1)");
    if (sc != FMPL_COMM_NULL)
        battery(sc, 2 + prog_me % 2, prog_me % 2 ? "comm_split(odd, reversed)"
                                                 : "comm_split(even, reversed)");

    if (cc != FMPL_COMM_NULL)
        CHECK_RC(fmpl_comm_free(&cc), FMPL_SUCCESS);
    if (sc != FMPL_COMM_NULL)
        CHECK_RC(fmpl_comm_free(&sc), FMPL_SUCCESS);
    ref_ops_free();
    CHECK_RC(fmpl_barrier(FMPL_COMM_WORLD), FMPL_SUCCESS);
    return prog_finish();
}
