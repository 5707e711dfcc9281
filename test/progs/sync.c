/*
 * sync - both partners send before they receive, without a spill buffer:
 * fmpl_isend all, then blocking fmpl_recv all, then fmpl_wait_isend all.
 * This must complete (the receives make the pending sends progress).
 *
 *   sync [-m MAXSIZE] [-r REPS]
 *     -m  largest message (default 8M)
 *     -r  repetitions (default 3)
 *
 * Ranks pair as (0,1), (2,3), ...; an odd last rank works with itself.
 * Messages go on indices 0..n-1 with sizes 0 .. MAXSIZE; the receives are
 * taken in reverse order.  A second phase mixes it: one side blocking
 * fmpl_send, the other isend + recv + wait.
 */
#include "prog.h"

#define NIDX 32

int main(int argc, char **argv)
{
    size_t max = 8 << 20;
    long reps = 3, rep;
    struct prog_opt opts[] = {
        {'m', OPT_SIZE, &max, "largest message (default 8M)"},
        {'r', OPT_INT, &reps, "repetitions (default 3)"},
    };
    size_t sizes[NIDX];
    unsigned char *sbuf[NIDX], *rbuf[NIDX];
    fmpl_request_t req[NIDX];
    int partner, n = 0, i;
    size_t s;

    prog_name = "sync";
    prog_parse(argc, argv, opts, 2);
    prog_init("sync", NIDX);
    partner = prog_me ^ 1;
    if (partner >= prog_np)
        partner = prog_me;

    sizes[n++] = 0;
    for (s = 1; s <= max && n < NIDX; s *= 5)
        { sizes[n] = s + (size_t)n; n++; }
    if (n < NIDX && sizes[n - 1] < max)
        sizes[n++] = max;
    for (i = 0; i < n; i++) {
        sbuf[i] = prog_xmalloc(sizes[i]);
        rbuf[i] = prog_xmalloc(sizes[i] + 8);
    }

    for (rep = 0; rep < reps; rep++) {
        memset(req, 0, sizeof req);
        for (i = 0; i < n; i++) {
            pat_fill(sbuf[i], sizes[i], (uint64_t)rep * 31 + 7, prog_me, i);
            memset(rbuf[i], PROG_POISON, sizes[i] + 8);
        }
        for (i = 0; i < n; i++)
            CHECK_RC(fmpl_isend(sbuf[i], sizes[i], partner, i, &req[i]), FMPL_SUCCESS);
        for (i = n - 1; i >= 0; i--) {
            CHECK_RC(fmpl_recv(rbuf[i], sizes[i] + 8, partner, i), FMPL_SUCCESS);
            PAT_VERIFY(rbuf[i], sizes[i], (uint64_t)rep * 31 + 7, partner, i);
            POISON_VERIFY(rbuf[i] + sizes[i], 8, PROG_POISON, "bytes after the message");
        }
        for (i = 0; i < n; i++)
            CHECK_RC(fmpl_wait_isend(&req[i]), FMPL_SUCCESS);
    }

    /* mixed: the lower rank uses blocking sends, the higher isend first */
    if (partner != prog_me) {
        for (i = 0; i < n; i++) {
            pat_fill(sbuf[i], sizes[i], 999, prog_me, i);
            memset(rbuf[i], PROG_POISON, sizes[i] + 8);
        }
        memset(req, 0, sizeof req);
        if (prog_me > partner) {
            for (i = 0; i < n; i++)
                CHECK_RC(fmpl_isend(sbuf[i], sizes[i], partner, i, &req[i]), FMPL_SUCCESS);
            for (i = 0; i < n; i++)
                CHECK_RC(fmpl_recv(rbuf[i], sizes[i] + 8, partner, i), FMPL_SUCCESS);
            for (i = n - 1; i >= 0; i--)
                CHECK_RC(fmpl_wait_isend(&req[i]), FMPL_SUCCESS);
        } else {
            /* receives pre-posted, then blocking sends: each completes
             * when the partner posts its receive, in the same order */
            for (i = 0; i < n; i++)
                CHECK_RC(fmpl_irecv(rbuf[i], sizes[i] + 8, partner, i, &req[i]), FMPL_SUCCESS);
            for (i = 0; i < n; i++)
                CHECK_RC(fmpl_send(sbuf[i], sizes[i], partner, i), FMPL_SUCCESS);
            for (i = 0; i < n; i++)
                CHECK_RC(fmpl_wait_irecv(&req[i]), FMPL_SUCCESS);
        }
        for (i = 0; i < n; i++) {
            PAT_VERIFY(rbuf[i], sizes[i], 999, partner, i);
            POISON_VERIFY(rbuf[i] + sizes[i], 8, PROG_POISON, "bytes after the message");
        }
    }
    for (i = 0; i < n; i++) {
        free(sbuf[i]);
        free(rbuf[i]);
    }
    if (prog_me == 0)
        printf("sync: %d messages up to %zu bytes, %ld rounds\n", n, sizes[n - 1], reps);
    return prog_finish();
}
