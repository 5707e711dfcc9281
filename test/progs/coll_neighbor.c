/*
 * coll_neighbor - fmpl_neighbor_alltoallv, its nonblocking form and its
 * persistent form over random graphs, checked byte by byte.
 *
 *   coll_neighbor [-e EDGES] [-M MAXBLOCK] [-g GRAPHS] [-i ITERS] [-s SEED] [-S]
 *     -e  edges per member on average (default 3): a random multigraph,
 *         self-loops and repeated edges included, some members with none
 *     -M  largest block in bytes (default 70000); some blocks are 0
 *     -g  graphs to try (default 6), each with fresh lists
 *     -i  exchanges per graph and form (default 3), new data each
 *     -S  on a split communicator (reversed ranks, the last world rank out)
 *     -s  seed (default 5)
 *
 * Every member draws the same global edge list from the seed, so it knows
 * its destinations and sources in the order the call pairs them (the k-th
 * block from a to b is the k-th b receives from a), the sizes, and every
 * byte it must receive.  Receive blocks are shuffled in the receive buffer
 * with gaps whose guard bytes must stay untouched; some receive blocks are
 * larger than what arrives.  Each graph runs blocking, nonblocking (two in
 * flight at once: the same lists into a second buffer) and persistent
 * (fmpl_neighbor_init once, start and wait each time).  Then the errors:
 * a neighbour out of range (FMPL_ERR_RANK), negative counts and NULL
 * lists (FMPL_ERR_ARG), a NULL buffer with a block (FMPL_ERR_BUFFER), and
 * a block longer than its receive (FMPL_ERR_TRUNCATE at the receiver).
 */
#include "prog.h"

#define GUARD 0xA5

static long edges_per = 3, graphs = 6, iters = 3, seed = 5;
static size_t max_block = 70000;
static int split;

struct edge { int from, to; size_t size; };

static size_t block_size(prog_rng_t *g)
{
    uint64_t k = prog_rng_below(g, 8);
    if (k == 0)
        return 0;
    if (k < 4)
        return (size_t)prog_rng_below(g, 64) + 1;
    if (k < 7)
        return (size_t)prog_rng_below(g, 4096) + 1;
    return (size_t)prog_rng_below(g, max_block) + 1;
}

static unsigned char byte_of(int e, int it, size_t k)
{
    return (unsigned char)(prog_mix64(((uint64_t)e << 40) ^ ((uint64_t)it << 32) ^ k) & 0xff);
}

struct lists {
    int nd, ns;
    int *dsts, *srcs, *dedge, *sedge;
    size_t *ss, *sd, *rs, *rd;
    size_t slen, rlen;
};

static void make_lists(const struct edge *E, int ne, int me, prog_rng_t *g, struct lists *l)
{
    memset(l, 0, sizeof *l);
    for (int e = 0; e < ne; e++) {
        l->nd += E[e].from == me;
        l->ns += E[e].to == me;
    }
    l->dsts = prog_xmalloc(sizeof(int) * (size_t)(l->nd + 1));
    l->srcs = prog_xmalloc(sizeof(int) * (size_t)(l->ns + 1));
    l->dedge = prog_xmalloc(sizeof(int) * (size_t)(l->nd + 1));
    l->sedge = prog_xmalloc(sizeof(int) * (size_t)(l->ns + 1));
    l->ss = prog_xmalloc(sizeof(size_t) * (size_t)(l->nd + 1));
    l->sd = prog_xmalloc(sizeof(size_t) * (size_t)(l->nd + 1));
    l->rs = prog_xmalloc(sizeof(size_t) * (size_t)(l->ns + 1));
    l->rd = prog_xmalloc(sizeof(size_t) * (size_t)(l->ns + 1));
    int d = 0, s = 0;
    for (int e = 0; e < ne; e++) {
        if (E[e].from == me) {
            l->dsts[d] = E[e].to;
            l->dedge[d] = e;
            l->ss[d] = E[e].size;
            d++;
        }
        if (E[e].to == me) {
            l->srcs[s] = E[e].from;
            l->sedge[s] = e;
            /* some receive blocks have room to spare */
            l->rs[s] = E[e].size + (prog_rng_below(g, 4) == 0 ? 17 : 0);
            s++;
        }
    }
    /* send blocks in order with gaps; receive blocks shuffled, gaps too */
    for (int i = 0; i < l->nd; i++) {
        l->sd[i] = l->slen;
        l->slen += l->ss[i] + 8;
    }
    int *perm = prog_xmalloc(sizeof(int) * (size_t)(l->ns + 1));
    for (int i = 0; i < l->ns; i++)
        perm[i] = i;
    for (int i = l->ns - 1; i > 0; i--) {
        int j = (int)prog_rng_below(g, (uint64_t)i + 1), t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    for (int i = 0; i < l->ns; i++) {
        l->rd[perm[i]] = l->rlen;
        l->rlen += l->rs[perm[i]] + 8;
    }
    free(perm);
}

static void free_lists(struct lists *l)
{
    free(l->dsts); free(l->srcs); free(l->dedge); free(l->sedge);
    free(l->ss); free(l->sd); free(l->rs); free(l->rd);
}

static void fill_send(const struct lists *l, unsigned char *sb, int it)
{
    memset(sb, 0, l->slen + 1);
    for (int i = 0; i < l->nd; i++)
        for (size_t k = 0; k < l->ss[i]; k++)
            sb[l->sd[i] + k] = byte_of(l->dedge[i], it, k);
}

static void check_recv(const struct lists *l, const struct edge *E, const unsigned char *rb,
                       int it, const char *form)
{
    /* everything but the arrived bytes keeps the guard */
    unsigned char *want = prog_xmalloc(l->rlen + 1);
    memset(want, GUARD, l->rlen + 1);
    for (int i = 0; i < l->ns; i++)
        for (size_t k = 0; k < E[l->sedge[i]].size; k++)
            want[l->rd[i] + k] = byte_of(l->sedge[i], it, k);
    for (size_t k = 0; k < l->rlen + 1; k++)
        CHECK(rb[k] == want[k], "%s, iteration %d: receive buffer byte %zu is 0x%02x, "
              "expected 0x%02x", form, it, k, rb[k], want[k]);
    free(want);
}

int main(int argc, char **argv)
{
    struct prog_opt opts[] = {
        {'e', OPT_INT, &edges_per, "edges per member"},
        {'M', OPT_SIZE, &max_block, "largest block"},
        {'g', OPT_INT, &graphs, "graphs"},
        {'i', OPT_INT, &iters, "exchanges per graph and form"},
        {'s', OPT_INT, &seed, "seed"},
        {'S', OPT_FLAG, &split, "on a split communicator"},
    };
    prog_parse(argc, argv, opts, 6);
    prog_init("coll_neighbor", 1);
    fmpl_comm_t comm = FMPL_COMM_WORLD;
    int n, me;
    if (split) {
        int color = prog_np > 1 && prog_me == prog_np - 1 ? FMPL_UNDEFINED : 0;
        CHECK_RC(fmpl_comm_split(FMPL_COMM_WORLD, color, -prog_me, &comm), FMPL_SUCCESS);
        if (color == FMPL_UNDEFINED)
            return prog_finish();
    }
    CHECK_RC(fmpl_comm_size(comm, &n), FMPL_SUCCESS);
    CHECK_RC(fmpl_comm_rank(comm, &me), FMPL_SUCCESS);

    for (long gi = 0; gi < graphs; gi++) {
        prog_rng_t g;
        prog_rng_seed(&g, (uint64_t)seed * 1000 + (uint64_t)gi);
        int ne = (int)prog_rng_below(&g, (uint64_t)(edges_per * n) + 1);
        struct edge *E = prog_xmalloc(sizeof *E * (size_t)(ne + 1));
        for (int e = 0; e < ne; e++) {
            E[e].from = (int)prog_rng_below(&g, (uint64_t)n);
            /* a few repeats of the edge before, to make multi-edges */
            if (e > 0 && prog_rng_below(&g, 5) == 0)
                E[e] = E[e - 1];
            else
                E[e].to = (int)prog_rng_below(&g, (uint64_t)n);
            E[e].size = block_size(&g);
        }
        prog_rng_t lg;
        prog_rng_seed(&lg, (uint64_t)seed * 7777 + (uint64_t)gi * 31 + (uint64_t)me);
        struct lists l;
        make_lists(E, ne, me, &lg, &l);
        unsigned char *sb = prog_xmalloc(l.slen + 1);
        unsigned char *rb = prog_xmalloc(l.rlen + 1), *rb2 = prog_xmalloc(l.rlen + 1);
        char form[128];
        fmpl_neighbor_t nb;
        CHECK_RC(fmpl_neighbor_init(sb, l.nd, l.dsts, l.ss, l.sd, rb, l.ns, l.srcs, l.rs, l.rd,
                                    comm, &nb), FMPL_SUCCESS);
        for (long it = 0; it < iters; it++) {
            int t = (int)(gi * 100 + it);
            fill_send(&l, sb, t);
            /* blocking */
            memset(rb, GUARD, l.rlen + 1);
            CHECK_RC(fmpl_neighbor_alltoallv(sb, l.nd, l.dsts, l.ss, l.sd, rb, l.ns, l.srcs,
                                             l.rs, l.rd, comm), FMPL_SUCCESS);
            snprintf(form, sizeof form, "graph %ld (%d edges), blocking", gi, ne);
            check_recv(&l, E, rb, t, form);
            /* nonblocking, two at once into two buffers */
            fmpl_request_t q[2];
            memset(rb, GUARD, l.rlen + 1);
            memset(rb2, GUARD, l.rlen + 1);
            CHECK_RC(fmpl_ineighbor_alltoallv(sb, l.nd, l.dsts, l.ss, l.sd, rb, l.ns, l.srcs,
                                              l.rs, l.rd, comm, &q[0]), FMPL_SUCCESS);
            CHECK_RC(fmpl_ineighbor_alltoallv(sb, l.nd, l.dsts, l.ss, l.sd, rb2, l.ns, l.srcs,
                                              l.rs, l.rd, comm, &q[1]), FMPL_SUCCESS);
            CHECK_RC(fmpl_wait(&q[it % 2 ? 0 : 1]), FMPL_SUCCESS);
            CHECK_RC(fmpl_wait(&q[it % 2 ? 1 : 0]), FMPL_SUCCESS);
            snprintf(form, sizeof form, "graph %ld (%d edges), nonblocking", gi, ne);
            check_recv(&l, E, rb, t, form);
            check_recv(&l, E, rb2, t, form);
            /* persistent */
            memset(rb, GUARD, l.rlen + 1);
            CHECK_RC(fmpl_neighbor_start(nb, &q[0]), FMPL_SUCCESS);
            CHECK_RC(fmpl_wait(&q[0]), FMPL_SUCCESS);
            snprintf(form, sizeof form, "graph %ld (%d edges), persistent", gi, ne);
            check_recv(&l, E, rb, t, form);
        }
        CHECK_RC(fmpl_neighbor_free(&nb), FMPL_SUCCESS);
        CHECK(nb == NULL, "fmpl_neighbor_free left the handle");
        free(sb);
        free(rb);
        free(rb2);
        free_lists(&l);
        free(E);
    }

    /* errors that start nothing (every member sees the same) */
    int bad = n, neg = -1, zero = 0;
    size_t one = 1, off = 0;
    char c1 = 0;
    fmpl_request_t q;
    CHECK_RC(fmpl_neighbor_alltoallv(&c1, 1, &bad, &one, &off, &c1, 0, NULL, NULL, NULL, comm),
             FMPL_ERR_RANK);
    CHECK_RC(fmpl_neighbor_alltoallv(&c1, 1, &neg, &one, &off, &c1, 0, NULL, NULL, NULL, comm),
             FMPL_ERR_RANK);
    CHECK_RC(fmpl_neighbor_alltoallv(&c1, -1, &zero, &one, &off, &c1, 0, NULL, NULL, NULL, comm),
             FMPL_ERR_ARG);
    CHECK_RC(fmpl_neighbor_alltoallv(&c1, 1, NULL, &one, &off, &c1, 0, NULL, NULL, NULL, comm),
             FMPL_ERR_ARG);
    CHECK_RC(fmpl_neighbor_alltoallv(NULL, 1, &zero, &one, &off, &c1, 0, NULL, NULL, NULL, comm),
             FMPL_ERR_BUFFER);
    CHECK_RC(fmpl_ineighbor_alltoallv(&c1, 0, NULL, NULL, NULL, &c1, 0, NULL, NULL, NULL, comm,
                                      NULL), FMPL_ERR_ARG);
    CHECK_RC(fmpl_neighbor_init(&c1, 0, NULL, NULL, NULL, &c1, 0, NULL, NULL, NULL, comm, NULL),
             FMPL_ERR_ARG);
    CHECK_RC(fmpl_neighbor_start(NULL, &q), FMPL_ERR_ARG);
    CHECK_RC(fmpl_neighbor_free(NULL), FMPL_ERR_ARG);
    CHECK_RC(fmpl_neighbor_alltoallv(&c1, 0, NULL, NULL, NULL, &c1, 0, NULL, NULL, NULL,
                                     FMPL_COMM_NULL), FMPL_ERR_COMM);
    /* a block longer than its receive: 8 bytes to the right into 4 */
    if (n > 1) {
        int right = (me + 1) % n, left = (me - 1 + n) % n;
        char s8[8] = "abcdefg", r4[8] = { 0 };
        size_t eight = 8, four = 4;
        int rc = fmpl_neighbor_alltoallv(s8, 1, &right, &eight, &off, r4, 1, &left, &four, &off,
                                         comm);
        CHECK(rc == FMPL_ERR_TRUNCATE, "a block longer than its receive gave %s, expected "
              "FMPL_ERR_TRUNCATE", fmpl_error_name(rc));
        /* and the communicator still works */
        CHECK_RC(fmpl_barrier(comm), FMPL_SUCCESS);
    }
    if (split)
        CHECK_RC(fmpl_comm_free(&comm), FMPL_SUCCESS);
    return prog_finish();
}
