/*
 * fmplrun - start N local processes of a program as one FMPL job.
 *
 *   fmplrun -n 4 [-t SEC] [-p] [-v] ./prog args...
 *
 * The job's only shared state is the job control memory of
 * src/base/launch_ctl.h: a memfd that every rank inherits (FMPL_CTL_FD) and
 * the `local` bootstrap (src/base/boot_local.c) maps.  A memfd has no name,
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
 *
 * The parts, each with the state it owns (fmplrun.h):
 *   options.c    the command line and FMPL_KILL_GRACE     struct frun_opts
 *   job.c        job id, control memory, ranks' env       struct frun_job
 *   spawn.c      forking and exec'ing the ranks           struct frun_ranks
 *   forward.c    --prefix's output forwarding             struct frun_fwd
 *   supervise.c  the poll loop, deaths, deadlines, status  struct frun_sup
 *   leftovers.c  processes and shared memory left behind
 *   util.c       messages, the clock
 * main() holds one of each and wires them together.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "fmplrun.h"

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
    struct frun_opts opt;
    struct frun_job job = { .ctl_fd = -1 };
    struct frun_ranks ranks = { .opt = &opt, .job = &job };
    struct frun_fwd fwd = { .nstreams = 0 };
    struct frun_sup sup = { .opt = &opt, .job = &job, .ranks = &ranks, .fwd = &fwd };
    int code;

    if ((code = frun_parse_args(&opt, argc, argv)) != FRUN_RUN_JOB)
        return code;
    ensure_std_fds();
    ranks.path = frun_find_program(opt.argv[0]);
    if ((code = frun_grace_from_env(&opt)) != FRUN_RUN_JOB)
        return code;
    frun_job_create(&job, opt.n);
    ranks.self = getpid();
    prctl(PR_SET_CHILD_SUBREAPER, 1);

    frun_sup_init(&sup, &ranks.child_mask);
    if (opt.prefix) {
        frun_raise_fd_limit(&ranks);
        frun_fwd_init(&fwd, 2 * opt.n, sup.pfds + 1);
    }

    frun_verbose(&opt, "job %s: %d rank%s of %s", job.jobid, opt.n, opt.n > 1 ? "s" : "",
                 ranks.path);
    if (frun_start_ranks(&ranks, &fwd) != 0)
        frun_sup_start_failed(&sup);
    frun_supervise(&sup);
    frun_remove_shm_leftovers(&opt, job.jobid);

    code = frun_exit_status(&sup);
    frun_verbose(&opt, "job %s done, exit status %d", job.jobid, code);
    /* Freed so that the sanitizer builds' leak check sees a clean exit. */
    free(fwd.streams);
    free(sup.pfds);
    free(sup.reported);
    free(ranks.pid);
    free(ranks.cpu);
    return code;
}
