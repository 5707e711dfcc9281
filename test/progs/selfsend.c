/*
 * selfsend - messages from a rank to itself.
 *
 *   selfsend [-m MAXSIZE]
 *     -m  largest message (default 16M)
 *
 * Every rank on its own: irecv then blocking send; isend then blocking
 * recv then wait; irecv + isend + waits; zero-size with NULL buffers;
 * receive buffers from fmpl_alloc_mem; blocking sends with no receive
 * posted but a spill buffer (spilled, then received).
 */
#include "prog.h"

#define GUARD 32

static void run_variant(int v, unsigned char *sbuf, unsigned char *rbuf, unsigned char *abuf,
                        size_t max)
{
    static const size_t sizes[] = {0, 1, 100, 4095, 65536, (1 << 20) + 3, 16 << 20};
    int nsizes = sizeof sizes / sizeof sizes[0], i, me = prog_me;
    fmpl_request_t rs, rr;

    for (i = 0; i < nsizes; i++) {
        size_t n = sizes[i];
        uint64_t seed = (uint64_t)v * 100 + (uint64_t)i;
        unsigned char *dst = v == 3 ? abuf : rbuf;
        if (n > max)
            continue;
        memset(&rs, 0, sizeof rs);
        memset(&rr, 0, sizeof rr);
        pat_fill(sbuf, n, seed, me, v);
        memset(dst, PROG_POISON, n + GUARD);
        switch (v) {
        case 0: /* irecv, blocking send, wait */
            CHECK_RC(fmpl_irecv(dst, n, me, v, &rr), FMPL_SUCCESS);
            CHECK_RC(fmpl_send(sbuf, n, me, v), FMPL_SUCCESS);
            CHECK_RC(fmpl_wait_irecv(&rr), FMPL_SUCCESS);
            break;
        case 1: /* isend, blocking recv, wait */
            CHECK_RC(fmpl_isend(sbuf, n, me, v, &rs), FMPL_SUCCESS);
            CHECK_RC(fmpl_recv(dst, n, me, v), FMPL_SUCCESS);
            CHECK_RC(fmpl_wait_isend(&rs), FMPL_SUCCESS);
            break;
        default: /* isend, irecv, waits in the "wrong" order */
            CHECK_RC(fmpl_isend(sbuf, n, me, v, &rs), FMPL_SUCCESS);
            CHECK_RC(fmpl_irecv(dst, n + 5, me, v, &rr), FMPL_SUCCESS);
            CHECK_RC(fmpl_wait_isend(&rs), FMPL_SUCCESS);
            CHECK_RC(fmpl_wait_irecv(&rr), FMPL_SUCCESS);
            break;
        }
        PAT_VERIFY(dst, n, seed, me, v);
        POISON_VERIFY(dst + n, GUARD, PROG_POISON, "bytes after the message");
    }
}

int main(int argc, char **argv)
{
    size_t max = 16 << 20;
    struct prog_opt opts[] = {
        {'m', OPT_SIZE, &max, "largest message (default 16M)"},
    };
    int i, ns, np;
    unsigned char *sbuf, *rbuf, *abuf, *spill;
    fmpl_request_t rs, rr;
    int me;

    prog_name = "selfsend";
    prog_parse(argc, argv, opts, 1);
    prog_init("selfsend", 4);
    me = prog_me;
    /* the spill part below uses up to 64 KiB whatever -m says */
    sbuf = prog_xmalloc(max > (1 << 17) ? max : (1 << 17));
    rbuf = prog_xmalloc((max > (1 << 17) ? max : (1 << 17)) + GUARD);
    abuf = fmpl_alloc_mem(max + GUARD);
    CHECK(abuf != NULL, "fmpl_alloc_mem(%zu)", max + GUARD);

    /* variant 1 (isend, then a blocking recv) last: it needs the pending
     * isend to progress inside fmpl_recv */
    run_variant(0, sbuf, rbuf, abuf, max);
    run_variant(2, sbuf, rbuf, abuf, max);
    run_variant(3, sbuf, rbuf, abuf, max);

    /* zero-size with NULL buffers */
    memset(&rs, 0, sizeof rs);
    memset(&rr, 0, sizeof rr);
    CHECK_RC(fmpl_irecv(NULL, 0, me, 0, &rr), FMPL_SUCCESS);
    CHECK_RC(fmpl_send(NULL, 0, me, 0), FMPL_SUCCESS);
    CHECK_RC(fmpl_wait_irecv(&rr), FMPL_SUCCESS);

    /* with a spill buffer, a blocking send to self needs no receive */
    {
        size_t ssz[] = {0, 100, 65536, 5000};
        int n = 4;
        size_t spill_size = (1 << 20);
        spill = prog_xmalloc(spill_size);
        CHECK_RC(fmpl_sendbuff_set(spill, spill_size, 0), FMPL_SUCCESS);
        for (i = 0; i < n; i++) {
            pat_fill(sbuf, ssz[i], 500 + i, me, i % 4);
            CHECK_RC(fmpl_send(sbuf, ssz[i], me, i % 4), FMPL_SUCCESS);
            memset(sbuf, 0x11, ssz[i]);
        }
        CHECK_RC(fmpl_sendbuff_check(&ns, &np), FMPL_SUCCESS);
        CHECK(ns == 0 && np == n, "after %d spilled sends to self: nsend %d nspool %d", n,
              ns, np);
        /* receive 3 before 0..2 (different indices: any order) */
        for (i = n - 1; i >= 0; i--) {
            memset(rbuf, PROG_POISON, ssz[i] + GUARD);
            CHECK_RC(fmpl_recv(rbuf, ssz[i] + GUARD / 2, me, i % 4), FMPL_SUCCESS);
            PAT_VERIFY(rbuf, ssz[i], 500 + i, me, i % 4);
            POISON_VERIFY(rbuf + ssz[i], GUARD, PROG_POISON, "bytes after the message");
        }
        CHECK_RC(fmpl_sendbuff_check(&ns, &np), FMPL_SUCCESS);
        CHECK(np == 0 && ns == n, "after receiving everything: nsend %d nspool %d "
              "(expected %d and 0)", ns, np, n);
        CHECK_RC(fmpl_sendbuff_set(NULL, 0, 0), FMPL_SUCCESS);
        free(spill);
    }

    run_variant(1, sbuf, rbuf, abuf, max);
    CHECK_RC(fmpl_free_mem(abuf), FMPL_SUCCESS);
    free(sbuf);
    free(rbuf);
    return prog_finish();
}
