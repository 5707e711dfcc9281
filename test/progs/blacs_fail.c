/*
 * blacs_fail - a BLACS job that fails on purpose; the driver checks that
 * the whole job ends, quickly, with a non-zero status, and that no
 * process is left.
 *
 *   blacs_fail -w abort|kill [-t TOP] [-d DELAY] [-v VICTIM]
 *     -w abort  after 3 good rounds the victim calls Cblacs_abort(ctx, 7)
 *               while every other process waits in Cdgerv2d for a message
 *               from it that never comes
 *     -w kill   every process broadcasts 100 KB in turn (root = round %
 *               nprocs, Cdgebs2d/Cdgebr2d scope 'A', topology -t); after
 *               3 good rounds the victim dies by SIGKILL, so the others
 *               end up waiting for a dead process: they must fail (the
 *               BLACS report an error and end the job), not hang
 *     -w killsum   the same with Cdgsum2d (rdest -1) of 100 KB
 *     -d  seconds the victim waits before it aborts / dies (default 0.3)
 *     -v  the victim's pnum (default the last)
 * Every process prints "blacs_fail: rank R pid P" first, and
 * "blacs_fail: rank R survived" if its loop ever ends (which it must not:
 * exit status 1).
 */
#include "blacs_test.h"
#include <signal.h>

int main(int argc, char **argv)
{
    const char *what = "kill", *top = " ";
    double delay = 0.3;
    int victim = -1, opt, ctx;
    while ((opt = getopt(argc, argv, "w:t:d:v:")) != -1) {
        switch (opt) {
        case 'w': what = optarg; break;
        case 't': top = optarg; break;
        case 'd': delay = atof(optarg); break;
        case 'v': victim = atoi(optarg); break;
        default:
            fprintf(stderr, "usage: blacs_fail -w abort|kill|killsum [-t TOP] [-d S] [-v P]\n");
            return 2;
        }
    }
    bt_start("blacs_fail");
    CHECK(bt_np >= 2, "needs 2 processes or more, got %d", bt_np);
    if (victim < 0 || victim >= bt_np)
        victim = bt_np - 1;
    printf("blacs_fail: rank %d pid %d\n", bt_me, (int)getpid());
    fflush(stdout);
    Cblacs_get(-1, 0, &ctx);
    Cblacs_gridinit(&ctx, "R", 1, bt_np);
    const int n = 12800;   /* 100 KB of doubles */
    double *buf = calloc((size_t)n, sizeof(double));
    CHECK(buf != NULL, "calloc");
    int rounds = 0;
    double t0 = bt_now();
    for (rounds = 0; rounds < 1000000; rounds++) {
        if (rounds == 3 && bt_me == victim) {
            bt_sleep(delay);
            fflush(stdout);
            if (!strcmp(what, "abort")) {
                Cblacs_abort(ctx, 7);
                printf("blacs_fail: rank %d: Cblacs_abort returned\n", bt_me);
                return 1;
            }
            raise(SIGKILL);
            return 99;
        }
        if (!strcmp(what, "abort")) {
            if (rounds < 3) {
                Cblacs_barrier(ctx, "A");
            } else {
                Cdgerv2d(ctx, 1, 1, buf, 1, 0, victim);
                printf("blacs_fail: rank %d: received a message nobody sent\n", bt_me);
                return 1;
            }
        } else if (!strcmp(what, "kill")) {
            int root = rounds % bt_np;
            if (bt_me == root)
                Cdgebs2d(ctx, "A", (char *)top, n, 1, buf, n);
            else
                Cdgebr2d(ctx, "A", (char *)top, n, 1, buf, n, 0, root);
        } else if (!strcmp(what, "killsum")) {
            Cdgsum2d(ctx, "A", (char *)top, n, 1, buf, n, -1, -1);
        } else {
            CHECK(0, "unknown -w %s", what);
        }
        if (bt_now() - t0 > 30)
            break;
    }
    printf("blacs_fail: rank %d survived %d rounds\n", bt_me, rounds);
    return 1;
}
