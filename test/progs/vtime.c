/*
 * vtime - the virtual time of an emulated machine (FMPL_TRANSPORT=tcw
 * with its timing model): what a program observes depends on the modeled
 * times, never on how this machine ran the ranks.
 *
 * Ranks 0 and 1 (others only init, a barrier and finalize):
 *  A. fmpl_test does not see data before its modeled arrival: rank 1
 *     sends 8 bytes at its time T1; rank 0, with the receive posted long
 *     before, polls fmpl_test; it sees the message no sooner than the
 *     model's least one-way time after T1 (the NIA's start-up and write
 *     and a crossbar: FMPL_TCW_NIA_SEND_NS + XBAR_NS + NIA_RECV_NS).
 *  B. a wait ends at the later of the waiter's clock and the arrival: rank
 *     0 computes 2 ms (emulated) before it receives a message rank 1 sent
 *     at once: its receive ends within 100 us of its own clock.  The 2 ms
 *     are charged at the CPU time rank 0 measured itself, times
 *     FMPL_TCW_CPU_SCALE (check_tcw runs it with 1); the receive's own
 *     time is B's figure.
 *  C. ... and the arrival when it is later: rank 1 computes 2 ms before it
 *     sends; rank 0's receive, posted at once, ends between T1 and 100 us
 *     after it.
 *  D. rank 0 prints the modeled times of A (three medians of five, after
 *     one to warm up) and of B and C
 *     ("vtime: ..."): test/check_tcw.c runs the job again, with other rank
 *     counts and beside a load, and wants the same line.
 * Times travel between the ranks in messages (index 2).
 */
#include "prog.h"

#define MAI 1
#define TMAI 2

static double min_oneway;          /* seconds */

static double env_ns(const char *name, double def)
{
    const char *e = getenv(name);
    return e && *e ? atof(e) : def;
}

/* the process's CPU time, as the emulated clock measures it */
static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static double median5(double *v)
{
    for (int i = 1; i < 5; i++)
        for (int j = i; j > 0 && v[j] < v[j - 1]; j--) {
            double t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    return v[2];
}

/* rank 1 tells rank 0 a time */
static double told(double t)
{
    if (prog_me == 1)
        CHECK_RC(fmpl_send(&t, sizeof t, 0, TMAI), FMPL_SUCCESS);
    else
        CHECK_RC(fmpl_recv(&t, sizeof t, 1, TMAI), FMPL_SUCCESS);
    return t;
}

/* A: how long after rank 1's send rank 0's fmpl_test saw it */
static double part_a(void)
{
    fmpl_request_t r;
    uint64_t v = 0x1234abcdull, got = 0;
    double t1 = 0, seen = 0;
    if (prog_me == 0)
        CHECK_RC(fmpl_irecv(&got, sizeof got, 1, MAI, &r), FMPL_SUCCESS);
    CHECK_RC(fmpl_barrier(FMPL_COMM_WORLD), FMPL_SUCCESS);
    if (prog_me == 1) {
        t1 = fmpl_wtime();
        CHECK_RC(fmpl_send(&v, sizeof v, 0, MAI), FMPL_SUCCESS);
    } else {
        int done = 0;
        while (!done)
            CHECK_RC(fmpl_test(&r, &done), FMPL_SUCCESS);
        seen = fmpl_wtime();
        CHECK_RC(fmpl_wait_irecv(&r), FMPL_SUCCESS);
        CHECK(got == v, "part A: got %llx", (unsigned long long)got);
    }
    t1 = told(t1);
    if (prog_me == 0) {
        CHECK(seen - t1 >= min_oneway, "part A: fmpl_test saw the message %.3f us after it "
              "was sent, less than the model's %.3f us", (seen - t1) * 1e6, min_oneway * 1e6);
        return seen - t1;
    }
    return 0;
}

static double part_b(void)
{
    uint64_t v = 77, got = 0;
    CHECK_RC(fmpl_barrier(FMPL_COMM_WORLD), FMPL_SUCCESS);
    if (prog_me == 1) {
        CHECK_RC(fmpl_send(&v, sizeof v, 0, MAI), FMPL_SUCCESS);
    } else {
        double t0 = fmpl_wtime(), c0 = cpu_now();
        prog_sleep(0.002);         /* emulated: computes 2 ms */
        double c1 = cpu_now(), t = fmpl_wtime();
        /* the charge is the CPU time the program used, times the scale:
         * compared with what the program itself measured, not with 2 ms,
         * since this virtual machine's CPU clock now and then runs on by
         * tens of microseconds in a single step (a CI run: 2097.7 us for
         * a loop that stops at 2000) */
        double used = (c1 - c0) * env_ns("FMPL_TCW_CPU_SCALE", 0.0);
        CHECK(t - t0 >= 0.002 && t - t0 > used - 1e-6 && t - t0 < used + 20e-6,
              "part B: %.3f us of computing (%.3f us of CPU time) were charged %.3f us",
              2e3, used * 1e6, (t - t0) * 1e6);
        CHECK_RC(fmpl_recv(&got, sizeof got, 1, MAI), FMPL_SUCCESS);
        double end = fmpl_wtime();
        CHECK(got == v, "part B: data");
        CHECK(end - t < 100e-6, "part B: a receive of a message that had long arrived took "
              "%.3f us", (end - t) * 1e6);
        return end - t;
    }
    return 0;
}

static double part_c(void)
{
    uint64_t v = 78, got = 0;
    double t1 = 0, end = 0;
    CHECK_RC(fmpl_barrier(FMPL_COMM_WORLD), FMPL_SUCCESS);
    if (prog_me == 1) {
        prog_sleep(0.002);
        t1 = fmpl_wtime();
        CHECK_RC(fmpl_send(&v, sizeof v, 0, MAI), FMPL_SUCCESS);
    } else {
        CHECK_RC(fmpl_recv(&got, sizeof got, 1, MAI), FMPL_SUCCESS);
        end = fmpl_wtime();
        CHECK(got == v, "part C: data");
    }
    t1 = told(t1);
    if (prog_me == 0)
        CHECK(end >= t1 + min_oneway && end < t1 + 100e-6, "part C: the receive ended %.3f us "
              "after the send (the model: >= %.3f us, a few at most)", (end - t1) * 1e6,
              min_oneway * 1e6);
    return end - t1;
}

int main(int argc, char **argv)
{
    prog_name = "vtime";
    prog_parse(argc, argv, NULL, 0);
    prog_init("vtime", 4);
    CHECK(prog_np >= 2, "needs 2 ranks");
    CHECK(fmpl_wtime_emulated(), "needs an emulated clock (FMPL_TRANSPORT=tcw, its model on)");
    min_oneway = 1e-9 * (env_ns("FMPL_TCW_NIA_SEND_NS", 1400) + env_ns("FMPL_TCW_XBAR_NS", 1200) +
                         env_ns("FMPL_TCW_NIA_RECV_NS", 1400));
    if (prog_me < 2) {
        /* A: once cold (code and pages touched the first time), then the
         * median of 5 of each triple: the program's own instructions
         * between two fmpl_test calls are charged at this machine's CPU
         * time, which an interrupt now and then inflates */
        double a[3], r[5];
        part_a();
        for (int k = 0; k < 3; k++) {
            for (int i = 0; i < 5; i++)
                r[i] = part_a();
            a[k] = median5(r);
        }
        double b = part_b(), c = part_c();
        if (prog_me == 0)
            printf("vtime: A %.6f %.6f %.6f B %.6f C %.6f us\n", a[0] * 1e6, a[1] * 1e6,
                   a[2] * 1e6, b * 1e6, c * 1e6);
    } else {
        for (int k = 0; k < 18; k++)     /* the barriers of parts A (16), B and C */
            CHECK_RC(fmpl_barrier(FMPL_COMM_WORLD), FMPL_SUCCESS);
    }
    return prog_finish();
}
