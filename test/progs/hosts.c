/*
 * hosts - where every rank runs, which transport serves the job, and that
 * data crosses it intact.
 *
 *   hosts [-k K | -H H] [-m MAXSIZE]
 *     -k  ranks per host the job was started with (test/fakehost.sh K):
 *         rank r is expected on host r / K; 0 = every rank on one host.
 *         Default: FMPL_TEST_RANKS_PER_HOST, else 0.
 *     -H  the ranks were dealt round-robin over H hosts (mpirun --map-by
 *         node): rank r is expected on host r % H
 *     -m  largest point-to-point message (default 1M)
 *
 * Checks fmpl_host() and fmpl_transport() against the placement (the
 * transport FMPL_TRANSPORT names, else shm on one host, ofi with one rank
 * per host, route otherwise) and their errors; then every ordered pair
 * exchanges messages of several sizes into malloc'd and fmpl_alloc_mem
 * buffers (both routes of a routed job: shm keys made from libfabric
 * registrations, libfabric itself), and the barrier, broadcast from every
 * root and allreduce - the node-leader algorithms when the job is routed -
 * must give the exact results.
 */
#include "prog.h"

static void pairs(size_t max, int alloc)
{
    static const size_t sizes[] = {0, 8, 4000, 65536 + 8, 1 << 20};
    unsigned char *sbuf = malloc(max + 64);
    unsigned char *rbuf = alloc ? fmpl_alloc_mem(max + 64) : malloc(max + 64);
    CHECK(sbuf && rbuf, "out of memory");
    for (int d = 1; d < prog_np; d++) {
        int to = (prog_me + d) % prog_np, from = (prog_me - d + prog_np) % prog_np;
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
            size_t n = sizes[i];
            if (n > max)
                continue;
            uint64_t seed = (uint64_t)(d * 10 + (int)i + 100 * alloc);
            fmpl_request_t rr = {0};
            pat_fill(sbuf, n, seed, prog_me, d);
            memset(rbuf, PROG_POISON, n + 64);
            CHECK_RC(fmpl_irecv(rbuf, n, from, 1, &rr), FMPL_SUCCESS);
            CHECK_RC(fmpl_send(sbuf, n, to, 1), FMPL_SUCCESS);
            CHECK_RC(fmpl_wait_irecv(&rr), FMPL_SUCCESS);
            PAT_VERIFY(rbuf, n, seed, from, d);
            POISON_VERIFY(rbuf + n, 64, PROG_POISON, "bytes after the message");
        }
    }
    free(sbuf);
    if (alloc)
        fmpl_free_mem(rbuf);
    else
        free(rbuf);
}

static void collectives(void)
{
    enum { N = 1500 };             /* 12 KB of doubles: point-to-point paths */
    static double v[N];
    for (int sz = 1; sz <= N; sz = sz < N ? (sz * 37 > N ? N : sz * 37) : N + 1) {
        for (int i = 0; i < sz; i++)
            v[i] = prog_me + 1.0 + i;
        CHECK_RC(fmpl_allreduce(v, sz, fmpl_dsum, FMPL_COMM_WORLD, NULL), FMPL_SUCCESS);
        double ranks = prog_np * (prog_np + 1) / 2.0;
        for (int i = 0; i < sz; i++)
            CHECK(v[i] == ranks + (double)prog_np * i, "allreduce of %d: [%d] = %g", sz, i,
                  v[i]);
        for (int root = 0; root < prog_np; root++) {
            for (int i = 0; i < sz; i++)
                v[i] = prog_me == root ? root * 1000.0 + i : -1;
            CHECK_RC(fmpl_bcast(v, sz * sizeof *v, root, FMPL_COMM_WORLD), FMPL_SUCCESS);
            for (int i = 0; i < sz; i++)
                CHECK(v[i] == root * 1000.0 + i, "bcast of %d from %d: [%d] = %g", sz, root, i,
                      v[i]);
        }
        CHECK_RC(fmpl_barrier(FMPL_COMM_WORLD), FMPL_SUCCESS);
    }
}

int main(int argc, char **argv)
{
    const char *e = getenv("FMPL_TEST_RANKS_PER_HOST");
    int k = e ? atoi(e) : 0, dealt = 0;
    size_t max = 1 << 20;
    struct prog_opt opts[] = {
        {'k', OPT_INT, &k, "ranks per host (0: one host)"},
        {'H', OPT_INT, &dealt, "ranks dealt round-robin over this many hosts"},
        {'m', OPT_SIZE, &max, "largest point-to-point message (default 1M)"},
    };
    prog_parse(argc, argv, opts, 3);

    CHECK(fmpl_transport() == NULL, "a transport before fmpl_init");
    CHECK_RC(fmpl_host(0, NULL), FMPL_ERR_NOT_INIT);
    prog_init("hosts", 4);

    int want_hosts = k > 0 ? (prog_np + k - 1) / k : 1, nhosts = -1;
    if (dealt > 0)
        want_hosts = dealt < prog_np ? dealt : prog_np;
    for (int r = 0; r < prog_np; r++) {
        int h = fmpl_host(r, &nhosts);
        int want = dealt > 0 ? r % dealt : k > 0 ? r / k : 0;
        CHECK(h == want, "rank %d on host %d, expected %d", r, h, want);
    }
    CHECK(nhosts == want_hosts, "%d hosts, expected %d", nhosts, want_hosts);
    CHECK_RC(fmpl_host(-1, NULL), FMPL_ERR_RANK);
    CHECK_RC(fmpl_host(prog_np, NULL), FMPL_ERR_RANK);

    const char *forced = getenv("FMPL_TRANSPORT");
    const char *want = forced && *forced ? forced
                       : want_hosts == 1 ? "shm"
                       : k == 1 || want_hosts == prog_np ? "ofi"
                                         : "route";
    const char *t = fmpl_transport();
    CHECK(t && strcmp(t, want) == 0, "transport %s, expected %s", t ? t : "(null)", want);

    pairs(max, 0);
    pairs(max, 1);
    collectives();
    if (prog_me == 0)
        printf("hosts: %d ranks on %d hosts, transport %s\n", prog_np, nhosts, t);
    return prog_finish();
}
