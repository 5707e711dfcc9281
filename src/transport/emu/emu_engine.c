/*
 * emu_engine.c - channels, packets, links and inboxes (emu.h).
 *
 * Everything here runs under the engine's lock, in modeled-time order:
 * the channel with the earliest next packet goes first (ties: the lower
 * channel), and only while that time is known to be final (before the
 * bound K + lookahead, emu.h).  Each packet reserves the links of its route
 * in turn - a link is busy for bytes x its picoseconds per byte, in the
 * first gap of its calendar (emu_link.c) at or after the head's arrival;
 * the head reaches the next link after that link's latency (cut-through) -
 * which is where contention comes from.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "fmpl.h"
#include "base/log.h"
#include "transport/emu/emu_int.h"

static inline fmpl_emu_time_t tmax(fmpl_emu_time_t a, fmpl_emu_time_t b) { return a > b ? a : b; }
static inline fmpl_emu_time_t tadd(fmpl_emu_time_t a, fmpl_emu_time_t b)
{
    return a >= FMPL_EMU_NEVER - b ? FMPL_EMU_NEVER : a + b;
}

/* ---- pools: a free list, then the never-used tail (so that pages are
 * touched only as the job needs them) ---------------------------------- */

static int32_t xfer_alloc(emu_shared_t *sh)
{
    emu_xfer_rec_t *x = emu_xfers(sh);
    int32_t i = sh->xfer_free;
    if (i >= 0 && i < sh->xfers_used) {
        sh->xfer_free = x[i].next;
        return i;
    }
    if (sh->xfers_used >= sh->max_xfers)
        return -1;
    return sh->xfers_used++;
}

static void xfer_free(emu_shared_t *sh, int32_t i)
{
    emu_xfers(sh)[i].next = sh->xfer_free < sh->xfers_used ? sh->xfer_free : -1;
    sh->xfer_free = i;
}

static int32_t ent_alloc(emu_shared_t *sh)
{
    emu_ent_t *en = emu_ents(sh);
    int32_t i = sh->ent_free;
    if (i >= 0 && i < sh->ents_used) {
        sh->ent_free = en[i].next;
        return i;
    }
    if (sh->ents_used >= sh->max_entries)
        return -1;
    return sh->ents_used++;
}

static void ent_free(emu_shared_t *sh, int32_t i)
{
    emu_ents(sh)[i].next = sh->ent_free < sh->ents_used ? sh->ent_free : -1;
    sh->ent_free = i;
}

/* ---- inboxes ---------------------------------------------------------- */

static int ent_before(const emu_ent_t *a, const emu_ent_t *b)
{
    if (a->t != b->t)
        return a->t < b->t;
    if (a->src != b->src)
        return a->src < b->src;
    return a->seq < b->seq;
}

fmpl_emu_time_t fmpl_emu_inbox_first(emu_shared_t *sh, int r)
{
    int32_t h = emu_ranks(sh)[r].in_head;
    return h < 0 ? FMPL_EMU_NEVER : emu_ents(sh)[h].t;
}

/* Entry `i` into rank r's inbox, in order. */
static void inbox_insert(emu_shared_t *sh, int r, int32_t i)
{
    emu_rank_t *rk = &emu_ranks(sh)[r];
    emu_ent_t *en = emu_ents(sh);
    int32_t p = rk->in_tail;
    while (p >= 0 && ent_before(&en[i], &en[p]))
        p = en[p].prev;
    en[i].prev = p;
    en[i].next = p >= 0 ? en[p].next : rk->in_head;
    if (en[i].next >= 0)
        en[en[i].next].prev = i;
    else
        rk->in_tail = i;
    if (p >= 0)
        en[p].next = i;
    else
        rk->in_head = i;
    rk->in_count++;
    /* a blocked rank now has something to wake up for, earlier perhaps -
     * but not before its own clock */
    fmpl_emu_time_t wake = en[i].t > rk->vt ? en[i].t : rk->vt;
    if (atomic_load(&rk->state) == EMU_BLOCKED && wake < atomic_load(&rk->lb))
        fmpl_emu_bound_set_locked(sh, r, EMU_BLOCKED, wake);
}

static int post(emu_shared_t *sh, int dst, fmpl_emu_time_t t, int src, uint64_t seq,
                const fmpl_emu_msg_t *m)
{
    int32_t i = ent_alloc(sh);
    if (i < 0)
        return FMPL_ERR_NOMEM;
    emu_ent_t *en = &emu_ents(sh)[i];
    en->t = sh->model ? t : 0;
    en->src = src;
    en->seq = seq;
    en->msg = *m;
    inbox_insert(sh, dst, i);
    fmpl_emu_wake_rank_locked(sh, dst);
    return FMPL_SUCCESS;
}

int fmpl_emu_post_locked(fmpl_emu_t *e, int dst, fmpl_emu_time_t t, const fmpl_emu_msg_t *m)
{
    /* a fabric's signal: ordered after every transfer at the same time */
    int rc = post(e->sh, dst, t, INT32_MAX, m->a, m);
    if (rc != FMPL_SUCCESS)
        fmpl_log_err("emulated fabric: more than %d entries on their way (inboxes full)",
                     e->sh->max_entries);
    return rc;
}

int fmpl_emu_inbox_take_locked(fmpl_emu_t *e, fmpl_emu_time_t t)
{
    emu_shared_t *sh = e->sh;
    emu_rank_t *rk = &emu_ranks(sh)[e->rank];
    emu_ent_t *en = emu_ents(sh);
    int n = 0;
    while (rk->in_head >= 0 && (!sh->model || en[rk->in_head].t <= t)) {
        int32_t i = rk->in_head;
        if (n == e->due_cap) {
            int cap = e->due_cap ? 2 * e->due_cap : 64;
            fmpl_emu_msg_t *d = realloc(e->due, (size_t)cap * sizeof *d);
            if (!d)
                break;             /* the rest next time */
            e->due = d;
            e->due_cap = cap;
        }
        e->due[n++] = en[i].msg;
        rk->in_head = en[i].next;
        if (rk->in_head >= 0)
            en[rk->in_head].prev = -1;
        else
            rk->in_tail = -1;
        rk->in_count--;
        ent_free(sh, i);
    }
    return n;
}

/* ---- channels --------------------------------------------------------- */

static int xfer_before(const emu_xfer_rec_t *a, const emu_xfer_rec_t *b)
{
    if (a->ready != b->ready)
        return a->ready < b->ready;
    if (a->src != b->src)
        return a->src < b->src;
    return a->seq < b->seq;
}

static void chan_insert(emu_shared_t *sh, emu_chan_t *ch, int32_t i)
{
    emu_xfer_rec_t *x = emu_xfers(sh);
    int32_t p = ch->tail;
    while (p >= 0 && xfer_before(&x[i], &x[p]))
        p = x[p].prev;
    x[i].prev = p;
    x[i].next = p >= 0 ? x[p].next : ch->head;
    if (x[i].next >= 0)
        x[x[i].next].prev = i;
    else
        ch->tail = i;
    if (p >= 0)
        x[p].next = i;
    else
        ch->head = i;
}

/* When channel `ch` sends its next packet (FMPL_EMU_NEVER: idle). */
static fmpl_emu_time_t chan_next(emu_shared_t *sh, const emu_chan_t *ch)
{
    if (ch->cur >= 0)
        return ch->free_at;
    if (ch->head < 0)
        return FMPL_EMU_NEVER;
    return tmax(ch->free_at, emu_xfers(sh)[ch->head].ready);
}

/* ---- the channel heap: which channel sends the next packet -------------
 * A min-heap of channels by (next packet's time, channel), so that the
 * engine's next event is at its root: finding it by a scan of every
 * channel cost O(channels) an event, a 1 MiB broadcast on 1024 nodes
 * hundreds of millions of steps.  A channel's key changes only when a
 * transfer joins its queue or it sends a packet; either sifts it. */
static int chan_less(emu_shared_t *sh, int32_t a, fmpl_emu_time_t ta, int32_t b)
{
    fmpl_emu_time_t tb = chan_next(sh, &emu_chans(sh)[b]);
    return ta != tb ? ta < tb : a < b;
}

static void heap_put(emu_shared_t *sh, int at, int32_t c)
{
    emu_heap(sh)[at] = c;
    emu_chans(sh)[c].at = at;
}

static void heap_fix(emu_shared_t *sh, int32_t c)
{
    int32_t *hp = emu_heap(sh);
    emu_chan_t *ch = emu_chans(sh);
    int i = ch[c].at, n = sh->nchan;
    fmpl_emu_time_t k = chan_next(sh, &ch[c]);
    while (i > 0 && chan_less(sh, c, k, hp[(i - 1) / 2])) {
        heap_put(sh, i, hp[(i - 1) / 2]);
        i = (i - 1) / 2;
    }
    for (;;) {
        int m = i;
        int32_t mc = c;
        fmpl_emu_time_t mk = k;
        for (int j = 2 * i + 1; j <= 2 * i + 2 && j < n; j++) {
            fmpl_emu_time_t kj = chan_next(sh, &ch[hp[j]]);
            if (kj != mk ? kj < mk : hp[j] < mc)
                m = j, mc = hp[j], mk = kj;
        }
        if (m == i)
            break;
        heap_put(sh, i, mc);
        i = m;
    }
    heap_put(sh, i, c);
}

void fmpl_emu_heap_init(emu_shared_t *sh)
{
    for (int32_t c = 0; c < sh->nchan; c++)
        heap_put(sh, c, c);        /* every channel idle: any order is a heap */
}

/* ---- what is coming to each rank -----------------------------------------
 * A rank may look at its inbox only up to where no entry may still come
 * (emu_sync.c).  Entries come from transfers already on their way, as
 * well as from kicks yet to come; so each rank keeps the transfers whose
 * entries go to it, and the earliest such an entry may come is bounded by
 * when the transfer's last packet may leave its channel. */
static void coming_add(emu_shared_t *sh, int32_t i, int r, int k)
{
    emu_xfer_rec_t *x = &emu_xfers(sh)[i];
    int32_t *head = &emu_ranks(sh)[r].coming[k];
    x->fprev[k] = -1;
    x->fnext[k] = *head;
    if (*head >= 0)
        emu_xfers(sh)[*head].fprev[k] = i;
    *head = i;
}

static void coming_del(emu_shared_t *sh, int32_t i, int r, int k)
{
    emu_xfer_rec_t *xs = emu_xfers(sh), *x = &xs[i];
    if (x->fprev[k] >= 0)
        xs[x->fprev[k]].fnext[k] = x->fnext[k];
    else
        emu_ranks(sh)[r].coming[k] = x->fnext[k];
    if (x->fnext[k] >= 0)
        xs[x->fnext[k]].fprev[k] = x->fprev[k];
}

/* The earliest the last packet of transfer x may leave: after the
 * packets before it on its channel (the transfer being sent, x itself),
 * each at least one full packet's time on the first link after the one
 * before. */
static fmpl_emu_time_t xfer_last(emu_shared_t *sh, const emu_xfer_rec_t *x)
{
    const emu_chan_t *ch = &emu_chans(sh)[x->chan];
    fmpl_emu_time_t t = chan_next(sh, ch);
    const emu_xfer_rec_t *c = ch->cur >= 0 ? &emu_xfers(sh)[ch->cur] : x;
    uint64_t mtu = c->path.packet ? c->path.packet : sh->packet;
    uint64_t left = (c->bytes - c->sent + mtu - 1) / mtu;
    if (left > 1)
        t = tadd(t, (fmpl_emu_time_t)((left - 1) * mtu) * emu_ps(sh)[c->path.link[0]]);
    return tmax(t, x->ready);
}

fmpl_emu_time_t fmpl_emu_coming_locked(emu_shared_t *sh, int r)
{
    emu_xfer_rec_t *xs = emu_xfers(sh);
    fmpl_emu_time_t t = FMPL_EMU_NEVER;
    for (int k = 0; k < 2; k++)
        for (int32_t i = emu_ranks(sh)[r].coming[k]; i >= 0; i = xs[i].fnext[k]) {
            fmpl_emu_time_t l = xfer_last(sh, &xs[i]);
            if (l < t)
                t = l;
        }
    return t;
}

int fmpl_emu_kick(fmpl_emu_t *e, const fmpl_emu_xfer_t *x)
{
    emu_shared_t *sh = e->sh;
    if (fmpl_emu_lock(e) != 0)
        return FMPL_ERR_PEER;
    int32_t i = xfer_alloc(sh);
    if (i < 0) {
        fmpl_emu_unlock(e);
        fmpl_log_err("emulated fabric: more than %d transfers on their way", sh->max_xfers);
        return FMPL_ERR_NOMEM;
    }
    emu_rank_t *me = &emu_ranks(sh)[e->rank];
    emu_xfer_rec_t *r = &emu_xfers(sh)[i];
    r->src = e->rank;
    r->dst = x->dst;
    r->seq = ++me->kicks;
    r->ready = sh->model ? x->ready : 0;
    r->bytes = x->bytes;
    r->sent = 0;
    r->tail = 0;
    r->ctail = 0;
    r->path = x->path;
    r->comp = (uint64_t)(uintptr_t)x->comp;
    r->msg = x->msg;
    r->msg.src = e->rank;
    r->chan = x->chan;
    if (r->dst >= 0)
        coming_add(sh, i, r->dst, EMU_FOR_DST);
    if (r->comp)
        coming_add(sh, i, r->src, EMU_FOR_SRC);
    if (x->comp)
        x->comp->pending++;
    chan_insert(sh, &emu_chans(sh)[x->chan], i);
    heap_fix(sh, x->chan);
    if (!sh->model)
        fmpl_emu_run_locked(e);    /* nothing to wait for: deliver now */
    fmpl_emu_unlock(e);
    return FMPL_SUCCESS;
}

/* A wait on `comp` gave up: our transfers still counted in it complete
 * without telling it, and completions already in our inbox are dropped
 * (apply_due skips a comp of 0).  The memory may be a stack frame by now. */
void fmpl_emu_forget(fmpl_emu_t *e, const void *comp)
{
    if (fmpl_emu_lock(e) != 0)
        return;
    emu_shared_t *sh = e->sh;
    emu_xfer_rec_t *xs = emu_xfers(sh);
    emu_ent_t *en = emu_ents(sh);
    uint64_t c = (uint64_t)(uintptr_t)comp;
    int n = 0;
    for (int32_t i = emu_ranks(sh)[e->rank].coming[EMU_FOR_SRC], next; i >= 0; i = next) {
        next = xs[i].fnext[EMU_FOR_SRC];
        if (xs[i].comp == c) {
            coming_del(sh, i, e->rank, EMU_FOR_SRC);
            xs[i].comp = 0;
            n++;
        }
    }
    for (int32_t i = emu_ranks(sh)[e->rank].in_head; i >= 0; i = en[i].next)
        if (en[i].msg.kind == FMPL_EMU_E_COMP && en[i].msg.comp == c) {
            en[i].msg.comp = 0;
            n++;
        }
    fmpl_emu_unlock(e);
    if (n)
        fmpl_log_info("emulated fabric: a wait gave up; %d completion(s) still to come will "
                      "not be counted", n);
}

static long die_after;             /* fmpl_emu_die_after; 0: never */

void fmpl_emu_die_after(long n) { die_after = n; }

/* The transfer `x` has sent its last packet: its entry, its completion. */
static void xfer_done(emu_shared_t *sh, emu_xfer_rec_t *x)
{
    int32_t i = (int32_t)(x - emu_xfers(sh));
    if (x->dst >= 0)
        coming_del(sh, i, x->dst, EMU_FOR_DST);
    if (x->comp)
        coming_del(sh, i, x->src, EMU_FOR_SRC);
    fmpl_emu_time_t vis = tadd(x->tail, x->path.to_mem);
    if (sh->pair_order && x->dst >= 0) {
        /* not before the record this rank sent that rank last */
        fmpl_emu_time_t *last = &emu_pairs(sh)[(size_t)x->src * (size_t)sh->size + (size_t)x->dst];
        vis = tmax(vis, *last);
        *last = vis;
    }
    int rc = FMPL_SUCCESS;
    if (x->dst >= 0)
        rc = post(sh, x->dst, vis, x->src, x->seq, &x->msg);
    if (x->comp) {
        fmpl_emu_msg_t m = { .kind = FMPL_EMU_E_COMP, .src = x->src, .comp = x->comp,
                             .status = rc };
        fmpl_emu_time_t done = x->path.comp_link >= 0 ? x->ctail : vis;
        if (post(sh, x->src, tadd(done, x->path.ack), x->src, x->seq, &m) != FMPL_SUCCESS)
            rc = FMPL_ERR_NOMEM;
    }
    if (rc != FMPL_SUCCESS)
        fmpl_log_err("emulated fabric: more than %d entries on their way (inboxes full): "
                     "a transfer's notification is lost", sh->max_entries);
}

/* Channel c sends one packet at time t. */
static void send_packet(emu_shared_t *sh, emu_chan_t *ch, fmpl_emu_time_t t)
{
    emu_xfer_rec_t *xs = emu_xfers(sh);
    if (ch->cur < 0) {
        ch->cur = ch->head;
        ch->head = xs[ch->cur].next;
        if (ch->head >= 0)
            xs[ch->head].prev = -1;
        else
            ch->tail = -1;
    }
    emu_xfer_rec_t *x = &xs[ch->cur];
    uint64_t pkt = x->bytes - x->sent;
    uint64_t mtu = x->path.packet ? x->path.packet : sh->packet;
    if (pkt > mtu)
        pkt = mtu;
    emu_link_t *links = emu_links(sh);
    fmpl_emu_time_t *ps = emu_ps(sh);
    /* A transfer's start-up (fetching its descriptor, the first read)
     * runs while the transfer before it still streams: the channel
     * prefetches, so two kicks in a row cost one start-up. */
    fmpl_emu_time_t h = x->sent == 0 ? tmax(tadd(t, x->path.gap), tadd(x->ready, x->path.start))
                                     : t;
    fmpl_emu_time_t end = h, first = h;
    for (int k = 0; k < x->path.n; k++) {
        int32_t l = x->path.link[k];
        fmpl_emu_time_t d = (fmpl_emu_time_t)pkt * ps[l];
        fmpl_emu_time_t s = fmpl_emu_link_reserve(&links[l], t, h + x->path.lat[k], d);
        end = s + d;
        if (k == 0)
            first = end;
        if (k == x->path.comp_link && end > x->ctail)
            x->ctail = end;
        h = s;
    }
    x->sent += pkt;
    if (end > x->tail)
        x->tail = end;
    ch->free_at = first;
    if (x->sent >= x->bytes) {
        xfer_done(sh, x);
        if (die_after > 0 && --die_after == 0)
            raise(SIGKILL);
        xfer_free(sh, ch->cur);
        ch->cur = -1;
    }
}

int fmpl_emu_run_locked(fmpl_emu_t *e)
{
    int done = 0;
    emu_shared_t *sh = e->sh;
    emu_chan_t *ch = emu_chans(sh);
    fmpl_emu_time_t limit = FMPL_EMU_NEVER;
    int bounded = 0;
    for (;;) {
        int c = sh->nchan ? emu_heap(sh)[0] : -1;
        fmpl_emu_time_t t = c >= 0 ? chan_next(sh, &ch[c]) : FMPL_EMU_NEVER;
        if (t == FMPL_EMU_NEVER)
            return done;
        if (sh->model) {
            /* An event is final once no kick can come before it: before
             * the bound K (a kick's event is at its time).  K grows but
             * for one case (below), so it is computed again only when an
             * event looks unsafe. */
            if (!bounded || t >= limit) {
                limit = fmpl_emu_bound_locked(e, t);
                bounded = 1;
            }
            if (t >= limit)
                return done;
        }
        send_packet(sh, &ch[c], t);
        heap_fix(sh, c);
        done += ch[c].cur < 0;
        /* K does fall once: an entry for a rank blocked with nothing to
         * wait for (bound: never) brings its bound down to the entry's
         * time.  Events past it must wait: that rank may kick before them
         * (the cached limit let them through, and the modeled times of a
         * 9-node reduce differed from run to run). */
        if (limit > emu_bounds(sh)[1])
            limit = emu_bounds(sh)[1];
    }
}
