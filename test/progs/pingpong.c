/*
 * pingpong - every interesting size from 0 B to 64 MiB, both directions,
 * every byte checked.
 *
 *   pingpong [-m MAXSIZE] [-a] [-i] [-x INDEX] [-r REPS]
 *     -m  largest size (default 64M)
 *     -a  buffers from fmpl_alloc_mem
 *     -i  fmpl_isend/fmpl_irecv (both sides exchange at once, waits
 *         partly through fmpl_test) instead of blocking ping-pong
 *     -x  matching-area index to use (default 3)
 *     -r  repetitions of the whole size list (default 1)
 *
 * Ranks pair as (0,1), (2,3), ...; with an odd size the last rank then
 * pairs with rank 0 in a second phase.  Receive buffers are 8 bytes larger
 * than the message (a shorter message is allowed) and the 64 bytes after
 * the message must stay untouched.  Each rank ends by saying how many bytes
 * it received and checked.
 */
#include "prog.h"

#define GUARD 64

static size_t sizes[256];
static int nsizes;
static unsigned long long checked;   /* bytes received and verified */

static void add_size(size_t s, size_t max)
{
    int i;
    if (s > max)
        return;
    for (i = 0; i < nsizes; i++)
        if (sizes[i] == s)
            return;
    sizes[nsizes++] = s;
}

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? -1 : x > y;
}

static void make_sizes(size_t max)
{
    static const size_t small[] = {0, 1, 2, 3, 7, 8, 15, 16, 23, 24, 25, 31,
                                   32, 33, 63, 64, 65};
    size_t p;
    unsigned i;
    for (i = 0; i < sizeof small / sizeof small[0]; i++)
        add_size(small[i], max);
    for (p = 1; p <= ((size_t)64 << 20); p <<= 1) {
        add_size(p - 1, max);
        add_size(p, max);
        add_size(p + 1, max);
    }
    add_size(max, max);
    qsort(sizes, nsizes, sizeof sizes[0], cmp_size);
}

static void *buf_alloc(size_t n, int use_alloc_mem)
{
    void *p;
    if (use_alloc_mem) {
        p = fmpl_alloc_mem(n);
        CHECK(p != NULL, "fmpl_alloc_mem(%zu) returned NULL", n);
    } else {
        p = prog_xmalloc(n);
    }
    return p;
}

static void buf_free(void *p, int use_alloc_mem)
{
    if (use_alloc_mem)
        CHECK_RC(fmpl_free_mem(p), FMPL_SUCCESS);
    else
        free(p);
}

/* One round with `peer` for message size n.  `first` says who pings. */
static void round_blocking(unsigned char *sbuf, unsigned char *rbuf, size_t n,
                           int peer, int mai, int first, uint64_t seed)
{
    pat_fill(sbuf, n, seed, prog_me, mai);
    memset(rbuf + n, PROG_POISON, 8 + GUARD);
    if (first) {
        CHECK_RC(fmpl_send(sbuf, n, peer, mai), FMPL_SUCCESS);
        CHECK_RC(fmpl_recv(rbuf, n + 8, peer, mai), FMPL_SUCCESS);
    } else {
        CHECK_RC(fmpl_recv(rbuf, n + 8, peer, mai), FMPL_SUCCESS);
        CHECK_RC(fmpl_send(sbuf, n, peer, mai), FMPL_SUCCESS);
    }
    PAT_VERIFY(rbuf, n, seed, peer, mai);
    POISON_VERIFY(rbuf + n, 8 + GUARD, PROG_POISON, "bytes after the message");
    checked += n;
}

static void round_nonblocking(unsigned char *sbuf, unsigned char *rbuf, size_t n,
                              int peer, int mai, uint64_t seed, int variant)
{
    fmpl_request_t rs, rr;
    int done = 0;

    memset(&rs, 0, sizeof rs);
    memset(&rr, 0, sizeof rr);
    pat_fill(sbuf, n, seed, prog_me, mai);
    memset(rbuf + n, PROG_POISON, 8 + GUARD);
    if (variant & 1) {
        CHECK_RC(fmpl_irecv(rbuf, n + 8, peer, mai, &rr), FMPL_SUCCESS);
        CHECK_RC(fmpl_isend(sbuf, n, peer, mai, &rs), FMPL_SUCCESS);
    } else {
        CHECK_RC(fmpl_isend(sbuf, n, peer, mai, &rs), FMPL_SUCCESS);
        CHECK_RC(fmpl_irecv(rbuf, n + 8, peer, mai, &rr), FMPL_SUCCESS);
    }
    if (variant & 2) {
        /* poll the receive with fmpl_test, then wait both */
        while (!done) {
            CHECK_RC(fmpl_test(&rr, &done), FMPL_SUCCESS);
        }
        CHECK_RC(fmpl_wait_irecv(&rr), FMPL_SUCCESS);
        CHECK_RC(fmpl_wait_isend(&rs), FMPL_SUCCESS);
    } else {
        CHECK_RC(fmpl_wait_isend(&rs), FMPL_SUCCESS);
        CHECK_RC(fmpl_wait_irecv(&rr), FMPL_SUCCESS);
    }
    PAT_VERIFY(rbuf, n, seed, peer, mai);
    POISON_VERIFY(rbuf + n, 8 + GUARD, PROG_POISON, "bytes after the message");
    checked += n;
}

static void run_pair(int peer, size_t max, int use_alloc, int nonblock, int mai, long reps)
{
    unsigned char *sbuf = buf_alloc(max + 8 + GUARD, use_alloc);
    unsigned char *rbuf = buf_alloc(max + 8 + GUARD, use_alloc);
    int i, first = prog_me < peer;
    long rep;

    for (rep = 0; rep < reps; rep++) {
        for (i = 0; i < nsizes; i++) {
            size_t n = sizes[i];
            /* the seed names size and repetition, so stale data fails */
            uint64_t seed = ((uint64_t)rep << 48) ^ ((uint64_t)n * 2654435761u) ^ 0x9090;
            if (nonblock)
                round_nonblocking(sbuf, rbuf, n, peer, mai, seed, i);
            else
                round_blocking(sbuf, rbuf, n, peer, mai, first, seed);
        }
    }
    buf_free(sbuf, use_alloc);
    buf_free(rbuf, use_alloc);
}

int main(int argc, char **argv)
{
    size_t max = (size_t)64 << 20;
    int use_alloc = 0, nonblock = 0;
    long mai = 3, reps = 1;
    struct prog_opt opts[] = {
        {'m', OPT_SIZE, &max, "largest message size (default 64M)"},
        {'a', OPT_FLAG, &use_alloc, "use fmpl_alloc_mem buffers"},
        {'i', OPT_FLAG, &nonblock, "use fmpl_isend/fmpl_irecv"},
        {'x', OPT_INT, &mai, "matching-area index (default 3)"},
        {'r', OPT_INT, &reps, "repetitions (default 1)"},
    };
    int even;

    prog_name = "pingpong";
    prog_parse(argc, argv, opts, 5);
    make_sizes(max);
    prog_init("pingpong", 8);
    CHECK(mai >= 0 && mai < 8, "index %ld out of the 8 used", mai);

    even = prog_np - (prog_np % 2);
    if (prog_me < even)
        run_pair(prog_me ^ 1, max, use_alloc, nonblock, (int)mai, reps);
    if (prog_np % 2 == 1 && prog_np > 1 && (prog_me == 0 || prog_me == prog_np - 1))
        run_pair(prog_me == 0 ? prog_np - 1 : 0, max, use_alloc, nonblock, (int)mai, reps);
    if (prog_np == 1) {
        /* a job of one: exchange with ourselves (needs the nonblocking path) */
        run_pair(0, max, use_alloc, 1, (int)mai, reps);
    }
    if (prog_me == 0)
        printf("pingpong: %d sizes up to %zu bytes, %s, %s buffers, %d ranks\n",
               nsizes, max, nonblock || prog_np == 1 ? "isend/irecv" : "send/recv",
               use_alloc ? "fmpl_alloc_mem" : "malloc", prog_np);
    printf("pingpong: rank %d received and checked %llu bytes\n", prog_me, checked);
    return prog_finish();
}
