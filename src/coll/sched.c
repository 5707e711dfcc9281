/*
 * sched.c - running the nonblocking collectives' schedules (sched.h).
 *
 * Every schedule under way is on one list; the first of each
 * communicator's order runs, the others wait their turn.  The engine runs
 * from fmpl_progress (a hook, so the progress thread and every blocking
 * wait move schedules too), never waits, and does not re-enter itself
 * when a message it posts makes progress.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "coll/sched.h"
#include "p2p/progress.h"

static fmpl_sched_t *running;      /* every schedule under way */
static int in_engine;

fmpl_sched_t *fmpl_sched_new(fmpl_comm_rec_t *c)
{
    fmpl_sched_t *s = calloc(1, sizeof *s);
    if (s)
        s->c = c;
    return s;
}

static void add(fmpl_sched_t *s, int kind, int peer, void *dst, const void *src, size_t len)
{
    if (s->status != FMPL_SUCCESS)
        return;
    if (s->nop == s->cap) {
        int cap = s->cap ? 2 * s->cap : 16;
        fmpl_sop_t *op = realloc(s->op, (size_t)cap * sizeof *op);
        if (!op) {
            s->status = FMPL_ERR_NOMEM;
            return;
        }
        s->op = op;
        s->cap = cap;
    }
    s->op[s->nop++] = (fmpl_sop_t){ kind, peer, dst, src, len };
}

void fmpl_sched_send(fmpl_sched_t *s, int peer, const void *buf, size_t len)
{
    add(s, FMPL_SOP_SEND, peer, NULL, buf, len);
}

void fmpl_sched_recv(fmpl_sched_t *s, int peer, void *buf, size_t len)
{
    add(s, FMPL_SOP_RECV, peer, buf, NULL, len);
}

void fmpl_sched_copy(fmpl_sched_t *s, void *dst, const void *src, size_t len)
{
    if (len && dst != src)
        add(s, FMPL_SOP_COPY, -1, dst, src, len);
}

void fmpl_sched_red(fmpl_sched_t *s, void *inout, const void *in, int count)
{
    if (count > 0)
        add(s, FMPL_SOP_RED, -1, inout, in, (size_t)count);
}

void fmpl_sched_round(fmpl_sched_t *s)
{
    if (s->nop > 0 && s->op[s->nop - 1].kind != FMPL_SOP_END)
        add(s, FMPL_SOP_END, -1, NULL, NULL, 0);
}

void fmpl_sched_offload(fmpl_sched_t *s, const char *what, size_t size)
{
    if (s) {
        s->owhat = what;
        s->osize = size;
    }
}

void *fmpl_sched_tmp(fmpl_sched_t *s, size_t len)
{
    if (!s->tmp && (s->tmp = malloc(len ? len : 1)) == NULL)
        s->status = FMPL_ERR_NOMEM;
    return s->tmp;
}

void fmpl_sched_free(fmpl_sched_t *s)
{
    if (!s)
        return;
    free(s->op);
    free(s->req);
    free(s->tmp);
    free(s);
}

/* Out of its communicator's order and off the running list. */
static void unlink_sched(fmpl_sched_t *s)
{
    fmpl_comm_rec_t *c = s->c;
    for (fmpl_sched_t **p = &c->nb_first; *p; p = &(*p)->next)
        if (*p == s) {
            *p = s->next;
            break;
        }
    c->nb_last = NULL;
    for (fmpl_sched_t *t = c->nb_first; t; t = t->next)
        c->nb_last = t;
    for (fmpl_sched_t **p = &running; *p; p = &(*p)->gnext)
        if (*p == s) {
            *p = s->gnext;
            break;
        }
}

static void finish(fmpl_sched_t *s, int rc);

/* Complete, in their communicator's order, the schedules whose work is over */
static void complete(fmpl_comm_rec_t *c)
{
    while (c->nb_first && c->nb_first->over)
        finish(c->nb_first, FMPL_SUCCESS);
}

static void finish(fmpl_sched_t *s, int rc)
{
    if (s->oh) {
        if (rc != FMPL_SUCCESS)
            fmpl_tl_off_cancel(&fmpl_g.tl, s->oh);
        s->oh = NULL;
    }
    if (rc != FMPL_SUCCESS) {
        fmpl_p2p_failall_raw(s->req, s->nreq, rc);
        if (s->status == FMPL_SUCCESS)
            s->status = rc;
    }
    s->done = 1;
    unlink_sched(s);
    if (rc != FMPL_SUCCESS)
        complete(s->c);            /* those after it may have been waiting */
}

/* Post the round's messages: receives first, so that their headers are
 * on their way before our sends look for the peers'. */
static int post(fmpl_sched_t *s)
{
    fmpl_comm_rec_t *c = s->c;
    s->nreq = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int i = s->at; i < s->nop && s->op[i].kind != FMPL_SOP_END; i++) {
            fmpl_sop_t *o = &s->op[i];
            if (o->kind != (pass ? FMPL_SOP_SEND : FMPL_SOP_RECV))
                continue;
            fmpl_request_t *r = &s->req[s->nreq++];
            *r = (fmpl_request_t){ .kind = FMPL_REQ_NONE };
            int rc = pass ? fmpl_coll_isend(c, o->src, o->len, o->peer, FMPL_CI_NB, r)
                          : fmpl_coll_irecv(c, o->dst, o->len, o->peer, FMPL_CI_NB, r);
            if (rc != FMPL_SUCCESS)
                return rc;
        }
    s->posted = 1;
    return FMPL_SUCCESS;
}

/* Advance s as far as it goes without waiting; 1 if anything moved. */
static int step(fmpl_sched_t *s)
{
    if (s->oh) {
        int rc = fmpl_tl_off_test(&fmpl_g.tl, s->oh);
        if (rc == 0)
            return 0;
        s->oh = NULL;              /* the transport is done with it */
        if (rc == 1)
            s->over = 1;
        else
            finish(s, rc);
        return 1;
    }
    int moved = 0;
    while (!s->done) {
        if (!s->posted) {
            if (s->at >= s->nop) {
                s->over = 1;
                return 1;
            }
            int rc = post(s);
            if (rc != FMPL_SUCCESS) {
                finish(s, rc);
                return 1;
            }
        }
        int rc = FMPL_SUCCESS;
        if (!fmpl_p2p_testall_raw(s->req, s->nreq, &s->status))
            return moved;
        if ((rc = s->status) != FMPL_SUCCESS) {
            finish(s, rc);
            return 1;
        }
        int i = s->at;
        for (; i < s->nop && s->op[i].kind != FMPL_SOP_END; i++) {
            fmpl_sop_t *o = &s->op[i];
            if (o->kind == FMPL_SOP_COPY)
                fmpl_coll_copy(o->dst, o->src, o->len);
            else if (o->kind == FMPL_SOP_RED)
                fmpl_red_apply(&s->red, o->dst, o->src, (int)o->len);
        }
        s->at = i + 1;
        s->posted = 0;
        moved = 1;
    }
    return moved;
}

/* The first of c's schedules that runs here, not in the transport's
 * engine: the one whose turn it is on FMPL_CI_NB. */
static fmpl_sched_t *first_direct(const fmpl_comm_rec_t *c)
{
    fmpl_sched_t *t = c->nb_first;
    while (t && (t->oh || t->over))
        t = t->next;
    return t;
}

/* Hand s to the transport's engine if it takes it (sched.h): 1 if it
 * did, 0 if s runs here, or an error. */
static int offload(fmpl_sched_t *s)
{
    fmpl_tl_t *tl = &fmpl_g.tl;
    fmpl_comm_rec_t *c = s->c;
    if (!s->owhat || c->size < 2 ||
        !fmpl_tl_off_ok(tl, s->owhat, s->osize, c->ranks, c->size))
        return 0;
    /* the shape sched.h asks for: no reduction, no copy after a message */
    int nx = 0;
    for (int i = 0; i < s->nop; i++) {
        int kind = s->op[i].kind;
        if (kind == FMPL_SOP_RED || (kind == FMPL_SOP_COPY && nx))
            return 0;
        nx += kind == FMPL_SOP_SEND || kind == FMPL_SOP_RECV;
    }
    fmpl_tl_xfer_t *x = malloc((size_t)(nx ? nx : 1) * sizeof *x);
    if (!x)
        return FMPL_ERR_NOMEM;
    int round = 0, k = 0, in_round = 0;
    for (int i = 0; i < s->nop; i++) {
        fmpl_sop_t *o = &s->op[i];
        if (o->kind == FMPL_SOP_END) {
            round += in_round > 0;
            in_round = 0;
        } else if (o->kind == FMPL_SOP_COPY) {
            fmpl_coll_copy(o->dst, o->src, o->len);
        } else {
            int send = o->kind == FMPL_SOP_SEND;
            x[k++] = (fmpl_tl_xfer_t){ round, send, c->ranks[o->peer],
                                       send ? (void *)o->src : o->dst, o->len };
            in_round++;
        }
    }
    uint32_t chan = (uint32_t)c->idx, seq = c->off_seq++;
    int rc = fmpl_tl_off_start(tl, chan, seq, x, nx, &s->oh);
    free(x);
    return rc == FMPL_SUCCESS ? 1 : rc;
}

/* the progress hook: every communicator's first schedule */
static int engine(void)
{
    if (in_engine || !running)
        return 0;
    in_engine = 1;
    int n = 0;
    fmpl_sched_t *s = running;
    while (s) {
        fmpl_sched_t *next = s->gnext;   /* s may leave the list */
        if (s->oh || first_direct(s->c) == s) {
            n += step(s);
            complete(s->c);
        }
        s = next;
    }
    in_engine = 0;
    return n;
}

int fmpl_sched_start(fmpl_sched_t *s, fmpl_request_t *req)
{
    fmpl_sched_round(s);
    int most = 0;
    for (int i = 0, k = 0; i < s->nop; i++) {
        if (s->op[i].kind == FMPL_SOP_SEND || s->op[i].kind == FMPL_SOP_RECV)
            k++;
        if (s->op[i].kind == FMPL_SOP_END || i == s->nop - 1) {
            most = k > most ? k : most;
            k = 0;
        }
    }
    if (s->status == FMPL_SUCCESS && most &&
        !(s->req = calloc((size_t)most, sizeof *s->req)))
        s->status = FMPL_ERR_NOMEM;
    int rc = s->status;
    if (rc != FMPL_SUCCESS) {
        fmpl_sched_free(s);
        return rc;
    }
    fmpl_comm_rec_t *c = s->c;
    if (c->nb_last)
        c->nb_last->next = s;
    else
        c->nb_first = s;
    c->nb_last = s;
    fmpl_sched_t **p = &running;
    while (*p)
        p = &(*p)->gnext;
    *p = s;
    *req = (fmpl_request_t){ .kind = FMPL_REQ_COLL, .peer = -1, .mai = -1 };
    req->priv[0] = (uint64_t)(uintptr_t)s;
    rc = offload(s);
    if (rc < 0)
        finish(s, rc);             /* the request ends with the error */
    engine();
    return FMPL_SUCCESS;
}

static fmpl_sched_t *of(fmpl_request_t *req)
{
    return (fmpl_sched_t *)(uintptr_t)req->priv[0];
}

/* The request's end: its outcome, and the schedule freed. */
static int retire(fmpl_request_t *req)
{
    fmpl_sched_t *s = of(req);
    int rc = s->status;
    fmpl_sched_free(s);
    req->kind = FMPL_REQ_NONE;
    req->priv[0] = 0;
    return rc;
}

int fmpl_sched_test(fmpl_request_t *req, int *done)
{
    fmpl_sched_t *s = of(req);
    fmpl_progress();
    /* a test loop on a schedule whose peer died must end too */
    if (!s->done) {
        int rc = fmpl_test_check_peer(-1);
        if (rc != FMPL_SUCCESS)
            finish(s, rc);
    }
    *done = s->done;
    return FMPL_SUCCESS;
}

int fmpl_sched_wait(fmpl_request_t *req)
{
    fmpl_sched_t *s = of(req);
    fmpl_wait_t w;
    fmpl_wait_init(&w, -1);
    while (!s->done) {
        if (fmpl_progress() != 0)
            continue;
        if (s->oh)                 /* the engine (the host's agent) may need this core */
            nanosleep(&(struct timespec){ 0, 20000 }, NULL);
        int rc = fmpl_wait_idle(&w);
        if (rc != FMPL_SUCCESS)
            finish(s, rc);
    }
    return retire(req);
}

int fmpl_sched_busy(const fmpl_comm_rec_t *c)
{
    return c->nb_first != NULL;
}

void fmpl_sched_setup(void)
{
    running = NULL;
    in_engine = 0;
    fmpl_progress_hook(engine);
}

/* fmpl_finalize with schedules under way: their requests are dead (any
 * call on them is FMPL_ERR_NOT_INIT), their memory goes */
void fmpl_sched_teardown(void)
{
    fmpl_progress_hook(NULL);
    while (running) {
        fmpl_sched_t *s = running;
        running = s->gnext;
        s->c->nb_first = s->c->nb_last = NULL;
        if (s->oh)
            fmpl_tl_off_cancel(&fmpl_g.tl, s->oh);
        fmpl_sched_free(s);
    }
}
