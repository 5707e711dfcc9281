/*
 * spawn.c - creating the ranks: the program looked up once, each rank
 * forked and set up (signal mask, limits, stdin, CPU, FMPL_RANK) before it
 * execs.  A child that cannot exec writes why into the exec-error pipe,
 * which the supervisor reads.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fmplrun.h"

/* The program as execvp would find it, checked once here so that a typo
 * is one clear message instead of N failed ranks. */
const char *frun_find_program(const char *name)
{
    const char *path, *p;
    struct stat st;

    if (strchr(name, '/') != NULL) {
        if (stat(name, &st) != 0)
            frun_die(2, "cannot run '%s': %s", name, strerror(errno));
        if (S_ISDIR(st.st_mode))
            frun_die(2, "cannot run '%s': %s", name, strerror(EISDIR));
        if (access(name, X_OK) != 0)
            frun_die(2, "cannot run '%s': %s", name, strerror(errno));
        return name;
    }
    path = getenv("PATH");
    if (path == NULL)
        path = "/usr/local/bin:/usr/bin:/bin";
    for (p = path;; p++) {
        const char *colon = strchrnul(p, ':');
        int dirlen = (int)(colon - p);
        char *cand;

        /* An empty PATH element is the current directory. */
        if (asprintf(&cand, "%.*s%s%s", dirlen, p, dirlen ? "/" : "", name) < 0)
            frun_die(1, "out of memory");
        if (stat(cand, &st) == 0 && S_ISREG(st.st_mode) && access(cand, X_OK) == 0)
            return cand;
        free(cand);
        p = colon;
        if (*p == '\0')
            break;
    }
    frun_die(2, "cannot run '%s': command not found", name);
}

/* --prefix needs two pipes per rank. */
void frun_raise_fd_limit(struct frun_ranks *rk)
{
    rlim_t need = (rlim_t)rk->opt->n * 2 + 32;
    struct rlimit rl;

    getrlimit(RLIMIT_NOFILE, &rk->nofile);
    if (rk->nofile.rlim_cur >= need)
        return;
    rl = rk->nofile;
    rl.rlim_cur = need < rl.rlim_max ? need : rl.rlim_max;
    if (rl.rlim_cur < need || setrlimit(RLIMIT_NOFILE, &rl) != 0)
        frun_die(1, "--prefix with %d ranks needs %llu open files; the limit is %llu",
                 rk->opt->n, (unsigned long long)need, (unsigned long long)rl.rlim_max);
    rk->nofile_raised = 1;
}

/* In the child, between fork and exec: only the rank's own setup. */
static void __attribute__((noreturn)) exec_rank(const struct frun_ranks *rk, int r,
                                                int out_w, int err_w)
{
    char num[16];
    struct frun_exec_error e = { r, 0 };

    /* Die with fmplrun.  If it died before the prctl, our parent is
     * already someone else and the signal would never come. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != rk->self)
        _exit(127);
    sigprocmask(SIG_SETMASK, &rk->child_mask, NULL);
    signal(SIGPIPE, SIG_DFL);
    if (rk->nofile_raised)
        setrlimit(RLIMIT_NOFILE, &rk->nofile);

    if (out_w >= 0) {
        dup2(out_w, STDOUT_FILENO);
        dup2(err_w, STDERR_FILENO);
    }
    if (r > 0) {
        int nul = open("/dev/null", O_RDONLY);
        if (nul > 0) {
            dup2(nul, STDIN_FILENO);
            close(nul);
        }
    }
    if (rk->cpu) {
        /* before exec, so the rank's first page is touched where it runs;
         * a refusal (a cgroup shrunk meanwhile) leaves it unbound */
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(rk->cpu[r], &set);
        sched_setaffinity(0, sizeof set, &set);
    }
    fcntl(rk->job->ctl_fd, F_SETFD, 0);      /* the one fd the rank inherits */
    snprintf(num, sizeof num, "%d", r);
    setenv(FMPL_ENV_RANK, num, 1);
    /* So a peer's dead_rank() can check us before our bootstrap runs. */
    atomic_store(&fmpl_ctl_rank(rk->job->ctl, r)->pid, (int)getpid());

    execv(rk->path, rk->opt->argv);
    e.err = errno;
    /* Nothing else to do if even this fails: the exit status tells. */
    ssize_t ignored = write(rk->exec_pipe[1], &e, sizeof e);
    (void)ignored;
    _exit(127);
}

/* Fork rank r; with --prefix, through two pipes that we read. */
static int start_rank(struct frun_ranks *rk, struct frun_fwd *fwd, int r)
{
    int out[2] = { -1, -1 }, err[2] = { -1, -1 };
    pid_t pid;

    if (rk->opt->prefix && (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0)) {
        fprintf(stderr, "fmplrun: pipe for rank %d: %s\n", r, strerror(errno));
        return -1;
    }
    pid = fork();
    if (pid < 0) {
        fprintf(stderr, "fmplrun: fork for rank %d: %s\n", r, strerror(errno));
        return -1;
    }
    if (pid == 0)
        exec_rank(rk, r, out[1], err[1]);
    rk->pid[r] = pid;
    rk->nalive++;
    if (rk->cpu)
        frun_verbose(rk->opt, "rank %d is pid %d, bound to CPU %d", r, (int)pid, rk->cpu[r]);
    else
        frun_verbose(rk->opt, "rank %d is pid %d", r, (int)pid);
    if (!rk->opt->prefix)
        return 0;

    close(out[1]);
    close(err[1]);
    fcntl(out[0], F_SETFL, O_NONBLOCK);
    fcntl(err[0], F_SETFL, O_NONBLOCK);
    frun_fwd_attach(fwd, r, out[0], err[0]);
    return 0;
}

/* Where each rank runs: with --bind-to core (by default when every rank
 * has a CPU of its own), rank r on the r-th of the CPUs we may use (round
 * robin when they are fewer).  A rank that stays on one core keeps its
 * caches and its mailbox lines warm, and benchmarks against mpirun, which
 * binds the same way, compare like with like; the scheduler would move
 * it, on a machine whose cores differ in speed even from run to run. */
static void place_ranks(struct frun_ranks *rk)
{
    int n = rk->opt->n;
    cpu_set_t mine;
    int cpus[CPU_SETSIZE], ncpu = 0;

    if (rk->opt->bind == FRUN_BIND_NONE || sched_getaffinity(0, sizeof mine, &mine) != 0)
        return;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &mine))
            cpus[ncpu++] = c;
    if (ncpu == 0 || (rk->opt->bind == FRUN_BIND_AUTO && (n < 2 || n > ncpu)))
        return;
    rk->cpu = calloc((size_t)n, sizeof *rk->cpu);
    if (rk->cpu == NULL)
        frun_die(1, "out of memory");
    for (int r = 0; r < n; r++)
        rk->cpu[r] = cpus[r % ncpu];
}

/* Returns 0, or -1 when a rank could not be started: those already
 * started would wait for the others forever, so the caller kills them. */
int frun_start_ranks(struct frun_ranks *rk, struct frun_fwd *fwd)
{
    int rc = 0;

    place_ranks(rk);
    rk->pid = calloc((size_t)rk->opt->n, sizeof *rk->pid);
    if (rk->pid == NULL)
        frun_die(1, "out of memory");
    if (pipe2(rk->exec_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
        frun_die(1, "pipe: %s", strerror(errno));

    for (int r = 0; r < rk->opt->n; r++)
        if (start_rank(rk, fwd, r) != 0) {
            rc = -1;
            break;
        }
    close(rk->exec_pipe[1]);
    return rc;
}
