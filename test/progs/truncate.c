/*
 * truncate - a message larger than the receive buffer.
 *
 *   truncate
 *
 * Ranks pair as (0,1), (2,3), ...; the lower rank of a pair sends, the
 * higher receives (an odd last rank sends to itself with isend/irecv).
 * For each case (message size, receive buffer size, blocking or not) both
 * sides must get FMPL_ERR_TRUNCATE, the receive buffer and the guard
 * bytes after it must be untouched, and a following message on the same
 * index must go through.
 */
#include "prog.h"

#define GUARD 256
#define MAI 5

struct tcase { size_t msg, cap; int nonblock; };

static const struct tcase cases[] = {
    {1, 0, 0},       {2, 1, 0},       {64, 63, 0},      {100, 10, 1},
    {4096, 4095, 0}, {70000, 65536, 1}, {1 << 20, 1000, 0}, {(4 << 20) + 1, 4 << 20, 1},
    {(4 << 20) + 1, 4 << 20, 0}, {20 << 20, 1 << 20, 1},
};
#define NCASES ((int)(sizeof cases / sizeof cases[0]))
#define MAXMSG (20 << 20)

static void do_send(const void *buf, size_t n, int peer, int nonblock, int expect)
{
    if (nonblock) {
        fmpl_request_t r;
        memset(&r, 0, sizeof r);
        CHECK_RC(fmpl_isend(buf, n, peer, MAI, &r), FMPL_SUCCESS);
        CHECK_RC(fmpl_wait_isend(&r), expect);
    } else {
        CHECK_RC(fmpl_send(buf, n, peer, MAI), expect);
    }
}

static void do_recv(void *buf, size_t n, int peer, int nonblock, int expect)
{
    if (nonblock) {
        fmpl_request_t r;
        memset(&r, 0, sizeof r);
        CHECK_RC(fmpl_irecv(buf, n, peer, MAI, &r), FMPL_SUCCESS);
        CHECK_RC(fmpl_wait_irecv(&r), expect);
    } else {
        CHECK_RC(fmpl_recv(buf, n, peer, MAI), expect);
    }
}

int main(void)
{
    int partner, sender, i;
    unsigned char *sbuf, *rbuf;

    prog_init("truncate", 8);
    partner = prog_me ^ 1;
    if (partner >= prog_np)
        partner = prog_me;
    sender = prog_me <= partner;
    sbuf = prog_xmalloc(MAXMSG);
    rbuf = prog_xmalloc(MAXMSG + GUARD);

    for (i = 0; i < NCASES; i++) {
        const struct tcase *t = &cases[i];
        size_t ok = (t->cap + 1) / 2;   /* the follow-up message fits */
        if (partner == prog_me) {
            /* with ourselves: irecv first, then send, then wait */
            fmpl_request_t rr;
            memset(&rr, 0, sizeof rr);
            memset(rbuf, PROG_POISON, t->cap + GUARD);
            pat_fill(sbuf, t->msg, i, prog_me, MAI);
            CHECK_RC(fmpl_irecv(rbuf, t->cap, prog_me, MAI, &rr), FMPL_SUCCESS);
            do_send(sbuf, t->msg, prog_me, t->nonblock, FMPL_ERR_TRUNCATE);
            CHECK_RC(fmpl_wait_irecv(&rr), FMPL_ERR_TRUNCATE);
            POISON_VERIFY(rbuf, t->cap + GUARD, PROG_POISON, "truncated receive buffer");
            memset(&rr, 0, sizeof rr);
            pat_fill(sbuf, ok, 1000 + i, prog_me, MAI);
            CHECK_RC(fmpl_irecv(rbuf, t->cap, prog_me, MAI, &rr), FMPL_SUCCESS);
            do_send(sbuf, ok, prog_me, t->nonblock, FMPL_SUCCESS);
            CHECK_RC(fmpl_wait_irecv(&rr), FMPL_SUCCESS);
            PAT_VERIFY(rbuf, ok, 1000 + i, prog_me, MAI);
            continue;
        }
        if (sender) {
            pat_fill(sbuf, t->msg, i, prog_me, MAI);
            do_send(sbuf, t->msg, partner, t->nonblock, FMPL_ERR_TRUNCATE);
            pat_fill(sbuf, ok, 1000 + i, prog_me, MAI);
            do_send(sbuf, ok, partner, !t->nonblock, FMPL_SUCCESS);
        } else {
            memset(rbuf, PROG_POISON, t->cap + GUARD);
            do_recv(rbuf, t->cap, partner, t->nonblock, FMPL_ERR_TRUNCATE);
            POISON_VERIFY(rbuf, t->cap + GUARD, PROG_POISON, "truncated receive buffer");
            memset(rbuf, PROG_POISON, t->cap + GUARD);
            do_recv(rbuf, t->cap, partner, !t->nonblock, FMPL_SUCCESS);
            PAT_VERIFY(rbuf, ok, 1000 + i, partner, MAI);
            POISON_VERIFY(rbuf + ok, t->cap - ok + GUARD, PROG_POISON,
                          "bytes after the message");
        }
    }
    /* and the pair still works the other way round */
    if (partner != prog_me) {
        pat_fill(sbuf, 5000, 77, prog_me, MAI);
        prog_exchange(sbuf, rbuf, 5000, partner, MAI);
        PAT_VERIFY(rbuf, 5000, 77, partner, MAI);
    }
    free(sbuf);
    free(rbuf);
    if (prog_me == 0)
        printf("truncate: %d cases\n", NCASES);
    return prog_finish();
}
