/*
 * testlib.h - helpers for the Check drivers (test/check_*.c).
 *
 * Paths: FMPL_TOP (exported by test/run_tests.sh) is the project root;
 * without it the root is the parent of the directory holding the test
 * binary (/proc/self/exe), so a driver runs from any working directory.
 *
 * Jobs: every program runs in its own process group with stdin from
 * /dev/null and stdout+stderr captured together.  The driver makes itself
 * a child subreaper, so a rank that outlives fmplrun becomes our child
 * and job_leftovers() finds it.
 *
 *   job_t j;
 *   int st = run_job(&j, 4, "FMPL_SHM_CMA=0", 120, "pingpong", "-m", "1M", NULL);
 *     nprocs > 0: bin/fmplrun -n NPROCS -t TIMEOUT test/progs/PROG args...
 *     nprocs == 0: test/progs/PROG args... without the launcher
 *     returns the exit status (exit code, 128+signal, TL_HARD_TIMEOUT
 *     when the driver had to kill it TIMEOUT+30 s later); j.out holds the
 *     output, j.secs the run time.
 *   run_cmd(&j, env, hard_timeout, "bin/fmplrun", "-n", "2", ..., NULL)
 *     any command (a first word starting with bin/ or test/ is taken from
 *     the project root).
 *   job_start/job_wait: the same in two steps (two jobs at once, signals).
 *   env: "VAR=value VAR2=value2 !VAR3" (!VAR unsets), or NULL.
 */
#ifndef FMPL_TESTLIB_H
#define FMPL_TESTLIB_H

#include <check.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define TL_HARD_TIMEOUT 1000    /* status: killed by the driver */
#define TL_NOT_STARTED  1001    /* status: could not start */
#define TL_MAXSHM 256

#if defined(__GNUC__)
#define TL_UNUSED __attribute__((unused))
#else
#define TL_UNUSED
#endif

typedef struct job {
    pid_t pid;
    int fd;
    char *out;
    size_t len, cap;
    int status;
    int pipe_held;      /* output still open 2 s after the launcher exited */
    double t0, secs;
    char *shm_before[TL_MAXSHM];
    int nshm_before;
} job_t;

static double tl_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void tl_sleep(double sec)
{
    struct timespec ts;
    ts.tv_sec = (time_t)sec;
    ts.tv_nsec = (long)((sec - (double)ts.tv_sec) * 1e9);
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* The project root. */
static TL_UNUSED const char *tl_top(void)
{
    static char top[PATH_MAX];
    const char *e;
    char exe[PATH_MAX];
    ssize_t n;
    char *s;

    if (top[0])
        return top;
    e = getenv("FMPL_TOP");
    if (e && *e) {
        snprintf(top, sizeof top, "%s", e);
        return top;
    }
    n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = 0;
        s = strrchr(exe, '/');          /* .../test/check_x */
        if (s) {
            *s = 0;
            s = strrchr(exe, '/');      /* .../test */
            if (s) {
                *s = 0;
                snprintf(top, sizeof top, "%s", exe[0] ? exe : "/");
                return top;
            }
        }
    }
    snprintf(top, sizeof top, ".");
    return top;
}

/* top/rel in a small ring of static buffers */
static TL_UNUSED const char *tl_path(const char *rel)
{
    static char ring[8][PATH_MAX];
    static int k;
    char *p = ring[k++ % 8];
    snprintf(p, PATH_MAX, "%s/%s", tl_top(), rel);
    return p;
}

static int tl_file_exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0;
}

/* ---- /dev/shm snapshots ---------------------------------------------- */

static int tl_shm_list(char **names, int max)
{
    DIR *d = opendir("/dev/shm");
    struct dirent *e;
    int n = 0;
    if (!d)
        return 0;
    while ((e = readdir(d)) != NULL && n < max) {
        if (strncmp(e->d_name, "fmpl", 4) == 0)
            names[n++] = strdup(e->d_name);
    }
    closedir(d);
    return n;
}

static void tl_shm_free(char **names, int n)
{
    int i;
    for (i = 0; i < n; i++)
        free(names[i]);
}

/* ---- starting and waiting -------------------------------------------- */

static void tl_apply_env(const char *env)
{
    char *copy, *tok, *save = NULL;
    if (!env)
        return;
    copy = strdup(env);
    for (tok = strtok_r(copy, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
        char *eq = strchr(tok, '=');
        if (tok[0] == '!') {
            unsetenv(tok + 1);
        } else if (eq) {
            *eq = 0;
            setenv(tok, eq + 1, 1);
        }
    }
    free(copy);
}

static TL_UNUSED int job_start(job_t *j, const char *env, const char *const argv[])
{
    int p[2];
    pid_t pid;
    char prog[PATH_MAX];

    memset(j, 0, sizeof *j);
    j->fd = -1;
    j->status = TL_NOT_STARTED;
    j->nshm_before = tl_shm_list(j->shm_before, TL_MAXSHM);
    /* orphans of the job become our children: job_leftovers sees them */
    prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    if (strncmp(argv[0], "bin/", 4) == 0 || strncmp(argv[0], "test/", 5) == 0)
        snprintf(prog, sizeof prog, "%s", tl_path(argv[0]));
    else
        snprintf(prog, sizeof prog, "%s", argv[0]);
    if (pipe(p) != 0)
        return -1;
    fflush(stdout);
    fflush(stderr);
    pid = fork();
    if (pid < 0) {
        close(p[0]);
        close(p[1]);
        return -1;
    }
    if (pid == 0) {
        int nul = open("/dev/null", O_RDONLY);
        setpgid(0, 0);
        /* if the driver dies (Check's timeout), the job goes with it */
        prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
        if (nul >= 0) {
            dup2(nul, 0);
            close(nul);
        }
        dup2(p[1], 1);
        dup2(p[1], 2);
        close(p[0]);
        close(p[1]);
        /* never inherit a job identity from whoever runs the tests */
        unsetenv("FMPL_JOBID");
        unsetenv("FMPL_RANK");
        unsetenv("FMPL_SIZE");
        unsetenv("PMIX_NAMESPACE");
        unsetenv("PMIX_RANK");
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        signal(SIGPIPE, SIG_DFL);
        tl_apply_env(env);
        execvp(prog, (char *const *)argv);
        fprintf(stderr, "testlib: cannot exec %s: %s\n", prog, strerror(errno));
        _exit(127);
    }
    setpgid(pid, pid);
    close(p[1]);
    fcntl(p[0], F_SETFL, fcntl(p[0], F_GETFL) | O_NONBLOCK);
    fcntl(p[0], F_SETFD, FD_CLOEXEC);
    j->pid = pid;
    j->fd = p[0];
    j->t0 = tl_now();
    j->status = -1;
    return 0;
}

static void tl_append(job_t *j, const char *b, size_t n)
{
    if (j->len + n + 1 > j->cap) {
        size_t c = j->cap ? j->cap : 4096;
        while (c < j->len + n + 1)
            c *= 2;
        j->out = realloc(j->out, c);
        j->cap = c;
    }
    memcpy(j->out + j->len, b, n);
    j->len += n;
    j->out[j->len] = 0;
}

static int tl_decode(int ws)
{
    if (WIFEXITED(ws))
        return WEXITSTATUS(ws);
    if (WIFSIGNALED(ws))
        return 128 + WTERMSIG(ws);
    return -1;
}

/* Drain output while waiting for the program; after `hard` seconds from
 * its start kill its process group.  Returns the status. */
static TL_UNUSED int job_wait(job_t *j, double hard)
{
    double exited_at = -1;
    int eof = 0, killed = 0;

    if (j->pid <= 0) {
        if (!j->out)
            tl_append(j, "", 0);
        return j->status;
    }
    for (;;) {
        struct pollfd pf = {j->fd, POLLIN, 0};
        int ws;
        if (!eof) {
            int r = poll(&pf, 1, 50);
            if (r > 0) {
                char b[65536];
                ssize_t n = read(j->fd, b, sizeof b);
                if (n > 0)
                    tl_append(j, b, (size_t)n);
                else if (n == 0)
                    eof = 1;
                else if (errno != EAGAIN && errno != EINTR)
                    eof = 1;
            }
        } else {
            tl_sleep(0.01);
        }
        if (exited_at < 0 && waitpid(j->pid, &ws, WNOHANG) == j->pid) {
            j->status = killed ? TL_HARD_TIMEOUT : tl_decode(ws);
            exited_at = tl_now();
            j->secs = exited_at - j->t0;
        }
        if (exited_at >= 0 && (eof || tl_now() - exited_at > 2.0)) {
            if (!eof)
                j->pipe_held = 1;
            break;
        }
        if (!killed && hard > 0 && tl_now() - j->t0 > hard) {
            kill(-j->pid, SIGKILL);
            kill(j->pid, SIGKILL);
            killed = 1;
            tl_append(j, "\n[testlib: hard timeout, killed]\n", 33);
        }
    }
    close(j->fd);
    j->fd = -1;
    j->pid = 0;
    if (!j->out)
        tl_append(j, "", 0);
    return j->status;
}

/* Read output of a running job until `s` has appeared (returns 1) or
 * `timeout` seconds passed or the output closed (returns 0). */
static TL_UNUSED int job_wait_output(job_t *j, const char *s, double timeout)
{
    double t0 = tl_now();
    while (tl_now() - t0 < timeout) {
        struct pollfd pf = {j->fd, POLLIN, 0};
        if (j->out && strstr(j->out, s))
            return 1;
        if (j->fd < 0)
            return 0;
        if (poll(&pf, 1, 50) > 0) {
            char b[65536];
            ssize_t n = read(j->fd, b, sizeof b);
            if (n > 0)
                tl_append(j, b, (size_t)n);
            else if (n == 0)
                return j->out && strstr(j->out, s);
        }
    }
    return j->out && strstr(j->out, s);
}

static TL_UNUSED void job_free(job_t *j)
{
    free(j->out);
    j->out = NULL;
    tl_shm_free(j->shm_before, j->nshm_before);
    j->nshm_before = 0;
    if (j->fd >= 0)
        close(j->fd);
    j->fd = -1;
}

static TL_UNUSED int run_cmdv(job_t *j, const char *env, double hard, const char *const argv[])
{
    if (job_start(j, env, argv) != 0) {
        tl_append(j, "testlib: cannot start\n", 22);
        return j->status = TL_NOT_STARTED;
    }
    return job_wait(j, hard);
}

#define TL_MAXARGS 64

static TL_UNUSED int run_cmd(job_t *j, const char *env, double hard, const char *arg0, ...)
{
    const char *argv[TL_MAXARGS];
    int n = 0;
    va_list ap;
    argv[n++] = arg0;
    va_start(ap, arg0);
    while (n < TL_MAXARGS - 1 && (argv[n] = va_arg(ap, const char *)) != NULL)
        n++;
    va_end(ap);
    argv[n] = NULL;
    return run_cmdv(j, env, hard, argv);
}

/* Build the fmplrun command line for a worker into argv (static storage
 * for the numbers).  Returns the number of words.  prog without a '/' is
 * test/progs/PROG. */
static TL_UNUSED int job_argv(const char **argv, int max, int nprocs, int timeout,
                              const char *flags, const char *prog, const char *const *args)
{
    static char nbuf[8][16], tbuf[8][16], pbuf[8][PATH_MAX];
    static int k;
    int n = 0, slot = k++ % 8;
    char *f, *tok, *save = NULL;

    if (strchr(prog, '/') == NULL)
        snprintf(pbuf[slot], PATH_MAX, "%s", tl_path("test/progs/"));
    else
        pbuf[slot][0] = 0;
    strncat(pbuf[slot], prog, PATH_MAX - strlen(pbuf[slot]) - 1);
    if (nprocs > 0) {
        snprintf(nbuf[slot], sizeof nbuf[slot], "%d", nprocs);
        snprintf(tbuf[slot], sizeof tbuf[slot], "%d", timeout);
        argv[n++] = tl_path("bin/fmplrun");
        argv[n++] = "-n";
        argv[n++] = nbuf[slot];
        if (timeout > 0) {
            argv[n++] = "-t";
            argv[n++] = tbuf[slot];
        }
        if (flags) {   /* extra fmplrun flags, space separated (leaked: tests are short) */
            f = strdup(flags);
            for (tok = strtok_r(f, " ", &save); tok && n < max - 2; tok = strtok_r(NULL, " ", &save))
                argv[n++] = tok;
        }
        /* FMPL_TEST_RANKS_PER_HOST=K: every K ranks a host of their own
         * (test/fakehost.sh), so that the job is routed */
        const char *k = getenv("FMPL_TEST_RANKS_PER_HOST");
        if (k && *k && n < max - 4) {
            argv[n++] = tl_path("test/fakehost.sh");
            argv[n++] = k;
        }
    }
    argv[n++] = pbuf[slot];
    while (args && *args && n < max - 1)
        argv[n++] = *args++;
    argv[n] = NULL;
    return n;
}

static TL_UNUSED int run_jobv(job_t *j, int nprocs, const char *env, int timeout,
                              const char *prog, const char *const *args)
{
    const char *argv[TL_MAXARGS];
    job_argv(argv, TL_MAXARGS, nprocs, timeout, NULL, prog, args);
    return run_cmdv(j, env, timeout > 0 ? timeout + 30 : 600, argv);
}

static TL_UNUSED int run_job(job_t *j, int nprocs, const char *env, int timeout,
                             const char *prog, ...)
{
    const char *args[TL_MAXARGS];
    int n = 0;
    va_list ap;
    va_start(ap, prog);
    while (n < TL_MAXARGS - 1 && (args[n] = va_arg(ap, const char *)) != NULL)
        n++;
    va_end(ap);
    args[n] = NULL;
    return run_jobv(j, nprocs, env, timeout, prog, args);
}

/* The job timeout (fmplrun -t) for worker runs: FMPL_TEST_TIMEOUT seconds
 * if set, else `def`. */
static TL_UNUSED int tl_job_timeout(int def)
{
    const char *e = getenv("FMPL_TEST_TIMEOUT");
    int t = e ? atoi(e) : 0;
    return t > 0 ? t : def;
}

/* "ENV fmplrun -n NP PROG ARGS" (or "PROG ARGS (no launcher)") */
static TL_UNUSED void tl_describe(char *d, size_t n, const char *env, int np, const char *prog,
                                  const char *const *args)
{
    size_t u = (size_t)snprintf(d, n, "%s%s", env ? env : "", env ? " " : "");
    if (np > 0 && u < n)
        u += (size_t)snprintf(d + u, n - u, "fmplrun -n %d ", np);
    if (u < n)
        u += (size_t)snprintf(d + u, n - u, "%s", prog);
    while (args && *args && u < n)
        u += (size_t)snprintf(d + u, n - u, " %s", *args++);
    if (np == 0 && u < n)
        snprintf(d + u, n - u, " (no launcher)");
}

/* ---- after a job ------------------------------------------------------ */

/* The last `n` bytes of the output, for failure messages. */
static TL_UNUSED const char *job_tail(const job_t *j, size_t n)
{
    if (!j->out)
        return "";
    return j->len > n ? j->out + j->len - n : j->out;
}

static TL_UNUSED int job_has(const job_t *j, const char *s)
{
    return j->out && strstr(j->out, s) != NULL;
}

/* Process `pid`'s state letter and parent from /proc; 0 if it is gone. */
static TL_UNUSED int tl_proc_state(int pid, char *state, int *ppid)
{
    char path[64], buf[512], *p;
    FILE *f;
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    f = fopen(path, "r");
    if (!f)
        return 0;
    *state = 0;
    *ppid = 0;
    if (fgets(buf, sizeof buf, f) && (p = strrchr(buf, ')')) != NULL)
        sscanf(p + 2, "%c %d", state, ppid);
    fclose(f);
    return 1;
}

/* Processes left behind: our children (we are a subreaper) other than
 * running jobs, plus /dev/shm/fmpl* entries that appeared since the job
 * started.  Waits up to `grace` seconds for them to go away, then kills
 * and removes what is left and describes it in desc.  Returns the count. */
static TL_UNUSED int job_leftovers(const job_t *j, double grace, char *desc, size_t dlen)
{
    double t0 = tl_now();
    int nproc, nshm;
    size_t used = 0;

    desc[0] = 0;
    for (;;) {
        DIR *d;
        struct dirent *e;
        char *now[TL_MAXSHM];
        int nnow, i, k;

        nproc = nshm = 0;
        used = 0;
        desc[0] = 0;
        /* reap zombies that are ours */
        while (waitpid(-1, NULL, WNOHANG) > 0)
            ;
        d = opendir("/proc");
        while (d && (e = readdir(d)) != NULL) {
            char path[64];
            FILE *f;
            int pid = atoi(e->d_name), ppid = 0;
            char state = 0;
            if (pid <= 0 || !tl_proc_state(pid, &state, &ppid))
                continue;
            if (ppid != getpid() || state == 'Z')
                continue;
            nproc++;
            if (tl_now() - t0 >= grace) {
                char cmd[200] = "";
                snprintf(path, sizeof path, "/proc/%d/cmdline", pid);
                f = fopen(path, "r");
                if (f) {
                    size_t m = fread(cmd, 1, sizeof cmd - 1, f), q;
                    for (q = 0; q < m; q++)
                        if (!cmd[q]) cmd[q] = ' ';
                    cmd[m] = 0;
                    fclose(f);
                }
                used += (size_t)snprintf(desc + used, used < dlen ? dlen - used : 0,
                                         "process %d (%s) still running; ", pid, cmd);
                if (used >= dlen) used = dlen - 1;
                kill(pid, SIGKILL);
                waitpid(pid, NULL, 0);
            }
        }
        if (d)
            closedir(d);
        nnow = tl_shm_list(now, TL_MAXSHM);
        for (i = 0; i < nnow; i++) {
            int old = 0;
            for (k = 0; k < j->nshm_before; k++)
                if (strcmp(now[i], j->shm_before[k]) == 0)
                    old = 1;
            if (old)
                continue;
            nshm++;
            if (tl_now() - t0 >= grace) {
                char path[PATH_MAX];
                used += (size_t)snprintf(desc + used, used < dlen ? dlen - used : 0,
                                         "/dev/shm/%s left behind; ", now[i]);
                if (used >= dlen) used = dlen - 1;
                snprintf(path, sizeof path, "/dev/shm/%s", now[i]);
                unlink(path);
            }
        }
        tl_shm_free(now, nnow);
        if ((nproc == 0 && nshm == 0) || tl_now() - t0 >= grace)
            break;
        tl_sleep(0.1);
    }
    return nproc + nshm;
}

/* Save the output under test/logs/NAME.log (best effort). */
static TL_UNUSED void job_log(const job_t *j, const char *name)
{
    char path[PATH_MAX], n2[512];
    FILE *f;
    size_t i;
    snprintf(n2, sizeof n2, "%s", name);
    for (i = 0; n2[i]; i++)
        if (n2[i] == '/' || n2[i] == ' ' || n2[i] == '=')
            n2[i] = '_';
    mkdir(tl_path("test/logs"), 0755);
    snprintf(path, sizeof path, "%s/%s.log", tl_path("test/logs"), n2);
    f = fopen(path, "w");
    if (!f)
        return;
    fprintf(f, "status %d, %.2f s\n", j->status, j->secs);
    if (j->out)
        fwrite(j->out, 1, j->len, f);
    fclose(f);
}

/* Is a worker built?  (A missing one fails loudly, not silently.) */
static TL_UNUSED int tl_have_prog(const char *name)
{
    char rel[256];
    snprintf(rel, sizeof rel, "test/progs/%s", name);
    return tl_file_exists(tl_path(rel));
}

/* Common assertion: the job exited 0 and printed "OK <name>". */
#define ck_assert_job_ok(j, st, name, desc)                                   \
    do {                                                                      \
        char okl_[128];                                                       \
        snprintf(okl_, sizeof okl_, "OK %s", (name));                         \
        ck_assert_msg((st) == 0 && job_has((j), okl_),                        \
                      "%s: exit status %d after %.1f s%s, output ends:\n%s",  \
                      (desc), (st), (j)->secs,                                \
                      (st) == 0 ? " but no \"OK\" line" : "",                 \
                      job_tail((j), 2500));                                   \
    } while (0)

/* How many of the processes a job printed as "pid P" still run (zombies
 * excepted); their list goes to desc.  Every one must be gone once the
 * job ended, also those a launcher did not start. */
static TL_UNUSED int tl_pids_alive(const job_t *j, char *desc, size_t n)
{
    const char *p = j->out;
    int alive = 0;
    desc[0] = 0;
    while (p && (p = strstr(p, " pid ")) != NULL) {
        int pid = atoi(p + 5), ppid;
        char state;
        p += 5;
        if (pid > 0 && tl_proc_state(pid, &state, &ppid) && state != 'Z') {
            size_t u = strlen(desc);
            snprintf(desc + u, n - u, "pid %d still running; ", pid);
            alive++;
        }
    }
    return alive;
}

/* Run one worker program (np 0: without the launcher) and assert that it
 * printed "OK <prog>", exited 0 and left no process or segment behind. */
/* A job of `np` hello ranks under `env` that fmpl_init must refuse: it
 * fails (not by a time-out), says `said`, ends within 30 s and leaves
 * nothing behind - a bad setting of an emulated fabric, say. */
static TL_UNUSED void tl_run_refused(int np, const char *env, const char *said)
{
    const char *args[] = {NULL};
    job_t j;
    char desc[256], left[1024];
    tl_describe(desc, sizeof desc, env, np, "hello", args);
    int st = run_jobv(&j, np, env, 60, "hello", args);
    job_log(&j, desc);
    fprintf(stderr, "  %-60s status %d, %.2f s\n", desc, st, j.secs);
    ck_assert_msg(st != 0 && st != 124 && st != TL_HARD_TIMEOUT, "%s: status %d, expected a "
                  "failure:\n%s", desc, st, job_tail(&j, 2000));
    ck_assert_msg(job_has(&j, said), "%s: no message \"%s\":\n%s", desc, said,
                  job_tail(&j, 2000));
    ck_assert_msg(j.secs < 30, "%s: took %.1f s", desc, j.secs);
    ck_assert_msg(job_leftovers(&j, 3.0, left, sizeof left) == 0, "%s: leftovers: %s", desc,
                  left);
    job_free(&j);
}

/* FMPL_TRANSPORT names an emulated machine: tcw, peach2, tca or ib.
 * Returns its timing-model variable's name, or NULL. */
static TL_UNUSED const char *tl_emulated(void)
{
    const char *t = getenv("FMPL_TRANSPORT");
    if (!t)
        return NULL;
    if (!strcmp(t, "tcw"))
        return "FMPL_TCW_MODEL";
    if (!strcmp(t, "peach2") || !strcmp(t, "tca"))
        return "FMPL_TCA_MODEL";
    if (!strcmp(t, "ib"))
        return "FMPL_IB_MODEL";
    return NULL;
}

/* The suites run their jobs also with settings for paths some transports
 * do not have: FMPL_SHM_* (cross-memory attach off, other FIFO depths and
 * eager sizes), read by the shared-memory transport only, and the progress
 * thread, which an emulated machine with its timing model ignores
 * (fmpl(7)).  Where every word of `env` is such a setting, the job takes
 * the paths the suite's jobs without it take, only with other arguments
 * (another seed, another size), so it is not run there.  Returns why, or
 * NULL. */
static TL_UNUSED const char *tl_settings_inert(const char *env)
{
    static const char *const no_shm[] = {"tcw", "peach2", "tca", "ib", "ofi", "dcfa"};
    const char *t = getenv("FMPL_TRANSPORT"), *model = tl_emulated();
    const char *m = model ? getenv(model) : NULL;
    int other = 0, timed = model && !(m && !strcmp(m, "0"));
    if (!env || !t)
        return NULL;
    for (size_t i = 0; i < sizeof no_shm / sizeof no_shm[0]; i++)
        other |= strcmp(t, no_shm[i]) == 0;
    int words = 0;
    for (const char *w = env; *w;) {
        while (*w == ' ')
            w++;
        if (!*w)
            break;
        if (!(other && !strncmp(w, "FMPL_SHM_", 9)) &&
            !(timed && !strncmp(w, "FMPL_PROGRESS_THREAD=", 21)))
            return NULL;
        words++;
        while (*w && *w != ' ')
            w++;
    }
    return !words ? NULL : timed ? "its timing model ignores the progress thread and "
                                   "FMPL_SHM_*" : "it reads no FMPL_SHM_* setting";
}

static TL_UNUSED void tl_run_worker(const char *prog, int np, const char *env,
                                    const char *const *args, int timeout)
{
    job_t j;
    char desc[256], left[1024];
    tl_describe(desc, sizeof desc, env, np, prog, args);
    ck_assert_msg(tl_have_prog(prog), "test/progs/%s is not built", prog);
    const char *inert = tl_settings_inert(env);
    if (inert) {
        fprintf(stderr, "  %-60s not run: on FMPL_TRANSPORT=%s %s\n", desc,
                getenv("FMPL_TRANSPORT"), inert);
        return;
    }
    int st = run_jobv(&j, np, env, timeout, prog, args);
    job_log(&j, desc);
    fprintf(stderr, "  %-60s status %d, %.2f s\n", desc, st, j.secs);
    ck_assert_job_ok(&j, st, prog, desc);
    ck_assert_msg(job_leftovers(&j, 3.0, left, sizeof left) == 0, "%s: leftovers: %s", desc,
                  left);
    job_free(&j);
}

#endif /* FMPL_TESTLIB_H */
