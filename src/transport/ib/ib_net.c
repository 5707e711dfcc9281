/*
 * ib_net.c - the InfiniBand network of a TCA machine: every node's port
 * on one flat switch (Odajima et al. 2015, 2.2: "InfiniBand joins all
 * nodes of HA-PACS/TCA flat, through a single switch").
 *
 * Node r has two links: into the switch (link0 + 2r) and out of it
 * (link0 + 2r + 1).  A write from s to d crosses s's link in and d's link
 * out, so two nodes writing to one node share its link out (contention)
 * and nothing else is shared.  A write to ourselves loops through the
 * switch as well (the HCA's own loopback would be faster; FMPL's upper
 * layers rarely write to themselves through the network).
 */
#include <stdlib.h>

#include "fmpl.h"
#include "base/log.h"
#include "transport/ib/ib.h"

int fmpl_ib_net_open(fmpl_ib_t *t, fmpl_tl_t *tl, fmpl_emu_tl_t *et, int on, int link0,
                     int chan0)
{
    t->et = et;
    t->link0 = link0;
    t->chan0 = chan0;
    int rc = fmpl_ib_model_read(&t->m, on);
    if (rc != FMPL_SUCCESS)
        return rc;
    t->route = calloc((size_t)tl->size, sizeof *t->route);
    if (!t->route)
        return FMPL_ERR_NOMEM;
    const ib_model_t *m = &t->m;
    for (int d = 0; d < tl->size; d++) {
        fmpl_emu_path_t *p = &t->route[d];
        *p = (fmpl_emu_path_t){ .n = 2, .comp_link = -1 };
        p->link[0] = link0 + FMPL_IB_LINKS_PER_NODE * tl->rank;
        p->link[1] = link0 + FMPL_IB_LINKS_PER_NODE * d + 1;
        p->lat[0] = 0;
        p->lat[1] = fmpl_emu_ps(m->switch_ns);
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
    for (int l = 0; l < FMPL_IB_LINKS_PER_NODE * size; l++)
        ps[t->link0 + l] = (fmpl_emu_time_t)(1e6 / t->m.link_mbps + 0.5);
}
