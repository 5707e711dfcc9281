/*
 * launch_boot.c - test of fmplrun and the `local` bootstrap, without the
 * rest of the library.
 *
 *   fmplrun -n N launch_boot               modex + 1000 fences, exit 0
 *   fmplrun -n N launch_boot stuck R       rank R never fences (kill it:
 *                                          the others must get FMPL_ERR_PEER)
 *   fmplrun -n N launch_boot exit R CODE   rank R exits with CODE, unfinalized
 *   fmplrun -n N launch_boot abort R CODE  rank R calls the boot abort
 *
 * Ranks that see a fence fail print how long it took and exit 3.
 */
#include "base/boot.h"
#include "fmpl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NFENCES 1000

static fmpl_boot_t b;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void fail(const char *what, int rc)
{
    fprintf(stderr, "launch_boot: rank %d: %s: error %d\n", b.rank, what, rc);
    exit(1);
}

/* Fence that is expected to fail because a peer is gone. */
static void fence_until_peer_dies(void)
{
    double t0 = now();
    int rc;

    while ((rc = b.ops->fence(&b)) == FMPL_SUCCESS)
        ;
    if (rc != FMPL_ERR_PEER)
        fail("fence", rc);
    printf("launch_boot: rank %d: fence -> FMPL_ERR_PEER after %.3f s, dead rank %d\n",
           b.rank, now() - t0, b.ops->dead_rank(&b));
    exit(3);
}

/* put / fence / get: every rank's values, and the argument errors. */
static void check_modex(void)
{
    char key[40], val[FMPL_BOOT_VALUE_MAX + 1], got[FMPL_BOOT_VALUE_MAX];
    size_t len;
    int rc;

    for (int i = 0; i < 16; i++) {
        snprintf(key, sizeof key, "k%d", i);
        snprintf(val, sizeof val, "old %d", b.rank);
        if ((rc = b.ops->put(&b, key, val, strlen(val) + 1)) != FMPL_SUCCESS)
            fail("put", rc);
    }
    /* Overwrite, and a full-size value. */
    snprintf(val, sizeof val, "rank %d", b.rank);
    if ((rc = b.ops->put(&b, "k0", val, strlen(val) + 1)) != FMPL_SUCCESS)
        fail("put again", rc);
    memset(val, 'a' + b.rank % 26, FMPL_BOOT_VALUE_MAX);
    if ((rc = b.ops->put(&b, "k15", val, FMPL_BOOT_VALUE_MAX)) != FMPL_SUCCESS)
        fail("put max", rc);
    /* Rank 0 alone tries a 17th key: it prints one "fmpl:" line. */
    if ((b.rank == 0 && b.ops->put(&b, "k16", "x", 1) != FMPL_ERR_NOMEM) ||
        b.ops->put(&b, "k1", val, FMPL_BOOT_VALUE_MAX + 1) != FMPL_ERR_ARG ||
        b.ops->put(&b, "a-key-of-thirty-two-characters!!", "x", 1) != FMPL_ERR_ARG)
        fail("put limits", 0);
    if ((rc = b.ops->fence(&b)) != FMPL_SUCCESS)
        fail("fence", rc);

    for (int r = 0; r < b.size; r++) {
        snprintf(val, sizeof val, "rank %d", r);
        len = sizeof got;
        rc = b.ops->get(&b, r, "k0", got, &len);
        if (rc != FMPL_SUCCESS || len != strlen(val) + 1 || strcmp(got, val) != 0)
            fail("get k0", rc);
        len = sizeof got;
        rc = b.ops->get(&b, r, "k15", got, &len);
        if (rc != FMPL_SUCCESS || len != FMPL_BOOT_VALUE_MAX ||
            got[0] != 'a' + r % 26 || got[len - 1] != 'a' + r % 26)
            fail("get k15", rc);
        len = 3;
        if (b.ops->get(&b, r, "k15", got, &len) != FMPL_ERR_TRUNCATE ||
            len != FMPL_BOOT_VALUE_MAX)
            fail("get truncate", 0);
        len = sizeof got;
        if (b.ops->get(&b, r, "nokey", got, &len) != FMPL_ERR_ARG)
            fail("get missing", 0);
    }
    len = sizeof got;
    if (b.ops->get(&b, b.size, "k0", got, &len) != FMPL_ERR_RANK)
        fail("get rank", 0);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    int who = argc > 2 ? atoi(argv[2]) : -1;
    int code = argc > 3 ? atoi(argv[3]) : 1;
    double t0;
    int rc;

    rc = fmpl_boot_local_open(&b);
    if (rc == FMPL_ERR_UNSUPPORTED) {
        printf("launch_boot: not started by fmplrun, nothing to test\n");
        return 0;
    }
    if (rc != FMPL_SUCCESS)
        fail("fmpl_boot_local_open", rc);
    if (b.ops->dead_rank(&b) != -1)
        fail("dead_rank at start", 0);

    check_modex();

    if (b.rank == who) {
        if (strcmp(mode, "stuck") == 0)
            for (;;)
                pause();
        if (strcmp(mode, "exit") == 0)
            exit(code);
        if (strcmp(mode, "abort") == 0)
            b.ops->abort(&b, code);
    }
    if (who >= 0)
        fence_until_peer_dies();

    t0 = now();
    for (int i = 0; i < NFENCES; i++)
        if ((rc = b.ops->fence(&b)) != FMPL_SUCCESS)
            fail("fence loop", rc);
    printf("launch_boot: rank %d of %d ok, %d fences in %.1f ms\n",
           b.rank, b.size, NFENCES, (now() - t0) * 1e3);
    b.ops->mark_finalized(&b);
    b.ops->close(&b);
    return 0;
}
