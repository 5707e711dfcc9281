/*
 * coll_kill - the last rank dies by SIGKILL while the others are in a
 * collective; every survivor must return FMPL_ERR_PEER, not hang.
 *
 *   coll_kill -w WHAT [-S] [-d DELAY] [-x CODE] [-y USEC]
 *     -w  the collective: barrier, bcast, hbcast, reduce, allreduce,
 *         bigallreduce (8 MiB), allgather, gather, scatter, split, halo,
 *         alltoall; iallreduce, ibcast (100000 bytes), ialltoall (20000
 *         a block), neighbor (ineighbor_alltoallv on a ring): started,
 *         fmpl_test until done, fmpl_wait
 *     -S  on a sub-communicator (WORLD split with reversed keys) instead
 *         of WORLD (not for hbcast)
 *     -d  seconds the victim waits, after 3 good rounds, before
 *         raise(SIGKILL) (default 0.3)
 *     -x  exit code of a survivor that saw FMPL_ERR_PEER (default 3)
 *     -y  with the nonblocking ones: sleep USEC between two fmpl_test calls
 *         (a test loop that computes, or a loaded machine's slow calls: the
 *         request must still end soon after the death)
 *
 * Every rank prints "coll_kill: rank R pid P" first.  Survivors repeat the
 * collective (root 0: the victim's data is needed by nobody directly, so
 * some survivors may finish a round or two) until it fails; a survivor
 * whose call returns FMPL_ERR_PEER prints
 *   coll_kill: rank R: FMPL_ERR_PEER from fmpl_WHAT in round K
 * and exits with CODE.  Any other error, or 1000 successful rounds after
 * the victim is gone, is a failure (exit 1).
 */
#include "prog.h"

static const char *what = "barrier";
static fmpl_comm_t C;
static int n, me;
static long nap_us;
static unsigned char *buf, *rbuf;
static fmpl_halo_t halo;
static double harr[8 * 6];

static int one_round(void)
{
    if (!strcmp(what, "barrier"))
        return fmpl_barrier(C);
    if (!strcmp(what, "bcast"))
        return fmpl_bcast(buf, 100000, 0, C);
    if (!strcmp(what, "hbcast"))   /* only the shm transport has it */
        return prog_on_shm() ? fmpl_hbcast(buf, 100000, 0)
                             : fmpl_bcast(buf, 100000, 0, FMPL_COMM_WORLD);
    if (!strcmp(what, "reduce"))
        return fmpl_reduce(buf, 1000, fmpl_dsum, 0, C, NULL);
    if (!strcmp(what, "allreduce"))
        return fmpl_allreduce(buf, 2, fmpl_isum, C, NULL);
    if (!strcmp(what, "bigallreduce"))
        return fmpl_allreduce(buf, 1 << 20, fmpl_dmax, C, NULL);
    if (!strcmp(what, "allgather"))
        return fmpl_allgather(buf, 5000, rbuf, C);
    if (!strcmp(what, "gather"))
        return fmpl_gather(buf, 5000, rbuf, 0, C);
    if (!strcmp(what, "scatter"))
        return fmpl_scatter(rbuf, 5000, buf, 0, C);
    if (!strcmp(what, "split")) {
        fmpl_comm_t nc;
        int rc = fmpl_comm_split(C, me % 2, 0, &nc);
        if (rc == FMPL_SUCCESS)
            rc = fmpl_comm_free(&nc);
        return rc;
    }
    if (!strcmp(what, "halo"))
        return fmpl_halo_do(halo);
    if (!strcmp(what, "alltoall"))
        return fmpl_alltoall(buf, 5000, rbuf, C);
    if (!strcmp(what, "iallreduce") || !strcmp(what, "ibcast") || !strcmp(what, "neighbor") ||
        !strcmp(what, "ialltoall")) {
        /* started, then waited for by tests: the request must end */
        fmpl_request_t r;
        int right = (me + 1) % n, left = (me + n - 1) % n, done = 0, rc;
        size_t sz = 3000, off = 0;
        if (!strcmp(what, "iallreduce"))
            rc = fmpl_iallreduce(buf, 1000, fmpl_dsum, C, &r);
        else if (!strcmp(what, "ibcast"))
            rc = fmpl_ibcast(buf, 100000, 0, C, &r);
        else if (!strcmp(what, "ialltoall"))
            rc = fmpl_ialltoall(buf, 20000, rbuf, C, &r);
        else
            rc = fmpl_ineighbor_alltoallv(buf, 1, &right, &sz, &off, rbuf, 1, &left, &sz, &off,
                                          C, &r);
        while (rc == FMPL_SUCCESS && !done) {
            rc = fmpl_test(&r, &done);
            if (nap_us > 0 && !done)
                usleep((useconds_t)nap_us);
        }
        return rc == FMPL_SUCCESS ? fmpl_wait(&r) : rc;
    }
    fprintf(stderr, "coll_kill: unknown -w %s\n", what);
    exit(2);
}

int main(int argc, char **argv)
{
    double delay = 0.3;
    long code = 3;
    int sub = 0, round, rc;
    struct prog_opt opts[] = {
        {'w', OPT_STR, &what, "the collective"},
        {'S', OPT_FLAG, &sub, "on a sub-communicator"},
        {'d', OPT_DOUBLE, &delay, "victim's delay before SIGKILL"},
        {'x', OPT_INT, &code, "survivors' exit code"},
        {'y', OPT_INT, &nap_us, "microseconds between fmpl_test calls"},
    };

    prog_name = "coll_kill";
    prog_parse(argc, argv, opts, 5);
    prog_init("coll_kill", 1);
    CHECK(prog_np >= 2, "needs at least 2 ranks");
    printf("coll_kill: rank %d pid %d\n", prog_me, (int)getpid());
    fflush(stdout);
    C = FMPL_COMM_WORLD;
    if (sub)
        CHECK_RC(fmpl_comm_split(FMPL_COMM_WORLD, 5, -prog_me, &C), FMPL_SUCCESS);
    CHECK_RC(fmpl_comm_size(C, &n), FMPL_SUCCESS);
    CHECK_RC(fmpl_comm_rank(C, &me), FMPL_SUCCESS);
    buf = prog_xmalloc(8 << 20);
    rbuf = prog_xmalloc((size_t)20000 * (size_t)n);
    if (!strcmp(what, "halo")) {
        /* a ring: n x 1 periodic */
        int ext[2] = {6, 4}, sh[2] = {1, 1};
        int nbr[4] = {(me + n - 1) % n, (me + 1) % n, me, me};
        CHECK_RC(fmpl_halo_init(harr, sizeof(double), 2, ext, sh, nbr, 0, C, &halo),
                 FMPL_SUCCESS);
    }

    for (round = 0; round < 3; round++)
        CHECK_RC(one_round(), FMPL_SUCCESS);
    if (prog_me == prog_np - 1) {
        prog_sleep(delay);
        fflush(stdout);
        raise(SIGKILL);
        return 99;   /* not reached */
    }
    for (round = 3; round < 1003; round++) {
        rc = one_round();
        if (rc == FMPL_SUCCESS)
            continue;
        if (rc == FMPL_ERR_PEER) {
            printf("coll_kill: rank %d: %s from fmpl_%s in round %d: %s\n", prog_me,
                   fmpl_error_name(rc), what, round, fmpl_strerror(rc));
            fflush(stdout);
            exit((int)code);
        }
        CHECK(0, "fmpl_%s in round %d returned %d %s (%s), expected FMPL_ERR_PEER", what, round,
              rc, fmpl_error_name(rc), fmpl_strerror(rc));
    }
    CHECK(0, "fmpl_%s succeeded 1000 times after rank %d died", what, prog_np - 1);
    return 1;
}
