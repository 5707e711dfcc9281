/*
 * rsag.c - the large-message building blocks of reduce and allreduce
 * (Rabenseifner): fold to a power of two, reduce-scatter by recursive
 * halving, allgather by recursive doubling, unfold.
 *
 * With p the largest power of two <= n and rem = n - p, the first 2 * rem
 * ranks pair up: the even one hands its whole vector to the odd one and
 * sits out ("folded").  The p survivors get new ranks 0..p-1; vector
 * blocks 0..p-1 are split by element count.  Recursive halving leaves the
 * fully reduced block `newrank` with survivor `newrank`; each block is
 * reduced by one owner in one order, so every process that later gets it
 * gets bitwise the same values.
 */
#include "coll/coll.h"

void fmpl_fold_init(const fmpl_comm_rec_t *c, fmpl_fold_t *f)
{
    int p = 1;
    while (p * 2 <= c->size)
        p *= 2;
    f->p = p;
    f->rem = c->size - p;
    if (c->rank < 2 * f->rem)
        f->newrank = c->rank % 2 ? c->rank / 2 : -1;
    else
        f->newrank = c->rank - f->rem;
}

int fmpl_fold_rank(const fmpl_fold_t *f, int newrank)
{
    return newrank < f->rem ? 2 * newrank + 1 : newrank + f->rem;
}

static size_t blk(const fmpl_red_t *v, const fmpl_fold_t *f, int b)
{
    return (size_t)((uint64_t)b * (uint64_t)v->count / (uint64_t)f->p) * v->esize;
}

/* the folded even rank gives its vector to its odd neighbour */
int fmpl_fold(const fmpl_comm_rec_t *c, const fmpl_fold_t *f, const fmpl_red_t *v)
{
    if (c->rank >= 2 * f->rem)
        return FMPL_SUCCESS;
    size_t len = (size_t)v->count * v->esize;
    if (f->newrank < 0)
        return fmpl_coll_sendrecv(c, v->buf, len, c->rank + 1, NULL, 0, -1, FMPL_CI_A);
    int rc = fmpl_coll_sendrecv(c, NULL, 0, -1, v->work, len, c->rank - 1, FMPL_CI_A);
    if (rc == FMPL_SUCCESS)
        fmpl_red_apply(v, v->buf, v->work, v->count);
    return rc;
}

int fmpl_fold_reduce_scatter(const fmpl_comm_rec_t *c, const fmpl_fold_t *f,
                             const fmpl_red_t *v)
{
    if (f->newrank < 0)
        return FMPL_SUCCESS;
    uint8_t *b = v->buf, *w = v->work;
    int lo = 0;
    for (int mask = f->p / 2; mask > 0; mask /= 2) {
        int up = f->newrank & mask;
        int keep = up ? lo + mask : lo, give = up ? lo : lo + mask;
        size_t ko = blk(v, f, keep), kl = blk(v, f, keep + mask) - ko;
        size_t go = blk(v, f, give), gl = blk(v, f, give + mask) - go;
        int rc = fmpl_coll_sendrecv(c, b + go, gl, fmpl_fold_rank(f, f->newrank ^ mask),
                                    w + ko, kl, fmpl_fold_rank(f, f->newrank ^ mask),
                                    FMPL_CI_A);
        if (rc != FMPL_SUCCESS)
            return rc;
        fmpl_red_apply(v, b + ko, w + ko, (int)(kl / v->esize));
        lo = keep;
    }
    return FMPL_SUCCESS;
}

int fmpl_allgather_blocks(const fmpl_comm_rec_t *c, const fmpl_fold_t *f, const fmpl_red_t *v)
{
    if (f->newrank < 0)
        return FMPL_SUCCESS;
    uint8_t *b = v->buf;
    for (int mask = 1; mask < f->p; mask *= 2) {
        int partner = f->newrank ^ mask;
        int mine = f->newrank & ~(mask - 1), theirs = partner & ~(mask - 1);
        size_t mo = blk(v, f, mine), ml = blk(v, f, mine + mask) - mo;
        size_t to = blk(v, f, theirs), tl = blk(v, f, theirs + mask) - to;
        int rc = fmpl_coll_sendrecv(c, b + mo, ml, fmpl_fold_rank(f, partner), b + to, tl,
                                    fmpl_fold_rank(f, partner), FMPL_CI_A);
        if (rc != FMPL_SUCCESS)
            return rc;
    }
    return FMPL_SUCCESS;
}

/* the odd neighbour gives the result back to its folded even rank */
int fmpl_unfold(const fmpl_comm_rec_t *c, const fmpl_fold_t *f, const fmpl_red_t *v)
{
    if (c->rank >= 2 * f->rem)
        return FMPL_SUCCESS;
    size_t len = (size_t)v->count * v->esize;
    if (f->newrank < 0)
        return fmpl_coll_sendrecv(c, NULL, 0, -1, v->buf, len, c->rank + 1, FMPL_CI_A);
    return fmpl_coll_sendrecv(c, v->buf, len, c->rank - 1, NULL, 0, -1, FMPL_CI_A);
}

/* the reduced block of survivor `newrank`: offset and length in bytes */
void fmpl_block_of(const fmpl_fold_t *f, const fmpl_red_t *v, int newrank, size_t *off,
                   size_t *len)
{
    *off = blk(v, f, newrank);
    *len = blk(v, f, newrank + 1) - *off;
}
