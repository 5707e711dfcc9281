/*
 * memmon.c - the memory monitor on a userfaultfd (see memmon.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "transport/memmon.h"

#ifdef __linux__
#include <linux/userfaultfd.h>
#endif

#define QLEN 1024                  /* ranges queued between two fmpl_memmon_gone */

struct fmpl_memmon {
    int fd;                        /* the userfaultfd */
    int wake[2];                   /* a pipe: close tells the thread to end */
    pthread_t thread;
    pthread_mutex_t lock;          /* the queue, and reading the fd */
    fmpl_memmon_range_t q[QLEN];
    int head, n, overflow;
    uintptr_t page;
};

#if defined(__linux__) && defined(UFFD_FEATURE_EVENT_UNMAP) && defined(SYS_userfaultfd)

static void push(fmpl_memmon_t *m, uintptr_t s, uintptr_t e)
{
    if (m->n == QLEN) {
        m->overflow = 1;
        return;
    }
    m->q[(m->head + m->n++) % QLEN] = (fmpl_memmon_range_t){ s, e };
}

/* Read every message there is, queueing the ranges under the lock (see
 * memmon.h: the unmapping thread goes on once its event is read, and must
 * then find the range queued).  Pages that faulted are returned in
 * fault[] to stop watching outside the lock. */
static int drain(fmpl_memmon_t *m, uintptr_t *fault, int nfault_max)
{
    int nfault = 0;
    struct uffd_msg msg[16];
    pthread_mutex_lock(&m->lock);
    for (;;) {
        ssize_t got = read(m->fd, msg, sizeof msg);
        if (got <= 0)
            break;
        for (size_t i = 0; i < (size_t)got / sizeof msg[0]; i++) {
            const struct uffd_msg *g = &msg[i];
            switch (g->event) {
            case UFFD_EVENT_UNMAP:
                push(m, g->arg.remove.start, g->arg.remove.end);
                break;
            case UFFD_EVENT_REMOVE:
                push(m, g->arg.remove.start, g->arg.remove.end);
                break;
            case UFFD_EVENT_REMAP:
                push(m, g->arg.remap.from, g->arg.remap.from + g->arg.remap.len);
                break;
            case UFFD_EVENT_PAGEFAULT: {
                uintptr_t p = g->arg.pagefault.address & ~(m->page - 1);
                push(m, p, p + m->page);
                if (nfault < nfault_max)
                    fault[nfault++] = p;
                break;
            }
            default:
                break;
            }
        }
    }
    pthread_mutex_unlock(&m->lock);
    return nfault;
}

static int unregister(fmpl_memmon_t *m, uintptr_t s, uintptr_t e)
{
    struct uffdio_range r = { .start = s, .len = e - s };
    return ioctl(m->fd, UFFDIO_UNREGISTER, &r);
}

/* Stop watching the page at `p` a thread faulted on, which wakes it.  A
 * huge page (hugetlbfs) is unwatched whole only: then the 2 MiB or 1 GiB
 * around it (a fault left waiting would hang the application). */
static void let_go(fmpl_memmon_t *m, uintptr_t p)
{
    static const uintptr_t sizes[] = { 0, (uintptr_t)2 << 20, (uintptr_t)1 << 30 };
    for (int i = 0; i < 3; i++) {
        uintptr_t sz = sizes[i] ? sizes[i] : m->page;
        uintptr_t s = p & ~(sz - 1);
        if (unregister(m, s, s + sz) == 0)
            return;
    }
}

static void *monitor(void *arg)
{
    fmpl_memmon_t *m = arg;
    for (;;) {
        struct pollfd p[2] = { { .fd = m->fd, .events = POLLIN },
                               { .fd = m->wake[0], .events = POLLIN } };
        if (poll(p, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        if (p[1].revents)
            break;
        uintptr_t fault[16];
        int nf = drain(m, fault, 16);
        /* a watched page missing: stop watching it, which wakes the
         * faulting thread (its fault then goes on as without us) */
        for (int i = 0; i < nf; i++)
            let_go(m, fault[i]);
    }
    return NULL;
}

fmpl_memmon_t *fmpl_memmon_open(const char **why)
{
    fmpl_memmon_t *m = calloc(1, sizeof *m);
    if (!m) {
        *why = "out of memory";
        return NULL;
    }
    m->page = (uintptr_t)sysconf(_SC_PAGESIZE);
    m->wake[0] = m->wake[1] = -1;
    /* faults from the kernel too if we may (a read(2) into a page gone
     * missing then waits for us, not fails); user mode only otherwise */
    m->fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
#ifdef UFFD_USER_MODE_ONLY
    if (m->fd < 0 && errno == EPERM)
        m->fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);
#endif
    if (m->fd < 0) {
        *why = errno == EPERM ? "userfaultfd not permitted (vm.unprivileged_userfaultfd)"
                              : "no userfaultfd in this kernel";
        free(m);
        return NULL;
    }
    struct uffdio_api api = { .api = UFFD_API,
                              .features = UFFD_FEATURE_EVENT_UNMAP | UFFD_FEATURE_EVENT_REMOVE |
                                          UFFD_FEATURE_EVENT_REMAP };
    if (ioctl(m->fd, UFFDIO_API, &api) != 0 ||
        (api.features & (UFFD_FEATURE_EVENT_UNMAP | UFFD_FEATURE_EVENT_REMOVE |
                         UFFD_FEATURE_EVENT_REMAP)) !=
            (UFFD_FEATURE_EVENT_UNMAP | UFFD_FEATURE_EVENT_REMOVE | UFFD_FEATURE_EVENT_REMAP)) {
        *why = "userfaultfd without unmap, remove and remap events";
        close(m->fd);
        free(m);
        return NULL;
    }
    pthread_mutex_init(&m->lock, NULL);
    if (pipe2(m->wake, O_CLOEXEC) != 0) {
        *why = "pipe2 failed";
        fmpl_memmon_close(m);
        return NULL;
    }
    /* the thread takes no signal of the application's */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int e = pthread_create(&m->thread, NULL, monitor, m);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (e != 0) {
        *why = "cannot start the monitor thread";
        close(m->wake[1]);
        m->wake[1] = -1;
        fmpl_memmon_close(m);
        return NULL;
    }
    return m;
}

void fmpl_memmon_close(fmpl_memmon_t *m)
{
    if (!m)
        return;
    if (m->wake[1] >= 0) {
        /* ends the thread; closing the userfaultfd after it then drops
         * every watch (and wakes any fault still waiting) */
        close(m->wake[1]);
        pthread_join(m->thread, NULL);
    }
    if (m->wake[0] >= 0)
        close(m->wake[0]);
    close(m->fd);
    pthread_mutex_destroy(&m->lock);
    free(m);
}

int fmpl_memmon_watch(fmpl_memmon_t *m, uintptr_t addr, size_t len)
{
    uintptr_t s = addr & ~(m->page - 1);
    uintptr_t e = (addr + (len ? len : 1) + m->page - 1) & ~(m->page - 1);
    struct uffdio_register r = { .range = { .start = s, .len = e - s },
                                 .mode = UFFDIO_REGISTER_MODE_MISSING };
    return ioctl(m->fd, UFFDIO_REGISTER, &r) == 0 ? 0 : -1;
}

void fmpl_memmon_unwatch(fmpl_memmon_t *m, uintptr_t addr, size_t len)
{
    uintptr_t s = addr & ~(m->page - 1);
    uintptr_t e = (addr + (len ? len : 1) + m->page - 1) & ~(m->page - 1);
    /* fails only where nothing is mapped any more: nothing to stop */
    (void)unregister(m, s, e);
}

/* Only the queue: an unmap whose call has returned was read and queued by
 * the thread already (memmon.h), so reading the fd here too would cost a
 * system call a message and find nothing we need. */
int fmpl_memmon_gone(fmpl_memmon_t *m, fmpl_memmon_range_t *out, int n)
{
    pthread_mutex_lock(&m->lock);
    int got;
    if (m->overflow) {
        m->overflow = 0;
        m->head = m->n = 0;
        got = -1;
    } else {
        got = m->n < n ? m->n : n;
        for (int i = 0; i < got; i++)
            out[i] = m->q[(m->head + i) % QLEN];
        m->head = (m->head + got) % QLEN;
        m->n -= got;
    }
    pthread_mutex_unlock(&m->lock);
    return got;
}

#else /* no userfaultfd */

fmpl_memmon_t *fmpl_memmon_open(const char **why)
{
    *why = "no userfaultfd on this system";
    return NULL;
}
void fmpl_memmon_close(fmpl_memmon_t *m) { (void)m; }
int  fmpl_memmon_watch(fmpl_memmon_t *m, uintptr_t addr, size_t len)
{
    (void)m, (void)addr, (void)len;
    return -1;
}
void fmpl_memmon_unwatch(fmpl_memmon_t *m, uintptr_t addr, size_t len)
{
    (void)m, (void)addr, (void)len;
}
int  fmpl_memmon_gone(fmpl_memmon_t *m, fmpl_memmon_range_t *out, int n)
{
    (void)m, (void)out, (void)n;
    return 0;
}

#endif
