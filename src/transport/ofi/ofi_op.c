/*
 * ofi_op.c - the contexts of RMA operations in flight.
 *
 * A completion names its operation by the context it was posted with.
 * Posting the caller's comp itself would let a completion that comes
 * after a wait gave up on a dead peer (ops->forget) count down memory
 * that has gone - a request reused, a stack frame - so each operation
 * gets a record that points at its comp, and forgetting a comp clears
 * the pointers of its records.  Records come from blocks kept until
 * close (a record's address must stay valid while libfabric holds it),
 * under a lock of their own: posts come from the application's threads,
 * completions from whoever makes progress (the ticker too).
 */
#include <stdlib.h>

#include "fmpl.h"
#include "transport/ofi/ofi.h"

#define OPS_PER_BLOCK 256

struct fmpl_ofi_op_block {
    fmpl_ofi_op_block_t *next;
    fmpl_ofi_op_t op[OPS_PER_BLOCK];
};

fmpl_ofi_op_t *fmpl_ofi_op_start(fmpl_ofi_t *o, fmpl_tl_comp_t *c)
{
    pthread_mutex_lock(&o->op_lock);
    if (!o->op_free) {
        fmpl_ofi_op_block_t *b = malloc(sizeof *b);
        if (!b) {
            pthread_mutex_unlock(&o->op_lock);
            return NULL;
        }
        b->next = o->op_blocks;
        o->op_blocks = b;
        for (int i = 0; i < OPS_PER_BLOCK; i++) {
            b->op[i].comp = NULL;
            b->op[i].next = i + 1 < OPS_PER_BLOCK ? &b->op[i + 1] : NULL;
        }
        o->op_free = b->op;
    }
    fmpl_ofi_op_t *op = o->op_free;
    o->op_free = op->next;
    op->comp = c;
    __atomic_fetch_add(&c->pending, 1, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&o->op_lock);
    return op;
}

void fmpl_ofi_op_end(fmpl_ofi_t *o, fmpl_ofi_op_t *op, int status)
{
    pthread_mutex_lock(&o->op_lock);
    fmpl_tl_comp_t *c = op->comp;
    if (c) {
        if (status != FMPL_SUCCESS && c->status == FMPL_SUCCESS)
            c->status = status;
        /* release: a waiter that reads pending with acquire order sees
         * the status (transport.h) */
        __atomic_fetch_sub(&c->pending, 1, __ATOMIC_RELEASE);
    }
    op->comp = NULL;
    op->next = o->op_free;
    o->op_free = op;
    pthread_mutex_unlock(&o->op_lock);
}

void fmpl_ofi_op_forget(fmpl_ofi_t *o, fmpl_tl_comp_t *c)
{
    pthread_mutex_lock(&o->op_lock);
    for (fmpl_ofi_op_block_t *b = o->op_blocks; b; b = b->next)
        for (int i = 0; i < OPS_PER_BLOCK; i++)
            if (b->op[i].comp == c)
                b->op[i].comp = NULL;
    pthread_mutex_unlock(&o->op_lock);
}

void fmpl_ofi_op_cleanup(fmpl_ofi_t *o)
{
    while (o->op_blocks) {
        fmpl_ofi_op_block_t *b = o->op_blocks;
        o->op_blocks = b->next;
        free(b);
    }
    o->op_free = NULL;
}
