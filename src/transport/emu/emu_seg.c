/*
 * emu_seg.c - the engine's shared segment: created and laid out by rank 0,
 * published through the bootstrap, mapped by every rank; the lock.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "fmpl.h"
#include "base/boot.h"
#include "base/log.h"
#include "transport/emu/emu_int.h"
#include "transport/seg.h"

static size_t round_up(size_t x, size_t a) { return (x + a - 1) / a * a; }

static void layout(emu_shared_t *h, int size, const fmpl_emu_config_t *c)
{
    size_t off = round_up(sizeof *h, 4096);
    h->ranks_off = off;
    off = round_up(off + (size_t)size * sizeof(emu_rank_t), 64);
    h->chans_off = off;
    off = round_up(off + (size_t)c->nchan * sizeof(emu_chan_t), 64);
    h->links_off = off;
    off = round_up(off + (size_t)c->nlinks * sizeof(emu_link_t), 64);
    h->ps_off = off;
    off = round_up(off + (size_t)c->nlinks * sizeof(fmpl_emu_time_t), 64);
    h->xfers_off = off;
    off = round_up(off + (size_t)c->max_xfers * sizeof(emu_xfer_rec_t), 64);
    h->ents_off = off;
    off = round_up(off + (size_t)c->max_entries * sizeof(emu_ent_t), 64);
    h->leaves = fmpl_emu_tree_leaves(size);
    h->bounds_off = off;
    off = round_up(off + 2 * h->leaves * sizeof(fmpl_emu_time_t), 64);
    h->needs_off = off;
    off = round_up(off + 2 * h->leaves * sizeof(fmpl_emu_time_t), 64);
    h->heap_off = off;
    off = round_up(off + (size_t)c->nchan * sizeof(int32_t), 64);
    h->pairs_off = off;
    if (c->pair_order)
        off += (size_t)size * (size_t)size * sizeof(fmpl_emu_time_t);
    off = round_up(off, 4096);
    h->fabric_off = off;
    h->fabric_len = c->fabric_bytes;
    off = round_up(off + c->fabric_bytes, 4096);
    h->seg_len = off;
}

static int init_lock(pthread_mutex_t *m)
{
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
    pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
    int rc = pthread_mutex_init(m, &a);
    pthread_mutexattr_destroy(&a);
    return rc;
}

/* Rank 0: the segment with empty pools and idle channels. */
static int create(fmpl_emu_t *e, const fmpl_emu_config_t *c)
{
    emu_shared_t tmp = { 0 };
    layout(&tmp, e->tl->size, c);
    void *base;
    int rc = fmpl_seg_create("fmpl-emu", tmp.seg_len, &e->fd, &base);
    if (rc != FMPL_SUCCESS)
        return rc;
    emu_shared_t *h = base;
    *h = tmp;
    h->size = e->tl->size;
    h->nchan = c->nchan;
    h->nlinks = c->nlinks;
    h->max_xfers = c->max_xfers;
    h->max_entries = c->max_entries;
    h->model = c->model;
    h->packet = c->packet ? c->packet : 4096;
    h->pair_order = c->pair_order;
    h->lookahead = c->lookahead;
    h->signature = c->signature;
    h->cpu_scale = c->cpu_scale;
    h->cpu_threshold = c->cpu_threshold;
    atomic_store(&h->lock_holder, -1);
    atomic_store(&h->broken, 0);
    if (init_lock(&h->lock) != 0) {
        fmpl_log_err("%s: cannot create the engine's lock", c->name);
        return FMPL_ERR_SYSTEM;
    }
    e->sh = h;
    e->len = h->seg_len;
    emu_rank_t *rk = emu_ranks(h);
    for (int r = 0; r < h->size; r++) {
        rk[r].in_head = rk[r].in_tail = -1;
        rk[r].coming[EMU_FOR_DST] = rk[r].coming[EMU_FOR_SRC] = -1;
        atomic_store(&rk[r].lb, 0);
        atomic_store(&rk[r].state, EMU_RUN);
    }
    fmpl_emu_tree_init(emu_bounds(h), h->leaves, h->size, 0);
    fmpl_emu_tree_init(emu_needs(h), h->leaves, h->size, FMPL_EMU_NEVER);
    emu_chan_t *ch = emu_chans(h);
    for (int i = 0; i < h->nchan; i++)
        ch[i] = (emu_chan_t){ .free_at = 0, .head = -1, .tail = -1, .cur = -1 };
    fmpl_emu_heap_init(h);
    for (int l = 0; l < h->nlinks; l++)
        emu_ps(h)[l] = c->link_ps_per_byte[l];
    /* the pools start empty: taken from their never-used tails */
    h->xfer_free = h->ent_free = -1;
    h->magic = FMPL_EMU_MAGIC;
    return FMPL_SUCCESS;
}

/* FMPL_EMU_DIE=R:N, for the fault tests: rank R dies inside the engine
 * after its N-th transfer (fmpl_emu_die_after). */
static int die_setting(fmpl_emu_t *e)
{
    const char *v = getenv("FMPL_EMU_DIE");
    if (!v || !*v)
        return FMPL_SUCCESS;
    int r, used = 0;
    long n;
    if (sscanf(v, "%d:%ld%n", &r, &n, &used) != 2 || v[used] || r < 0 ||
        r >= e->tl->size || n < 1) {
        fmpl_log_err("FMPL_EMU_DIE=%s: expected RANK:N (a rank of the job, N >= 1)", v);
        return FMPL_ERR_ARG;
    }
    if (r == e->rank)
        fmpl_emu_die_after(n);
    return FMPL_SUCCESS;
}

int fmpl_emu_open(fmpl_tl_t *tl, const fmpl_emu_config_t *cfg, fmpl_emu_apply_fn apply,
                  void *ctx, fmpl_emu_t **out)
{
    fmpl_emu_t *e = calloc(1, sizeof *e);
    if (!e)
        return FMPL_ERR_NOMEM;
    e->tl = tl;
    e->fd = -1;
    e->rank = tl->rank;
    e->model = cfg->model;
    e->apply = apply;
    e->ctx = ctx;
    e->cpu_clock = calloc((size_t)tl->size, sizeof *e->cpu_clock);
    if (!e->cpu_clock) {
        free(e);
        return FMPL_ERR_NOMEM;
    }
    /* Yama's ptrace_scope=1 would refuse cross-memory attach between
     * sibling processes, and opening our memfd through /proc. */
    prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
    fmpl_boot_t *b = tl->boot;
    int rc = FMPL_SUCCESS;
    struct { int32_t pid, fd; uint64_t len; } addr = { getpid(), -1, 0 };
    if (tl->rank == 0) {
        rc = create(e, cfg);
        addr.fd = e->fd;
        addr.len = e->len;
        if (rc == FMPL_SUCCESS)
            rc = b->ops->put(b, "emu", &addr, sizeof addr);
    }
    int32_t mypid = getpid();
    if (rc == FMPL_SUCCESS)
        rc = b->ops->put(b, "emupid", &mypid, sizeof mypid);
    if (rc == FMPL_SUCCESS)
        rc = b->ops->fence(b);
    if (rc == FMPL_SUCCESS && tl->rank != 0) {
        size_t len = sizeof addr;
        rc = b->ops->get(b, 0, "emu", &addr, &len);
        if (rc == FMPL_SUCCESS) {
            size_t mlen = (size_t)addr.len;
            e->sh = fmpl_seg_map_of(addr.pid, addr.fd, &mlen);
            e->len = mlen;
            if (!e->sh) {
                fmpl_log_err("%s: cannot map the engine's segment of rank 0 (pid %d): %s",
                             cfg->name, addr.pid, strerror(errno));
                rc = FMPL_ERR_SYSTEM;
            } else if (e->sh->magic != FMPL_EMU_MAGIC || e->sh->size != tl->size ||
                       e->sh->nchan != cfg->nchan || e->sh->nlinks != cfg->nlinks ||
                       e->sh->model != cfg->model || e->sh->signature != cfg->signature) {
                fmpl_log_err("%s: rank 0 emulates another machine: the %s settings differ "
                             "between the ranks", cfg->name, cfg->settings ? cfg->settings
                                                                           : "fabric's");
                rc = FMPL_ERR_ARG;
            }
        }
    }
    /* every rank's pid and CPU clock, for its lower bound while it computes */
    for (int r = 0; r < tl->size && rc == FMPL_SUCCESS; r++) {
        int32_t pid;
        size_t len = sizeof pid;
        rc = b->ops->get(b, r, "emupid", &pid, &len);
        if (rc == FMPL_SUCCESS && clock_getcpuclockid(pid, &e->cpu_clock[r]) != 0)
            e->cpu_clock[r] = (clockid_t)-1;
        if (rc == FMPL_SUCCESS && r == tl->rank)
            emu_ranks(e->sh)[r].pid = pid;
    }
    if (rc == FMPL_SUCCESS) {
        e->cpu_overhead = fmpl_emu_cpu_overhead();
        emu_ranks(e->sh)[tl->rank].cpu_overhead = e->cpu_overhead;
        e->vt = 0;
        e->depth = 0;
        e->started = 0;
        fmpl_emu_publish(e, EMU_USER, 0);
        /* nobody kicks before everybody is here */
        rc = b->ops->fence(b);
    }
    if (rc == FMPL_SUCCESS)
        rc = die_setting(e);
    if (rc != FMPL_SUCCESS) {
        fmpl_emu_close(e);
        return rc;
    }
    *out = e;
    return FMPL_SUCCESS;
}

void fmpl_emu_leave_job(fmpl_emu_t *e)
{
    if (e && e->sh)
        fmpl_emu_publish(e, EMU_GONE, FMPL_EMU_NEVER);
}

void fmpl_emu_close(fmpl_emu_t *e)
{
    if (!e)
        return;
    fmpl_emu_leave_job(e);
    if (e->sh)
        munmap(e->sh, e->len);
    if (e->fd >= 0)
        close(e->fd);
    free(e->cpu_clock);
    free(e->due);
    free(e);
}

void *fmpl_emu_fabric(fmpl_emu_t *e) { return (uint8_t *)e->sh + e->sh->fabric_off; }

/* How long one sleep on the engine's lock lasts before it looks again.
 * A waiter has been seen asleep on a free lock (the word 0, no owner)
 * after ranks died around it, 1 run in about 1000 of check_coll's
 * allreduce under a rank killed with FMPL_PROGRESS_THREAD=1 (a wake-up
 * lost where a holder or a woken waiter died): it looks again, and takes
 * the lock, after this long at most instead of never. */
#define LOCK_SLICE_S 0.1

/* A rank died inside the engine (lock_holder still its own): it may have
 * left a transfer half done - its completion posted twice or never, a list
 * half linked - and a completion told twice counts down in a stack frame
 * that is gone (a survivor's SIGSEGV in the fault matrix).  Nothing the
 * machine holds can be trusted: it stops, every later lock fails, and the
 * ranks' waits end with FMPL_ERR_PEER naming the dead rank. */
static int engine_broken(fmpl_emu_t *e)
{
    int b = atomic_load(&e->sh->broken);
    if (b && !e->broken_told) {
        e->broken_told = 1;
        fmpl_log_err("%s: rank %d (pid %d) is gone, and died inside the emulated machine's "
                     "engine: the machine's state is lost, no more transfers", e->tl->ops->name,
                     b - 1, (int)emu_ranks(e->sh)[b - 1].pid);
        fmpl_boot_blame(e->tl->boot, b - 1, 1);
    }
    return b != 0;
}

int fmpl_emu_lock(fmpl_emu_t *e)
{
    pthread_mutex_t *m = &e->sh->lock;
    double limit = e->tl->boot->peer_timeout;
    if (engine_broken(e))
        return -1;
    int rc = pthread_mutex_trylock(m);
    if (rc == EBUSY && e->lock_stuck)
        return -1;                 /* told once; the job is ending */
    struct timespec at;
    double waited = 0;
    while (rc == EBUSY || rc == ETIMEDOUT) {
        /* no longer than FMPL_PEER_TIMEOUT: the holder may be stopped */
        if (rc == ETIMEDOUT && limit > 0 && waited >= limit) {
            /* -1: stopped between taking the lock and saying so, or
             * between saying it was done and letting go */
            int r = atomic_load(&e->sh->lock_holder);
            if (r >= 0) {
                fmpl_log_err("%s: waited %.0f s for rank %d, inside the emulated machine's "
                             "engine (FMPL_PEER_TIMEOUT): giving up", e->tl->ops->name, limit,
                             r);
                fmpl_boot_blame(e->tl->boot, r, 0);
            } else {
                fmpl_log_err("%s: waited %.0f s for the rank inside the emulated machine's "
                             "engine (FMPL_PEER_TIMEOUT): giving up", e->tl->ops->name, limit);
            }
            e->lock_stuck = 1;
            return -1;
        }
        double slice = limit > 0 && limit - waited < LOCK_SLICE_S ? limit - waited : LOCK_SLICE_S;
        clock_gettime(CLOCK_REALTIME, &at);
        double end = (double)at.tv_sec + 1e-9 * (double)at.tv_nsec + slice;
        at.tv_sec = (time_t)end;
        at.tv_nsec = (long)((end - (double)at.tv_sec) * 1e9);
        rc = pthread_mutex_timedlock(m, &at);
        waited += slice;
    }
    if (rc == EOWNERDEAD) {
        /* a rank died holding it; before it said it was inside (or after
         * it said it was done), the machine is whole */
        pthread_mutex_consistent(m);
        int r = atomic_load(&e->sh->lock_holder);
        if (r >= 0)
            atomic_store(&e->sh->broken, r + 1);
    }
    if (engine_broken(e)) {
        atomic_store(&e->sh->lock_holder, -1);
        pthread_mutex_unlock(m);
        return -1;
    }
    atomic_store(&e->sh->lock_holder, e->rank);
    return 0;
}

void fmpl_emu_unlock(fmpl_emu_t *e)
{
    atomic_store(&e->sh->lock_holder, -1);
    pthread_mutex_unlock(&e->sh->lock);
}

pid_t fmpl_emu_pid(const fmpl_emu_t *e, int rank) { return emu_ranks(e->sh)[rank].pid; }

void fmpl_emu_set_probe_addr(fmpl_emu_t *e, uint64_t addr)
{
    emu_ranks(e->sh)[e->rank].probe_addr = addr;
}

uint64_t fmpl_emu_probe_addr(const fmpl_emu_t *e, int rank)
{
    return emu_ranks(e->sh)[rank].probe_addr;
}

int fmpl_emu_model(const fmpl_emu_t *e) { return e->model; }
