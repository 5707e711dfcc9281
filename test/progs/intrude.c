/*
 * intrude - try every door into another process that FMPL's shared-memory
 * paths rely on, and say which opened.  Not an FMPL program: run by
 * test/isolation_test.sh as a second user against a job of the first
 * (each door must stay shut), and as the job's own user (each must open:
 * the proof that the probe can tell).
 *
 *   intrude PID...
 *   intrude -s NAME
 *   intrude -b NAME
 *
 * The doors, for each PID:
 *   attach   ptrace(PTRACE_SEIZE), detached at once if it worked (what
 *            PR_SET_PTRACER_ANY widens under Yama)
 *   vmread   process_vm_readv of 8 bytes (FMPL's cross-memory attach) at
 *            the start of the first readable mapping in /proc/PID/maps,
 *            or at 0x10000 when the maps cannot be read (the permission
 *            check comes before the address is looked at)
 *   mem      open /proc/PID/mem for reading
 *   fd       open every memfd of /proc/PID/fd ("memfd:" links; how FMPL
 *            maps a peer's segments and fmplrun's control block), read 8
 *            bytes; listing the folder failing counts as refused
 * -s: the verbs transport's host agent (src/transport/dcfa/dcfa_agent.c),
 * whose abstract UNIX socket NAME (without the leading @) anyone may
 * connect to: connect and say hello as a rank would, then hand it a file
 * of its device; the door is open if the agent makes a protection domain
 * in it.
 * -b: squat the agent's socket NAME before the job can: bind and listen
 * on it (saying "intrude: squatting @NAME"), accept one client, and wait
 * until it goes (at most 30 s); the client, a rank looking for its
 * agent, must see that the socket is another user's and refuse it.
 * Prints "intrude: PID DOOR: refused (REASON)" or "intrude: PID DOOR:
 * OPEN"; a memfd door also names the segment.  Exits 0 when it could try
 * everything, 2 on a usage error.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#ifdef FMPL_HAVE_VERBS
#include "transport/dcfa/dcfa_agent.h"
#endif

/* pid 0: a door that is no process's (the agent's socket) */
static void say(long pid, const char *door, int err, const char *what)
{
    char who[32] = "";
    if (pid)
        snprintf(who, sizeof who, "%ld ", pid);
    if (err)
        printf("intrude: %s%s%s%s: refused (%s)\n", who, door, what ? " " : "",
               what ? what : "", strerror(err));
    else
        printf("intrude: %s%s%s%s: OPEN\n", who, door, what ? " " : "", what ? what : "");
}

/* the first readable mapping's start, or 0x10000 if the maps are closed */
static unsigned long some_address(long pid)
{
    char path[64], line[512], perms[8];
    unsigned long lo = 0x10000, a, b;
    snprintf(path, sizeof path, "/proc/%ld/maps", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return lo;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "%lx-%lx %7s", &a, &b, perms) == 3 && perms[0] == 'r') {
            lo = a;
            break;
        }
    fclose(f);
    return lo;
}

static void try_attach(long pid)
{
    if (ptrace(PTRACE_SEIZE, (pid_t)pid, NULL, NULL) == 0) {
        ptrace(PTRACE_DETACH, (pid_t)pid, NULL, NULL);
        say(pid, "attach", 0, NULL);
    } else {
        say(pid, "attach", errno, NULL);
    }
}

static void try_vmread(long pid)
{
    char buf[8];
    struct iovec l = { buf, sizeof buf }, r = { (void *)some_address(pid), sizeof buf };
    ssize_t n = process_vm_readv((pid_t)pid, &l, 1, &r, 1, 0);
    say(pid, "vmread", n < 0 ? errno : 0, NULL);
}

static void try_mem(long pid)
{
    char path[96];
    snprintf(path, sizeof path, "/proc/%ld/mem", pid);
    int fd = open(path, O_RDONLY);
    say(pid, "mem", fd < 0 ? errno : 0, NULL);
    if (fd >= 0)
        close(fd);
}

static void try_fds(long pid)
{
    char dir[64], path[PATH_MAX], link[PATH_MAX];
    snprintf(dir, sizeof dir, "/proc/%ld/fd", pid);
    DIR *d = opendir(dir);
    if (!d) {
        say(pid, "fd", errno, "(the folder)");
        return;
    }
    struct dirent *e;
    int tried = 0;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        ssize_t n = readlink(path, link, sizeof link - 1);
        if (n < 0) {
            say(pid, "fd", errno, e->d_name);
            tried++;
            continue;
        }
        link[n] = '\0';
        if (strncmp(link, "/memfd:", 7) != 0)
            continue;
        int fd = open(path, O_RDONLY);
        char b[8];
        int err = fd < 0 ? errno : pread(fd, b, sizeof b, 0) < 0 ? errno : 0;
        say(pid, "fd", err, link + 1);
        if (fd >= 0)
            close(fd);
        tried++;
    }
    closedir(d);
    if (!tried)
        printf("intrude: %ld fd: no memfd to try\n", pid);
}

/* The abstract socket NAME's address (sun_path[0] is 0): its length, or 0
 * (said) when the name does not fit */
static socklen_t abstract(const char *name, struct sockaddr_un *a)
{
    size_t n = strlen(name);
    *a = (struct sockaddr_un){ .sun_family = AF_UNIX };
    if (n == 0 || n >= sizeof a->sun_path - 1) {
        fprintf(stderr, "intrude: bad socket name '%s'\n", name);
        return 0;
    }
    memcpy(a->sun_path + 1, name, n);
    return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
}

static int try_agent(const char *name)
{
#ifdef FMPL_HAVE_VERBS
    struct sockaddr_un a;
    socklen_t alen = abstract(name, &a);
    if (!alen)
        return 2;
    int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (s < 0 || connect(s, (struct sockaddr *)&a, alen) != 0) {
        say(0, "agent", errno, name);
        return 0;
    }
    fmpl_dcfa_areq_t q = { .op = FMPL_AG_HELLO, .rank = 0 };
    fmpl_dcfa_arep_t p;
    int fd = -1, e = fmpl_dcfa_agent_call(s, &q, -1, &p);
    if (e == 0 && p.err == 0) {
        char path[96];
        p.file[sizeof p.file - 1] = 0;
        snprintf(path, sizeof path, "/dev/infiniband/%s", p.file);
        fd = open(path, O_RDWR | O_CLOEXEC);
        q.op = FMPL_AG_ATTACH;
        e = fd < 0 ? errno : fmpl_dcfa_agent_call(s, &q, fd, &p);
    }
    if (e == 0)
        e = p.err;
    say(0, "agent", e, name);
    if (fd >= 0)
        close(fd);
    close(s);
    return 0;
#else
    fprintf(stderr, "intrude: built without libibverbs: no agent to try (%s)\n", name);
    return 2;
#endif
}

static int squat(const char *name)
{
    struct sockaddr_un a;
    socklen_t alen = abstract(name, &a);
    if (!alen)
        return 2;
    int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (s < 0 || bind(s, (struct sockaddr *)&a, alen) != 0 || listen(s, 4) != 0) {
        printf("intrude: cannot squat @%s: %s\n", name, strerror(errno));
        return 1;
    }
    printf("intrude: squatting @%s\n", name);
    fflush(stdout);
    alarm(30);                             /* never outlive a test that went wrong */
    int c = accept(s, NULL, NULL);
    char buf[512];
    while (c >= 0 && read(c, buf, sizeof buf) > 0)
        ;
    printf("intrude: a client came and went\n");
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "-s") == 0)
        return try_agent(argv[2]);
    if (argc == 3 && strcmp(argv[1], "-b") == 0)
        return squat(argv[2]);
    if (argc < 2 || argv[1][0] == '-') {
        fprintf(stderr, "usage: intrude PID... | intrude -s NAME | intrude -b NAME\n");
        return 2;
    }
    for (int i = 1; i < argc; i++) {
        char *end;
        long pid = strtol(argv[i], &end, 10);
        if (*end || pid <= 0) {
            fprintf(stderr, "intrude: not a process id: '%s'\n", argv[i]);
            return 2;
        }
        try_attach(pid);
        try_vmread(pid);
        try_mem(pid);
        try_fds(pid);
    }
    return 0;
}
