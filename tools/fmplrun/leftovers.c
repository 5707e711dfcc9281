/*
 * leftovers.c - what a job leaves behind once its last rank is gone: the
 * processes the ranks started (fmplrun is their subreaper) and the POSIX
 * shared memory named after the job.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fmplrun.h"

/* a process left behind may end by itself; in make coverage's build
 * (FMPL_GCOV, src/base/gcov.h) the dcfa agent writes its counts first,
 * which at -O0 in the soft-RoCE guest takes seconds */
#ifdef FMPL_GCOV
#define LEFTOVER_MS      20000
#else
#define LEFTOVER_MS      1000
#endif

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
void frun_kill_leftovers(pid_t self)
{
    long long give_up = frun_now_ms() + FRUN_TERM_TO_KILL_MS, own = frun_now_ms() + LEFTOVER_MS;
    int n, first;

    do {
        while (waitpid(-1, NULL, WNOHANG) > 0)
            ;   /* those that already exited are not news */
    } while (signal_children(self, 0) > 0 && frun_now_ms() < own && usleep(5000) == 0);
    first = signal_children(self, SIGKILL);

    if (first > 0)
        fprintf(stderr, "fmplrun: killing %d process%s left behind by the job\n",
                first, first > 1 ? "es" : "");
    for (n = first; n > 0 && frun_now_ms() < give_up; n = signal_children(self, SIGKILL)) {
        while (waitpid(-1, NULL, WNOHANG) > 0)
            ;
        usleep(1000);
    }
}

/* The library may name POSIX shared memory or semaphores after the job;
 * whatever a crashed rank left behind goes now. */
void frun_remove_shm_leftovers(const struct frun_opts *opt, const char *jobid)
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
            frun_verbose(opt, "removed /dev/shm/%s", e->d_name);
    closedir(d);
}
