/*
 * random - random pairwise traffic among all ranks, many indices in flight.
 *
 *   random [-s SEED] [-R ROUNDS] [-k MSGS] [-I NIDX] [-M MAXSIZE] [-S] [-a]
 *     -s  shared seed of the plan (default 12345)
 *     -R  rounds (default 6)
 *     -k  messages each rank sends per round (default 24)
 *     -I  matching-area indices (default 64)
 *     -M  largest message (default 1M); sizes spread over 0..MAX
 *     -S  allow messages to self (default on; -S turns them off)
 *     -a  receive buffers from fmpl_alloc_mem
 *
 * Every rank computes the same plan from the seed: in each round, for each
 * source rank, k messages (dst, index, size), no (src, dst, index) twice in
 * a round.  Each rank posts an irecv for every message it will receive (in
 * a random order, some with a larger buffer than the message), then an
 * isend for every message it sends, then waits for all its requests in a
 * random order (some through fmpl_test polling) and checks every byte and
 * the guard after every receive buffer.
 */
#include "prog.h"

#define GUARD 32

struct msg {
    int src, dst, mai;
    size_t size;      /* bytes sent */
    size_t cap;       /* receive buffer size (>= size) */
    uint64_t seed;
    unsigned char *buf;
    fmpl_request_t req;
    int is_recv;
};

static size_t pick_size(prog_rng_t *g, size_t max)
{
    size_t lim;
    switch (prog_rng_below(g, 5)) {
    case 0: lim = 16; break;          /* tiny, including 0 */
    case 1: lim = 512; break;         /* inline-ish */
    case 2: lim = 8192; break;
    case 3: lim = 128 << 10; break;
    default: lim = max; break;
    }
    if (lim > max)
        lim = max;
    return (size_t)prog_rng_below(g, (uint64_t)lim + 1);
}

int main(int argc, char **argv)
{
    long seed = 12345, rounds = 6, k = 24, nidx = 64;
    size_t max = 1 << 20;
    int noself = 0, use_alloc = 0;
    struct prog_opt opts[] = {
        {'s', OPT_INT, &seed, "shared seed (default 12345)"},
        {'R', OPT_INT, &rounds, "rounds (default 6)"},
        {'k', OPT_INT, &k, "messages per rank per round (default 24)"},
        {'I', OPT_INT, &nidx, "indices (default 64)"},
        {'M', OPT_SIZE, &max, "largest message (default 1M)"},
        {'S', OPT_FLAG, &noself, "no messages to self"},
        {'a', OPT_FLAG, &use_alloc, "receive into fmpl_alloc_mem buffers"},
    };
    prog_rng_t plan, local;
    unsigned char *used;
    struct msg *mine;
    int *order;
    long r;
    int nmine, i;
    long total_msgs = 0;
    double total_bytes = 0;

    prog_name = "random";
    prog_parse(argc, argv, opts, 7);
    prog_init("random", (int)nidx);
    CHECK(k >= 0 && rounds >= 0, "bad options");
    if (prog_np == 1)
        noself = 0;
    /* at most k distinct (dst, index) pairs per source must exist */
    CHECK((long)(noself ? prog_np - 1 : prog_np) * nidx >= k,
          "-k %ld too large for %d ranks x %ld indices", k, prog_np, nidx);

    used = prog_xmalloc((size_t)prog_np * prog_np * nidx);
    mine = prog_xmalloc(sizeof *mine * (size_t)2 * k * prog_np);
    order = prog_xmalloc(sizeof *order * (size_t)2 * k * prog_np);
    prog_rng_seed(&plan, (uint64_t)seed);
    prog_rng_seed(&local, (uint64_t)seed * 7919 + (uint64_t)prog_me + 1);

    for (r = 0; r < rounds; r++) {
        int src, j;
        long nrecv = 0, nsend = 0;

        memset(used, 0, (size_t)prog_np * prog_np * nidx);
        nmine = 0;
        /* the plan: identical on every rank */
        for (src = 0; src < prog_np; src++) {
            for (j = 0; j < k; j++) {
                int dst, mai;
                size_t size, cap;
                do {
                    dst = (int)prog_rng_below(&plan, prog_np);
                    mai = (int)prog_rng_below(&plan, nidx);
                } while ((noself && dst == src) ||
                         used[((size_t)src * prog_np + dst) * nidx + mai]);
                used[((size_t)src * prog_np + dst) * nidx + mai] = 1;
                size = pick_size(&plan, max);
                cap = size + (prog_rng_below(&plan, 3) == 0 ? prog_rng_below(&plan, 100) : 0);
                if (src == prog_me || dst == prog_me) {
                    /* a message to self appears twice: once each side */
                    int side;
                    for (side = 0; side < 2; side++) {
                        struct msg *m;
                        if ((side == 0 && dst != prog_me) || (side == 1 && src != prog_me))
                            continue;
                        m = &mine[nmine++];
                        memset(m, 0, sizeof *m);
                        m->src = src;
                        m->dst = dst;
                        m->mai = mai;
                        m->size = size;
                        m->cap = cap;
                        m->seed = ((uint64_t)seed << 32) ^ ((uint64_t)r << 20) ^
                                  ((uint64_t)src << 10) ^ (uint64_t)j;
                        m->is_recv = side == 0;
                    }
                }
            }
        }
        /* buffers */
        for (i = 0; i < nmine; i++) {
            struct msg *m = &mine[i];
            if (m->is_recv) {
                size_t n = m->cap + GUARD;
                if (use_alloc) {
                    m->buf = fmpl_alloc_mem(n);
                    CHECK(m->buf != NULL, "fmpl_alloc_mem(%zu)", n);
                } else {
                    m->buf = prog_xmalloc(n);
                }
                memset(m->buf, PROG_POISON, n);
                nrecv++;
            } else {
                m->buf = prog_xmalloc(m->size);
                pat_fill(m->buf, m->size, m->seed, m->src, m->mai);
                nsend++;
            }
        }
        /* post receives in a random order, then sends in a random order */
        for (i = 0; i < nmine; i++)
            order[i] = i;
        for (i = nmine - 1; i > 0; i--) {
            int x = (int)prog_rng_below(&local, (uint64_t)i + 1), t = order[i];
            order[i] = order[x];
            order[x] = t;
        }
        for (i = 0; i < nmine; i++) {
            struct msg *m = &mine[order[i]];
            if (m->is_recv)
                CHECK_RC(fmpl_irecv(m->buf, m->cap, m->src, m->mai, &m->req), FMPL_SUCCESS);
        }
        for (i = 0; i < nmine; i++) {
            struct msg *m = &mine[order[i]];
            if (!m->is_recv)
                CHECK_RC(fmpl_isend(m->buf, m->size, m->dst, m->mai, &m->req), FMPL_SUCCESS);
        }
        /* wait in another random order */
        for (i = nmine - 1; i > 0; i--) {
            int x = (int)prog_rng_below(&local, (uint64_t)i + 1), t = order[i];
            order[i] = order[x];
            order[x] = t;
        }
        for (i = 0; i < nmine; i++) {
            struct msg *m = &mine[order[i]];
            if (prog_rng_below(&local, 4) == 0) {
                int done = 0;
                while (!done)
                    CHECK_RC(fmpl_test(&m->req, &done), FMPL_SUCCESS);
            }
            if (m->is_recv)
                CHECK_RC(fmpl_wait_irecv(&m->req), FMPL_SUCCESS);
            else
                CHECK_RC(fmpl_wait_isend(&m->req), FMPL_SUCCESS);
        }
        /* verify and free */
        for (i = 0; i < nmine; i++) {
            struct msg *m = &mine[i];
            if (m->is_recv) {
                PAT_VERIFY(m->buf, m->size, m->seed, m->src, m->mai);
                POISON_VERIFY(m->buf + m->size, m->cap - m->size + GUARD, PROG_POISON,
                              "bytes after the message");
                total_bytes += (double)m->size;
                total_msgs++;
                if (use_alloc)
                    CHECK_RC(fmpl_free_mem(m->buf), FMPL_SUCCESS);
                else
                    free(m->buf);
            } else {
                free(m->buf);
            }
        }
        (void)nrecv;
        (void)nsend;
    }
    printf("random: rank %d received %ld messages, %.0f bytes\n", prog_me, total_msgs,
           total_bytes);
    free(used);
    free(mine);
    free(order);
    return prog_finish();
}
