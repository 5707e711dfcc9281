/*
 * fault_timer.h - the fault of the fault programs (fault.c, blacs_fault.c):
 * a timer makes this process fail at a chosen moment, wherever it is then.
 *
 * fault_kind: kill (SIGKILL), stop (SIGSTOP: alive, silent), exit
 * (_exit(0) without finalizing).  arm(ms) sets the timer; its handler
 * prints, just before failing,
 *   fault: rank R fails (KIND) at T
 * with T in CLOCK_REALTIME seconds (test/fault_test.sh measures from it).
 */
#ifndef FMPL_TEST_FAULT_TIMER_H
#define FMPL_TEST_FAULT_TIMER_H

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static const char *fault_kind = "kill";
static int fault_me = -1;

static double real_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* the timer's handler: write(2), raise and _exit only */
static void fail_now(int sig)
{
    (void)sig;
    char line[96];
    int n = snprintf(line, sizeof line, "fault: rank %d fails (%s) at %.6f\n", fault_me,
                     fault_kind, real_now());
    if (write(1, line, (size_t)n) < 0)
        _exit(98);
    if (!strcmp(fault_kind, "kill"))
        raise(SIGKILL);
    if (!strcmp(fault_kind, "stop"))
        raise(SIGSTOP);
    _exit(0);
}

static void arm(double ms)
{
    struct sigaction sa = { .sa_handler = fail_now };
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval it = { .it_value = { .tv_sec = (long)(ms / 1000),
                                          .tv_usec = (long)(ms * 1000) % 1000000 } };
    if (it.it_value.tv_sec == 0 && it.it_value.tv_usec == 0)
        it.it_value.tv_usec = 1;
    setitimer(ITIMER_REAL, &it, NULL);
}

#endif
