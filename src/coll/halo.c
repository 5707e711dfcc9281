/*
 * halo.c - fmpl_halo_init / fmpl_halo_do / fmpl_halo_free: the hybrid
 * paper's reflect_init / reflect_do as a library call.
 *
 * Init (collective) agrees on a halo slot (its mailbox lines), registers
 * the array, allocates a landing area for packed faces, and gathers every
 * member's geometry and keys, so that each sender knows exactly where in
 * its neighbour's array each face goes.  Nothing is exchanged again.
 *
 * Do, per face, is FMPL's receiver-initiated protocol with the address
 * known in advance: the receiver writes READY (its shadow may be
 * overwritten: the user is done reading it) into the sender's line; the
 * sender writes the face straight into the shadow (one put, one strided
 * put, or packed into the landing area) and then DONE, ordered after the
 * data.  One round trip, and every READY goes out at the start.  Sequence
 * numbers come from the (peer, index) slots, so a freed and reused halo
 * slot cannot mistake an old DONE for a new one.
 *
 * By default dimensions go one after the other, each face spanning the
 * shadows of the dimensions before it, which fills edges and corners.
 *
 * Start / test / wait split Do: start posts the READYs and sends what
 * its neighbours are ready for; each test (and the wait) moves whatever
 * can move without waiting, phase after phase.  Do is start + wait.
 */
#include <stdlib.h>
#include <string.h>

#include "coll/halo.h"
#include "base/log.h"
#include "p2p/progress.h"

#define READY_OFF 0
#define DONE_OFF  32

static uint64_t used[(4096 + 63) / 64];     /* halo slots in use here */

void fmpl_halo_forget(void) { memset(used, 0, sizeof used); }

/* offset of face (d, side) in g's landing area: packed faces in order */
static size_t landing_offset(const fmpl_halo_geom_t *g, int d, int side, unsigned caps,
                             size_t *total)
{
    size_t off = 0, at = 0;
    for (int e = 0; e < g->ndims; e++)
        for (int s = 0; s < 2; s++) {
            if (g->nbr[2 * e + s] < 0 || g->shadow[e] == 0)
                continue;
            fmpl_shape_t sh;
            fmpl_halo_face_shape(g, e, s, 0, &sh);
            if (e == d && s == side)
                at = off;
            if (fmpl_halo_shape_kind(&sh, caps) == FMPL_HALO_STRIDE)
                off += fmpl_shape_bytes(&sh);
        }
    if (total)
        *total = off;
    return at;
}

static int local_check(void *array, size_t esize, int ndims, const int extent[],
                       const int shadow[], const int nbr[], const fmpl_comm_rec_t *c)
{
    if (ndims < 2 || ndims > FMPL_HALO_MAXD || !extent || !shadow || !nbr ||
        esize == 0 || esize > (1u << 30))
        return FMPL_ERR_ARG;
    /* the array's bytes, shadows included, must be a size: the plan's
     * offsets are computed in size_t (clang saw this product unused) */
    size_t total = esize;
    for (int d = 0; d < ndims; d++) {
        if (extent[d] < 1 || shadow[d] < 0 || shadow[d] > extent[d])
            return FMPL_ERR_ARG;
        size_t dim = (size_t)extent[d] + 2 * (size_t)shadow[d];
        if (total > SIZE_MAX / dim)
            return FMPL_ERR_ARG;
        total *= dim;
        for (int s = 0; s < 2; s++)
            if (nbr[2 * d + s] < -1 || nbr[2 * d + s] >= c->size)
                return FMPL_ERR_RANK;
    }
    return array ? FMPL_SUCCESS : FMPL_ERR_BUFFER;
}

static void halo_release(struct fmpl_halo *h)
{
    for (int i = 0; i < h->nsend; i++)
        free(h->send[i].pack);
    if (h->reg_array)
        fmpl_tl_mem_dereg(&fmpl_g.tl, &h->me.array);
    if (h->reg_landing)
        fmpl_tl_mem_dereg(&fmpl_g.tl, &h->me.landing);
    if (h->landing)
        fmpl_tl_mem_free(&fmpl_g.tl, h->landing);
    free(h);
}

static size_t array_bytes(const fmpl_halo_geom_t *g)
{
    size_t n = (size_t)g->esize;
    for (int d = 0; d < g->ndims; d++)
        n *= (size_t)g->ext[d] + 2 * (size_t)g->shadow[d];
    return n;
}

/* Work out the faces once everybody's geometry is known. */
static int plan(struct fmpl_halo *h, const fmpl_halo_geom_t *all)
{
    fmpl_comm_rec_t *c = h->comm;
    unsigned caps = fmpl_g.tl.caps;
    const fmpl_halo_geom_t *g = &h->me;
    int base = fmpl_halo_index(h->slot);
    for (int d = 0; d < g->ndims; d++) {
        fmpl_shape_t sh;
        fmpl_halo_face_shape(g, d, 0, 0, &sh);
        h->kind[d] = g->shadow[d] ? fmpl_halo_shape_kind(&sh, caps) : FMPL_HALO_NONE;
        if (!g->shadow[d])
            continue;
        for (int s = 0; s < 2; s++) {
            int r = g->nbr[2 * d + s];
            if (r < 0)
                continue;
            /* we receive face (d, s) from r */
            fmpl_face_t *f = &h->recv[h->nrecv++];
            *f = (fmpl_face_t){ .d = d, .side = s, .peer = c->ranks[r],
                                .idx = base + 2 * d + s };
            fmpl_halo_face_shape(g, d, s, 0, &f->dst);
            f->kind = fmpl_halo_shape_kind(&f->dst, caps);
            f->land_off = landing_offset(g, d, s, caps, NULL);
            /* and send r the slab for its face (d, 1 - s) */
            fmpl_face_t *o = &h->send[h->nsend++];
            *o = (fmpl_face_t){ .d = d, .side = 1 - s, .peer = c->ranks[r],
                                .idx = base + 2 * d + 1 - s };
            fmpl_halo_face_shape(g, d, 1 - s, 1, &o->src);
            fmpl_halo_face_shape(&all[r], d, 1 - s, 0, &o->dst);
            o->kind = fmpl_halo_shape_kind(&o->dst, caps);
            if (o->kind == FMPL_HALO_STRIDE) {
                o->key = all[r].landing;
                o->land_off = landing_offset(&all[r], d, 1 - s, caps, NULL);
                o->pack = malloc(fmpl_shape_bytes(&o->src));
                if (!o->pack)
                    return FMPL_ERR_NOMEM;
            } else {
                o->key = all[r].array;
            }
        }
    }
    return FMPL_SUCCESS;
}

int fmpl_halo_init(void *array, size_t elem_size, int ndims, const int extent[],
                   const int shadow[], const int nbr[], unsigned flags, fmpl_comm_t comm,
                   fmpl_halo_t *halo)
{
    fmpl_comm_rec_t *c;
    int rc = fmpl_coll_begin(comm, &c);
    if (rc != FMPL_SUCCESS)
        return rc;
    if (!halo)
        return FMPL_ERR_ARG;
    *halo = NULL;
    /* a bad argument on one member must not leave the others waiting:
     * everybody takes part and everybody returns the error */
    int bad = local_check(array, elem_size, ndims, extent, shadow, nbr, c);
    if (flags & ~FMPL_HALO_FACES)
        bad = FMPL_ERR_ARG;
    struct fmpl_halo *h = calloc(1, sizeof *h);
    fmpl_halo_geom_t *all = calloc((size_t)c->size, sizeof *all);
    int *oks = calloc((size_t)c->size, sizeof *oks);
    if (!h || !all || !oks) {
        free(h);
        free(all);
        free(oks);
        return FMPL_ERR_NOMEM;          /* cannot take part: like a dead member */
    }
    fmpl_enter();
    h->comm = c;
    h->handle = comm;
    h->array = array;
    fmpl_halo_geom_t *g = &h->me;
    g->esize = (int32_t)elem_size;
    g->ndims = bad ? 0 : ndims;
    g->flags = (int32_t)flags;
    g->pad = bad;
    for (int d = 0; !bad && d < ndims; d++) {
        g->ext[d] = extent[d];
        g->shadow[d] = shadow[d];
        g->nbr[2 * d] = nbr[2 * d];
        g->nbr[2 * d + 1] = nbr[2 * d + 1];
    }
    fmpl_tl_t *tl = &fmpl_g.tl;
    if (!bad) {
        bad = fmpl_tl_mem_reg(tl, array, array_bytes(g), &g->array);
        h->reg_array = bad == FMPL_SUCCESS;
        landing_offset(g, -1, -1, tl->caps, &h->landing_len);
        if (!bad && h->landing_len) {
            h->landing = fmpl_tl_mem_alloc(tl, h->landing_len);
            bad = h->landing ? fmpl_tl_mem_reg(tl, h->landing, h->landing_len, &g->landing)
                             : FMPL_ERR_NOMEM;
            h->reg_landing = h->landing && bad == FMPL_SUCCESS;
        }
        g->pad = bad;
    }
    h->slot = -1;
    rc = fmpl_coll_agree_slot(c, used, fmpl_coll_g.max_halos, &h->slot);
    if (rc == FMPL_SUCCESS) {
        all[c->rank] = *g;
        rc = fmpl_coll_allgather(c, all, sizeof *all);
    }
    /* a member with a bad argument gets its own code, the others
     * FMPL_ERR_ARG: everybody fails, nobody waits */
    int who = -1;
    if (rc == FMPL_SUCCESS && all[c->rank].pad)
        rc = all[c->rank].pad;
    for (int q = 0; rc == FMPL_SUCCESS && q < c->size; q++)
        if (all[q].pad)
            rc = FMPL_ERR_ARG;
    if (rc == FMPL_SUCCESS && h->slot < 0)
        rc = FMPL_ERR_LIMIT;
    if (rc == FMPL_SUCCESS && (rc = fmpl_halo_check(all, c->size, &who)) != FMPL_SUCCESS)
        fmpl_log_err("fmpl_halo_init: the description of rank %d does not fit its "
                     "neighbours'", who);
    if (rc == FMPL_SUCCESS) {
        /* planning allocates: agree on its outcome too, so that nobody
         * keeps a halo its neighbours do not have */
        oks[c->rank] = plan(h, all);
        rc = fmpl_coll_allgather(c, oks, sizeof *oks);
        for (int q = 0; rc == FMPL_SUCCESS && q < c->size; q++)
            if (oks[q] != FMPL_SUCCESS)
                rc = q == c->rank ? oks[q] : FMPL_ERR_NOMEM;
    }
    free(all);
    free(oks);
    if (rc == FMPL_SUCCESS) {
        used[h->slot / 64] |= 1ull << (h->slot % 64);
        *halo = h;
    } else {
        halo_release(h);
    }
    fmpl_leave();
    return rc;
}

/* Send face f if its receiver is ready: 1 once written. */
static int try_send(struct fmpl_halo *h, fmpl_face_t *f)
{
    fmpl_tl_t *tl = &fmpl_g.tl;
    volatile uint8_t *line = fmpl_tl_mbox_in(tl, f->peer, f->idx);
    if ((uint32_t)fmpl_line_word(line, READY_OFF) != f->seq)
        return 0;
    const uint8_t *src = h->array + f->src.base;
    int rc;
    /* contiguous faces are bulk transfers to several peers at once */
    if (f->kind == FMPL_HALO_STRIDE) {
        fmpl_shape_pack(f->pack, h->array, &f->src);
        fmpl_tl_work(tl, FMPL_TL_WORK_PACK, fmpl_shape_bytes(&f->src));
        rc = fmpl_tl_put(tl, f->peer, f->pack, fmpl_shape_bytes(&f->src), &f->key, f->land_off,
                         FMPL_TL_PUT_FACE, &h->comp);
    } else if (f->src.nlev == 0) {
        rc = fmpl_tl_put(tl, f->peer, src, f->src.blk, &f->key, f->dst.base, FMPL_TL_PUT_FACE,
                         &h->comp);
    } else {
        /* block-stride: the inner level in one strided put */
        int in = f->src.nlev - 1;
        size_t outer = f->src.nlev == 2 ? f->src.cnt[0] : 1;
        rc = FMPL_SUCCESS;
        for (size_t a = 0; a < outer && rc == FMPL_SUCCESS; a++) {
            size_t so = f->src.nlev == 2 ? a * f->src.stride[0] : 0;
            size_t dof = f->dst.nlev == 2 ? a * f->dst.stride[0] : 0;
            rc = fmpl_tl_put_strided(tl, f->peer, src + so, f->src.blk, f->src.cnt[in],
                                     f->src.stride[in], &f->key, f->dst.base + dof,
                                     f->dst.stride[in], &h->comp);
        }
    }
    if (rc != FMPL_SUCCESS)
        return rc;
    uint64_t done = f->seq;
    rc = fmpl_tl_notify(tl, f->peer, f->idx, DONE_OFF, &done, sizeof done, 0, &h->comp);
    return rc == FMPL_SUCCESS ? 1 : rc;
}

/* Has face f arrived?  1 once it is in the shadow. */
static int try_recv(struct fmpl_halo *h, fmpl_face_t *f)
{
    volatile uint8_t *line = fmpl_tl_mbox_in(&fmpl_g.tl, f->peer, f->idx);
    if ((uint32_t)fmpl_line_word(line, DONE_OFF) != f->seq)
        return 0;
    if (f->kind == FMPL_HALO_STRIDE) {
        fmpl_shape_unpack(h->array, h->landing + f->land_off, &f->dst);
        fmpl_tl_work(&fmpl_g.tl, FMPL_TL_WORK_PACK, fmpl_shape_bytes(&f->dst));
    }
    return 1;
}

/* One pass over the faces of dimension d (all for d < 0): *left of them
 * still to go, *moved went now; < 0 on an error. */
static int pass(struct fmpl_halo *h, int d, int *left, int *moved)
{
    *left = *moved = 0;
    for (int i = 0; i < h->nsend + h->nrecv; i++) {
        int is_send = i < h->nsend;
        fmpl_face_t *f = is_send ? &h->send[i] : &h->recv[i - h->nsend];
        if (f->state || (d >= 0 && f->d != d))
            continue;
        int rc = is_send ? try_send(h, f) : try_recv(h, f);
        if (rc < 0)
            return rc;
        f->state = rc;
        *moved += rc;
        *left += !rc;
    }
    return FMPL_SUCCESS;
}

/* Move what can move without waiting, phase after phase: 1 when every
 * face is through (and h->phase past the last), 0 when one must wait;
 * *moved faces moved. */
static int advance(struct fmpl_halo *h, int *moved)
{
    int all = (h->me.flags & FMPL_HALO_FACES) != 0;
    int last = all ? 1 : h->me.ndims;
    *moved = 0;
    while (h->phase < last) {
        int left, m;
        int rc = pass(h, all ? -1 : h->phase, &left, &m);
        if (rc != FMPL_SUCCESS)
            return rc;
        *moved += m;
        if (left)
            return 0;
        h->phase++;
    }
    return 1;
}

/* Post every READY (our shadows may be overwritten from now on) and send
 * what the neighbours are ready for.  Lock held. */
static int start(struct fmpl_halo *h)
{
    fmpl_tl_t *tl = &fmpl_g.tl;
    int rc = FMPL_SUCCESS;
    for (int i = 0; i < h->nrecv && rc == FMPL_SUCCESS; i++) {
        fmpl_face_t *f = &h->recv[i];
        fmpl_slot_t *sl = fmpl_slot(f->peer, f->idx);
        f->seq = sl->recv_seq = fmpl_seq_next(sl->recv_seq);
        f->state = 0;
        uint64_t ready = f->seq;
        rc = fmpl_tl_notify(tl, f->peer, f->idx, READY_OFF, &ready, sizeof ready,
                            FMPL_TL_NOTIFY_UNORDERED, NULL);
    }
    for (int i = 0; i < h->nsend; i++) {
        fmpl_face_t *f = &h->send[i];
        fmpl_slot_t *sl = fmpl_slot(f->peer, f->idx);
        f->seq = sl->send_seq = fmpl_seq_next(sl->send_seq);
        f->state = 0;
    }
    h->phase = 0;
    h->active = 1;
    int moved;
    if (rc == FMPL_SUCCESS)
        rc = advance(h, &moved);
    return rc < 0 ? rc : FMPL_SUCCESS;
}

/* The status of the exchange's puts, which share one completion: a
 * broken connection does not say to which neighbour, so name the job's
 * failure as a lone put would (fmpl_put_status) - the launcher's word, a
 * neighbour the transport knows is gone, or the one neighbour we send to. */
static int puts_status(struct fmpl_halo *h, int status)
{
    if (status != FMPL_ERR_PEER || h->nsend == 0)
        return status;
    int only = h->send[0].peer;
    for (int i = 0; i < h->nsend; i++) {
        int rc = fmpl_check_peer(h->send[i].peer);
        if (rc != FMPL_SUCCESS)
            return rc;
        if (h->send[i].peer != only)
            only = -1;
    }
    return fmpl_put_status(only, status);
}

/* Run the exchange to its end: every shadow filled, and the array the
 * user's again (our puts have left it).  Lock held. */
static int finish(struct fmpl_halo *h)
{
    fmpl_wait_t w;
    fmpl_wait_init(&w, -1);
    int rc, moved;
    while ((rc = advance(h, &moved)) == 0) {
        if (fmpl_progress() + moved == 0) {
            int wrc = fmpl_wait_idle(&w);
            if (wrc != FMPL_SUCCESS) {
                rc = wrc;
                break;
            }
        }
    }
    if (rc == 1) {
        rc = fmpl_wait_comp(&h->comp, -1);
        if (h->comp.status == FMPL_ERR_PEER)   /* a put failed, not a wait given up */
            rc = puts_status(h, rc);
    }
    h->active = 0;
    return rc;
}

/* h usable; `idle`: 1 it must not be under way, 0 it must be */
static int check(fmpl_halo_t h, int idle)
{
    if (!fmpl_g.initialized)
        return FMPL_ERR_NOT_INIT;
    if (!h || !fmpl_comm_get(h->handle))
        return FMPL_ERR_ARG;
    if (idle != !h->active)
        return idle ? FMPL_ERR_BUSY : FMPL_ERR_REQUEST;
    return FMPL_SUCCESS;
}

/* fmpl_halo_do (whole) and fmpl_halo_start: a failed start ends the
 * exchange, there is nothing to wait for */
static int start_call(fmpl_halo_t h, int whole)
{
    int rc = check(h, 1);
    if (rc != FMPL_SUCCESS)
        return rc;
    fmpl_enter();
    rc = start(h);
    if (rc == FMPL_SUCCESS && whole)
        rc = finish(h);
    if (rc != FMPL_SUCCESS)
        h->active = 0;
    fmpl_leave();
    return rc;
}

int fmpl_halo_do(fmpl_halo_t h) { return start_call(h, 1); }

int fmpl_halo_start(fmpl_halo_t h) { return start_call(h, 0); }

int fmpl_halo_test(fmpl_halo_t h, int *done)
{
    if (!done)
        return fmpl_g.initialized ? FMPL_ERR_ARG : FMPL_ERR_NOT_INIT;
    int rc = check(h, 0);
    if (rc != FMPL_SUCCESS)
        return rc;
    fmpl_enter();
    int moved;
    fmpl_progress();
    rc = advance(h, &moved);
    *done = 0;
    if (rc == 1 && h->comp.pending == 0) {
        /* through, and our puts have left the array */
        rc = puts_status(h, h->comp.status);
        h->active = 0;
        *done = 1;
    } else if (rc < 0) {
        h->active = 0;
        *done = 1;
    } else {
        rc = FMPL_SUCCESS;
    }
    fmpl_leave();
    return rc;
}

int fmpl_halo_wait(fmpl_halo_t h)
{
    int rc = check(h, 0);
    if (rc != FMPL_SUCCESS)
        return rc;
    fmpl_enter();
    rc = finish(h);
    fmpl_leave();
    return rc;
}

int fmpl_halo_kind(fmpl_halo_t h, int d)
{
    if (!h || d < 0 || d >= h->me.ndims)
        return FMPL_ERR_ARG;
    return h->kind[d];
}

int fmpl_halo_free(fmpl_halo_t *halo)
{
    if (!fmpl_g.initialized)
        return FMPL_ERR_NOT_INIT;
    if (!halo || !*halo)
        return FMPL_ERR_ARG;
    if ((*halo)->active)
        return FMPL_ERR_BUSY;
    fmpl_enter();
    struct fmpl_halo *h = *halo;
    used[h->slot / 64] &= ~(1ull << (h->slot % 64));
    halo_release(h);
    *halo = NULL;
    fmpl_leave();
    return FMPL_SUCCESS;
}
