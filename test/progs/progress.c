/*
 * progress - with FMPL_PROGRESS_THREAD=1 (set here unless already set)
 * data moves while the application does not call FMPL.
 *
 *   progress [-T SECONDS] [-N]
 *     -T  how long a side stays away from FMPL (default 2)
 *     -N  no progress thread (FMPL_PROGRESS_THREAD=0), part 2 only: the
 *         sender must finish alone - on shm its stream through the FIFO
 *         stalls, and after a moment it writes the rest by CMA (shm.h)
 *
 * Ranks 0 and 1 (others only init and finalize):
 * 1. rank 0 spills a 1 MiB send (rank 1 has not posted yet), then
 *    computes and sleeps T seconds without calling FMPL; rank 1's receive,
 *    posted 0.5 s in, must complete long before rank 0 comes back.
 * 2. rank 1 posts an 8 MiB irecv and sleeps T seconds; rank 0's blocking
 *    send of 8 MiB must complete long before that (with FMPL_SHM_CMA=0
 *    the data goes through the pipelined buffers, which rank 1's progress
 *    thread must drain).
 * On an emulated machine (fmpl_wtime_emulated: tcw with its model) there
 * is no progress thread - its work would land at emulated times that
 * depend on this machine's scheduling - so part 1 checks the opposite, in
 * emulated time: the spilled message waits for its sender to be back in
 * FMPL; and part 2 holds as it is, since the SR8000 writes into a posted
 * receive without the receiver's help.
 */
#include "prog.h"

#define MAI 1
#define SYNC_MAI 2

static volatile double sink;

static void compute(double sec)
{
    /* an emulated machine charges CPU time, which a loaded machine gives
     * us more slowly than wall time: spin on it (prog_sleep does) */
    if (fmpl_wtime_emulated()) {
        prog_sleep(sec);
        return;
    }
    double t0 = prog_now(), x = 1.0;
    while (prog_now() - t0 < sec) {
        int i;
        for (i = 0; i < 10000; i++)
            x = x * 1.0000001 + 1e-9;
    }
    sink = x;
}

/* this machine's time, or the emulated machine's */
static double now(void) { return fmpl_wtime_emulated() ? fmpl_wtime() : prog_now(); }

int main(int argc, char **argv)
{
    double away = 2.0;
    int nothread = 0;
    struct prog_opt opts[] = {
        {'T', OPT_DOUBLE, &away, "seconds away from FMPL (default 2)"},
        {'N', OPT_FLAG, &nothread, "no progress thread: part 2 only"},
    };
    size_t n1 = 1 << 20, n2 = 8 << 20;
    unsigned char *buf, *spill;
    int ns, np;

    prog_name = "progress";
    prog_parse(argc, argv, opts, 2);
    setenv("FMPL_PROGRESS_THREAD", nothread ? "0" : "1", !!nothread);
    prog_init("progress", 4);
    buf = prog_xmalloc(n2 + 64);

    if (prog_me == 0 && prog_np > 1 && !nothread) {
        spill = prog_xmalloc(2 * n1 + 65536);
        CHECK_RC(fmpl_sendbuff_set(spill, 2 * n1 + 65536, 0), FMPL_SUCCESS);
        pat_fill(buf, n1, 1, 0, MAI);
        CHECK_RC(fmpl_send(buf, n1, 1, MAI), FMPL_SUCCESS);
        CHECK_RC(fmpl_sendbuff_check(&ns, &np), FMPL_SUCCESS);
        CHECK(np == 1, "the send was not spilled (nsend %d nspool %d)", ns, np);
        memset(buf, 0, n1);
        compute(away / 2);
        prog_sleep(away / 2);
        prog_exchange_poll(NULL, NULL, 0, 1, SYNC_MAI);
        CHECK_RC(fmpl_sendbuff_check(&ns, &np), FMPL_SUCCESS);
        CHECK(np == 0, "nspool %d", np);
        CHECK_RC(fmpl_sendbuff_set(NULL, 0, 0), FMPL_SUCCESS);
        free(spill);
    }
    if (prog_me == 0 && prog_np > 1) {
        /* part 2 */
        pat_fill(buf, n2, 2, 0, MAI);
        prog_exchange_poll(NULL, NULL, 0, 1, SYNC_MAI);
        {
            double t0 = now(), dt;
            CHECK_RC(fmpl_send(buf, n2, 1, MAI), FMPL_SUCCESS);
            dt = now() - t0;
            printf("progress: send of %zu bytes to a sleeping receiver took %.3f s\n", n2, dt);
            CHECK(dt < away / 2, "send of %zu bytes took %.3f s: %s while the receiver "
                  "slept %.1f s", n2, dt, nothread ? "the sender did not finish alone"
                  : "the receiver's progress thread did not drain it", away);
        }
    } else if (prog_me == 1) {
        fmpl_request_t r;
        double t0, dt;
        if (nothread)
            goto part2;
        prog_sleep(0.5);
        memset(buf, 0, n1);
        t0 = now();
        CHECK_RC(fmpl_recv(buf, n1, 0, MAI), FMPL_SUCCESS);
        dt = now() - t0;
        printf("progress: receive of a spilled %zu-byte message from a computing sender "
               "took %.3f s%s\n", n1, dt, fmpl_wtime_emulated() ? " (emulated)" : "");
        if (fmpl_wtime_emulated())
            CHECK(dt > away / 2, "receive took %.3f emulated s: the spilled send moved while "
                  "its sender was away for %.1f s, with no progress thread", dt, away);
        else
            CHECK(dt < away / 2 - 0.2, "receive took %.3f s: the spilled send was not pushed "
                  "while its sender was busy for %.1f s", dt, away);
        PAT_VERIFY(buf, n1, 1, 0, MAI);
        prog_exchange_poll(NULL, NULL, 0, 0, SYNC_MAI);

    part2:
        memset(&r, 0, sizeof r);
        memset(buf, 0, n2);
        CHECK_RC(fmpl_irecv(buf, n2, 0, MAI, &r), FMPL_SUCCESS);
        prog_exchange_poll(NULL, NULL, 0, 0, SYNC_MAI);
        prog_sleep(away);
        CHECK_RC(fmpl_wait_irecv(&r), FMPL_SUCCESS);
        PAT_VERIFY(buf, n2, 2, 0, MAI);
    }
    free(buf);
    return prog_finish();
}
