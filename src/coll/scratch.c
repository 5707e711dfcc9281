/*
 * scratch.c - cached scratch buffers of the collectives, so that a
 * reduction repeated in a loop does not malloc every time.  Page-aligned
 * (messages into them copy whole pages) and kept until fmpl_finalize.
 */
#include <stdlib.h>

#include "coll/coll.h"

static struct { void *p; size_t size; } cache[FMPL_SCRATCH_N];

void *fmpl_coll_scratch(int which, size_t size)
{
    if (size <= cache[which].size)
        return cache[which].p;
    void *p = NULL;
    if (posix_memalign(&p, 4096, size ? size : 1) != 0)
        return NULL;
    free(cache[which].p);
    cache[which].p = p;
    cache[which].size = size;
    return p;
}

void fmpl_coll_scratch_free(void)
{
    for (int i = 0; i < FMPL_SCRATCH_N; i++) {
        free(cache[i].p);
        cache[i].p = NULL;
        cache[i].size = 0;
    }
}
