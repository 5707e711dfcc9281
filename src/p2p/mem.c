/*
 * mem.c - fmpl_alloc_mem / fmpl_free_mem: memory the transport lets peers
 * write directly (on shm: one memcpy by the sender, no system call).
 */
#include "fmpl.h"
#include "p2p/state.h"

void *fmpl_alloc_mem(size_t size)
{
    if (!fmpl_g.initialized)
        return NULL;
    fmpl_enter();
    void *p = fmpl_tl_mem_alloc(&fmpl_g.tl, size);
    fmpl_leave();
    return p;
}

int fmpl_free_mem(void *p)
{
    if (!fmpl_g.initialized)
        return FMPL_ERR_NOT_INIT;
    if (!p)
        return FMPL_ERR_ARG;
    fmpl_enter();
    int rc = fmpl_tl_mem_free(&fmpl_g.tl, p);
    fmpl_leave();
    return rc;
}
