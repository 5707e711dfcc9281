/*
 * shm_ops.c - lifecycle, progress and the ops table of the shm transport.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include "fmpl.h"
#include "base/boot.h"
#include "base/env.h"
#include "base/log.h"
#include "transport/shm/shm.h"

/* Default switch from the FIFO to CMA.  Where ranks share cores the
 * FIFO's two copies (memcpy, 30 GB/s here) cost about CMA's one (8-12
 * GB/s) in core time, but a message through the FIFO is done only once
 * its receiver has had a core to copy it out, one by CMA once its sender
 * has written it.  64 KiB against 256 KiB, 128-256 KiB (2 runs, 4 and 8 ranks on 2
 * cores): alltoall 0.49-0.54 of the time, reduce 0.51-0.77, allgather
 * 0.55-0.91 (512 KiB-1 MiB up to 1.07), allreduce 0.84-1.2; 256 KiB won
 * the reduce and the tree broadcast on 2026-11-28, before the reduce's
 * blocks went whole (sendrecv.c) and the broadcast to the slots.
 * With a core each, what is not split (a collective's exchange,
 * sendrecv.c) goes by CMA above it, not streamed: bench/allgather and
 * alltoall, 2 ranks, 128 KiB-1 MiB 0.47-0.80 of the stream's time (2
 * runs each, a line crossing in 122-138 ns); bench/compare -t coll the
 * same hour: every collective at 128 KiB-1 MiB 0.61-0.94 of the best
 * MPI's instead of up to 2.10.  From 8 KiB, the exchanges of allgather
 * and alltoall at 16-64 KiB took 0.48-0.65 of the FIFO's time but the
 * reduce's and allreduce's 1.7-2.0 (the receiver there waits, and copies
 * out of the FIFO while the sender writes the next). */
#define FMPL_SHM_EAGER_DEFAULT (64 * 1024)
#define FMPL_SHM_STREAM_DEFAULT 0
/* With a core each, point-to-point messages above FMPL_SHM_SPLIT_MIN and
 * up to FMPL_SHM_SPLIT_MAX are split by CMA between sender and receiver
 * (p2p.h); larger ones, and the collectives' exchanges, go whole (by the
 * stream with FMPL_SHM_STREAM=1).  The stream's speed follows how fast a
 * cache line crosses between the cores, CMA's does not.  Split against
 * streamed, one-way: 0.66-0.79 of the time at 256 KiB-4 MiB where a line
 * crosses in 320 ns (40 interleaved pairs), 1.05-1.49 where it crosses in
 * 80 ns (3 pairs), 0.42-0.61 at 16 KiB-16 MiB in 133-148 ns (bench/compare
 * -r 3 -t both, FMPL_SPLIT_MIN=8K FMPL_SHM_SPLIT_MAX=16M, against the
 * default then, 2026-12-07), where streaming bandwidth went from 11-15
 * to 13-19 GB/s too.  Against the peers, whose large messages are one
 * CMA copy in every state, the split wins in each: it is the default. */
#define FMPL_SHM_SPLIT_MIN         (8 * 1024)
#define FMPL_SHM_SPLIT_MAX_DEFAULT UINT64_MAX
/* Where any rank shares a core, the collectives' signals carry up to this
 * much through the eager area (coll/signal.c) instead of point-to-point
 * messages, whose receiver must be on a core to post its header before
 * the sender can write.  bench/bcast, reduce, allreduce, allgather and
 * alltoall, 16-64 KiB, 64 KiB against 8 KiB (2 runs each, a line crossing
 * in 131-156 ns): 4 ranks on 2 cores 0.41-0.86 of the time, 8 ranks
 * 0.32-0.81; 128 KiB alike.  With a core each the second copy costs more
 * than the handshake: 2 ranks 1.15-1.67 at 16-32 KiB, so not there. */
#define FMPL_SHM_SIG_EAGER_CROWDED (64 * 1024)
/* From these sizes fmpl_bcast on FMPL_COMM_WORLD is the node's broadcast
 * (shm_coll.c): the root copies into its slots once and every reader
 * copies out, no handshake, no rank forwarding to another.  A loop of
 * broadcasts, roots in turn, against the tree (3 runs each, a line
 * crossing in 150 ns): 8 ranks on 2 cores 16 KiB 6.3 against 10.1 us,
 * 128 KiB 23.6 against 88, 1 MiB 247 against 757; 4 ranks 128 KiB 19.3
 * against 34-46, 1 MiB 154 against 304; 3 ranks 16 KiB 3.5 against 4.6.
 * With a core each (2 ranks) the tree's one stream wins up to 128 KiB
 * (12.3 against 11.0 us) and loses from 256 KiB (19.4 against 22.1). */
#define FMPL_SHM_HW_BCAST_CROWDED (16 * 1024)
#define FMPL_SHM_HW_BCAST_MIN     (256 * 1024)

static void shm_close(fmpl_tl_t *tl);

int fmpl_shm_open_for(fmpl_tl_t *tl, const uint8_t *serve)
{
    fmpl_shm_t *s = calloc(1, sizeof *s);
    if (!s)
        return FMPL_ERR_NOMEM;
    s->tl = tl;
    s->serve = serve;
    s->fd = -1;
    tl->priv = s;
    tl->caps = FMPL_TL_CAP_CAS | FMPL_TL_CAP_SELF | FMPL_TL_CAP_STRIDED |
               FMPL_TL_CAP_VADDR | FMPL_TL_CAP_HW_BARRIER | FMPL_TL_CAP_HW_BCAST |
               FMPL_TL_CAP_GROUP_NEAR;
    tl->group = tl->hosts->host;   /* near groups: hosts */
    tl->ngroups = tl->hosts->nhosts;

    uint64_t eager, split_max;
    int direct;
    int rc = fmpl_env_bool("FMPL_SHM_CMA", 1, "0 (no cross-memory attach) or 1", &s->cma);
    rc = rc ? rc : fmpl_env_bool("FMPL_SHM_DIRECT", 1,
                                 "0 (the layers above reach the mailbox lines through "
                                 "the transport's calls) or 1 (with loads and stores)",
                                 &direct);
    rc = rc ? rc : fmpl_env_size("FMPL_SHM_EAGER", FMPL_SHM_EAGER_DEFAULT, 0, SIZE_MAX,
                                 "bytes above which messages stream (FMPL_SHM_STREAM) or "
                                 "go by cross-memory attach (K, M, G allowed)", &eager);
    rc = rc ? rc : fmpl_env_bool("FMPL_SHM_STREAM", FMPL_SHM_STREAM_DEFAULT,
                                 "0 (messages above FMPL_SHM_EAGER go by cross-memory "
                                 "attach) or 1 (they stream through the FIFO while the "
                                 "ranks have a core each)", &s->stream);
    rc = rc ? rc : fmpl_env_size("FMPL_SHM_SPLIT_MAX", FMPL_SHM_SPLIT_MAX_DEFAULT, 0,
                                 UINT64_MAX,
                                 "the largest message sender and receiver copy half each "
                                 "where ranks have a core each (K, M, G allowed; 0: none)",
                                 &split_max);
    if (rc != FMPL_SUCCESS) {
        tl->priv = NULL;
        free(s);
        return rc;
    }
    s->eager = (size_t)eager;
    s->nt_min = fmpl_shm_llc_bytes() / 2;
    /* With a core each, point-to-point messages are split from 8 KiB up
     * to FMPL_SHM_SPLIT_MAX (above).  A split's half waits behind a stream
     * to the same peer: shm_put.c writes by CMA only with nothing queued,
     * so it never overtakes the FIFO. */
    if (!tl->hosts->crowded) {
        tl->split_min = split_max ? FMPL_SHM_SPLIT_MIN : UINT64_MAX;
        tl->split_max = split_max;
    }
    if (tl->hosts->crowded_any)
        tl->sig_eager = FMPL_SHM_SIG_EAGER_CROWDED;
    tl->hw_bcast_min = tl->hosts->crowded_any ? FMPL_SHM_HW_BCAST_CROWDED
                                              : FMPL_SHM_HW_BCAST_MIN;
    if (s->cma)
        tl->caps |= FMPL_TL_CAP_GET;
    /* Yama's ptrace_scope=1 would refuse CMA between sibling processes. */
    prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);

    s->peers = calloc((size_t)tl->size, sizeof *s->peers);
    s->hb_count = calloc((size_t)tl->size, sizeof *s->hb_count);
    s->direct = calloc((size_t)tl->size, sizeof *s->direct);
    s->active = calloc((size_t)tl->size, sizeof *s->active);
    if (!s->peers || !s->hb_count || !s->direct || !s->active) {
        shm_close(tl);
        return FMPL_ERR_NOMEM;
    }
    for (int r = 0; r < tl->size; r++)
        s->peers[r].cma_ok = 1;

    rc = fmpl_shm_seg_create(s);
    tl->max_inline = s->layout.slot - 32;   /* a record at offset 32 fills the slot */
    if (rc == FMPL_SUCCESS)
        rc = tl->boot->ops->fence(tl->boot);
    if (rc == FMPL_SUCCESS)
        rc = fmpl_shm_layout_check(s);
    if (rc == FMPL_SUCCESS && s->cma && fmpl_shm_cma_probe(s) != 0)
        tl->caps &= ~FMPL_TL_CAP_GET;
    /* Once every probe is done, a peer may exit at any time without
     * breaking anyone's start-up.  Peers' segments are mapped as we come
     * to talk to them (fmpl_shm_map), which sets their direct[].in. */
    if (rc == FMPL_SUCCESS)
        rc = tl->boot->ops->fence(tl->boot);
    if (rc != FMPL_SUCCESS) {
        shm_close(tl);
        return rc;
    }
    s->direct[tl->rank].in = fmpl_shm_line(s, tl->rank, tl->rank, 0);
    for (int r = 0; r < tl->size; r++)
        s->direct[r].out = fmpl_shm_line(s, tl->rank, r, 0);
    if (direct) {
        tl->direct = s->direct;
        tl->direct_slot = s->layout.slot;
    }
    char upto[32] = "any size";
    if (split_max != UINT64_MAX)
        snprintf(upto, sizeof upto, "%llu bytes", (unsigned long long)split_max);
    fmpl_log_info("shm: %d ranks, %d indices, segment %zu bytes, CMA %s, eager %zu, "
                  "streams %s, with a core each point-to-point messages split up to %s "
                  "(0: none), copied out past the caches from %zu bytes (0: never)",
                  tl->size, tl->nidx,
                  s->seg_len, !s->cma ? "off" : tl->caps & FMPL_TL_CAP_GET ? "on" : "refused",
                  s->eager,
                  fmpl_shm_streaming(s) ? "on" : s->stream ? "off (the ranks share cores)" : "off",
                  upto, s->nt_min);
    return FMPL_SUCCESS;
}

static int shm_open_(fmpl_tl_t *tl) { return fmpl_shm_open_for(tl, NULL); }

static void shm_close(fmpl_tl_t *tl)
{
    fmpl_shm_t *s = fmpl_shm_of(tl);
    if (!s)
        return;
    if (s->peers)
        for (int r = 0; r < tl->size; r++)
            while (s->peers[r].pend) {
                fmpl_shm_pend_t *e = s->peers[r].pend;
                s->peers[r].pend = e->next;
                free(e);
            }
    while (s->pend_free) {
        fmpl_shm_pend_t *e = s->pend_free;
        s->pend_free = e->next;
        free(e);
    }
    fmpl_shm_mem_cleanup(s);
    fmpl_shm_seg_destroy(s);
    free(s->peers);
    free(s->hb_count);
    free(s->direct);
    free(s->active);
    tl->direct = NULL;
    free(s);
    tl->priv = NULL;
}

/* Pending FIFO work out; then the FIFOs of the peers we have mapped
 * (those that write to us set their contact bit first, shm_seg.c): the
 * peers a rank talks to, not every rank of the job. */
static int shm_progress(fmpl_tl_t *tl)
{
    fmpl_shm_t *s = fmpl_shm_of(tl);
    int n = 0;
    if (s->npend)
        for (int i = 0; i < s->nactive; i++)
            if (s->peers[s->active[i]].pend)
                n += fmpl_shm_fifo_push(s, s->active[i]);
    fmpl_shm_contacts(s);
    for (int i = 0; i < s->nactive; i++) {
        int r = s->active[i];
        fmpl_shm_peer_t *p = &s->peers[r];
        if (!p->next || atomic_load_explicit(p->next, memory_order_relaxed) == p->consumed + 1)
            n += fmpl_shm_fifo_drain(s, r);
    }
    return n;
}

static int shm_peer_ok(fmpl_tl_t *tl, int peer)
{
    fmpl_shm_t *s = fmpl_shm_of(tl);
    /* 0: on another host (not ours to judge), or never published */
    pid_t pid = fmpl_shm_here(tl, peer) ? fmpl_shm_pid(s, peer) : 0;
    return pid <= 0 || !(kill(pid, 0) != 0 && errno == ESRCH);
}

/* Entries queued for FIFO space keep their comp until they leave: a
 * forgotten one leaves uncounted (its peer may still drain, or never). */
static void shm_forget(fmpl_tl_t *tl, fmpl_tl_comp_t *comp)
{
    fmpl_shm_t *s = fmpl_shm_of(tl);
    for (int r = 0; r < tl->size; r++)
        for (fmpl_shm_pend_t *e = s->peers[r].pend; e; e = e->next)
            if (e->comp == comp)
                e->comp = NULL;
}

const fmpl_tl_ops_t fmpl_shm_ops = {
    .size = sizeof(fmpl_tl_ops_t),
    .name = "shm",
    .open = shm_open_,
    .close = shm_close,
    .mem_reg = fmpl_shm_mem_reg,
    .mem_dereg = fmpl_shm_mem_dereg,
    .mem_alloc = fmpl_shm_mem_alloc,
    .mem_free = fmpl_shm_mem_free,
    .put = fmpl_shm_put,
    .put_strided = fmpl_shm_put_strided,
    .put_iov = fmpl_tl_put_iov_by_put,
    .get = fmpl_shm_get,
    .mbox_in = fmpl_shm_mbox_in,
    .notify = fmpl_shm_notify,
    .put_notify = fmpl_shm_put_notify,
    .mbox_cas = fmpl_shm_mbox_cas,
    .progress = shm_progress,
    .peer_ok = shm_peer_ok,
    .forget = shm_forget,
    .barrier = fmpl_shm_barrier,
    .bcast = fmpl_shm_bcast,
};
