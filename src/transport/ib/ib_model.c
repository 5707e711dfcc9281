/*
 * ib_model.c - the InfiniBand timing model of HA-PACS/TCA: every
 * parameter in one table, settable as FMPL_TCA_IB_<NAME> inside tca and
 * FMPL_IB_<NAME> in a cluster of its own (FMPL_TRANSPORT=ib, whose
 * network is the same: one QDR port a node).  The model is on or off
 * with the machine's (FMPL_TCA_MODEL, FMPL_IB_MODEL).
 *
 * The hybrid paper (Odajima et al. 2015) gives the hardware - Mellanox
 * ConnectX-3, QDR 4x, one port used, one flat switch (2.2, Table 1) - and one
 * measured relation: TCA beats InfiniBand in ping-pong up to 512 KB, and
 * InfiniBand wins above (4.1, Fig. 4).  QDR 4x signals 40 Gb/s, 32 Gb/s
 * of data after 8b/10b coding: 4 GB/s a direction; a packet carries up to
 * one MTU (2048 bytes, what MVAPICH2 uses on QDR) plus 26 bytes of local
 * route, transport headers and CRCs.  The start-up costs are the usual
 * ones for ConnectX-3 verbs (about 1.1 us for an 8-byte RDMA write seen
 * by a poll), marked "est."; LINK_MBPS is set where Fig. 4's crossover
 * comes out of FMPL's own ping-pong on the two emulated networks
 * (bench/tca prints both).
 */
#include <stddef.h>
#include <string.h>

#include "fmpl.h"
#include "transport/ib/ib.h"

#define P(field, NAME, def, lo, unit, src) \
    { #NAME, offsetof(ib_model_t, field), def, lo, unit, src }

static const fmpl_emu_param_t params[] = {
    P(link_mbps, LINK_MBPS, 3380, 1, "MB/s",
      "a QDR 4x port's data rate as delivered (4 GB/s after 8b/10b; set so that FMPL's "
      "ping-pong crosses PEACH2's at 512 KB, Odajima et al. 2015, Fig. 4)"),
    P(mtu, MTU, 2048, 256, "bytes", "payload a packet carries (the path MTU MVAPICH2 uses)"),
    P(header, HEADER, 26, 0, "bytes",
      "a packet's LRH 8, BTH 12, ICRC 4, VCRC 2 (InfiniBand architecture, vol. 1)"),
    P(post_ns, POST_NS, 150, 0, "ns",
      "the CPU writing a work request and ringing the doorbell (est.)"),
    P(wqe_ns, WQE_NS, 40, 0, "ns",
      "each further work request of one list, one doorbell (est.)"),
    P(hca_ns, HCA_NS, 500, 0, "ns",
      "the HCA fetching the request and the first data over PCIe (est.)"),
    P(wr_ns, WR_NS, 100, 0, "ns",
      "the HCA starting each further write of a list, while the one before streams (est.)"),
    P(switch_ns, SWITCH_NS, 150, 0, "ns", "the switch's cut-through latency, cables (est.)"),
    P(mem_ns, MEM_NS, 250, 0, "ns",
      "the responder HCA writing host memory until a poll sees it (est.)"),
    P(ack_ns, ACK_NS, 700, 0, "ns",
      "the ACK back through the switch, the completion queue entry, its poll (est.)"),
};

#define NPARAMS (sizeof params / sizeof params[0])

int fmpl_ib_model_read(ib_model_t *m, int on, const char *prefix)
{
    memset(m, 0, sizeof *m);
    int unused;                    /* on or off with the machine, not on its own */
    int rc = fmpl_emu_params_read(prefix, params, NPARAMS, m, &unused);
    m->on = on;
    return rc;
}

void fmpl_ib_model_log(const ib_model_t *m, const char *prefix)
{
    fmpl_emu_params_log("InfiniBand", prefix, params, NPARAMS, m, m->on);
}

uint64_t fmpl_ib_wire(const ib_model_t *m, uint64_t len)
{
    uint64_t mtu = (uint64_t)m->mtu;
    uint64_t pk = len ? (len + mtu - 1) / mtu : 1;
    return len + pk * (uint64_t)m->header;
}

double fmpl_ib_lookahead(const ib_model_t *m)
{
    return m->hca_ns + m->switch_ns + m->mem_ns;
}
