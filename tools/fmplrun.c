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

static struct {
    /* options */
    int n;
    double timeout_s;             /* 0: none */
    int prefix;
    int verbose;
    int bind;                     /* --bind-to: BIND_AUTO, BIND_CORE, BIND_NONE */
    char **argv;                  /* program and its arguments */
    const char *path;             /* program resolved against PATH */
    long long grace_ms;

    char jobid[FMPL_BOOT_JOBID_MAX];
    struct fmpl_ctl *ctl;
    int ctl_fd;
    int exec_pipe[2];
    int sigfd;
    sigset_t child_mask;          /* the signal mask we were started with */
    pid_t self;
    struct rlimit nofile;         /* as inherited, restored in the ranks */
    int nofile_raised;

    int *cpu;                     /* per rank: the CPU it is bound to, or NULL */
    pid_t *pid;                   /* per rank; 0 when reaped or never started */
    char *reported;               /* per rank: its failure was already told */
    int nalive;
    struct stream *streams;       /* 2 per rank under --prefix, else NULL */
    struct pollfd *pfds;          /* signalfd, then one per stream */
    int out_gone[3];              /* [1], [2]: our stdout, stderr reader left */

    enum phase phase;
    long long timeout_at, grace_at, kill_at;   /* monotonic ms; 0: not armed */
    int status;                   /* first non-zero exit of a rank */
    int exec_failed;
    int aborted;
    int end_code;                 /* timeout, signal, abort: -1 if none */
    int signalled;
} job = { .n = 1, .end_code = -1 };

enum { BIND_AUTO, BIND_CORE, BIND_NONE };

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void verbose(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void verbose(const char *fmt, ...)
{
    va_list ap;

    if (!job.verbose)
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

/* The command line into `job`: RUN_JOB, or the status to exit with (0 after
 * --help or --version, 2 after a usage error, its message printed).  It
 * does not exit itself, so the fuzz harness can call it. */
static int parse_args(int argc, char **argv)
{
    int i;

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
            job.prefix = 1;
        } else if (strcmp(a, "-v") == 0 || strcmp(a, "--verbose") == 0) {
            job.verbose = 1;
        } else if (strcmp(a, "-n") == 0 || strcmp(a, "-np") == 0 ||
                   strcmp(a, "--np") == 0 || (a[1] == 'n' && isdigit((unsigned char)a[2]))) {
            long n;

            val = isdigit((unsigned char)a[2]) ? a + 2 : argv[++i];
            if (val == NULL)
                return usage_error("%s needs a number of processes", a);
            if (fmpl_parse_long(val, 1, FMPL_CTL_MAX_SIZE, &n) != 0)
                return usage_error("the number of processes must be 1 to %d, not '%s'",
                                   FMPL_CTL_MAX_SIZE, val);
            job.n = (int)n;
        } else if (strcmp(a, "-t") == 0 || strcmp(a, "--timeout") == 0 ||
                   strncmp(a, "--timeout=", 10) == 0) {
            val = a[1] == '-' && a[9] == '=' ? a + 10 : argv[++i];
            if (val == NULL)
                return usage_error("%s needs a number of seconds", a);
            if (fmpl_parse_double(val, 0, 1e9, &job.timeout_s) != 0 || !(job.timeout_s > 0))
                return usage_error("the timeout must be a number of seconds > 0, not '%s'", val);
        } else if (strcmp(a, "--bind-to") == 0 || strncmp(a, "--bind-to=", 10) == 0) {
            val = a[9] == '=' ? a + 10 : argv[++i];
            if (val == NULL)
                return usage_error("%s needs 'core' or 'none'", a);
            if (strcmp(val, "core") == 0)
                job.bind = BIND_CORE;
            else if (strcmp(val, "none") == 0)
                job.bind = BIND_NONE;
            else
                return usage_error("--bind-to takes 'core' or 'none', not '%s'", val);
        } else {
            return usage_error("unknown option '%s'", a);
        }
    }
    if (i >= argc)
        return usage_error("no program to run");
    job.argv = argv + i;
    return RUN_JOB;
}

/* The program as execvp would find it, checked once here so that a typo
 * is one clear message instead of N failed ranks. */
static void find_program(void)
{
    const char *name = job.argv[0], *path, *p;
    struct stat st;

    if (strchr(name, '/') != NULL) {
        if (stat(name, &st) != 0)
            die(2, "cannot run '%s': %s", name, strerror(errno));
        if (S_ISDIR(st.st_mode))
            die(2, "cannot run '%s': %s", name, strerror(EISDIR));
        if (access(name, X_OK) != 0)
            die(2, "cannot run '%s': %s", name, strerror(errno));
        job.path = name;
        return;
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
        if (stat(cand, &st) == 0 && S_ISREG(st.st_mode) && access(cand, X_OK) == 0) {
            job.path = cand;
            return;
        }
        free(cand);
        p = colon;
        if (*p == '\0')
            break;
    }
    die(2, "cannot run '%s': command not found", name);
}

/* "j<pid>-<8 random hex digits>": unique per job, fine in file names. */
static void make_jobid(void)
{
    uint32_t rnd;

    if (getrandom(&rnd, sizeof rnd, GRND_NONBLOCK) != (ssize_t)sizeof rnd)
        rnd = (uint32_t)now_ms() * 2654435761u ^ (uint32_t)getpid();
    snprintf(job.jobid, sizeof job.jobid, "j%d-%08x", (int)getpid(), rnd);
}

static void create_ctl(void)
{
    char name[32 + FMPL_BOOT_JOBID_MAX];
    size_t bytes = fmpl_ctl_bytes((uint32_t)job.n);
    struct fmpl_ctl *c;

    /* The name only shows in /proc/PID/fd, for whoever debugs a job. */
    snprintf(name, sizeof name, "fmpl-ctl-%s", job.jobid);
    job.ctl_fd = memfd_create(name, MFD_CLOEXEC);
    if (job.ctl_fd < 0 || fchmod(job.ctl_fd, 0600) != 0 ||
        ftruncate(job.ctl_fd, (off_t)bytes) != 0)
        die(1, "cannot create the job control memory: %s", strerror(errno));
    c = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, job.ctl_fd, 0);
    if (c == MAP_FAILED)
        die(1, "cannot map the job control memory: %s", strerror(errno));
    c->magic = FMPL_CTL_MAGIC;
    c->version = FMPL_CTL_VERSION;
    c->size = (uint32_t)job.n;
    c->bytes = bytes;
    snprintf(c->jobid, sizeof c->jobid, "%s", job.jobid);
    atomic_store(&c->abort_rank, -1);
    atomic_store(&c->first_dead, -1);
    job.ctl = c;
}

/* The environment every rank shares; FMPL_RANK is set in each child. */
static void setup_env(void)
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
    snprintf(num, sizeof num, "%d", job.n);
    setenv(FMPL_ENV_SIZE, num, 1);
    snprintf(num, sizeof num, "%d", job.ctl_fd);
    setenv(FMPL_ENV_CTL_FD, num, 1);
    setenv(FMPL_ENV_JOBID, job.jobid, 1);
}

/* FMPL_KILL_GRACE into job.grace_ms: RUN_JOB, or 2 after a usage error. */
static int grace_from_env(void)
{
    const char *s = getenv("FMPL_KILL_GRACE");
    double v;

    job.grace_ms = DEFAULT_GRACE_MS;
    if (s == NULL || *s == '\0')
        return RUN_JOB;
    if (fmpl_parse_double(s, 0, 1e6, &v) != 0)
        return usage_error("FMPL_KILL_GRACE=%s: seconds between a rank's failure and SIGTERM "
                           "to the others, 0 to 1e6", s);
    job.grace_ms = (long long)(v * 1000 + 0.5);
    return RUN_JOB;
}

/* --prefix needs two pipes per rank. */
static void raise_fd_limit(void)
{
    rlim_t need = (rlim_t)job.n * 2 + 32;
    struct rlimit rl;

    getrlimit(RLIMIT_NOFILE, &job.nofile);
    if (job.nofile.rlim_cur >= need)
        return;
    rl = job.nofile;
    rl.rlim_cur = need < rl.rlim_max ? need : rl.rlim_max;
    if (rl.rlim_cur < need || setrlimit(RLIMIT_NOFILE, &rl) != 0)
        die(1, "--prefix with %d ranks needs %llu open files; the limit is %llu",
            job.n, (unsigned long long)need, (unsigned long long)rl.rlim_max);
    job.nofile_raised = 1;
}

/* In the child, between fork and exec: only the rank's own setup. */
static void __attribute__((noreturn)) exec_rank(int r, int out_w, int err_w)
{
    char num[16];
    struct exec_error e = { r, 0 };

    /* Die with fmplrun.  If it died before the prctl, our parent is
     * already someone else and the signal would never come. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != job.self)
        _exit(127);
    sigprocmask(SIG_SETMASK, &job.child_mask, NULL);
    signal(SIGPIPE, SIG_DFL);
    if (job.nofile_raised)
        setrlimit(RLIMIT_NOFILE, &job.nofile);

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
    if (job.cpu) {
        /* before exec, so the rank's first page is touched where it runs;
         * a refusal (a cgroup shrunk meanwhile) leaves it unbound */
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(job.cpu[r], &set);
        sched_setaffinity(0, sizeof set, &set);
    }
    fcntl(job.ctl_fd, F_SETFD, 0);      /* the one fd the rank inherits */
    snprintf(num, sizeof num, "%d", r);
    setenv(FMPL_ENV_RANK, num, 1);
    /* So a peer's dead_rank() can check us before our bootstrap runs. */
    atomic_store(&fmpl_ctl_rank(job.ctl, r)->pid, (int)getpid());

    execv(job.path, job.argv);
    e.err = errno;
    /* Nothing else to do if even this fails: the exit status tells. */
    ssize_t ignored = write(job.exec_pipe[1], &e, sizeof e);
    (void)ignored;
    _exit(127);
}

static void signal_all(int sig, int except)
{
    for (int r = 0; r < job.n; r++)
        if (job.pid[r] > 0 && r != except)
            kill(job.pid[r], sig);
}

/* SIGTERM to every rank, SIGKILL to those still there 2 s later. */
static void terminate(void)
{
    if (job.phase >= TERMINATING)
        return;
    verbose("sending SIGTERM to %d rank%s", job.nalive, job.nalive > 1 ? "s" : "");
    job.phase = TERMINATING;
    job.grace_at = 0;
    job.kill_at = now_ms() + TERM_TO_KILL_MS;
    signal_all(SIGTERM, -1);
}

static void kill_all(int except)
{
    job.phase = KILLED;
    job.grace_at = 0;
    signal_all(SIGKILL, except);
}

/* Fork rank r; with --prefix, through two pipes that we read. */
static int start_rank(int r)
{
    int out[2] = { -1, -1 }, err[2] = { -1, -1 };
    struct stream *s;
    pid_t pid;

    if (job.prefix && (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0)) {
        fprintf(stderr, "fmplrun: pipe for rank %d: %s\n", r, strerror(errno));
        return -1;
    }
    pid = fork();
    if (pid < 0) {
        fprintf(stderr, "fmplrun: fork for rank %d: %s\n", r, strerror(errno));
        return -1;
    }
    if (pid == 0)
        exec_rank(r, out[1], err[1]);
    job.pid[r] = pid;
    job.nalive++;
    if (job.cpu)
        verbose("rank %d is pid %d, bound to CPU %d", r, (int)pid, job.cpu[r]);
    else
        verbose("rank %d is pid %d", r, (int)pid);
    if (!job.prefix)
        return 0;

    close(out[1]);
    close(err[1]);
    fcntl(out[0], F_SETFL, O_NONBLOCK);
    fcntl(err[0], F_SETFL, O_NONBLOCK);
    s = &job.streams[2 * r];
    s[0].fd = out[0];
    s[0].out = STDOUT_FILENO;
    s[1].fd = err[0];
    s[1].out = STDERR_FILENO;
    s[0].rank = s[1].rank = r;
    job.pfds[1 + 2 * r] = (struct pollfd){ .fd = out[0], .events = POLLIN };
    job.pfds[2 + 2 * r] = (struct pollfd){ .fd = err[0], .events = POLLIN };
    return 0;
}

/* Where each rank runs: with --bind-to core (by default when every rank
 * has a CPU of its own), rank r on the r-th of the CPUs we may use (round
 * robin when they are fewer).  A rank that stays on one core keeps its
 * caches and its mailbox lines warm, and benchmarks against mpirun, which
 * binds the same way, compare like with like; the scheduler would move
 * it, on a machine whose cores differ in speed even from run to run. */
static void place_ranks(void)
{
    cpu_set_t mine;
    int cpus[CPU_SETSIZE], ncpu = 0;

    if (job.bind == BIND_NONE || sched_getaffinity(0, sizeof mine, &mine) != 0)
        return;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &mine))
            cpus[ncpu++] = c;
    if (ncpu == 0 || (job.bind == BIND_AUTO && (job.n < 2 || job.n > ncpu)))
        return;
    job.cpu = calloc((size_t)job.n, sizeof *job.cpu);
    if (job.cpu == NULL)
        die(1, "out of memory");
    for (int r = 0; r < job.n; r++)
        job.cpu[r] = cpus[r % ncpu];
}

static void start_ranks(void)
{
    place_ranks();
    job.pid = calloc((size_t)job.n, sizeof *job.pid);
    job.reported = calloc((size_t)job.n, 1);
    if (job.pid == NULL || job.reported == NULL)
        die(1, "out of memory");
    if (pipe2(job.exec_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
        die(1, "pipe: %s", strerror(errno));

    for (int r = 0; r < job.n; r++)
        if (start_rank(r) != 0) {
            /* Ranks already started would wait for the others forever. */
            job.end_code = 1;
            kill_all(-1);
            break;
        }
    close(job.exec_pipe[1]);
}

/* ---- output forwarding (--prefix) ---------------------------------- */

static void write_all(int fd, const char *p, size_t n)
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
                job.out_gone[fd] = 1;
            return;
        }
        p += w;
        n -= (size_t)w;
    }
}

/* One write per line, so lines of different ranks never mix. */
static void emit_line(const struct stream *s, const char *p, size_t n)
{
    char line[24 + LINE_BYTES + 1];
    int k = snprintf(line, sizeof line, "[%d] ", s->rank);

    memcpy(line + k, p, n);
    if (n == 0 || p[n - 1] != '\n')
        line[k + n++] = '\n';
    write_all(s->out, line, (size_t)k + n);
}

/* Write the complete lines in s->buf; with `all`, the rest too. */
static void emit_lines(struct stream *s, int all)
{
    size_t start = 0;
    char *nl;

    while ((nl = memchr(s->buf + start, '\n', s->len - start)) != NULL) {
        emit_line(s, s->buf + start, (size_t)(nl - s->buf) + 1 - start);
        start = (size_t)(nl - s->buf) + 1;
    }
    if (start < s->len && (all || (start == 0 && s->len == sizeof s->buf))) {
        emit_line(s, s->buf + start, s->len - start);
        start = s->len;
    }
    memmove(s->buf, s->buf + start, s->len - start);
    s->len -= start;
}

/* Read what is there; returns 0 when nothing more can come now. */
static int read_stream(struct stream *s, struct pollfd *pf)
{
    ssize_t n = read(s->fd, s->buf + s->len, sizeof s->buf - s->len);

    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return 0;
    if (n > 0) {
        s->len += (size_t)n;
        emit_lines(s, 0);
        if (!job.out_gone[s->out])
            return 1;
        /* Nobody reads what we forward any more: close the pipe, so that
         * the rank gets SIGPIPE as it would without --prefix. */
    } else {
        emit_lines(s, 1);
    }
    close(s->fd);
    s->fd = pf->fd = -1;
    return 0;
}

/* After the last rank is reaped: what its pipes still hold.  A process
 * the program left behind may keep a pipe open; we do not wait for it. */
static void drain_streams(void)
{
    for (int i = 0; i < 2 * job.n; i++) {
        struct stream *s = &job.streams[i];

        if (s->fd < 0)
            continue;
        while (read_stream(s, &job.pfds[1 + i]))
            ;
        if (s->fd >= 0) {
            emit_lines(s, 1);
            close(s->fd);
            s->fd = job.pfds[1 + i].fd = -1;
        }
    }
}

/* ---- rank exits ---------------------------------------------------- */

static void read_exec_errors(void)
{
    struct exec_error e;

    while (read(job.exec_pipe[0], &e, sizeof e) == (ssize_t)sizeof e) {
        if (e.rank < 0 || e.rank >= job.n)
            continue;
        fprintf(stderr, "fmplrun: rank %d: cannot execute '%s': %s\n",
                e.rank, job.path, strerror(e.err));
        job.reported[e.rank] = 1;
        job.exec_failed = 1;
    }
}

static void check_abort(void)
{
    int code, rank;

    if (job.aborted || !atomic_load_explicit(&job.ctl->abort_flag, memory_order_acquire))
        return;
    job.aborted = 1;
    code = atomic_load(&job.ctl->abort_code);
    rank = atomic_load(&job.ctl->abort_rank);
    fprintf(stderr, "fmplrun: rank %d called fmpl_abort(%d); killing the job\n", rank, code);
    if (job.end_code < 0) {
        /* What the aborting rank exits with (an exit code is 8 bits). */
        job.end_code = (code != 0 ? code : 1) & 0xff;
        if (job.end_code == 0)
            job.end_code = 1;
    }
    if (rank >= 0 && rank < job.n)
        job.reported[rank] = 1;
    /* The aborting rank is flushing its output and exits by itself; the
     * kill deadline covers it should it hang. */
    kill_all(rank);
    job.kill_at = now_ms() + TERM_TO_KILL_MS;
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

static void rank_exited(int r, int ws)
{
    struct fmpl_ctl_rank *cr = fmpl_ctl_rank(job.ctl, r);
    int code = WIFSIGNALED(ws) ? 128 + WTERMSIG(ws) : WEXITSTATUS(ws);
    int state = atomic_load(&cr->state);
    pid_t pid = job.pid[r];
    int none = -1;

    job.pid[r] = 0;
    job.nalive--;
    if (job.prefix)     /* its last words before our report of its end */
        for (int i = 2 * r; i < 2 * r + 2; i++)
            while (job.streams[i].fd >= 0 && read_stream(&job.streams[i], &job.pfds[1 + i]))
                ;
    read_exec_errors();
    check_abort();
    atomic_store(&cr->status, code);
    if (code == 0 && state == FMPL_CTL_FINALIZED) {
        verbose("rank %d (pid %d) finished", r, (int)pid);
        return;
    }
    /* Whatever the reason, this rank will never reach another fence. */
    atomic_store(&cr->state, FMPL_CTL_DEAD);
    atomic_compare_exchange_strong(&job.ctl->first_dead, &none, r);
    if (code != 0 && job.status == 0)
        job.status = code;

    /* A program that never opened the bootstrap (hostname, a script)
     * exiting with 0 is no failure; a peer waiting for it gets
     * FMPL_ERR_PEER from the first_dead we just set. */
    if (code == 0 && state == FMPL_CTL_NONE) {
        verbose("rank %d (pid %d) exited with status 0 (no FMPL)", r, (int)pid);
        return;
    }
    /* Once we are killing ranks, their deaths are no news. */
    if (!job.reported[r] && (job.phase <= GRACE || job.verbose))
        report_exit(r, pid, ws);
    job.reported[r] = 1;
    if (job.phase == RUNNING) {
        job.phase = GRACE;
        job.grace_at = now_ms() + job.grace_ms;
    }
}

static void reap(void)
{
    pid_t pid;
    int ws;

    while ((pid = waitpid(-1, &ws, WNOHANG)) > 0)
        for (int r = 0; r < job.n; r++)
            if (job.pid[r] == pid) {
                rank_exited(r, ws);
                break;
            }
}

static void handle_signals(void)
{
    struct signalfd_siginfo si;

    while (read(job.sigfd, &si, sizeof si) == (ssize_t)sizeof si) {
        int sig = (int)si.ssi_signo;

        if (sig == SIGCHLD) {
            reap();
            continue;
        }
        if (job.signalled++ > 0 || job.phase >= TERMINATING) {
            /* Asked twice, or already terminating: no more patience. */
            verbose("SIG%s again: sending SIGKILL", sigabbrev_np(sig));
            kill_all(-1);
            job.kill_at = 0;
        } else {
            fprintf(stderr, "fmplrun: SIG%s received, terminating the job\n",
                    sigabbrev_np(sig));
            terminate();
        }
        if (job.end_code < 0)
            job.end_code = 128 + sig;
    }
}

/* The survivors of a failure did not all end within FMPL_KILL_GRACE: say
 * who, since ranks terminated from now on are not reported one by one
 * (a survivor that never printed its error was stuck, or slow). */
static void grace_over(void)
{
    char list[256];
    size_t len = 0;
    int shown = 0;

    list[0] = 0;
    for (int r = 0; r < job.n && len < sizeof list - 16; r++) {
        if (job.pid[r] <= 0)
            continue;
        if (shown++ == 8) {
            len += (size_t)snprintf(list + len, sizeof list - len, ", ...");
            break;
        }
        len += (size_t)snprintf(list + len, sizeof list - len, "%s%d", shown > 1 ? ", " : "",
                                r);
    }
    fprintf(stderr, "fmplrun: rank%s %s still running %g s after rank %d failed "
            "(FMPL_KILL_GRACE): terminating the job\n", job.nalive > 1 ? "s" : "", list,
            (double)job.grace_ms / 1000, atomic_load(&job.ctl->first_dead));
}

static void check_deadlines(void)
{
    long long t = now_ms();

    if (job.timeout_at && t >= job.timeout_at) {
        job.timeout_at = 0;
        fprintf(stderr, "fmplrun: timeout after %g s\n", job.timeout_s);
        if (job.end_code < 0)
            job.end_code = 124;
        terminate();
    }
    if (job.grace_at && t >= job.grace_at) {
        job.grace_at = 0;
        grace_over();
        terminate();
    }
    if (job.kill_at && t >= job.kill_at) {
        job.kill_at = 0;
        verbose("sending SIGKILL to %d rank%s", job.nalive, job.nalive > 1 ? "s" : "");
        kill_all(-1);
    }
}

static int poll_timeout(void)
{
    long long next = 0, t = now_ms();
    long long at[] = { job.timeout_at, job.grace_at, job.kill_at };

    for (size_t i = 0; i < sizeof at / sizeof at[0]; i++)
        if (at[i] && (next == 0 || at[i] < next))
            next = at[i];
    if (next == 0)
        return -1;
    return next <= t ? 0 : (int)(next - t < INT_MAX ? next - t : INT_MAX);
}

/* Our children, found in /proc (their ppid), get `sig`; returns how many
 * there were, zombies included. */
static int signal_children(int sig)
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
            ppid != (int)job.self)
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
static void kill_leftovers(void)
{
    long long give_up = now_ms() + TERM_TO_KILL_MS, own = now_ms() + LEFTOVER_MS;
    int n, first;

    do {
        while (waitpid(-1, NULL, WNOHANG) > 0)
            ;   /* those that already exited are not news */
    } while (signal_children(0) > 0 && now_ms() < own && usleep(5000) == 0);
    first = signal_children(SIGKILL);

    if (first > 0)
        fprintf(stderr, "fmplrun: killing %d process%s left behind by the job\n",
                first, first > 1 ? "es" : "");
    for (n = first; n > 0 && now_ms() < give_up; n = signal_children(SIGKILL)) {
        while (waitpid(-1, NULL, WNOHANG) > 0)
            ;
        usleep(1000);
    }
}

static void run(void)
{
    int npfds = 1 + (job.prefix ? 2 * job.n : 0);

    if (job.timeout_s > 0)
        job.timeout_at = now_ms() + (long long)(job.timeout_s * 1000 + 0.5);
    while (job.nalive > 0) {
        if (poll(job.pfds, (nfds_t)npfds, poll_timeout()) < 0 && errno != EINTR)
            die(1, "poll: %s", strerror(errno));
        if (job.pfds[0].revents)
            handle_signals();
        for (int i = 1; i < npfds; i++)
            if (job.pfds[i].fd >= 0 && job.pfds[i].revents)
                read_stream(&job.streams[i - 1], &job.pfds[i]);
        check_abort();
        check_deadlines();
    }
    kill_leftovers();
    if (job.prefix)
        drain_streams();
}

/* The library may name POSIX shared memory or semaphores after the job;
 * whatever a crashed rank left behind goes now. */
static void remove_shm_leftovers(void)
{
    char shm[16 + FMPL_BOOT_JOBID_MAX], sem[16 + FMPL_BOOT_JOBID_MAX];
    struct dirent *e;
    DIR *d = opendir("/dev/shm");

    if (d == NULL)
        return;
    snprintf(shm, sizeof shm, "fmpl-%s", job.jobid);
    snprintf(sem, sizeof sem, "sem.fmpl-%s", job.jobid);
    while ((e = readdir(d)) != NULL)
        if ((strncmp(e->d_name, shm, strlen(shm)) == 0 ||
             strncmp(e->d_name, sem, strlen(sem)) == 0) &&
            unlinkat(dirfd(d), e->d_name, 0) == 0)
            verbose("removed /dev/shm/%s", e->d_name);
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
    sigset_t mask;
    int code;

    if ((code = parse_args(argc, argv)) != RUN_JOB)
        return code;
    ensure_std_fds();
    find_program();
    if ((code = grace_from_env()) != RUN_JOB)
        return code;
    make_jobid();
    create_ctl();
    setup_env();
    job.self = getpid();
    prctl(PR_SET_CHILD_SUBREAPER, 1);

    /* Signals arrive through the signalfd only, so the loop sees a child's
     * exit, or Ctrl-C, between two polls without races. */
    sigemptyset(&mask);
    sigaddset(&mask, SIGCHLD);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGHUP);
    sigprocmask(SIG_BLOCK, &mask, &job.child_mask);
    job.sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
    if (job.sigfd < 0)
        die(1, "signalfd: %s", strerror(errno));
    signal(SIGPIPE, SIG_IGN);

    job.pfds = calloc(1 + 2 * (size_t)job.n, sizeof *job.pfds);
    if (job.pfds == NULL)
        die(1, "out of memory");
    job.pfds[0] = (struct pollfd){ .fd = job.sigfd, .events = POLLIN };
    if (job.prefix) {
        raise_fd_limit();
        job.streams = calloc(2 * (size_t)job.n, sizeof *job.streams);
        if (job.streams == NULL)
            die(1, "out of memory");
    }
    /* poll() skips negative fds: streams of ranks not (yet) started. */
    for (int i = 0; i < 2 * job.n; i++) {
        if (job.prefix)
            job.streams[i].fd = -1;
        job.pfds[1 + i].fd = -1;
    }

    verbose("job %s: %d rank%s of %s", job.jobid, job.n, job.n > 1 ? "s" : "", job.path);
    start_ranks();
    run();
    remove_shm_leftovers();

    if (job.end_code >= 0)
        code = job.end_code;
    else if (job.exec_failed)
        code = 2;
    else
        code = job.status;
    verbose("job %s done, exit status %d", job.jobid, code);
    return code;
}
