/*
 * neighbours - traffic with a few peers or with all of them: what a
 * transport that connects on first use creates (FMPL_VERBOSE=1 has the
 * verbs transport say its queue pairs and pinned memory at the end).
 *
 *   neighbours [-p ring|all] [-R ROUNDS] [-s SIZE]
 *     -p  ring: each rank exchanges with its left and right neighbours
 *         only (a 1-D halo; 2 ranks: one neighbour); all: with every
 *         other rank (default ring)
 *     -R  rounds (default 4)
 *     -s  message size (default 4K)
 *
 * Every byte received is checked.  Only point-to-point calls, so that no
 * collective's partners add to the peers a rank talks to.
 */
#include "prog.h"

int main(int argc, char **argv)
{
    const char *pattern = "ring";
    long rounds = 4;
    size_t size = 4096;
    struct prog_opt opts[] = {
        {'p', OPT_STR, &pattern, "ring or all"},
        {'R', OPT_INT, &rounds, "rounds (default 4)"},
        {'s', OPT_SIZE, &size, "message size (default 4K)"},
    };
    prog_parse(argc, argv, opts, 3);
    int all = strcmp(pattern, "all") == 0;
    CHECK(all || strcmp(pattern, "ring") == 0, "-p %s: ring or all", pattern);
    CHECK(rounds >= 1 && size >= 1, "bad options");
    prog_init("neighbours", 2);

    int np = prog_np, me = prog_me, n = 0;
    int *peer = calloc((size_t)np, sizeof *peer);
    CHECK(peer != NULL, "out of memory");
    if (all) {
        for (int r = 0; r < np; r++)
            if (r != me)
                peer[n++] = r;
    } else if (np > 1) {
        peer[n++] = (me + 1) % np;
        if ((me + np - 1) % np != peer[0])
            peer[n++] = (me + np - 1) % np;
    }
    unsigned char *sbuf = malloc(size * (size_t)(n ? n : 1));
    unsigned char *rbuf = malloc(size * (size_t)(n ? n : 1));
    fmpl_request_t *req = calloc((size_t)(n ? n : 1), sizeof *req);
    CHECK(sbuf && rbuf && req, "out of memory");
    for (long k = 0; k < rounds; k++) {
        for (int i = 0; i < n; i++)
            CHECK_RC(fmpl_irecv(rbuf + (size_t)i * size, size, peer[i], 1, &req[i]),
                     FMPL_SUCCESS);
        for (int i = 0; i < n; i++) {
            pat_fill(sbuf + (size_t)i * size, size, (uint64_t)k, me, peer[i]);
            CHECK_RC(fmpl_send(sbuf + (size_t)i * size, size, peer[i], 1), FMPL_SUCCESS);
        }
        for (int i = 0; i < n; i++) {
            CHECK_RC(fmpl_wait_irecv(&req[i]), FMPL_SUCCESS);
            long bad = pat_find_error(rbuf + (size_t)i * size, size, (uint64_t)k, peer[i], me);
            CHECK(bad < 0, "round %ld, from rank %d: wrong byte at %ld", k, peer[i], bad);
        }
    }
    if (me == 0)
        printf("neighbours: %d ranks, %s, %d peers each, %ld rounds of %zu bytes\n", np,
               pattern, n, rounds, size);
    free(sbuf);
    free(rbuf);
    free(req);
    free(peer);
    return prog_finish();
}
