/*
 * ib_gpu_model.c - what MVAPICH2-GDR's protocols add to an InfiniBand write
 * when the buffers are in GPU memory, as the hybrid paper ran them
 * (Odajima et al. 2015, 4.1, Fig. 4; its reference [19], the
 * MVAPICH2-GDR 2.0 README).  FMPL_TCA_MV2 says where the GPU is:
 *
 *   off   host memory: FMPL's own writes, nothing added (the default);
 *   gdr   a GPU on the HCA's socket (the paper's GPU2): MV2GDR's default
 *         switches.  Up to GDR_LIMIT the HCA reads the GPU directly
 *         (GPUDirect RDMA); up to STAGE_LIMIT the sender first copies the
 *         message to host memory, then writes it into the remote GPU;
 *         above, the copies and the write run as a pipeline;
 *   qpi   a GPU on PEACH2's socket (the paper's GPU0, which the hybrid
 *         uses), so the HCA reaches it across QPI: "MV2GDR-QPI-Tuned",
 *         GPUDirect RDMA up to QPI_LIMIT only (through QPI: at most
 *         QPI_MBPS), host memory at both ends above.
 *
 * Above STAGE_LIMIT nothing is added: the paper measured MV2GDR and
 * MV2GDR-QPI the same from 512 KB (the pipeline hides the copies), and
 * the link's rate (FMPL_TCA_IB_LINK_MBPS) is set from that same curve.
 * A copy keeps the sender's CPU busy (cudaMemcpy returns when it is
 * done), so it is charged to the CPU, the remote end's copy across QPI
 * too (it delays the arrival the same); a slow GPUDirect read delays the
 * HCA's start instead.  A face packed for InfiniBand (halo.c) is packed
 * by a GPU kernel, at PACK_NS + bytes / PACK_MBPS (FMPL_TL_WORK_PACK).
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "fmpl.h"
#include "base/env.h"
#include "transport/ib/ib.h"

static const char *const mode_name[] = { "off", "gdr", "qpi", NULL };

#define P(field, NAME, def, lo, unit, src) \
    { #NAME, offsetof(ib_gpu_model_t, field), def, lo, unit, src }

static const fmpl_emu_param_t params[] = {
    P(gdr_limit, GDR_LIMIT, 8192, 0, "bytes",
      "largest message MV2GDR writes straight from the GPU (Odajima et al. 2015, 4.1; "
      "MV2_GPUDIRECT_LIMIT)"),
    P(stage_limit, STAGE_LIMIT, 262144, 0, "bytes",
      "largest message staged through host memory in one copy; above, pipelined "
      "(Odajima et al. 2015, 4.1)"),
    P(qpi_limit, QPI_LIMIT, 8192, 0, "bytes",
      "largest message written straight from a GPU across QPI, as the paper tuned it "
      "(MV2GDR-QPI-Tuned, Odajima et al. 2015, 4.1)"),
    P(qpi_mbps, QPI_MBPS, 290, 1, "MB/s",
      "the HCA reading a GPU across QPI (Odajima et al. 2015, 4.1: at most 290 MB/s)"),
    P(gdr_ns, GDR_NS, 1000, 0, "ns",
      "the HCA's first read of GPU memory over PCIe, against host memory's (est.)"),
    P(copy_ns, COPY_NS, 8000, 0, "ns",
      "a cudaMemcpy between the GPU and host memory, start to return (est.: a K20X on "
      "PCIe)"),
    P(copy_mbps, COPY_MBPS, 6000, 1, "MB/s",
      "a K20X's copies to and from host memory (PCIe gen 2 x16; est.)"),
    P(pack_ns, PACK_NS, 5000, 0, "ns",
      "a GPU kernel packing or unpacking a face, launch to synchronize, about 5 us on a "
      "K20X (Odajima et al. 2015, 4.2: MPI packs; est.)"),
    P(pack_mbps, PACK_MBPS, 90000, 1, "MB/s",
      "that kernel's rate: each byte read and written once at half a K20X's 250 GB/s "
      "(2 strided accesses; est.)"),
};

#define NPARAMS (sizeof params / sizeof params[0])

int fmpl_ib_gpu_read(ib_gpu_model_t *g, const char *prefix)
{
    memset(g, 0, sizeof *g);
    char name[64];
    snprintf(name, sizeof name, "%.*s", (int)strlen(prefix) - 1, prefix);
    int mode = FMPL_IB_GPU_OFF, unused;
    int rc = fmpl_env_choice(name, mode_name, FMPL_IB_GPU_OFF,
                             "off (host memory), gdr (MVAPICH2-GDR, a GPU beside the HCA) or "
                             "qpi (MVAPICH2-GDR, a GPU across QPI, tuned)", &mode);
    g->mode = mode;
    return rc ? rc : fmpl_emu_params_read(prefix, params, NPARAMS, g, &unused);
}

void fmpl_ib_gpu_log(const ib_gpu_model_t *g, const char *prefix)
{
    if (g->mode != FMPL_IB_GPU_OFF)
        fmpl_emu_params_log(mode_name[g->mode], prefix, params, NPARAMS, g, 1);
}

static double ns_of(double bytes, double mbps) { return bytes * 1e3 / mbps; }

void fmpl_ib_gpu_cost(const ib_gpu_model_t *g, double link_mbps, double len, double *cpu_ns,
                      double *hca_ns)
{
    *cpu_ns = *hca_ns = 0;
    if (g->mode == FMPL_IB_GPU_OFF || len <= 0 || len > g->stage_limit)
        return;
    double direct = g->mode == FMPL_IB_GPU_QPI ? g->qpi_limit : g->gdr_limit;
    if (len <= direct) {
        double slow = ns_of(len, g->mode == FMPL_IB_GPU_QPI ? g->qpi_mbps : link_mbps) -
                      ns_of(len, link_mbps);
        *hca_ns = g->gdr_ns + (slow > 0 ? slow : 0);
        return;
    }
    /* staged: the copy to host memory; across QPI the remote end copies
     * back from host memory as well */
    double copy = g->copy_ns + ns_of(len, g->copy_mbps);
    *cpu_ns = g->mode == FMPL_IB_GPU_QPI ? 2 * copy : copy;
}
