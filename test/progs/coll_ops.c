/*
 * coll_ops - every collective against a serial reference.
 *
 *   coll_ops [-M MAXBYTES] [-c COMMS] [-s SEED] [-A ALLROOTS] [-B] [-v] [-R ROUNDS] [-E]
 *     -M  largest buffer of one call (default 256K; up to 8M): bcast and
 *         hbcast size, allgather/gather/scatter total, reduce bytes
 *     -c  communicators to run the battery on, letters of (default "wcs")
 *           w  FMPL_COMM_WORLD
 *           c  fmpl_comm_create: world ranks r with r % 3 != 1 join
 *           s  fmpl_comm_split of WORLD: color r % 2, key -r (reversed
 *              ranks); r % 5 == 4 passes FMPL_UNDEFINED
 *     -s  data seed (default 7)
 *     -A  sizes (bytes) up to this use every root (default 4096); larger
 *         ones roots 0, n-1 and n/2 only (reduces above 1 MiB: root n-1)
 *     -B  only the big sizes (> 64K) of every collective
 *     -v  print the time each part took
 *     -R  rounds of the random mix (default 150; 0 with -B)
 *     -E  no barrier epochs: the ranks share no /tmp (hosts that are
 *         separate machines, such as test/rxe_run.sh's two guests)
 *
 * Every process computes every other member's contribution from
 * (seed, member rank, element), so it knows the expected result of each
 * call exactly.  The battery, on each communicator this rank belongs to:
 *   barrier   epochs in a shared file: after barrier k every member has
 *             stored k (a real check of the barrier's meaning, no timing)
 *   bcast     every root, sizes 0 .. MAX, guard bytes after the buffer
 *   hbcast    the same on WORLD only
 *   allgather every size, alternately in place (sendbuf = recvbuf + r*size)
 *   gather    every root (recvbuf NULL elsewhere)
 *   scatter   every root, alternately in place at root
 *   reduce, allreduce
 *             every predefined op fmpl_{i,s,d,c,z}{sum,max,min} and three
 *             user ops (12-byte struct: sum/max/xor; 1-byte add mod 256;
 *             40000-byte elements, so that a few elements make a large
 *             message), counts 0 .. MAX (around the 24-byte, 64 KiB and
 *             128 KiB algorithm changes), every root; `work` NULL or
 *             given.  Sums of small integers (exact in float); max/min on
 *             signed data whose magnitudes (|re|+|im| for complex) differ
 *             between ranks, so the absolute max/min is one definite
 *             element with its sign.  The allreduce result must equal the
 *             reference bitwise on every process; so must the reduce
 *             result at root.
 *   ties      allreduce of max/min with equal magnitudes of different
 *             signs, and sums of inexact random data: every process must
 *             get bitwise the same result (compared by point-to-point
 *             messages), a legal candidate / close to the reference
 *   mix       ROUNDS collectives of random kinds, sizes and roots back to
 *             back (the same sequence on every member), each checked
 * Last, on WORLD: ties between +0.0 and -0.0 (and complex (x, +-0)), which
 * must also come out bitwise the same on every process.
 * Point-to-point checks use matching-area index 0 (fmpl_init(1)).
 */
#include "prog.h"
#include "coll_ref.h"

#include <ctype.h>
#include <fcntl.h>
#include <math.h>
#include <sys/mman.h>

#define GUARD 64
#define MAXNP 64

static size_t max_bytes = 256 << 10;
static long seed = 7;
static size_t allroots_max = 4096;
static int big_only, verbose;
static long mixed_rounds = 150;

/* the communicator under test */
static fmpl_comm_t C;
static int cn, cme, ctag;        /* size, rank, battery number */
static int cwr[MAXNP];           /* world rank of each member */
static const char *cname;

/* ------------------------------------------------------------------ */
/* helpers                                                               */
/* ------------------------------------------------------------------ */

/* the data of the reductions on the communicator under test */
static struct ref_data rdata(void)
{
    struct ref_data d = {seed, cn, 0};
    return d;
}

/* Every member's value must be identical: members send their buffer to
 * member 0 over index 0, which compares.  Purely point-to-point. */
static void same_everywhere(const void *p, size_t n, int t, const char *what)
{
    ref_same_everywhere(p, n, t, cn, cme, cwr, 0, cname, what);
}

static unsigned char *gbuf(size_t n)
{
    unsigned char *b = prog_xmalloc(n + GUARD);
    memset(b, PROG_POISON, n + GUARD);
    return b;
}

/* sizes */
static size_t szl[64];
static int nszl;
static void sizes_for(size_t max_total, int divide_by_n)
{
    static const size_t all[] = {0, 1, 3, 8, 13, 64, 100, 1024, 4093, 4096, 8191,
                                 65536, 65537, 200003, 262144, 524288, 1 << 20,
                                 (1 << 20) + 7, (size_t)3 << 20, (size_t)8 << 20};
    size_t lim = divide_by_n ? max_total / (size_t)cn : max_total;
    unsigned i;
    nszl = 0;
    for (i = 0; i < sizeof all / sizeof all[0]; i++) {
        if (all[i] > lim)
            continue;
        if (big_only && all[i] <= 65536)
            continue;
        szl[nszl++] = all[i];
    }
}

/* roots to try for a message of `size` bytes */
static int roots_for(size_t size, int *roots)
{
    int k = 0, r;
    if (size <= allroots_max) {
        for (r = 0; r < cn; r++)
            roots[k++] = r;
        return k;
    }
    roots[k++] = 0;
    if (cn > 1)
        roots[k++] = cn - 1;
    if (cn > 2)
        roots[k++] = cn / 2;
    return k;
}

/* ------------------------------------------------------------------ */
/* barrier                                                              */
/* ------------------------------------------------------------------ */

static volatile uint64_t *epochs;   /* [8 batteries][MAXNP] in a shared file */
static char epoch_path[256];
static int no_epochs;               /* -E */

static void epochs_open(void)
{
    /* a name every rank of this job agrees on: fmplrun's job id and
     * parent, the PMIx namespace under mpirun; a job of one: our pid */
    const char *jid = getenv("FMPL_JOBID"), *ns = getenv("PMIX_NAMESPACE");
    int fd;
    size_t len = 8 * MAXNP * sizeof(uint64_t);
    if (no_epochs)
        return;                 /* no shared file system: barriers unchecked */
    if (jid)
        snprintf(epoch_path, sizeof epoch_path, "/tmp/coll_ops_barrier_%s_%d", jid,
                 (int)getppid());
    else if (ns)
        snprintf(epoch_path, sizeof epoch_path, "/tmp/coll_ops_barrier_%s", ns);
    else if (prog_np == 1)
        snprintf(epoch_path, sizeof epoch_path, "/tmp/coll_ops_barrier_%d", (int)getpid());
    else
        return;                 /* no shared name: barriers unchecked */
    for (fd = 0; epoch_path[fd]; fd++)
        if (epoch_path[fd] != '/' && !isalnum((unsigned char)epoch_path[fd]))
            epoch_path[fd] = '_';
    /* rank 0 makes a fresh file; the others open it after a p2p barrier */
    if (prog_me == 0) {
        unlink(epoch_path);
        fd = open(epoch_path, O_RDWR | O_CREAT | O_EXCL, 0600);
        CHECK(fd >= 0, "open %s: %s", epoch_path, strerror(errno));
        CHECK(ftruncate(fd, (off_t)len) == 0, "ftruncate: %s", strerror(errno));
        prog_barrier(0);
    } else {
        prog_barrier(0);
        fd = open(epoch_path, O_RDWR);
        CHECK(fd >= 0, "open %s: %s", epoch_path, strerror(errno));
    }
    epochs = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    CHECK(epochs != MAP_FAILED, "mmap: %s", strerror(errno));
    close(fd);
    /* everybody has it mapped: the name can go (nothing left behind) */
    prog_barrier(0);
    if (prog_me == 0)
        unlink(epoch_path);
}

static void test_barrier(int rounds)
{
    int k, i;
    volatile uint64_t *e = epochs + ctag * MAXNP;
    if (!epochs) {
        for (k = 1; k <= rounds; k++)
            CHECK_RC(fmpl_barrier(C), FMPL_SUCCESS);
        return;
    }
    for (k = 1; k <= rounds; k++) {
        __atomic_store_n(&e[cwr[cme]], (uint64_t)k, __ATOMIC_SEQ_CST);
        CHECK_RC(fmpl_barrier(C), FMPL_SUCCESS);
        for (i = 0; i < cn; i++) {
            uint64_t v = __atomic_load_n(&e[cwr[i]], __ATOMIC_SEQ_CST);
            CHECK(v >= (uint64_t)k, "barrier %d on %s returned before rank %d (world %d) "
                  "entered it (its epoch is %llu)", k, cname, i, cwr[i],
                  (unsigned long long)v);
        }
    }
}

/* ------------------------------------------------------------------ */
/* bcast, hbcast                                                        */
/* ------------------------------------------------------------------ */

static void test_bcast(int hw)
{
    int roots[MAXNP], nr, ri, si;
    const char *name = hw ? "fmpl_hbcast" : "fmpl_bcast";
    sizes_for(max_bytes, 0);
    for (si = 0; si < nszl; si++) {
        size_t size = szl[si];
        unsigned char *b = gbuf(size);
        nr = roots_for(size, roots);
        for (ri = 0; ri < nr; ri++) {
            int root = roots[ri];
            uint64_t s = hash4((uint64_t)seed, 1 + hw, size, ctag);
            memset(b, PROG_POISON, size + GUARD);
            if (cme == root)
                pat_fill(b, size, s, root, ctag);
            if (hw && !prog_hbcast_ok(size)) {
                CHECK_RC(fmpl_hbcast(size ? b : NULL, size, root), FMPL_ERR_UNSUPPORTED);
                continue;
            }
            if (hw)
                CHECK_RC(fmpl_hbcast(size ? b : NULL, size, root), FMPL_SUCCESS);
            else
                CHECK_RC(fmpl_bcast(size ? b : NULL, size, root, C), FMPL_SUCCESS);
            {
                long off = pat_find_error(b, size, s, root, ctag);
                CHECK(off < 0, "%s of %zu bytes from root %d on %s: byte %ld wrong", name,
                      size, root, cname, off);
            }
            POISON_VERIFY(b + size, GUARD, PROG_POISON, "bytes after the bcast buffer");
        }
        free(b);
    }
}

/* ------------------------------------------------------------------ */
/* allgather, gather, scatter                                           */
/* ------------------------------------------------------------------ */

static uint64_t blk_seed(int what, size_t size)
{
    return hash4((uint64_t)seed, 10 + what, size, ctag);
}

static void verify_blocks(const unsigned char *rb, size_t size, uint64_t s, const char *what,
                          int root)
{
    int i;
    for (i = 0; i < cn; i++) {
        long off = pat_find_error(rb + (size_t)i * size, size, s, i, ctag);
        CHECK(off < 0, "%s of %zu bytes per rank (root %d) on %s: block %d byte %ld wrong",
              what, size, root, cname, i, off);
    }
    POISON_VERIFY(rb + (size_t)cn * size, GUARD, PROG_POISON, "bytes after the receive buffer");
}

static void test_allgather(void)
{
    int si, inplace;
    sizes_for(max_bytes, 1);
    for (si = 0; si < nszl; si++) {
        size_t size = szl[si];
        uint64_t s = blk_seed(0, size);
        unsigned char *rb = gbuf(size * (size_t)cn), *sb = gbuf(size);
        for (inplace = 0; inplace < 2; inplace++) {
            memset(rb, PROG_POISON, size * (size_t)cn + GUARD);
            if (inplace) {
                pat_fill(rb + (size_t)cme * size, size, s, cme, ctag);
                CHECK_RC(fmpl_allgather(rb + (size_t)cme * size, size, rb, C), FMPL_SUCCESS);
            } else {
                pat_fill(sb, size, s, cme, ctag);
                CHECK_RC(fmpl_allgather(sb, size, rb, C), FMPL_SUCCESS);
                PAT_VERIFY(sb, size, s, cme, ctag);   /* sendbuf untouched */
            }
            verify_blocks(rb, size, s, inplace ? "in-place fmpl_allgather" : "fmpl_allgather",
                          -1);
        }
        free(rb);
        free(sb);
    }
}

static void test_gather(void)
{
    int si, ri, nr, roots[MAXNP];
    sizes_for(max_bytes, 1);
    for (si = 0; si < nszl; si++) {
        size_t size = szl[si];
        uint64_t s = blk_seed(1, size);
        unsigned char *rb = gbuf(size * (size_t)cn), *sb = gbuf(size);
        nr = roots_for(size * (size_t)cn, roots);
        pat_fill(sb, size, s, cme, ctag);
        for (ri = 0; ri < nr; ri++) {
            int root = roots[ri];
            memset(rb, PROG_POISON, size * (size_t)cn + GUARD);
            CHECK_RC(fmpl_gather(sb, size, cme == root ? rb : NULL, root, C), FMPL_SUCCESS);
            PAT_VERIFY(sb, size, s, cme, ctag);
            if (cme == root)
                verify_blocks(rb, size, s, "fmpl_gather", root);
        }
        free(rb);
        free(sb);
    }
}

static void test_scatter(void)
{
    int si, ri, nr, roots[MAXNP], i;
    sizes_for(max_bytes, 1);
    for (si = 0; si < nszl; si++) {
        size_t size = szl[si];
        uint64_t s = blk_seed(2, size);
        unsigned char *sb = gbuf(size * (size_t)cn), *rb = gbuf(size);
        nr = roots_for(size * (size_t)cn, roots);
        for (ri = 0; ri < nr; ri++) {
            int root = roots[ri], inplace = (ri + si) % 2 == 1 && cme == root;
            memset(sb, PROG_POISON, size * (size_t)cn + GUARD);
            memset(rb, PROG_POISON, size + GUARD);
            if (cme == root)
                for (i = 0; i < cn; i++)
                    pat_fill(sb + (size_t)i * size, size, s, i, ctag);
            if (inplace) {
                CHECK_RC(fmpl_scatter(sb, size, sb + (size_t)root * size, root, C),
                         FMPL_SUCCESS);
                /* the whole send buffer is unchanged, our block included */
                verify_blocks(sb, size, s, "in-place fmpl_scatter (root's buffer)", root);
            } else {
                CHECK_RC(fmpl_scatter(cme == root ? sb : NULL, size, rb, root, C),
                         FMPL_SUCCESS);
                {
                    long off = pat_find_error(rb, size, s, cme, ctag);
                    CHECK(off < 0, "fmpl_scatter of %zu bytes per rank from root %d on %s: "
                          "byte %ld of rank %d's block wrong", size, root, cname, off, cme);
                }
                POISON_VERIFY(rb + size, GUARD, PROG_POISON, "bytes after the scatter block");
                if (cme == root)
                    verify_blocks(sb, size, s, "fmpl_scatter (root's send buffer)", root);
            }
        }
        free(rb);
        free(sb);
    }
}

/* ------------------------------------------------------------------ */
/* reductions                                                           */
/* ------------------------------------------------------------------ */

static void compare_result(const unsigned char *got, const unsigned char *ref, int t, int k,
                           long count, const char *call, int root)
{
    long i = ref_first_diff(got, ref, t, count, NULL);
    char g[128], w[128];
    if (i < 0)
        return;
    describe_elem(g, sizeof g, got, t, i);
    describe_elem(w, sizeof w, ref, t, i);
    prog_fail(__FILE__, __LINE__, "%s(op %s%s = %d, count %ld, root %d) on %s (rank %d of %d): "
              "element %ld is %s, the serial reference is %s", call, tname[t], kname[k],
              op_of(t, k), count, root, cname, cme, cn, i, g, w);
}

static void test_reduce(void)
{
    /* 24 bytes: the signal path's limit; 64 KiB and 128 KiB: the large
     * allreduce and reduce; BIGELEM elements: few elements, many bytes */
    static const long counts[] = {0, 1, 2, 3, 7, 33, 64, 1000, 4099, 8192, 16384, 40000,
                                  1 << 17, 1 << 19, 1 << 20};
    static const long big_counts[] = {1, 2, 3, 5, 9, 30};
    int t, k, ci, root, nr, roots[MAXNP], ri;
    unsigned iter = 0;
    struct ref_data d = rdata();

    for (t = 0; t <= T_USERBIG; t++) {
        for (k = 0; k < 3; k++) {
            int user = t >= T_USER12;
            fmpl_op_t op;
            if (user && k > 0)
                break;
            if (user)
                k = K_USER;
            op = op_of(t, k);
            CHECK(fmpl_op_size(op) == tsize[t], "fmpl_op_size(%s%s = %d) = %zu, expected %zu",
                  tname[t], kname[k], op, fmpl_op_size(op), tsize[t]);
            for (ci = 0; ci < (t == T_USERBIG ? 6 : (int)(sizeof counts / sizeof counts[0]));
                 ci++) {
                long count = t == T_USERBIG ? big_counts[ci] : counts[ci];
                size_t bytes = (size_t)count * tsize[t];
                unsigned char *buf, *ref, *work;
                if (bytes > max_bytes || (big_only && bytes <= 65536))
                    continue;
                /* the very large counts: only some ops, to keep it quick */
                if (count >= (1 << 17) && !((t == T_DOUBLE && k == K_SUM) ||
                                            (t == T_CDOUBLE && k == K_MAX) ||
                                            (t == T_INT && k == K_MIN) || t == T_USER12))
                    continue;
                buf = gbuf(bytes);
                work = gbuf(bytes);
                ref = prog_xmalloc(bytes + 1);
                ref_reduce(&d, ref, t, k, 0, count, cn);
                /* allreduce: every member gets the reference, bitwise */
                ref_fill(&d, buf, t, k, cme, 0, count);
                CHECK_RC(fmpl_allreduce(count ? buf : NULL, (int)count, op, C,
                                        iter++ % 2 ? work : NULL), FMPL_SUCCESS);
                compare_result(buf, ref, t, k, count, "fmpl_allreduce", -1);
                POISON_VERIFY(buf + bytes, GUARD, PROG_POISON, "bytes after the allreduce buffer");
                POISON_VERIFY(work + bytes, GUARD, PROG_POISON, "bytes after the work buffer");
                /* reduce to each root (one root above 1 MiB) */
                nr = roots_for(bytes, roots);
                if (bytes > (1 << 20)) {
                    roots[0] = cn - 1;
                    nr = 1;
                }
                for (ri = 0; ri < nr; ri++) {
                    root = roots[ri];
                    ref_fill(&d, buf, t, k, cme, 0, count);
                    CHECK_RC(fmpl_reduce(count ? buf : NULL, (int)count, op, root, C,
                                         iter++ % 2 ? work : NULL), FMPL_SUCCESS);
                    if (cme == root)
                        compare_result(buf, ref, t, k, count, "fmpl_reduce", root);
                    POISON_VERIFY(buf + bytes, GUARD, PROG_POISON,
                                  "bytes after the reduce buffer");
                    POISON_VERIFY(work + bytes, GUARD, PROG_POISON,
                                  "bytes after the work buffer");
                }
                free(buf);
                free(work);
                free(ref);
            }
        }
    }
}

/* Ties: not one definite answer, but the same answer on every process,
 * and a legal one.  With `zeros`, every fifth element is +0.0 on some
 * members and -0.0 on others (equal magnitudes too). */
static void test_ties(int zeros)
{
    static const long counts[] = {1, 5, 100, 3000};
    int t, k, ci;
    long i;
    if (big_only)
        return;
    for (t = T_FLOAT; t <= T_CDOUBLE; t++) {
        for (k = K_MAX; k <= K_MIN; k++) {
            fmpl_op_t op = op_of(t, k);
            for (ci = 0; ci < 4; ci++) {
                long count = counts[ci];
                size_t es = tsize[t], bytes = (size_t)count * es;
                unsigned char *buf = gbuf(bytes), *cand = prog_xmalloc(bytes * (size_t)cn);
                ref_tie_fill(cand, t, count, cn, zeros);
                memcpy(buf, cand + (size_t)cme * bytes, bytes);
                CHECK_RC(fmpl_allreduce(buf, (int)count, op, C, NULL), FMPL_SUCCESS);
                POISON_VERIFY(buf + bytes, GUARD, PROG_POISON, "bytes after the buffer");
                i = ref_tie_check(buf, cand, t, count, cn);
                if (i >= 0) {
                    char g[128];
                    describe_elem(g, sizeof g, buf, t, i);
                    prog_fail(__FILE__, __LINE__, "fmpl_allreduce(%s%s) with ties on %s: "
                              "element %ld is %s, which no member contributed", tname[t],
                              kname[k], cname, i, g);
                }
                {
                    char w[96];
                    snprintf(w, sizeof w, "fmpl_allreduce(%s%s, count %ld) with ties%s",
                             tname[t], kname[k], count, zeros ? " (+0.0 and -0.0)" : "");
                    same_everywhere(buf, bytes, t, w);
                }
                free(buf);
                free(cand);
            }
        }
    }
}

/* Inexact sums: random values of wildly different magnitudes; the result
 * close to the reference and bitwise the same everywhere. */
static void test_inexact(void)
{
    struct ref_data d = rdata();
    int t;
    if (big_only)
        return;
    for (t = T_FLOAT; t <= T_CDOUBLE; t++) {
        long count = 5000;
        size_t es = tsize[t], bytes = (size_t)count * es, comps = es / (single_prec(t) ? 4 : 8);
        unsigned char *buf;
        size_t c, ncomp = (size_t)count * comps;
        if (bytes > max_bytes)
            break;
        buf = gbuf(bytes);
        ref_inexact_fill(&d, buf, t, cme, 0, ncomp);
        CHECK_RC(fmpl_allreduce(buf, (int)count, op_of(t, K_SUM), C, NULL), FMPL_SUCCESS);
        for (c = 0; c < ncomp; c++) {
            double tol, ref = ref_inexact_sum(&d, t, c, cn, &tol), g = ref_component(buf, t, c);
            CHECK(fabs(g - ref) <= tol, "fmpl_allreduce(%ssum) of random data on %s: "
                  "component %zu is %.17g, reference %.17g", tname[t], cname, c, g, ref);
        }
        {
            char w[96];
            snprintf(w, sizeof w, "fmpl_allreduce(%ssum, count %ld) of inexact data", tname[t],
                     count);
            same_everywhere(buf, bytes, t, w);
        }
        free(buf);
    }
}

/* ------------------------------------------------------------------ */
/* a random mix, back to back                                           */
/* ------------------------------------------------------------------ */

/* `rounds` collectives of random kinds, sizes and roots (the same
 * sequence on every member) with nothing in between but the local checks:
 * consecutive collectives must not disturb each other */
static int mixval(int r, long j, int round)
{
    return (int)((uint32_t)(r + 1) * 2654435761u ^ (uint32_t)j * 40503u ^ (uint32_t)round) % 1000;
}

static void test_mixed(int rounds)
{
    static const size_t sizes[] = {0, 1, 24, 25, 100, 4096, 65537, 100000};
    prog_rng_t g;
    int i, r;
    prog_rng_seed(&g, (uint64_t)seed * 1000003u + (uint64_t)ctag * 31u + (uint64_t)cn);
    for (i = 0; i < rounds; i++) {
        int kind = (int)prog_rng_below(&g, 8), root = (int)prog_rng_below(&g, (uint64_t)cn);
        size_t size = sizes[prog_rng_below(&g, 8)];
        uint64_t s = hash4((uint64_t)seed, 5000, (uint64_t)i, (uint64_t)ctag);
        unsigned char *b, *rb;
        long j, count, off;
        if (size > max_bytes)
            size = max_bytes;
        switch (kind) {
        case 0:
        case 1:
            b = gbuf(size);
            if (cme == root)
                pat_fill(b, size, s, root, i);
            if (kind == 1 && C == FMPL_COMM_WORLD && !prog_hbcast_ok(size))
                CHECK_RC(fmpl_hbcast(size ? b : NULL, size, root), FMPL_ERR_UNSUPPORTED);
            if (kind == 1 && C == FMPL_COMM_WORLD && prog_hbcast_ok(size))
                CHECK_RC(fmpl_hbcast(size ? b : NULL, size, root), FMPL_SUCCESS);
            else
                CHECK_RC(fmpl_bcast(size ? b : NULL, size, root, C), FMPL_SUCCESS);
            off = pat_find_error(b, size, s, root, i);
            CHECK(off < 0, "mixed round %d on %s: %s of %zu bytes from %d: byte %ld wrong", i,
                  cname, kind == 1 && C == FMPL_COMM_WORLD ? "hbcast" : "bcast", size, root, off);
            POISON_VERIFY(b + size, GUARD, PROG_POISON, "bytes after the buffer");
            free(b);
            break;
        case 2:
        case 3: {
            int32_t *v;
            count = (long)(size / 4);
            v = (int32_t *)gbuf((size_t)count * 4);
            for (j = 0; j < count; j++)
                v[j] = mixval(cme, j, i);
            if (kind == 2)
                CHECK_RC(fmpl_allreduce(count ? v : NULL, (int)count, fmpl_isum, C, NULL),
                         FMPL_SUCCESS);
            else
                CHECK_RC(fmpl_reduce(count ? v : NULL, (int)count, fmpl_isum, root, C, NULL),
                         FMPL_SUCCESS);
            if (kind == 2 || cme == root)
                for (j = 0; j < count; j++) {
                    long e = 0;
                    for (r = 0; r < cn; r++)
                        e += mixval(r, j, i);
                    CHECK(v[j] == e, "mixed round %d on %s: %s of %ld ints (root %d): element "
                          "%ld is %d, expected %ld", i, cname, kind == 2 ? "allreduce" : "reduce",
                          count, root, j, v[j], e);
                }
            free(v);
            break;
        }
        case 4:
        case 5:
        case 6:
            size /= (size_t)cn;
            b = gbuf(size);
            rb = gbuf(size * (size_t)cn);
            if (kind == 6) {
                if (cme == root)
                    for (r = 0; r < cn; r++)
                        pat_fill(rb + (size_t)r * size, size, s, r, i);
                CHECK_RC(fmpl_scatter(rb, size, b, root, C), FMPL_SUCCESS);
                off = pat_find_error(b, size, s, cme, i);
                CHECK(off < 0, "mixed round %d on %s: scatter of %zu bytes from %d: byte %ld "
                      "wrong", i, cname, size, root, off);
            } else {
                pat_fill(b, size, s, cme, i);
                if (kind == 4)
                    CHECK_RC(fmpl_allgather(b, size, rb, C), FMPL_SUCCESS);
                else
                    CHECK_RC(fmpl_gather(b, size, rb, root, C), FMPL_SUCCESS);
                if (kind == 4 || cme == root)
                    for (r = 0; r < cn; r++) {
                        off = pat_find_error(rb + (size_t)r * size, size, s, r, i);
                        CHECK(off < 0, "mixed round %d on %s: %s of %zu bytes (root %d): block "
                              "%d byte %ld wrong", i, cname, kind == 4 ? "allgather" : "gather",
                              size, root, r, off);
                    }
            }
            free(b);
            free(rb);
            break;
        default:
            CHECK_RC(fmpl_barrier(C), FMPL_SUCCESS);
            break;
        }
    }
}

/* ------------------------------------------------------------------ */

static void battery(fmpl_comm_t comm, int tag, const char *name)
{
    int i;
    double t0 = prog_now();
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

#define TIMED(call)                                                           \
    do {                                                                      \
        double t1_ = prog_now();                                              \
        call;                                                                 \
        if (verbose && cme == 0)                                              \
            printf("coll_ops: %s: %s %.2f s\n", name, #call, prog_now() - t1_); \
    } while (0)
    TIMED(test_barrier(5));
    TIMED(test_bcast(0));
    if (comm == FMPL_COMM_WORLD)
        TIMED(test_bcast(1));
    TIMED(test_allgather());
    TIMED(test_gather());
    TIMED(test_scatter());
    TIMED(test_reduce());
    TIMED(test_ties(0));
    TIMED(test_inexact());
    TIMED(test_mixed(mixed_rounds));
    TIMED(test_barrier(3));
    if (cme == 0)
        printf("coll_ops: %s (%d ranks) done in %.2f s\n", name, cn, prog_now() - t0);
}

int main(int argc, char **argv)
{
    const char *comms = "wcs";
    struct prog_opt opts[] = {
        {'M', OPT_SIZE, &max_bytes, "largest buffer (default 256K)"},
        {'c', OPT_STR, &comms, "communicators: w, c, s (default wcs)"},
        {'s', OPT_INT, &seed, "data seed"},
        {'A', OPT_SIZE, &allroots_max, "every root up to this size (default 4096)"},
        {'B', OPT_FLAG, &big_only, "big sizes only"},
        {'v', OPT_FLAG, &verbose, "print the time of each part"},
        {'R', OPT_INT, &mixed_rounds, "rounds of the random mix (default 150)"},
        {'E', OPT_FLAG, &no_epochs, "no barrier epochs (the ranks share no /tmp)"},
    };
    fmpl_comm_t cc = FMPL_COMM_NULL, sc = FMPL_COMM_NULL;
    int i;

    prog_name = "coll_ops";
    prog_parse(argc, argv, opts, 8);
    if (big_only)
        mixed_rounds = 0;
    prog_init("coll_ops", 1);
    CHECK(prog_np <= MAXNP, "at most %d ranks", MAXNP);
    epochs_open();
    ref_ops_create(T_USERBIG);
    CHECK(ref_op[T_USER12] != 0 && ref_op[T_USER1] != 0 && ref_op[T_USER12] != ref_op[T_USER1],
          "user ops %d %d", ref_op[T_USER12], ref_op[T_USER1]);
    for (i = fmpl_isum; i <= fmpl_zmin; i++)
        CHECK(ref_op[T_USER12] != i && ref_op[T_USER1] != i,
              "a user op has predefined op %d's handle", i);

    /* the communicators (each creation collective over its parent) */
    ref_make_comms(comms, &cc, &sc);

    if (strchr(comms, 'w'))
        battery(FMPL_COMM_WORLD, 0, "WORLD");
    if (cc != FMPL_COMM_NULL)
        battery(cc, 1, "comm_create(r%3!=1)");
    if (sc != FMPL_COMM_NULL)
        battery(sc, 2 + prog_me % 2, prog_me % 2 ? "comm_split(odd, reversed)"
                                                 : "comm_split(even, reversed)");

    if (cc != FMPL_COMM_NULL) {
        CHECK_RC(fmpl_comm_free(&cc), FMPL_SUCCESS);
        CHECK(cc == FMPL_COMM_NULL, "fmpl_comm_free left the handle %d", cc);
    }
    if (sc != FMPL_COMM_NULL) {
        CHECK_RC(fmpl_comm_free(&sc), FMPL_SUCCESS);
        CHECK(sc == FMPL_COMM_NULL, "fmpl_comm_free left the handle %d", sc);
    }
    /* signed zeros last (a failure here leaves the rest tested) */
    if (strchr(comms, 'w')) {
        C = FMPL_COMM_WORLD;
        cn = prog_np;
        cme = prog_me;
        cname = "WORLD";
        for (i = 0; i < cn; i++)
            cwr[i] = i;
        test_ties(1);
    }
    ref_ops_free();
    CHECK_RC(fmpl_barrier(FMPL_COMM_WORLD), FMPL_SUCCESS);
    return prog_finish();
}
