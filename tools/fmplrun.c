/*
 * fmplrun - start N local processes of a program as one FMPL job.
 *
 *   fmplrun -n 4 [-t SEC] [-p] [-v] ./prog args...
 *
 * The job's only shared state is the job control memory of
 * src/core/launch_ctl.h: a memfd that every rank inherits (FMPL_CTL_FD) and
 * the `local` bootstrap (src/core/boot_local.c) maps.  A memfd has no name,
 * so nothing is left behind however the job ends, even after kill -9.
 *
 * fmplrun forks the ranks, then sits in one poll() loop on a signalfd
 * (SIGCHLD, SIGINT, SIGTERM, SIGHUP) and, with --prefix, on the ranks'
 * output pipes.  When a rank dies or leaves without fmpl_finalize it is
 * recorded in the control memory, where the other ranks' waits see it and
 * fail with FMPL_ERR_PEER; ranks still alive after a grace period get
 * SIGTERM, then SIGKILL.  fmpl_abort kills the job at once.  Every rank
 * dies with fmplrun (PR_SET_PDEATHSIG), and processes the ranks leave
 * behind end with the job (fmplrun is their subreaper).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/launch_ctl.h"
#include "core/parse.h"
#include "fmpl.h"

#define DEFAULT_GRACE_MS 3000     /* dead rank -> SIGTERM to the others */
#define TERM_TO_KILL_MS  2000     /* SIGTERM -> SIGKILL */
#define LEFTOVER_MS      1000     /* a process left behind may end by itself */
#define LINE_BYTES       4096     /* --prefix: longer lines are split */

/* One output pipe of a rank under --prefix: bytes not yet ending a line. */
struct stream {
    int fd;                       /* read end, -1 once closed */
    int out;                      /* where its lines go: 1 or 2 */
    int rank;
    size_t len;
    char buf[LINE_BYTES];
};

/* Exec failure report, written by a child to the exec-error pipe (smaller
 * than PIPE_BUF, so never interleaved). */
struct exec_error {
    int rank;
    int err;
};

enum phase {
    RUNNING,                      /* no failure so far */
    GRACE,                        /* a rank failed; the others may still exit */
    TERMINATING,                  /* SIGTERM sent */
    KILLED                        /* SIGKILL sent */
};

/*
 * The state, owned by concern rather than one global; main() holds one of
 * each and passes them down.  No signal handler needs any of it: signals
 * are read from a signalfd in the poll loop.
 */

/* The command line and FMPL_KILL_GRACE: written by parse_args and
 * grace_from_env, read-only afterwards. */
struct opts {
    int n;                        /* ranks */
    double timeout_s;             /* 0: none */
    int prefix;
    int verbose;
    int bind;                     /* --bind-to: BIND_AUTO, BIND_CORE, BIND_NONE */
    char **argv;                  /* program and its arguments */
    long long grace_ms;
};

/* What fmplrun shares with the ranks: the job id and the control memory
 * (src/core/launch_ctl.h). */
struct job {
    char jobid[FMPL_BOOT_JOBID_MAX];
    struct fmpl_ctl *ctl;
    int ctl_fd;
};

/* The ranks' processes: start_ranks forks them and fills pid[]; the
 * supervisor clears a rank's pid and counts it out once it is reaped. */
struct ranks {
    const struct opts *opt;
    const struct job *job;
    const char *path;             /* program resolved against PATH */
    pid_t self;                   /* fmplrun, the ranks' parent */
    sigset_t child_mask;          /* the signal mask we were started with */
    struct rlimit nofile;         /* as inherited, restored in the ranks */
    int nofile_raised;
    int exec_pipe[2];             /* a child that cannot exec says so here */
    int *cpu;                     /* per rank: the CPU it is bound to, or NULL */
    pid_t *pid;                   /* per rank; 0 when reaped or never started */
    int nalive;
};

/* --prefix: the ranks' output pipes, read in the supervisor's poll loop. */
struct fwd {
    int nstreams;                 /* 2 per rank under --prefix, else 0 */
    struct stream *streams;
    struct pollfd *pfds;          /* streams[i]'s entry in the poll set */
    int out_gone[3];              /* [1], [2]: our stdout, stderr reader left */
};

/* Watching the ranks: their exits, signals to fmplrun, the deadlines. */
struct sup {
    const struct opts *opt;
    const struct job *job;
    struct ranks *ranks;
    struct fwd *fwd;
    int sigfd;
    struct pollfd *pfds;          /* signalfd, then one per stream */
    char *reported;               /* per rank: its failure was already told */
    enum phase phase;
    long long timeout_at, grace_at, kill_at;   /* monotonic ms; 0: not armed */
    int status;                   /* first non-zero exit of a rank */
    int exec_failed;
    int aborted;
    int end_code;                 /* timeout, signal, abort: -1 if none */
    int signalled;
};

enum { BIND_AUTO, BIND_CORE, BIND_NONE };

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void verbose(const struct opts *opt, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void verbose(const struct opts *opt, const char *fmt, ...)
{
    va_list ap;

    if (!opt->verbose)
        return;
    va_start(ap, fmt);
    fputs("fmplrun: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static void die(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));
static void die(int code, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    fputs("fmplrun: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(code);
}

static void usage(void)
{
    printf(
"Usage: fmplrun -n N [options] [--] program [args...]\n"
"Start N processes of program on this machine as one FMPL job.\n"
"\n"
"Options:\n"
"  -n, -np N           number of processes, 1 to %d (default 1)\n"
"  -t, --timeout SEC   kill the job after SEC seconds (exit status 124)\n"
"  -p, --prefix        prefix every output line of rank R with \"[R] \"\n"
"  -v, --verbose       report the job id, the pids, the CPUs and every exit\n"
"      --bind-to core|none  bind rank R to the R-th CPU fmplrun may run on,\n"
"                      or leave the ranks to the scheduler (default: core\n"
"                      when 2 <= N <= those CPUs, else none)\n"
"  -h, --help          print this help\n"
"  -V, --version       print fmplrun's version (its FMPL's) and exit\n"
"\n"
"Rank 0 reads fmplrun's standard input, the others read /dev/null.\n"
"When a rank dies, or exits without fmpl_finalize, the other ranks' FMPL\n"
"calls fail with FMPL_ERR_PEER; ranks still running after a grace period\n"
"get SIGTERM, and SIGKILL 2 s later.  fmpl_abort kills the job at once.\n"
"SIGINT or SIGTERM to fmplrun is passed on as SIGTERM (a second one kills).\n"
"Processes the ranks leave behind are killed when the job ends.\n"
"\n"
"Exit status: the first non-zero exit status of a rank (128+S for a rank\n"
"killed by signal S); the code given to fmpl_abort; 124 after --timeout;\n"
"130 or 143 after SIGINT or SIGTERM; 2 for a usage error or a program\n"
"that cannot be executed; 0 when every rank exits with 0.\n"
"\n"
"Environment:\n"
"  FMPL_KILL_GRACE=SEC  grace period before the survivors of a failed job\n"
"                       are terminated (default 3)\n"
"Set for every rank: FMPL_JOBID, FMPL_RANK, FMPL_SIZE, FMPL_CTL_FD.\n"
"Removed for every rank: PMIX_* and OMPI_*, so a job started inside\n"
"mpirun is a local job.  The library's own variables (FMPL_PROGRESS_THREAD,\n"
"FMPL_TRANSPORT, FMPL_SHM_CMA, FMPL_SHM_EAGER, FMPL_PEER_TIMEOUT,\n"
"FMPL_VERBOSE; see fmpl.h) pass through.\n",
            FMPL_CTL_MAX_SIZE);
}

/* The parsers' results: go on with the job, or exit with this status. */
#define RUN_JOB (-1)

/* Returns 2, the status a usage error exits with. */
static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    fputs("fmplrun: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputs("\nTry 'fmplrun --help'.\n", stderr);
    va_end(ap);
    return 2;
}

/* The command line into *opt: RUN_JOB, or the status to exit with (0
 * after --help or --version, 2 after a usage error, its message printed).
 * It does not exit itself, so the fuzz harness can call it. */
static int parse_args(struct opts *opt, int argc, char **argv)
{
    int i;

    *opt = (struct opts){ .n = 1, .bind = BIND_AUTO };

    for (i = 1; i < argc && argv[i][0] == '-'; i++) {
        const char *a = argv[i], *val;

        if (strcmp(a, "--") == 0) {
            i++;
            break;
        }
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage();
            return 0;
        } else if (strcmp(a, "-V") == 0 || strcmp(a, "--version") == 0) {
            printf("fmplrun (FMPL) %s\n", FMPL_VERSION_STRING);
            return 0;
        } else if (strcmp(a, "-p") == 0 || strcmp(a, "--prefix") == 0) {
            opt->prefix = 1;
        } else if (strcmp(a, "-v") == 0 || strcmp(a, "--verbose") == 0) {
            opt->verbose = 1;
        } else if (strcmp(a, "-n") == 0 || strcmp(a, "-np") == 0 ||
                   strcmp(a, "--np") == 0 || (a[1] == 'n' && isdigit((unsigned char)a[2]))) {
            long n;

            val = isdigit((unsigned char)a[2]) ? a + 2 : argv[++i];
            if (val == NULL)
                return usage_error("%s needs a number of processes", a);
            if (fmpl_parse_long(val, 1, FMPL_CTL_MAX_SIZE, &n) != 0)
                return usage_error("the number of processes must be 1 to %d, not '%s'",
                                   FMPL_CTL_MAX_SIZE, val);
            opt->n = (int)n;
        } else if (strcmp(a, "-t") == 0 || strcmp(a, "--timeout") == 0 ||
                   strncmp(a, "--timeout=", 10) == 0) {
            val = a[1] == '-' && a[9] == '=' ? a + 10 : argv[++i];
            if (val == NULL)
                return usage_error("%s needs a number of seconds", a);
            if (fmpl_parse_double(val, 0, 1e9, &opt->timeout_s) != 0 || !(opt->timeout_s > 0))
                return usage_error("the timeout must be a number of seconds > 0, not '%s'", val);
        } else if (strcmp(a, "--bind-to") == 0 || strncmp(a, "--bind-to=", 10) == 0) {
            val = a[9] == '=' ? a + 10 : argv[++i];
            if (val == NULL)
                return usage_error("%s needs 'core' or 'none'", a);
            if (strcmp(val, "core") == 0)
                opt->bind = BIND_CORE;
            else if (strcmp(val, "none") == 0)
                opt->bind = BIND_NONE;
            else
                return usage_error("--bind-to takes 'core' or 'none', not '%s'", val);
        } else {
            return usage_error("unknown option '%s'", a);
        }
    }
    if (i >= argc)
        return usage_error("no program to run");
    opt->argv = argv + i;
    return RUN_JOB;
}

/* The program as execvp would find it, checked once here so that a typo
 * is one clear message instead of N failed ranks. */
static const char *find_program(const char *name)
{
    const char *path, *p;
    struct stat st;

    if (strchr(name, '/') != NULL) {
        if (stat(name, &st) != 0)
            die(2, "cannot run '%s': %s", name, strerror(errno));
        if (S_ISDIR(st.st_mode))
            die(2, "cannot run '%s': %s", name, strerror(EISDIR));
        if (access(name, X_OK) != 0)
            die(2, "cannot run '%s': %s", name, strerror(errno));
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
            die(1, "out of memory");
        if (stat(cand, &st) == 0 && S_ISREG(st.st_mode) && access(cand, X_OK) == 0)
            return cand;
        free(cand);
        p = colon;
        if (*p == '\0')
            break;
    }
    die(2, "cannot run '%s': command not found", name);
}

/* "j<pid>-<8 random hex digits>": unique per job, fine in file names. */
static void make_jobid(struct job *job)
{
    uint32_t rnd;

    if (getrandom(&rnd, sizeof rnd, GRND_NONBLOCK) != (ssize_t)sizeof rnd)
        rnd = (uint32_t)now_ms() * 2654435761u ^ (uint32_t)getpid();
    snprintf(job->jobid, sizeof job->jobid, "j%d-%08x", (int)getpid(), rnd);
}

static void create_ctl(struct job *job, int n)
{
    char name[32 + FMPL_BOOT_JOBID_MAX];
    size_t bytes = fmpl_ctl_bytes((uint32_t)n);
    struct fmpl_ctl *c;

    /* The name only shows in /proc/PID/fd, for whoever debugs a job. */
    snprintf(name, sizeof name, "fmpl-ctl-%s", job->jobid);
    job->ctl_fd = memfd_create(name, MFD_CLOEXEC);
    if (job->ctl_fd < 0 || fchmod(job->ctl_fd, 0600) != 0 ||
        ftruncate(job->ctl_fd, (off_t)bytes) != 0)
        die(1, "cannot create the job control memory: %s", strerror(errno));
    c = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, job->ctl_fd, 0);
    if (c == MAP_FAILED)
        die(1, "cannot map the job control memory: %s", strerror(errno));
    c->magic = FMPL_CTL_MAGIC;
    c->version = FMPL_CTL_VERSION;
    c->size = (uint32_t)n;
    c->bytes = bytes;
    snprintf(c->jobid, sizeof c->jobid, "%s", job->jobid);
    atomic_store(&c->abort_rank, -1);
    atomic_store(&c->first_dead, -1);
    job->ctl = c;
}

/* The environment every rank shares; FMPL_RANK is set in each child. */
static void setup_env(const struct job *job, int n)
{
    extern char **environ;
    char num[16];

    /* unsetenv changes environ, so rescan after each removal. */
    for (char **e = environ; *e != NULL;) {
        if (strncmp(*e, "PMIX_", 5) == 0 || strncmp(*e, "OMPI_", 5) == 0) {
            char *name = strndup(*e, strcspn(*e, "="));
            if (name == NULL)
                die(1, "out of memory");
            unsetenv(name);
            free(name);
            e = environ;
        } else {
            e++;
        }
    }
    snprintf(num, sizeof num, "%d", n);
    setenv(FMPL_ENV_SIZE, num, 1);
    snprintf(num, sizeof num, "%d", job->ctl_fd);
    setenv(FMPL_ENV_CTL_FD, num, 1);
    setenv(FMPL_ENV_JOBID, job->jobid, 1);
}

/* FMPL_KILL_GRACE into opt->grace_ms: RUN_JOB, or 2 after a usage error. */
static int grace_from_env(struct opts *opt)
{
    const char *s = getenv("FMPL_KILL_GRACE");
    double v;

    opt->grace_ms = DEFAULT_GRACE_MS;
    if (s == NULL || *s == '\0')
        return RUN_JOB;
    if (fmpl_parse_double(s, 0, 1e6, &v) != 0)
        return usage_error("FMPL_KILL_GRACE=%s: seconds between a rank's failure and SIGTERM "
                           "to the others, 0 to 1e6", s);
    opt->grace_ms = (long long)(v * 1000 + 0.5);
    return RUN_JOB;
}

/* --prefix needs two pipes per rank. */
static void raise_fd_limit(struct ranks *rk)
{
    rlim_t need = (rlim_t)rk->opt->n * 2 + 32;
    struct rlimit rl;

    getrlimit(RLIMIT_NOFILE, &rk->nofile);
    if (rk->nofile.rlim_cur >= need)
        return;
    rl = rk->nofile;
    rl.rlim_cur = need < rl.rlim_max ? need : rl.rlim_max;
    if (rl.rlim_cur < need || setrlimit(RLIMIT_NOFILE, &rl) != 0)
        die(1, "--prefix with %d ranks needs %llu open files; the limit is %llu",
            rk->opt->n, (unsigned long long)need, (unsigned long long)rl.rlim_max);
    rk->nofile_raised = 1;
}

/* In the child, between fork and exec: only the rank's own setup. */
static void __attribute__((noreturn)) exec_rank(const struct ranks *rk, int r, int out_w,
                                                int err_w)
{
    char num[16];
    struct exec_error e = { r, 0 };

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

static void signal_all(const struct ranks *rk, int sig, int except)
{
    for (int r = 0; r < rk->opt->n; r++)
        if (rk->pid[r] > 0 && r != except)
            kill(rk->pid[r], sig);
}

/* SIGTERM to every rank, SIGKILL to those still there 2 s later. */
static void terminate(struct sup *sup)
{
    int nalive = sup->ranks->nalive;

    if (sup->phase >= TERMINATING)
        return;
    verbose(sup->opt, "sending SIGTERM to %d rank%s", nalive, nalive > 1 ? "s" : "");
    sup->phase = TERMINATING;
    sup->grace_at = 0;
    sup->kill_at = now_ms() + TERM_TO_KILL_MS;
    signal_all(sup->ranks, SIGTERM, -1);
}

static void kill_all(struct sup *sup, int except)
{
    sup->phase = KILLED;
    sup->grace_at = 0;
    signal_all(sup->ranks, SIGKILL, except);
}

static void attach_streams(struct fwd *fwd, int r, int out, int err);

/* Fork rank r; with --prefix, through two pipes that we read. */
static int start_rank(struct ranks *rk, struct fwd *fwd, int r)
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
        verbose(rk->opt, "rank %d is pid %d, bound to CPU %d", r, (int)pid, rk->cpu[r]);
    else
        verbose(rk->opt, "rank %d is pid %d", r, (int)pid);
    if (!rk->opt->prefix)
        return 0;

    close(out[1]);
    close(err[1]);
    fcntl(out[0], F_SETFL, O_NONBLOCK);
    fcntl(err[0], F_SETFL, O_NONBLOCK);
    attach_streams(fwd, r, out[0], err[0]);
    return 0;
}

/* Where each rank runs: with --bind-to core (by default when every rank
 * has a CPU of its own), rank r on the r-th of the CPUs we may use (round
 * robin when they are fewer).  A rank that stays on one core keeps its
 * caches and its mailbox lines warm, and benchmarks against mpirun, which
 * binds the same way, compare like with like; the scheduler would move
 * it, on a machine whose cores differ in speed even from run to run. */
static void place_ranks(struct ranks *rk)
{
    int n = rk->opt->n;
    cpu_set_t mine;
    int cpus[CPU_SETSIZE], ncpu = 0;

    if (rk->opt->bind == BIND_NONE || sched_getaffinity(0, sizeof mine, &mine) != 0)
        return;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &mine))
            cpus[ncpu++] = c;
    if (ncpu == 0 || (rk->opt->bind == BIND_AUTO && (n < 2 || n > ncpu)))
        return;
    rk->cpu = calloc((size_t)n, sizeof *rk->cpu);
    if (rk->cpu == NULL)
        die(1, "out of memory");
    for (int r = 0; r < n; r++)
        rk->cpu[r] = cpus[r % ncpu];
}

/* Returns 0, or -1 when a rank could not be started: those already
 * started would wait for the others forever, so the caller kills them. */
static int start_ranks(struct ranks *rk, struct fwd *fwd)
{
    int rc = 0;

    place_ranks(rk);
    rk->pid = calloc((size_t)rk->opt->n, sizeof *rk->pid);
    if (rk->pid == NULL)
        die(1, "out of memory");
    if (pipe2(rk->exec_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
        die(1, "pipe: %s", strerror(errno));

    for (int r = 0; r < rk->opt->n; r++)
        if (start_rank(rk, fwd, r) != 0) {
            rc = -1;
            break;
        }
    close(rk->exec_pipe[1]);
    return rc;
}

/* ---- output forwarding (--prefix) ---------------------------------- */

static void write_all(struct fwd *fwd, int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);

        if (w < 0 && errno == EAGAIN) {
            /* Our stdout was handed to us non-blocking. */
            struct pollfd pf = { .fd = fd, .events = POLLOUT };
            poll(&pf, 1, -1);
            continue;
        }
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (w < 0 && errno == EPIPE)    /* SIGPIPE is ignored */
                fwd->out_gone[fd] = 1;
            return;
        }
        p += w;
        n -= (size_t)w;
    }
}

/* One write per line, so lines of different ranks never mix. */
static void emit_line(struct fwd *fwd, const struct stream *s, const char *p, size_t n)
{
    char line[24 + LINE_BYTES + 1];
    int k = snprintf(line, sizeof line, "[%d] ", s->rank);

    memcpy(line + k, p, n);
    if (n == 0 || p[n - 1] != '\n')
        line[k + n++] = '\n';
    write_all(fwd, s->out, line, (size_t)k + n);
}

/* Write the complete lines in s->buf; with `all`, the rest too. */
static void emit_lines(struct fwd *fwd, struct stream *s, int all)
{
    size_t start = 0;
    char *nl;

    while ((nl = memchr(s->buf + start, '\n', s->len - start)) != NULL) {
        emit_line(fwd, s, s->buf + start, (size_t)(nl - s->buf) + 1 - start);
        start = (size_t)(nl - s->buf) + 1;
    }
    if (start < s->len && (all || (start == 0 && s->len == sizeof s->buf))) {
        emit_line(fwd, s, s->buf + start, s->len - start);
        start = s->len;
    }
    memmove(s->buf, s->buf + start, s->len - start);
    s->len -= start;
}

/* Read what is there; returns 0 when nothing more can come now. */
static int read_stream(struct fwd *fwd, struct stream *s, struct pollfd *pf)
{
    ssize_t n = read(s->fd, s->buf + s->len, sizeof s->buf - s->len);

    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return 0;
    if (n > 0) {
        s->len += (size_t)n;
        emit_lines(fwd, s, 0);
        if (!fwd->out_gone[s->out])
            return 1;
        /* Nobody reads what we forward any more: close the pipe, so that
         * the rank gets SIGPIPE as it would without --prefix. */
    } else {
        emit_lines(fwd, s, 1);
    }
    close(s->fd);
    s->fd = pf->fd = -1;
    return 0;
}

/* After the last rank is reaped: what its pipes still hold.  A process
 * the program left behind may keep a pipe open; we do not wait for it. */
static void drain_streams(struct fwd *fwd)
{
    for (int i = 0; i < fwd->nstreams; i++) {
        struct stream *s = &fwd->streams[i];

        if (s->fd < 0)
            continue;
        while (read_stream(fwd, s, &fwd->pfds[i]))
            ;
        if (s->fd >= 0) {
            emit_lines(fwd, s, 1);
            close(s->fd);
            s->fd = fwd->pfds[i].fd = -1;
        }
    }
}

/* A rank is gone: its last words, before our report of its end. */
static void drain_rank(struct fwd *fwd, int r)
{
    for (int i = 2 * r; i < 2 * r + 2 && i < fwd->nstreams; i++)
        while (fwd->streams[i].fd >= 0 && read_stream(fwd, &fwd->streams[i], &fwd->pfds[i]))
            ;
}

/* What poll() found on the pipes. */
static void read_streams(struct fwd *fwd)
{
    for (int i = 0; i < fwd->nstreams; i++)
        if (fwd->pfds[i].fd >= 0 && fwd->pfds[i].revents)
            read_stream(fwd, &fwd->streams[i], &fwd->pfds[i]);
}

/* Under --prefix, 2 streams per rank, polled at pfds[0 .. nstreams-1]. */
static void init_streams(struct fwd *fwd, int nstreams, struct pollfd *pfds)
{
    fwd->streams = calloc((size_t)nstreams, sizeof *fwd->streams);
    if (fwd->streams == NULL)
        die(1, "out of memory");
    for (int i = 0; i < nstreams; i++)
        fwd->streams[i].fd = -1;
    fwd->nstreams = nstreams;
    fwd->pfds = pfds;
}

/* Rank r's stdout and stderr pipes (read ends, non-blocking). */
static void attach_streams(struct fwd *fwd, int r, int out, int err)
{
    struct stream *s = &fwd->streams[2 * r];

    s[0].fd = out;
    s[0].out = STDOUT_FILENO;
    s[1].fd = err;
    s[1].out = STDERR_FILENO;
    s[0].rank = s[1].rank = r;
    fwd->pfds[2 * r] = (struct pollfd){ .fd = out, .events = POLLIN };
    fwd->pfds[2 * r + 1] = (struct pollfd){ .fd = err, .events = POLLIN };
}

/* ---- rank exits ---------------------------------------------------- */

static void read_exec_errors(struct sup *sup)
{
    struct exec_error e;

    while (read(sup->ranks->exec_pipe[0], &e, sizeof e) == (ssize_t)sizeof e) {
        if (e.rank < 0 || e.rank >= sup->opt->n)
            continue;
        fprintf(stderr, "fmplrun: rank %d: cannot execute '%s': %s\n",
                e.rank, sup->ranks->path, strerror(e.err));
        sup->reported[e.rank] = 1;
        sup->exec_failed = 1;
    }
}

static void check_abort(struct sup *sup)
{
    struct fmpl_ctl *ctl = sup->job->ctl;
    int code, rank;

    if (sup->aborted || !atomic_load_explicit(&ctl->abort_flag, memory_order_acquire))
        return;
    sup->aborted = 1;
    code = atomic_load(&ctl->abort_code);
    rank = atomic_load(&ctl->abort_rank);
    fprintf(stderr, "fmplrun: rank %d called fmpl_abort(%d); killing the job\n", rank, code);
    if (sup->end_code < 0) {
        /* What the aborting rank exits with (an exit code is 8 bits). */
        sup->end_code = (code != 0 ? code : 1) & 0xff;
        if (sup->end_code == 0)
            sup->end_code = 1;
    }
    if (rank >= 0 && rank < sup->opt->n)
        sup->reported[rank] = 1;
    /* The aborting rank is flushing its output and exits by itself; the
     * kill deadline covers it should it hang. */
    kill_all(sup, rank);
    sup->kill_at = now_ms() + TERM_TO_KILL_MS;
}

static void report_exit(int r, pid_t pid, int ws)
{
    if (WIFSIGNALED(ws)) {
        const char *name = sigabbrev_np(WTERMSIG(ws));
        fprintf(stderr, "fmplrun: rank %d (pid %d) killed by signal %d (SIG%s)%s\n",
                r, (int)pid, WTERMSIG(ws), name ? name : "?",
                WCOREDUMP(ws) ? ", core dumped" : "");
    } else if (WEXITSTATUS(ws) != 0) {
        fprintf(stderr, "fmplrun: rank %d (pid %d) exited with status %d\n",
                r, (int)pid, WEXITSTATUS(ws));
    } else {
        fprintf(stderr, "fmplrun: rank %d (pid %d) exited with status 0 without"
                " calling fmpl_finalize\n", r, (int)pid);
    }
}

static void rank_exited(struct sup *sup, int r, int ws)
{
    struct fmpl_ctl_rank *cr = fmpl_ctl_rank(sup->job->ctl, r);
    int code = WIFSIGNALED(ws) ? 128 + WTERMSIG(ws) : WEXITSTATUS(ws);
    int state = atomic_load(&cr->state);
    pid_t pid = sup->ranks->pid[r];
    int none = -1;

    sup->ranks->pid[r] = 0;
    sup->ranks->nalive--;
    drain_rank(sup->fwd, r);
    read_exec_errors(sup);
    check_abort(sup);
    atomic_store(&cr->status, code);
    if (code == 0 && state == FMPL_CTL_FINALIZED) {
        verbose(sup->opt, "rank %d (pid %d) finished", r, (int)pid);
        return;
    }
    /* Whatever the reason, this rank will never reach another fence. */
    atomic_store(&cr->state, FMPL_CTL_DEAD);
    atomic_compare_exchange_strong(&sup->job->ctl->first_dead, &none, r);
    if (code != 0 && sup->status == 0)
        sup->status = code;

    /* A program that never opened the bootstrap (hostname, a script)
     * exiting with 0 is no failure; a peer waiting for it gets
     * FMPL_ERR_PEER from the first_dead we just set. */
    if (code == 0 && state == FMPL_CTL_NONE) {
        verbose(sup->opt, "rank %d (pid %d) exited with status 0 (no FMPL)", r, (int)pid);
        return;
    }
    /* Once we are killing ranks, their deaths are no news. */
    if (!sup->reported[r] && (sup->phase <= GRACE || sup->opt->verbose))
        report_exit(r, pid, ws);
    sup->reported[r] = 1;
    if (sup->phase == RUNNING) {
        sup->phase = GRACE;
        sup->grace_at = now_ms() + sup->opt->grace_ms;
    }
}

static void reap(struct sup *sup)
{
    pid_t pid;
    int ws;

    while ((pid = waitpid(-1, &ws, WNOHANG)) > 0)
        for (int r = 0; r < sup->opt->n; r++)
            if (sup->ranks->pid[r] == pid) {
                rank_exited(sup, r, ws);
                break;
            }
}

static void handle_signals(struct sup *sup)
{
    struct signalfd_siginfo si;

    while (read(sup->sigfd, &si, sizeof si) == (ssize_t)sizeof si) {
        int sig = (int)si.ssi_signo;

        if (sig == SIGCHLD) {
            reap(sup);
            continue;
        }
        if (sup->signalled++ > 0 || sup->phase >= TERMINATING) {
            /* Asked twice, or already terminating: no more patience. */
            verbose(sup->opt, "SIG%s again: sending SIGKILL", sigabbrev_np(sig));
            kill_all(sup, -1);
            sup->kill_at = 0;
        } else {
            fprintf(stderr, "fmplrun: SIG%s received, terminating the job\n",
                    sigabbrev_np(sig));
            terminate(sup);
        }
        if (sup->end_code < 0)
            sup->end_code = 128 + sig;
    }
}

/* The survivors of a failure did not all end within FMPL_KILL_GRACE: say
 * who, since ranks terminated from now on are not reported one by one
 * (a survivor that never printed its error was stuck, or slow). */
static void grace_over(const struct sup *sup)
{
    char list[256];
    size_t len = 0;
    int shown = 0;

    list[0] = 0;
    for (int r = 0; r < sup->opt->n && len < sizeof list - 16; r++) {
        if (sup->ranks->pid[r] <= 0)
            continue;
        if (shown++ == 8) {
            len += (size_t)snprintf(list + len, sizeof list - len, ", ...");
            break;
        }
        len += (size_t)snprintf(list + len, sizeof list - len, "%s%d", shown > 1 ? ", " : "",
                                r);
    }
    fprintf(stderr, "fmplrun: rank%s %s still running %g s after rank %d failed "
            "(FMPL_KILL_GRACE): terminating the job\n", sup->ranks->nalive > 1 ? "s" : "",
            list, (double)sup->opt->grace_ms / 1000, atomic_load(&sup->job->ctl->first_dead));
}

static void check_deadlines(struct sup *sup)
{
    long long t = now_ms();
    int nalive;

    if (sup->timeout_at && t >= sup->timeout_at) {
        sup->timeout_at = 0;
        fprintf(stderr, "fmplrun: timeout after %g s\n", sup->opt->timeout_s);
        if (sup->end_code < 0)
            sup->end_code = 124;
        terminate(sup);
    }
    if (sup->grace_at && t >= sup->grace_at) {
        sup->grace_at = 0;
        grace_over(sup);
        terminate(sup);
    }
    if (sup->kill_at && t >= sup->kill_at) {
        sup->kill_at = 0;
        nalive = sup->ranks->nalive;
        verbose(sup->opt, "sending SIGKILL to %d rank%s", nalive, nalive > 1 ? "s" : "");
        kill_all(sup, -1);
    }
}

static int poll_timeout(const struct sup *sup)
{
    long long next = 0, t = now_ms();
    long long at[] = { sup->timeout_at, sup->grace_at, sup->kill_at };

    for (size_t i = 0; i < sizeof at / sizeof at[0]; i++)
        if (at[i] && (next == 0 || at[i] < next))
            next = at[i];
    if (next == 0)
        return -1;
    return next <= t ? 0 : (int)(next - t < INT_MAX ? next - t : INT_MAX);
}

/* Our children, found in /proc (their ppid), get `sig`; returns how many
 * there were, zombies included. */
static int signal_children(pid_t self, int sig)
{
    struct dirent *e;
    DIR *d = opendir("/proc");
    int n = 0;

    if (d == NULL)
        return 0;
    while ((e = readdir(d)) != NULL) {
        char path[288], buf[512], *paren, st;
        ssize_t len;
        int fd, ppid;

        if (!isdigit((unsigned char)e->d_name[0]))
            continue;
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
            continue;
        len = read(fd, buf, sizeof buf - 1);
        close(fd);
        if (len <= 0)
            continue;
        buf[len] = '\0';
        /* "pid (comm) state ppid ...": comm may hold spaces and parens. */
        paren = strrchr(buf, ')');
        if (paren == NULL || sscanf(paren + 1, " %c %d", &st, &ppid) != 2 ||
            ppid != (int)self)
            continue;
        kill((pid_t)atoi(e->d_name), sig);
        n++;
    }
    closedir(d);
    return n;
}

/*
 * Processes the ranks started and left behind (a wrapper script's program
 * after the script was killed, something started in the background) were
 * handed to us as their subreaper.  They are part of the job, so they end
 * with it, as under Slurm; a process stuck in the kernel is given up on.
 * One that is ending by itself when the last rank has gone (the verbs
 * transport's host agent, which ends when its last rank has) gets
 * LEFTOVER_MS to do so.
 */
static void kill_leftovers(pid_t self)
{
    long long give_up = now_ms() + TERM_TO_KILL_MS, own = now_ms() + LEFTOVER_MS;
    int n, first;

    do {
        while (waitpid(-1, NULL, WNOHANG) > 0)
            ;   /* those that already exited are not news */
    } while (signal_children(self, 0) > 0 && now_ms() < own && usleep(5000) == 0);
    first = signal_children(self, SIGKILL);

    if (first > 0)
        fprintf(stderr, "fmplrun: killing %d process%s left behind by the job\n",
                first, first > 1 ? "es" : "");
    for (n = first; n > 0 && now_ms() < give_up; n = signal_children(self, SIGKILL)) {
        while (waitpid(-1, NULL, WNOHANG) > 0)
            ;
        usleep(1000);
    }
}

/* Signals arrive through the signalfd only, so the loop sees a child's
 * exit, or Ctrl-C, between two polls without races.  *child_mask gets the
 * mask we were started with, which the ranks get back. */
static void sup_init(struct sup *sup, sigset_t *child_mask)
{
    int n = sup->opt->n;
    sigset_t mask;

    sup->end_code = -1;
    sigemptyset(&mask);
    sigaddset(&mask, SIGCHLD);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGHUP);
    sigprocmask(SIG_BLOCK, &mask, child_mask);
    sup->sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
    if (sup->sigfd < 0)
        die(1, "signalfd: %s", strerror(errno));
    signal(SIGPIPE, SIG_IGN);

    sup->pfds = calloc(1 + 2 * (size_t)n, sizeof *sup->pfds);
    sup->reported = calloc((size_t)n, 1);
    if (sup->pfds == NULL || sup->reported == NULL)
        die(1, "out of memory");
    sup->pfds[0] = (struct pollfd){ .fd = sup->sigfd, .events = POLLIN };
    /* poll() skips negative fds: streams of ranks not (yet) started. */
    for (int i = 0; i < 2 * n; i++)
        sup->pfds[1 + i].fd = -1;
}

/* A rank could not be started: the job ends, with status 1. */
static void start_failed(struct sup *sup)
{
    sup->end_code = 1;
    kill_all(sup, -1);
}

/* Until the last rank is reaped; then what the job left behind. */
static void run(struct sup *sup)
{
    int npfds = 1 + sup->fwd->nstreams;

    if (sup->opt->timeout_s > 0)
        sup->timeout_at = now_ms() + (long long)(sup->opt->timeout_s * 1000 + 0.5);
    while (sup->ranks->nalive > 0) {
        if (poll(sup->pfds, (nfds_t)npfds, poll_timeout(sup)) < 0 && errno != EINTR)
            die(1, "poll: %s", strerror(errno));
        if (sup->pfds[0].revents)
            handle_signals(sup);
        read_streams(sup->fwd);
        check_abort(sup);
        check_deadlines(sup);
    }
    kill_leftovers(sup->ranks->self);
    drain_streams(sup->fwd);
}

static int exit_status(const struct sup *sup)
{
    if (sup->end_code >= 0)
        return sup->end_code;
    if (sup->exec_failed)
        return 2;
    return sup->status;
}

/* The library may name POSIX shared memory or semaphores after the job;
 * whatever a crashed rank left behind goes now. */
static void remove_shm_leftovers(const struct opts *opt, const char *jobid)
{
    char shm[16 + FMPL_BOOT_JOBID_MAX], sem[16 + FMPL_BOOT_JOBID_MAX];
    struct dirent *e;
    DIR *d = opendir("/dev/shm");

    if (d == NULL)
        return;
    snprintf(shm, sizeof shm, "fmpl-%s", jobid);
    snprintf(sem, sizeof sem, "sem.fmpl-%s", jobid);
    while ((e = readdir(d)) != NULL)
        if ((strncmp(e->d_name, shm, strlen(shm)) == 0 ||
             strncmp(e->d_name, sem, strlen(sem)) == 0) &&
            unlinkat(dirfd(d), e->d_name, 0) == 0)
            verbose(opt, "removed /dev/shm/%s", e->d_name);
    closedir(d);
}

/* fds 0-2 closed at start would be reused by our pipes and then lost in
 * the ranks' dup2 onto them. */
static void ensure_std_fds(void)
{
    for (int fd = 0; fd < 3; fd++)
        if (fcntl(fd, F_GETFD) < 0)
            open("/dev/null", O_RDWR);
}

int main(int argc, char **argv)
{
    struct opts opt;
    struct job job = { .ctl_fd = -1 };
    struct ranks ranks = { .opt = &opt, .job = &job };
    struct fwd fwd = { .nstreams = 0 };
    struct sup sup = { .opt = &opt, .job = &job, .ranks = &ranks, .fwd = &fwd };
    int code;

    if ((code = parse_args(&opt, argc, argv)) != RUN_JOB)
        return code;
    ensure_std_fds();
    ranks.path = find_program(opt.argv[0]);
    if ((code = grace_from_env(&opt)) != RUN_JOB)
        return code;
    make_jobid(&job);
    create_ctl(&job, opt.n);
    setup_env(&job, opt.n);
    ranks.self = getpid();
    prctl(PR_SET_CHILD_SUBREAPER, 1);

    sup_init(&sup, &ranks.child_mask);
    if (opt.prefix) {
        raise_fd_limit(&ranks);
        init_streams(&fwd, 2 * opt.n, sup.pfds + 1);
    }

    verbose(&opt, "job %s: %d rank%s of %s", job.jobid, opt.n, opt.n > 1 ? "s" : "",
            ranks.path);
    if (start_ranks(&ranks, &fwd) != 0)
        start_failed(&sup);
    run(&sup);
    remove_shm_leftovers(&opt, job.jobid);

    code = exit_status(&sup);
    verbose(&opt, "job %s done, exit status %d", job.jobid, code);
    return code;
}
