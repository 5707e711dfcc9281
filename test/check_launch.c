/*
 * check_launch - bin/fmplrun: exit status, fmpl_abort, killed ranks,
 * --timeout, --prefix, arguments and environment, usage errors, SIGINT
 * and SIGTERM, two jobs at once, --bind-to.  Every test also checks that
 * no process and no /dev/shm/fmpl* entry of the job is left behind.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "fmpl.h"
#include "testlib.h"

#define HARD 90.0

static void no_leftovers(const job_t *j, const char *what)
{
    char left[2048];
    ck_assert_msg(job_leftovers(j, 3.0, left, sizeof left) == 0, "%s: leftovers: %s", what,
                  left);
}

#define EXPECT_STATUS(j, st, want, what)                                      \
    ck_assert_msg((st) == (want), "%s: exit status %d, expected %d; output:\n%s", (what), \
                  (st), (want), job_tail((j), 2000))

START_TEST(test_exit_zero)
{
    job_t j;
    int st = run_job(&j, 3, NULL, 60, "hello", NULL), r;
    EXPECT_STATUS(&j, st, 0, "fmplrun -n 3 hello");
    for (r = 0; r < 3; r++) {
        char l[64];
        snprintf(l, sizeof l, "hello rank %d size 3 ", r);
        ck_assert_msg(job_has(&j, l), "no line '%s' in:\n%s", l, job_tail(&j, 2000));
    }
    ck_assert(job_has(&j, "OK hello"));
    no_leftovers(&j, "hello");
    job_free(&j);
}
END_TEST

START_TEST(test_one_and_many)
{
    job_t j;
    int st = run_job(&j, 1, NULL, 60, "hello", NULL), r, n = 0;
    const char *p;
    EXPECT_STATUS(&j, st, 0, "fmplrun -n 1 hello");
    ck_assert_msg(job_has(&j, "hello rank 0 size 1 "), "%s", job_tail(&j, 1000));
    job_free(&j);

    st = run_job(&j, 16, NULL, 60, "hello", NULL);
    EXPECT_STATUS(&j, st, 0, "fmplrun -n 16 hello");
    for (r = 0; r < 16; r++) {
        char l[64];
        snprintf(l, sizeof l, "hello rank %d size 16 ", r);
        ck_assert_msg(job_has(&j, l), "no line '%s' in:\n%s", l, job_tail(&j, 3000));
    }
    for (p = j.out; (p = strstr(p, "hello rank")) != NULL; p++)
        n++;
    ck_assert_int_eq(n, 16);
    ck_assert_msg(j.secs < 30, "16 ranks doing init/finalize took %.1f s", j.secs);
    fprintf(stderr, "  fmplrun -n 16 hello: %.2f s\n", j.secs);
    no_leftovers(&j, "hello -n 16");
    job_free(&j);
}
END_TEST

START_TEST(test_exit_code)
{
    job_t j;
    int st = run_job(&j, 3, NULL, 60, "hello", "-r", "1", "-e", "7", NULL);
    EXPECT_STATUS(&j, st, 7, "fmplrun -n 3 hello -r 1 -e 7");
    no_leftovers(&j, "exit code");
    job_free(&j);
    st = run_job(&j, 2, NULL, 60, "hello", "-r", "0", "-e", "42", NULL);
    EXPECT_STATUS(&j, st, 42, "fmplrun -n 2 hello -r 0 -e 42");
    no_leftovers(&j, "exit code rank 0");
    job_free(&j);
}
END_TEST

START_TEST(test_killed_rank)
{
    job_t j;
    int st = run_job(&j, 3, NULL, 60, "hello", "-k", "9", NULL);
    EXPECT_STATUS(&j, st, 128 + 9, "fmplrun -n 3 hello -k 9");
    ck_assert_msg(j.secs < 10, "took %.1f s", j.secs);
    ck_assert_msg(job_has(&j, "hello rank 0: fmpl_recv from 2 returned FMPL_ERR_PEER"),
                  "rank 0 did not see FMPL_ERR_PEER:\n%s", job_tail(&j, 2000));
    no_leftovers(&j, "killed rank");
    job_free(&j);

    st = run_job(&j, 2, NULL, 60, "hello", "-k", "15", "-r", "0", NULL);
    EXPECT_STATUS(&j, st, 128 + 15, "fmplrun -n 2 hello -k 15 -r 0");
    ck_assert_msg(j.secs < 10, "took %.1f s", j.secs);
    no_leftovers(&j, "rank killed by SIGTERM");
    job_free(&j);
}
END_TEST

/* Rank 2 stops; rank 0 gives up on it (FMPL_PEER_TIMEOUT) and leaves;
 * rank 1 asks only 2 s later, once fmplrun has reaped rank 0: it must name
 * rank 2, the rank the job lost first, not rank 0, the first reaped. */
START_TEST(test_first_failure)
{
    job_t j;
    int st = run_job(&j, 3, "FMPL_PEER_TIMEOUT=1", 60, "kill", "-s", "-d", "0.2", "-L", "2",
                     NULL);
    EXPECT_STATUS(&j, st, 3, "FMPL_PEER_TIMEOUT=1 fmplrun -n 3 kill -s -L 2");
    ck_assert_msg(job_has(&j, "waited 1 s for rank 2 (FMPL_PEER_TIMEOUT): giving up"),
                  "rank 0 did not give up on rank 2:\n%s", job_tail(&j, 2000));
    ck_assert_msg(job_has(&j, "kill: rank 1: FMPL_ERR_PEER from fmpl_recv(src=2)"),
                  "rank 1 did not see FMPL_ERR_PEER:\n%s", job_tail(&j, 2000));
    ck_assert_msg(job_has(&j, "fmpl: rank 1: peer rank 2 failed") ||
                      job_has(&j, "fmpl: rank 1: shm: peer rank 2 failed"),
                  "rank 1 did not name rank 2:\n%s", job_tail(&j, 2000));
    ck_assert_msg(!job_has(&j, "peer rank 0 failed"), "a rank named rank 0:\n%s",
                  job_tail(&j, 2000));
    no_leftovers(&j, "first failure");
    job_free(&j);
}
END_TEST

START_TEST(test_abort)
{
    job_t j;
    int st = run_job(&j, 3, NULL, 60, "hello", "-a", "5", "-r", "1", NULL);
    EXPECT_STATUS(&j, st, 5, "fmplrun -n 3 hello -a 5 -r 1");
    ck_assert_msg(j.secs < 10, "fmpl_abort took %.1f s to end the job", j.secs);
    no_leftovers(&j, "abort");
    job_free(&j);
    /* fmpl_abort(0) exits with 1 */
    st = run_job(&j, 2, NULL, 60, "hello", "-a", "0", NULL);
    EXPECT_STATUS(&j, st, 1, "fmplrun -n 2 hello -a 0");
    no_leftovers(&j, "abort 0");
    job_free(&j);
}
END_TEST

START_TEST(test_timeout)
{
    job_t j;
    int st = run_job(&j, 2, NULL, 2, "hello", "-s", "60", NULL);
    EXPECT_STATUS(&j, st, 124, "fmplrun -n 2 -t 2 hello -s 60");
    ck_assert_msg(j.secs >= 1.9 && j.secs < 10, "timeout of 2 s took %.1f s", j.secs);
    no_leftovers(&j, "timeout (sleeping ranks)");
    job_free(&j);
    /* ranks spinning inside an FMPL wait */
    st = run_job(&j, 3, NULL, 2, "hello", "-b", NULL);
    EXPECT_STATUS(&j, st, 124, "fmplrun -n 3 -t 2 hello -b");
    ck_assert_msg(j.secs < 10, "timeout of 2 s took %.1f s", j.secs);
    no_leftovers(&j, "timeout (blocked ranks)");
    job_free(&j);
}
END_TEST

/* every line holding "out R i" / "err R i" starts with "[R] " */
static void check_prefixed(const job_t *j, int np, int lines)
{
    int r, i;
    for (r = 0; r < np; r++) {
        for (i = 0; i < lines; i++) {
            char want[64], bad[64];
            snprintf(want, sizeof want, "\n[%d] out %d %d\n", r, r, i);
            ck_assert_msg(strstr(j->out, want) || strncmp(j->out, want + 1, strlen(want + 1)) == 0,
                          "no prefixed line '[%d] out %d %d'; output:\n%s", r, r, i,
                          job_tail(j, 2000));
            snprintf(want, sizeof want, "\n[%d] err %d %d\n", r, r, i);
            ck_assert_msg(strstr(j->out, want) || strncmp(j->out, want + 1, strlen(want + 1)) == 0,
                          "no prefixed line '[%d] err %d %d'; output:\n%s", r, r, i,
                          job_tail(j, 2000));
            snprintf(bad, sizeof bad, "\nout %d %d\n", r, i);
            ck_assert_msg(!strstr(j->out, bad), "unprefixed line 'out %d %d'", r, i);
        }
    }
}

START_TEST(test_prefix)
{
    job_t j;
    int st = run_cmd(&j, NULL, HARD, "bin/fmplrun", "-n", "3", "-p", "-t", "60",
                     tl_path("test/progs/hello"), "-l", "20", NULL);
    EXPECT_STATUS(&j, st, 0, "fmplrun -n 3 -p hello -l 20");
    check_prefixed(&j, 3, 20);
    ck_assert_msg(job_has(&j, "[0] OK hello"), "%s", job_tail(&j, 1000));
    no_leftovers(&j, "prefix");
    job_free(&j);
    /* long form */
    st = run_cmd(&j, NULL, HARD, "bin/fmplrun", "--prefix", "-n", "2",
                 tl_path("test/progs/hello"), "-l", "3", NULL);
    EXPECT_STATUS(&j, st, 0, "fmplrun --prefix -n 2 hello -l 3");
    check_prefixed(&j, 2, 3);
    job_free(&j);
}
END_TEST

START_TEST(test_no_prefix)
{
    job_t j;
    int st = run_job(&j, 2, NULL, 60, "hello", "-l", "5", NULL), r, i;
    EXPECT_STATUS(&j, st, 0, "fmplrun -n 2 hello -l 5");
    for (r = 0; r < 2; r++)
        for (i = 0; i < 5; i++) {
            char want[64];
            snprintf(want, sizeof want, "out %d %d\n", r, i);
            ck_assert_msg(job_has(&j, want), "missing '%s'", want);
            snprintf(want, sizeof want, "] out %d %d\n", r, i);
            ck_assert_msg(!job_has(&j, want), "prefixed without -p");
        }
    job_free(&j);
}
END_TEST

START_TEST(test_lots_of_output)
{
    job_t j;
    int st = run_cmd(&j, NULL, HARD, "bin/fmplrun", "-n", "2", "-p", "-t", "60",
                     tl_path("test/progs/hello"), "-l", "20000", NULL);
    EXPECT_STATUS(&j, st, 0, "fmplrun -n 2 -p hello -l 20000");
    ck_assert_msg(job_has(&j, "\n[1] out 1 19999\n") && job_has(&j, "\n[0] err 0 19999\n"),
                  "last lines missing; output ends:\n%s", job_tail(&j, 500));
    job_free(&j);
}
END_TEST

START_TEST(test_args_env)
{
    job_t j;
    int st = run_job(&j, 2, "FMPL_TEST_VAR=v_a_l", 60, "hello", "--", "a b", "", "x'y\"z",
                     "-n", NULL);
    EXPECT_STATUS(&j, st, 0, "fmplrun -n 2 hello -- 'a b' '' ...");
    ck_assert_msg(job_has(&j, "arg 0 <a b>\n"), "%s", job_tail(&j, 2000));
    ck_assert_msg(job_has(&j, "arg 1 <>\n"), "%s", job_tail(&j, 2000));
    ck_assert_msg(job_has(&j, "arg 2 <x'y\"z>\n"), "%s", job_tail(&j, 2000));
    ck_assert_msg(job_has(&j, "arg 3 <-n>\n"), "%s", job_tail(&j, 2000));
    ck_assert_msg(!job_has(&j, "arg 4"), "%s", job_tail(&j, 2000));
    ck_assert_msg(job_has(&j, "env FMPL_TEST_VAR=v_a_l"), "%s", job_tail(&j, 2000));
    job_free(&j);
}
END_TEST

/* The CPUs this test may use, in order: their number. */
static int my_cpus(int *cpu, int max)
{
    cpu_set_t set;
    int n = 0;
    ck_assert(sched_getaffinity(0, sizeof set, &set) == 0);
    for (int c = 0; c < CPU_SETSIZE && n < max; c++)
        if (CPU_ISSET(c, &set))
            cpu[n++] = c;
    return n;
}

/* Run `fmplrun -n n -p opt sh -c <print our CPUs>` (opt "--" for none)
 * and check rank r's CPUs. */
static void expect_cpus(int n, const char *opt, const char *const *want, const char *what)
{
    job_t j;
    char line[96];
    int st = run_cmd(&j, NULL, HARD, "bin/fmplrun", "-n", n == 2 ? "2" : "3", "-p", opt, "sh",
                     "-c", "grep Cpus_allowed_list /proc/self/status", NULL);
    EXPECT_STATUS(&j, st, 0, what);
    for (int r = 0; r < n; r++) {
        snprintf(line, sizeof line, "[%d] Cpus_allowed_list:\t%s\n", r, want[r]);
        ck_assert_msg(job_has(&j, line), "%s: rank %d not on CPUs %s:\n%s", what, r, want[r],
                      job_tail(&j, 2000));
    }
    no_leftovers(&j, what);
    job_free(&j);
}

/* --bind-to: rank r on the r-th CPU we may use, by default only when
 * every rank has one of its own */
START_TEST(test_bind)
{
    int cpu[CPU_SETSIZE];
    int n = my_cpus(cpu, CPU_SETSIZE);
    /* an unbound rank's list is ours, as the kernel prints it */
    char all[256] = "", one[3][16], buf[256];
    FILE *f = fopen("/proc/self/status", "r");
    ck_assert(f != NULL);
    while (fgets(buf, sizeof buf, f))
        if (strncmp(buf, "Cpus_allowed_list:\t", 19) == 0)
            snprintf(all, sizeof all, "%.*s", (int)strcspn(buf + 19, "\n"), buf + 19);
    fclose(f);
    ck_assert(all[0] != '\0');
    for (int r = 0; r < 3; r++)
        snprintf(one[r], sizeof one[r], "%d", cpu[r % n]);
    const char *bound[3] = { one[0], one[1], one[2] }, *free3[3] = { all, all, all };

    expect_cpus(2, "--bind-to=none", free3, "fmplrun -n 2 --bind-to=none");
    expect_cpus(3, "--bind-to=core", bound, "fmplrun -n 3 --bind-to=core");
    expect_cpus(2, "--", n >= 2 ? bound : free3, "fmplrun -n 2 (default binding)");
    expect_cpus(3, "--", n >= 3 ? bound : free3, "fmplrun -n 3 (default binding)");

    job_t j;
    int st = run_cmd(&j, NULL, 30, "bin/fmplrun", "-n", "2", "--bind-to", "socket",
                     tl_path("test/progs/hello"), NULL);
    ck_assert_msg(st == 2 && job_has(&j, "'core' or 'none'"),
                  "fmplrun --bind-to socket: status %d:\n%s", st, job_tail(&j, 2000));
    job_free(&j);
}
END_TEST

/* rank 0 reads fmplrun's standard input, the others /dev/null */
START_TEST(test_stdin)
{
    job_t j;
    char cmd[1024];
    int st;
    snprintf(cmd, sizeof cmd, "echo line-for-rank-0 | '%s' -n 3 -t 60 '%s' -S",
             tl_path("bin/fmplrun"), tl_path("test/progs/hello"));
    st = run_cmd(&j, NULL, HARD, "sh", "-c", cmd, NULL);
    EXPECT_STATUS(&j, st, 0, "echo ... | fmplrun -n 3 hello -S");
    ck_assert_msg(job_has(&j, "stdin 0 <line-for-rank-0>"), "rank 0 did not get stdin:\n%s",
                  job_tail(&j, 1500));
    ck_assert_msg(job_has(&j, "stdin 1 EOF") && job_has(&j, "stdin 2 EOF"),
                  "ranks 1 and 2 should read EOF:\n%s", job_tail(&j, 1500));
    job_free(&j);
}
END_TEST

START_TEST(test_usage_errors)
{
    job_t j;
    int st;
    st = run_cmd(&j, NULL, 30, "bin/fmplrun", NULL);
    ck_assert_msg(st != 0 && st < 124, "fmplrun without arguments: status %d", st);
    job_free(&j);
    st = run_cmd(&j, NULL, 30, "bin/fmplrun", "-n", "0", tl_path("test/progs/hello"), NULL);
    ck_assert_msg(st != 0 && st < 124, "fmplrun -n 0: status %d", st);
    job_free(&j);
    st = run_cmd(&j, NULL, 30, "bin/fmplrun", "-n", "abc", tl_path("test/progs/hello"), NULL);
    ck_assert_msg(st != 0 && st < 124, "fmplrun -n abc: status %d", st);
    job_free(&j);
    st = run_cmd(&j, NULL, 30, "bin/fmplrun", "-n", "2", "-t", "-1",
                 tl_path("test/progs/hello"), NULL);
    ck_assert_msg(st != 0 && st < 124, "fmplrun -t -1: status %d", st);
    job_free(&j);
    st = run_cmd(&j, NULL, 30, "bin/fmplrun", "-n", "2", NULL);
    ck_assert_msg(st != 0 && st < 124, "fmplrun -n 2 (no program): status %d", st);
    job_free(&j);
    st = run_cmd(&j, NULL, 30, "bin/fmplrun", "-h", NULL);
    ck_assert_msg(st == 0 && job_has(&j, "Usage"), "fmplrun -h: status %d", st);
    job_free(&j);
    st = run_cmd(&j, NULL, 30, "bin/fmplrun", "--version", NULL);
    ck_assert_msg(st == 0 && job_has(&j, "fmplrun (FMPL) " FMPL_VERSION_STRING),
                  "fmplrun --version: status %d", st);
    job_free(&j);
}
END_TEST

START_TEST(test_bad_program)
{
    job_t j;
    int st = run_cmd(&j, NULL, 30, "bin/fmplrun", "-n", "2", "/nonexistent/prog", NULL);
    ck_assert_msg(st != 0 && st < 124 && j.secs < 10,
                  "fmplrun -n 2 /nonexistent/prog: status %d after %.1f s", st, j.secs);
    no_leftovers(&j, "bad program");
    job_free(&j);
    st = run_cmd(&j, NULL, 30, "bin/fmplrun", "-n", "2", "/dev/null", NULL);
    ck_assert_msg(st != 0 && st < 124 && j.secs < 10,
                  "fmplrun -n 2 /dev/null: status %d after %.1f s", st, j.secs);
    job_free(&j);
}
END_TEST

START_TEST(test_non_fmpl_program)
{
    job_t j;
    int st = run_cmd(&j, NULL, 30, "bin/fmplrun", "-n", "2", "true", NULL);
    EXPECT_STATUS(&j, st, 0, "fmplrun -n 2 true");
    job_free(&j);
    st = run_cmd(&j, NULL, 30, "bin/fmplrun", "-n", "2", "false", NULL);
    EXPECT_STATUS(&j, st, 1, "fmplrun -n 2 false");
    job_free(&j);
    st = run_job(&j, 3, NULL, 30, "hello", "-N", NULL);
    EXPECT_STATUS(&j, st, 0, "fmplrun -n 3 hello -N (no fmpl_init)");
    ck_assert_msg(job_has(&j, "hello rank 2 size - "), "FMPL_RANK not set:\n%s",
                  job_tail(&j, 1000));
    job_free(&j);
}
END_TEST

/* A rank fails and the others go on (they never look): after
 * FMPL_KILL_GRACE fmplrun says who was still running and ends them */
START_TEST(test_grace)
{
    job_t j;
    int st = run_cmd(&j, "FMPL_KILL_GRACE=0.5", 30, "bin/fmplrun", "-n", "3", "sh", "-c",
                     "if [ $FMPL_RANK = 0 ]; then exit 5; else sleep 20; fi", NULL);
    EXPECT_STATUS(&j, st, 5, "FMPL_KILL_GRACE=0.5 fmplrun -n 3 (rank 0 exits 5)");
    ck_assert_msg(j.secs < 10, "took %.1f s", j.secs);
    ck_assert_msg(job_has(&j, "fmplrun: ranks 1, 2 still running 0.5 s after rank 0 failed "
                          "(FMPL_KILL_GRACE): terminating the job"),
                  "fmplrun did not name the ranks left running:\n%s", job_tail(&j, 1000));
    no_leftovers(&j, "grace");
    job_free(&j);
}
END_TEST

/* Start a long job, wait until every rank runs, send `sig` to fmplrun
 * (group = 0) or its whole process group (group = 1, like Ctrl-C). */
static void signal_job(const char *mode, int np, int sig, int group, int want)
{
    const char *argv[12];
    char n[8], what[128];
    job_t j;
    int st, r;
    double t;

    snprintf(n, sizeof n, "%d", np);
    argv[0] = "bin/fmplrun";
    argv[1] = "-n";
    argv[2] = n;
    argv[3] = "-t";
    argv[4] = "100";
    argv[5] = tl_path("test/progs/hello");
    argv[6] = mode;
    argv[7] = strcmp(mode, "-s") == 0 ? "100" : NULL;
    argv[8] = NULL;
    snprintf(what, sizeof what, "signal %d to fmplrun%s -n %d hello %s", sig,
             group ? "'s process group" : "", np, mode);
    ck_assert_int_eq(job_start(&j, NULL, argv), 0);
    for (r = 0; r < np; r++) {
        char l[64];
        snprintf(l, sizeof l, "hello rank %d size", r);
        ck_assert_msg(job_wait_output(&j, l, 30), "%s: rank %d never started; output:\n%s",
                      what, r, job_tail(&j, 1000));
    }
    tl_sleep(0.5);
    t = tl_now();
    if (group)
        kill(-j.pid, sig);
    else
        kill(j.pid, sig);
    st = job_wait(&j, 60);
    t = tl_now() - t;
    job_log(&j, what);
    fprintf(stderr, "  %s: status %d, %.2f s after the signal\n", what, st, t);
    if (want >= 0)
        EXPECT_STATUS(&j, st, want, what);
    else
        ck_assert_msg(st != 0 && st != TL_HARD_TIMEOUT, "%s: status %d", what, st);
    ck_assert_msg(t < 5.0, "%s: fmplrun took %.1f s to end after the signal", what, t);
    no_leftovers(&j, what);
    job_free(&j);
}

START_TEST(test_sigint)
{
    signal_job("-b", 2, SIGINT, 0, 130);
}
END_TEST

START_TEST(test_sigint_group)
{
    signal_job("-b", 3, SIGINT, 1, 130);
}
END_TEST

START_TEST(test_sigint_sleeping)
{
    signal_job("-s", 2, SIGINT, 0, 130);
}
END_TEST

START_TEST(test_sigterm)
{
    signal_job("-b", 2, SIGTERM, 0, 143);
}
END_TEST

/* two jobs at once, same indices, different data */
static const struct { int np1, np2; const char *env; } two_specs[] = {
    {2, 2, NULL},
    {3, 2, "FMPL_SHM_CMA=0"},
    {4, 4, NULL},
};

START_TEST(test_two_jobs)
{
    job_t a, b;
    const char *argv_a[16], *argv_b[16];
    const char *args_a[] = {"-s", "101", NULL}, *args_b[] = {"-s", "202", NULL};
    const char *env = two_specs[_i].env;
    int sa, sb;
    char ja[80] = "", jb[80] = "", *p;

    ck_assert_msg(tl_have_prog("twojobs"), "test/progs/twojobs is not built");
    job_argv(argv_a, 16, two_specs[_i].np1, 100, NULL, "twojobs", args_a);
    job_argv(argv_b, 16, two_specs[_i].np2, 100, NULL, "twojobs", args_b);
    ck_assert_int_eq(job_start(&a, env, argv_a), 0);
    ck_assert_int_eq(job_start(&b, env, argv_b), 0);
    sb = job_wait(&b, HARD);
    sa = job_wait(&a, HARD);
    job_log(&a, "twojobs_a");
    job_log(&b, "twojobs_b");
    fprintf(stderr, "  two jobs (-n %d, -n %d%s%s): %.2f s and %.2f s\n", two_specs[_i].np1,
            two_specs[_i].np2, env ? ", " : "", env ? env : "", a.secs, b.secs);
    ck_assert_job_ok(&a, sa, "twojobs", "first of two jobs");
    ck_assert_job_ok(&b, sb, "twojobs", "second of two jobs");
    if ((p = strstr(a.out, "jobid ")) != NULL)
        sscanf(p + 6, "%79s", ja);
    if ((p = strstr(b.out, "jobid ")) != NULL)
        sscanf(p + 6, "%79s", jb);
    ck_assert_msg(strcmp(ja, jb) != 0 || strcmp(ja, "-") == 0, "both jobs have job id %s", ja);
    no_leftovers(&a, "two jobs");
    job_free(&a);
    job_free(&b);
}
END_TEST

/* the harness itself: leftovers are noticed (so a pass above means it) */
START_TEST(test_testlib_sees_leftovers)
{
    job_t j;
    char left[1024], cmd[256];
    int st;

    st = run_cmd(&j, NULL, 30, "sh", "-c", "sleep 30 & echo started", NULL);
    ck_assert_int_eq(st, 0);
    ck_assert_msg(job_leftovers(&j, 0.5, left, sizeof left) == 1 && strstr(left, "sleep"),
                  "a background sleep was not reported: '%s'", left);
    job_free(&j);
    ck_assert_msg(job_leftovers(&j, 0.5, left, sizeof left) == 0, "not cleaned: %s", left);

    snprintf(cmd, sizeof cmd, "touch /dev/shm/fmpl-testlib-%d", (int)getpid());
    st = run_cmd(&j, NULL, 30, "sh", "-c", cmd, NULL);
    ck_assert_int_eq(st, 0);
    ck_assert_msg(job_leftovers(&j, 0.5, left, sizeof left) == 1 && strstr(left, "fmpl-testlib"),
                  "a new /dev/shm/fmpl* file was not reported: '%s'", left);
    job_free(&j);

    st = run_cmd(&j, NULL, 2, "sleep", "30", NULL);
    ck_assert_int_eq(st, TL_HARD_TIMEOUT);
    ck_assert_msg(j.secs < 5, "hard timeout took %.1f s", j.secs);
    job_free(&j);
}
END_TEST

static Suite *launch_suite(void)
{
    Suite *s = suite_create("launch");
    TCase *tc;

    tc = tcase_create("testlib");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_testlib_sees_leftovers);
    suite_add_tcase(s, tc);

    tc = tcase_create("status");
    tcase_set_timeout(tc, 150);
    tcase_add_test(tc, test_exit_zero);
    tcase_add_test(tc, test_one_and_many);
    tcase_add_test(tc, test_exit_code);
    tcase_add_test(tc, test_killed_rank);
    tcase_add_test(tc, test_first_failure);
    tcase_add_test(tc, test_abort);
    tcase_add_test(tc, test_timeout);
    tcase_add_test(tc, test_usage_errors);
    tcase_add_test(tc, test_bad_program);
    tcase_add_test(tc, test_non_fmpl_program);
    tcase_add_test(tc, test_grace);
    suite_add_tcase(s, tc);

    tc = tcase_create("output");
    tcase_set_timeout(tc, 150);
    tcase_add_test(tc, test_prefix);
    tcase_add_test(tc, test_no_prefix);
    tcase_add_test(tc, test_lots_of_output);
    tcase_add_test(tc, test_args_env);
    tcase_add_test(tc, test_stdin);
    tcase_add_test(tc, test_bind);
    suite_add_tcase(s, tc);

    tc = tcase_create("signals");
    tcase_set_timeout(tc, 150);
    tcase_add_test(tc, test_sigint);
    tcase_add_test(tc, test_sigint_group);
    tcase_add_test(tc, test_sigint_sleeping);
    tcase_add_test(tc, test_sigterm);
    suite_add_tcase(s, tc);

    tc = tcase_create("twojobs");
    tcase_set_timeout(tc, 200);
    tcase_add_loop_test(tc, test_two_jobs, 0, (int)(sizeof two_specs / sizeof two_specs[0]));
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(launch_suite());
    int nfail;
    srunner_run_all(sr, CK_NORMAL);
    nfail = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nfail == 0 ? 0 : 1;
}
