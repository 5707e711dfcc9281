/*
 * badargs - every bad argument returns its documented code, and real
 * traffic still works afterwards.
 *
 *   badargs
 *
 * Works with any number of ranks (a rank without a partner uses itself).
 */
#include "prog.h"

#include <limits.h>

#define NIDX 16

static void before_init(void)
{
    char b[8];
    fmpl_request_t r;
    int done = 0, ns, np;

    memset(&r, 0, sizeof r);
    CHECK(fmpl_rank() == -1, "fmpl_rank() before init is %d", fmpl_rank());
    CHECK(fmpl_size() == -1, "fmpl_size() before init is %d", fmpl_size());
    CHECK_RC(fmpl_send(b, 1, 0, 0), FMPL_ERR_NOT_INIT);
    CHECK_RC(fmpl_recv(b, 1, 0, 0), FMPL_ERR_NOT_INIT);
    CHECK_RC(fmpl_isend(b, 1, 0, 0, &r), FMPL_ERR_NOT_INIT);
    CHECK_RC(fmpl_irecv(b, 1, 0, 0, &r), FMPL_ERR_NOT_INIT);
    CHECK_RC(fmpl_finalize(), FMPL_ERR_NOT_INIT);
    CHECK_RC(fmpl_sendbuff_set(b, sizeof b, 0), FMPL_ERR_NOT_INIT);
    CHECK_RC(fmpl_sendbuff_check(&ns, &np), FMPL_ERR_NOT_INIT);
    /* undocumented which comes first for an inactive request */
    CHECK_RC2(fmpl_wait_isend(&r), FMPL_ERR_NOT_INIT, FMPL_ERR_REQUEST);
    CHECK_RC2(fmpl_wait_irecv(&r), FMPL_ERR_NOT_INIT, FMPL_ERR_REQUEST);
    CHECK_RC2(fmpl_test(&r, &done), FMPL_ERR_NOT_INIT, FMPL_ERR_REQUEST);
    CHECK_RC2(fmpl_cancel_irecv(&r), FMPL_ERR_NOT_INIT, FMPL_ERR_REQUEST);
    CHECK(fmpl_alloc_mem(64) == NULL, "fmpl_alloc_mem before init is not NULL");
    CHECK(fmpl_wtime() >= 0, "fmpl_wtime before init");
}

static void strerror_table(void)
{
    int a, b;
    for (a = FMPL_ERR_LAST_ + 1; a <= 0; a++) {
        const char *m = fmpl_strerror(a), *n = fmpl_error_name(a);
        CHECK(m != NULL && m[0] != 0, "fmpl_strerror(%d) empty", a);
        CHECK(n != NULL && strncmp(n, "FMPL_", 5) == 0, "fmpl_error_name(%d) = %s", a,
              n ? n : "(null)");
        for (b = FMPL_ERR_LAST_ + 1; b < a; b++) {
            CHECK(strcmp(m, fmpl_strerror(b)) != 0, "codes %d and %d share message '%s'", a,
                  b, m);
            CHECK(strcmp(n, fmpl_error_name(b)) != 0, "codes %d and %d share name '%s'", a,
                  b, n);
        }
    }
    CHECK(fmpl_strerror(12345) != NULL && fmpl_strerror(12345)[0], "unknown code message");
    CHECK(fmpl_strerror(INT_MIN) != NULL, "INT_MIN code message");
}

int main(void)
{
    fmpl_request_t r, r2, z;
    unsigned char sb[256], rb[256];
    int partner, me, np, done, ns, nsp, i;
    void *m;
    char spill[1024];

    prog_name = "badargs";
    setvbuf(stdout, NULL, _IOLBF, 0);
    before_init();
    strerror_table();

    CHECK_RC(fmpl_init(0), FMPL_ERR_ARG);
    CHECK_RC(fmpl_init(-1), FMPL_ERR_ARG);
    CHECK_RC(fmpl_init(1048577), FMPL_ERR_ARG);
    CHECK_RC(fmpl_init(INT_MAX), FMPL_ERR_ARG);
    CHECK_RC(fmpl_init(INT_MIN), FMPL_ERR_ARG);
    CHECK(fmpl_rank() == -1, "fmpl_rank() after a failed init is %d", fmpl_rank());

    prog_init("badargs", NIDX);
    me = prog_me;
    np = prog_np;
    CHECK_RC(fmpl_init(NIDX), FMPL_ERR_INIT);
    CHECK_RC2(fmpl_init(0), FMPL_ERR_INIT, FMPL_ERR_ARG);
    CHECK(fmpl_rank() == me && fmpl_size() == np, "rank/size changed by a second init");
    partner = me ^ 1;
    if (partner >= np)
        partner = me;

    memset(&r, 0, sizeof r);
    memset(&r2, 0, sizeof r2);
    memset(&z, 0, sizeof z);

    /* ranks */
    CHECK_RC(fmpl_send(sb, 1, -1, 0), FMPL_ERR_RANK);
    CHECK_RC(fmpl_send(sb, 1, np, 0), FMPL_ERR_RANK);
    CHECK_RC(fmpl_send(sb, 1, INT_MAX, 0), FMPL_ERR_RANK);
    CHECK_RC(fmpl_recv(rb, 1, -1, 0), FMPL_ERR_RANK);
    CHECK_RC(fmpl_recv(rb, 1, np, 0), FMPL_ERR_RANK);
    CHECK_RC(fmpl_isend(sb, 1, -1, 0, &r), FMPL_ERR_RANK);
    CHECK_RC(fmpl_isend(sb, 1, np, 0, &r), FMPL_ERR_RANK);
    CHECK_RC(fmpl_irecv(rb, 1, -1, 0, &r), FMPL_ERR_RANK);
    CHECK_RC(fmpl_irecv(rb, 1, np, 0, &r), FMPL_ERR_RANK);
    /* indices */
    CHECK_RC(fmpl_send(sb, 1, partner, -1), FMPL_ERR_INDEX);
    CHECK_RC(fmpl_send(sb, 1, partner, NIDX), FMPL_ERR_INDEX);
    CHECK_RC(fmpl_send(sb, 1, partner, INT_MAX), FMPL_ERR_INDEX);
    CHECK_RC(fmpl_recv(rb, 1, partner, -1), FMPL_ERR_INDEX);
    CHECK_RC(fmpl_recv(rb, 1, partner, NIDX), FMPL_ERR_INDEX);
    CHECK_RC(fmpl_isend(sb, 1, partner, -1, &r), FMPL_ERR_INDEX);
    CHECK_RC(fmpl_isend(sb, 1, partner, NIDX, &r), FMPL_ERR_INDEX);
    CHECK_RC(fmpl_irecv(rb, 1, partner, -1, &r), FMPL_ERR_INDEX);
    CHECK_RC(fmpl_irecv(rb, 1, partner, NIDX, &r), FMPL_ERR_INDEX);
    /* buffers */
    CHECK_RC(fmpl_send(NULL, 1, partner, 0), FMPL_ERR_BUFFER);
    CHECK_RC(fmpl_recv(NULL, 1, partner, 0), FMPL_ERR_BUFFER);
    CHECK_RC(fmpl_isend(NULL, 10, partner, 0, &r), FMPL_ERR_BUFFER);
    CHECK_RC(fmpl_irecv(NULL, 10, partner, 0, &r), FMPL_ERR_BUFFER);
    /* requests */
    CHECK_RC(fmpl_isend(sb, 1, partner, 0, NULL), FMPL_ERR_ARG);
    CHECK_RC(fmpl_irecv(rb, 1, partner, 0, NULL), FMPL_ERR_ARG);
    CHECK_RC(fmpl_wait_isend(&z), FMPL_ERR_REQUEST);
    CHECK_RC(fmpl_wait_irecv(&z), FMPL_ERR_REQUEST);
    CHECK_RC(fmpl_test(&z, &done), FMPL_ERR_REQUEST);
    /* none of the failed calls above may have left r active */
    CHECK_RC(fmpl_wait_isend(&r), FMPL_ERR_REQUEST);
    CHECK_RC(fmpl_wait_irecv(&r), FMPL_ERR_REQUEST);

    /* spill buffer */
    CHECK_RC(fmpl_sendbuff_set(spill, sizeof spill, -1), FMPL_ERR_ARG);
    CHECK_RC(fmpl_sendbuff_set(spill, sizeof spill, -0.5), FMPL_ERR_ARG);
    CHECK_RC(fmpl_sendbuff_set(NULL, 100, 0), FMPL_ERR_ARG);
    CHECK_RC(fmpl_sendbuff_check(&ns, &nsp), FMPL_SUCCESS);
    CHECK(ns == 0 && nsp == 0, "no spill buffer: nsend %d nspool %d", ns, nsp);
    CHECK_RC(fmpl_sendbuff_check(NULL, NULL), FMPL_SUCCESS);

    /* memory */
    m = malloc(64);
    CHECK_RC(fmpl_free_mem(m), FMPL_ERR_ARG);
    free(m);
    m = fmpl_alloc_mem(4096);
    CHECK(m != NULL, "fmpl_alloc_mem(4096) failed");
    CHECK_RC(fmpl_free_mem((char *)m + 8), FMPL_ERR_ARG);
    CHECK_RC(fmpl_free_mem(m), FMPL_SUCCESS);

    /* a second active receive from the same (src, index): BUSY; a receive
     * on another index or a send on the same index may overlap */
    CHECK_RC(fmpl_irecv(rb, 10, partner, 3, &r), FMPL_SUCCESS);
    CHECK_RC(fmpl_irecv(rb + 100, 10, partner, 3, &r2), FMPL_ERR_BUSY);
    CHECK_RC(fmpl_recv(rb + 100, 10, partner, 3), FMPL_ERR_BUSY);
    CHECK_RC(fmpl_wait_irecv(&r2), FMPL_ERR_REQUEST);
    /* wrong kind of wait, NULL done */
    CHECK_RC(fmpl_wait_isend(&r), FMPL_ERR_REQUEST);
    CHECK_RC(fmpl_test(&r, NULL), FMPL_ERR_ARG);
    CHECK_RC(fmpl_test(&r, &done), FMPL_SUCCESS);
    CHECK(done == 0, "a receive nobody sends to is done");
    CHECK_RC(fmpl_cancel_irecv(&r), FMPL_SUCCESS);
    /* cancel documents no code for an inactive request */
    CHECK_RC2(fmpl_cancel_irecv(&r), FMPL_ERR_REQUEST, FMPL_ERR_ARG);

    /* a second active send to the same (dst, index): BUSY.  (a) while the
     * partner has not posted its receive (the sync comes after) */
    memset(&r, 0, sizeof r);
    memset(&r2, 0, sizeof r2);
    pat_fill(sb, 100, 1, me, 4);
    CHECK_RC(fmpl_isend(sb, 100, partner, 4, &r), FMPL_SUCCESS);
    CHECK_RC(fmpl_isend(sb, 100, partner, 4, &r2), FMPL_ERR_BUSY);
    CHECK_RC(fmpl_send(sb, 100, partner, 4), FMPL_ERR_BUSY);
    CHECK_RC(fmpl_wait_irecv(&r), FMPL_ERR_REQUEST);
    CHECK_RC2(fmpl_cancel_irecv(&r), FMPL_ERR_REQUEST, FMPL_ERR_ARG);
    CHECK_RC(fmpl_test(&r, NULL), FMPL_ERR_ARG);
    if (partner != me)
        prog_exchange_poll(NULL, NULL, 0, partner, 9);
    memset(rb, 0, sizeof rb);
    CHECK_RC(fmpl_irecv(rb, 100, partner, 4, &r2), FMPL_SUCCESS);
    CHECK_RC(fmpl_wait_isend(&r), FMPL_SUCCESS);
    CHECK_RC(fmpl_wait_irecv(&r2), FMPL_SUCCESS);
    CHECK_RC(fmpl_wait_isend(&r), FMPL_ERR_REQUEST);
    PAT_VERIFY(rb, 100, 1, partner, 4);

    /* (b) a send and a receive that have completed but not been waited
     * for are still active: another on the same (peer, index) is BUSY */
    {
        fmpl_request_t rs, rr, x;
        int ds = 0, dr = 0;
        memset(&rs, 0, sizeof rs);
        memset(&rr, 0, sizeof rr);
        memset(&x, 0, sizeof x);
        pat_fill(sb, 50, 2, me, 10);
        CHECK_RC(fmpl_irecv(rb, 50, partner, 10, &rr), FMPL_SUCCESS);
        if (partner != me)
            prog_exchange_poll(NULL, NULL, 0, partner, 9);
        CHECK_RC(fmpl_isend(sb, 50, partner, 10, &rs), FMPL_SUCCESS);
        while (!ds || !dr) {
            if (!ds)
                CHECK_RC(fmpl_test(&rs, &ds), FMPL_SUCCESS);
            if (!dr)
                CHECK_RC(fmpl_test(&rr, &dr), FMPL_SUCCESS);
        }
        CHECK_RC(fmpl_isend(sb, 50, partner, 10, &x), FMPL_ERR_BUSY);
        CHECK_RC(fmpl_irecv(rb + 100, 50, partner, 10, &x), FMPL_ERR_BUSY);
        CHECK_RC(fmpl_wait_isend(&rs), FMPL_SUCCESS);
        CHECK_RC(fmpl_wait_irecv(&rr), FMPL_SUCCESS);
        PAT_VERIFY(rb, 50, 2, partner, 10);
        if (partner != me)
            prog_exchange_poll(NULL, NULL, 0, partner, 9);
    }

    /* NULL buffer with size 0 is fine */
    CHECK_RC(fmpl_irecv(NULL, 0, partner, 5, &r), FMPL_SUCCESS);
    CHECK_RC(fmpl_isend(NULL, 0, partner, 5, &r2), FMPL_SUCCESS);
    CHECK_RC(fmpl_wait_isend(&r2), FMPL_SUCCESS);
    CHECK_RC(fmpl_wait_irecv(&r), FMPL_SUCCESS);
    if (partner != me) {
        if (me < partner) {
            CHECK_RC(fmpl_send(NULL, 0, partner, 6), FMPL_SUCCESS);
            CHECK_RC(fmpl_recv(NULL, 0, partner, 6), FMPL_SUCCESS);
        } else {
            CHECK_RC(fmpl_recv(NULL, 0, partner, 6), FMPL_SUCCESS);
            CHECK_RC(fmpl_send(NULL, 0, partner, 6), FMPL_SUCCESS);
        }
    }

    /* after all that, real traffic on every index */
    for (i = 0; i < NIDX; i++) {
        size_t n = (size_t)(i * 13 % 200) + 1;
        pat_fill(sb, n, 50 + i, me, i);
        memset(rb, PROG_POISON, sizeof rb);
        prog_exchange(sb, rb, n, partner, i);
        PAT_VERIFY(rb, n, 50 + i, partner, i);
        POISON_VERIFY(rb + n, sizeof rb - n, PROG_POISON, "bytes after the message");
    }
    /* and with every other rank on index 7 */
    prog_barrier(8);
    for (i = 1; i < np; i++) {
        int to = (me + i) % np, from = (me - i + np) % np;
        memset(&r, 0, sizeof r);
        memset(&r2, 0, sizeof r2);
        pat_fill(sb, 64, 900 + i, me, 7);
        CHECK_RC(fmpl_irecv(rb, 64, from, 7, &r), FMPL_SUCCESS);
        CHECK_RC(fmpl_isend(sb, 64, to, 7, &r2), FMPL_SUCCESS);
        CHECK_RC(fmpl_wait_irecv(&r), FMPL_SUCCESS);
        CHECK_RC(fmpl_wait_isend(&r2), FMPL_SUCCESS);
        PAT_VERIFY(rb, 64, 900 + i, from, 7);
    }
    return prog_finish();
}
