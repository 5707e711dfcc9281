/*
 * dcfa_offload.c - the rank's side of the offloaded collectives
 * (dcfa_offload.h): the segment it shares with its agent, the choice of
 * what goes there, and the transport's off_* ops.
 *
 * Starting one: connect to every peer it names (the offload queue pairs
 * are connected with the rank's own), register its buffers (the
 * registration cache: a buffer used again is found there), and fill a
 * free slot; a store of its state hands it over.  The rank then only
 * reads the slot's state word: when the agent says DONE or FAILED the
 * registrations are given back and the slot is free again.  Slots that
 * ended are taken back at every start, so the agent never waits for the
 * application to test its requests; when all 16 are under way, a start
 * makes progress until one ends.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fmpl.h"
#include "base/clock.h"
#include "base/env.h"
#include "base/hosts.h"
#include "base/log.h"
#include "transport/dcfa/dcfa.h"
#include "transport/dcfa/dcfa_agent.h"
#include "transport/dcfa/dcfa_offload.h"

static const char *const names[] = { "barrier", "bcast", "gather", "scatter", "allgather",
                                     "alltoall" };
#define NNAMES (int)(sizeof names / sizeof names[0])

/* an offloaded collective, as the rank holds it */
typedef struct fmpl_dcfa_offh {
    int slot;
    int ended, rc;                 /* taken back from its slot, and how it ended */
    int nreg, npeer, look;
    int *peer;                     /* [npeer] the peers it has, distinct */
    int reg[];                     /* registrations held, [messages] */
} offh_t;

static int name_of(const char *s, size_t len)
{
    for (int i = 0; i < NNAMES; i++)
        if (strlen(names[i]) == len && strncmp(names[i], s, len) == 0)
            return i;
    return -1;
}

/* FMPL_DCFA_OFFLOAD's list: a mask of names, or -1 */
static int parse_list(const char *v, unsigned *mask)
{
    *mask = 0;
    if (strcmp(v, "off") == 0 || !*v)
        return 0;
    if (strcmp(v, "all") == 0) {
        *mask = (1u << NNAMES) - 1;
        return 0;
    }
    for (const char *p = v; *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        int k = name_of(p, len);
        if (k < 0)
            return -1;
        *mask |= 1u << k;
        p += len + (e != NULL);
    }
    return 0;
}

void fmpl_dcfa_off_what(const fmpl_dcfa_t *d, char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = 0;
    for (int i = 0; i < NNAMES && at < len; i++)
        if (d->off.what & (1u << i))
            at += (size_t)snprintf(buf + at, len - at, "%s%s", at ? ", " : "", names[i]);
}

int fmpl_dcfa_off_open(fmpl_dcfa_t *d)
{
    fmpl_dcfa_off_t *o = &d->off;
    const char *v = getenv("FMPL_DCFA_OFFLOAD");
    int autom = !v || !*v || strcmp(v, "auto") == 0;
    if (parse_list(autom ? "alltoall,allgather,bcast" : v, &o->what) != 0) {
        fmpl_log_err("FMPL_DCFA_OFFLOAD=%s: expected auto, off, all, or a comma-separated "
                     "list of barrier, bcast, gather, scatter, allgather, alltoall", v);
        return FMPL_ERR_ARG;
    }
    /* auto: where every machine of the job has a CPU for its agent (the
     * same answer on every rank) */
    if (autom && !d->tl->hosts->spare_all) {
        o->what = 0;
        o->why = "auto, and a machine of the job has no CPU its ranks leave to the agent";
    } else if (!o->what) {
        o->why = "FMPL_DCFA_OFFLOAD=off";
    }
    double min;
    if (fmpl_env_double("FMPL_DCFA_OFFLOAD_MIN", 262144, 0, 4294967295.0,
                        "bytes a block, from which collectives go to the host agent, "
                        "0 to 4294967295", &min) != FMPL_SUCCESS)
        return FMPL_ERR_ARG;
    o->min = (size_t)min;
    if (!d->split)
        o->why = "direct mode";
    if (!d->split || !o->what)
        return FMPL_SUCCESS;       /* no agent, or nothing for it */
    int cap = 2 * d->tl->size + 8;
    uint32_t slot_len;
    uint64_t recv_off;
    o->len = fmpl_off_seg_len(cap, &slot_len, &recv_off);
    int fd = memfd_create("fmpl-dcfa-offload", MFD_CLOEXEC);
    if (fd < 0 || ftruncate(fd, (off_t)o->len) != 0) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        return fmpl_dcfa_error(d, e, "memfd_create (the host agent's slots)", -1);
    }
    void *p = mmap(NULL, o->len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        int e = errno;
        close(fd);
        return fmpl_dcfa_error(d, e, "mmap (the host agent's slots)", -1);
    }
    o->seg = p;
    o->mr = fmpl_dcfa_reg_mr(d, p, o->len, IBV_ACCESS_LOCAL_WRITE);
    if (!o->mr) {
        int e = errno;
        close(fd);
        return fmpl_dcfa_error(d, e, "ibv_reg_mr (the host agent's slots)", -1);
    }
    *o->seg = (fmpl_off_seg_t){ .nslots = FMPL_OFF_SLOTS, .cap = (uint32_t)cap,
                                .slot_len = slot_len, .lkey = o->mr->lkey,
                                .recv_off = recv_off, .len = o->len,
                                .base = (uintptr_t)p };
    fmpl_dcfa_areq_t q = { .op = FMPL_AG_OFFLOAD, .a = (uint32_t)d->tl->size,
                           .b = o->mr->lkey };
    fmpl_dcfa_arep_t r;
    int e = fmpl_dcfa_ask(d, &q, fd, &r);
    close(fd);
    if (e)
        return fmpl_dcfa_error(d, e, "the host agent's offload", -1);
    o->on = 1;
    return FMPL_SUCCESS;
}

void fmpl_dcfa_off_close(fmpl_dcfa_t *d)
{
    fmpl_dcfa_off_t *o = &d->off;
    if (o->on)
        fmpl_log_info("dcfa: the host agent ran %lu collectives for this rank",
                      o->started);
    /* (the handles are the schedules', which fmpl_finalize cancelled) */
    if (o->mr)
        fmpl_dcfa_dereg_mr(d, o->mr);
    if (o->seg)
        munmap(o->seg, o->len);
    memset(o, 0, sizeof *o);
}

/* The offload queue pair for `peer`: the agent's, in our context
 * (dcfa_conn.c moves it through its states with ours) */
int fmpl_dcfa_off_qp(fmpl_dcfa_t *d, int peer, fmpl_dcfa_qp_t *qp)
{
    memset(qp, 0, sizeof *qp);
    fmpl_dcfa_areq_t q = { .op = FMPL_AG_QP, .a = IBV_QPT_RC, .b = 2, .peer = peer,
                           .cap = { .max_send_wr = FMPL_DCFA_SQ, .max_send_sge = 1,
                                    .max_inline_data = sizeof(fmpl_off_hdr_t) } };
    fmpl_dcfa_arep_t r;
    int e = fmpl_dcfa_ask(d, &q, -1, &r);
    if (e)
        return fmpl_dcfa_error(d, e, "the host agent's queue pair for offload", peer);
    qp->handle = r.handle;
    qp->num = r.num;
    qp->made = 1;
    return FMPL_SUCCESS;
}

/* ---- the ops ------------------------------------------------------------ */

int fmpl_dcfa_off_ok(fmpl_tl_t *tl, const char *what, size_t size, const int *peers, int n)
{
    fmpl_dcfa_t *d = fmpl_dcfa_of(tl);
    fmpl_dcfa_off_t *o = &d->off;
    int k = name_of(what, strlen(what));
    if (!o->on || k < 0 || !(o->what & (1u << k)) || size < o->min || size > UINT32_MAX)
        return 0;
    /* every member must have an agent: its card says so */
    for (int i = 0; i < n; i++)
        if (peers[i] != tl->rank && !fmpl_dcfa_peer_offloads(d, peers[i]))
            return 0;
    return 1;
}

/* Take back slot i if it ended: its outcome goes to its handle, its
 * registrations back to the cache, and the slot is free */
static void harvest(fmpl_dcfa_t *d, int i)
{
    fmpl_dcfa_off_t *o = &d->off;
    fmpl_off_slot_t *s = fmpl_off_slot(o->seg, i);
    uint32_t st = atomic_load_explicit(&s->state, memory_order_acquire);
    if (!o->held[i] || (st != FMPL_OFF_DONE && st != FMPL_OFF_FAILED))
        return;
    offh_t *h = o->held[i];
    h->rc = FMPL_SUCCESS;
    if (st == FMPL_OFF_FAILED) {
        h->rc = s->err;
        if (s->err == FMPL_ERR_PEER && s->err_peer >= 0) {
            fmpl_log_err("dcfa: the host agent's collective failed on rank %d (%s): it died "
                         "or its link is down", s->err_peer,
                         fmpl_dcfa_wc_str((enum ibv_wc_status)s->err_wc));
            d->failed_peer = s->err_peer;
        } else if (s->err == FMPL_ERR_TRUNCATE) {
            fmpl_log_err("dcfa: an offloaded collective's messages or block sizes differ "
                         "between its members (rank %d's): not called alike", s->err_peer);
        }
    }
    for (int k = 0; k < h->nreg; k++)
        fmpl_rcache_put(&d->rc, h->reg[k]);
    h->nreg = 0;
    h->ended = 1;
    o->held[i] = NULL;
    atomic_store_explicit(&s->state, FMPL_OFF_FREE, memory_order_release);
}

static int start_locked(fmpl_dcfa_t *d, uint32_t chan, uint32_t seq, const fmpl_tl_xfer_t *x,
                        int n, void **hp)
{
    fmpl_dcfa_off_t *o = &d->off;
    fmpl_tl_t *tl = d->tl;
    if (n > (int)o->seg->cap)
        return FMPL_ERR_INTERNAL;
    for (int k = 0; k < n; k++) {
        int rc = fmpl_dcfa_connect(d, x[k].peer);
        if (rc != FMPL_SUCCESS)
            return rc;
    }
    /* a free slot: ended ones are taken back first */
    int i = -1;
    fmpl_tl_wait_t w = { 0 };
    for (;;) {
        for (int k = 0; k < FMPL_OFF_SLOTS; k++)
            harvest(d, k);
        for (int k = 0; k < FMPL_OFF_SLOTS && i < 0; k++)
            if (!o->held[k] && atomic_load_explicit(&fmpl_off_slot(o->seg, k)->state,
                                                    memory_order_acquire) == FMPL_OFF_FREE)
                i = k;
        if (i >= 0)
            break;
        if (fmpl_dcfa_progress(tl) == 0) {
            int rc = fmpl_tl_idle(tl, &d->failed_peer, -1, &w);
            if (rc != FMPL_SUCCESS)
                return rc;
        }
        fmpl_dcfa_agent_check(d);
        if (d->agent < 0)
            return FMPL_ERR_PEER;
    }
    offh_t *h = calloc(1, sizeof *h + 2 * (size_t)n * sizeof(int));
    int *count = calloc(2 * (size_t)tl->size, sizeof *count);
    if (!h || !count) {
        free(h);
        free(count);
        return FMPL_ERR_NOMEM;
    }
    h->slot = i;
    h->peer = h->reg + n;
    fmpl_off_slot_t *s = fmpl_off_slot(o->seg, i);
    int rc = FMPL_SUCCESS;
    for (int k = 0; k < n && rc == FMPL_SUCCESS; k++) {
        fmpl_off_msg_t *m = &s->m[k];
        if (!count[2 * x[k].peer] && !count[2 * x[k].peer + 1])
            h->peer[h->npeer++] = x[k].peer;   /* its first message with this peer */
        *m = (fmpl_off_msg_t){ .addr = (uintptr_t)x[k].buf, .len = x[k].len,
                               .peer = x[k].peer, .round = (uint16_t)x[k].round,
                               .send = (uint16_t)x[k].send,
                               .j = (uint32_t)count[2 * x[k].peer + x[k].send]++ };
        if (x[k].len) {
            int idx;
            rc = fmpl_rcache_take(&d->rc, x[k].buf, x[k].len, &idx);
            if (rc == FMPL_SUCCESS) {
                struct ibv_mr *mr = fmpl_dcfa_mr_of(d, idx);
                h->reg[h->nreg++] = idx;
                m->key = x[k].send ? mr->lkey : mr->rkey;
            }
        }
    }
    free(count);
    if (rc != FMPL_SUCCESS) {
        for (int k = 0; k < h->nreg; k++)
            fmpl_rcache_put(&d->rc, h->reg[k]);
        free(h);
        return rc;
    }
    s->n = (uint32_t)n;
    s->chan = chan;
    s->seq = seq;
    s->err = 0;
    s->err_peer = -1;
    s->err_wc = 0;
    o->held[i] = h;
    o->started++;
    atomic_store_explicit(&s->state, FMPL_OFF_POSTED, memory_order_release);
    *hp = h;
    return FMPL_SUCCESS;
}

int fmpl_dcfa_off_start(fmpl_tl_t *tl, uint32_t chan, uint32_t seq, const fmpl_tl_xfer_t *x,
                        int n, void **h)
{
    fmpl_dcfa_t *d = fmpl_dcfa_of(tl);
    fmpl_rlock_take(&d->lock);
    int rc = start_locked(d, chan, seq, x, n, h);
    fmpl_rlock_give(&d->lock);
    return rc;
}

int fmpl_dcfa_off_test(fmpl_tl_t *tl, void *hp)
{
    fmpl_dcfa_t *d = fmpl_dcfa_of(tl);
    offh_t *h = hp;
    /* the state word first: no lock, no call while it is under way */
    if (!h->ended && atomic_load_explicit(&fmpl_off_slot(d->off.seg, h->slot)->state,
                                          memory_order_acquire) == FMPL_OFF_POSTED) {
        /* a peer whose agent waits for nothing of ours (its header has
         * not come) would never fail a request of our agent's: so the
         * peers are looked at, one a call (each at most once a second:
         * dcfa_peer_ok's keepalive) */
        fmpl_dcfa_agent_check(d);
        int gone = d->agent < 0;
        if (!gone && h->npeer && !tl->ops->peer_ok(tl, h->peer[h->look++ % h->npeer]))
            gone = 1;
        if (!gone)
            return 0;
        fmpl_dcfa_off_cancel(tl, h);
        return FMPL_ERR_PEER;
    }
    fmpl_rlock_take(&d->lock);
    if (!h->ended)
        harvest(d, h->slot);
    fmpl_rlock_give(&d->lock);
    int rc = h->rc;
    free(h);
    return rc == FMPL_SUCCESS ? 1 : rc;
}

void fmpl_dcfa_off_cancel(fmpl_tl_t *tl, void *hp)
{
    fmpl_dcfa_t *d = fmpl_dcfa_of(tl);
    offh_t *h = hp;
    fmpl_rlock_take(&d->lock);
    if (!h->ended)
        harvest(d, h->slot);
    if (!h->ended) {
        /* under way: the agent drops it and frees the slot; writes it
         * posted from our buffers may still complete */
        for (int k = 0; k < h->nreg; k++)
            fmpl_rcache_put(&d->rc, h->reg[k]);
        d->off.held[h->slot] = NULL;
        atomic_store_explicit(&fmpl_off_slot(d->off.seg, h->slot)->state, FMPL_OFF_CANCEL,
                              memory_order_release);
    }
    fmpl_rlock_give(&d->lock);
    free(h);
}
