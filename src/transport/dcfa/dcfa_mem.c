/*
 * dcfa_mem.c - registrations and bounce slots of the verbs transport.
 *
 * A verbs registration pins the pages it covered when it was made: a
 * registration kept after the application freed its memory would read and
 * write the old pages if the same addresses were mapped again.  So a key
 * handed out by mem_reg is a registration of its own (or a reference to
 * an fmpl_alloc_mem region that covers it), closed at its mem_dereg, and
 * nothing is cached across a free - correct first; a cache that watches
 * for freed memory is a later step.  fmpl_alloc_mem memory is registered
 * once and stays registered until it is freed.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fmpl.h"
#include "core/log.h"
#include "transport/dcfa/dcfa.h"

#define ACCESS_ALL (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)

int fmpl_dcfa_mem_open(fmpl_dcfa_t *d)
{
    if (posix_memalign((void **)&d->rx, 64, FMPL_DCFA_NRECV * sizeof *d->rx) != 0 ||
        posix_memalign((void **)&d->bounce, 4096, (size_t)FMPL_DCFA_NBOUNCE * FMPL_DCFA_BOUNCE) !=
            0)
        return FMPL_ERR_NOMEM;
    memset(d->rx, 0, FMPL_DCFA_NRECV * sizeof *d->rx);
    d->rx_mr = ibv_reg_mr(d->pd, d->rx, FMPL_DCFA_NRECV * sizeof *d->rx, IBV_ACCESS_LOCAL_WRITE);
    if (!d->rx_mr)
        return fmpl_dcfa_error(d, errno, "ibv_reg_mr (receive buffers)", -1);
    d->bounce_mr = ibv_reg_mr(d->pd, d->bounce, (size_t)FMPL_DCFA_NBOUNCE * FMPL_DCFA_BOUNCE,
                              IBV_ACCESS_LOCAL_WRITE);
    if (!d->bounce_mr)
        return fmpl_dcfa_error(d, errno, "ibv_reg_mr (bounce slots)", -1);
    for (int i = 0; i < FMPL_DCFA_NBOUNCE; i++)
        d->bounce_free[i] = FMPL_DCFA_NBOUNCE - 1 - i;
    d->nbounce_free = FMPL_DCFA_NBOUNCE;
    return FMPL_SUCCESS;
}

void fmpl_dcfa_mem_close(fmpl_dcfa_t *d)
{
    for (int i = 0; i < d->nreg; i++) {
        if (d->reg[i].mr)
            ibv_dereg_mr(d->reg[i].mr);
        if (d->reg[i].allocated)
            free((void *)d->reg[i].base);
    }
    free(d->reg);
    d->reg = NULL;
    d->nreg = d->cap = 0;
    if (d->rx_mr)
        ibv_dereg_mr(d->rx_mr);
    if (d->bounce_mr)
        ibv_dereg_mr(d->bounce_mr);
    free(d->rx);
    free(d->bounce);
}

int fmpl_dcfa_bounce_get(fmpl_dcfa_t *d)
{
    return d->nbounce_free ? d->bounce_free[--d->nbounce_free] : -1;
}

void fmpl_dcfa_bounce_put(fmpl_dcfa_t *d, int slot)
{
    d->bounce_free[d->nbounce_free++] = slot;
}

/* The registration that covers [a, a + len), or -1. */
static int covering(const fmpl_dcfa_t *d, uintptr_t a, size_t len)
{
    for (int i = 0; i < d->nreg; i++)
        if (d->reg[i].mr && a >= d->reg[i].base && a + len <= d->reg[i].base + d->reg[i].len)
            return i;
    return -1;
}

/* A free entry of the table (its index), or -1 without memory. */
static int slot(fmpl_dcfa_t *d)
{
    for (int i = 0; i < d->nreg; i++)
        if (!d->reg[i].mr)
            return i;
    if (d->nreg == d->cap) {
        int cap = d->cap ? 2 * d->cap : 64;
        fmpl_dcfa_reg_t *r = realloc(d->reg, (size_t)cap * sizeof *r);
        if (!r)
            return -1;
        d->reg = r;
        d->cap = cap;
    }
    d->reg[d->nreg] = (fmpl_dcfa_reg_t){ 0 };
    return d->nreg++;
}

int fmpl_dcfa_mem_reg(fmpl_tl_t *tl, void *addr, size_t len, fmpl_tl_key_t *key)
{
    fmpl_dcfa_t *d = fmpl_dcfa_of(tl);
    uintptr_t a = (uintptr_t)addr;
    int i = covering(d, a, len);
    if (i < 0 || !d->reg[i].allocated) {
        /* a registration of its own (see above: never shared with another
         * key's, whose buffer may be freed before ours is done) */
        i = slot(d);
        if (i < 0)
            return FMPL_ERR_NOMEM;
        struct ibv_mr *mr = ibv_reg_mr(d->pd, addr, len ? len : 1, ACCESS_ALL);
        if (!mr)
            return fmpl_dcfa_error(d, errno, "ibv_reg_mr", -1);
        d->reg[i] = (fmpl_dcfa_reg_t){ .base = a, .len = len ? len : 1, .mr = mr };
    }
    d->reg[i].refs++;
    key->addr = (uint64_t)a;
    key->kind = d->reg[i].mr->rkey;
    key->id = (uint32_t)i;
    return FMPL_SUCCESS;
}

void fmpl_dcfa_mem_dereg(fmpl_tl_t *tl, const fmpl_tl_key_t *key)
{
    fmpl_dcfa_t *d = fmpl_dcfa_of(tl);
    if (key->id >= (uint32_t)d->nreg)
        return;
    fmpl_dcfa_reg_t *r = &d->reg[key->id];
    if (!r->mr || r->refs == 0)
        return;
    if (--r->refs == 0 && !r->allocated) {
        ibv_dereg_mr(r->mr);
        *r = (fmpl_dcfa_reg_t){ 0 };
    }
}

void *fmpl_dcfa_mem_alloc(fmpl_tl_t *tl, size_t len)
{
    fmpl_dcfa_t *d = fmpl_dcfa_of(tl);
    void *p = NULL;
    if (posix_memalign(&p, 4096, len ? len : 1) != 0)
        return NULL;
    int i = slot(d);
    struct ibv_mr *mr = i < 0 ? NULL : ibv_reg_mr(d->pd, p, len ? len : 1, ACCESS_ALL);
    if (!mr) {
        if (i >= 0)
            fmpl_dcfa_error(d, errno, "ibv_reg_mr (fmpl_alloc_mem)", -1);
        free(p);
        return NULL;
    }
    d->reg[i] = (fmpl_dcfa_reg_t){ .base = (uintptr_t)p, .len = len ? len : 1, .mr = mr,
                                   .allocated = 1 };
    return p;
}

int fmpl_dcfa_mem_free(fmpl_tl_t *tl, void *p)
{
    fmpl_dcfa_t *d = fmpl_dcfa_of(tl);
    for (int i = 0; i < d->nreg; i++)
        if (d->reg[i].mr && d->reg[i].allocated && d->reg[i].base == (uintptr_t)p) {
            ibv_dereg_mr(d->reg[i].mr);
            free(p);
            d->reg[i] = (fmpl_dcfa_reg_t){ 0 };
            return FMPL_SUCCESS;
        }
    return FMPL_ERR_ARG;
}

int fmpl_dcfa_local(fmpl_dcfa_t *d, void *addr, size_t len, int access, uint32_t *lkey,
                    struct ibv_mr **own)
{
    *own = NULL;
    /* only fmpl_alloc_mem's: another key's registration may be closed
     * (its receive done) while our request still reads through it */
    int i = covering(d, (uintptr_t)addr, len);
    if (i >= 0 && d->reg[i].allocated) {
        *lkey = d->reg[i].mr->lkey;
        return FMPL_SUCCESS;
    }
    struct ibv_mr *mr = ibv_reg_mr(d->pd, addr, len ? len : 1, access);
    if (!mr)
        return fmpl_dcfa_error(d, errno, "ibv_reg_mr", -1);
    *own = mr;
    *lkey = mr->lkey;
    return FMPL_SUCCESS;
}
