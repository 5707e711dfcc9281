/*
 * coll_nb - the nonblocking collectives, fmpl_test and fmpl_wait against
 * a serial reference.
 *
 *   coll_nb [-M MAXBYTES] [-c COMMS] [-s SEED] [-R ROUNDS] [-v] [-E]
 *     -M  largest buffer of one call (default 256K): the ibcast and
 *         reduction size, the largest block of the gather family
 *     -c  communicators to run the battery on, letters of (default "wcs")
 *           w  FMPL_COMM_WORLD
 *           c  fmpl_comm_create: world ranks r with r % 3 != 1 join
 *           s  fmpl_comm_split of WORLD: color r % 2, key -r (reversed
 *              ranks); r % 5 == 4 passes FMPL_UNDEFINED
 *     -s  data seed (default 7)
 *     -R  calls of the random mix (default 40)
 *     -v  print the time each part took (twice: each part of the single calls)
 *     -E  no barrier epochs: the ranks share no /tmp
 *
 * Every process computes every other member's contribution from
 * (seed, member rank, element), so it knows the exact expected result of
 * each call; buffers are compared byte by byte (element by element for
 * the reductions) with it, and the guard bytes after every buffer must
 * stay untouched.  The battery, on each communicator this rank belongs to:
 *   single    each of the eight calls alone, completed by fmpl_wait or
 *             (alternately) by a fmpl_test loop then fmpl_wait; a
 *             completed request stays done until its wait, and after the
 *             wait it is inactive (FMPL_ERR_REQUEST from both); buffers
 *             of 0 bytes are passed as NULL every other time
 *               ibarrier   epochs in a shared file: after the k-th
 *                          ibarrier every member has stored k
 *               ibcast     sizes 0, 1, 7, 1000, 65539, MAX, every root
 *               iallgather the same sizes per member (and MAX / n),
 *                          alternately in place (sendbuf == recvbuf +
 *                          rank * size); the send buffer unchanged
 *               igather    every root (recvbuf NULL elsewhere)
 *               iscatter   every root, alternately in place at root
 *                          (recvbuf == sendbuf + root * size), sendbuf
 *                          NULL elsewhere
 *               ialltoall  alternately in place (sendbuf == recvbuf)
 *               ireduce, iallreduce
 *                          every predefined op fmpl_{i,s,d,c,z}{sum,max,
 *                          min} and a user op (12-byte struct: sum/max/
 *                          xor), counts 0, 1, 7, 1000, just above 64 KiB
 *                          and MAX bytes; ireduce at every root with
 *                          isum, smin, dmax, cmin, zsum and the user op,
 *                          at one root (in turn) with the others; only
 *                          the root's result is defined (in place)
 *             With more than 8 members, sizes above 1000 bytes go to the
 *             first, middle and last root and one more in turn only.
 *             Sums are of small integers (exact in float), max/min of
 *             magnitudes distinct per member: one exact answer, which
 *             every member must have bitwise.
 *   ties      iallreduce of max/min with equal magnitudes (signed zeros
 *             too) and of inexact sums: a legal result, bitwise the same
 *             on every member (compared by point-to-point messages)
 *   multi     all eight in flight at once on the communicator, a
 *             blocking fmpl_allreduce and fmpl_bcast called in between,
 *             completed in reverse, forward or a random order (the same
 *             on every member), or by polling them all with fmpl_test;
 *             once one is complete, those started before it on the same
 *             communicator must be too
 *   deep      40 small ones of random kinds in flight at once, completed
 *             in reverse or a random order
 *   p2p       a user fmpl_isend/fmpl_irecv pair on index 0 in flight
 *             during four collectives, all completed by fmpl_wait in a
 *             random order
 *   progress  the root of an ibcast (member 0 of an iallreduce) starts it
 *             and then sits in blocking fmpl_recv of the others' word
 *             that they completed it: any FMPL call must move it
 *   mix       ROUNDS calls of random kinds, sizes, roots and ops with up
 *             to four in flight, blocking ones in between, each checked
 * Then, over the whole job: collectives in flight on WORLD and the
 * created and split communicators at once, a blocking fmpl_allreduce on
 * WORLD among them, and a communicator split off WORLD, used and freed
 * while they are in flight; argument errors (NULL request,
 * bad root, comm, op, count, buffer; fmpl_wait/fmpl_test of an inactive
 * request) start nothing; fmpl_comm_free of a communicator with an
 * unfinished ibarrier is FMPL_ERR_BUSY, and succeeds once it is waited
 * (its member 0 starts the ibarrier only once the others have tried the
 * free and sent it a message, so the refusal is certain).
 * Index 0 carries the user's overlapping traffic, index 1 the test's own
 * comparisons (fmpl_init(2)).
 */
#include "prog.h"
#include "coll_ref.h"

#include <ctype.h>
#include <fcntl.h>
#include <math.h>
#include <sched.h>
#include <sys/mman.h>

#define GUARD 64
#define MAXNP 64
#define MAI_USER 0
#define MAI_CHECK 1
#define HANG_SEC 45.0
#define DEEP 40                 /* collectives in flight at once in test_deep */

static size_t max_bytes = 256 << 10;
static long seed = 7;
static long mix_rounds = 40;
static int verbose, no_epochs;

/* a communicator under test */
typedef struct cm {
    fmpl_comm_t h;
    int n, me, tag;              /* size, rank, epoch line (-1: none) */
    int wr[MAXNP];               /* world rank of each member */
    const char *name;
    uint64_t nbar;               /* ibarriers started on it */
    unsigned nsalt;              /* calls set up on it: every member counts alike */
} cm_t;

static unsigned char *gbuf(size_t n)
{
    unsigned char *b = prog_xmalloc(n + GUARD);
    memset(b, PROG_POISON, n + GUARD);
    return b;
}

static void cm_init(cm_t *m, fmpl_comm_t h, int tag, const char *name)
{
    int i;
    memset(m, 0, sizeof *m);
    m->h = h;
    m->tag = tag;
    m->name = name;
    m->nsalt = 100;
    CHECK_RC(fmpl_comm_size(h, &m->n), FMPL_SUCCESS);
    CHECK_RC(fmpl_comm_rank(h, &m->me), FMPL_SUCCESS);
    CHECK(m->n >= 1 && m->n <= MAXNP && m->me >= 0 && m->me < m->n, "%s: rank %d of %d", name,
          m->me, m->n);
    for (i = 0; i < m->n; i++)
        CHECK_RC(fmpl_comm_world_rank(h, i, &m->wr[i]), FMPL_SUCCESS);
    CHECK(m->wr[m->me] == prog_me, "%s: world rank of my rank %d is %d, I am %d", name, m->me,
          m->wr[m->me], prog_me);
}

/* a permutation of 0..n-1 */
static void permute(int *p, int n, prog_rng_t *g)
{
    int i;
    for (i = 0; i < n; i++)
        p[i] = i;
    for (i = n - 1; i > 0; i--) {
        int j = (int)prog_rng_below(g, (uint64_t)i + 1), t = p[i];
        p[i] = p[j];
        p[j] = t;
    }
}

/* ------------------------------------------------------------------ */
/* barrier epochs                                                        */
/* ------------------------------------------------------------------ */

static volatile uint64_t *epochs;   /* [8 lines][MAXNP] in a shared file */

static void epochs_open(void)
{
    const char *jid = getenv("FMPL_JOBID"), *ns = getenv("PMIX_NAMESPACE");
    char path[256];
    int fd;
    size_t len = 8 * MAXNP * sizeof(uint64_t);
    if (no_epochs)
        return;
    if (jid)
        snprintf(path, sizeof path, "/tmp/coll_nb_barrier_%s_%d", jid, (int)getppid());
    else if (ns)
        snprintf(path, sizeof path, "/tmp/coll_nb_barrier_%s", ns);
    else if (prog_np == 1)
        snprintf(path, sizeof path, "/tmp/coll_nb_barrier_%d", (int)getpid());
    else
        return;
    for (fd = 0; path[fd]; fd++)
        if (path[fd] != '/' && !isalnum((unsigned char)path[fd]))
            path[fd] = '_';
    if (prog_me == 0) {
        unlink(path);
        fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
        CHECK(fd >= 0, "open %s: %s", path, strerror(errno));
        CHECK(ftruncate(fd, (off_t)len) == 0, "ftruncate: %s", strerror(errno));
        prog_barrier(MAI_CHECK);
    } else {
        prog_barrier(MAI_CHECK);
        fd = open(path, O_RDWR);
        CHECK(fd >= 0, "open %s: %s", path, strerror(errno));
    }
    epochs = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    CHECK(epochs != MAP_FAILED, "mmap: %s", strerror(errno));
    close(fd);
    prog_barrier(MAI_CHECK);
    if (prog_me == 0)
        unlink(path);
}

/* ------------------------------------------------------------------ */
/* completing a request                                                  */
/* ------------------------------------------------------------------ */

static unsigned ncomplete;

/* Between two unsuccessful polls: with more ranks than cores a process
 * that polls without pause keeps the core from the peers it waits for, so
 * after a few polls it gives way to them, as a program computing between
 * its tests would.  (It does not sleep: on the emulated fabrics only a
 * sender in an FMPL call moves its data, and a sleeping poller holds up
 * the others.) */
static void poll_pause(unsigned long polls)
{
    if (polls > 16)
        sched_yield();
}

/* mode 0: fmpl_wait; 1: fmpl_test until done, then fmpl_wait; -1: take
 * turns.  Afterwards the request is inactive. */
static void complete(fmpl_request_t *r, const char *what, int mode)
{
    int rc, done = 0;
    if (mode < 0)
        mode = (int)(ncomplete++ % 2);
    if (mode == 1) {
        double t0 = prog_now();
        unsigned long polls = 0;
        while (!done) {
            rc = fmpl_test(r, &done);
            if (rc != FMPL_SUCCESS)
                prog_fail(__FILE__, __LINE__, "fmpl_test of %s returned %s (%s)", what,
                          fmpl_error_name(rc), fmpl_strerror(rc));
            if (done)
                break;
            if (++polls % 1024 == 0 && prog_now() - t0 > HANG_SEC)
                prog_fail(__FILE__, __LINE__, "%s not complete after %.0f s of fmpl_test",
                          what, HANG_SEC);
            poll_pause(polls);
        }
        /* done stays done until the wait */
        done = 0;
        rc = fmpl_test(r, &done);
        CHECK(rc == FMPL_SUCCESS && done == 1, "fmpl_test of completed %s: rc %s, done %d",
              what, fmpl_error_name(rc), done);
    }
    rc = fmpl_wait(r);
    if (rc != FMPL_SUCCESS)
        prog_fail(__FILE__, __LINE__, "fmpl_wait of %s returned %s (%s)", what,
                  fmpl_error_name(rc), fmpl_strerror(rc));
    rc = fmpl_wait(r);
    CHECK(rc == FMPL_ERR_REQUEST, "a second fmpl_wait of %s returned %s, expected "
          "FMPL_ERR_REQUEST", what, fmpl_error_name(rc));
    rc = fmpl_test(r, &done);
    CHECK(rc == FMPL_ERR_REQUEST, "fmpl_test of %s after its wait returned %s, expected "
          "FMPL_ERR_REQUEST", what, fmpl_error_name(rc));
}

/* ------------------------------------------------------------------ */
/* reduction data                                                        */
/* ------------------------------------------------------------------ */

/* the element types reduced here: the predefined ones and T_USER12 (of
 * coll_ref.h, as the serial reference) */
#define NT (T_USER12 + 1)

static const char *op_name(int t, int k)
{
    static char b[4][16];
    static int u;
    char *p = b[u++ % 4];
    if (t == T_USER12)
        return "user12";
    snprintf(p, 16, "%s%s", tname[t], kname[k]);
    return p;
}

/* the data of a reduction on m: every call (salt) its own */
static struct ref_data rdata(const cm_t *m, unsigned salt)
{
    struct ref_data d = {seed, m->n, salt};
    return d;
}

/* small ints for the blocking allreduces called in between */
static int mixval(int r, long j, unsigned round)
{
    return (int)(((uint32_t)(r + 1) * 2654435761u ^ (uint32_t)j * 40503u ^ round) % 1000u);
}

/* ------------------------------------------------------------------ */
/* one nonblocking collective: set up, start, check                     */
/* ------------------------------------------------------------------ */

enum { I_BARRIER, I_BCAST, I_REDUCE, I_ALLREDUCE, I_ALLGATHER, I_GATHER, I_SCATTER,
       I_ALLTOALL, NKIND };
static const char *iname[NKIND] = {"fmpl_ibarrier", "fmpl_ibcast", "fmpl_ireduce",
                                   "fmpl_iallreduce", "fmpl_iallgather", "fmpl_igather",
                                   "fmpl_iscatter", "fmpl_ialltoall"};

typedef struct nb {
    cm_t *m;
    int kind, root, inplace, nullzero, t, k;
    size_t size;                 /* bytes (ibcast, reductions), bytes per block (others) */
    long count;                  /* elements (reductions) */
    unsigned salt;
    uint64_t s;                  /* data seed */
    uint64_t epoch;              /* ibarrier: its number on the communicator */
    unsigned char *sb, *rb;
    size_t sbn, rbn;
    fmpl_request_t req;
    char what[200];
} nb_t;

static void nb_describe(nb_t *o)
{
    char a[120];
    switch (o->kind) {
    case I_BARRIER: snprintf(a, sizeof a, "(#%llu)", (unsigned long long)o->epoch); break;
    case I_BCAST: snprintf(a, sizeof a, "(%zu bytes, root %d)", o->size, o->root); break;
    case I_REDUCE:
        snprintf(a, sizeof a, "(op %s, count %ld, root %d)", op_name(o->t, o->k), o->count,
                 o->root);
        break;
    case I_ALLREDUCE:
        snprintf(a, sizeof a, "(op %s, count %ld)", op_name(o->t, o->k), o->count);
        break;
    case I_GATHER:
        snprintf(a, sizeof a, "(%zu bytes per member, root %d)", o->size, o->root);
        break;
    case I_SCATTER:
        snprintf(a, sizeof a, "(%zu bytes per member, root %d%s)", o->size, o->root,
                 o->inplace ? ", in place at root" : "");
        break;
    default:
        snprintf(a, sizeof a, "(%zu bytes per %s%s)", o->size,
                 o->kind == I_ALLTOALL ? "block" : "member", o->inplace ? ", in place" : "");
    }
    snprintf(o->what, sizeof o->what, "%s%s%s on %s (member %d of %d)", iname[o->kind], a,
             o->size == 0 && o->nullzero && o->kind != I_BARRIER ? " [NULL buffers]" : "",
             o->m->name, o->m->me, o->m->n);
}

/* `size`: bytes for ibcast, elements for the reductions, bytes per block
 * for the others */
static void nb_setup(nb_t *o, cm_t *m, int kind, size_t size, int root, int t, int k,
                     int inplace, unsigned salt)
{
    int n = m->n, me = m->me, i;
    unsigned char *b;
    struct ref_data d = rdata(m, salt);
    memset(o, 0, sizeof *o);
    o->m = m;
    o->kind = kind;
    o->root = root;
    o->t = t;
    o->k = k;
    o->salt = salt;
    o->inplace = inplace;
    o->nullzero = (int)(salt & 1);
    o->size = size;
    o->s = hash4((uint64_t)seed, (uint64_t)kind * 1000003u + salt, size, (uint64_t)m->tag);
    switch (kind) {
    case I_BARRIER:
        break;
    case I_BCAST:
        o->rb = gbuf(o->rbn = size);
        if (me == root)
            pat_fill(o->rb, size, o->s, root, 0);
        break;
    case I_REDUCE:
    case I_ALLREDUCE:
        o->count = (long)size;
        o->size = size * tsize[t];
        o->rb = gbuf(o->rbn = o->size);
        ref_fill(&d, o->rb, t, k, me, 0, o->count);
        break;
    case I_ALLGATHER:
        o->rb = gbuf(o->rbn = size * (size_t)n);
        if (inplace) {
            pat_fill(o->rb + (size_t)me * size, size, o->s, me, 0);
        } else {
            o->sb = gbuf(o->sbn = size);
            pat_fill(o->sb, size, o->s, me, 0);
        }
        break;
    case I_GATHER:
        o->sb = gbuf(o->sbn = size);
        pat_fill(o->sb, size, o->s, me, 0);
        if (me == root)
            o->rb = gbuf(o->rbn = size * (size_t)n);
        break;
    case I_SCATTER:
        if (me == root) {
            o->sb = gbuf(o->sbn = size * (size_t)n);
            for (i = 0; i < n; i++)
                pat_fill(o->sb + (size_t)i * size, size, o->s, i, 0);
        }
        if (!(inplace && me == root))
            o->rb = gbuf(o->rbn = size);
        break;
    case I_ALLTOALL:
        o->rb = gbuf(o->rbn = size * (size_t)n);
        b = inplace ? o->rb : (o->sb = gbuf(o->sbn = size * (size_t)n));
        for (i = 0; i < n; i++)       /* block i: from me to member i */
            pat_fill(b + (size_t)i * size, size, o->s, me, i);
        break;
    }
    nb_describe(o);
}

static int nb_start(nb_t *o)
{
    cm_t *m = o->m;
    size_t z = o->size;
    int me = m->me, root = o->root;
    unsigned char *rb = o->rb, *sb = o->sb;
    if (z == 0 && o->nullzero)
        rb = sb = NULL;             /* nothing is read or written */
    /* a request need not be initialised */
    memset(&o->req, 0x5a, sizeof o->req);
    switch (o->kind) {
    case I_BARRIER:
        o->epoch = ++m->nbar;
        nb_describe(o);
        if (epochs && m->tag >= 0)
            __atomic_store_n(&epochs[m->tag * MAXNP + prog_me], o->epoch, __ATOMIC_SEQ_CST);
        return fmpl_ibarrier(m->h, &o->req);
    case I_BCAST:
        return fmpl_ibcast(rb, z, root, m->h, &o->req);
    case I_REDUCE:
        return fmpl_ireduce(rb, (int)o->count, op_of(o->t, o->k), root, m->h, &o->req);
    case I_ALLREDUCE:
        return fmpl_iallreduce(rb, (int)o->count, op_of(o->t, o->k), m->h, &o->req);
    case I_ALLGATHER:
        if (o->inplace)
            return fmpl_iallgather(rb ? rb + (size_t)me * z : NULL, z, rb, m->h, &o->req);
        return fmpl_iallgather(sb, z, rb, m->h, &o->req);
    case I_GATHER:
        return fmpl_igather(sb, z, me == root ? rb : NULL, root, m->h, &o->req);
    case I_SCATTER:
        if (me == root && o->inplace)
            return fmpl_iscatter(sb, z, sb ? sb + (size_t)root * z : NULL, root, m->h,
                                 &o->req);
        return fmpl_iscatter(me == root ? sb : NULL, z, rb, root, m->h, &o->req);
    case I_ALLTOALL:
        if (o->inplace)
            return fmpl_ialltoall(rb, z, rb, m->h, &o->req);
        return fmpl_ialltoall(sb, z, rb, m->h, &o->req);
    }
    return FMPL_ERR_INTERNAL;
}

static void nb_start_ok(nb_t *o)
{
    int rc = nb_start(o);
    if (rc != FMPL_SUCCESS)
        prog_fail(__FILE__, __LINE__, "%s returned %s (%s), expected FMPL_SUCCESS", o->what,
                  fmpl_error_name(rc), fmpl_strerror(rc));
}

static void nb_pat(const nb_t *o, const unsigned char *buf, size_t size, int rank, int index,
                   const char *part, int blk)
{
    long off = pat_find_error(buf, size, o->s, rank, index);
    if (off >= 0) {
        char p[80];
        if (blk >= 0)
            snprintf(p, sizeof p, "%s %d", part, blk);
        else
            snprintf(p, sizeof p, "%s", part);
        prog_fail(__FILE__, __LINE__, "%s: %s: byte %ld (of %zu) is 0x%02x, expected 0x%02x",
                  o->what, p, off, size, buf[off],
                  pat_byte(o->s, rank, index, (size_t)off));
    }
}

static void nb_guard(const nb_t *o, const unsigned char *buf, size_t n, const char *which)
{
    size_t i;
    if (!buf)
        return;
    for (i = 0; i < GUARD; i++)
        if (buf[n + i] != PROG_POISON)
            prog_fail(__FILE__, __LINE__, "%s: guard byte %zu after the %s (%zu bytes) is "
                      "0x%02x, expected 0x%02x", o->what, i, which, n, buf[n + i],
                      PROG_POISON);
}

/* the serial reference of o's reduction; the last one is kept (the
 * same data goes to every root) */
static const unsigned char *red_reference(const nb_t *o)
{
    static unsigned char *ref;
    static int rt = -1, rk, rn;
    static long rcount;
    static unsigned rsalt;
    struct ref_data d = rdata(o->m, o->salt);
    if (ref && rt == o->t && rk == o->k && rn == o->m->n && rcount == o->count &&
        rsalt == o->salt)
        return ref;
    free(ref);
    ref = prog_xmalloc(o->size + 1);
    ref_reduce(&d, ref, o->t, o->k, 0, o->count, o->m->n);
    rt = o->t;
    rk = o->k;
    rn = o->m->n;
    rcount = o->count;
    rsalt = o->salt;
    return ref;
}

static void nb_compare_red(const nb_t *o)
{
    const unsigned char *ref = red_reference(o);
    long i = ref_first_diff(o->rb, ref, o->t, o->count, NULL);
    if (i >= 0) {
        char g[128], w[128];
        describe_elem(g, sizeof g, o->rb, o->t, i);
        describe_elem(w, sizeof w, ref, o->t, i);
        prog_fail(__FILE__, __LINE__, "%s: element %ld is %s, expected %s (the serial "
                  "reference, bitwise)", o->what, i, g, w);
    }
}

static void nb_check(const nb_t *o)
{
    cm_t *m = o->m;
    int n = m->n, me = m->me, root = o->root, i;
    size_t z = o->size;
    switch (o->kind) {
    case I_BARRIER:
        if (epochs && m->tag >= 0)
            for (i = 0; i < n; i++) {
                uint64_t v = __atomic_load_n(&epochs[m->tag * MAXNP + m->wr[i]],
                                             __ATOMIC_SEQ_CST);
                CHECK(v >= o->epoch, "%s completed before member %d (world %d) started it "
                      "(its count of ibarriers is %llu, expected >= %llu)", o->what, i,
                      m->wr[i], (unsigned long long)v, (unsigned long long)o->epoch);
            }
        break;
    case I_BCAST:
        nb_pat(o, o->rb, z, root, 0, "the buffer", -1);
        nb_guard(o, o->rb, z, "buffer");
        break;
    case I_REDUCE:
    case I_ALLREDUCE:
        if (o->kind == I_ALLREDUCE || me == root)
            nb_compare_red(o);
        nb_guard(o, o->rb, z, "buffer");
        break;
    case I_ALLGATHER:
        for (i = 0; i < n; i++)
            nb_pat(o, o->rb + (size_t)i * z, z, i, 0, "receive block", i);
        nb_guard(o, o->rb, z * (size_t)n, "receive buffer");
        if (!o->inplace) {
            nb_pat(o, o->sb, z, me, 0, "the send buffer (changed)", -1);
            nb_guard(o, o->sb, z, "send buffer");
        }
        break;
    case I_GATHER:
        nb_pat(o, o->sb, z, me, 0, "the send buffer (changed)", -1);
        nb_guard(o, o->sb, z, "send buffer");
        if (me == root) {
            for (i = 0; i < n; i++)
                nb_pat(o, o->rb + (size_t)i * z, z, i, 0, "receive block", i);
            nb_guard(o, o->rb, z * (size_t)n, "receive buffer");
        }
        break;
    case I_SCATTER:
        if (me == root) {
            for (i = 0; i < n; i++)
                nb_pat(o, o->sb + (size_t)i * z, z, i, 0, "root's send block (changed)", i);
            nb_guard(o, o->sb, z * (size_t)n, "send buffer");
        }
        if (o->rb) {
            nb_pat(o, o->rb, z, me, 0, "the received block", -1);
            nb_guard(o, o->rb, z, "receive buffer");
        }
        break;
    case I_ALLTOALL:
        for (i = 0; i < n; i++)       /* from member i to me */
            nb_pat(o, o->rb + (size_t)i * z, z, i, me, "block from member", i);
        nb_guard(o, o->rb, z * (size_t)n, "receive buffer");
        if (!o->inplace) {
            for (i = 0; i < n; i++)
                nb_pat(o, o->sb + (size_t)i * z, z, me, i, "send block (changed)", i);
            nb_guard(o, o->sb, z * (size_t)n, "send buffer");
        }
        break;
    }
}

static void nb_free(nb_t *o)
{
    free(o->sb);
    free(o->rb);
    o->sb = o->rb = NULL;
}

/* start, complete, check, free */
static void nb_run(cm_t *m, int kind, size_t size, int root, int t, int k, int inplace,
                   unsigned salt)
{
    nb_t o;
    nb_setup(&o, m, kind, size, root, t, k, inplace, salt);
    nb_start_ok(&o);
    complete(&o.req, o.what, -1);
    nb_check(&o);
    nb_free(&o);
}

/* ------------------------------------------------------------------ */
/* sizes                                                                 */
/* ------------------------------------------------------------------ */

static size_t szl[16];
static int nszl;

static void add_size(size_t s)
{
    int i, j;
    if (s > max_bytes)
        return;
    for (i = 0; i < nszl; i++)
        if (szl[i] == s)
            return;
    for (i = 0; i < nszl && szl[i] < s; i++)
        ;
    for (j = nszl; j > i; j--)
        szl[j] = szl[j - 1];
    szl[i] = s;
    nszl++;
}

/* the list starts 0, 1, 7, 1000 (bytes or elements) */
static void sizes_small(void)
{
    nszl = 0;
    add_size(0);
    add_size(1);
    add_size(7);
    add_size(1000);
}

/* bytes: 0, 1, 7, 1000, 65539 and `top` (MAX; per block MAX / n) */
static void sizes_bytes(size_t top)
{
    sizes_small();
    add_size(65536 + 3);
    add_size(top);
}

/* element counts: 0, 1, 7, 1000, just above 64 KiB and MAX bytes */
static void sizes_counts(size_t es)
{
    sizes_small();
    if ((65536 / es + 1) * es <= max_bytes)
        add_size(65536 / es + 1);
    add_size(max_bytes / es);
}

/* ------------------------------------------------------------------ */
/* single calls                                                          */
/* ------------------------------------------------------------------ */



static void lap(cm_t *m, const char *what, double *t)
{
    double now = prog_now();
    if (verbose > 1 && m->me == 0)
        printf("coll_nb: %s: single %s %.2f s\n", m->name, what, now - *t);
    *t = now;
}

/* Is `root` one of the roots to try for a call moving `bytes` (in all)?
 * Every root up to 8 members, or up to 1000 bytes; above, on the larger
 * jobs, the first, middle and last and one more in turn. */
static int try_root(const cm_t *m, int root, size_t bytes, unsigned turn)
{
    int n = m->n;
    if (n <= 8 || bytes <= 1000)
        return 1;
    return root == 0 || root == n / 2 || root == n - 1 || root == (int)(turn % (unsigned)n);
}

static void test_singles(cm_t *m)
{
    int si, root, t, k, n = m->n, ip;
    double tl = prog_now();
    for (si = 0; si < 6; si++)
        nb_run(m, I_BARRIER, 0, 0, 0, 0, 0, m->nsalt++);
    /* ibcast */
    sizes_bytes(max_bytes);
    for (si = 0; si < nszl; si++)
        for (root = 0; root < n; root++)
            if (try_root(m, root, szl[si], (unsigned)si))
                nb_run(m, I_BCAST, szl[si], root, 0, 0, 0, m->nsalt++);
    lap(m, "ibarrier, ibcast", &tl);
    /* the block movers */
    sizes_bytes(max_bytes / (size_t)n);
    for (si = 0; si < nszl; si++) {
        for (ip = 0; ip < 2; ip++) {
            nb_run(m, I_ALLGATHER, szl[si], 0, 0, 0, ip, m->nsalt++);
            nb_run(m, I_ALLTOALL, szl[si], 0, 0, 0, ip, m->nsalt++);
        }
        for (root = 0; root < n; root++) {
            if (!try_root(m, root, szl[si] * (size_t)n, (unsigned)si))
                continue;
            nb_run(m, I_GATHER, szl[si], root, 0, 0, 0, m->nsalt++);
            nb_run(m, I_SCATTER, szl[si], root, 0, 0, (root + si) % 2, m->nsalt++);
        }
    }
    lap(m, "iallgather, ialltoall, igather, iscatter", &tl);
    /* reductions: every op, every root */
    for (t = 0; t < NT; t++)
        for (k = 0; k < 3; k++) {
            if (t == T_USER12 && k > 0)
                break;
            CHECK(fmpl_op_size(op_of(t, k)) == tsize[t], "fmpl_op_size(%s) = %zu, expected "
                  "%zu", op_name(t, k), fmpl_op_size(op_of(t, k)), tsize[t]);
            sizes_counts(tsize[t]);
            for (si = 0; si < nszl; si++) {
                /* the same data for the iallreduce and the roots: every
                 * root with one op of each type, one root (in turn)
                 * with the others */
                unsigned salt = m->nsalt++;
                int every = (t == T_INT && k == K_SUM) || (t == T_DOUBLE && k == K_MAX) ||
                            (t == T_CFLOAT && k == K_MIN) || (t == T_FLOAT && k == K_MIN) ||
                            (t == T_CDOUBLE && k == K_SUM) || t == T_USER12;
                nb_run(m, I_ALLREDUCE, szl[si], 0, t, k, 0, salt);
                for (root = 0; root < n; root++)
                    if ((every && try_root(m, root, szl[si] * tsize[t], (unsigned)(t + si))) ||
                        root == (t * 3 + k + si) % n)
                        nb_run(m, I_REDUCE, szl[si], root, t, k, 0, salt);
            }
            lap(m, op_name(t, k), &tl);
        }
}

/* ------------------------------------------------------------------ */
/* ties and inexact sums: bitwise the same on every member               */
/* ------------------------------------------------------------------ */

/* bitwise the same on every member of m (compared over MAI_CHECK) */
static void same_everywhere(cm_t *m, const void *p, size_t n, int t, const char *what)
{
    ref_same_everywhere(p, n, t, m->n, m->me, m->wr, MAI_CHECK, m->name, what);
}

static void test_ties(cm_t *m)
{
    static const long counts[] = {1, 5, 100, 3000};
    int t, k, ci, zeros, n = m->n, me = m->me;
    struct ref_data d = rdata(m, 0);
    long i;
    for (zeros = 0; zeros < 2; zeros++)
        for (t = T_FLOAT; t <= T_CDOUBLE; t++)
            for (k = K_MAX; k <= K_MIN; k++)
                for (ci = 0; ci < 4; ci++) {
                    long count = counts[ci];
                    size_t es = tsize[t], bytes = (size_t)count * es;
                    unsigned char *buf, *cand;
                    fmpl_request_t req;
                    char w[160];
                    if (bytes > max_bytes)
                        continue;
                    buf = gbuf(bytes);
                    cand = prog_xmalloc(bytes * (size_t)n);
                    ref_tie_fill(cand, t, count, n, zeros);
                    memcpy(buf, cand + (size_t)me * bytes, bytes);
                    snprintf(w, sizeof w, "fmpl_iallreduce(op %s, count %ld) with ties%s on "
                             "%s (member %d of %d)", op_name(t, k), count,
                             zeros ? " (+0.0 and -0.0)" : "", m->name, me, n);
                    CHECK_RC(fmpl_iallreduce(buf, (int)count, op_of(t, k), m->h, &req),
                             FMPL_SUCCESS);
                    complete(&req, w, -1);
                    POISON_VERIFY(buf + bytes, GUARD, PROG_POISON, "bytes after the buffer");
                    i = ref_tie_check(buf, cand, t, count, n);
                    if (i >= 0) {
                        char g[128];
                        describe_elem(g, sizeof g, buf, t, i);
                        prog_fail(__FILE__, __LINE__, "%s: element %ld is %s, which no member "
                                  "contributed", w, i, g);
                    }
                    same_everywhere(m, buf, bytes, t, w);
                    free(buf);
                    free(cand);
                }
    /* inexact sums: close to the reference, bitwise the same everywhere */
    for (t = T_FLOAT; t <= T_CDOUBLE; t++) {
        long count = 3000;
        size_t es = tsize[t], bytes = (size_t)count * es, comps = es / (single_prec(t) ? 4 : 8), c;
        size_t ncomp = (size_t)count * comps;
        unsigned char *buf;
        fmpl_request_t req;
        char w[160];
        if (bytes > max_bytes)
            continue;
        buf = gbuf(bytes);
        ref_inexact_fill(&d, buf, t, me, 0, ncomp);
        snprintf(w, sizeof w, "fmpl_iallreduce(op %s, count %ld) of inexact data on %s "
                 "(member %d of %d)", op_name(t, K_SUM), count, m->name, me, n);
        CHECK_RC(fmpl_iallreduce(buf, (int)count, op_of(t, K_SUM), m->h, &req), FMPL_SUCCESS);
        complete(&req, w, -1);
        for (c = 0; c < ncomp; c++) {
            double tol, ref = ref_inexact_sum(&d, t, c, n, &tol), g = ref_component(buf, t, c);
            CHECK(fabs(g - ref) <= tol, "%s: component %zu is %.17g, expected %.17g "
                  "(within %g)", w, c, g, ref, tol);
        }
        same_everywhere(m, buf, bytes, t, w);
        free(buf);
    }
}

/* ------------------------------------------------------------------ */
/* several in flight on one communicator                                 */
/* ------------------------------------------------------------------ */

/* a blocking fmpl_allreduce of `count` small ints, checked */
static void blocking_allreduce(cm_t *m, long count, unsigned round, const char *when)
{
    int32_t *v = (int32_t *)gbuf((size_t)count * 4);
    long j;
    int r;
    for (j = 0; j < count; j++)
        v[j] = mixval(m->me, j, round);
    CHECK_RC(fmpl_allreduce(count ? v : NULL, (int)count, fmpl_isum, m->h, NULL), FMPL_SUCCESS);
    for (j = 0; j < count; j++) {
        long e = 0;
        for (r = 0; r < m->n; r++)
            e += mixval(r, j, round);
        CHECK(v[j] == e, "blocking fmpl_allreduce(isum, count %ld) on %s %s: element %ld is "
              "%d, expected %ld", count, m->name, when, j, v[j], e);
    }
    POISON_VERIFY(v + count, GUARD, PROG_POISON, "bytes after the blocking allreduce buffer");
    free(v);
}

/* a blocking fmpl_bcast, checked */
static void blocking_bcast(cm_t *m, size_t size, int root, unsigned round, const char *when)
{
    unsigned char *b = gbuf(size);
    uint64_t s = hash4((uint64_t)seed, 777, round, (uint64_t)m->tag);
    long off;
    if (m->me == root)
        pat_fill(b, size, s, root, 1);
    CHECK_RC(fmpl_bcast(size ? b : NULL, size, root, m->h), FMPL_SUCCESS);
    off = pat_find_error(b, size, s, root, 1);
    CHECK(off < 0, "blocking fmpl_bcast(%zu bytes, root %d) on %s %s: byte %ld is 0x%02x, "
          "expected 0x%02x", size, root, m->name, when, off, off >= 0 ? b[off] : 0,
          off >= 0 ? pat_byte(s, root, 1, (size_t)off) : 0);
    POISON_VERIFY(b + size, GUARD, PROG_POISON, "bytes after the blocking bcast buffer");
    free(b);
}

/* complete the requests of o[0..no-1] (started in that order) in order
 * `how`:
 *   0 reverse, 1 a random order, 2 forward, 3 poll them all with fmpl_test
 *   (round robin) until every one is done, then wait in a random order */
static void complete_all(nb_t *o, int no, int how, prog_rng_t *g)
{
    int ord[DEEP], i, left, done[DEEP];
    if (how == 0)
        for (i = 0; i < no; i++)
            ord[i] = no - 1 - i;
    else if (how == 2)
        for (i = 0; i < no; i++)
            ord[i] = i;
    else
        permute(ord, no, g);
    if (how == 3) {
        double t0 = prog_now();
        unsigned long polls = 0;
        memset(done, 0, sizeof done);
        left = no;
        while (left > 0) {
            for (i = 0; i < no; i++) {
                int d = 0, rc;
                if (done[i])
                    continue;
                rc = fmpl_test(&o[i].req, &d);
                if (rc != FMPL_SUCCESS)
                    prog_fail(__FILE__, __LINE__, "fmpl_test of %s returned %s", o[i].what,
                              fmpl_error_name(rc));
                if (d) {
                    done[i] = 1;
                    left--;
                }
            }
            if (left)
                poll_pause(++polls);
            if (left && polls % 256 == 0 && prog_now() - t0 > HANG_SEC) {
                for (i = 0; i < no && done[i]; i++)
                    ;
                prog_fail(__FILE__, __LINE__, "%d collectives in flight: %s (and %d more) "
                          "not complete after %.0f s of fmpl_test", no, o[i].what, left - 1,
                          HANG_SEC);
            }
        }
    }
    memset(done, 0, sizeof done);
    for (i = 0; i < no; i++) {
        nb_t *p = &o[ord[i]];
        int j;
        complete(&p->req, p->what, how == 3 ? 0 : -1);
        done[ord[i]] = 1;
        /* those started before it on its communicator have completed
         * too (they run in order): they test done, and wait at once */
        for (j = 0; j < ord[i]; j++) {
            int d = 0, rc;
            if (done[j] || o[j].m != p->m)
                continue;
            rc = fmpl_test(&o[j].req, &d);
            CHECK(rc == FMPL_SUCCESS && d == 1, "%s completed, but %s, started before it on "
                  "the same communicator, is not (fmpl_test: %s, done %d)", p->what,
                  o[j].what, fmpl_error_name(rc), d);
        }
        nb_check(p);
        nb_free(p);
    }
}

static void test_multi(cm_t *m, int reps)
{
    int rep, n = m->n;
    prog_rng_t g;
    prog_rng_seed(&g, (uint64_t)seed * 7919u + (uint64_t)m->tag * 31u + (uint64_t)n);
    for (rep = 0; rep < reps; rep++) {
        nb_t o[8];
        int big = rep % 2, t = (int)prog_rng_below(&g, NT), k = (int)prog_rng_below(&g, 3);
        size_t sz = big ? (max_bytes < 65539 ? max_bytes : 65539) : 7 + (size_t)rep;
        size_t blk = big ? sz / (size_t)n : (size_t)rep + 1;
        char when[64];
        if (t == T_USER12)
            k = 0;
        nb_setup(&o[0], m, I_BCAST, sz, rep % n, 0, 0, 0, m->nsalt++);
        nb_setup(&o[1], m, I_ALLREDUCE, big ? sz / 8 : (size_t)rep + 3, 0, T_DOUBLE, K_SUM, 0,
                 m->nsalt++);
        nb_setup(&o[2], m, I_ALLTOALL, blk, 0, 0, 0, rep % 4 >= 2, m->nsalt++);
        nb_setup(&o[3], m, I_BARRIER, 0, 0, 0, 0, 0, m->nsalt++);
        nb_setup(&o[4], m, I_GATHER, blk, (rep * 3 + 1) % n, 0, 0, 0, m->nsalt++);
        nb_setup(&o[5], m, I_SCATTER, blk, (rep + 2) % n, 0, 0, rep % 3 == 0, m->nsalt++);
        nb_setup(&o[6], m, I_REDUCE, (big ? sz : 64) / tsize[t], (rep * 5 + 3) % n, t, k, 0,
                 m->nsalt++);
        nb_setup(&o[7], m, I_ALLGATHER, blk, 0, 0, 0, rep % 2 == 0, m->nsalt++);
        snprintf(when, sizeof when, "with 3 collectives in flight (round %d)", rep);
        nb_start_ok(&o[0]);
        nb_start_ok(&o[1]);
        nb_start_ok(&o[2]);
        blocking_allreduce(m, big ? 20000 : 5, (unsigned)rep, when);
        nb_start_ok(&o[3]);
        nb_start_ok(&o[4]);
        nb_start_ok(&o[5]);
        snprintf(when, sizeof when, "with 6 collectives in flight (round %d)", rep);
        blocking_bcast(m, big ? 30000 : 100, (rep + 1) % n, (unsigned)rep, when);
        nb_start_ok(&o[6]);
        nb_start_ok(&o[7]);
        if (rep % 3 == 1) {
            snprintf(when, sizeof when, "with 8 collectives in flight (round %d)", rep);
            CHECK_RC(fmpl_barrier(m->h), FMPL_SUCCESS);
            blocking_allreduce(m, 3, (unsigned)rep + 1000u, when);
        }
        complete_all(o, 8, rep % 4, &g);
    }
}

/* a deep queue: DEEP collectives of random kinds (small) in flight at
 * once on the communicator, completed in reverse or a random order */
static void test_deep(cm_t *m, int reps)
{
    static const size_t sizes[] = {0, 1, 7, 24, 100, 1000};
    int rep, i, n = m->n;
    prog_rng_t g;
    nb_t *o = prog_xmalloc(DEEP * sizeof *o);
    prog_rng_seed(&g, (uint64_t)seed * 31337u + (uint64_t)m->tag * 7u + (uint64_t)n);
    for (rep = 0; rep < reps; rep++) {
        for (i = 0; i < DEEP; i++) {
            int kind = (int)prog_rng_below(&g, NKIND), root = (int)prog_rng_below(&g, (uint64_t)n);
            int t = (int)prog_rng_below(&g, NT), k = (int)prog_rng_below(&g, 3);
            size_t size = sizes[prog_rng_below(&g, sizeof sizes / sizeof sizes[0])];
            if (t == T_USER12)
                k = 0;
            if (kind == I_REDUCE || kind == I_ALLREDUCE)
                size = size / tsize[t] + 1;
            nb_setup(&o[i], m, kind, size, root, t, k, (int)prog_rng_below(&g, 2), m->nsalt++);
            nb_start_ok(&o[i]);
        }
        complete_all(o, DEEP, rep % 2 ? 1 : 0, &g);
    }
    free(o);
}

/* ------------------------------------------------------------------ */
/* user point-to-point traffic during the collectives                    */
/* ------------------------------------------------------------------ */

static void test_p2p(cm_t *m, int reps)
{
    int rep, n = m->n, me = m->me, i;
    int right = m->wr[(me + 1) % n], left = m->wr[(me - 1 + n) % n];
    prog_rng_t g;
    prog_rng_seed(&g, (uint64_t)seed * 104729u + (uint64_t)m->tag * 17u + (uint64_t)n);
    for (rep = 0; rep < reps; rep++) {
        size_t ps = rep % 2 ? (max_bytes < 100000 ? max_bytes : 100000) : 8 + (size_t)rep;
        uint64_t s = hash4((uint64_t)seed, 4242, (uint64_t)rep, (uint64_t)m->tag);
        unsigned char *sbuf = gbuf(ps), *rbuf = gbuf(ps);
        fmpl_request_t rs, rr;
        nb_t o[4];
        int ord[6];
        char ws[120], wr[120];
        pat_fill(sbuf, ps, s, prog_me, rep);
        snprintf(ws, sizeof ws, "fmpl_isend(%zu bytes to world rank %d, index %d) during "
                 "collectives on %s", ps, right, MAI_USER, m->name);
        snprintf(wr, sizeof wr, "fmpl_irecv(%zu bytes from world rank %d, index %d) during "
                 "collectives on %s", ps, left, MAI_USER, m->name);
        nb_setup(&o[0], m, I_ALLREDUCE, rep % 2 ? 10000 : 5, 0, T_INT, K_SUM, 0, m->nsalt++);
        nb_setup(&o[1], m, I_BCAST, rep % 2 ? 50000 : 9, rep % n, 0, 0, 0, m->nsalt++);
        nb_setup(&o[2], m, I_ALLTOALL, rep % 2 ? 4000 : 3, 0, 0, 0, rep % 4 == 1, m->nsalt++);
        nb_setup(&o[3], m, I_BARRIER, 0, 0, 0, 0, 0, m->nsalt++);
        if (rep % 2 == 0) {           /* p2p first */
            CHECK_RC(fmpl_irecv(rbuf, ps, left, MAI_USER, &rr), FMPL_SUCCESS);
            CHECK_RC(fmpl_isend(sbuf, ps, right, MAI_USER, &rs), FMPL_SUCCESS);
            for (i = 0; i < 4; i++)
                nb_start_ok(&o[i]);
        } else {                      /* in between */
            nb_start_ok(&o[0]);
            nb_start_ok(&o[1]);
            CHECK_RC(fmpl_irecv(rbuf, ps, left, MAI_USER, &rr), FMPL_SUCCESS);
            nb_start_ok(&o[2]);
            CHECK_RC(fmpl_isend(sbuf, ps, right, MAI_USER, &rs), FMPL_SUCCESS);
            nb_start_ok(&o[3]);
        }
        permute(ord, 6, &g);
        for (i = 0; i < 6; i++) {
            if (ord[i] == 4) {
                complete(&rs, ws, -1);
            } else if (ord[i] == 5) {
                long off;
                complete(&rr, wr, -1);
                off = pat_find_error(rbuf, ps, s, left, rep);
                CHECK(off < 0, "%s: byte %ld is 0x%02x, expected 0x%02x", wr, off,
                      off >= 0 ? rbuf[off] : 0, off >= 0 ? pat_byte(s, left, rep, (size_t)off) : 0);
                POISON_VERIFY(rbuf + ps, GUARD, PROG_POISON, "bytes after the p2p buffer");
            } else {
                nb_t *p = &o[ord[i]];
                complete(&p->req, p->what, -1);
                nb_check(p);
                nb_free(p);
            }
        }
        PAT_VERIFY(sbuf, ps, s, prog_me, rep);
        free(sbuf);
        free(rbuf);
    }
}

/* A collective advances while its process is in any FMPL call: the root
 * of an ibcast (member 0 of an iallreduce) starts it and then only sits in
 * blocking receives of the others' word that they have the result - which
 * they cannot have unless those receives move the collective. */
static void test_progress(cm_t *m, int reps)
{
    int rep, n = m->n, me = m->me, i;
    for (rep = 0; rep < reps; rep++) {
        int kind = rep % 2 ? I_ALLREDUCE : I_BCAST, root = kind == I_BCAST ? (rep / 2) % n : 0;
        size_t size = max_bytes < 100000 ? max_bytes : 100000;
        nb_t o;
        uint64_t word;
        nb_setup(&o, m, kind, kind == I_BCAST ? size : size / 8, root, T_DOUBLE, K_SUM, 0,
                 m->nsalt++);
        nb_start_ok(&o);
        if (me == root) {
            for (i = 0; i < n; i++) {
                if (i == root)
                    continue;
                word = 0;
                CHECK_RC(fmpl_recv(&word, sizeof word, m->wr[i], MAI_USER), FMPL_SUCCESS);
                CHECK(word == 0x600d000000000000ull + (uint64_t)i, "%s: member %d's word "
                      "after completing it is %#" PRIx64, o.what, i, word);
            }
            complete(&o.req, o.what, -1);
        } else {
            complete(&o.req, o.what, 1);
            word = 0x600d000000000000ull + (uint64_t)me;
            CHECK_RC(fmpl_send(&word, sizeof word, m->wr[root], MAI_USER), FMPL_SUCCESS);
        }
        nb_check(&o);
        nb_free(&o);
    }
}

/* ------------------------------------------------------------------ */
/* a random mix with up to four in flight                                */
/* ------------------------------------------------------------------ */

static void test_mix(cm_t *m, int rounds)
{
    static const size_t sizes[] = {0, 1, 7, 24, 25, 1000, 4096, 65539, 100000};
    prog_rng_t g;
    nb_t slot[4];
    int used[4] = {0, 0, 0, 0}, seq[4] = {0, 0, 0, 0}, nin = 0, started = 0, n = m->n;
    unsigned blk = 0;
    prog_rng_seed(&g, (uint64_t)seed * 1000003u + (uint64_t)m->tag * 31u + (uint64_t)n);
    while (started < rounds || nin > 0) {
        int act = (int)prog_rng_below(&g, 10), j;
        if (started < rounds && nin < 4 && (nin == 0 || act < 5)) {
            int kind = (int)prog_rng_below(&g, NKIND), root = (int)prog_rng_below(&g, (uint64_t)n);
            int t = (int)prog_rng_below(&g, NT), k = (int)prog_rng_below(&g, 3);
            int ip = (int)prog_rng_below(&g, 2);
            size_t size = sizes[prog_rng_below(&g, sizeof sizes / sizeof sizes[0])];
            if (size > max_bytes)
                size = max_bytes;
            if (t == T_USER12)
                k = 0;
            if (kind == I_REDUCE || kind == I_ALLREDUCE)
                size /= tsize[t];
            else if (kind >= I_ALLGATHER)
                size /= (size_t)n;
            for (j = 0; used[j]; j++)
                ;
            nb_setup(&slot[j], m, kind, size, root, t, k, ip, m->nsalt++);
            nb_start_ok(&slot[j]);
            used[j] = 1;
            seq[j] = started;
            nin++;
            started++;
        } else if (nin > 0 && act < 9) {
            int which = (int)prog_rng_below(&g, (uint64_t)nin);
            for (j = 0; j < 4; j++)
                if (used[j] && which-- == 0)
                    break;
            complete(&slot[j].req, slot[j].what, -1);
            for (which = 0; which < 4; which++) {
                int d = 0, rc;
                if (which == j || !used[which] || seq[which] > seq[j])
                    continue;
                rc = fmpl_test(&slot[which].req, &d);
                CHECK(rc == FMPL_SUCCESS && d == 1, "%s completed, but %s, started before it, "
                      "is not (fmpl_test: %s, done %d)", slot[j].what, slot[which].what,
                      fmpl_error_name(rc), d);
            }
            nb_check(&slot[j]);
            nb_free(&slot[j]);
            used[j] = 0;
            nin--;
        } else {
            char when[64];
            snprintf(when, sizeof when, "in the mix with %d in flight", nin);
            if (blk % 3 == 0)
                blocking_allreduce(m, (long)prog_rng_below(&g, 3000), 5000u + blk, when);
            else if (blk % 3 == 1)
                blocking_bcast(m, (size_t)prog_rng_below(&g, 20000),
                               (int)prog_rng_below(&g, (uint64_t)n), 5000u + blk, when);
            else
                CHECK_RC(fmpl_barrier(m->h), FMPL_SUCCESS);
            blk++;
        }
    }
}

/* ------------------------------------------------------------------ */
/* in flight on several communicators at once                            */
/* ------------------------------------------------------------------ */

/* WORLD with the created and the split communicator (where this rank
 * belongs to them): collectives started interleaved, a blocking one on
 * WORLD in between, completed in an order of each rank's own */
static void test_cross(cm_t *w, cm_t *s, cm_t *c, int reps)
{
    int rep;
    prog_rng_t g;
    prog_rng_seed(&g, (uint64_t)seed * 15485863u + (uint64_t)prog_me);
    for (rep = 0; rep < reps; rep++) {
        nb_t o[16];
        int no = 0, big = rep % 2;
        size_t sz = big ? (max_bytes < 65539 ? max_bytes : 65539) : 13 + (size_t)rep;
        size_t blk = big ? 4096 : 5;
        char when[96];
        if (blk * (size_t)w->n > max_bytes)
            blk = max_bytes / (size_t)w->n;
#define XSTART(cm, ...)                                                      \
        do {                                                                  \
            nb_setup(&o[no], (cm), __VA_ARGS__, (cm)->nsalt++);               \
            nb_start_ok(&o[no]);                                              \
            no++;                                                             \
        } while (0)
        XSTART(w, I_ALLREDUCE, big ? sz / 4 : 5, 0, T_INT, K_SUM, 0);
        if (s)
            XSTART(s, I_ALLTOALL, blk, 0, 0, 0, rep % 2);
        XSTART(w, I_BCAST, sz, rep % w->n, 0, 0, 0);
        if (c)
            XSTART(c, I_GATHER, blk, rep % c->n, 0, 0, 0);
        if (s)
            XSTART(s, I_ALLREDUCE, big ? sz / 16 : 3, 0, T_CDOUBLE, K_MAX, 0);
        XSTART(w, I_BARRIER, 0, 0, 0, 0, 0);
        if (s)
            XSTART(s, I_BCAST, sz, (rep + 1) % s->n, 0, 0, 0);
        snprintf(when, sizeof when, "with %d collectives in flight on several "
                 "communicators (round %d)", no, rep);
        blocking_allreduce(w, big ? 5000 : 4, 9000u + (unsigned)rep, when);
        if (rep % 3 == 2) {
            /* a communicator made, used and freed meanwhile: a blocking
             * collective over WORLD, and a free with the others busy */
            fmpl_comm_t nc = FMPL_COMM_NULL;
            cm_t N;
            nb_t x[2];
            CHECK_RC(fmpl_comm_split(FMPL_COMM_WORLD, prog_me % 2, prog_me, &nc), FMPL_SUCCESS);
            cm_init(&N, nc, -1, prog_me % 2 ? "comm_split(odd) made with collectives in flight"
                                            : "comm_split(even) made with collectives in flight");
            nb_setup(&x[0], &N, I_ALLREDUCE, 50, 0, T_INT, K_SUM, 0, N.nsalt++);
            nb_setup(&x[1], &N, I_BCAST, sz, N.n - 1, 0, 0, 0, N.nsalt++);
            nb_start_ok(&x[0]);
            nb_start_ok(&x[1]);
            complete_all(x, 2, rep % 4, &g);
            CHECK_RC(fmpl_comm_free(&nc), FMPL_SUCCESS);
            CHECK(nc == FMPL_COMM_NULL, "fmpl_comm_free left the handle %d", nc);
        }
        if (c)
            XSTART(c, I_ALLTOALL, blk, 0, 0, 0, rep % 2 == 0);
        XSTART(w, I_ALLGATHER, blk, 0, 0, 0, rep % 2);
        if (s)
            XSTART(s, I_BARRIER, 0, 0, 0, 0, 0);
        if (c)
            XSTART(c, I_SCATTER, blk, (rep + 1) % c->n, 0, 0, rep % 2);
        if (s)
            XSTART(s, I_REDUCE, big ? sz / 12 : 2, rep % s->n, T_USER12, 0, 0);
        XSTART(w, I_ALLTOALL, blk, 0, 0, 0, 0);
#undef XSTART
        complete_all(o, no, rep % 4, &g);
    }
}

/* ------------------------------------------------------------------ */
/* errors                                                                */
/* ------------------------------------------------------------------ */

static void test_errors(void)
{
    fmpl_request_t r;
    fmpl_comm_t W = FMPL_COMM_WORLD, tmpc = FMPL_COMM_NULL, freed, bad[3];
    fmpl_op_t tmpop = 0, freed_op;
    int n = prog_np, d, i;
    size_t big = 8 * (size_t)n;
    unsigned char *b = gbuf(big), *sb = gbuf(big), *rb = gbuf(big);

    /* a communicator freed, its handle kept */
    CHECK_RC(fmpl_comm_split(W, 0, 0, &tmpc), FMPL_SUCCESS);
    freed = tmpc;
    CHECK_RC(fmpl_comm_free(&tmpc), FMPL_SUCCESS);
    CHECK(tmpc == FMPL_COMM_NULL, "fmpl_comm_free left the handle %d", tmpc);
    bad[0] = FMPL_COMM_NULL;
    bad[1] = 9999;
    bad[2] = freed;
    /* a user op freed, its handle kept */
    CHECK_RC(fmpl_op_create(12, user12_fn, &tmpop), FMPL_SUCCESS);
    freed_op = tmpop;
    CHECK_RC(fmpl_op_free(&tmpop), FMPL_SUCCESS);

    /* an error starts nothing: the request stays inactive */
#define ERR(call, ex)                                                         \
    do {                                                                      \
        memset(&r, 0, sizeof r);                                              \
        CHECK_RC(call, ex);                                                   \
        CHECK_RC(fmpl_wait(&r), FMPL_ERR_REQUEST);                            \
        CHECK_RC(fmpl_test(&r, &d), FMPL_ERR_REQUEST);                        \
    } while (0)

    /* NULL request */
    CHECK_RC(fmpl_ibarrier(W, NULL), FMPL_ERR_ARG);
    CHECK_RC(fmpl_ibcast(b, 8, 0, W, NULL), FMPL_ERR_ARG);
    CHECK_RC(fmpl_ireduce(b, 2, fmpl_isum, 0, W, NULL), FMPL_ERR_ARG);
    CHECK_RC(fmpl_iallreduce(b, 2, fmpl_dsum, W, NULL), FMPL_ERR_ARG);
    CHECK_RC(fmpl_iallgather(sb, 8, rb, W, NULL), FMPL_ERR_ARG);
    CHECK_RC(fmpl_igather(sb, 8, rb, 0, W, NULL), FMPL_ERR_ARG);
    CHECK_RC(fmpl_iscatter(sb, 8, rb, 0, W, NULL), FMPL_ERR_ARG);
    CHECK_RC(fmpl_ialltoall(sb, 8, rb, W, NULL), FMPL_ERR_ARG);

    /* bad root */
    for (i = 0; i < 2; i++) {
        int root = i ? -1 : n;
        ERR(fmpl_ibcast(b, 8, root, W, &r), FMPL_ERR_RANK);
        ERR(fmpl_ireduce(b, 2, fmpl_isum, root, W, &r), FMPL_ERR_RANK);
        ERR(fmpl_igather(sb, 8, rb, root, W, &r), FMPL_ERR_RANK);
        ERR(fmpl_iscatter(sb, 8, rb, root, W, &r), FMPL_ERR_RANK);
    }
    ERR(fmpl_ibcast(b, 8, 1 << 20, W, &r), FMPL_ERR_RANK);

    /* bad communicator */
    for (i = 0; i < 3; i++) {
        fmpl_comm_t x = bad[i];
        ERR(fmpl_ibarrier(x, &r), FMPL_ERR_COMM);
        ERR(fmpl_ibcast(b, 8, 0, x, &r), FMPL_ERR_COMM);
        ERR(fmpl_ireduce(b, 2, fmpl_isum, 0, x, &r), FMPL_ERR_COMM);
        ERR(fmpl_iallreduce(b, 2, fmpl_isum, x, &r), FMPL_ERR_COMM);
        ERR(fmpl_iallgather(sb, 8, rb, x, &r), FMPL_ERR_COMM);
        ERR(fmpl_igather(sb, 8, rb, 0, x, &r), FMPL_ERR_COMM);
        ERR(fmpl_iscatter(sb, 8, rb, 0, x, &r), FMPL_ERR_COMM);
        ERR(fmpl_ialltoall(sb, 8, rb, x, &r), FMPL_ERR_COMM);
    }

    /* bad op */
    ERR(fmpl_ireduce(b, 2, 0, 0, W, &r), FMPL_ERR_OP);
    ERR(fmpl_ireduce(b, 2, -1, 0, W, &r), FMPL_ERR_OP);
    ERR(fmpl_iallreduce(b, 2, 0, W, &r), FMPL_ERR_OP);
    ERR(fmpl_iallreduce(b, 2, 1000000, W, &r), FMPL_ERR_OP);
    ERR(fmpl_ireduce(b, 2, freed_op, 0, W, &r), FMPL_ERR_OP);
    ERR(fmpl_iallreduce(b, 2, freed_op, W, &r), FMPL_ERR_OP);

    /* negative count */
    ERR(fmpl_ireduce(b, -1, fmpl_isum, 0, W, &r), FMPL_ERR_ARG);
    ERR(fmpl_iallreduce(b, -1, fmpl_dsum, W, &r), FMPL_ERR_ARG);
    ERR(fmpl_iallreduce(b, -2147483647 - 1, fmpl_zmin, W, &r), FMPL_ERR_ARG);

    /* NULL buffers with data, overlapping all-to-all buffers */
    ERR(fmpl_ibcast(NULL, 8, 0, W, &r), FMPL_ERR_BUFFER);
    ERR(fmpl_ireduce(NULL, 2, fmpl_isum, 0, W, &r), FMPL_ERR_BUFFER);
    ERR(fmpl_iallreduce(NULL, 2, fmpl_isum, W, &r), FMPL_ERR_BUFFER);
    ERR(fmpl_iallgather(NULL, 8, rb, W, &r), FMPL_ERR_BUFFER);
    ERR(fmpl_iallgather(sb, 8, NULL, W, &r), FMPL_ERR_BUFFER);
    ERR(fmpl_igather(NULL, 8, rb, 0, W, &r), FMPL_ERR_BUFFER);
    ERR(fmpl_iscatter(sb, 8, NULL, 0, W, &r), FMPL_ERR_BUFFER);
    ERR(fmpl_ialltoall(NULL, 8, rb, W, &r), FMPL_ERR_BUFFER);
    ERR(fmpl_ialltoall(b, 8, b + 4, W, &r), FMPL_ERR_BUFFER);
#undef ERR
    /* the buffers the failed calls were given are untouched */
    POISON_VERIFY(b, big + GUARD, PROG_POISON, "a buffer given to failed calls");
    POISON_VERIFY(sb, big + GUARD, PROG_POISON, "a buffer given to failed calls");
    POISON_VERIFY(rb, big + GUARD, PROG_POISON, "a buffer given to failed calls");

    /* inactive requests: never started, and NULL */
    memset(&r, 0, sizeof r);
    CHECK_RC(fmpl_wait(&r), FMPL_ERR_REQUEST);
    CHECK_RC(fmpl_test(&r, &d), FMPL_ERR_REQUEST);
    CHECK_RC2(fmpl_wait(NULL), FMPL_ERR_REQUEST, FMPL_ERR_ARG);
    CHECK_RC2(fmpl_test(NULL, &d), FMPL_ERR_REQUEST, FMPL_ERR_ARG);
    /* an active one with a NULL done */
    CHECK_RC(fmpl_ibarrier(W, &r), FMPL_SUCCESS);
    CHECK_RC(fmpl_test(&r, NULL), FMPL_ERR_ARG);
    complete(&r, "fmpl_ibarrier(WORLD) after fmpl_test(req, NULL)", -1);

    /* the failed calls started nothing: the next ones match up */
    {
        cm_t w;
        cm_init(&w, W, -1, "WORLD (after the errors)");
        w.nsalt = 77;
        nb_run(&w, I_ALLREDUCE, 100, 0, T_INT, K_SUM, 0, w.nsalt++);
        nb_run(&w, I_BCAST, 1000, n - 1, 0, 0, 0, w.nsalt++);
        nb_run(&w, I_ALLTOALL, 8, 0, 0, 0, 0, w.nsalt++);
    }
    free(b);
    free(sb);
    free(rb);
}

/* fmpl_comm_free of a communicator with an ibarrier under way: the
 * members but one start it and try to free; the last member starts it
 * only after their attempts (a "go" message from each) */
static void test_busy(void)
{
    fmpl_comm_t bc = FMPL_COMM_NULL, h;
    fmpl_request_t r;
    cm_t b;
    int i, d;
    char what[96];
    CHECK_RC(fmpl_comm_split(FMPL_COMM_WORLD, prog_me / 3, -prog_me, &bc), FMPL_SUCCESS);
    cm_init(&b, bc, -1, "comm_split(r / 3, reversed)");
    snprintf(what, sizeof what, "fmpl_ibarrier on %s (member %d of %d)", b.name, b.me, b.n);
    if (b.n >= 2 && b.me == 0) {
        for (i = 1; i < b.n; i++)
            CHECK_RC(fmpl_recv(NULL, 0, b.wr[i], MAI_CHECK), FMPL_SUCCESS);
        CHECK_RC(fmpl_ibarrier(bc, &r), FMPL_SUCCESS);
    } else if (b.n >= 2) {
        CHECK_RC(fmpl_ibarrier(bc, &r), FMPL_SUCCESS);
        d = -1;
        CHECK_RC(fmpl_test(&r, &d), FMPL_SUCCESS);
        CHECK(d == 0, "%s is complete (done %d) before member 0 started it", what, d);
        h = bc;
        CHECK_RC(fmpl_comm_free(&bc), FMPL_ERR_BUSY);
        CHECK(bc == h, "fmpl_comm_free returning FMPL_ERR_BUSY changed the handle %d to %d", h,
              bc);
        d = -1;
        CHECK_RC(fmpl_test(&r, &d), FMPL_SUCCESS);
        CHECK(d == 0, "%s is complete (done %d) before member 0 started it", what, d);
        CHECK_RC(fmpl_send(NULL, 0, b.wr[0], MAI_CHECK), FMPL_SUCCESS);
    } else {
        /* alone: it completes at once (nothing to check about busy) */
        CHECK_RC(fmpl_ibarrier(bc, &r), FMPL_SUCCESS);
    }
    complete(&r, what, -1);
    /* still usable after the refused free */
    {
        nb_t o;
        b.nsalt = 5;
        nb_setup(&o, &b, I_ALLREDUCE, 33, 0, T_DOUBLE, K_SUM, 0, b.nsalt++);
        nb_start_ok(&o);
        complete(&o.req, o.what, -1);
        nb_check(&o);
        nb_free(&o);
    }
    h = bc;
    CHECK_RC(fmpl_comm_free(&bc), FMPL_SUCCESS);
    CHECK(bc == FMPL_COMM_NULL, "fmpl_comm_free left the handle %d", bc);
    memset(&r, 0, sizeof r);
    CHECK_RC(fmpl_ibarrier(h, &r), FMPL_ERR_COMM);
}

/* ------------------------------------------------------------------ */

static void battery(cm_t *m)
{
    double t0 = prog_now();
#define TIMED(call)                                                           \
    do {                                                                      \
        double t1_ = prog_now();                                              \
        call;                                                                 \
        if (verbose && m->me == 0)                                            \
            printf("coll_nb: %s: %s %.2f s\n", m->name, #call, prog_now() - t1_); \
    } while (0)
    TIMED(test_singles(m));
    TIMED(test_ties(m));
    TIMED(test_multi(m, 8));
    TIMED(test_deep(m, 2));
    TIMED(test_p2p(m, 4));
    TIMED(test_progress(m, 4));
    TIMED(test_mix(m, (int)mix_rounds));
#undef TIMED
    if (m->me == 0)
        printf("coll_nb: %s (%d ranks) done in %.2f s\n", m->name, m->n, prog_now() - t0);
}

int main(int argc, char **argv)
{
    const char *comms = "wcs";
    struct prog_opt opts[] = {
        {'M', OPT_SIZE, &max_bytes, "largest buffer (default 256K)"},
        {'c', OPT_STR, &comms, "communicators: w, c, s (default wcs)"},
        {'s', OPT_INT, &seed, "data seed (default 7)"},
        {'R', OPT_INT, &mix_rounds, "calls of the random mix (default 40)"},
        {'v', OPT_FLAG, &verbose, "print the time of each part"},
        {'E', OPT_FLAG, &no_epochs, "no barrier epochs (the ranks share no /tmp)"},
    };
    fmpl_comm_t cc = FMPL_COMM_NULL, sc = FMPL_COMM_NULL;
    cm_t W, Cc, S;
    int i;
    double t0;

    prog_name = "coll_nb";
    prog_parse(argc, argv, opts, 6);
    CHECK(mix_rounds >= 0, "-R %ld", mix_rounds);
    prog_init("coll_nb", 2);
    CHECK(prog_np <= MAXNP, "at most %d ranks", MAXNP);
    t0 = prog_now();
    epochs_open();
    ref_ops_create(T_USER12);
    for (i = fmpl_isum; i <= fmpl_zmin; i++)
        CHECK(ref_op[T_USER12] != i, "the user op has predefined op %d's handle", i);

    /* the communicators (each creation collective over its parent) */
    ref_make_comms(comms, &cc, &sc);
    cm_init(&W, FMPL_COMM_WORLD, 0, "WORLD");
    if (cc != FMPL_COMM_NULL)
        cm_init(&Cc, cc, 1, "comm_create(r%3!=1)");
    if (sc != FMPL_COMM_NULL)
        cm_init(&S, sc, 2 + prog_me % 2, prog_me % 2 ? "comm_split(odd, reversed)"
                                                     : "comm_split(even, reversed)");

    if (strchr(comms, 'w'))
        battery(&W);
    if (cc != FMPL_COMM_NULL)
        battery(&Cc);
    if (sc != FMPL_COMM_NULL)
        battery(&S);
    {
        double t1 = prog_now();
        test_cross(&W, sc != FMPL_COMM_NULL ? &S : NULL, cc != FMPL_COMM_NULL ? &Cc : NULL, 8);
        if (verbose && prog_me == 0)
            printf("coll_nb: several communicators %.2f s\n", prog_now() - t1);
    }
    test_errors();
    test_busy();

    if (cc != FMPL_COMM_NULL) {
        CHECK_RC(fmpl_comm_free(&cc), FMPL_SUCCESS);
        CHECK(cc == FMPL_COMM_NULL, "fmpl_comm_free left the handle %d", cc);
    }
    if (sc != FMPL_COMM_NULL) {
        CHECK_RC(fmpl_comm_free(&sc), FMPL_SUCCESS);
        CHECK(sc == FMPL_COMM_NULL, "fmpl_comm_free left the handle %d", sc);
    }
    ref_ops_free();
    CHECK_RC(fmpl_barrier(FMPL_COMM_WORLD), FMPL_SUCCESS);
    if (prog_me == 0)
        printf("coll_nb: %d ranks on %s, %.2f s\n", prog_np, fmpl_transport(),
               prog_now() - t0);
    return prog_finish();
}
