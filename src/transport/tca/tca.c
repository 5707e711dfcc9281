/*
 * tca.c - HA-PACS/TCA, emulated: PEACH2 inside sub-clusters, InfiniBand
 * between all nodes, and FMPL choosing the network per peer, per size and
 * per access pattern (FMPL_TRANSPORT=tca; Odajima et al. 2015, sections 2
 * and 5).
 *
 * One machine, two networks.  The nodes share one emulation (engine,
 * clock, matching area, table of registered memory): a node's memory is
 * registered once, as pinned pages in its sub-cluster's PCIe window, and
 * the same key serves both networks (the HCA checks it as an rkey).  The
 * engine's links are PEACH2's (P2_LINKS_PER_NODE a node, by rank) then
 * InfiniBand's; its channels PEACH2's DMA channels and CPU stores, then
 * the HCAs' queue pairs.  Each network is a complete transport part
 * (src/transport/peach2, src/transport/ib) and the near/far routing layer
 * (route/route_core.h) sends each call to one of them:
 *  - peers outside our sub-cluster: InfiniBand, always;
 *  - peers inside it, by FMPL_TCA_ROUTE:
 *      hybrid (default)  block-stride puts and records on PEACH2 (its
 *                        hardware block-stride DMA needs no packing and
 *                        its PIO stores are the lowest latency: Odajima
 *                        et al. 2015, 4.2 and 5.2); a halo exchange's
 *                        contiguous faces (block, and stride faces
 *                        packed) on InfiniBand, beside its block-stride
 *                        faces (5.2); other
 *                        contiguous and list puts on PEACH2 up to
 *                        FMPL_TCA_SWITCH_BYTES, on InfiniBand above (the
 *                        crossover of Fig. 4: 512 KB);
 *                        and a peer many hops away (FMPL_TCA_IB_HOPS or
 *                        more: by default from the models, the first
 *                        count at which a PIO store takes longer than an
 *                        inline InfiniBand write - 2) over InfiniBand
 *                        except for block-stride puts and for records
 *                        and writes up to FMPL_TCA_NEAR_BYTES sent
 *                        several at once (the suggestion of Odajima et
 *                        al. 2015, 6.2; choose() says why); from GPU
 *                        memory (FMPL_TCA_MV2) a write stays on PEACH2
 *                        while what MVAPICH2-GDR's protocol would add on
 *                        InfiniBand costs more than the hops;
 *      peach2            everything on PEACH2 (TCA only inside);
 *      ib                everything on InfiniBand (MPI over InfiniBand).
 * Sub-clusters: FMPL_TCA_SUBCLUSTER=S nodes (1-16, default 16): ranks
 * k S .. k S + S - 1 form sub-cluster k (the last may be smaller), each a
 * PEACH2 ring of its own (Odajima et al. 2015, Fig. 11, splits 8 and 16
 * nodes into two).  The collectives see sub-clusters as groups of near ranks
 * (tl->group): leaders talk over InfiniBand, members over PEACH2.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmpl.h"
#include "base/env.h"
#include "base/log.h"
#include "transport/ib/ib.h"
#include "transport/peach2/p2.h"
#include "transport/route/route_core.h"

/* transfers and entries on their way at once, over the whole job */
#define TCA_MAX_XFERS   65536
#define TCA_MAX_ENTRIES 131072

enum { POLICY_HYBRID, POLICY_PEACH2, POLICY_IB };
static const char *const policy_name[] = { "hybrid", "peach2", "ib", NULL };

typedef struct tca {
    fmpl_route_t core;             /* first: part[NEAR] PEACH2, part[FAR] InfiniBand */
    fmpl_emu_tl_t et;              /* the machine both networks are part of */
    fmpl_peach2_t p2;
    fmpl_ib_t ib;
    int S, policy;
    double switch_bytes;
    double near_bytes;             /* bursts of records and writes up to this: PEACH2 */
    int ib_hops;                   /* near peers this many hops away: InfiniBand */
    int *group;                    /* [size]: the sub-cluster of each rank */
} tca_t;

static inline tca_t *tca_of(fmpl_tl_t *tl) { return (tca_t *)tl->priv; }

static int choose(fmpl_route_t *core, int peer, int op, size_t bytes)
{
    tca_t *t = (tca_t *)core;
    int burst = op & FMPL_ROUTE_BURST;
    op &= ~FMPL_ROUTE_BURST;
    if (t->policy == POLICY_PEACH2)
        return FMPL_ROUTE_NEAR;
    if (t->policy == POLICY_IB)
        return FMPL_ROUTE_FAR;
    if (op == FMPL_ROUTE_STRIDED)
        return FMPL_ROUTE_NEAR;
    /* Small ones sent several at once (a tree's, a direct allgather's:
     * the caller's hint) arrive sooner on PEACH2 at any hop count: each
     * InfiniBand post costs the CPU 150 ns against a PIO store's 30, and
     * the HCA starts a write every 500 ns on each queue pair and
     * completes it an ACK later.  One at a time (recursive doubling's
     * steps) they arrive sooner over InfiniBand from 2 hops (16 nodes,
     * 32-byte allgather: 5.9 us by hops alone, 3.0 with every hop on
     * PEACH2; 64 nodes, 8-byte allreduce: 6.21 against 6.80; bench/tca
     * -w, docs/emulation.md). */
    if (burst && (op == FMPL_ROUTE_RECORD || op == FMPL_ROUTE_PUT) &&
        (double)bytes <= t->near_bytes)
        return FMPL_ROUTE_NEAR;
    int hops = t->p2.hops[peer - t->p2.base];
    if (op != FMPL_ROUTE_RECORD && t->ib.gpu.mode != FMPL_IB_GPU_OFF) {
        /* from GPU memory InfiniBand pays MVAPICH2-GDR's protocol (a QPI
         * read, copies) and PEACH2 only its hops: 64 bytes across QPI
         * cost 200 ns more, a hop 350 */
        double cpu_ns, hca_ns;
        fmpl_ib_gpu_cost(&t->ib.gpu, t->ib.m.link_mbps, (double)bytes, &cpu_ns, &hca_ns);
        if (cpu_ns + hca_ns - t->ib.gpu.gdr_ns > (hops - 1) * t->p2.m.hop_ns)
            return FMPL_ROUTE_NEAR;
    }
    if (t->ib_hops > 0 && hops >= t->ib_hops)
        return FMPL_ROUTE_FAR;     /* the hops cost more than the switch */
    if (op == FMPL_ROUTE_RECORD)
        return FMPL_ROUTE_NEAR;
    if (op == FMPL_ROUTE_FACE)
        return FMPL_ROUTE_FAR;     /* beside the block-stride faces on PEACH2 */
    return (double)bytes <= t->switch_bytes ? FMPL_ROUTE_NEAR : FMPL_ROUTE_FAR;
}

static const fmpl_route_class_t tca_class = {
    .name = "tca", .part_name = { "PEACH2", "InfiniBand" }, .choose = choose, .key = NULL,
};

/* The InfiniBand part's table: its ops; it opens and closes with tca. */
static int ib_alone(fmpl_tl_t *tl)
{
    (void)tl;
    fmpl_log_err("tca: the InfiniBand network runs only inside FMPL_TRANSPORT=tca");
    return FMPL_ERR_UNSUPPORTED;
}
static void ib_part_close(fmpl_tl_t *tl) { (void)tl; }

static const fmpl_tl_ops_t ib_part_ops = {
    .size = sizeof(fmpl_tl_ops_t),
    .name = "tca-ib",
    .open = ib_alone,
    .close = ib_part_close,
    .mem_reg = fmpl_emu_tl_mem_reg,
    .mem_dereg = fmpl_emu_tl_mem_dereg,
    .mem_alloc = fmpl_emu_tl_mem_alloc,
    .mem_free = fmpl_emu_tl_mem_free,
    .put = fmpl_ib_put,
    .put_strided = fmpl_ib_put_strided,
    .put_iov = fmpl_ib_put_iov,
    .get = fmpl_tl_unsupported_get,
    .mbox_in = fmpl_emu_tl_mbox_in,
    .notify = fmpl_ib_notify,
    .put_notify = fmpl_tl_put_notify_by_parts,
    .mbox_cas = fmpl_tl_unsupported_cas,
    .progress = fmpl_emu_tl_progress,
    .peer_ok = fmpl_emu_tl_peer_ok,
    .barrier = fmpl_tl_unsupported_barrier,
    .bcast = fmpl_tl_unsupported_bcast,
};

static int read_settings(tca_t *t)
{
    char what[160];
    long v;
    snprintf(what, sizeof what, "nodes a PEACH2 sub-cluster joins, 1 to %d", FMPL_PEACH2_MAX_NODES);
    int rc = fmpl_env_long("FMPL_TCA_SUBCLUSTER", FMPL_PEACH2_MAX_NODES, 1, FMPL_PEACH2_MAX_NODES,
                           what, &v);
    t->S = (int)v;
    int policy = POLICY_HYBRID;
    rc = rc ? rc : fmpl_env_choice("FMPL_TCA_ROUTE", policy_name, POLICY_HYBRID,
                                   "hybrid (PEACH2 for small and block-stride writes, "
                                   "InfiniBand for large ones), peach2 or ib", &policy);
    t->policy = policy;
    rc = rc ? rc : fmpl_env_double("FMPL_TCA_SWITCH_BYTES", 512 * 1024, 0, HUGE_VAL,
                                   "not a size in bytes (contiguous writes larger than this "
                                   "take InfiniBand; Odajima et al. 2015, Fig. 4: 512 KB)",
                                   &t->switch_bytes);
    rc = rc ? rc : fmpl_env_double("FMPL_TCA_NEAR_BYTES", 256, 0, HUGE_VAL,
                                   "not a size in bytes (records and writes up to this size, "
                                   "sent several at once, stay on PEACH2 at any hop count)",
                                   &t->near_bytes);
    /* unset: -1, from the models (tca_open) */
    rc = rc ? rc : fmpl_env_long("FMPL_TCA_IB_HOPS", -1, 0, 64,
                                 "near peers this many PEACH2 hops away or more take "
                                 "InfiniBand (0: none), 0 to 64", &v);
    t->ib_hops = (int)v;
    return rc;
}

/* The least hop count at which a record stored by PIO reaches its peer
 * later than an inline InfiniBand write (the CPU's part, the boards or
 * the HCAs and switch, the write into memory); 0 if never within a
 * sub-cluster. */
static int hops_from_models(const p2_model_t *p, const ib_model_t *ib)
{
    double ib_ns = ib->post_ns + ib->hca_ns + ib->switch_ns + ib->mem_ns;
    for (int h = 1; h <= FMPL_PEACH2_MAX_NODES; h++)
        if (p->store_ns + p->pio_ns + p->board_ns + h * p->hop_ns + p->mem_ns > ib_ns)
            return h;
    return 0;
}

static void tca_close(fmpl_tl_t *tl)
{
    tca_t *t = tca_of(tl);
    if (!t)
        return;
    fmpl_peach2_net_close(&t->p2);
    fmpl_ib_net_close(&t->ib);
    fmpl_route_core_fini(&t->core, tl->rank);
    fmpl_emu_tl_close(&t->et);
    free(t->group);
    free(t);
    tl->priv = NULL;
    tl->group = NULL;
    tl->ngroups = 0;
}

static int tca_open(fmpl_tl_t *tl)
{
    tca_t *t = calloc(1, sizeof *t);
    if (!t)
        return FMPL_ERR_NOMEM;
    tl->priv = t;
    int rc = read_settings(t);
    if (rc == FMPL_SUCCESS)
        rc = fmpl_route_core_init(&t->core, &tca_class, tl->size);
    t->group = calloc((size_t)tl->size, sizeof *t->group);
    if (rc == FMPL_SUCCESS && !t->group)
        rc = FMPL_ERR_NOMEM;
    if (rc != FMPL_SUCCESS) {
        tca_close(tl);
        return rc;
    }
    int S = t->S, base = tl->rank / S * S;
    int nodes = tl->size - base < S ? tl->size - base : S;
    for (int r = 0; r < tl->size; r++) {
        t->group[r] = r / S;
        t->core.near[r] = r / S == tl->rank / S;
    }
    fmpl_emu_tl_t *et = &t->et;
    et->tl = tl;
    et->areas = (fmpl_emu_areas_t){ .name = "tca", .what = "registered region",
                                    .max = FMPL_PEACH2_MAX_AREAS,
                                    .nstatic = FMPL_PEACH2_STATIC_AREAS,
                                    .win_base = FMPL_PEACH2_WIN_BASE,
                                    .win_slice = 1ull << FMPL_PEACH2_SLICE_BITS,
                                    .win_nodes = S };
    int p2_links = tl->size * P2_LINKS_PER_NODE, p2_chans = tl->size * FMPL_PEACH2_CHANS_PER_NODE;
    rc = fmpl_peach2_net_open(&t->p2, tl, et, base, nodes);
    if (rc == FMPL_SUCCESS)
        rc = fmpl_ib_net_open(&t->ib, tl, et, t->p2.m.on, p2_links, p2_chans, "FMPL_TCA_IB_");
    if (rc == FMPL_SUCCESS)
        rc = fmpl_ib_gpu_read(&t->ib.gpu, "FMPL_TCA_MV2_");
    int nlinks = p2_links + tl->size * FMPL_IB_LINKS_PER_NODE;
    fmpl_emu_time_t *ps = calloc((size_t)nlinks, sizeof *ps);
    if (rc == FMPL_SUCCESS && !ps)
        rc = FMPL_ERR_NOMEM;
    if (rc != FMPL_SUCCESS) {
        free(ps);
        tca_close(tl);
        return rc;
    }
    const p2_model_t *m = &t->p2.m;
    if (t->ib_hops < 0)
        t->ib_hops = hops_from_models(m, &t->ib.m);
    for (int l = 0; l < p2_links; l++)
        ps[l] = (fmpl_emu_time_t)(1e6 / m->link_mbps + 0.5);
    fmpl_ib_link_ps(&t->ib, tl->size, ps);
    fmpl_peach2_costs(m, &et->cost);
    if (t->ib.gpu.mode != FMPL_IB_GPU_OFF) {
        /* the data in GPU memory: kernels pack it; PEACH2 reads it by DMA
         * (the CPU cannot store it by PIO), its first read as slow as the
         * HCA's; the records stay in host memory */
        et->cost.pack_ns = t->ib.gpu.pack_ns;
        et->cost.pack_mbps = t->ib.gpu.pack_mbps;
        t->p2.m.pio_max_bytes = 0;
        t->p2.gpu_read_ns = t->ib.gpu.gdr_ns;
        tl->seg_min = (uint64_t)t->ib.gpu.stage_limit + 1;   /* past the copies */
    }
    double la = fmpl_peach2_lookahead(m), la_ib = fmpl_ib_lookahead(&t->ib.m);
    la = la_ib < la ? la_ib : la;
    if (m->on && la <= 0) {
        fmpl_log_err("tca: with the timing model on, PEACH2's and InfiniBand's least "
                     "latencies must be > 0 (the emulation's lookahead)");
        rc = FMPL_ERR_ARG;
    }
    /* as numbers, no padding: every byte digested must be the same everywhere */
    const double knobs[5] = { S, t->policy, t->ib_hops, t->switch_bytes, t->near_bytes };
    uint64_t sig = fmpl_emu_digest(0, m, sizeof *m);
    sig = fmpl_emu_digest(sig, &t->ib.m, sizeof t->ib.m);
    sig = fmpl_emu_digest(sig, &t->ib.gpu, sizeof t->ib.gpu);
    sig = fmpl_emu_digest(sig, knobs, sizeof knobs);
    fmpl_emu_config_t cfg = {
        .name = "tca", .model = m->on,
        .nchan = p2_chans + tl->size * FMPL_IB_QPS,
        .nlinks = nlinks, .link_ps_per_byte = ps,
        .packet = (uint32_t)(m->tlp_payload + m->tlp_overhead),
        .lookahead = fmpl_emu_ps(la), .cpu_scale = m->cpu_scale,
        .cpu_threshold = (int64_t)m->cpu_threshold_ns,
        .fabric_bytes = 0, .max_xfers = TCA_MAX_XFERS, .max_entries = TCA_MAX_ENTRIES,
        .pair_order = 1, .signature = sig,
        .settings = "FMPL_TCA_*",
    };
    if (rc == FMPL_SUCCESS)
        rc = fmpl_emu_tl_open(et, &cfg);
    free(ps);
    if (rc != FMPL_SUCCESS) {
        tca_close(tl);
        return rc;
    }
    /* the parts: complete transports over the one machine */
    static const fmpl_tl_ops_t *const ops[2] = { &fmpl_peach2_ops, &ib_part_ops };
    void *priv[2] = { &t->p2, &t->ib };
    for (int i = 0; i < 2; i++)
        t->core.part[i] = (fmpl_tl_t){ .ops = ops[i], .rank = tl->rank, .size = tl->size,
                                       .nidx = tl->nidx, .boot = tl->boot, .hosts = tl->hosts,
                                       .caps = FMPL_TL_CAP_SELF,
                                       .max_inline = FMPL_EMU_HALF, .priv = priv[i] };
    /* block-stride everywhere (InfiniBand: a write a block), no remote
     * atomics or reads (PEACH2 has none); sub-clusters are near groups */
    tl->caps = FMPL_TL_CAP_SELF | FMPL_TL_CAP_STRIDED | FMPL_TL_CAP_SHARED_LINK |
               FMPL_TL_CAP_WATCH;
    /* MPI over InfiniBand packs (Odajima et al. 2015, 4.2) */
    if (t->policy == POLICY_IB)
        tl->caps &= ~FMPL_TL_CAP_STRIDED;
    tl->max_inline = FMPL_EMU_HALF;
    tl->group = t->group;
    tl->ngroups = (tl->size + S - 1) / S;
    if (t->policy != POLICY_IB)    /* InfiniBand alone: every peer costs the same */
        tl->caps |= FMPL_TL_CAP_GROUP_NEAR;
    if (m->on) {                   /* what the collectives choose by (coll.h, hier.c) */
        double cpu = m->call_ns + m->recv_done_ns;
        tl->oneway_ns = cpu + t->ib.m.post_ns + t->ib.m.hca_ns + t->ib.m.switch_ns +
                        t->ib.m.mem_ns;
        tl->near_oneway_ns = cpu + m->store_ns + m->pio_ns + m->board_ns + m->hop_ns +
                             m->mem_ns;
    }
    fmpl_log_info("tca: %d nodes in %d sub-clusters of %d; rank %d in sub-cluster %d "
                  "(ranks %d-%d, two rings of %d); routing %s, contiguous writes above %.0f "
                  "bytes and peers %d hops away or more on InfiniBand (records and writes up "
                  "to %.0f bytes sent several at once on PEACH2)", tl->size, tl->ngroups, S,
                  tl->rank, tl->rank / S, base, base + nodes - 1, t->p2.ring.R,
                  policy_name[t->policy],
                  t->policy == POLICY_HYBRID ? t->switch_bytes : 0.0, t->ib_hops,
                  t->near_bytes);
    fmpl_peach2_model_log(m);
    fmpl_ib_model_log(&t->ib.m, "FMPL_TCA_IB_");
    fmpl_ib_gpu_log(&t->ib.gpu, "FMPL_TCA_MV2_");
    return FMPL_SUCCESS;
}

/* memory, progress: the machine's, which both networks share */
static fmpl_tl_t *near_part(fmpl_tl_t *tl) { return &tca_of(tl)->core.part[FMPL_ROUTE_NEAR]; }
static int tca_mem_reg(fmpl_tl_t *tl, void *addr, size_t len, fmpl_tl_key_t *key)
{
    return fmpl_emu_tl_mem_reg(near_part(tl), addr, len, key);
}
static void tca_mem_dereg(fmpl_tl_t *tl, const fmpl_tl_key_t *key)
{
    fmpl_emu_tl_mem_dereg(near_part(tl), key);
}
static void *tca_mem_alloc(fmpl_tl_t *tl, size_t len)
{
    return fmpl_emu_tl_mem_alloc(near_part(tl), len);
}
static int tca_mem_free(fmpl_tl_t *tl, void *p) { return fmpl_emu_tl_mem_free(near_part(tl), p); }
static int tca_progress(fmpl_tl_t *tl) { return fmpl_emu_tl_progress(near_part(tl)); }
static void tca_forget(fmpl_tl_t *tl, fmpl_tl_comp_t *comp)
{
    fmpl_emu_tl_forget(near_part(tl), comp);
}

const fmpl_tl_ops_t fmpl_tca_ops = {
    .size = sizeof(fmpl_tl_ops_t),
    .name = "tca",
    .open = tca_open,
    .close = tca_close,
    .mem_reg = tca_mem_reg,
    .mem_dereg = tca_mem_dereg,
    .mem_alloc = tca_mem_alloc,
    .mem_free = tca_mem_free,
    .put = fmpl_route_put,
    .put_strided = fmpl_route_put_strided,
    .put_iov = fmpl_route_put_iov,
    .get = fmpl_route_get,
    .mbox_in = fmpl_route_mbox_in,
    .notify = fmpl_route_notify,
    .put_notify = fmpl_tl_put_notify_by_parts,
    .mbox_cas = fmpl_route_mbox_cas,
    .progress = tca_progress,
    .forget = tca_forget,
    .peer_ok = fmpl_route_peer_ok,
    .barrier = fmpl_tl_unsupported_barrier,
    .bcast = fmpl_tl_unsupported_bcast,
};
