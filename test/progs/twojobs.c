/*
 * twojobs - ring traffic on fixed indices; the driver starts two of these
 * jobs at once with different seeds.  A message that strays into the
 * other job (shared names, shared memory) fails the data check.
 *
 *   twojobs [-s SEED] [-n ITERS] [-T SECONDS] [-M MAXSIZE]
 *     -s  seed of this job's data (default 1)
 *     -n  at least this many iterations (default 400)
 *     -T  and at least this long (default 1.5 s; rank 0 decides and passes
 *         the decision round the ring every 16 iterations)
 *     -M  largest message (default 256K)
 */
#include "prog.h"

#define NIDX 8
#define CTRL_MAI NIDX

/* rank 0's decision to go on, passed round the ring */
static int ring_flag(int go, int left, int right)
{
    long f = go;
    if (prog_np == 1)
        return go;
    if (prog_me == 0) {
        CHECK_RC(fmpl_send(&f, sizeof f, right, CTRL_MAI), FMPL_SUCCESS);
        CHECK_RC(fmpl_recv(&f, sizeof f, left, CTRL_MAI), FMPL_SUCCESS);
    } else {
        CHECK_RC(fmpl_recv(&f, sizeof f, left, CTRL_MAI), FMPL_SUCCESS);
        CHECK_RC(fmpl_send(&f, sizeof f, right, CTRL_MAI), FMPL_SUCCESS);
    }
    return (int)f;
}

int main(int argc, char **argv)
{
    long seed = 1, iters = 400, it;
    double min_time = 1.5;
    size_t max = 256 << 10;
    struct prog_opt opts[] = {
        {'s', OPT_INT, &seed, "seed (default 1)"},
        {'n', OPT_INT, &iters, "at least this many iterations (default 400)"},
        {'T', OPT_DOUBLE, &min_time, "and at least this many seconds (default 1.5)"},
        {'M', OPT_SIZE, &max, "largest message (default 256K)"},
    };
    unsigned char *sbuf, *rbuf;
    int right, left;
    prog_rng_t g;
    double t0;

    prog_name = "twojobs";
    prog_parse(argc, argv, opts, 4);
    prog_init("twojobs", NIDX + 1);
    t0 = prog_now();
    printf("twojobs: rank %d seed %ld jobid %s\n", prog_me, seed,
           getenv("FMPL_JOBID") ? getenv("FMPL_JOBID") : "-");
    right = (prog_me + 1) % prog_np;
    left = (prog_me - 1 + prog_np) % prog_np;
    sbuf = prog_xmalloc(max);
    rbuf = prog_xmalloc(max + 16);
    prog_rng_seed(&g, 77);   /* same sizes in both jobs, different data */

    for (it = 0;; it++) {
        int mai = (int)(it % NIDX);
        size_t n = (size_t)prog_rng_below(&g, (it % 4 == 0 ? max : 512) + 1);
        uint64_t s = ((uint64_t)seed << 32) + (uint64_t)it;
        fmpl_request_t rr, rs;
        memset(&rr, 0, sizeof rr);
        memset(&rs, 0, sizeof rs);
        pat_fill(sbuf, n, s, prog_me, mai);
        memset(rbuf + n, PROG_POISON, 16);
        CHECK_RC(fmpl_irecv(rbuf, n + 16, left, mai, &rr), FMPL_SUCCESS);
        CHECK_RC(fmpl_isend(sbuf, n, right, mai, &rs), FMPL_SUCCESS);
        CHECK_RC(fmpl_wait_irecv(&rr), FMPL_SUCCESS);
        CHECK_RC(fmpl_wait_isend(&rs), FMPL_SUCCESS);
        PAT_VERIFY(rbuf, n, s, left, mai);
        POISON_VERIFY(rbuf + n, 16, PROG_POISON, "bytes after the message");
        if (it % 16 == 15 &&
            !ring_flag(it + 1 < iters || prog_now() - t0 < min_time, left, right))
            break;
    }
    iters = it + 1;
    free(sbuf);
    free(rbuf);
    if (prog_me == 0)
        printf("twojobs: seed %ld: %ld iterations in %.2f s\n", seed, iters, prog_now() - t0);
    return prog_finish();
}
