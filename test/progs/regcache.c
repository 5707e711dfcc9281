/*
 * regcache - the transports' registration caches under pressure:
 *
 *   in use   rank 1 posts more receives at once than a cache holds (one
 *            index each, every buffer on pages of its own), then rank 0
 *            sends them all: no registration a peer still writes may be
 *            evicted.
 *   reused   both ranks free their buffers and map new memory at the same
 *            addresses (munmap, then mmap MAP_FIXED_NOREPLACE: fresh
 *            zero pages) before every round, in both directions: a cached
 *            registration of the old memory must not be used for the new
 *            (a provider that pins pages would otherwise read or write the
 *            old ones).  On the providers here (tcp, shm), which reach
 *            memory by address, this holds even through a stale cache
 *            entry; it catches the pinning case only on such hardware.
 *   again    the same buffers, new contents, many times (what a cache
 *            is for: found there, and the new bytes go).
 *   discarded  madvise(MADV_DONTNEED) between rounds: the same
 *            addresses, still mapped, get fresh pages.
 *   malloc   free() and malloc() of a large block between rounds (glibc
 *            unmaps and maps it, mostly at the same address).
 *            With FMPL_OFI_MR_CACHE=0 these parts also check that closing
 *            unused registrations at once never closes one in use.
 *
 * Ranks 0 and 1 take part; the others only start and finish.
 *   -n N   receives in flight in the first part (default 100)
 *   -s S   message size (default 64K)
 *   -r R   rounds of the second part (default 12)
 */
#define _GNU_SOURCE
#include <sys/mman.h>

#include "prog.h"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

#define BAR 0                      /* pair_sync's index */

/* ranks 0 and 1 meet */
static void pair_sync(void)
{
    int peer = 1 - prog_me;
    if (prog_me == 0) {
        CHECK_RC(fmpl_send(NULL, 0, peer, BAR), FMPL_SUCCESS);
        CHECK_RC(fmpl_recv(NULL, 0, peer, BAR), FMPL_SUCCESS);
    } else {
        CHECK_RC(fmpl_recv(NULL, 0, peer, BAR), FMPL_SUCCESS);
        CHECK_RC(fmpl_send(NULL, 0, peer, BAR), FMPL_SUCCESS);
    }
}

static void in_use(int n, size_t size)
{
    size_t span = (size + 4095) / 4096 * 4096 + 4096;   /* a gap page */
    unsigned char *all = mmap(NULL, span * (size_t)n, PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(all != MAP_FAILED, "mmap of %zu bytes: %s", span * (size_t)n, strerror(errno));
    fmpl_request_t *req = calloc((size_t)n, sizeof *req);
    CHECK(req != NULL, "out of memory");
    if (prog_me == 1)
        for (int i = 0; i < n; i++)
            CHECK_RC(fmpl_irecv(all + span * (size_t)i, size, 0, 1 + i, &req[i]),
                     FMPL_SUCCESS);
    pair_sync();             /* every receive is posted */
    if (prog_me == 0) {
        for (int i = 0; i < n; i++) {
            pat_fill(all + span * (size_t)i, size, 7, 0, i);
            CHECK_RC(fmpl_send(all + span * (size_t)i, size, 1, 1 + i), FMPL_SUCCESS);
        }
    } else {
        for (int i = 0; i < n; i++) {
            CHECK_RC(fmpl_wait_irecv(&req[i]), FMPL_SUCCESS);
            long bad = pat_find_error(all + span * (size_t)i, size, 7, 0, i);
            CHECK(bad < 0, "receive %d of %d in flight: wrong byte at offset %ld", i, n, bad);
        }
    }
    pair_sync();
    munmap(all, span * (size_t)n);
    free(req);
}

/* New memory at `at` (or anywhere the first time): the old is gone. */
static unsigned char *remap(unsigned char *at, size_t len)
{
    if (at)
        CHECK(munmap(at, len) == 0, "munmap: %s", strerror(errno));
    void *p = mmap(at, len, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | (at ? MAP_FIXED_NOREPLACE : 0), -1, 0);
    CHECK(p != MAP_FAILED, "mmap: %s", strerror(errno));
    CHECK(!at || p == at, "mmap gave %p, not the old address %p", p, (void *)at);
    return p;
}

enum renew { REMAP, AGAIN, DISCARD, MALLOC };

/* The buffer for the next round, renewed as `how` says. */
static unsigned char *renew(enum renew how, unsigned char *buf, size_t size)
{
    switch (how) {
    case REMAP:
        return remap(buf, size);
    case AGAIN:
        return buf ? buf : remap(NULL, size);
    case DISCARD:
        if (!buf)
            return remap(NULL, size);
        CHECK(madvise(buf, size, MADV_DONTNEED) == 0, "madvise: %s", strerror(errno));
        return buf;
    case MALLOC:
        free(buf);
        buf = malloc(size);
        CHECK(buf != NULL, "out of memory");
        return buf;
    }
    return NULL;
}

static void reused(enum renew how, int rounds, size_t size)
{
    unsigned char *buf = NULL;
    for (int r = 0; r < rounds; r++) {
        buf = renew(how, buf, size);
        int from = r % 2, to = 1 - from;
        if (prog_me == from) {
            pat_fill(buf, size, 11, from, r);
            CHECK_RC(fmpl_send(buf, size, to, 1), FMPL_SUCCESS);
        } else {
            CHECK_RC(fmpl_recv(buf, size, from, 1), FMPL_SUCCESS);
            long bad = pat_find_error(buf, size, 11, from, r);
            CHECK(bad < 0, "%s, round %d: wrong byte at %ld",
                  how == REMAP     ? "new memory at the old address"
                  : how == AGAIN   ? "the same buffer again"
                  : how == DISCARD ? "pages discarded"
                                   : "freed and allocated again",
                  r, bad);
        }
        /* both sides are done with the buffers before they go */
        pair_sync();
    }
    if (how == MALLOC)
        free(buf);
    else
        munmap(buf, size);
}

int main(int argc, char **argv)
{
    size_t size = 64 << 10;
    long n = 100, rounds = 12;
    struct prog_opt opts[] = {
        {'n', OPT_INT, &n, "receives in flight (default 100)"},
        {'s', OPT_SIZE, &size, "message size (default 64K)"},
        {'r', OPT_INT, &rounds, "rounds of new memory (default 12)"},
    };
    prog_parse(argc, argv, opts, 3);
    CHECK(n >= 1 && n <= 1000 && rounds >= 0 && size >= 1, "bad options");
    prog_init("regcache", 1 + (int)n);
    if (prog_np >= 2 && prog_me <= 1) {
        in_use((int)n, size);
        for (enum renew how = REMAP; how <= MALLOC; how++) {
            reused(how, (int)rounds, size);
            /* large: the receiver reads half of it from the sender's memory */
            reused(how, (int)rounds, (size_t)4 << 20);
        }
    }
    if (prog_me == 0)
        printf("regcache: %ld receives of %zu bytes in flight, %ld rounds of new memory\n",
               n, size, rounds);
    return prog_finish();
}
