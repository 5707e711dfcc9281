/*
 * fmplrun.h - the parts of fmplrun (main.c says which does what) and the
 * state each owns.
 *
 * There is no global: main() holds one struct of each kind and passes
 * them down; a struct points to the others it reads.  No signal handler
 * needs any of it either, since signals are read from a signalfd in the
 * supervisor's poll loop.
 */
#ifndef FMPLRUN_H
#define FMPLRUN_H

#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "base/launch_ctl.h"

#define FRUN_TERM_TO_KILL_MS 2000 /* SIGTERM -> SIGKILL */
#define FRUN_LINE_BYTES      4096 /* --prefix: longer lines are split */

/* ---- options.c ------------------------------------------------------ */

enum { FRUN_BIND_AUTO, FRUN_BIND_CORE, FRUN_BIND_NONE };

/* The command line and FMPL_KILL_GRACE: written by frun_parse_args and
 * frun_grace_from_env, read-only afterwards. */
struct frun_opts {
    int n;                        /* ranks */
    double timeout_s;             /* 0: none */
    int prefix;
    int verbose;
    int bind;                     /* --bind-to: FRUN_BIND_AUTO, _CORE, _NONE */
    char **argv;                  /* program and its arguments */
    long long grace_ms;
};

/* The parsers' results: go on with the job, or exit with this status. */
#define FRUN_RUN_JOB (-1)

/* The command line into *opt: FRUN_RUN_JOB, or the status to exit with (0
 * after --help or --version, 2 after a usage error, its message printed).
 * It does not exit itself, so the fuzz harness can call it. */
int frun_parse_args(struct frun_opts *opt, int argc, char **argv);
/* FMPL_KILL_GRACE into opt->grace_ms: FRUN_RUN_JOB, or 2 after a usage
 * error. */
int frun_grace_from_env(struct frun_opts *opt);

/* ---- job.c ---------------------------------------------------------- */

/* What fmplrun shares with the ranks: the job id and the control memory
 * (src/base/launch_ctl.h). */
struct frun_job {
    char jobid[FMPL_BOOT_JOBID_MAX];
    struct fmpl_ctl *ctl;
    int ctl_fd;
};

/* A new job id, the control memory for n ranks, and the environment every
 * rank inherits (FMPL_JOBID, FMPL_SIZE, FMPL_CTL_FD; no PMIX_*, OMPI_*). */
void frun_job_create(struct frun_job *job, int n);

/* ---- spawn.c -------------------------------------------------------- */

/* The ranks' processes: frun_start_ranks forks them and fills pid[]; the
 * supervisor clears a rank's pid and counts it out once it is reaped. */
struct frun_ranks {
    const struct frun_opts *opt;
    const struct frun_job *job;
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

/* Exec failure report, written by a child to the exec-error pipe (smaller
 * than PIPE_BUF, so never interleaved). */
struct frun_exec_error {
    int rank;
    int err;
};

struct frun_fwd;

/* The program as execvp would find it; exits with 2 if there is none. */
const char *frun_find_program(const char *name);
/* --prefix: room for two pipes per rank in RLIMIT_NOFILE. */
void frun_raise_fd_limit(struct frun_ranks *rk);
/* 0, or -1 when a rank could not be started (the caller ends the job). */
int frun_start_ranks(struct frun_ranks *rk, struct frun_fwd *fwd);

/* ---- forward.c ------------------------------------------------------ */

/* One output pipe of a rank under --prefix: bytes not yet ending a line. */
struct frun_stream {
    int fd;                       /* read end, -1 once closed */
    int out;                      /* where its lines go: 1 or 2 */
    int rank;
    size_t len;
    char buf[FRUN_LINE_BYTES];
};

/* --prefix: the ranks' output pipes, read in the supervisor's poll loop.
 * Without --prefix nstreams is 0 and every function below does nothing. */
struct frun_fwd {
    int nstreams;                 /* 2 per rank under --prefix, else 0 */
    struct frun_stream *streams;
    struct pollfd *pfds;          /* streams[i]'s entry in the poll set */
    int out_gone[3];              /* [1], [2]: our stdout, stderr reader left */
};

void frun_fwd_init(struct frun_fwd *fwd, int nstreams, struct pollfd *pfds);
void frun_fwd_attach(struct frun_fwd *fwd, int r, int out, int err);
void frun_fwd_read(struct frun_fwd *fwd);
void frun_fwd_drain_rank(struct frun_fwd *fwd, int r);
void frun_fwd_drain(struct frun_fwd *fwd);

/* ---- supervise.c ---------------------------------------------------- */

enum frun_phase {
    FRUN_RUNNING,                 /* no failure so far */
    FRUN_GRACE,                   /* a rank failed; the others may still exit */
    FRUN_TERMINATING,             /* SIGTERM sent */
    FRUN_KILLED                   /* SIGKILL sent */
};

/* Watching the ranks: their exits, signals to fmplrun, the deadlines. */
struct frun_sup {
    const struct frun_opts *opt;
    const struct frun_job *job;
    struct frun_ranks *ranks;
    struct frun_fwd *fwd;
    int sigfd;
    struct pollfd *pfds;          /* signalfd, then one per stream */
    char *reported;               /* per rank: its failure was already told */
    enum frun_phase phase;
    long long timeout_at, grace_at, kill_at;   /* monotonic ms; 0: not armed */
    int status;                   /* first non-zero exit of a rank */
    int exec_failed;
    int aborted;
    int end_code;                 /* timeout, signal, abort: -1 if none */
    int signalled;
};

void frun_sup_init(struct frun_sup *sup, sigset_t *child_mask);
void frun_sup_start_failed(struct frun_sup *sup);
void frun_supervise(struct frun_sup *sup);
int frun_exit_status(const struct frun_sup *sup);

/* ---- leftovers.c ---------------------------------------------------- */

void frun_kill_leftovers(pid_t self);
void frun_remove_shm_leftovers(const struct frun_opts *opt, const char *jobid);

/* ---- util.c --------------------------------------------------------- */

long long frun_now_ms(void);
/* "fmplrun: ..." on stderr, with -v only */
void frun_verbose(const struct frun_opts *opt, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* "fmplrun: ..." on stderr, then exit(code) */
void frun_die(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));

#endif
