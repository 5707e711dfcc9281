/*
 * job.c - what fmplrun shares with the ranks: the job id, the job control
 * memory (src/base/launch_ctl.h) and the environment every rank inherits.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fmplrun.h"

/* "j<pid>-<8 random hex digits>": unique per job, fine in file names. */
static void make_jobid(struct frun_job *job)
{
    uint32_t rnd;

    if (getrandom(&rnd, sizeof rnd, GRND_NONBLOCK) != (ssize_t)sizeof rnd)
        rnd = (uint32_t)frun_now_ms() * 2654435761u ^ (uint32_t)getpid();
    snprintf(job->jobid, sizeof job->jobid, "j%d-%08x", (int)getpid(), rnd);
}

static void create_ctl(struct frun_job *job, int n)
{
    char name[32 + FMPL_BOOT_JOBID_MAX];
    size_t bytes = fmpl_ctl_bytes((uint32_t)n);
    struct fmpl_ctl *c;

    /* The name only shows in /proc/PID/fd, for whoever debugs a job. */
    snprintf(name, sizeof name, "fmpl-ctl-%s", job->jobid);
    job->ctl_fd = memfd_create(name, MFD_CLOEXEC);
    if (job->ctl_fd < 0 || fchmod(job->ctl_fd, 0600) != 0 ||
        ftruncate(job->ctl_fd, (off_t)bytes) != 0)
        frun_die(1, "cannot create the job control memory: %s", strerror(errno));
    c = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, job->ctl_fd, 0);
    if (c == MAP_FAILED)
        frun_die(1, "cannot map the job control memory: %s", strerror(errno));
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
static void setup_env(const struct frun_job *job, int n)
{
    extern char **environ;
    char num[16];

    /* unsetenv changes environ, so rescan after each removal. */
    for (char **e = environ; *e != NULL;) {
        if (strncmp(*e, "PMIX_", 5) == 0 || strncmp(*e, "OMPI_", 5) == 0) {
            char *name = strndup(*e, strcspn(*e, "="));
            if (name == NULL)
                frun_die(1, "out of memory");
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

void frun_job_create(struct frun_job *job, int n)
{
    make_jobid(job);
    create_ctl(job, n);
    setup_env(job, n);
}
