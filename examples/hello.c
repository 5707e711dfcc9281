/*
 * hello.c - every process prints its rank, then passes its rank to the
 * right-hand neighbour of a ring and checks what came from the left.
 *
 *   fmplrun -n 4 examples/hello
 *
 * A blocking send returns only once the matching receive is posted, so if
 * every rank sent first the ring would deadlock.  Each rank therefore
 * posts its receive with fmpl_irecv first, then sends, then waits.
 */
#include <stdio.h>
#include <stdlib.h>

#include <fmpl.h>

#define CHECK(call)                                                         \
    do {                                                                    \
        int rc_ = (call);                                                   \
        if (rc_ != FMPL_SUCCESS) {                                          \
            fprintf(stderr, "hello: %s: %s (%s)\n", #call,                  \
                    fmpl_strerror(rc_), fmpl_error_name(rc_));              \
            if (fmpl_rank() >= 0)                                           \
                fmpl_abort(1);                                              \
            exit(1);                                                        \
        }                                                                   \
    } while (0)

int main(void)
{
    CHECK(fmpl_init(1));                /* one matching-area index: 0 */

    int rank = fmpl_rank(), size = fmpl_size();
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    printf("hello from rank %d of %d\n", rank, size);

    int got = -1;
    fmpl_request_t req;
    CHECK(fmpl_irecv(&got, sizeof got, left, 0, &req));
    CHECK(fmpl_send(&rank, sizeof rank, right, 0));
    CHECK(fmpl_wait_irecv(&req));

    if (got != left) {
        fprintf(stderr, "hello: rank %d got %d from rank %d\n", rank, got, left);
        fmpl_abort(1);
    }
    printf("rank %d received %d from rank %d\n", rank, got, left);

    CHECK(fmpl_finalize());
    return 0;
}
