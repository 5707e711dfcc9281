/*
 * ib_ops.c - a plain InfiniBand cluster, emulated (FMPL_TRANSPORT=ib):
 * HA-PACS/TCA's nodes and InfiniBand without PEACH2, at any size up to
 * FMPL_IB_MAX_NODES, on one switch or a two-level fat tree.  Its network
 * is the one tca contains (ib_net.c, ib_rdma.c, ib_model.c), here the
 * machine's only one; the clock, the matching area, memory registration
 * and progress are emu_tl's, as on every emulated fabric.
 *
 * Settings (every rank the same): FMPL_IB_TOPO=switch|fattree,
 * FMPL_IB_LEAF (nodes a leaf switch, default 18: a 36-port switch with
 * half its ports down) and FMPL_IB_SPINES (uplinks a leaf, default 18:
 * full bisection); the model's parameters FMPL_IB_<NAME> (ib_model.c,
 * ib_node_model.c).
 */
#define _GNU_SOURCE
#include <stdlib.h>

#include "fmpl.h"
#include "base/env.h"
#include "base/log.h"
#include "transport/ib/ib.h"

/* transfers and entries on their way at once, over the whole job */
#define IB_MAX_XFERS   (1 << 18)
#define IB_MAX_ENTRIES (1 << 19)
#define IB_MAX_AREAS   4096        /* registered regions a node */
#define IB_STATIC_AREAS 256        /* ids 1..255: fmpl_alloc_mem */

typedef struct ib_alone {
    fmpl_ib_t net;                 /* first: the network (fmpl_ib_of) */
    fmpl_emu_tl_t own;             /* the machine, the network's only one */
    ib_node_model_t node;
} ib_alone_t;

static const char *const topo_name[] = { "switch", "fattree", NULL };

static int read_topo(ib_topo_t *tp)
{
    long leaf, spines;
    int fat = 0;
    int rc = fmpl_env_choice("FMPL_IB_TOPO", topo_name, 0,
                             "switch (every node on one switch) or fattree (leaf switches "
                             "and spines)", &fat);
    rc = rc ? rc : fmpl_env_long("FMPL_IB_LEAF", 18, 1, FMPL_IB_MAX_NODES,
                                 "nodes a leaf switch of the fat tree, 1 to 4096", &leaf);
    rc = rc ? rc : fmpl_env_long("FMPL_IB_SPINES", 18, 1, 1024,
                                 "spine switches of the fat tree (a leaf's uplinks), 1 to 1024",
                                 &spines);
    *tp = (ib_topo_t){ .fat = fat, .leaf = (int)leaf, .spines = (int)spines };
    return rc;
}

static void ib_close(fmpl_tl_t *tl)
{
    ib_alone_t *a = tl->priv;
    if (!a)
        return;
    fmpl_ib_net_close(&a->net);
    fmpl_emu_tl_close(&a->own);
    free(a);
    tl->priv = NULL;
}

static int ib_open(fmpl_tl_t *tl)
{
    if (tl->size > FMPL_IB_MAX_NODES) {
        fmpl_log_err("ib: %d ranks, at most %d nodes", tl->size, FMPL_IB_MAX_NODES);
        return FMPL_ERR_ARG;
    }
    ib_alone_t *a = calloc(1, sizeof *a);
    if (!a)
        return FMPL_ERR_NOMEM;
    tl->priv = a;
    fmpl_emu_tl_t *et = &a->own;
    et->tl = tl;
    et->areas = (fmpl_emu_areas_t){ .name = "ib", .what = "registered region",
                                    .max = IB_MAX_AREAS, .nstatic = IB_STATIC_AREAS };
    int rc = fmpl_ib_node_model_read(&a->node);
    rc = rc ? rc : read_topo(&a->net.topo);
    rc = rc ? rc : fmpl_ib_net_open(&a->net, tl, et, a->node.on, 0, 0, "FMPL_IB_");
    int nlinks = fmpl_ib_nlinks(&a->net.topo, tl->size);
    fmpl_emu_time_t *ps = calloc((size_t)nlinks, sizeof *ps);
    if (rc == FMPL_SUCCESS && !ps)
        rc = FMPL_ERR_NOMEM;
    if (rc != FMPL_SUCCESS) {
        free(ps);
        ib_close(tl);
        return rc;
    }
    /* remote writes; no remote atomics, no remote read, no hardware
     * collectives; block-stride packed above (MPI over InfiniBand packs,
     * Odajima et al. 2015, 4.2) */
    tl->caps = FMPL_TL_CAP_SELF | FMPL_TL_CAP_SHARED_LINK | FMPL_TL_CAP_WATCH;
    tl->max_inline = FMPL_EMU_HALF;
    const ib_node_model_t *n = &a->node;
    const ib_model_t *m = &a->net.m;
    if (n->on) {                   /* what the collectives choose by (coll.h) */
        tl->oneway_ns = n->call_ns + m->post_ns + m->hca_ns + 2 * m->switch_ns + m->mem_ns +
                        n->recv_done_ns;
        tl->byte_ns = 1000.0 / m->link_mbps;
    }
    et->cost = (fmpl_emu_costs_t){ .call_ns = n->call_ns, .recv_done_ns = n->recv_done_ns,
                                   .copy_mbps = n->copy_mbps, .op_mbps = n->op_mbps };
    fmpl_ib_link_ps(&a->net, tl->size, ps);
    double la = fmpl_ib_lookahead(&a->net.m);
    if (n->on && la <= 0) {
        fmpl_log_err("ib: with the timing model on, HCA_NS + SWITCH_NS + MEM_NS must be > 0 "
                     "(the emulation's lookahead)");
        rc = FMPL_ERR_ARG;
    }
    uint64_t sig = fmpl_emu_digest(0, &a->net.m, sizeof a->net.m);
    sig = fmpl_emu_digest(sig, n, sizeof *n);
    sig = fmpl_emu_digest(sig, &a->net.topo, sizeof a->net.topo);
    fmpl_emu_config_t cfg = {
        .name = "ib", .model = n->on, .nchan = tl->size * FMPL_IB_QPS,
        .nlinks = nlinks, .link_ps_per_byte = ps,
        .packet = (uint32_t)(a->net.m.mtu + a->net.m.header),
        .lookahead = fmpl_emu_ps(la), .cpu_scale = n->cpu_scale,
        .cpu_threshold = (int64_t)n->cpu_threshold_ns,
        .fabric_bytes = 0, .max_xfers = IB_MAX_XFERS, .max_entries = IB_MAX_ENTRIES,
        .signature = sig, .settings = "FMPL_IB_*",
    };
    if (rc == FMPL_SUCCESS)
        rc = fmpl_emu_tl_open(et, &cfg);
    free(ps);
    if (rc != FMPL_SUCCESS) {
        ib_close(tl);
        return rc;
    }
    const ib_topo_t *tp = &a->net.topo;
    if (tp->fat)
        fmpl_log_info("ib: %d nodes in a fat tree, %d leaf switches of %d nodes, %d spines",
                      tl->size, (tl->size + tp->leaf - 1) / tp->leaf, tp->leaf, tp->spines);
    else
        fmpl_log_info("ib: %d nodes on one switch", tl->size);
    fmpl_ib_node_model_log(n);
    fmpl_ib_model_log(&a->net.m, "FMPL_IB_");
    return FMPL_SUCCESS;
}

const fmpl_tl_ops_t fmpl_ib_ops = {
    .size = sizeof(fmpl_tl_ops_t),
    .name = "ib",
    .open = ib_open,
    .close = ib_close,
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
    .forget = fmpl_emu_tl_forget,
    .peer_ok = fmpl_emu_tl_peer_ok,
    .barrier = fmpl_tl_unsupported_barrier,
    .bcast = fmpl_tl_unsupported_bcast,
};
