/*
 * forward.c - output forwarding under --prefix: each rank's stdout and
 * stderr come through a pipe of their own and leave fmplrun line by line,
 * each line in one write, prefixed with "[R] ".  The pipes are polled in
 * the supervisor's loop (supervise.c), at the entries of its poll set that
 * frun_fwd_init is given.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fmplrun.h"

static void write_all(struct frun_fwd *fwd, int fd, const char *p, size_t n)
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
                fwd->out_gone[fd] = 1;
            return;
        }
        p += w;
        n -= (size_t)w;
    }
}

/* One write per line, so lines of different ranks never mix. */
static void emit_line(struct frun_fwd *fwd, const struct frun_stream *s, const char *p,
                      size_t n)
{
    char line[24 + FRUN_LINE_BYTES + 1];
    int k = snprintf(line, sizeof line, "[%d] ", s->rank);

    memcpy(line + k, p, n);
    if (n == 0 || p[n - 1] != '\n')
        line[k + n++] = '\n';
    write_all(fwd, s->out, line, (size_t)k + n);
}

/* Write the complete lines in s->buf; with `all`, the rest too. */
static void emit_lines(struct frun_fwd *fwd, struct frun_stream *s, int all)
{
    size_t start = 0;
    char *nl;

    while ((nl = memchr(s->buf + start, '\n', s->len - start)) != NULL) {
        emit_line(fwd, s, s->buf + start, (size_t)(nl - s->buf) + 1 - start);
        start = (size_t)(nl - s->buf) + 1;
    }
    if (start < s->len && (all || (start == 0 && s->len == sizeof s->buf))) {
        emit_line(fwd, s, s->buf + start, s->len - start);
        start = s->len;
    }
    memmove(s->buf, s->buf + start, s->len - start);
    s->len -= start;
}

/* Read what is there; returns 0 when nothing more can come now. */
static int read_stream(struct frun_fwd *fwd, struct frun_stream *s, struct pollfd *pf)
{
    ssize_t n = read(s->fd, s->buf + s->len, sizeof s->buf - s->len);

    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return 0;
    if (n > 0) {
        s->len += (size_t)n;
        emit_lines(fwd, s, 0);
        if (!fwd->out_gone[s->out])
            return 1;
        /* Nobody reads what we forward any more: close the pipe, so that
         * the rank gets SIGPIPE as it would without --prefix. */
    } else {
        emit_lines(fwd, s, 1);
    }
    close(s->fd);
    s->fd = pf->fd = -1;
    return 0;
}

/* Under --prefix, 2 streams per rank, polled at pfds[0 .. nstreams-1]. */
void frun_fwd_init(struct frun_fwd *fwd, int nstreams, struct pollfd *pfds)
{
    fwd->streams = calloc((size_t)nstreams, sizeof *fwd->streams);
    if (fwd->streams == NULL)
        frun_die(1, "out of memory");
    for (int i = 0; i < nstreams; i++)
        fwd->streams[i].fd = -1;
    fwd->nstreams = nstreams;
    fwd->pfds = pfds;
}

/* Rank r's stdout and stderr pipes (read ends, non-blocking). */
void frun_fwd_attach(struct frun_fwd *fwd, int r, int out, int err)
{
    struct frun_stream *s = &fwd->streams[2 * r];

    s[0].fd = out;
    s[0].out = STDOUT_FILENO;
    s[1].fd = err;
    s[1].out = STDERR_FILENO;
    s[0].rank = s[1].rank = r;
    fwd->pfds[2 * r] = (struct pollfd){ .fd = out, .events = POLLIN };
    fwd->pfds[2 * r + 1] = (struct pollfd){ .fd = err, .events = POLLIN };
}

/* What poll() found on the pipes. */
void frun_fwd_read(struct frun_fwd *fwd)
{
    for (int i = 0; i < fwd->nstreams; i++)
        if (fwd->pfds[i].fd >= 0 && fwd->pfds[i].revents)
            read_stream(fwd, &fwd->streams[i], &fwd->pfds[i]);
}

/* A rank is gone: its last words, before our report of its end. */
void frun_fwd_drain_rank(struct frun_fwd *fwd, int r)
{
    for (int i = 2 * r; i < 2 * r + 2 && i < fwd->nstreams; i++)
        while (fwd->streams[i].fd >= 0 && read_stream(fwd, &fwd->streams[i], &fwd->pfds[i]))
            ;
}

/* After the last rank is reaped: what its pipes still hold.  A process
 * the program left behind may keep a pipe open; we do not wait for it. */
void frun_fwd_drain(struct frun_fwd *fwd)
{
    for (int i = 0; i < fwd->nstreams; i++) {
        struct frun_stream *s = &fwd->streams[i];

        if (s->fd < 0)
            continue;
        while (read_stream(fwd, s, &fwd->pfds[i]))
            ;
        if (s->fd >= 0) {
            emit_lines(fwd, s, 1);
            close(s->fd);
            s->fd = fwd->pfds[i].fd = -1;
        }
    }
}
