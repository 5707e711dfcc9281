/*
 * ib_net.c - the InfiniBand network's links and routes.
 *
 * One switch (HA-PACS/TCA; Odajima et al. 2015, 2.2: "InfiniBand joins
 * all nodes of HA-PACS/TCA flat, through a single switch"): node r has two
 * links, into the switch (link0 + 2r) and out of it (link0 + 2r + 1).  A
 * write from s to d crosses s's link in and d's link out, so two nodes
 * writing to one node share its link out (contention) and nothing else is
 * shared.  A write to ourselves loops through the switch as well (the
 * HCA's own loopback would be faster; FMPL's upper layers rarely write to
 * themselves through the network).
 *
 * A two-level fat tree (a cluster of its own, FMPL_IB_TOPO=fattree): the
 * nodes hang in leaf switches of `leaf` nodes; each leaf has one uplink
 * to each of `spines` spine switches (leaf = spines: full bisection, as
 * a tree of 36-port switches with 18 nodes a leaf is built; fewer spines:
 * oversubscribed).  Inside a leaf a write crosses one switch; between
 * leaves, the source leaf, the spine and the destination leaf.  The spine
 * is the destination's number modulo the spines (destination-mod-k, the
 * static routing InfiniBand's subnet managers give fat trees: every path
 * to one node goes down one spine link, so traffic to one node never
 * spreads over several).  Links after the nodes': leaf l's uplink to
 * spine k at 2 (l spines + k), its downlink from the spine one after.
 */
#include <stdlib.h>

#include "fmpl.h"
#include "base/log.h"
#include "transport/ib/ib.h"

int fmpl_ib_nlinks(const ib_topo_t *topo, int size)
{
    int n = FMPL_IB_LINKS_PER_NODE * size;
    if (topo->fat) {
        int leaves = (size + topo->leaf - 1) / topo->leaf;
        n += 2 * leaves * topo->spines;
    }
    return n;
}

int fmpl_ib_net_open(fmpl_ib_t *t, fmpl_tl_t *tl, fmpl_emu_tl_t *et, int on, int link0,
                     int chan0, const char *prefix)
{
    t->et = et;
    t->link0 = link0;
    t->chan0 = chan0;
    int rc = fmpl_ib_model_read(&t->m, on, prefix);
    if (rc != FMPL_SUCCESS)
        return rc;
    t->route = calloc((size_t)tl->size, sizeof *t->route);
    if (!t->route)
        return FMPL_ERR_NOMEM;
    const ib_model_t *m = &t->m;
    const ib_topo_t *tp = &t->topo;
    int spine0 = link0 + FMPL_IB_LINKS_PER_NODE * tl->size;
    for (int d = 0; d < tl->size; d++) {
        fmpl_emu_path_t *p = &t->route[d];
        *p = (fmpl_emu_path_t){ .comp_link = -1 };
        p->link[p->n] = link0 + FMPL_IB_LINKS_PER_NODE * tl->rank;
        p->lat[p->n++] = 0;
        int ls = tl->rank / (tp->fat ? tp->leaf : tl->size), ld = d / (tp->fat ? tp->leaf : tl->size);
        if (tp->fat && ls != ld) {
            int k = d % tp->spines;
            p->link[p->n] = spine0 + 2 * (ls * tp->spines + k);      /* up to the spine */
            p->lat[p->n++] = fmpl_emu_ps(m->switch_ns);
            p->link[p->n] = spine0 + 2 * (ld * tp->spines + k) + 1;  /* down to d's leaf */
            p->lat[p->n++] = fmpl_emu_ps(m->switch_ns);
        }
        p->link[p->n] = link0 + FMPL_IB_LINKS_PER_NODE * d + 1;
        p->lat[p->n++] = fmpl_emu_ps(m->switch_ns);
        p->to_mem = fmpl_emu_ps(m->mem_ns);
        p->ack = fmpl_emu_ps(m->ack_ns);     /* after the data is in memory */
        p->packet = (uint32_t)(m->mtu + m->header);
    }
    return FMPL_SUCCESS;
}

void fmpl_ib_net_close(fmpl_ib_t *t)
{
    if (t->et && t->et->emu && t->et->tl)
        fmpl_log_info("InfiniBand: rank %d: %llu RDMA writes, %llu work requests",
                      t->et->tl->rank, (unsigned long long)t->writes,
                      (unsigned long long)t->wrs);
    free(t->route);
    t->route = NULL;
}

void fmpl_ib_link_ps(const fmpl_ib_t *t, int size, fmpl_emu_time_t *ps)
{
    for (int l = 0; l < fmpl_ib_nlinks(&t->topo, size); l++)
        ps[t->link0 + l] = (fmpl_emu_time_t)(1e6 / t->m.link_mbps + 0.5);
}
