/*
 * comm_matrix.c - fmpl_comm_sendm / fmpl_comm_recvm across processes.
 *
 *   comm_matrix [-s seed] [-k msgs] [-M maxdim] [-S] [-P msgs]
 *
 * Every rank sends -k matrix messages to every rank (itself included),
 * with shapes, element sizes, trapezoids and leading dimensions drawn
 * from (seed, src, dst, k): sender and receiver pick their ld
 * independently.  Phase 1: everybody sends everything before receiving
 * anything (locally blocking sends, queued).  Phase 2: pairs alternate,
 * so receives are often posted first (the direct path).  Every element
 * must arrive in place and every byte outside the shape stay untouched.
 * Then: a shape mismatch fails the receive and the pair stays in step;
 * bad arguments get their codes.  -S runs on a split communicator with
 * reversed ranks.  -P n: rank 0 queues n sends of fixed shapes to rank 1
 * (contiguous, strided with short and long columns, trapezoid, small,
 * empty), then stays out of FMPL until rank 1 has received them all
 * (files in /tmp tell each other): the receiver must pull queued sends
 * itself, or the progress thread deliver those it cannot.
 */
#include <math.h>
#include <sys/stat.h>

#include "prog.h"

static const char UPLO[] = "GGULGUL";

struct msg {
    fmpl_matrix_t s;               /* the sender's shape */
    size_t rld;                    /* the receiver's leading dimension */
};

static struct msg draw(uint64_t seed, int src, int dst, int k, size_t maxdim)
{
    prog_rng_t g;
    prog_rng_seed(&g, seed ^ (uint64_t)src << 40 ^ (uint64_t)dst << 20 ^ (uint64_t)k);
    static const size_t es[] = { 1, 4, 8, 16 };
    struct msg m;
    size_t big = prog_rng_below(&g, 4) == 0 ? maxdim : 9;   /* mostly small */
    m.s.esize = es[prog_rng_below(&g, 4)];
    m.s.m = prog_rng_below(&g, big + 1);
    m.s.n = prog_rng_below(&g, big + 1);
    if (prog_rng_below(&g, 8) == 0)
        m.s.n = 1;
    m.s.ld = m.s.m + (prog_rng_below(&g, 2) ? prog_rng_below(&g, 5) : 0);
    m.s.uplo = UPLO[prog_rng_below(&g, sizeof UPLO - 1)];
    m.s.diag = prog_rng_below(&g, 2) ? 'U' : 'N';
    m.rld = m.s.m + (prog_rng_below(&g, 2) ? prog_rng_below(&g, 7) : 0);
    if (m.s.ld == 0)
        m.s.ld = 1;
    if (m.rld == 0)
        m.rld = 1;
    return m;
}

/* is element (i, j) in the shape (the BLACS trapezoid rule) */
static int inside(const fmpl_matrix_t *s, size_t i, size_t j)
{
    long d = s->m > s->n ? (long)(s->m - s->n) : 0, e = s->n > s->m ? (long)(s->n - s->m) : 0;
    long u = s->diag == 'U';
    if (s->uplo == 'U')
        return (long)i <= (long)j + d - u;
    if (s->uplo == 'L')
        return (long)i >= (long)j - e + u;
    return 1;
}

static size_t bytes_of(const fmpl_matrix_t *s)
{
    return s->n ? ((s->n - 1) * s->ld + s->m) * s->esize + 64 : 64;
}

static unsigned char *make_src(const struct msg *m, uint64_t seed, int src, int k)
{
    unsigned char *a = malloc(bytes_of(&m->s));
    CHECK(a, "malloc");
    pat_fill(a, bytes_of(&m->s), seed, src, k);
    return a;
}

static void verify(const struct msg *m, const unsigned char *src, const unsigned char *dst,
                   int from, int k)
{
    fmpl_matrix_t r = m->s;
    r.ld = m->rld;
    size_t es = r.esize, total = bytes_of(&r);
    for (size_t j = 0; j < r.n; j++)
        for (size_t i = 0; i < r.ld; i++) {
            const unsigned char *got = dst + (j * r.ld + i) * es;
            if ((size_t)(got - dst) >= total)
                break;
            if (i < r.m && inside(&r, i, j)) {
                CHECK(!memcmp(got, src + (j * m->s.ld + i) * es, es),
                      "msg %d from %d: element (%zu,%zu) of %zux%zu %c%c es %zu ld %zu->%zu "
                      "wrong", k, from, i, j, r.m, r.n, r.uplo, r.diag, es, m->s.ld, r.ld);
            } else {
                for (size_t b = 0; b < es; b++)
                    CHECK(got[b] == 0xEE, "msg %d from %d: byte outside the shape at (%zu,%zu) "
                          "written (%zux%zu %c%c)", k, from, i, j, r.m, r.n, r.uplo, r.diag);
            }
        }
    /* the tail after the last column */
    size_t end = r.n ? ((r.n - 1) * r.ld + r.m) * es : 0;
    for (size_t b = end; b < total; b++)
        CHECK(dst[b] == 0xEE, "msg %d from %d: byte %zu after the matrix written", k, from, b);
}

static void recv_one(fmpl_comm_t comm, uint64_t seed, int from, int me, int k, size_t maxdim)
{
    struct msg m = draw(seed, from, me, k, maxdim);
    fmpl_matrix_t r = m.s;
    r.ld = m.rld;
    unsigned char *dst = malloc(bytes_of(&r));
    CHECK(dst, "malloc");
    memset(dst, 0xEE, bytes_of(&r));
    CHECK_RC(fmpl_comm_recvm(dst, &r, from, comm), FMPL_SUCCESS);
    unsigned char *src = make_src(&m, seed, from, k);
    verify(&m, src, dst, from, k);
    free(src);
    free(dst);
}

static void send_one(fmpl_comm_t comm, uint64_t seed, int me, int to, int k, size_t maxdim)
{
    struct msg m = draw(seed, me, to, k, maxdim);
    unsigned char *src = make_src(&m, seed, me, k);
    CHECK_RC(fmpl_comm_sendm(src, &m.s, to, comm), FMPL_SUCCESS);
    /* locally blocking: the matrix is ours again */
    memset(src, 0x5A, bytes_of(&m.s));
    free(src);
}

/* wait up to a minute for `path` to exist, outside FMPL (on an emulated
 * machine, computing: prog_sleep) */
static int await_file(const char *path)
{
    struct stat st;
    for (int i = 0; i < 60000; i++) {
        if (stat(path, &st) == 0)
            return 1;
        prog_sleep(0.001);
    }
    return 0;
}

static void touch(const char *path)
{
    FILE *f = fopen(path, "w");
    CHECK(f, "cannot create %s", path);
    fclose(f);
}

static void pull_phase(fmpl_comm_t comm, uint64_t seed, int me, int nq)
{
    static const struct msg PS[] = {
        { { 8, 700, 9, 700, 'G', 'N' }, 700 },       /* contiguous on both sides */
        { { 8, 600, 5, 600, 'G', 'N' }, 613 },       /* long strided columns */
        { { 8, 30, 40, 31, 'G', 'N' }, 33 },         /* short strided columns */
        { { 16, 3, 1, 3, 'G', 'N' }, 3 },            /* just above inline */
        { { 4, 2, 3, 2, 'G', 'N' }, 5 },             /* inline size, strided */
        { { 8, 700, 650, 702, 'U', 'U' }, 701 },     /* a 1.8 MB trapezoid */
        { { 8, 0, 5, 1, 'G', 'N' }, 1 },             /* empty */
        { { 1, 5000, 3, 5001, 'L', 'N' }, 5000 },
    };
    enum { NPS = sizeof PS / sizeof PS[0] };
    char sent[96], got[96];
    snprintf(sent, sizeof sent, "/tmp/fmpl-cm-pull.%d.%d.%llu.sent", (int)getppid(),
             (int)comm, (unsigned long long)seed);
    snprintf(got, sizeof got, "/tmp/fmpl-cm-pull.%d.%d.%llu.got", (int)getppid(),
             (int)comm, (unsigned long long)seed);
    if (me == 0) {
        unlink(sent);
        unlink(got);
    }
    CHECK_RC(fmpl_barrier(comm), FMPL_SUCCESS);
    if (me == 0) {
        for (int k = 0; k < nq; k++) {
            const struct msg *m = &PS[k % NPS];
            unsigned char *src = make_src(m, seed, 0, k);
            CHECK_RC(fmpl_comm_sendm(src, &m->s, 1, comm), FMPL_SUCCESS);
            memset(src, 0x5A, bytes_of(&m->s));
            free(src);
        }
        touch(sent);
        /* Where nothing moves for a rank outside FMPL (prog.h: no remote
         * read to pull with and no progress thread, as on the emulated
         * SR8000) the queued sends go when we are back in FMPL (the
         * barrier below), and that is what is checked. */
        if (prog_moves_while_away()) {
            CHECK(await_file(got), "rank 1 did not get %d queued sends while rank 0 "
                  "stayed out of FMPL", nq);
            unlink(got);
        }
    } else if (me == 1) {
        CHECK(await_file(sent), "rank 0 never finished sending");
        unlink(sent);
        for (int k = 0; k < nq; k++) {
            const struct msg *m = &PS[k % NPS];
            fmpl_matrix_t r = m->s;
            r.ld = m->rld;
            unsigned char *dst = malloc(bytes_of(&r));
            CHECK(dst, "malloc");
            memset(dst, 0xEE, bytes_of(&r));
            CHECK_RC(fmpl_comm_recvm(dst, &r, 0, comm), FMPL_SUCCESS);
            unsigned char *src = make_src(m, seed, 0, k);
            verify(m, src, dst, 0, k);
            free(src);
            free(dst);
        }
        if (prog_moves_while_away())
            touch(got);
    }
    CHECK_RC(fmpl_barrier(comm), FMPL_SUCCESS);
}

int main(int argc, char **argv)
{
    uint64_t seed = 7;
    int nk = 6, sub = 0, npull = 0;
    size_t maxdim = 300;
    int opt;
    while ((opt = getopt(argc, argv, "s:k:M:SP:")) != -1) {
        switch (opt) {
        case 's': seed = strtoull(optarg, NULL, 0); break;
        case 'k': nk = atoi(optarg); break;
        case 'M': maxdim = strtoul(optarg, NULL, 0); break;
        case 'S': sub = 1; break;
        case 'P': npull = atoi(optarg); break;
        default:
            fprintf(stderr, "usage: comm_matrix [-s seed] [-k n] [-M dim] [-S] [-P n]\n");
            return 2;
        }
    }
    prog_init("comm_matrix", 2);
    fmpl_comm_t comm = FMPL_COMM_WORLD;
    if (sub)
        CHECK_RC(fmpl_comm_split(FMPL_COMM_WORLD, 0, -fmpl_rank(), &comm), FMPL_SUCCESS);
    int me, np;
    fmpl_comm_rank(comm, &me);
    fmpl_comm_size(comm, &np);

    /* phase 1: all sends first */
    for (int k = 0; k < nk; k++)
        for (int d = 0; d < np; d++)
            send_one(comm, seed, me, (me + d) % np, k, maxdim);
    for (int k = 0; k < nk; k++)
        for (int d = 0; d < np; d++)
            recv_one(comm, seed, (me - d + np) % np, me, k, maxdim);
    CHECK_RC(fmpl_barrier(comm), FMPL_SUCCESS);

    /* phase 2: pairs take turns; the receive is usually posted first */
    uint64_t seed2 = seed * 31 + 1;
    for (int d = 1; d < np; d++) {
        int to = (me + d) % np, from = (me - d + np) % np;
        for (int k = 0; k < nk; k++) {
            if (me < to) {
                send_one(comm, seed2, me, to, k, maxdim);
                recv_one(comm, seed2, from, me, k, maxdim);
            } else {
                recv_one(comm, seed2, from, me, k, maxdim);
                send_one(comm, seed2, me, to, k, maxdim);
            }
        }
    }
    CHECK_RC(fmpl_barrier(comm), FMPL_SUCCESS);

    if (npull > 0 && np >= 2)
        pull_phase(comm, seed, me, npull);

    /* a shape mismatch fails on both sides, nothing written; the pair
     * stays in step (the next message arrives) */
    if (np >= 2 && me < 2) {
        double a[64], b[64];
        for (int i = 0; i < 64; i++)
            a[i] = i, b[i] = -1;
        fmpl_matrix_t s6 = { 8, 6, 5, 7, 'G', 'N' }, s5 = { 8, 5, 6, 7, 'G', 'N' };
        if (me == 0) {
            /* the sender hears of it only when it met the posted receive;
             * a send queued before that is dropped with a logged error */
            usleep(20000);
            CHECK_RC2(fmpl_comm_sendm(a, &s6, 1, comm), FMPL_ERR_SHAPE, FMPL_SUCCESS);
            CHECK_RC(fmpl_comm_sendm(a, &s6, 1, comm), FMPL_SUCCESS);
        } else {
            CHECK_RC(fmpl_comm_recvm(b, &s5, 0, comm), FMPL_ERR_SHAPE);
            for (int i = 0; i < 64; i++)
                CHECK(b[i] == -1, "mismatched message wrote b[%d]", i);
            CHECK_RC(fmpl_comm_recvm(b, &s6, 0, comm), FMPL_SUCCESS);
            CHECK(b[7 * 4 + 5] == 7 * 4 + 5 && b[6] == -1, "message after the mismatch");
        }
    }

    /* bad arguments */
    double x = 1;
    fmpl_matrix_t ok = { 8, 1, 1, 1, 'G', 'N' }, bad = ok;
    bad.esize = 0;
    CHECK_RC(fmpl_comm_sendm(&x, &bad, 0, comm), FMPL_ERR_ARG);
    bad = ok, bad.ld = 0, bad.m = 2;
    CHECK_RC(fmpl_comm_sendm(&x, &bad, 0, comm), FMPL_ERR_ARG);
    bad = ok, bad.uplo = 'X';
    CHECK_RC(fmpl_comm_recvm(&x, &bad, 0, comm), FMPL_ERR_ARG);
    bad = ok, bad.uplo = 'U', bad.diag = 'Q';
    CHECK_RC(fmpl_comm_recvm(&x, &bad, 0, comm), FMPL_ERR_ARG);
    CHECK_RC(fmpl_comm_sendm(&x, NULL, 0, comm), FMPL_ERR_ARG);
    CHECK_RC(fmpl_comm_sendm(NULL, &ok, 0, comm), FMPL_ERR_BUFFER);
    CHECK_RC(fmpl_comm_sendm(&x, &ok, np, comm), FMPL_ERR_RANK);
    CHECK_RC(fmpl_comm_recvm(&x, &ok, -1, comm), FMPL_ERR_RANK);
    CHECK_RC(fmpl_comm_sendm(&x, &ok, 0, 99), FMPL_ERR_COMM);
    fmpl_matrix_t empty = { 8, 0, 3, 1, 'G', 'N' };
    CHECK(fmpl_matrix_count(&empty) == 0 && fmpl_matrix_count(&ok) == 1, "matrix_count");
    fmpl_matrix_t up = { 8, 4, 6, 4, 'u', 'n' }, lo = { 8, 6, 4, 6, 'L', 'U' };
    /* columns of the upper 4x6: 1 2 3 4 4 4; of the unit lower 6x4: 5 4 3 2 */
    CHECK(fmpl_matrix_count(&up) == 18, "upper count %zu",
          fmpl_matrix_count(&up));
    CHECK(fmpl_matrix_count(&lo) == 5 + 4 + 3 + 2, "lower count %zu", fmpl_matrix_count(&lo));

    /* pack / unpack: the shape's elements in column order, nothing else */
    double m46[30], packed[24], back[30];
    for (int i = 0; i < 30; i++)
        m46[i] = i, back[i] = -1;
    fmpl_matrix_t u46 = { 8, 4, 6, 5, 'U', 'N' };
    CHECK_RC(fmpl_matrix_pack(m46, &u46, packed), FMPL_SUCCESS);
    CHECK(packed[0] == 0 && packed[1] == 5 && packed[2] == 6 && packed[17] == 28,
          "pack order %g %g %g %g", packed[0], packed[1], packed[2], packed[17]);
    CHECK_RC(fmpl_matrix_unpack(packed, &u46, back), FMPL_SUCCESS);
    for (int i = 0; i < 30; i++) {
        int r = i % 5, c = i / 5, in = r < 4 && r <= c;
        CHECK(back[i] == (in ? m46[i] : -1), "unpack element %d = %g", i, back[i]);
    }
    CHECK_RC(fmpl_matrix_pack(m46, &bad, packed), FMPL_ERR_ARG);
    CHECK_RC(fmpl_matrix_unpack(NULL, &u46, back), FMPL_ERR_BUFFER);

    /* fmpl_op_apply: the reductions' own operation, locally */
    double io[3] = { 3, -5, 0.0 }, in2[3] = { -4, 2, -0.0 };
    CHECK_RC(fmpl_op_apply(fmpl_dmax, io, in2, 3), FMPL_SUCCESS);
    CHECK(io[0] == -4 && io[1] == -5 && !signbit(io[2]), "dmax %g %g", io[0], io[1]);
    CHECK_RC(fmpl_op_apply(0, io, in2, 3), FMPL_ERR_OP);
    CHECK_RC(fmpl_op_apply(fmpl_dsum, io, in2, -1), FMPL_ERR_ARG);

    CHECK_RC(fmpl_barrier(comm), FMPL_SUCCESS);
    if (sub)
        CHECK_RC(fmpl_comm_free(&comm), FMPL_SUCCESS);
    prog_finish();
    return 0;
}
