/*
 * dcfa_agent.c - the host-side agent of the verbs transport's split mode
 * (what it is: dcfa_agent.h), and how a rank reaches it.
 *
 *   FMPL_DCFA_AGENT_WAIT=S   how long a new agent waits for its first rank
 *                            (default 30 s)
 *   FMPL_DCFA_AGENT_NAP=US   how long it sleeps between looks at its ranks'
 *                            offload slots while none is under way (default
 *                            50 us; dcfa_offload.h)
 *
 * The agent is forked from the first rank of its host while that rank is
 * in fmpl_init, before the application has data of its own (the child's
 * copy of the rank's memory is copy-on-write: only what the rank writes
 * afterwards of what existed then is copied), and closes every file it
 * inherited but its listening socket and stderr.  It stays in the rank's
 * process group and session, so a launcher that ends the job's processes
 * ends it too.
 *
 * An abstract socket has no owner and no permissions: anyone on the host
 * who guesses the name may connect, or bind it first.  A rank hands the
 * agent its device file, in whose protection domain it registers its
 * memory, and the agent makes verbs objects for whoever asks, so each
 * side checks the other's user (SO_PEERCRED): the agent drops a client of
 * another user, and a rank refuses an agent of another user (one that
 * took the name before the job's first rank could, and could then reach
 * the rank's registered memory through queue pairs of its own making).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fmpl.h"
#include "base/clock.h"
#include "base/env.h"
#include "base/gcov.h"
#include "base/log.h"
#include "transport/dcfa/dcfa.h"
#include "transport/dcfa/dcfa_agent.h"
#include "transport/dcfa/dcfa_offload.h"
#include "transport/dcfa/dcfa_uverbs.h"

/* ---- reaching it -------------------------------------------------------- */

static socklen_t agent_addr(struct sockaddr_un *a, const char *jobid)
{
    memset(a, 0, sizeof *a);
    a->sun_family = AF_UNIX;
    /* abstract: sun_path[0] is 0 */
    int n = snprintf(a->sun_path + 1, sizeof a->sun_path - 1, "fmpl-dcfa-agent.%u.%s",
                     (unsigned)getuid(), jobid);
    if (n < 0 || (size_t)n >= sizeof a->sun_path - 1)
        n = (int)sizeof a->sun_path - 2;
    return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
}

static void agent_main(int lfd) __attribute__((noreturn));

/* Fork the agent around the listening socket `lfd`; its first child
 * exits at once, so the agent is nobody's child here. */
static int spawn(int lfd)
{
    pid_t c = fork();
    if (c < 0)
        return -1;
    if (c == 0) {
        pid_t g = fork();
        if (g != 0)
            _exit(g < 0 ? 1 : 0);
        agent_main(lfd);
    }
    int st;
    while (waitpid(c, &st, 0) < 0 && errno == EINTR)
        ;
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

/* Is the process at the other end of `s` of our user? */
static int same_user(int s, uid_t *peer)
{
    struct ucred cr;
    socklen_t len = sizeof cr;
    if (getsockopt(s, SOL_SOCKET, SO_PEERCRED, &cr, &len) != 0 || len != sizeof cr)
        return 0;
    *peer = cr.uid;
    return cr.uid == getuid();
}

int fmpl_dcfa_agent_connect(const char *jobid)
{
    struct sockaddr_un a;
    socklen_t alen = agent_addr(&a, jobid);
    for (int tries = 0; tries < 1000; tries++) {
        int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
        if (s < 0)
            return -1;
        if (connect(s, (struct sockaddr *)&a, alen) == 0) {
            uid_t peer = (uid_t)-1;
            if (same_user(s, &peer))
                return s;
            fmpl_log_err("dcfa: the agent socket @%s belongs to user %u, not to this job's "
                         "user %u: refusing it", a.sun_path + 1, (unsigned)peer,
                         (unsigned)getuid());
            close(s);
            errno = EACCES;
            return -1;
        }
        close(s);
        if (errno != ECONNREFUSED && errno != ENOENT)
            return -1;
        /* nobody listens: whoever binds the name starts the agent */
        int l = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
        if (l < 0)
            return -1;
        if (bind(l, (struct sockaddr *)&a, alen) == 0) {
            int rc = listen(l, 256) == 0 ? spawn(l) : -1;
            close(l);
            if (rc != 0)
                return -1;
            continue;
        }
        close(l);
        if (errno != EADDRINUSE)
            return -1;
        struct timespec ts = { 0, 10 * 1000 * 1000 };   /* another rank is at it */
        nanosleep(&ts, NULL);
    }
    errno = ETIMEDOUT;
    return -1;
}

/* Send `p` on `sock` with the file `fd` (unless it is -1) */
static ssize_t send_with(int sock, const void *p, size_t len, int fd)
{
    struct iovec iov = { (void *)p, len };
    struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
    union {
        struct cmsghdr h;
        char buf[CMSG_SPACE(sizeof(int))];
    } cm;
    if (fd >= 0) {
        memset(&cm, 0, sizeof cm);
        m.msg_control = cm.buf;
        m.msg_controllen = sizeof cm.buf;
        struct cmsghdr *h = CMSG_FIRSTHDR(&m);
        h->cmsg_level = SOL_SOCKET;
        h->cmsg_type = SCM_RIGHTS;
        h->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(h), &fd, sizeof fd);
    }
    return sendmsg(sock, &m, MSG_NOSIGNAL);
}

/* Receive into `p` on `sock`, and a file that came with it into *fd */
static ssize_t recv_with(int sock, void *p, size_t len, int *fd)
{
    union {
        struct cmsghdr h;
        char buf[CMSG_SPACE(sizeof(int))];
    } cm;
    struct iovec iov = { p, len };
    struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cm.buf,
                        .msg_controllen = sizeof cm.buf };
    ssize_t n = recvmsg(sock, &m, MSG_CMSG_CLOEXEC);
    *fd = -1;
    struct cmsghdr *c = n >= 0 ? CMSG_FIRSTHDR(&m) : NULL;
    if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
        c->cmsg_len == CMSG_LEN(sizeof(int)))
        memcpy(fd, CMSG_DATA(c), sizeof(int));
    return n;
}

int fmpl_dcfa_agent_call(int sock, const fmpl_dcfa_areq_t *q, int fd_in, fmpl_dcfa_arep_t *p)
{
    if (send_with(sock, q, sizeof *q, fd_in) != (ssize_t)sizeof *q)
        return errno ? errno : EPIPE;
    ssize_t n;
    while ((n = recv(sock, p, sizeof *p, 0)) < 0 && errno == EINTR)
        ;
    if (n != (ssize_t)sizeof *p)
        return n < 0 ? errno : EPIPE;   /* 0: the agent is gone */
    return 0;
}

/* ---- the agent -------------------------------------------------------- */

typedef struct handles {
    uint32_t *h;
    int n, cap;
} handles_t;

/* A rank, and what the agent made for it in its file of the device */
typedef struct client {
    int fd, rank;
    int dev;                       /* the rank's device file (ATTACH), or -1 */
    int has_cq, has_srq;
    uint32_t pd, cq, srq;
    handles_t qp, ah;
    fmpl_off_agent_t off;          /* its offloaded collectives (OFFLOAD) */
} client_t;

static struct {
    fmpl_dcfa_t dev;               /* the device as the direct mode opens it */
    int ok;                        /* the device is open and its provider is rxe */
    struct ibv_device_attr da;
    client_t *c;
    int nc, capc;
} ag;

static int hadd(handles_t *s, uint32_t h)
{
    if (s->n == s->cap) {
        int cap = s->cap ? 2 * s->cap : 16;
        uint32_t *p = realloc(s->h, (size_t)cap * sizeof *p);
        if (!p)
            return ENOMEM;
        s->h = p;
        s->cap = cap;
    }
    s->h[s->n++] = h;
    return 0;
}

/* remove h if present: 1 if it was */
static int hdel(handles_t *s, uint32_t h)
{
    for (int i = 0; i < s->n; i++)
        if (s->h[i] == h) {
            s->h[i] = s->h[--s->n];
            return 1;
        }
    return 0;
}

static int hhas(const handles_t *s, uint32_t h)
{
    for (int i = 0; i < s->n; i++)
        if (s->h[i] == h)
            return 1;
    return 0;
}

/* What a rank leaves behind goes with it: queue pairs first (they use
 * the queues and handles after them).  Closing our copy of its file
 * would do as much once the rank has closed its own, but the rank may
 * live on (a failed fmpl_init). */
static void drop_client(int i)
{
    /* a coverage build's counts so far: the job's launcher may end us
     * before we leave by ourselves (fmplrun gives 1 s) */
    fmpl_gcov_flush();
    client_t *c = &ag.c[i];
    if (c->dev >= 0) {
        for (int k = 0; k < c->qp.n; k++)
            fmpl_uv_destroy(c->dev, IB_USER_VERBS_CMD_DESTROY_QP, c->qp.h[k]);
        for (int k = 0; k < c->ah.n; k++)
            fmpl_uv_destroy(c->dev, IB_USER_VERBS_CMD_DESTROY_AH, c->ah.h[k]);
        fmpl_off_agent_close(&c->off);
        if (c->has_srq)
            fmpl_uv_destroy(c->dev, IB_USER_VERBS_CMD_DESTROY_SRQ, c->srq);
        if (c->has_cq)
            fmpl_uv_destroy(c->dev, IB_USER_VERBS_CMD_DESTROY_CQ, c->cq);
        /* fails while the rank's registrations stand: they go with its file */
        fmpl_uv_destroy(c->dev, IB_USER_VERBS_CMD_DEALLOC_PD, c->pd);
        close(c->dev);
    }
    free(c->qp.h);
    free(c->ah.h);
    close(c->fd);
    ag.c[i] = ag.c[--ag.nc];
}

static void hello(client_t *c, const fmpl_dcfa_areq_t *q, fmpl_dcfa_arep_t *p)
{
    c->rank = q->rank;
    if (!ag.dev.ctx) {
        p->err = ENODEV;
        return;
    }
    fmpl_dcfa_t *d = &ag.dev;
    p->vendor = ag.da.vendor_id;
    p->pid = (int32_t)getpid();
    p->port = d->port;
    p->lid = d->lid;
    p->mtu = (uint8_t)d->mtu;
    p->roce = (uint8_t)d->roce;
    p->gid_index = d->gid_index;
    memcpy(p->gid, d->gid.raw, 16);
    p->max_cqe = ag.da.max_cqe;
    p->rd_atom = (uint8_t)(ag.da.max_qp_rd_atom < 16 ? ag.da.max_qp_rd_atom : 16);
    snprintf(p->dev, sizeof p->dev, "%s", fmpl_ibv.ibv_get_device_name(d->ctx->device));
    snprintf(p->file, sizeof p->file, "%s", d->ctx->device->dev_name);
    if (!ag.ok)
        p->err = EOPNOTSUPP;       /* not rxe: the rank runs in direct mode */
}

/* The rank's file of the device (`fd`, ours now): its context and
 * protection domain.  The file must be the device's: a context made in
 * another device's would not be where the port and address are. */
static void attach(client_t *c, int fd, fmpl_dcfa_arep_t *p)
{
    struct stat got, want;
    char path[96];
    snprintf(path, sizeof path, "/dev/infiniband/%s", ag.dev.ctx->device->dev_name);
    if (c->dev >= 0)
        p->err = EEXIST;
    else if (fd < 0)
        p->err = EBADF;
    else if (fstat(fd, &got) != 0 || stat(path, &want) != 0 || !S_ISCHR(got.st_mode) ||
             got.st_rdev != want.st_rdev)
        p->err = ENODEV;
    else if (!(p->err = fmpl_uv_get_context(fd)) && !(p->err = fmpl_uv_alloc_pd(fd, &c->pd))) {
        c->dev = fd;
        p->pd = c->pd;
        return;
    }
    if (fd >= 0)
        close(fd);
}

/* The objects of the rank's data path, in its context */
static void make(client_t *c, const fmpl_dcfa_areq_t *q, fmpl_dcfa_arep_t *p)
{
    int fd = c->dev;
    switch (q->op) {
    case FMPL_AG_CQ: {
        int cqe = (int)q->a > ag.da.max_cqe ? ag.da.max_cqe : (int)q->a;
        if (c->has_cq)
            p->err = EEXIST;
        else if (!(p->err = fmpl_uv_create_cq(fd, cqe, &p->handle, &p->num, &p->mi[0]))) {
            c->cq = p->handle;
            c->has_cq = 1;
        }
        break;
    }
    case FMPL_AG_SRQ:
        if (c->has_srq)
            p->err = EEXIST;
        else if (!(p->err = fmpl_uv_create_srq(fd, c->pd, q->a, 1, &p->handle, &p->mi[0]))) {
            c->srq = p->handle;
            c->has_srq = 1;
        }
        break;
    case FMPL_AG_QP:
        p->cap = q->cap;
        if (q->b == 2) {
            if (!(p->err = fmpl_off_agent_qp(&c->off, q->peer, &p->cap, &p->handle,
                                             &p->num)) &&
                (p->err = hadd(&c->qp, p->handle)) != 0)
                fmpl_uv_destroy(fd, IB_USER_VERBS_CMD_DESTROY_QP, p->handle);
        } else if (!c->has_cq || (q->b && !c->has_srq) ||
            (q->a != IBV_QPT_RC && q->a != IBV_QPT_UD))
            p->err = EINVAL;
        else if (!(p->err = fmpl_uv_create_qp(fd, c->pd, c->cq, c->srq, (int)q->b,
                                              (enum ibv_qp_type)q->a, &p->cap, &p->handle,
                                              &p->num, &p->mi[0], &p->mi[1])) &&
                 (p->err = hadd(&c->qp, p->handle)) != 0)
            fmpl_uv_destroy(fd, IB_USER_VERBS_CMD_DESTROY_QP, p->handle);
        break;
    case FMPL_AG_MODIFY:
        /* only queue pairs we made (the kernel would refuse others' too:
         * a handle is a number in this file's context) */
        p->err = hhas(&c->qp, q->modify.qp_handle) ? fmpl_uv_modify_qp(fd, &q->modify) : EPERM;
        break;
    case FMPL_AG_AH:
        if (!(p->err = fmpl_uv_create_ah(fd, c->pd, &q->ah, &p->handle, &p->num)) &&
            (p->err = hadd(&c->ah, p->handle)) != 0)
            fmpl_uv_destroy(fd, IB_USER_VERBS_CMD_DESTROY_AH, p->handle);
        break;
    case FMPL_AG_DESTROY_QP:
        p->err = hdel(&c->qp, q->a) ? fmpl_uv_destroy(fd, IB_USER_VERBS_CMD_DESTROY_QP, q->a)
                                    : EPERM;
        break;
    case FMPL_AG_DESTROY_AH:
        p->err = hdel(&c->ah, q->a) ? fmpl_uv_destroy(fd, IB_USER_VERBS_CMD_DESTROY_AH, q->a)
                                    : EPERM;
        break;
    default:
        p->err = EINVAL;
        break;
    }
}

static void serve(client_t *c, const fmpl_dcfa_areq_t *q, int fd)
{
    fmpl_dcfa_arep_t p;
    memset(&p, 0, sizeof p);
    if (q->op == FMPL_AG_HELLO) {
        hello(c, q, &p);
    } else if (!ag.ok) {
        p.err = ENODEV;
    } else if (q->op == FMPL_AG_ATTACH) {
        attach(c, fd, &p);
        fd = -1;
    } else if (c->dev < 0) {
        p.err = EBADF;             /* nothing to make it in */
    } else if (q->op == FMPL_AG_OFFLOAD) {
        if (c->off.on || fd < 0 || q->a < 1 || q->a > (1u << 24))
            p.err = EINVAL;
        else if ((p.err = fmpl_off_agent_open(&c->off, c->dev, c->pd, fd, (int)q->a, q->b,
                                              ag.da.max_cqe)) != 0)
            fmpl_off_agent_close(&c->off);
    } else {
        make(c, q, &p);
    }
    if (fd >= 0)
        close(fd);                 /* a file with a request that takes none */
    send_with(c->fd, &p, sizeof p, -1);  /* a rank that went is dropped at its EOF */
}

static void accept_client(int lfd)
{
    int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
    if (fd < 0)
        return;
    uid_t peer = (uid_t)-1;
    if (!same_user(fd, &peer)) {
        fprintf(stderr, "fmpl-dcfa-agent: refused a client of user %u (the job's user is %u)\n",
                (unsigned)peer, (unsigned)getuid());
        close(fd);
        return;
    }
    if (ag.nc == ag.capc) {
        int cap = ag.capc ? 2 * ag.capc : 16;
        client_t *c = realloc(ag.c, (size_t)cap * sizeof *c);
        if (!c) {
            close(fd);
            return;
        }
        ag.c = c;
        ag.capc = cap;
    }
    ag.c[ag.nc++] = (client_t){ .fd = fd, .rank = -1, .dev = -1 };
}

static void agent_main(int lfd)
{
    prctl(PR_SET_NAME, "fmpl-dcfa-agent", 0, 0, 0);
    signal(SIGPIPE, SIG_IGN);
    signal(SIGINT, SIG_IGN);       /* a terminal's ^C is for the ranks; they end us */
    /* nothing of the rank but the socket and stderr */
    if (lfd != 3) {
        dup2(lfd, 3);
        lfd = 3;
    }
    int null = open("/dev/null", O_RDWR);
    if (null >= 0) {
        dup2(null, 0);
        dup2(null, 1);
    }
    close_range(4, ~0U, 0);
    /* a bad value is logged and the default kept: the ranks that wait
     * for us report the failure to start, not this process */
    double wait;
    fmpl_env_double("FMPL_DCFA_AGENT_WAIT", 30, 0, 1e6,
                    "seconds the agent waits for its first rank, 0 to 1e6", &wait);
    double nap_us;
    fmpl_env_double("FMPL_DCFA_AGENT_NAP", 50, 0, 1e5,
                    "microseconds the agent sleeps between looks at idle offload slots, "
                    "0 to 1e5", &nap_us);
    long nap_ns = (long)(nap_us * 1000);

    /* the device as the direct mode opens it (FMPL_DCFA_DEVICE, _PORT,
     * _GID_INDEX from the rank's environment) */
    ag.dev.failed_peer = -1;
    if (fmpl_dcfa_open_device(&ag.dev) == FMPL_SUCCESS &&
        fmpl_ibv.ibv_query_device(ag.dev.ctx, &ag.da) == 0)
        ag.ok = ag.da.vendor_id == FMPL_DCFA_RXE_VENDOR;

    int served = 0;
    double t0 = fmpl_rtime();
    for (;;) {
        if (served && ag.nc == 0)
            break;                 /* every rank has gone */
        if (!served && fmpl_rtime() - t0 > wait)
            break;                 /* nobody came */
        /* the offload engines: spin while they have work, look at the
         * slots every FMPL_DCFA_AGENT_NAP us while they have none */
        int work = 0, offl = 0;
        for (int i = 0; i < ag.nc; i++) {
            work += fmpl_off_agent_run(&ag.c[i].off);
            offl |= ag.c[i].off.on;
            work += fmpl_off_agent_busy(&ag.c[i].off);
        }
        struct pollfd pf[1 + 1024];
        int n = 0;
        pf[n++] = (struct pollfd){ .fd = lfd, .events = POLLIN };
        for (int i = 0; i < ag.nc && n < 1025; i++)
            pf[n++] = (struct pollfd){ .fd = ag.c[i].fd, .events = POLLIN };
        struct timespec nap = { 0, work ? 0 : nap_ns };
        if (ppoll(pf, (nfds_t)n, offl ? &nap : &(struct timespec){ 1, 0 }, NULL) <= 0) {
            if (work)
                sched_yield();     /* beside the ranks on few cores */
            continue;
        }
        /* clients first (indices as polled), then new ones */
        for (int i = n - 2; i >= 0; i--) {
            if (!pf[i + 1].revents)
                continue;
            fmpl_dcfa_areq_t q;
            int fd = -1;
            ssize_t got = recv_with(ag.c[i].fd, &q, sizeof q, &fd);
            if (got == (ssize_t)sizeof q) {
                serve(&ag.c[i], &q, fd);
            } else {
                if (fd >= 0)
                    close(fd);
                if (got <= 0 && !(got < 0 && errno == EINTR))
                    drop_client(i);
            }
        }
        if (pf[0].revents & POLLIN) {
            accept_client(lfd);
            served = 1;
        }
    }
    while (ag.nc)
        drop_client(ag.nc - 1);
    if (ag.dev.ctx)
        fmpl_ibv.ibv_close_device(ag.dev.ctx);
    fmpl_gcov_flush();
    _exit(0);
}
