/*
 * tcw_model.c - the SR8000 timing model: every parameter in one table,
 * with its default and where the default comes from.  Each is settable
 * as FMPL_TCW_<NAME> (FMPL_TCW_XBAR_NS=1500, ...).
 *
 * The paper (Tatebe et al. 2002) gives: 1000 MB/s links, a hardware network
 * latency of about 5 us (5.1), Table 1's breakdown of an 8-byte message
 * measured inside FMPL with the cycle counter, 12.8 us one way.  Table 1,
 * read as a ping-pong in which each side alternates fmpl_send and
 * fmpl_recv, fixes five sums:
 *   call                                   = 0.5 us  (both "init" columns)
 *   kick + nia_send + xbar + nia_recv      = 4.3 us  (a kick to the line visible)
 *   xbar + ack                             = 1.8 us  (visible to the kicker's completion)
 *       so that the receive's "header send" (kick until complete) is 6.1 us
 *   modify + kick                          = 2.0 us  (data send 8.1 - header send 6.1)
 *   recv_done                              = 1.1 us  (the sender's "header wait" 5.0
 *                                                     is 6.1 less the receive's ending)
 * and then the send's data phase is 8.1 us, the receive's data phase 5.6 us
 * and one way 12.9 us, as measured (bench/sr8000 prints both).  How the
 * sums split is our estimate, marked "est." below; the hardware latency
 * of one hop (nia_send + xbar + nia_recv) is the paper's "about 5 us".
 */
#include <stddef.h>
#include <string.h>

#include "fmpl.h"
#include "base/log.h"
#include "transport/tcw/tcw.h"

#define P(field, NAME, def, lo, unit, src) \
    { #NAME, offsetof(tcw_model_t, field), def, lo, unit, src }

static const fmpl_emu_param_t params[] = {
    P(cpu_scale, CPU_SCALE, 0, 0, "",
      "0: the program's own computation counts only as fmpl_compute says (deterministic "
      "at any size and load); > 0: its measured CPU time x this counts too (this "
      "machine's noise with it)"),
    P(cpu_threshold_ns, CPU_THRESHOLD_NS, 2000, 0, "ns",
      "with CPU_SCALE > 0: shorter computations between calls are not charged (SMPI's "
      "cpu-threshold)"),
    P(call_ns, CALL_NS, 500, 0, "ns",
      "an FMPL call's own start (Table 1: init 0.5 us, send and receive)"),
    P(kick_ns, KICK_NS, 300, 0, "ns",
      "combuf_kick_tcw_fast: a TCW's address into the NIA register (est., Table 1 sums)"),
    P(modify_ns, MODIFY_NS, 1700, 0, "ns",
      "modifying a TCW for a data transfer (Table 1: data 8.1 - header 6.1 = modify + kick)"),
    P(recv_done_ns, RECV_DONE_NS, 1100, 0, "ns",
      "a receive seeing its flag and ending (Table 1: header send 6.1 - header wait 5.0)"),
    P(nia_send_ns, NIA_SEND_NS, 1400, 0, "ns",
      "NIA start-up: fetch the TCW, read the first packet (est., 5.1: ~5 us a hop)"),
    P(xbar_ns, XBAR_NS, 1200, 0, "ns",
      "one crossbar traversal (est., 5.1: ~5 us a hop)"),
    P(nia_recv_ns, NIA_RECV_NS, 1400, 0, "ns",
      "receiving NIA: packet into memory, visible to a poll (est., 5.1: ~5 us a hop)"),
    P(ack_ns, ACK_NS, 600, 0, "ns",
      "completion back to the kicking node, besides its crossbars (Table 1: 1.8 - xbar)"),
    P(link_mbps, LINK_MBPS, 1000, 1, "MB/s",
      "every link, one way (section 3: 1000 MB/s; Fig. 6: 999 MB/s at 16 MB)"),
    P(packet, PACKET, 4096, 64, "bytes",
      "payload per packet: how finely transfers sharing a link interleave (est.)"),
    P(copy_mbps, COPY_MBPS, 7600, 1, "MB/s",
      "a CPU copy on a node (Fig. 6: MPI nordma's 791 MB/s at 16 MB = one copy each side)"),
    P(op_mbps, OP_MBPS, 8000, 1, "MB/s",
      "combining a reduction's operands: 8 KB of doubles in ~1 us (1 GFLOPS a CPU, 5.4)"),
    P(hwbar_ns, HWBAR_NS, 3000, 0, "ns",
      "hardware barrier after the last node arrives (est.: Fig. 7 plots it below FMPL(SW))"),
    P(hwbcast_ns, HWBCAST_NS, 1200, 0, "ns",
      "hardware broadcast: serialising crossbar out to every x-crossbar (est., Fig. 3)"),
};

#define NPARAMS (sizeof params / sizeof params[0])

int fmpl_tcw_model_read(tcw_model_t *m)
{
    memset(m, 0, sizeof *m);
    return fmpl_emu_params_read("FMPL_TCW_", params, NPARAMS, m, &m->on);
}

void fmpl_tcw_model_log(const tcw_model_t *m)
{
    fmpl_emu_params_log("tcw", "FMPL_TCW_", params, NPARAMS, m, m->on);
}
