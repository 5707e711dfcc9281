/*
 * fault - the last rank fails at a random moment inside an activity; the
 * others must end with FMPL_ERR_PEER, not hang (test/fault_test.sh runs
 * the matrix).
 *
 *   fault -a ACTIVITY -f FAULT [-t MS] [-x CODE]
 *     -a  what everybody is doing when the victim fails:
 *           p2p       a ring: each rank sends to the next and receives from
 *                     the previous, sizes 0 B to 256 KiB, blocking and not
 *           coll      barrier, bcast, allreduce, allgather, reduce in turn
 *           halo      a periodic 1-D halo exchange (fmpl_halo_do)
 *           waits     rank 0 posts a receive from every other rank and
 *                     waits for them in turn; every other rank is a victim
 *                     and sends nothing (with -f stop: one FMPL_PEER_TIMEOUT
 *                     must end all of rank 0's waits, not one per request)
 *           init      the victim fails inside (or right after) fmpl_init
 *           finalize  the survivors are in fmpl_finalize
 *     -f  how it fails: kill (SIGKILL), stop (SIGSTOP: alive, silent - the
 *         survivors need FMPL_PEER_TIMEOUT), exit (_exit(0) without
 *         fmpl_finalize), or none: no rank fails, every rank is a survivor
 *         of a fault from outside (a link cut by test/netfault_test.sh)
 *     -t  the moment, in ms after the activity starts (default 100); the
 *         fault comes from a timer, so it lands wherever the victim is
 *     -x  exit code of a survivor that saw FMPL_ERR_PEER (default 3)
 *
 * Every rank prints "fault: rank R pid P" first.  The victim prints, from
 * the timer's handler just before failing,
 *   fault: rank V fails (FAULT) at T
 * (T: CLOCK_REALTIME seconds), and a survivor whose call returns
 * FMPL_ERR_PEER prints
 *   fault: rank R: FMPL_ERR_PEER from CALL at T
 * and exits with CODE.  Any other error, or 30 s past the fault's moment
 * without one, is a failure (exit 1).
 */
#include "prog.h"
#include "fault_timer.h"

static const char *activity = "p2p";
static int me, np;

static int survivor_failed(int rc, const char *call)
{
    if (rc == FMPL_SUCCESS)
        return 0;
    if (rc == FMPL_ERR_PEER) {
        printf("fault: rank %d: %s from %s at %.6f\n", me, fmpl_error_name(rc), call,
               real_now());
        fflush(stdout);
        return 1;
    }
    CHECK(0, "%s returned %d %s (%s), expected FMPL_ERR_PEER", call, rc, fmpl_error_name(rc),
          fmpl_strerror(rc));
    return 1;
}

static unsigned char *sbuf, *rbuf;
static double harr[10 * 3];
static fmpl_halo_t halo;

/* one round of the activity: an FMPL error code, *call says which */
static int one_round(int round, const char **call)
{
    if (!strcmp(activity, "p2p") || !strcmp(activity, "init")) {
        size_t sz = (size_t)((round * 7919) % (256 * 1024 + 1));
        int next = (me + 1) % np, prev = (me + np - 1) % np;
        if (round % 2) {
            fmpl_request_t rq, sq;
            *call = "fmpl_irecv";
            int rc = fmpl_irecv(rbuf, sz, prev, 1, &rq);
            if (rc == FMPL_SUCCESS) {
                *call = "fmpl_isend";
                rc = fmpl_isend(sbuf, sz, next, 1, &sq);
                if (rc != FMPL_SUCCESS)
                    fmpl_cancel_irecv(&rq);
            }
            if (rc == FMPL_SUCCESS) {
                *call = "fmpl_wait_isend";
                int r2 = fmpl_wait_isend(&sq);
                *call = "fmpl_wait_irecv";
                rc = fmpl_wait_irecv(&rq);
                if (rc == FMPL_SUCCESS)
                    rc = r2;
            }
            return rc;
        }
        /* blocking: even ranks send first (an odd ring's last pair waits
         * a little) */
        if (me % 2 == 0) {
            *call = "fmpl_send";
            int rc = fmpl_send(sbuf, sz, next, 1);
            *call = "fmpl_recv";
            return rc != FMPL_SUCCESS ? rc : fmpl_recv(rbuf, sz, prev, 1);
        }
        *call = "fmpl_recv";
        int rc = fmpl_recv(rbuf, sz, prev, 1);
        *call = "fmpl_send";
        return rc != FMPL_SUCCESS ? rc : fmpl_send(sbuf, sz, next, 1);
    }
    if (!strcmp(activity, "coll")) {
        switch (round % 5) {
        case 0: *call = "fmpl_barrier"; return fmpl_barrier(FMPL_COMM_WORLD);
        case 1: *call = "fmpl_bcast"; return fmpl_bcast(sbuf, 100000, round % np, FMPL_COMM_WORLD);
        case 2: *call = "fmpl_allreduce";
            return fmpl_allreduce(sbuf, 1000, fmpl_dsum, FMPL_COMM_WORLD, NULL);
        case 3: *call = "fmpl_allgather";
            return fmpl_allgather(sbuf, 4096, rbuf, FMPL_COMM_WORLD);
        default: *call = "fmpl_reduce";
            return fmpl_reduce(sbuf, 1000, fmpl_dsum, 0, FMPL_COMM_WORLD, NULL);
        }
    }
    if (!strcmp(activity, "waits")) {
        fmpl_request_t rq[64];
        int first = FMPL_SUCCESS, rc;
        *call = "fmpl_irecv";
        for (int r = 1; r < np; r++)
            if ((rc = fmpl_irecv(rbuf + r, 1, r, 2, &rq[r])) != FMPL_SUCCESS)
                return rc;
        *call = "fmpl_wait_irecv";
        for (int r = 1; r < np; r++)
            if ((rc = fmpl_wait_irecv(&rq[r])) != FMPL_SUCCESS && first == FMPL_SUCCESS)
                first = rc;
        return first;
    }
    if (!strcmp(activity, "halo")) {
        *call = "fmpl_halo_do";
        return fmpl_halo_do(halo);
    }
    fprintf(stderr, "fault: unknown -a %s\n", activity);
    exit(2);
}

int main(int argc, char **argv)
{
    double at = 100;
    long code = 3;
    struct prog_opt opts[] = {
        {'a', OPT_STR, &activity, "p2p, coll, halo, waits, init or finalize"},
        {'f', OPT_STR, &fault_kind, "kill, stop, exit or none"},
        {'t', OPT_DOUBLE, &at, "ms into the activity"},
        {'x', OPT_INT, &code, "survivors' exit code"},
    };
    prog_name = "fault";
    prog_parse(argc, argv, opts, 4);
    CHECK(!strcmp(fault_kind, "kill") || !strcmp(fault_kind, "stop") ||
          !strcmp(fault_kind, "exit") || !strcmp(fault_kind, "none"), "unknown -f %s",
          fault_kind);
    int none = !strcmp(fault_kind, "none");
    /* who is the victim is known before fmpl_init (for -a init) */
    const char *sz = getenv("FMPL_SIZE"), *rk = getenv("FMPL_RANK");
    int pre_victim = !none && sz && rk && atoi(rk) == atoi(sz) - 1;
    me = fault_me = rk ? atoi(rk) : -1;
    if (!strcmp(activity, "init") && pre_victim)
        arm(at);
    int rc = fmpl_init(4);
    if (rc != FMPL_SUCCESS) {
        /* a survivor whose fmpl_init met the dead victim */
        CHECK(rc == FMPL_ERR_PEER || rc == FMPL_ERR_INIT, "fmpl_init returned %d %s", rc,
              fmpl_error_name(rc));
        printf("fault: rank %d: FMPL_ERR_PEER from fmpl_init (%s) at %.6f\n", me,
               fmpl_error_name(rc), real_now());
        fflush(stdout);
        exit((int)code);
    }
    me = fault_me = prog_me = fmpl_rank();
    np = prog_np = fmpl_size();
    CHECK(np >= 2, "needs at least 2 ranks");
    printf("fault: rank %d pid %d\n", me, (int)getpid());
    fflush(stdout);
    int victim = none ? -1 : np - 1;
    sbuf = prog_xmalloc(256 * 1024 + 4096 * (size_t)np);
    rbuf = prog_xmalloc(256 * 1024 + 4096 * (size_t)np);
    memset(sbuf, me, 256 * 1024);
    if (!strcmp(activity, "halo")) {
        int ext[2] = {8, 1}, sh[2] = {1, 1};
        int nbr[4] = {(me + np - 1) % np, (me + 1) % np, -1, -1};
        CHECK_RC(fmpl_halo_init(harr, sizeof(double), 2, ext, sh, nbr, 0, FMPL_COMM_WORLD,
                                &halo), FMPL_SUCCESS);
    }
    if (!strcmp(activity, "finalize")) {
        if (me == victim) {
            arm(at);
            for (;;)
                pause();
        }
        rc = fmpl_finalize();
        if (survivor_failed(rc, "fmpl_finalize"))
            exit((int)code);
        CHECK(0, "fmpl_finalize succeeded although rank %d never called it", victim);
    }
    if (!strcmp(activity, "waits")) {
        CHECK(np <= 64, "-a waits takes at most 64 ranks");
        if (me != 0) {
            arm(at);
            for (;;)
                pause();
        }
    } else if (me == victim && strcmp(activity, "init") != 0) {
        arm(at);
    }
    /* rounds until the failure, however fast they go (a small halo took
     * 3.7 us a round on shm: 100000 of them ended before a fault drawn
     * at 381 ms), and at most 30 s past its moment */
    const char *call = "?";
    double end = prog_now() + at / 1e3 + 30;
    int round;
    for (round = 0; prog_now() < end; round++) {
        rc = one_round(round, &call);
        if (rc == FMPL_SUCCESS)
            continue;
        CHECK(me != victim, "the victim's %s returned %d %s before it failed", call, rc,
              fmpl_error_name(rc));
        if (survivor_failed(rc, call))
            exit((int)code);
    }
    CHECK(0, "%d rounds of %s in %.0f s and no failure (rank %d)", round, activity,
          at / 1e3 + 30, me);
    return 1;
}
