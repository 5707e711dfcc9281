/*
 * pingpong.c - rank 0 sends a message to rank 1, which sends it back;
 * repeat, time it, check the data.
 *
 *   fmplrun -n 2 examples/pingpong [bytes [iterations]]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fmpl.h>

static void check(int rc, const char *what)
{
    if (rc != FMPL_SUCCESS) {
        fprintf(stderr, "pingpong: %s: %s\n", what, fmpl_strerror(rc));
        fmpl_abort(1);
    }
}

int main(int argc, char **argv)
{
    size_t bytes = argc > 1 ? strtoull(argv[1], NULL, 0) : 8;
    int iters = argc > 2 ? atoi(argv[2]) : 1000;
    const int mai = 0;                  /* the matching-area index we use */

    int rc = fmpl_init(1);
    if (rc != FMPL_SUCCESS) {
        fprintf(stderr, "pingpong: fmpl_init: %s\n", fmpl_strerror(rc));
        return 1;
    }
    int rank = fmpl_rank();
    if (fmpl_size() < 2) {
        if (rank == 0)
            fprintf(stderr, "pingpong: run with 2 processes: fmplrun -n 2 %s\n", argv[0]);
        fmpl_finalize();
        return 1;
    }

    unsigned char *buf = malloc(bytes ? bytes : 1);
    if (!buf)
        fmpl_abort(1);
    for (size_t i = 0; i < bytes; i++)
        buf[i] = (unsigned char)(i * 7 + 1);

    double t0 = fmpl_wtime();
    for (int it = 0; it < iters && rank < 2; it++) {
        if (rank == 0) {
            check(fmpl_send(buf, bytes, 1, mai), "send");
            check(fmpl_recv(buf, bytes, 1, mai), "recv");
        } else {
            check(fmpl_recv(buf, bytes, 0, mai), "recv");
            check(fmpl_send(buf, bytes, 0, mai), "send");
        }
    }
    double t = fmpl_wtime() - t0;

    for (size_t i = 0; i < bytes; i++)
        if (buf[i] != (unsigned char)(i * 7 + 1)) {
            fprintf(stderr, "pingpong: rank %d: bad byte %zu\n", rank, i);
            fmpl_abort(1);
        }
    if (rank == 0 && iters > 0)
        printf("%zu bytes: %.2f us one way, %.1f MB/s\n", bytes,
               t / (2.0 * iters) * 1e6, 2.0 * iters * bytes / t / 1e6);

    free(buf);
    check(fmpl_finalize(), "finalize");
    return 0;
}
