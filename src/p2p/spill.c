/*
 * spill.c - the spill send buffer.
 *
 * The user's buffer is carved first-fit; the bookkeeping lives outside it
 * so that a stray write by the user cannot corrupt the list.  Entries keep
 * the sequence number of their send, so a spilled message still meets the
 * right receive, and later sends on the same index simply queue behind it.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fmpl.h"
#include "p2p/progress.h"
#include "p2p/p2p.h"
#include "p2p/spill.h"

typedef struct spill_ent {
    struct spill_ent *next;        /* sorted by offset */
    int dst, mai;
    uint32_t seq;
    int issued, status;
    size_t off, size;
    fmpl_tl_comp_t comp;
} spill_ent_t;

struct fmpl_spill {
    uint8_t *buf;
    size_t size;
    double timeout;                /* seconds */
    spill_ent_t *head;
    int nspool;                    /* entries not yet delivered */
    int nsent;                     /* delivered since the last check */
};

int fmpl_sendbuff_set(void *buf, size_t size, double timeout_us)
{
    if (!fmpl_g.initialized)
        return FMPL_ERR_NOT_INIT;
    if (!(timeout_us >= 0) || isinf(timeout_us) || (!buf && size))
        return FMPL_ERR_ARG;
    fmpl_enter();
    int rc = FMPL_SUCCESS;
    struct fmpl_spill *s = fmpl_g.spill;
    if (s && s->head) {
        rc = FMPL_ERR_SPILL;       /* it still holds messages */
    } else if (!buf) {
        free(s);
        fmpl_g.spill = NULL;
    } else {
        if (!s)
            s = calloc(1, sizeof *s);
        if (!s) {
            rc = FMPL_ERR_NOMEM;
        } else {
            s->buf = buf;
            s->size = size;
            s->timeout = timeout_us * 1e-6;
            fmpl_g.spill = s;
        }
    }
    fmpl_leave();
    return rc;
}

double fmpl_spill_timeout(void)
{
    return fmpl_g.spill ? fmpl_g.spill->timeout : -1.0;
}

int fmpl_spill_send(fmpl_request_t *req)
{
    struct fmpl_spill *s = fmpl_g.spill;
    if (!s)
        return FMPL_ERR_SPILL;
    /* first fit between the entries, which are sorted by offset */
    size_t off = 0;
    spill_ent_t **pp = &s->head;
    while (*pp && (*pp)->off - off < req->size) {
        off = (*pp)->off + (*pp)->size;
        pp = &(*pp)->next;
    }
    if (!*pp && s->size - off < req->size)
        return FMPL_ERR_SPILL;
    spill_ent_t *e = calloc(1, sizeof *e);
    if (!e)
        return FMPL_ERR_SPILL;
    *e = (spill_ent_t){ .next = *pp, .dst = req->peer, .mai = req->mai, .seq = req->seq,
                        .off = off, .size = req->size };
    if (req->size)
        memcpy(s->buf + off, req->buf, req->size);
    fmpl_tl_work(&fmpl_g.tl, FMPL_TL_WORK_COPY, req->size);
    *pp = e;
    s->nspool++;
    return FMPL_SUCCESS;
}

int fmpl_spill_progress(void)
{
    struct fmpl_spill *s = fmpl_g.spill;
    int n = 0;
    for (spill_ent_t **pp = &s->head; *pp;) {
        spill_ent_t *e = *pp;
        if (!e->issued && fmpl_p2p_issue(e->dst, e->mai, e->seq, s->buf + e->off, e->size,
                                         &e->comp, &e->status, NULL, NULL)) {
            e->issued = 1;
            n++;
        }
        if (e->issued && !fmpl_tl_comp_pending(&e->comp)) {
            *pp = e->next;
            free(e);
            s->nspool--;
            s->nsent++;
            continue;
        }
        pp = &e->next;
    }
    return n;
}

int fmpl_sendbuff_check(int *nsend, int *nspool)
{
    if (!fmpl_g.initialized)
        return FMPL_ERR_NOT_INIT;
    fmpl_enter();
    fmpl_progress();
    struct fmpl_spill *s = fmpl_g.spill;
    if (nsend)
        *nsend = s ? s->nsent : 0;
    if (nspool)
        *nspool = s ? s->nspool : 0;
    if (s)
        s->nsent = 0;
    fmpl_leave();
    return FMPL_SUCCESS;
}

/* Deliver everything still spilled (fmpl_finalize). */
int fmpl_spill_drain(void)
{
    struct fmpl_spill *s = fmpl_g.spill;
    if (!s)
        return FMPL_SUCCESS;
    fmpl_wait_t w;
    fmpl_wait_init(&w, s->head ? s->head->dst : -1);
    while (s->head) {
        int rc = fmpl_progress() ? FMPL_SUCCESS : fmpl_wait_idle(&w);
        if (rc != FMPL_SUCCESS)
            return rc;
    }
    return FMPL_SUCCESS;
}

void fmpl_spill_free(void)
{
    struct fmpl_spill *s = fmpl_g.spill;
    if (!s)
        return;
    while (s->head) {
        spill_ent_t *e = s->head;
        s->head = e->next;
        fmpl_tl_forget(&fmpl_g.tl, &e->comp);   /* puts on their way: not into freed memory */
        free(e);
    }
    free(s);
    fmpl_g.spill = NULL;
}
