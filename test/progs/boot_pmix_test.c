/*
 * boot_pmix_test.c - exercise the PMIx bootstrap back-end on its own.
 *
 * Needs only src/base/boot_pmix.c and libpmix, so it can be built before
 * the rest of the library compiles:
 *   cc -std=gnu11 -Wall -Wextra -DFMPL_HAVE_PMIX $(pkg-config --cflags pmix) \
 *      -Iinclude -Isrc test/progs/boot_pmix_test.c src/base/boot_pmix.c \
 *      $(pkg-config --libs pmix)
 * (The Makefile's test/progs rule links it against lib/libfmpl.a instead,
 * which holds the same object.)
 *
 * Usage (run by test/pmix_test.sh):
 *   mpirun -n N boot_pmix_test          full put/fence/get check
 *   mpirun -n N boot_pmix_test --abort  the last rank aborts the job while
 *                                       the others wait in a fence; the
 *                                       launcher must kill the job fast,
 *                                       mpirun exiting with status 3
 *   mpirun -n N boot_pmix_test --die    the same, but the last rank just
 *                                       _exit(5)s without closing (status 5)
 *   boot_pmix_test --expect-unsupported without a launcher: open must say
 *                                       FMPL_ERR_UNSUPPORTED, at once, and
 *                                       print nothing
 * Exit 0 on success, 1 on failure.  Only rank 0 prints "ok".
 */
#include "base/boot.h"
#include "fmpl.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int g_rank = -1;
static int g_fail;

static void fail(const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "boot_pmix_test[%d]: FAIL: ", g_rank);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    g_fail = 1;
}

#define CHECK(cond, ...) do { if (!(cond)) fail(__VA_ARGS__); } while (0)

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Rank r's value for round `round`: a length and bytes that differ per rank
 * and round, so a get that returns the wrong rank's or round's data, or a
 * cut-off value, shows. */
static size_t value_len(int r, int round)
{
    return (size_t)((r * 37 + round * 11) % 200) + 1;
}

static void fill_value(unsigned char *buf, int r, int round)
{
    size_t n = value_len(r, round);

    for (size_t i = 0; i < n; i++)
        buf[i] = (unsigned char)(r * 7 + round * 13 + i * 3);
}

static int jobid_ok(const char *id)
{
    size_t n = strnlen(id, FMPL_BOOT_JOBID_MAX);

    if (n == 0 || n >= FMPL_BOOT_JOBID_MAX)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = id[i];
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
              (c >= '0' && c <= '9') || c == '_' || c == '-'))
            return 0;
    }
    return 1;
}

static int expect_unsupported(void)
{
    fmpl_boot_t b;
    double t0 = now();
    int rc;

    memset(&b, 0, sizeof b);
    rc = fmpl_boot_pmix_open(&b);
    double dt = now() - t0;
    if (rc != FMPL_ERR_UNSUPPORTED) {
        fprintf(stderr, "boot_pmix_test: FAIL: open without launcher returned %d,"
                " expected FMPL_ERR_UNSUPPORTED (%d)\n", rc, FMPL_ERR_UNSUPPORTED);
        if (rc == FMPL_SUCCESS)
            b.ops->close(&b);
        return 1;
    }
    if (dt > 0.1) {
        fprintf(stderr, "boot_pmix_test: FAIL: declining took %.3f s\n", dt);
        return 1;
    }
    /* stdout, not stderr: the driver checks that stderr stays empty. */
    printf("boot_pmix_test: unsupported without launcher ok (%.6f s)\n", dt);
    return 0;
}

/* Round 1 (plus edge cases), a second round with new keys after a second
 * fence, and a jobid agreement check. */
static void exchange(fmpl_boot_t *b)
{
    static unsigned char big[FMPL_BOOT_VALUE_MAX], got[FMPL_BOOT_VALUE_MAX + 1];
    unsigned char mine[256], want[256];
    size_t len;
    int rc, r;

    /* Round 1: a rank-dependent value, an empty value, a maximum-size one
     * and our job id. */
    fill_value(mine, b->rank, 1);
    rc = b->ops->put(b, "v1", mine, value_len(b->rank, 1));
    CHECK(rc == FMPL_SUCCESS, "put v1: %d", rc);
    rc = b->ops->put(b, "empty", NULL, 0);
    CHECK(rc == FMPL_SUCCESS, "put empty: %d", rc);
    for (size_t i = 0; i < sizeof big; i++)
        big[i] = (unsigned char)(i ^ (unsigned)b->rank);
    rc = b->ops->put(b, "big", big, sizeof big);
    CHECK(rc == FMPL_SUCCESS, "put big: %d", rc);
    rc = b->ops->put(b, "jobid", b->jobid, strlen(b->jobid) + 1);
    CHECK(rc == FMPL_SUCCESS, "put jobid: %d", rc);

    /* Argument checks, done before the fence so nothing stray is put. */
    rc = b->ops->put(b, "toolarge", big, FMPL_BOOT_VALUE_MAX + 1);
    CHECK(rc == FMPL_ERR_ARG, "put of %d bytes: %d, expected FMPL_ERR_ARG",
          FMPL_BOOT_VALUE_MAX + 1, rc);
    rc = b->ops->put(b, "", mine, 1);
    CHECK(rc == FMPL_ERR_ARG, "put with empty key: %d, expected FMPL_ERR_ARG", rc);

    rc = b->ops->fence(b);
    CHECK(rc == FMPL_SUCCESS, "fence 1: %d", rc);

    for (r = 0; r < b->size; r++) {
        fill_value(want, r, 1);
        memset(got, 0xee, sizeof got);
        len = sizeof got;
        rc = b->ops->get(b, r, "v1", got, &len);
        CHECK(rc == FMPL_SUCCESS, "get v1 of rank %d: %d", r, rc);
        CHECK(rc != FMPL_SUCCESS || (len == value_len(r, 1) && memcmp(got, want, len) == 0),
              "get v1 of rank %d: wrong value (len %zu, want %zu)", r, len, value_len(r, 1));

        len = 8;
        rc = b->ops->get(b, r, "empty", got, &len);
        CHECK(rc == FMPL_SUCCESS && len == 0, "get empty of rank %d: rc %d len %zu", r, rc, len);

        len = sizeof got;
        rc = b->ops->get(b, r, "big", got, &len);
        CHECK(rc == FMPL_SUCCESS && len == FMPL_BOOT_VALUE_MAX, "get big of rank %d: rc %d len %zu",
              r, rc, len);
        for (size_t i = 0; rc == FMPL_SUCCESS && i < FMPL_BOOT_VALUE_MAX; i++)
            if (got[i] != (unsigned char)(i ^ (unsigned)r)) {
                fail("get big of rank %d: byte %zu differs", r, i);
                break;
            }

        /* Too small a buffer: TRUNCATE, the size needed, buffer untouched. */
        memset(got, 0xee, sizeof got);
        len = 1;
        rc = b->ops->get(b, r, "big", got, &len);
        CHECK(rc == FMPL_ERR_TRUNCATE && len == FMPL_BOOT_VALUE_MAX && got[0] == 0xee,
              "short get of rank %d: rc %d len %zu", r, rc, len);

        /* A key nobody put must come back at once, not wait for it. */
        double t0 = now();
        len = sizeof got;
        rc = b->ops->get(b, r, "never-put", got, &len);
        CHECK(rc == FMPL_ERR_ARG, "get of missing key from rank %d: %d, expected FMPL_ERR_ARG", r, rc);
        CHECK(now() - t0 < 1.0, "get of missing key from rank %d took %.3f s", r, now() - t0);

        len = sizeof got;
        rc = b->ops->get(b, r, "jobid", got, &len);
        CHECK(rc == FMPL_SUCCESS && len == strlen(b->jobid) + 1 && memcmp(got, b->jobid, len) == 0,
              "rank %d has another jobid (rc %d): \"%.*s\" vs ours \"%s\"",
              r, rc, (int)(rc == FMPL_SUCCESS ? len : 0), (char *)got, b->jobid);
    }

    len = sizeof got;
    rc = b->ops->get(b, b->size, "v1", got, &len);
    CHECK(rc == FMPL_ERR_RANK, "get from rank %d (== size): %d", b->size, rc);
    len = sizeof got;
    rc = b->ops->get(b, -1, "v1", got, &len);
    CHECK(rc == FMPL_ERR_RANK, "get from rank -1: %d", rc);

    /* Round 2: new keys after another fence.  The job-wide modex is
     * normally used once, but a second round must not see stale data. */
    fill_value(mine, b->rank, 2);
    rc = b->ops->put(b, "v2", mine, value_len(b->rank, 2));
    CHECK(rc == FMPL_SUCCESS, "put v2: %d", rc);
    rc = b->ops->fence(b);
    CHECK(rc == FMPL_SUCCESS, "fence 2: %d", rc);
    for (r = b->size - 1; r >= 0; r--) {
        fill_value(want, r, 2);
        len = sizeof got;
        rc = b->ops->get(b, r, "v2", got, &len);
        CHECK(rc == FMPL_SUCCESS && len == value_len(r, 2) && memcmp(got, want, len) == 0,
              "get v2 of rank %d: rc %d len %zu", r, rc, len);
        fill_value(want, r, 1);
        len = sizeof got;
        rc = b->ops->get(b, r, "v1", got, &len);
        CHECK(rc == FMPL_SUCCESS && len == value_len(r, 1) && memcmp(got, want, len) == 0,
              "get v1 of rank %d after round 2: rc %d len %zu", r, rc, len);
    }

    /* A fence with nothing new to commit. */
    rc = b->ops->fence(b);
    CHECK(rc == FMPL_SUCCESS, "fence 3: %d", rc);
    CHECK(b->ops->dead_rank(b) == -1, "dead_rank %d after good fences", b->ops->dead_rank(b));
}

int main(int argc, char **argv)
{
    fmpl_boot_t b;
    int do_abort = 0, do_die = 0, rc;
    double t0, t_open, t_all;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--expect-unsupported") == 0)
            return expect_unsupported();
        else if (strcmp(argv[i], "--abort") == 0)
            do_abort = 1;
        else if (strcmp(argv[i], "--die") == 0)
            do_die = 1;
        else {
            fprintf(stderr, "usage: %s [--abort | --die | --expect-unsupported]\n", argv[0]);
            return 2;
        }
    }

    memset(&b, 0, sizeof b);
    t0 = now();
    rc = fmpl_boot_pmix_open(&b);
    t_open = now() - t0;
    if (rc != FMPL_SUCCESS) {
        fprintf(stderr, "boot_pmix_test: FAIL: fmpl_boot_pmix_open: %d\n", rc);
        return 1;
    }
    g_rank = b.rank;

    CHECK(b.ops != NULL && b.ops->name != NULL && strcmp(b.ops->name, "pmix") == 0,
          "ops name is not \"pmix\"");
    CHECK(b.size >= 1 && b.rank >= 0 && b.rank < b.size, "rank %d size %d", b.rank, b.size);
    CHECK(jobid_ok(b.jobid), "bad jobid \"%.*s\"", FMPL_BOOT_JOBID_MAX, b.jobid);

    /* Cross-check against what mpirun tells the process independently. */
    const char *er = getenv("OMPI_COMM_WORLD_RANK"), *es = getenv("OMPI_COMM_WORLD_SIZE");
    if (er != NULL)
        CHECK(atoi(er) == b.rank, "rank %d but OMPI_COMM_WORLD_RANK=%s", b.rank, er);
    if (es != NULL)
        CHECK(atoi(es) == b.size, "size %d but OMPI_COMM_WORLD_SIZE=%s", b.size, es);

    CHECK(b.ops->dead_rank(&b) == -1, "dead_rank is not -1");

    if (do_abort || do_die) {
        /* Everybody arrives once, then the last rank leaves abnormally
         * while the others wait in a fence that can never complete.  The
         * runtime either kills them or fails their fence; either way the
         * job must end quickly with a non-zero status. */
        rc = b.ops->fence(&b);
        CHECK(rc == FMPL_SUCCESS, "fence before abort: %d", rc);
        if (b.rank == b.size - 1) {
            printf("boot_pmix_test: rank %d %s\n", b.rank,
                   do_abort ? "aborting with code 3" : "exiting with 5, no close");
            if (do_abort) {
                b.ops->abort(&b, 3);
                fail("abort returned");
            }
            fflush(NULL);
            _exit(5);
        }
        rc = b.ops->fence(&b);
        /* Open MPI 4.1 fails this fence (PARTIAL_SUCCESS) or completes it
         * without the dead rank; the back-end must turn both into
         * FMPL_ERR_PEER and name the rank.  Then the launcher must kill
         * us: wait for that, and fail if it does not come. */
        CHECK(rc == FMPL_ERR_PEER, "fence after a peer left returned %d", rc);
        CHECK(b.ops->dead_rank(&b) == b.size - 1, "dead_rank %d, expected %d",
              b.ops->dead_rank(&b), b.size - 1);
        printf("boot_pmix_test: rank %d: fence returned %d after the peer left\n",
               b.rank, rc);
        fflush(NULL);
        sleep(20);
        fail("still alive 20 s after a peer left");
        return 1;
    }

    exchange(&b);

    b.ops->mark_finalized(&b);
    t_all = now() - t0;
    b.ops->close(&b);
    CHECK(b.priv == NULL, "close left priv set");

    if (!g_fail && b.rank == 0)
        printf("boot_pmix_test: ok: size %d jobid %s open %.3f s total %.3f s\n",
               b.size, b.jobid, t_open, t_all);
    return g_fail ? 1 : 0;
}
