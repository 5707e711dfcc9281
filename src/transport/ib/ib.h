/*
 * ib.h - InfiniBand, emulated: between the nodes of HA-PACS/TCA (the tca
 * transport's far network) and, on its own, a plain cluster of up to
 * FMPL_IB_MAX_NODES nodes (FMPL_TRANSPORT=ib, ib_ops.c).
 *
 * What the hybrid paper (Odajima et al. 2015, 2.2 and 4) describes, and
 * where it is:
 *  - every node has one QDR 4x port (the paper measured one of the two
 *    rails) on ONE flat switch: a route is the node's link into the
 *    switch and the destination's link out of it; a cluster of its own
 *    may be a two-level fat tree instead (ib_net.c);
 *  - the HCA (Mellanox ConnectX-3) executes RDMA WRITE work requests of
 *    reliable-connected queue pairs: a put is one write (a list, one per
 *    piece; block-stride has no hardware support: one write a block, or
 *    the layers above pack), a mailbox record is a small INLINE write
 *    after the data on the same queue pair, which InfiniBand executes in
 *    order (ib_rdma.c);
 *  - a write is complete at its source when the responder's ACK is back.
 * The model's parameters, their defaults and their sources: ib_model.c.
 */
#ifndef FMPL_IB_H
#define FMPL_IB_H

#include <stdint.h>

#include "transport/emu/emu.h"
#include "transport/emu/emu_tl.h"
#include "transport/transport.h"

#define FMPL_IB_QPS 4              /* send engines an HCA: peer mod 4 */
#define FMPL_IB_LINKS_PER_NODE 2   /* into the switch, out of it */
#define FMPL_IB_MAX_NODES 4096

typedef struct ib_model {
    int on;                        /* the machine's model (FMPL_TCA_MODEL, FMPL_IB_MODEL) */
    double link_mbps, mtu, header;
    double post_ns, wqe_ns, hca_ns, wr_ns, switch_ns, mem_ns, ack_ns;
} ib_model_t;

/* ib_gpu_model.c: MVAPICH2-GDR's protocols with buffers in GPU memory (tca:
 * FMPL_TCA_MV2, FMPL_TCA_MV2_<NAME>); off: host memory, nothing added */
enum { FMPL_IB_GPU_OFF, FMPL_IB_GPU_GDR, FMPL_IB_GPU_QPI };
typedef struct ib_gpu_model {
    int mode;                      /* FMPL_IB_GPU_* */
    double gdr_limit, stage_limit, qpi_limit, qpi_mbps, gdr_ns, copy_ns, copy_mbps;
    double pack_ns, pack_mbps;     /* a GPU kernel packing a face */
} ib_gpu_model_t;
int  fmpl_ib_gpu_read(ib_gpu_model_t *g, const char *prefix);
void fmpl_ib_gpu_log(const ib_gpu_model_t *g, const char *prefix);
/* what a write of len bytes costs more: the sender's CPU, the HCA's start */
void fmpl_ib_gpu_cost(const ib_gpu_model_t *g, double link_mbps, double len, double *cpu_ns,
                      double *hca_ns);

/* ib_model.c: <prefix><NAME>, FMPL_TCA_IB_ inside tca, FMPL_IB_ alone */
int  fmpl_ib_model_read(ib_model_t *m, int on, const char *prefix);
void fmpl_ib_model_log(const ib_model_t *m, const char *prefix);

/* The network's shape (ib_net.c): every node on one switch, or a
 * two-level fat tree - leaf switches of `leaf` nodes, each with an
 * uplink to every one of `spines` spine switches. */
typedef struct ib_topo {
    int fat;                       /* 0: one switch */
    int leaf, spines;
} ib_topo_t;
/* links of the network: FMPL_IB_LINKS_PER_NODE a node, then the fat
 * tree's (two a leaf and spine) */
int  fmpl_ib_nlinks(const ib_topo_t *topo, int size);
/* bytes on the wire for a payload of len: its packets' headers included */
uint64_t fmpl_ib_wire(const ib_model_t *m, uint64_t len);
/* least time from a kick to anything it brings (the engine's lookahead) */
double fmpl_ib_lookahead(const ib_model_t *m);

typedef struct fmpl_ib {
    fmpl_emu_tl_t *et;             /* first: the machine this network is part of */
    ib_model_t m;
    ib_gpu_model_t gpu;            /* zero (off) but inside tca */
    ib_topo_t topo;
    int link0, chan0;              /* our links and channels in the machine */
    fmpl_emu_path_t *route;        /* [size] */
    uint64_t writes, wrs;          /* counters (FMPL_VERBOSE) */
} fmpl_ib_t;

static inline fmpl_ib_t *fmpl_ib_of(fmpl_tl_t *tl) { return (fmpl_ib_t *)tl->priv; }

/* ib_net.c: the network of a machine `et` whose links start at link0 and
 * channels at chan0 (fmpl_ib_nlinks, and FMPL_IB_QPS a node), shaped by
 * t->topo, its model read with `prefix`; ps[] gets our links' speeds. */
int  fmpl_ib_net_open(fmpl_ib_t *t, fmpl_tl_t *tl, fmpl_emu_tl_t *et, int on, int link0,
                      int chan0, const char *prefix);
void fmpl_ib_net_close(fmpl_ib_t *t);
void fmpl_ib_link_ps(const fmpl_ib_t *t, int size, fmpl_emu_time_t *ps);

/* ib_node_model.c: a node of a cluster of its own (FMPL_TRANSPORT=ib):
 * its CPU's costs of FMPL's work, FMPL_IB_<NAME> */
typedef struct ib_node_model {
    int on;                        /* FMPL_IB_MODEL */
    double cpu_scale, cpu_threshold_ns, call_ns, recv_done_ns, copy_mbps, op_mbps;
} ib_node_model_t;
int  fmpl_ib_node_model_read(ib_node_model_t *m);
void fmpl_ib_node_model_log(const ib_node_model_t *m);

/* ib_rdma.c: the ops */
int  fmpl_ib_put(fmpl_tl_t *tl, int peer, const void *src, size_t len,
                 const fmpl_tl_key_t *key, uint64_t roff, unsigned flags,
                 fmpl_tl_comp_t *comp);
int  fmpl_ib_put_iov(fmpl_tl_t *tl, int peer, const fmpl_tl_iov_t *iov, int n,
                     const fmpl_tl_key_t *key, fmpl_tl_comp_t *comp);
int  fmpl_ib_put_strided(fmpl_tl_t *tl, int peer, const void *src, size_t blklen, size_t nblk,
                         size_t sstride, const fmpl_tl_key_t *key, uint64_t roff,
                         size_t dstride, fmpl_tl_comp_t *comp);
int  fmpl_ib_notify(fmpl_tl_t *tl, int peer, int idx, unsigned off, const void *rec,
                    unsigned len, unsigned flags, fmpl_tl_comp_t *comp);

#endif
