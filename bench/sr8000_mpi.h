/*
 * sr8000_mpi.h - the MPI the FMPL paper compared with (Hitachi's; Tatebe
 * et al. 2002, 5.1), as a protocol on the same emulated SR8000, for
 * bench/sr8000.
 *
 * The paper: "the sender sends a header to the receiver, the receiver
 * matches it and returns the address to write to, the sender transfers the
 * message: one and a half round trips", where FMPL needs one.  Here: the
 * sender writes a request-to-send (RTS: size) into the receiver's line,
 * the receiver matches it against its receive (the tag queue) and writes
 * back where the data goes (CTS: a remote-DMA key), the sender writes the
 * data and a completion flag.  Two variants, as in Fig. 6:
 *   rdma    the data go from buffer to buffer (compiled with -rdma, user
 *           memory a static remote-DMA area): 997 MB/s at 16 MB;
 *   nordma  the sender copies into its remote-DMA area and the receiver
 *           out of its own (buffered): 791 MB/s at 16 MB.
 * Small messages take the same path in both (the paper: 20 us for 8 bytes
 * "in every case").  Its collectives: the hardware barrier and broadcast
 * when their conditions hold (even node counts of the 2 x 8 partition,
 * 5.2-5.3), otherwise trees of these messages.
 *
 * It is written on FMPL's transport interface (src/transport/transport.h),
 * not on FMPL's point-to-point layer, in mailbox lines FMPL's own messages
 * do not use, so that the same emulated NIA, crossbar and clock time both
 * libraries.  Its software costs, which the paper does not break down, are
 * two parameters: SR8000_MPI_CALL_NS (an MPI call's own start) and
 * SR8000_MPI_MATCH_NS (matching a header in the tag queue), chosen so that
 * the 8-byte one-way latency is the paper's 20 us; its copies are charged
 * at the emulated node's copy rate (FMPL_TCW_COPY_MBPS).
 *
 * Every rank calls smpi_init after fmpl_init with the same `base` (the
 * three indices base..base+2 are its own) and `stage` (bytes of each
 * nordma area).
 *
 * On top, the BLACS the paper measured beside them (5.1, Fig. 6): netlib's
 * MPI-BLACS on Hitachi's MPI, which "packs the data before sending it by
 * MPI" and unpacks it after: one copy more on each side than the MPI below
 * it, in either variant, and the BLACS' own work per call.  Two more
 * parameters, which the paper does not break down either:
 *   SR8000_BLACS_CALL_NS    the BLACS' own work around a send, and around
 *                           a receive once its message is in (the grid
 *                           and context lookup, the datatype it builds and
 *                           frees, its buffer): chosen so that the 8-byte
 *                           one-way latency is the paper's 34 us, over the
 *                           MPI's 20 ("in every case", rdma or not)
 *   SR8000_BLACS_PACK_MBPS  the rate of its packing and unpacking copies
 *                           (MPI_Pack of the BLACS' derived datatype, not
 *                           a plain memcpy): chosen so that 16 MB come out
 *                           at the paper's 591 MB/s (rdma) and 522 MB/s
 *                           (nordma), one rate for both
 * sblacs_init(max) after smpi_init gives each rank its pack buffers.
 */
#ifndef SR8000_MPI_H
#define SR8000_MPI_H

#include <stdlib.h>
#include <string.h>

#include "p2p/progress.h"
#include "p2p/state.h"
#include "p2p/p2p.h"
#include "transport/transport.h"

enum { SMPI_RTS = 0, SMPI_CTS = 1, SMPI_FIN = 2, SMPI_NIDX = 3 };

typedef struct smpi {
    int base;                      /* first of our three indices */
    double call_ns, match_ns;
    uint32_t *sseq, *rseq;         /* [size] messages so far per peer */
    uint8_t *sstage, *rstage;      /* nordma: our remote-DMA areas */
    size_t stage;
    fmpl_tl_key_t rkey;            /* our receive area's key */
} smpi_t;

static smpi_t smpi;

static inline double smpi_env(const char *name, double def)
{
    const char *e = getenv(name);
    return e && *e ? atof(e) : def;
}

static inline void smpi_charge(double ns)
{
    fmpl_tl_work(&fmpl_g.tl, FMPL_TL_WORK_NS, (size_t)(ns + 0.5));
}

/* Wait until the 8-byte word at `off` of the line `peer` writes to us on
 * index `idx` carries sequence number `seq` in its upper half. */
static inline void smpi_wait_line(int peer, int idx, uint32_t seq)
{
    volatile uint8_t *line = fmpl_tl_mbox_in(&fmpl_g.tl, peer, idx);
    fmpl_wait_t w;
    fmpl_wait_init(&w, peer);
    while ((uint32_t)(fmpl_line_word(line, 0) >> 32) != seq)
        if (fmpl_progress() == 0 && fmpl_wait_idle(&w) != FMPL_SUCCESS) {
            fprintf(stderr, "sr8000 mpi: rank %d is gone\n", peer);
            fmpl_abort(3);
        }
}

static inline void smpi_wait_comp(fmpl_tl_comp_t *c, int peer)
{
    fmpl_wait_t w;
    fmpl_wait_init(&w, peer);
    while (c->pending > 0)
        if (fmpl_progress() == 0 && fmpl_wait_idle(&w) != FMPL_SUCCESS)
            fmpl_abort(3);
}

/* Our nordma areas (a receiver's key travels in its CTS). */
static inline void smpi_init(int base, size_t stage)
{
    int n = fmpl_size();
    smpi.base = base;
    smpi.call_ns = smpi_env("SR8000_MPI_CALL_NS", 1900);
    smpi.match_ns = smpi_env("SR8000_MPI_MATCH_NS", 1500);
    smpi.sseq = calloc((size_t)n, sizeof *smpi.sseq);
    smpi.rseq = calloc((size_t)n, sizeof *smpi.rseq);
    smpi.stage = stage;
    if (stage) {
        smpi.sstage = fmpl_alloc_mem(stage);
        smpi.rstage = fmpl_alloc_mem(stage);
    }
    if (!smpi.sseq || !smpi.rseq || (stage && (!smpi.sstage || !smpi.rstage)) ||
        (stage && fmpl_tl_mem_reg(&fmpl_g.tl, smpi.rstage, stage, &smpi.rkey))) {
        fprintf(stderr, "sr8000 mpi: out of memory\n");
        fmpl_abort(2);
    }
}

static inline void smpi_send(const void *buf, size_t n, int dst, int nordma)
{
    fmpl_tl_t *tl = &fmpl_g.tl;
    fmpl_enter();
    smpi_charge(smpi.call_ns);
    uint32_t seq = ++smpi.sseq[dst];
    struct { uint64_t word, size; } rts = { (uint64_t)seq << 32 | 1, n };
    fmpl_tl_notify(tl, dst, smpi.base + SMPI_RTS, 0, &rts, sizeof rts,
                   FMPL_TL_NOTIFY_UNORDERED, NULL);
    smpi_wait_line(dst, smpi.base + SMPI_CTS, seq);
    volatile uint8_t *cl = fmpl_tl_mbox_in(tl, dst, smpi.base + SMPI_CTS);
    fmpl_tl_key_t key;
    memcpy(&key, (const void *)(cl + 8), sizeof key);
    fmpl_tl_comp_t comp = { 0, FMPL_SUCCESS };
    const void *src = buf;
    if (nordma && n) {
        memcpy(smpi.sstage, buf, n);
        fmpl_tl_work(tl, FMPL_TL_WORK_COPY, n);
        src = smpi.sstage;
    }
    if (n && fmpl_tl_put(tl, dst, src, n, &key, 0, 0, &comp) != FMPL_SUCCESS)
        fmpl_abort(3);
    uint64_t fin = (uint64_t)seq << 32 | 1;
    fmpl_tl_notify(tl, dst, smpi.base + SMPI_FIN, 0, &fin, sizeof fin, 0, &comp);
    smpi_wait_comp(&comp, dst);
    fmpl_leave();
}

static inline void smpi_recv(void *buf, size_t n, int src, int nordma)
{
    fmpl_tl_t *tl = &fmpl_g.tl;
    fmpl_enter();
    smpi_charge(smpi.call_ns);
    uint32_t seq = ++smpi.rseq[src];
    smpi_wait_line(src, smpi.base + SMPI_RTS, seq);
    smpi_charge(smpi.match_ns);                    /* the tag queue */
    struct { uint64_t word; fmpl_tl_key_t key; uint64_t pad; } cts;
    memset(&cts, 0, sizeof cts);
    cts.word = (uint64_t)seq << 32 | 1;
    if (nordma)
        cts.key = smpi.rkey;
    else if (n && fmpl_tl_mem_reg(tl, buf, n, &cts.key) != FMPL_SUCCESS)
        fmpl_abort(3);
    fmpl_tl_notify(tl, src, smpi.base + SMPI_CTS, 0, &cts, sizeof cts,
                   FMPL_TL_NOTIFY_UNORDERED, NULL);
    smpi_wait_line(src, smpi.base + SMPI_FIN, seq);
    fmpl_tl_work(tl, FMPL_TL_WORK_RECV, n);
    if (nordma && n) {
        memcpy(buf, smpi.rstage, n);
        fmpl_tl_work(tl, FMPL_TL_WORK_COPY, n);
    } else if (n) {
        fmpl_tl_mem_dereg(tl, &cts.key);
    }
    fmpl_leave();
}

typedef struct sblacs {
    double call_ns, pack_mbps;
    /* its buffers: remote-DMA areas under -rdma, or rdma would copy as
     * much as nordma (the paper's 591 and 522 MB/s differ) */
    uint8_t *spack, *rpack;
} sblacs_t;

static sblacs_t sblacs;

static inline void sblacs_init(size_t max)
{
    sblacs.call_ns = smpi_env("SR8000_BLACS_CALL_NS", 6500);
    sblacs.pack_mbps = smpi_env("SR8000_BLACS_PACK_MBPS", 3000);
    sblacs.spack = fmpl_alloc_mem(max ? max : 1);
    sblacs.rpack = fmpl_alloc_mem(max ? max : 1);
    if (!sblacs.spack || !sblacs.rpack || !(sblacs.pack_mbps > 0)) {
        fprintf(stderr, "sr8000 blacs: out of memory, or SR8000_BLACS_PACK_MBPS <= 0\n");
        fmpl_abort(2);
    }
}

/* A copy of n bytes at the BLACS' packing rate (MB/s = bytes per us). */
static inline void sblacs_pack(void *to, const void *from, size_t n)
{
    if (n)
        memcpy(to, from, n);
    smpi_charge((double)n * 1e3 / sblacs.pack_mbps);
}

/* dgesd2d of n bytes (a column): pack, then MPI's send of the packed buffer. */
static inline void sblacs_send(const void *buf, size_t n, int dst, int nordma)
{
    fmpl_enter();
    smpi_charge(sblacs.call_ns);
    sblacs_pack(sblacs.spack, buf, n);
    fmpl_leave();
    smpi_send(sblacs.spack, n, dst, nordma);
}

/* dgerv2d: MPI's receive into the BLACS' buffer, then unpack. */
static inline void sblacs_recv(void *buf, size_t n, int src, int nordma)
{
    smpi_recv(sblacs.rpack, n, src, nordma);
    fmpl_enter();
    sblacs_pack(buf, sblacs.rpack, n);
    smpi_charge(sblacs.call_ns);
    fmpl_leave();
}

/* The barrier: hmpc_barrier where the hardware can (the transport's, on
 * the world), else a binary tree of empty messages, up and down. */
static inline void smpi_barrier(void)
{
    if (fmpl_g.tl.caps & FMPL_TL_CAP_HW_BARRIER) {
        fmpl_barrier(FMPL_COMM_WORLD);
        return;
    }
    int me = fmpl_rank(), n = fmpl_size(), parent = (me - 1) / 2;
    for (int c = 2 * me + 1; c <= 2 * me + 2 && c < n; c++)
        smpi_recv(NULL, 0, c, 0);
    if (me) {
        smpi_send(NULL, 0, parent, 0);
        smpi_recv(NULL, 0, parent, 0);
    }
    for (int c = 2 * me + 1; c <= 2 * me + 2 && c < n; c++)
        smpi_send(NULL, 0, c, 0);
}

/* The broadcast: the hardware's where it can (the buffers are areas at
 * the same offset on every node), else a binomial tree. */
static inline void smpi_bcast(void *buf, size_t n, int root, int nordma)
{
    if ((fmpl_g.tl.caps & FMPL_TL_CAP_HW_BARRIER) &&
        fmpl_hbcast(buf, n, root) == FMPL_SUCCESS)
        return;
    int np = fmpl_size(), vr = (fmpl_rank() - root + np) % np;
    int mask = 1;
    while (mask < np && !(vr & mask))
        mask <<= 1;
    if (vr)
        smpi_recv(buf, n, (vr - mask + root) % np, nordma);
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (vr + mask < np)
            smpi_send(buf, n, (vr + mask + root) % np, nordma);
}

/* The sum of `count` doubles at `root`: a binomial tree, combining as it
 * goes (the combine charged at the node's rate, as FMPL's). */
static inline void smpi_reduce(double *buf, double *tmp, int count, int root, int nordma)
{
    int np = fmpl_size(), vr = (fmpl_rank() - root + np) % np;
    size_t n = (size_t)count * sizeof *buf;
    for (int mask = 1; mask < np; mask <<= 1) {
        if (vr & mask) {
            smpi_send(buf, n, (vr - mask + root) % np, nordma);
            return;
        }
        if (vr + mask < np) {
            smpi_recv(tmp, n, (vr + mask + root) % np, nordma);
            fmpl_enter();          /* the library's arithmetic: modeled */
            for (int i = 0; i < count; i++)
                buf[i] += tmp[i];
            fmpl_tl_work(&fmpl_g.tl, FMPL_TL_WORK_OP, n);
            fmpl_leave();
        }
    }
}

#endif
