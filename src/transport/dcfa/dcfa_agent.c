/*
 * dcfa_agent.c - the host-side agent of the verbs transport's split mode
 * (what it is: dcfa_agent.h), and how a rank reaches it.
 *
 *   FMPL_DCFA_AGENT_WAIT=S   how long a new agent waits for its first rank
 *                            (default 30 s)
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
 * who guesses the name may connect, or bind it first.  The agent hands a
 * client its device file with the job's protection domain, and a rank
 * registers its memory through the agent's file, so each side checks the
 * other's user (SO_PEERCRED): the agent drops a client of another user,
 * and a rank refuses an agent of another user (one that took the name
 * before the job's first rank could).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fmpl.h"
#include "core/env.h"
#include "core/log.h"
#include "transport/dcfa/dcfa.h"
#include "transport/dcfa/dcfa_agent.h"
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

int fmpl_dcfa_agent_call(int sock, const fmpl_dcfa_areq_t *q, fmpl_dcfa_arep_t *p, int *fd_out)
{
    if (send(sock, q, sizeof *q, MSG_NOSIGNAL) != (ssize_t)sizeof *q)
        return errno ? errno : EPIPE;
    union {
        struct cmsghdr h;
        char buf[CMSG_SPACE(sizeof(int))];
    } cm;
    struct iovec iov = { p, sizeof *p };
    struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cm.buf,
                        .msg_controllen = sizeof cm.buf };
    ssize_t n;
    while ((n = recvmsg(sock, &m, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR)
        ;
    if (n != (ssize_t)sizeof *p)
        return n < 0 ? errno : EPIPE;   /* 0: the agent is gone */
    if (fd_out) {
        *fd_out = -1;
        struct cmsghdr *c = CMSG_FIRSTHDR(&m);
        if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
            memcpy(fd_out, CMSG_DATA(c), sizeof(int));
    }
    return 0;
}

/* ---- the agent -------------------------------------------------------- */

typedef struct handles {
    uint32_t *h;
    int n, cap;
} handles_t;

typedef struct client {
    int fd, rank;
    int has_cq, has_srq;
    uint32_t cq, srq;
    handles_t qp, ah;
} client_t;

static struct {
    fmpl_dcfa_t dev;               /* the device as the direct mode opens it */
    int ok;                        /* the device is open and its provider is rxe */
    struct ibv_pd *pd;
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

static int cmd_fd(void) { return ag.dev.ctx->cmd_fd; }

/* What a rank leaves behind goes with it: queue pairs first (they use
 * the queues and handles after them). */
static void drop_client(int i)
{
    client_t *c = &ag.c[i];
    if (ag.ok) {
        for (int k = 0; k < c->qp.n; k++)
            fmpl_uv_destroy(cmd_fd(), IB_USER_VERBS_CMD_DESTROY_QP, c->qp.h[k]);
        for (int k = 0; k < c->ah.n; k++)
            fmpl_uv_destroy(cmd_fd(), IB_USER_VERBS_CMD_DESTROY_AH, c->ah.h[k]);
        if (c->has_srq)
            fmpl_uv_destroy(cmd_fd(), IB_USER_VERBS_CMD_DESTROY_SRQ, c->srq);
        if (c->has_cq)
            fmpl_uv_destroy(cmd_fd(), IB_USER_VERBS_CMD_DESTROY_CQ, c->cq);
    }
    free(c->qp.h);
    free(c->ah.h);
    close(c->fd);
    ag.c[i] = ag.c[--ag.nc];
}

static void reply(client_t *c, fmpl_dcfa_arep_t *p, int fd)
{
    struct iovec iov = { p, sizeof *p };
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
    sendmsg(c->fd, &m, MSG_NOSIGNAL);   /* a rank that went is dropped at its EOF */
}

static void hello(client_t *c, const fmpl_dcfa_areq_t *q, fmpl_dcfa_arep_t *p, int *fd)
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
    snprintf(p->dev, sizeof p->dev, "%s", ibv_get_device_name(d->ctx->device));
    if (!ag.ok) {
        p->err = EOPNOTSUPP;       /* not rxe: the rank runs in direct mode */
        return;
    }
    p->pd = ag.pd->handle;
    *fd = cmd_fd();
}

static void serve(client_t *c, const fmpl_dcfa_areq_t *q)
{
    fmpl_dcfa_arep_t p;
    memset(&p, 0, sizeof p);
    int fd = -1;
    if (q->op != FMPL_AG_HELLO && !ag.ok) {
        p.err = ENODEV;
        reply(c, &p, -1);
        return;
    }
    uint32_t pd = ag.ok ? ag.pd->handle : 0;
    switch (q->op) {
    case FMPL_AG_HELLO:
        hello(c, q, &p, &fd);
        break;
    case FMPL_AG_CQ: {
        int cqe = (int)q->a > ag.da.max_cqe ? ag.da.max_cqe : (int)q->a;
        if (c->has_cq)
            p.err = EEXIST;
        else if (!(p.err = fmpl_uv_create_cq(cmd_fd(), cqe, &p.handle, &p.num, &p.mi[0]))) {
            c->cq = p.handle;
            c->has_cq = 1;
        }
        break;
    }
    case FMPL_AG_SRQ:
        if (c->has_srq)
            p.err = EEXIST;
        else if (!(p.err = fmpl_uv_create_srq(cmd_fd(), pd, q->a, 1, &p.handle, &p.mi[0]))) {
            c->srq = p.handle;
            c->has_srq = 1;
        }
        break;
    case FMPL_AG_QP:
        p.cap = q->cap;
        if (!c->has_cq || (q->b && !c->has_srq) ||
            (q->a != IBV_QPT_RC && q->a != IBV_QPT_UD))
            p.err = EINVAL;
        else if (!(p.err = fmpl_uv_create_qp(cmd_fd(), pd, c->cq, c->srq, (int)q->b,
                                             (enum ibv_qp_type)q->a, &p.cap, &p.handle, &p.num,
                                             &p.mi[0], &p.mi[1])) &&
                 (p.err = hadd(&c->qp, p.handle)) != 0)
            fmpl_uv_destroy(cmd_fd(), IB_USER_VERBS_CMD_DESTROY_QP, p.handle);
        break;
    case FMPL_AG_MODIFY:
        /* a rank moves only its own queue pairs */
        p.err = hhas(&c->qp, q->modify.qp_handle) ? fmpl_uv_modify_qp(cmd_fd(), &q->modify)
                                                  : EPERM;
        break;
    case FMPL_AG_AH:
        if (!(p.err = fmpl_uv_create_ah(cmd_fd(), pd, &q->ah, &p.handle, &p.num)) &&
            (p.err = hadd(&c->ah, p.handle)) != 0)
            fmpl_uv_destroy(cmd_fd(), IB_USER_VERBS_CMD_DESTROY_AH, p.handle);
        break;
    case FMPL_AG_DESTROY_QP:
        p.err = hdel(&c->qp, q->a) ? fmpl_uv_destroy(cmd_fd(), IB_USER_VERBS_CMD_DESTROY_QP, q->a)
                                   : EPERM;
        break;
    case FMPL_AG_DESTROY_AH:
        p.err = hdel(&c->ah, q->a) ? fmpl_uv_destroy(cmd_fd(), IB_USER_VERBS_CMD_DESTROY_AH, q->a)
                                   : EPERM;
        break;
    default:
        p.err = EINVAL;
        break;
    }
    reply(c, &p, fd);
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
    ag.c[ag.nc++] = (client_t){ .fd = fd, .rank = -1 };
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

    /* the device as the direct mode opens it (FMPL_DCFA_DEVICE, _PORT,
     * _GID_INDEX from the rank's environment) */
    ag.dev.failed_peer = -1;
    if (fmpl_dcfa_open_device(&ag.dev) == FMPL_SUCCESS &&
        ibv_query_device(ag.dev.ctx, &ag.da) == 0) {
        ag.pd = ibv_alloc_pd(ag.dev.ctx);
        ag.ok = ag.pd && ag.da.vendor_id == FMPL_DCFA_RXE_VENDOR;
    }

    int served = 0;
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        if (served && ag.nc == 0)
            break;                 /* every rank has gone */
        if (!served) {
            struct timespec t;
            clock_gettime(CLOCK_MONOTONIC, &t);
            if ((double)(t.tv_sec - t0.tv_sec) > wait)
                break;             /* nobody came */
        }
        struct pollfd pf[1 + 1024];
        int n = 0;
        pf[n++] = (struct pollfd){ .fd = lfd, .events = POLLIN };
        for (int i = 0; i < ag.nc && n < 1025; i++)
            pf[n++] = (struct pollfd){ .fd = ag.c[i].fd, .events = POLLIN };
        if (poll(pf, (nfds_t)n, 1000) <= 0)
            continue;
        /* clients first (indices as polled), then new ones */
        for (int i = n - 2; i >= 0; i--) {
            if (!pf[i + 1].revents)
                continue;
            fmpl_dcfa_areq_t q;
            ssize_t got = recv(ag.c[i].fd, &q, sizeof q, 0);
            if (got == (ssize_t)sizeof q)
                serve(&ag.c[i], &q);
            else if (got <= 0 && !(got < 0 && errno == EINTR))
                drop_client(i);
        }
        if (pf[0].revents & POLLIN) {
            accept_client(lfd);
            served = 1;
        }
    }
    while (ag.nc)
        drop_client(ag.nc - 1);
    if (ag.pd)
        ibv_dealloc_pd(ag.pd);
    if (ag.dev.ctx)
        ibv_close_device(ag.dev.ctx);
    _exit(0);
}
