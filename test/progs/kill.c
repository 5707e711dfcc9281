/*
 * kill - the last rank dies by SIGKILL while the others wait on it.
 *
 *   kill [-w recv|send|finalize] [-d DELAY] [-x CODE] [-s] [-L LATE]
 *     -w  what the survivors are blocked in (default recv):
 *           recv      even ranks fmpl_recv from the victim, odd ranks
 *                     fmpl_recv from rank+1 (a chain that depends on it)
 *           send      the same with fmpl_send (no receive is ever posted)
 *           finalize  every survivor is in fmpl_finalize
 *     -d  seconds the victim waits before raise(SIGKILL) (default 0.5)
 *     -x  exit code of a survivor that saw FMPL_ERR_PEER (default 3)
 *     -s  the victim stops itself (SIGSTOP) instead: alive, silent (its
 *         end comes from a timeout, FMPL_PEER_TIMEOUT or a transport's);
 *         the survivors make their call only once it has stopped (after
 *         DELAY + 0.5 s), so they have not talked to it before
 *     -L  odd survivors make their call LATE seconds after the even ones
 *         (default 0): with -s and a short FMPL_PEER_TIMEOUT, rank 0 gives
 *         up and leaves before rank 1 asks, and rank 1 must still name the
 *         victim, not rank 0
 *
 * Every rank prints "kill: rank R pid P" first (the driver checks that
 * all these processes are gone afterwards).  A survivor whose call returns
 * FMPL_ERR_PEER prints
 *   kill: rank R: FMPL_ERR_PEER from fmpl_recv(src=S): <message>
 * and exits with CODE; any other outcome is a failure (exit 1).
 */
#include "prog.h"

int main(int argc, char **argv)
{
    const char *what = "recv";
    double delay = 0.5;
    long code = 3;
    int stop = 0;
    double late = 0;
    struct prog_opt opts[] = {
        {'w', OPT_STR, &what, "recv, send or finalize"},
        {'d', OPT_DOUBLE, &delay, "victim's delay before SIGKILL"},
        {'x', OPT_INT, &code, "survivors' exit code"},
        {'s', OPT_FLAG, &stop, "SIGSTOP, not SIGKILL"},
        {'L', OPT_DOUBLE, &late, "odd survivors' extra delay"},
    };
    int victim, peer, rc;
    const char *call;
    static unsigned char buf[1 << 20];

    prog_name = "kill";
    prog_parse(argc, argv, opts, 5);
    prog_init("kill", 4);
    CHECK(prog_np >= 2, "needs at least 2 ranks");
    printf("kill: rank %d pid %d jobid %s\n", prog_me, (int)getpid(),
           getenv("FMPL_JOBID") ? getenv("FMPL_JOBID") : "-");
    fflush(stdout);
    victim = prog_np - 1;

    if (prog_me == victim) {
        prog_sleep(delay);
        fflush(stdout);
        raise(stop ? SIGSTOP : SIGKILL);
        return 99;   /* not reached (the launcher kills a stopped victim) */
    }

    peer = (prog_me % 2 == 0) ? victim : prog_me + 1;
    if (stop)
        prog_sleep(delay + 0.5);
    if (prog_me % 2)
        prog_sleep(late);
    if (strcmp(what, "recv") == 0) {
        call = "fmpl_recv";
        rc = fmpl_recv(buf, sizeof buf, peer, 1);
    } else if (strcmp(what, "send") == 0) {
        call = "fmpl_send";
        rc = fmpl_send(buf, sizeof buf, peer, 1);
    } else if (strcmp(what, "finalize") == 0) {
        call = "fmpl_finalize";
        peer = victim;
        rc = fmpl_finalize();
    } else {
        fprintf(stderr, "kill: unknown -w %s\n", what);
        return 2;
    }
    if (rc == FMPL_ERR_PEER) {
        printf("kill: rank %d: %s from %s(%s=%d): %s\n", prog_me, fmpl_error_name(rc), call,
               call[5] == 's' ? "dst" : "src", peer, fmpl_strerror(rc));
        fflush(stdout);
        exit((int)code);
    }
    CHECK(0, "%s(peer %d) returned %d %s (%s), expected FMPL_ERR_PEER", call, peer, rc,
          fmpl_error_name(rc), fmpl_strerror(rc));
    return 1;
}
