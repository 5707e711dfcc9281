/*
 * p2_model.c - the PEACH2 timing model: every parameter in one table,
 * with its default and where the default comes from.  Each is settable
 * as FMPL_TCA_<NAME> (FMPL_TCA_HOP_NS=400, ...); FMPL_TCA_MODEL=0 turns
 * the model off (a functional emulation).
 *
 * The paper (Hanawa et al. 2013, 4.1-4.2) measured, inside its driver,
 * from the kick to the poll that sees the DMA done:
 *   - PCIe Gen2 x8 (4 GB/s) with 256-byte payloads and 24 bytes of TLP,
 *     link and framing overhead: 3.66 GB/s; 128 chained 4 KiB transfers
 *     reach 3.3 GB/s, 90 % of it (Fig. 4);
 *   - one transfer, with a descriptor and in register mode: register
 *     mode up to 63 % faster, at 2 KiB (Fig. 5);
 *   - 4 KiB transfers chained: 75-80 % of the peak from 4 on (Fig. 6);
 *   - a PIO store to the neighbour's memory, seen by a poll: 782 ns (4.2);
 *   - a DMA to the neighbour streams as fast as one inside the node (Fig. 7).
 * A chain of n transfers of s <= 4 KiB (one page: a descriptor names
 * physical memory) then takes
 *     kick + dma_start + board + poll + n x (desc + wire(s) / link)
 * and in register mode (no descriptor)
 *     kick + reg_start + board + poll + wire(s) / link,
 * which fixes the sums 1.45 us and 0.74 us (Figs. 6 and 5) and desc =
 * 0.11 us (Fig. 4's 10 %: a page a descriptor, so 3.3 GB/s is also where
 * large transfers level off); how the sums split is our estimate, marked
 * "est."; 0.3-0.4 us for each further hop is the hybrid paper's (Odajima
 * et al. 2015, 5.4).  bench/tca prints each figure beside the modeled one.
 */
#include <stddef.h>
#include <string.h>

#include "fmpl.h"
#include "transport/peach2/p2.h"

#define P(field, NAME, def, lo, unit, src) \
    { #NAME, offsetof(p2_model_t, field), def, lo, unit, src }

static const fmpl_emu_param_t params[] = {
    P(cpu_scale, CPU_SCALE, 0, 0, "",
      "0: the program's own computation counts only as fmpl_compute says (deterministic "
      "at any size and load); > 0: its measured CPU time x this counts too (this "
      "machine's noise with it)"),
    P(cpu_threshold_ns, CPU_THRESHOLD_NS, 2000, 0, "ns",
      "with CPU_SCALE > 0: shorter computations between calls are not charged (SMPI's "
      "cpu-threshold)"),
    P(call_ns, CALL_NS, 100, 0, "ns",
      "an FMPL call's own start: user level, no system call (est.)"),
    P(recv_done_ns, RECV_DONE_NS, 100, 0, "ns",
      "a receive seeing its flag and ending (est.)"),
    P(store_ns, STORE_NS, 30, 0, "ns",
      "the CPU issuing a PIO store of a record: posted, write-combined (est.)"),
    P(kick_ns, KICK_NS, 100, 0, "ns",
      "the CPU writing a DMA request's doorbell, uncached (est.; in Figs. 4-6's time)"),
    P(copy_mbps, COPY_MBPS, 5000, 1, "MB/s",
      "a CPU copy on a node, one Xeon E5 core (est.)"),
    P(op_mbps, OP_MBPS, 4000, 1, "MB/s",
      "combining a reduction's operands (est.)"),
    P(link_mbps, LINK_MBPS, 4000, 1, "MB/s",
      "every PCIe link, one way: Gen2 x8 (4.1.1)"),
    P(tlp_payload, TLP_PAYLOAD, 256, 8, "bytes",
      "payload a TLP carries between PEACH2 and the host (4.1.1)"),
    P(tlp_overhead, TLP_OVERHEAD, 24, 0, "bytes",
      "per TLP: header 16, sequence 2, LCRC 4, framing 2 (4.1.1: 3.66 GB/s of 4)"),
    P(pio_ns, PIO_NS, 120, 0, "ns",
      "a CPU store crossing its PCIe link to the board (est.; 4.2: 782 ns in all)"),
    P(board_ns, BOARD_NS, 100, 0, "ns",
      "a board forwarding a packet from its host port to another port (est.)"),
    P(hop_ns, HOP_NS, 350, 0, "ns",
      "one cable and the next board (Odajima et al. 2015, 5.4: 0.3-0.4 us a hop)"),
    P(mem_ns, MEM_NS, 175, 0, "ns",
      "the owning board's write into host memory until a poll sees it (est.; 4.2: 782 ns)"),
    P(poll_ns, POLL_NS, 200, 0, "ns",
      "the poll of a DMA channel's status that sees it done (est.; Figs. 4-6's time)"),
    P(dma_start_ns, DMA_START_NS, 1050, 0, "ns",
      "a chained DMA's start: descriptor table fetch, first read (Fig. 6: 1.45 us in all)"),
    P(desc_ns, DESC_NS, 110, 0, "ns",
      "each descriptor of a chain (Fig. 4: 128 x 4 KiB at 90 % of 3.66 GB/s)"),
    P(reg_start_ns, REG_START_NS, 340, 0, "ns",
      "a register-mode DMA's start, no table (Fig. 5: 63 % faster at 2 KiB)"),
    P(reg_max, REG_MAX, 4, 0, "transfers",
      "register mode starts at most this many (3.4: a few; est.)"),
    P(reg_max_bytes, REG_MAX_BYTES, 8192, 0, "bytes",
      "register mode for requests up to this size, descriptors above (4.2: below a few KB)"),
    P(pio_max_bytes, PIO_MAX_BYTES, 64, 0, "bytes",
      "puts up to this size are CPU stores, not DMA (4.2: a few bytes; est.)"),
};

#define NPARAMS (sizeof params / sizeof params[0])

int fmpl_peach2_model_read(p2_model_t *m)
{
    memset(m, 0, sizeof *m);
    return fmpl_emu_params_read("FMPL_TCA_", params, NPARAMS, m, &m->on);
}

void fmpl_peach2_model_log(const p2_model_t *m)
{
    fmpl_emu_params_log("peach2", "FMPL_TCA_", params, NPARAMS, m, m->on);
}

uint64_t fmpl_peach2_wire(const p2_model_t *m, uint64_t len)
{
    uint64_t pay = (uint64_t)m->tlp_payload;
    uint64_t tlps = len ? (len + pay - 1) / pay : 1;
    return len + tlps * (uint64_t)m->tlp_overhead;
}
