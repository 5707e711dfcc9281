/*
 * check_errors - error codes and failure handling.
 *
 * Unit (one process): the error table (names, messages, distinctness,
 * unknown codes), calls before fmpl_init (in a forked child).
 * Jobs: badargs and truncate workers with 1..8 ranks; peer death (the
 * kill worker: the last rank SIGKILLs itself while the others wait in
 * recv, send or finalize): fmplrun ends non-zero within 10 s, every
 * survivor reports FMPL_ERR_PEER naming the dead rank, no process and no
 * /dev/shm/fmpl* entry of the job remains; FMPL_PEER_TIMEOUT; a send
 * given up leaves its request's memory alone (forget, over libfabric).
 */
#include <math.h>

#include "fmpl.h"
#include "testlib.h"

#define JOB_TIMEOUT tl_job_timeout(60)

/* ---- the error table ------------------------------------------------- */

struct ecode { int code; const char *name; const char *msg; };
static const struct ecode table[] = {
#define X_(name, code, msg) {code, "FMPL_" #name, msg},
    FMPL_ERRNO_MAP(X_)
#undef X_
};
#define NCODES ((int)(sizeof table / sizeof table[0]))

START_TEST(test_error_table)
{
    int a, b;
    ck_assert_int_eq(NCODES, -FMPL_ERR_LAST_);
    for (a = 0; a < NCODES; a++) {
        const char *n = fmpl_error_name(table[a].code), *m = fmpl_strerror(table[a].code);
        ck_assert_msg(table[a].code == -a, "code table out of order at %d", a);
        ck_assert_ptr_nonnull(n);
        ck_assert_ptr_nonnull(m);
        ck_assert_str_eq(n, table[a].name);
        ck_assert_str_eq(m, table[a].msg);
        ck_assert_msg(m[0] != 0, "empty message for %d", table[a].code);
        for (b = 0; b < a; b++) {
            ck_assert_msg(strcmp(m, fmpl_strerror(table[b].code)) != 0,
                          "%s and %s share a message", table[a].name, table[b].name);
            ck_assert_msg(strcmp(n, fmpl_error_name(table[b].code)) != 0,
                          "%s and %s share a name", table[a].name, table[b].name);
        }
    }
    ck_assert_int_eq(FMPL_SUCCESS, 0);
    ck_assert_int_eq(FMPL_ERR_INTERNAL, -16);
}
END_TEST

START_TEST(test_error_unknown)
{
    static const int unknown[] = {1, 2, 100, FMPL_ERR_LAST_, -100, INT_MIN, INT_MAX};
    unsigned u;
    int b;
    for (u = 0; u < sizeof unknown / sizeof unknown[0]; u++) {
        int c = unknown[u];
        const char *m = fmpl_strerror(c), *n = fmpl_error_name(c);
        ck_assert_msg(m != NULL && m[0] != 0, "fmpl_strerror(%d) is NULL or empty", c);
        ck_assert_msg(n != NULL && n[0] != 0, "fmpl_error_name(%d) is NULL or empty", c);
        for (b = 0; b < NCODES; b++) {
            ck_assert_msg(strcmp(m, table[b].msg) != 0,
                          "unknown code %d gives %s's message '%s'", c, table[b].name, m);
            ck_assert_msg(strcmp(n, table[b].name) != 0, "unknown code %d is named %s", c,
                          n);
        }
    }
    /* the generic message is the same for every unknown code */
    ck_assert_str_eq(fmpl_strerror(1), fmpl_strerror(-1000));
}
END_TEST

START_TEST(test_version_and_request)
{
    fmpl_request_t r;
    ck_assert_int_eq(FMPL_VERSION_MAJOR, 0);
    ck_assert_int_ge(FMPL_VERSION_MINOR, 1);
    /* the library's version is the header's (before fmpl_init too) */
    int ma = -1, mi = -1, pa = -1;
    char want[32];
    snprintf(want, sizeof want, "%d.%d.%d", FMPL_VERSION_MAJOR, FMPL_VERSION_MINOR,
             FMPL_VERSION_PATCH);
    ck_assert_str_eq(fmpl_version(&ma, &mi, &pa), want);
    ck_assert_str_eq(FMPL_VERSION_STRING, want);
    ck_assert_int_eq(ma, FMPL_VERSION_MAJOR);
    ck_assert_int_eq(mi, FMPL_VERSION_MINOR);
    ck_assert_int_eq(pa, FMPL_VERSION_PATCH);
    ck_assert_str_eq(fmpl_version(NULL, NULL, NULL), want);
    ck_assert_int_ge(FMPL_REQUEST_WORDS * 8, sizeof r);
    ck_assert_int_lt((FMPL_REQUEST_WORDS - 1) * 8, sizeof r);
    ck_assert_msg(fmpl_wtime() > 0 || fmpl_wtime() == 0, "fmpl_wtime");
}
END_TEST

START_TEST(test_wtime_monotonic)
{
    double a = fmpl_wtime(), b;
    tl_sleep(0.05);
    b = fmpl_wtime();
    ck_assert_msg(b - a >= 0.045 && b - a < 1.0, "fmpl_wtime advanced %.4f s in a 0.05 s sleep",
                  b - a);
}
END_TEST

/* ---- before fmpl_init, in a forked child ----------------------------- */

START_TEST(test_before_init)
{
    pid_t pid = fork();
    int ws;
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        /* each failure exits with its own code: the line tells which */
        char b[8];
        fmpl_request_t r;
        int done, ns, np;
        unsetenv("FMPL_JOBID");
        unsetenv("PMIX_NAMESPACE");
        memset(&r, 0, sizeof r);
        alarm(30);
#define E(call, ex, k) do { int rc_ = (call); if (rc_ != (ex)) { \
        fprintf(stderr, "%s = %s, expected %s\n", #call, fmpl_error_name(rc_), \
                fmpl_error_name(ex)); _exit(k); } } while (0)
        if (fmpl_rank() != -1 || fmpl_size() != -1) _exit(2);
        E(fmpl_send(b, 1, 0, 0), FMPL_ERR_NOT_INIT, 3);
        E(fmpl_recv(b, 1, 0, 0), FMPL_ERR_NOT_INIT, 4);
        E(fmpl_isend(b, 1, 0, 0, &r), FMPL_ERR_NOT_INIT, 5);
        E(fmpl_irecv(b, 1, 0, 0, &r), FMPL_ERR_NOT_INIT, 6);
        E(fmpl_finalize(), FMPL_ERR_NOT_INIT, 7);
        E(fmpl_sendbuff_set(b, 8, 0), FMPL_ERR_NOT_INIT, 8);
        E(fmpl_sendbuff_check(&ns, &np), FMPL_ERR_NOT_INIT, 9);
        E(fmpl_compute(0.001), FMPL_ERR_NOT_INIT, 25);
        if (fmpl_alloc_mem(10) != NULL) _exit(10);
        /* an unsubmitted request: either answer is fine, but not success */
        if (fmpl_wait_irecv(&r) == FMPL_SUCCESS) _exit(11);
        if (fmpl_wait_isend(&r) == FMPL_SUCCESS) _exit(12);
        if (fmpl_test(&r, &done) == FMPL_SUCCESS) _exit(13);
        if (fmpl_cancel_irecv(&r) == FMPL_SUCCESS) _exit(14);
        E(fmpl_init(0), FMPL_ERR_ARG, 15);
        E(fmpl_init(1048577), FMPL_ERR_ARG, 16);
        if (fmpl_rank() != -1) _exit(17);
        E(fmpl_init(1048576), FMPL_SUCCESS, 18);   /* the largest count */
        if (fmpl_rank() != 0 || fmpl_size() != 1) _exit(19);
        E(fmpl_send(b, 1, 0, 1048576), FMPL_ERR_INDEX, 20);
        E(fmpl_irecv(b + 4, 1, 0, 1048575, &r), FMPL_SUCCESS, 22);
        E(fmpl_send(b, 1, 0, 1048575), FMPL_SUCCESS, 23);
        E(fmpl_wait_irecv(&r), FMPL_SUCCESS, 24);
        /* fmpl_compute: durations only, and at least that long (exactly,
         * plus a call, when FMPL_TRANSPORT names an emulated machine) */
        E(fmpl_compute(-1e-9), FMPL_ERR_ARG, 26);
        E(fmpl_compute(NAN), FMPL_ERR_ARG, 27);
        E(fmpl_compute(INFINITY), FMPL_ERR_ARG, 28);
        E(fmpl_compute(86401.0), FMPL_ERR_ARG, 29);
        double t0 = fmpl_wtime();
        E(fmpl_compute(0.02), FMPL_SUCCESS, 30);
        double dt = fmpl_wtime() - t0;
        if (dt < 0.02 || dt > 1.0) _exit(31);
        E(fmpl_compute(0), FMPL_SUCCESS, 32);
        E(fmpl_finalize(), FMPL_SUCCESS, 21);
#undef E
        _exit(0);
    }
    waitpid(pid, &ws, 0);
    ck_assert_msg(WIFEXITED(ws) && WEXITSTATUS(ws) == 0,
                  "calls before init: child %s %d (see stderr; the number is the failed step)",
                  WIFEXITED(ws) ? "exited" : "killed by signal",
                  WIFEXITED(ws) ? WEXITSTATUS(ws) : WTERMSIG(ws));
}
END_TEST

/* ---- worker jobs ------------------------------------------------------ */

struct spec { const char *prog; int np; const char *env; const char *args[6]; };

static const struct spec worker_specs[] = {
    {"badargs", 0, NULL, {NULL}},
    {"badargs", 1, NULL, {NULL}},
    {"badargs", 2, NULL, {NULL}},
    {"badargs", 3, "FMPL_SHM_CMA=0", {NULL}},
    {"badargs", 4, "FMPL_PROGRESS_THREAD=1", {NULL}},
    {"truncate", 0, NULL, {NULL}},
    {"truncate", 2, NULL, {NULL}},
    {"truncate", 2, "FMPL_SHM_CMA=0", {NULL}},
    {"truncate", 3, NULL, {NULL}},
    {"truncate", 4, "FMPL_SHM_CMA=0", {NULL}},
    {"truncate", 8, NULL, {NULL}},
    {"truncate", 2, "FMPL_SHM_EAGER=1024", {NULL}},
};

START_TEST(test_workers)
{
    const struct spec *s = &worker_specs[_i];
    tl_run_worker(s->prog, s->np, s->env, s->args, JOB_TIMEOUT);
}
END_TEST

/* ---- peer death ------------------------------------------------------- */

struct kspec { int np; const char *what; const char *env; };
static const struct kspec kill_specs[] = {
    {2, "recv", NULL},
    {3, "recv", NULL},
    {4, "recv", "FMPL_SHM_CMA=0"},
    {8, "recv", NULL},
    {2, "send", NULL},
    {4, "send", NULL},
    {2, "finalize", NULL},
    {3, "finalize", NULL},
    {3, "recv", "FMPL_PROGRESS_THREAD=1"},
};

START_TEST(test_kill)
{
    const struct kspec *k = &kill_specs[_i];
    job_t j;
    int st, r, victim = k->np - 1;
    char desc[200], left[1024], want[64];

    snprintf(desc, sizeof desc, "%s%sfmplrun -n %d kill -w %s", k->env ? k->env : "",
             k->env ? " " : "", k->np, k->what);
    st = run_job(&j, k->np, k->env, 60, "kill", "-w", k->what, NULL);
    job_log(&j, desc);
    fprintf(stderr, "  %-50s status %d, %.2f s\n", desc, st, j.secs);
    ck_assert_msg(st != 0 && st != TL_HARD_TIMEOUT && st != 124,
                  "%s: exit status %d, expected a failure status; output:\n%s", desc, st,
                  job_tail(&j, 2500));
    ck_assert_msg(j.secs < 10.0, "%s: fmplrun took %.1f s after a rank died (limit 10 s); "
                  "output:\n%s", desc, j.secs, job_tail(&j, 2500));
    for (r = 0; r < victim; r++) {
        char line[64];
        snprintf(line, sizeof line, "kill: rank %d: FMPL_ERR_PEER", r);
        ck_assert_msg(job_has(&j, line), "%s: rank %d did not report FMPL_ERR_PEER; "
                      "output:\n%s", desc, r, job_tail(&j, 2500));
    }
    /* the ranks waiting on the victim directly name it */
    snprintf(want, sizeof want, "=%d): ", victim);
    ck_assert_msg(job_has(&j, want), "%s: no survivor names rank %d; output:\n%s", desc,
                  victim, job_tail(&j, 2500));
    ck_assert_msg(tl_pids_alive(&j, left, sizeof left) == 0, "%s: %s", desc, left);
    ck_assert_msg(job_leftovers(&j, 3.0, left, sizeof left) == 0, "%s: leftovers: %s", desc,
                  left);
    job_free(&j);
}
END_TEST

/* a rank killed while every other rank is blocked: the launcher's status */
START_TEST(test_kill_status)
{
    job_t j;
    int st = run_job(&j, 3, NULL, 60, "kill", "-d", "0.2", NULL);
    char left[1024];
    job_log(&j, "kill_status");
    ck_assert_msg(st == 128 + SIGKILL, "fmplrun -n 3 kill: status %d, expected %d (the first "
                  "rank to fail died of SIGKILL); output:\n%s", st, 128 + SIGKILL,
                  job_tail(&j, 2000));
    ck_assert_msg(job_leftovers(&j, 3.0, left, sizeof left) == 0, "leftovers: %s", left);
    job_free(&j);
}
END_TEST

/* FMPL_PEER_TIMEOUT: every rank waits for a message nobody sends */
START_TEST(test_peer_timeout)
{
    job_t j;
    int st = run_job(&j, 2, "FMPL_PEER_TIMEOUT=1", 60, "hello", "-b", NULL);
    char left[1024];
    job_log(&j, "peer_timeout");
    ck_assert_msg(st != 0 && st != 124 && st != TL_HARD_TIMEOUT,
                  "FMPL_PEER_TIMEOUT=1 fmplrun -n 2 hello -b: status %d; output:\n%s", st,
                  job_tail(&j, 2000));
    ck_assert_msg(job_has(&j, "returned FMPL_ERR_PEER"),
                  "no FMPL_ERR_PEER with FMPL_PEER_TIMEOUT=1; output:\n%s", job_tail(&j, 2000));
    ck_assert_msg(j.secs < 10, "took %.1f s with FMPL_PEER_TIMEOUT=1", j.secs);
    ck_assert_msg(job_leftovers(&j, 3.0, left, sizeof left) == 0, "leftovers: %s", left);
    job_free(&j);
}
END_TEST

/* A send given up on a stopped peer (FMPL_PEER_TIMEOUT) with writes on
 * their way over libfabric: their completions, which come when the peer
 * runs on (_i 0) or dies (_i 1), must leave the request's memory alone
 * (ops->forget; test/progs/forget) */
START_TEST(test_forget)
{
    job_t j;
    char left[1024];
    ck_assert_msg(tl_have_prog("forget"), "test/progs/forget is not built");
    const char *env = "FMPL_TRANSPORT=ofi FI_PROVIDER=tcp FMPL_PEER_TIMEOUT=2";
    int st = _i ? run_job(&j, 2, env, 90, "forget", "-k", NULL)
                : run_job(&j, 2, env, 90, "forget", NULL);
    job_log(&j, _i ? "forget_kill" : "forget_cont");
    ck_assert_msg(job_has(&j, "OK forget") && !job_has(&j, "FAIL"),
                  "forget%s over ofi: status %d; output:\n%s", _i ? " -k" : "", st,
                  job_tail(&j, 2000));
    ck_assert_msg(job_leftovers(&j, 3.0, left, sizeof left) == 0, "leftovers: %s", left);
    job_free(&j);
}
END_TEST

/* FMPL_PEER_TIMEOUT inside a halo exchange, whose wait has no one peer:
 * the survivor that gives up says it waited for the other ranks (it
 * once said "rank -1") */
START_TEST(test_peer_timeout_coll)
{
    job_t j;
    char left[1024];
    const char *t = getenv("FMPL_TRANSPORT");
    ck_assert_msg(tl_have_prog("fault"), "test/progs/fault is not built");
    int st = run_job(&j, 3, "FMPL_PEER_TIMEOUT=1", 60, "fault", "-a", "halo", "-f", "stop",
                     "-t", "100", NULL);
    job_log(&j, "peer_timeout_coll");
    ck_assert_msg(st != 0 && st != 124 && st != TL_HARD_TIMEOUT,
                  "FMPL_PEER_TIMEOUT=1 fmplrun -n 3 fault -a halo -f stop: status %d; "
                  "output:\n%s", st, job_tail(&j, 2000));
    ck_assert_msg(job_has(&j, "FMPL_ERR_PEER from fmpl_halo_do"),
                  "no FMPL_ERR_PEER from the halo exchange; output:\n%s", job_tail(&j, 2000));
    ck_assert_msg(!job_has(&j, "rank -1"), "a message names rank -1; output:\n%s",
                  job_tail(&j, 2000));
    /* the emulated machines give up in their clock (another message) */
    if (!t || !*t || strcmp(t, "shm") == 0)
        ck_assert_msg(job_has(&j, "for the other ranks (FMPL_PEER_TIMEOUT): giving up"),
                      "no survivor says it waited for the other ranks; output:\n%s",
                      job_tail(&j, 2000));
    ck_assert_msg(j.secs < 15, "took %.1f s with FMPL_PEER_TIMEOUT=1", j.secs);
    ck_assert_msg(job_leftovers(&j, 3.0, left, sizeof left) == 0, "leftovers: %s", left);
    job_free(&j);
}
END_TEST

/* FMPL_PEER_TIMEOUT over several waits: rank 0 waits in turn for a
 * message from each of 3 ranks that stopped (a link cut would do the
 * same): one timeout ends all three waits, not one timeout per request
 * (the three took 6 s with FMPL_PEER_TIMEOUT=2 before) */
START_TEST(test_peer_timeout_waits)
{
    job_t j;
    char left[1024];
    ck_assert_msg(tl_have_prog("fault"), "test/progs/fault is not built");
    int st = run_job(&j, 4, "FMPL_PEER_TIMEOUT=2", 60, "fault", "-a", "waits", "-f", "stop",
                     "-t", "100", NULL);
    job_log(&j, "peer_timeout_waits");
    ck_assert_msg(st == 3, "FMPL_PEER_TIMEOUT=2 fmplrun -n 4 fault -a waits -f stop: status %d, "
                  "expected rank 0's 3; output:\n%s", st, job_tail(&j, 2000));
    /* the first victim's stop and rank 0's error, in CLOCK_REALTIME s */
    double stop = 0, err = 0, t;
    int r;
    for (const char *l = j.out; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        if (sscanf(l, "fault: rank %d fails (stop) at %lf", &r, &t) == 2 && (stop == 0 || t < stop))
            stop = t;
        if (sscanf(l, "fault: rank 0: FMPL_ERR_PEER from %*s at %lf", &t) == 1)
            err = t;
    }
    ck_assert_msg(stop > 0 && err > 0, "no stop or no FMPL_ERR_PEER line; output:\n%s",
                  job_tail(&j, 2000));
    ck_assert_msg(err - stop < 3.5, "rank 0's waits ended %.1f s after the stops, "
                  "FMPL_PEER_TIMEOUT=2; output:\n%s", err - stop, job_tail(&j, 2000));
    ck_assert_msg(job_leftovers(&j, 3.0, left, sizeof left) == 0, "leftovers: %s", left);
    job_free(&j);
}
END_TEST

/* An emulated machine's rank killed inside the engine (FMPL_EMU_DIE: once
 * its 40th transfer is told, still on its channel) may leave a transfer
 * half done: the machine stops, and every survivor - those that never
 * wait on the victim too - ends with FMPL_ERR_PEER naming it, none with
 * a signal of its own (a completion told twice once hit a stack frame
 * that was gone: SIGSEGV). */
START_TEST(test_engine_death)
{
    job_t j;
    char left[1024], line[96];
    const char *desc = "FMPL_EMU_DIE=3:40 fmplrun -n 4 fault -a p2p";
    ck_assert_msg(tl_have_prog("fault"), "test/progs/fault is not built");
    /* the timer's own fault far past the end: the engine's death is the one */
    int st = run_job(&j, 4, "FMPL_EMU_DIE=3:40", 60, "fault", "-a", "p2p", "-f", "kill", "-t",
                     "600000", NULL);
    job_log(&j, desc);
    ck_assert_msg(st != 0 && st != 124 && st != TL_HARD_TIMEOUT, "%s: status %d; output:\n%s",
                  desc, st, job_tail(&j, 2500));
    ck_assert_msg(j.secs < 10.0, "%s: took %.1f s (limit 10 s); output:\n%s", desc, j.secs,
                  job_tail(&j, 2500));
    int vpid = 0;
    const char *at = strstr(j.out ? j.out : "", "fault: rank 3 pid ");
    ck_assert_msg(at && sscanf(at + 18, "%d", &vpid) == 1, "%s: rank 3 never started; "
                  "output:\n%s", desc, job_tail(&j, 2500));
    snprintf(line, sizeof line, "rank 3 (pid %d) is gone, and died inside the emulated", vpid);
    ck_assert_msg(job_has(&j, line), "%s: nobody says rank 3 died inside the engine; "
                  "output:\n%s", desc, job_tail(&j, 2500));
    for (int r = 0; r < 3; r++) {
        snprintf(line, sizeof line, "fault: rank %d: FMPL_ERR_PEER", r);
        ck_assert_msg(job_has(&j, line), "%s: rank %d did not report FMPL_ERR_PEER; "
                      "output:\n%s", desc, r, job_tail(&j, 2500));
        snprintf(line, sizeof line, "peer rank %d failed", r);
        ck_assert_msg(!job_has(&j, line), "%s: rank %d named as failed; output:\n%s", desc,
                      r, job_tail(&j, 2500));
        /* its own exit, with the fault program's code for FMPL_ERR_PEER */
        int pid = 0;
        snprintf(line, sizeof line, "fault: rank %d pid ", r);
        at = strstr(j.out, line);
        ck_assert_msg(at && sscanf(at + strlen(line), "%d", &pid) == 1,
                      "%s: rank %d never started; output:\n%s", desc, r, job_tail(&j, 2500));
        snprintf(line, sizeof line, "rank %d (pid %d) exited with status 3", r, pid);
        ck_assert_msg(job_has(&j, line), "%s: rank %d did not exit with status 3; output:\n%s",
                      desc, r, job_tail(&j, 2500));
    }
    ck_assert_msg(tl_pids_alive(&j, left, sizeof left) == 0, "%s: %s", desc, left);
    ck_assert_msg(job_leftovers(&j, 3.0, left, sizeof left) == 0, "%s: leftovers: %s", desc,
                  left);
    job_free(&j);
}
END_TEST

/* ranks whose shared-memory layouts differ (FMPL_SHM_FIFO set for one):
 * fmpl_init fails on both with a message that says why, nobody hangs */
START_TEST(test_layout_mismatch)
{
    job_t j;
    char cmd[PATH_MAX + 128], left[1024];
    /* on an emulated fabric the same: one rank emulates another machine */
    const char *t = getenv("FMPL_TRANSPORT");
    int tcw = t && strcmp(t, "tcw") == 0;
    int p2 = t && (strcmp(t, "peach2") == 0 || strcmp(t, "tca") == 0);
    int ib = t && strcmp(t, "ib") == 0;
    const char *var = tcw ? "FMPL_TCW_XBAR_NS=1500" : p2 ? "FMPL_TCA_HOP_NS=400"
                    : ib ? "FMPL_IB_SWITCH_NS=400" : "FMPL_SHM_FIFO=512K";
    const char *said = tcw ? "the FMPL_TCW_* settings differ between the ranks"
                     : p2 ? "the FMPL_TCA_* settings differ between the ranks"
                     : ib ? "the FMPL_IB_* settings differ between the ranks"
                          : "FMPL_SHM_FIFO differ between the ranks";
    const char *unset = tcw ? "!FMPL_TCW_XBAR_NS" : p2 ? "!FMPL_TCA_HOP_NS"
                      : ib ? "!FMPL_IB_SWITCH_NS" : "!FMPL_SHM_FIFO";
    snprintf(cmd, sizeof cmd,
             "if [ \"$FMPL_RANK\" = 1 ]; then export %s; fi; exec %s", var,
             tl_path("test/progs/hello"));
    int st = run_cmd(&j, unset, 60, "bin/fmplrun", "-n", "2", "-t", "30", "sh", "-c", cmd, NULL);
    job_log(&j, "layout_mismatch");
    ck_assert_msg(st != 0 && st != TL_HARD_TIMEOUT && st != 124,
                  "%s on rank 1 only: status %d, expected a failure; output:\n%s", var,
                  st, job_tail(&j, 2000));
    ck_assert_msg(job_has(&j, said), "no message naming the setting (%s); output:\n%s", said,
                  job_tail(&j, 2000));
    ck_assert_msg(job_has(&j, "fmpl_init(nidx) returned -3 FMPL_ERR_ARG"),
                  "fmpl_init did not return FMPL_ERR_ARG; output:\n%s", job_tail(&j, 2000));
    ck_assert_msg(j.secs < 20, "took %.1f s", j.secs);
    ck_assert_msg(job_leftovers(&j, 3.0, left, sizeof left) == 0, "leftovers: %s", left);
    job_free(&j);
}
END_TEST

/* a rank that never joins: the others' fmpl_init must fail, not hang */
START_TEST(test_death_before_init)
{
    static const char *codes[] = {"0", "4"};
    job_t j;
    char left[1024], what[128];
    int st, r;
    snprintf(what, sizeof what, "fmplrun -n 3 hello -E -r 1 -e %s", codes[_i]);
    st = run_job(&j, 3, NULL, 60, "hello", "-E", "-r", "1", "-e", codes[_i], NULL);
    job_log(&j, what);
    fprintf(stderr, "  %-50s status %d, %.2f s\n", what, st, j.secs);
    ck_assert_msg(st != 0 && st != 124 && st != TL_HARD_TIMEOUT,
                  "%s: status %d; output:\n%s", what, st, job_tail(&j, 2000));
    ck_assert_msg(j.secs < 10, "%s: took %.1f s", what, j.secs);
    for (r = 0; r < 3; r += 2) {
        char l[64];
        snprintf(l, sizeof l, "hello rank %d: fmpl_init returned FMPL_ERR_PEER", r);
        ck_assert_msg(job_has(&j, l), "%s: missing '%s'; output:\n%s", what, l,
                      job_tail(&j, 2000));
    }
    ck_assert_msg(job_leftovers(&j, 3.0, left, sizeof left) == 0, "leftovers: %s", left);
    job_free(&j);
}
END_TEST

/* a rank that returns 0 without fmpl_finalize has left the job */
START_TEST(test_exit_without_finalize)
{
    job_t j;
    char left[1024];
    int st = run_job(&j, 3, NULL, 60, "hello", "-q", "-r", "2", NULL);
    job_log(&j, "exit_without_finalize");
    ck_assert_msg(st != 0 && st != 124 && st != TL_HARD_TIMEOUT,
                  "fmplrun -n 3 hello -q: status %d; output:\n%s", st, job_tail(&j, 2000));
    ck_assert_msg(j.secs < 10, "took %.1f s", j.secs);
    ck_assert_msg(job_has(&j, "hello rank 0: fmpl_recv from 2 returned FMPL_ERR_PEER") &&
                  job_has(&j, "hello rank 1: fmpl_recv from 2 returned FMPL_ERR_PEER"),
                  "survivors did not get FMPL_ERR_PEER; output:\n%s", job_tail(&j, 2000));
    ck_assert_msg(job_leftovers(&j, 3.0, left, sizeof left) == 0, "leftovers: %s", left);
    job_free(&j);
}
END_TEST

/* ---- settings ------------------------------------------------------------------ */

/* A setting FMPL cannot read whole, or out of range, fails fmpl_init with
 * a line naming it (base/env.c), where it used to be clamped, cut at the
 * first bad byte or ignored: each of these started a job once. */
static const struct set_spec {
    const char *env, *said;
} set_specs[] = {
    {"FMPL_INLINE=2049", "FMPL_INLINE=2049: bytes a message may carry"},
    {"FMPL_INLINE=8bytes", "FMPL_INLINE=8bytes: bytes"},
    {"FMPL_EARLY=no", "FMPL_EARLY=no: 0 (every message waits"},
    {"FMPL_MAX_COMMS=0", "FMPL_MAX_COMMS=0: communicators alive at once, 1 to 4096"},
    {"FMPL_MAX_HALOS=99999", "FMPL_MAX_HALOS=99999: halo exchanges"},
    {"FMPL_PEER_TIMEOUT=-1", "FMPL_PEER_TIMEOUT=-1: seconds a wait"},
    {"FMPL_PEER_TIMEOUT=2s", "FMPL_PEER_TIMEOUT=2s: seconds a wait"},
    {"FMPL_SPLIT_MIN=64KB", "FMPL_SPLIT_MIN=64KB: bytes above which"},
    {"FMPL_PROGRESS_THREAD=yes", "FMPL_PROGRESS_THREAD=yes: 0 (never) or 1"},
    {"FMPL_VERBOSE=2", "FMPL_VERBOSE=2: 0 or 1"},
    {"FMPL_COLL=mpi", "FMPL_COLL=mpi: fmpl (FMPL's own choices) or paper"},
    {"FMPL_TRANSPORT=shm FMPL_SHM_EAGER=-1", "FMPL_SHM_EAGER=-1: bytes above which"},
    {"FMPL_TRANSPORT=shm FMPL_SHM_EAGER=99999999999999999999", "FMPL_SHM_EAGER=9999"},
    {"FMPL_TRANSPORT=shm FMPL_SHM_FIFO=1M5", "FMPL_SHM_FIFO=1M5: bytes of each FIFO"},
    {"FMPL_TRANSPORT=shm FMPL_SHM_CMA=off", "FMPL_SHM_CMA=off: 0 (no cross-memory attach)"},
    {"FMPL_TRANSPORT=ofi FMPL_OFI_PROGRESS=Manual", "FMPL_OFI_PROGRESS=Manual: auto or manual"},
    {"FMPL_TRANSPORT=ofi FMPL_OFI_MR_CACHE=on", "FMPL_OFI_MR_CACHE=on: 0 (close"},
    {"FMPL_TRANSPORT=ofi FMPL_TICKER_MAX_MS=0", "FMPL_TICKER_MAX_MS=0: a whole number of "
                                                "milliseconds from 1 to 10000"},
    {"FMPL_TRANSPORT=tcw FMPL_TCW_MODEL=off", "FMPL_TCW_MODEL=off: 0 (functional emulation"},
    {"FMPL_TRANSPORT=peach2 FMPL_EMU_DIE=2:1", "FMPL_EMU_DIE=2:1: expected RANK:N"},
    {"FMPL_TRANSPORT=tcw FMPL_EMU_DIE=1:0", "FMPL_EMU_DIE=1:0: expected RANK:N"},
};

/* once, under the default transport (the table names its own) */
START_TEST(test_settings)
{
    const char *t = getenv("FMPL_TRANSPORT");
    if (t && *t) {
        fprintf(stderr, "  settings: run under the default transport only\n");
        return;
    }
    tl_run_refused(2, set_specs[_i].env, set_specs[_i].said);
}
END_TEST

static Suite *errors_suite(void)
{
    Suite *s = suite_create("errors");
    TCase *tc;

    tc = tcase_create("unit");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_error_table);
    tcase_add_test(tc, test_error_unknown);
    tcase_add_test(tc, test_version_and_request);
    tcase_add_test(tc, test_wtime_monotonic);
    tcase_add_test(tc, test_before_init);
    suite_add_tcase(s, tc);

    tc = tcase_create("settings");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_settings, 0, (int)(sizeof set_specs / sizeof set_specs[0]));
    suite_add_tcase(s, tc);

    tc = tcase_create("workers");
    tcase_set_timeout(tc, JOB_TIMEOUT + 60);
    tcase_add_loop_test(tc, test_workers, 0,
                        (int)(sizeof worker_specs / sizeof worker_specs[0]));
    suite_add_tcase(s, tc);

    tc = tcase_create("peer_death");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_kill, 0, (int)(sizeof kill_specs / sizeof kill_specs[0]));
    tcase_add_test(tc, test_kill_status);
    tcase_add_test(tc, test_peer_timeout);
    tcase_add_test(tc, test_peer_timeout_coll);
    tcase_add_test(tc, test_peer_timeout_waits);
    tcase_add_test(tc, test_layout_mismatch);
    tcase_add_loop_test(tc, test_death_before_init, 0, 2);
    tcase_add_test(tc, test_exit_without_finalize);
    /* libfabric's, forced: once, in the plain run */
    const char *t = getenv("FMPL_TRANSPORT");
    if (!t || !*t || strcmp(t, "shm") == 0)
        tcase_add_loop_test(tc, test_forget, 0, 2);
    /* the emulated machines' engine (FMPL_EMU_DIE means nothing elsewhere) */
    if (tl_emulated())
        tcase_add_test(tc, test_engine_death);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(errors_suite());
    int nfail;
    srunner_run_all(sr, CK_NORMAL);
    nfail = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nfail == 0 ? 0 : 1;
}
