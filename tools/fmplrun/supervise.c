/*
 * supervise.c - watching the ranks until the last one is reaped: one
 * poll() loop on a signalfd (SIGCHLD, SIGINT, SIGTERM, SIGHUP) and the
 * --prefix pipes.  A rank's death goes into the control memory, where the
 * other ranks' waits see it; after FMPL_KILL_GRACE the survivors get
 * SIGTERM, then SIGKILL; --timeout and fmpl_abort end the job too.  The
 * exit status is decided here.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fmplrun.h"

static void signal_all(const struct frun_ranks *rk, int sig, int except)
{
    for (int r = 0; r < rk->opt->n; r++)
        if (rk->pid[r] > 0 && r != except)
            kill(rk->pid[r], sig);
}

/* SIGTERM to every rank, SIGKILL to those still there 2 s later. */
static void terminate(struct frun_sup *sup)
{
    int nalive = sup->ranks->nalive;

    if (sup->phase >= FRUN_TERMINATING)
        return;
    frun_verbose(sup->opt, "sending SIGTERM to %d rank%s", nalive, nalive > 1 ? "s" : "");
    sup->phase = FRUN_TERMINATING;
    sup->grace_at = 0;
    sup->kill_at = frun_now_ms() + FRUN_TERM_TO_KILL_MS;
    signal_all(sup->ranks, SIGTERM, -1);
}

static void kill_all(struct frun_sup *sup, int except)
{
    sup->phase = FRUN_KILLED;
    sup->grace_at = 0;
    signal_all(sup->ranks, SIGKILL, except);
}

static void read_exec_errors(struct frun_sup *sup)
{
    struct frun_exec_error e;

    while (read(sup->ranks->exec_pipe[0], &e, sizeof e) == (ssize_t)sizeof e) {
        if (e.rank < 0 || e.rank >= sup->opt->n)
            continue;
        fprintf(stderr, "fmplrun: rank %d: cannot execute '%s': %s\n",
                e.rank, sup->ranks->path, strerror(e.err));
        sup->reported[e.rank] = 1;
        sup->exec_failed = 1;
    }
}

static void check_abort(struct frun_sup *sup)
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
    sup->kill_at = frun_now_ms() + FRUN_TERM_TO_KILL_MS;
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

/*
 * The rank the others should name for the failure of rank r: r itself,
 * or the rank r gave up on (its `blamed` word) when that one has not
 * finished.  waitpid() hands back zombies in fork order, so a survivor
 * that saw a higher rank die and left at once would otherwise be named.
 */
static int first_failure(const struct frun_sup *sup, int r)
{
    int b = atomic_load(&fmpl_ctl_rank(sup->job->ctl, r)->blamed) - 1;

    if (b < 0 || b >= sup->opt->n || b == r ||
        atomic_load(&fmpl_ctl_rank(sup->job->ctl, b)->state) == FMPL_CTL_FINALIZED)
        return r;
    return b;
}

static void rank_exited(struct frun_sup *sup, int r, int ws)
{
    struct fmpl_ctl_rank *cr = fmpl_ctl_rank(sup->job->ctl, r);
    int code = WIFSIGNALED(ws) ? 128 + WTERMSIG(ws) : WEXITSTATUS(ws);
    int state = atomic_load(&cr->state);
    pid_t pid = sup->ranks->pid[r];
    int none = -1;

    sup->ranks->pid[r] = 0;
    sup->ranks->nalive--;
    frun_fwd_drain_rank(sup->fwd, r);
    read_exec_errors(sup);
    check_abort(sup);
    atomic_store(&cr->status, code);
    if (code == 0 && state == FMPL_CTL_FINALIZED) {
        frun_verbose(sup->opt, "rank %d (pid %d) finished", r, (int)pid);
        return;
    }
    /* Whatever the reason, this rank will never reach another fence. */
    atomic_store(&cr->state, FMPL_CTL_DEAD);
    atomic_compare_exchange_strong(&sup->job->ctl->first_dead, &none, first_failure(sup, r));
    if (code != 0 && sup->status == 0)
        sup->status = code;

    /* A program that never opened the bootstrap (hostname, a script)
     * exiting with 0 is no failure; a peer waiting for it gets
     * FMPL_ERR_PEER from the first_dead we just set. */
    if (code == 0 && state == FMPL_CTL_NONE) {
        frun_verbose(sup->opt, "rank %d (pid %d) exited with status 0 (no FMPL)", r, (int)pid);
        return;
    }
    /* Once we are killing ranks, their deaths are no news. */
    if (!sup->reported[r] && (sup->phase <= FRUN_GRACE || sup->opt->verbose))
        report_exit(r, pid, ws);
    sup->reported[r] = 1;
    if (sup->phase == FRUN_RUNNING) {
        sup->phase = FRUN_GRACE;
        sup->grace_at = frun_now_ms() + sup->opt->grace_ms;
    }
}

static void reap(struct frun_sup *sup)
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

static void handle_signals(struct frun_sup *sup)
{
    struct signalfd_siginfo si;

    while (read(sup->sigfd, &si, sizeof si) == (ssize_t)sizeof si) {
        int sig = (int)si.ssi_signo;

        if (sig == SIGCHLD) {
            reap(sup);
            continue;
        }
        if (sup->signalled++ > 0 || sup->phase >= FRUN_TERMINATING) {
            /* Asked twice, or already terminating: no more patience. */
            frun_verbose(sup->opt, "SIG%s again: sending SIGKILL", sigabbrev_np(sig));
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
static void grace_over(const struct frun_sup *sup)
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

static void check_deadlines(struct frun_sup *sup)
{
    long long t = frun_now_ms();
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
        frun_verbose(sup->opt, "sending SIGKILL to %d rank%s", nalive, nalive > 1 ? "s" : "");
        kill_all(sup, -1);
    }
}

static int poll_timeout(const struct frun_sup *sup)
{
    long long next = 0, t = frun_now_ms();
    long long at[] = { sup->timeout_at, sup->grace_at, sup->kill_at };

    for (size_t i = 0; i < sizeof at / sizeof at[0]; i++)
        if (at[i] && (next == 0 || at[i] < next))
            next = at[i];
    if (next == 0)
        return -1;
    return next <= t ? 0 : (int)(next - t < INT_MAX ? next - t : INT_MAX);
}

/* Signals arrive through the signalfd only, so the loop sees a child's
 * exit, or Ctrl-C, between two polls without races.  *child_mask gets the
 * mask we were started with, which the ranks get back. */
void frun_sup_init(struct frun_sup *sup, sigset_t *child_mask)
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
        frun_die(1, "signalfd: %s", strerror(errno));
    signal(SIGPIPE, SIG_IGN);

    sup->pfds = calloc(1 + 2 * (size_t)n, sizeof *sup->pfds);
    sup->reported = calloc((size_t)n, 1);
    if (sup->pfds == NULL || sup->reported == NULL)
        frun_die(1, "out of memory");
    sup->pfds[0] = (struct pollfd){ .fd = sup->sigfd, .events = POLLIN };
    /* poll() skips negative fds: streams of ranks not (yet) started. */
    for (int i = 0; i < 2 * n; i++)
        sup->pfds[1 + i].fd = -1;
}

/* A rank could not be started: the job ends, with status 1. */
void frun_sup_start_failed(struct frun_sup *sup)
{
    sup->end_code = 1;
    kill_all(sup, -1);
}

/* Until the last rank is reaped; then what the job left behind. */
void frun_supervise(struct frun_sup *sup)
{
    int npfds = 1 + sup->fwd->nstreams;

    if (sup->opt->timeout_s > 0)
        sup->timeout_at = frun_now_ms() + (long long)(sup->opt->timeout_s * 1000 + 0.5);
    while (sup->ranks->nalive > 0) {
        if (poll(sup->pfds, (nfds_t)npfds, poll_timeout(sup)) < 0 && errno != EINTR)
            frun_die(1, "poll: %s", strerror(errno));
        if (sup->pfds[0].revents)
            handle_signals(sup);
        frun_fwd_read(sup->fwd);
        check_abort(sup);
        check_deadlines(sup);
    }
    frun_kill_leftovers(sup->ranks->self);
    frun_fwd_drain(sup->fwd);
}

int frun_exit_status(const struct frun_sup *sup)
{
    if (sup->end_code >= 0)
        return sup->end_code;
    if (sup->exec_failed)
        return 2;
    return sup->status;
}
