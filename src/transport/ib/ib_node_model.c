/*
 * ib_node_model.c - a node of an InfiniBand cluster of its own
 * (FMPL_TRANSPORT=ib): what its CPU costs FMPL's work, in one table,
 * settable as FMPL_IB_<NAME>.  The node is HA-PACS/TCA's (Odajima et al.
 * 2015, Table 1: two Xeon E5 sockets a node), so the defaults are the
 * PEACH2 model's for the same CPU (src/transport/peach2/p2_model.c): a
 * job on `ib` is a job on HA-PACS/TCA's InfiniBand alone, at any size.
 * The network's parameters are ib_model.c's, with the same prefix.
 */
#include <stddef.h>
#include <string.h>

#include "fmpl.h"
#include "transport/ib/ib.h"

#define P(field, NAME, def, lo, unit, src) \
    { #NAME, offsetof(ib_node_model_t, field), def, lo, unit, src }

static const fmpl_emu_param_t params[] = {
    P(cpu_scale, CPU_SCALE, 0, 0, "",
      "0: the program's own computation counts only as fmpl_compute says (deterministic "
      "at any size and load); > 0: its measured CPU time x this counts too (this "
      "machine's noise with it)"),
    P(cpu_threshold_ns, CPU_THRESHOLD_NS, 2000, 0, "ns",
      "with CPU_SCALE > 0: shorter computations between calls are not charged (SMPI's "
      "cpu-threshold)"),
    P(call_ns, CALL_NS, 100, 0, "ns",
      "an FMPL call's own start: user level, no system call (est., as FMPL_TCA_CALL_NS)"),
    P(recv_done_ns, RECV_DONE_NS, 100, 0, "ns",
      "a receive seeing its flag and ending (est., as FMPL_TCA_RECV_DONE_NS)"),
    P(copy_mbps, COPY_MBPS, 5000, 1, "MB/s",
      "a CPU copy on a node, one Xeon E5 core (est., as FMPL_TCA_COPY_MBPS)"),
    P(op_mbps, OP_MBPS, 4000, 1, "MB/s",
      "combining a reduction's operands (est., as FMPL_TCA_OP_MBPS)"),
};

#define NPARAMS (sizeof params / sizeof params[0])

int fmpl_ib_node_model_read(ib_node_model_t *m)
{
    memset(m, 0, sizeof *m);
    return fmpl_emu_params_read("FMPL_IB_", params, NPARAMS, m, &m->on);
}

void fmpl_ib_node_model_log(const ib_node_model_t *m)
{
    fmpl_emu_params_log("ib", "FMPL_IB_", params, NPARAMS, m, m->on);
}
