/*
 * shm.h - the shared-memory transport (private to src/transport/shm/).
 *
 * Every process owns one segment (a memfd: it never has a name in
 * /dev/shm, so nothing can leak, whatever kills the job).  Peers map it
 * through /proc/<pid>/fd/<fd>, published in the bootstrap modex.  Only the
 * owner writes its segment, with three documented exceptions: a receiver
 * draining our FIFO writes the records we queued into our lines, the CAS
 * on a header word, and a peer's contact bit (below).
 *
 * Segment layout (offsets in fmpl_shm_seg_hdr): a common part every peer
 * that talks to us maps, then a block for each reader, which only that
 * reader maps, so that a process's address space grows with the peers it
 * talks to (1024 ranks mapping each other's whole segments took 515 GB a
 * rank):
 *   common
 *     header
 *     contact [size bits], gen  a peer sets its bit (and bumps gen) before
 *                               its first FIFO chunk to us, so that we map
 *                               its block and drain it (shm_seg.c)
 *     coll                      the "hardware" collectives (shm_coll.c):
 *       barrier counter           used in rank 0's segment only
 *       hb_desc [FMPL_SHM_HB_NSLOT]  our broadcast slots' sequence words
 *       hb_ack  [size] x 64 B     hb_ack[root]: root's chunks we copied
 *       hb_data [NSLOT][HB_CHUNK] our broadcast slots
 *   block [size], block r what reader r maps of us, page-aligned:
 *     lines [nidx] x slot       slot i: what we tell r about i, a cache
 *                               line and the lines a long record at offset
 *                               32 runs on into
 *     ack                       FIFO chunks we consumed from r
 *     fifo                      our outgoing FIFO to r
 *
 * Data paths of a put, chosen per call (fmpl_shm_put):
 *   self or fmpl_alloc_mem target  one memcpy into the target (mapped)
 *   user memory, large             streamed through our FIFO (below) while
 *                                  the ranks have a core each; else, CMA
 *                                  on, one process_vm_writev into the peer
 *   user memory otherwise          pipelined through our FIFO to that peer;
 *                                  the receiver's progress copies it out
 * The FIFO also carries notifications that must stay behind FIFO data,
 * which gives the ordering transport.h promises; a put_notify through
 * the FIFO carries its data and its record in one chunk (shm_put.c).
 */
#ifndef FMPL_SHM_H
#define FMPL_SHM_H

#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>
#include "base/hosts.h"
#include "transport/transport.h"

#define FMPL_SHM_MAGIC     0x464d504c53484d31ull   /* "FMPLSHM1" */
#define FMPL_SHM_CHUNK     8192                   /* FIFO chunk payload */
/* Bytes of FIFO chunks per ordered pair: as deep as FMPL_SHM_FIFO_BUDGET
 * spread over the peers allows, within [MIN, MAX] (FMPL_SHM_FIFO sets it).
 * Depth is what streams need: on a 2-vCPU VM 8-64 KiB messages went
 * through 256 KiB FIFOs at 8 GB/s and through 2 MiB ones at 17-25 GB/s,
 * a strided 1000 x 1000 matrix in 1.2 ms and 0.75 ms (bench/bw,
 * bench/blacs).  Pages are touched only as a FIFO is used, so a job pays
 * for the pairs that stream, at most the budget per process. */
#define FMPL_SHM_FIFO_MIN    (256u * 1024)
#define FMPL_SHM_FIFO_MAX    (2u * 1024 * 1024)
#define FMPL_SHM_FIFO_LIMIT  (64u * 1024 * 1024)  /* largest FMPL_SHM_FIFO */
#define FMPL_SHM_FIFO_BUDGET (16u * 1024 * 1024)
/* Large puts into a peer's ordinary memory (above FMPL_SHM_EAGER) stream
 * through the FIFO while the ranks have a core each (FMPL_SHM_STREAM): the
 * sender copies in while the receiver copies out, FMPL_SHM_SPAN chunks
 * (32 KiB) to a descriptor, in the FIFO's first FMPL_SHM_STREAM_DEPTH
 * bytes only, so that what one core writes is still in the caches when
 * the other reads it.  On a 2-vCPU EPYC VM (bench/bw, 16 MiB,
 * medians of 12 interleaved runs) the FIFO of 2 MiB in 8 KiB chunks
 * streamed 12.4 GB/s, a split by CMA (both sides' process_vm_*) 15.9,
 * the FIFO cut to 512 KiB 18.8; a build with 32 KiB chunks and a 512 KiB
 * FIFO streamed 22.3 (6 runs), and the spans here 1.21-1.28x the split.
 * A receiver that computes instead of draining would hold the sender
 * up: after FMPL_SHM_STREAM_PATIENCE without room the sender writes the
 * rest by CMA itself (shm_fifo.c). */
/* how a put's data goes through the FIFO (fmpl_shm_pend_t.stream) */
enum { FMPL_SHM_STREAM_NO = 0,     /* chunk by chunk, the whole ring */
       FMPL_SHM_STREAM_YES = 1,    /* a stream: spans, depth, patience */
       FMPL_SHM_STREAM_NT = 2 };   /* ... past the caches (FMPL_SHM_CH_DATA_NT) */
#define FMPL_SHM_SPAN            4
#define FMPL_SHM_STREAM_DEPTH    (512u * 1024)
#define FMPL_SHM_STREAM_PATIENCE 50e-6
/* A mailbox slot: the line, then the lines a record at offset 32 may run
 * on into (the extension), so that a message of up to its length rides in
 * its record (p2p.h; the receiver asks for the extension's lines while it
 * polls the word).  Through a FIFO chunk, 32 to 256-byte messages took
 * 0.54-0.56 us one-way against 0.35 us for 16 bytes in the record; in
 * the record's extension 0.35-0.38 us (bench/compare -t latency, medians
 * of 5 runs).  The extension's length is transport.h's rule
 * (fmpl_tl_slot_ext), kept in the segment's layout (shm_seg.c). */
#define FMPL_SHM_EXT_MAX    FMPL_TL_EXT_MAX
#define FMPL_SHM_REC_MAX   (32 + FMPL_SHM_EXT_MAX)   /* notify record bytes, at most */
#define FMPL_SHM_DREC_MAX  32                     /* ... inside a chunk descriptor */

/* key kinds */
#define FMPL_SHM_KEY_USER  1   /* addr = virtual address in the owner */
#define FMPL_SHM_KEY_ALLOC 2   /* addr = offset; id = generation; fd in kind>>8 */

/* FIFO chunk kinds */
#define FMPL_SHM_CH_DATA   1
#define FMPL_SHM_CH_NOTIFY 2
#define FMPL_SHM_CH_DATA_NOTIFY 3   /* data into user memory, then a record */
#define FMPL_SHM_CH_SKIP   4   /* no data: the next descriptor is key_id chunks on */
#define FMPL_SHM_CH_DATA_NT 5  /* DATA of a stream past the caches (shm_copy.c) */

typedef struct fmpl_shm_seg_hdr {
    uint64_t magic;
    int32_t  pid, rank, size, nidx;
    uint64_t seg_len;
    uint64_t contact_off, coll_off, hb_data_off;
    uint64_t blocks_off;           /* the common part's length */
    uint64_t block_len;            /* from one reader's block to the next */
    uint64_t ack_off, fifo_off;    /* inside a block (its lines at 0) */
    uint64_t fifo_stride;          /* bytes of a FIFO */
    uint32_t fifo_nchunk;          /* chunks per FIFO */
    uint32_t slot;                 /* bytes of a mailbox slot */
    uint64_t self_addr;            /* where the owner maps it: a CMA probe target */
} fmpl_shm_seg_hdr_t;

#define FMPL_SHM_HB_NSLOT  4                      /* broadcast slots */
#define FMPL_SHM_HB_CHUNK  (64 * 1024)            /* bytes per slot */
/* offsets inside the coll area */
#define FMPL_SHM_BAR_COUNT 0
#define FMPL_SHM_HB_DESC   128
#define FMPL_SHM_HB_ACK    (FMPL_SHM_HB_DESC + 64 * FMPL_SHM_HB_NSLOT)

/* One FIFO chunk descriptor: a cache line written by the sender; `seq`
 * (chunk number, from 1) is stored last, with release order.
 *   DATA         len data bytes for addr (key addr + offset) of key
 *                (key_kind, key_id)
 *   NOTIFY       a record of len bytes for slot addr (an index) at offset
 *                key_kind: in rec, or in the chunk's data when longer
 *   DATA_NOTIFY  both (put_notify into user memory, whose key is its
 *                address alone): len data bytes for addr, then a record
 *                for line key_kind, offset and length in key_id
 *                (FMPL_SHM_DN_OFF/LEN) - one chunk where DATA and NOTIFY
 *                took two, so one descriptor line less per message */
typedef struct fmpl_shm_chunk {
    _Atomic uint64_t seq;
    uint32_t kind, len;
    uint64_t addr;
    uint32_t key_kind, key_id;
    uint8_t  rec[FMPL_SHM_DREC_MAX];
} fmpl_shm_chunk_t;
#define FMPL_SHM_DN_WORD(off, len) ((uint32_t)(off) << 8 | (uint32_t)(len))
#define FMPL_SHM_DN_OFF(w)         ((w) >> 8)
#define FMPL_SHM_DN_LEN(w)         ((w) & 0xff)

/* One FIFO in its writer's segment: fifo_nchunk descriptors, then as
 * many chunks of FMPL_SHM_CHUNK bytes (a view; the layout has the sizes). */
typedef struct fmpl_shm_fifo {
    fmpl_shm_chunk_t *desc;
    uint8_t *data;
} fmpl_shm_fifo_t;

typedef struct fmpl_shm_ack {
    _Atomic uint64_t consumed;
    uint8_t pad[56];
} fmpl_shm_ack_t;

/* An operation waiting for FIFO space (sender side, per peer, in order). */
typedef struct fmpl_shm_pend {
    struct fmpl_shm_pend *next;
    int kind;                      /* FMPL_SHM_CH_DATA or _NOTIFY */
    const uint8_t *src;            /* DATA: what is left to send */
    size_t len;
    fmpl_tl_key_t key;
    uint64_t roff;
    fmpl_tl_comp_t *comp;          /* counts this entry until it leaves */
    int stream;                    /* DATA: FMPL_SHM_STREAM_* */
    uint64_t seen;                 /* stream: the receiver's ack when we last looked */
    double since;                  /* stream: ... and when it last moved (0: not yet) */
    int idx; unsigned off, reclen; /* NOTIFY */
    uint8_t rec[FMPL_SHM_REC_MAX];
} fmpl_shm_pend_t;

/* What we know of each peer. */
typedef struct fmpl_shm_peer {
    uint8_t *common;               /* its segment's common part, mapped on first
                                      use (fmpl_shm_map), NULL before */
    uint8_t *block;                /* ... and its block for us */
    pid_t pid;                     /* from the modex, on first use (fmpl_shm_pid) */
    int fd;
    int contacted;                 /* our contact bit is set in its segment */
    int cma_ok;                    /* 0 after CMA was refused */
    /* our FIFO to it */
    uint64_t produced, acked;      /* acked: last value read from its ack */
    fmpl_shm_pend_t *pend, *pend_tail;
    /* its FIFO to us */
    uint64_t consumed;
    /* the sequence word of the descriptor after them (NULL: not known
     * yet): progress looks at it alone, without the ring's arithmetic
     * (a division), to see that nothing came */
    const _Atomic uint64_t *next;
} fmpl_shm_peer_t;

/* A peer's fmpl_alloc_mem region mapped here (small cache). */
typedef struct fmpl_shm_rmap {
    int peer;
    uint32_t gen;
    uint8_t *base;
    size_t len;
} fmpl_shm_rmap_t;

/* One of our fmpl_alloc_mem regions. */
typedef struct fmpl_shm_alloc {
    struct fmpl_shm_alloc *next;
    uint8_t *base;
    size_t len;
    int fd;
    uint32_t gen;
} fmpl_shm_alloc_t;

#define FMPL_SHM_RMAP_MAX 64

typedef struct fmpl_shm {
    fmpl_tl_t *tl;
    const uint8_t *serve;          /* [size]: the ranks we serve; NULL: all
                                      (fmpl_shm_open_for) */
    int fd;                        /* our segment */
    uint8_t *seg;
    size_t seg_len;
    fmpl_shm_seg_hdr_t layout;     /* same for every rank */
    fmpl_shm_peer_t *peers;
    int *active, nactive;          /* the peers whose blocks we map: their FIFOs
                                      are drained (progress), in order mapped */
    uint64_t contact_seen;         /* our contact gen when last looked at */
    /* [size]: our lines as plain memory for the layers above (transport.h),
     * tl->direct unless FMPL_SHM_DIRECT=0; `queued` while the FIFO to the
     * peer is not empty (fmpl_shm_fifo_busy) */
    fmpl_tl_direct_t *direct;
    size_t eager;                  /* above this, CMA when allowed */
    int stream;                    /* above eager, stream through the FIFO (shm.h) */
    size_t nt_min;                 /* streams from this size: FMPL_SHM_CH_DATA_NT */
    int cma;                       /* CMA allowed by configuration */
    int npend;                     /* peers with pending FIFO work */
    /* Queue entries that left the FIFO, for the next ones.  Each holds a
     * whole notify record (2 KiB), so a window of queued messages takes
     * more than glibc's 128 KiB trim threshold: freed, the heap's top
     * went back to the kernel after every window and came back page by
     * page (bench/bw, 128 KiB messages, 64 a window: 6.0 GB/s, 19.1
     * with the heap kept). */
    fmpl_shm_pend_t *pend_free;
    fmpl_shm_alloc_t *allocs;
    uint32_t alloc_gen;
    fmpl_shm_rmap_t rmap[FMPL_SHM_RMAP_MAX];
    unsigned rmap_next;
    uint64_t bar_gen;              /* barriers completed here */
    uint64_t *hb_count;            /* [size]: broadcast chunks per root so far */
} fmpl_shm_t;

static inline fmpl_shm_t *fmpl_shm_of(fmpl_tl_t *tl) { return (fmpl_shm_t *)tl->priv; }

/* Do large puts stream (shm.h)?  Not where ranks share cores: a stream
 * needs both of them running at once, where a CMA copy needs the sender
 * alone. */
static inline int fmpl_shm_streaming(const fmpl_shm_t *s)
{
    return s->stream && !s->tl->hosts->crowded;
}

/* Does a put of len bytes into a peer's ordinary memory stream? */
static inline int fmpl_shm_streams(const fmpl_shm_t *s, size_t len)
{
    return fmpl_shm_streaming(s) && len > s->eager;
}

/* Is rank r ours to serve, so that we map its segment?  Every rank is,
 * unless the route transport gave us only the peers on our host. */
static inline int fmpl_shm_here(const fmpl_tl_t *tl, int r)
{
    const fmpl_shm_t *s = tl->priv;
    return !s->serve || s->serve[r];
}

/* The block `writer` keeps for `reader` (shm.h's layout).  Every use has
 * us as one of them; a peer's block for us must be mapped (fmpl_shm_map). */
static inline uint8_t *fmpl_shm_block(fmpl_shm_t *s, int writer, int reader)
{
    if (writer == s->tl->rank)
        return s->seg + s->layout.blocks_off + (size_t)reader * s->layout.block_len;
    return s->peers[writer].block;
}
/* address of the line `writer` writes for `reader` about `idx` */
static inline uint8_t *fmpl_shm_line(fmpl_shm_t *s, int writer, int reader, int idx)
{
    return fmpl_shm_block(s, writer, reader) + (size_t)idx * s->layout.slot;
}
static inline fmpl_shm_fifo_t fmpl_shm_fifo(fmpl_shm_t *s, int writer, int reader)
{
    uint8_t *f = fmpl_shm_block(s, writer, reader) + s->layout.fifo_off;
    return (fmpl_shm_fifo_t){ .desc = (fmpl_shm_chunk_t *)(void *)f,
                              .data = f + (size_t)s->layout.fifo_nchunk *
                                          sizeof(fmpl_shm_chunk_t) };
}
static inline uint8_t *fmpl_shm_fifo_chunk(fmpl_shm_fifo_t f, unsigned k)
{
    return f.data + (size_t)k * FMPL_SHM_CHUNK;
}
/* FIFO chunks `owner` consumed from `sender` */
static inline fmpl_shm_ack_t *fmpl_shm_ack(fmpl_shm_t *s, int owner, int sender)
{
    return (fmpl_shm_ack_t *)(void *)(fmpl_shm_block(s, owner, sender) + s->layout.ack_off);
}
/* `owner`'s common part (mapped: fmpl_shm_map) */
static inline uint8_t *fmpl_shm_common(fmpl_shm_t *s, int owner)
{
    return owner == s->tl->rank ? s->seg : s->peers[owner].common;
}

/* shm_ops.c: open serving only the ranks r with serve[r] (the route
 * transport's, for its part on our host: it keeps serve[] until close);
 * every rank for serve NULL (fmpl_shm_ops.open) */
int  fmpl_shm_open_for(fmpl_tl_t *tl, const uint8_t *serve);

/* shm_copy.c */
size_t fmpl_shm_llc_bytes(void);
void   fmpl_shm_copy_nt(void *dst, const void *src, size_t n);

/* shm_seg.c */
int  fmpl_shm_seg_create(fmpl_shm_t *s);
void fmpl_shm_seg_destroy(fmpl_shm_t *s);
/* Map `peer`'s common part and its block for us, once: FMPL_SUCCESS, or
 * an FMPL code (logged) when it cannot be (gone, another layout). */
int  fmpl_shm_map(fmpl_shm_t *s, int peer);
static inline int fmpl_shm_mapped(fmpl_shm_t *s, int peer)
{
    return peer == s->tl->rank || s->peers[peer].block ? FMPL_SUCCESS : fmpl_shm_map(s, peer);
}
/* Before our first FIFO chunk to `peer`: map it, and set our contact bit
 * in its segment so that it drains us. */
int  fmpl_shm_contact(fmpl_shm_t *s, int peer);
/* Map the peers whose contact bits are new; how many. */
int  fmpl_shm_contacts(fmpl_shm_t *s);
/* `peer`'s pid (the modex's, read on first use; 0 if unknown) */
pid_t fmpl_shm_pid(fmpl_shm_t *s, int peer);
/* FMPL_SUCCESS when the ranks here agree on the layout (at start-up) */
int  fmpl_shm_layout_check(fmpl_shm_t *s);
/* 0 when this process may read another's memory (cross-memory attach) */
int fmpl_shm_cma_probe(fmpl_shm_t *s);

/* shm_mem.c */
int   fmpl_shm_mem_reg(fmpl_tl_t *tl, void *addr, size_t len, fmpl_tl_key_t *key);
void  fmpl_shm_mem_dereg(fmpl_tl_t *tl, const fmpl_tl_key_t *key);
void *fmpl_shm_mem_alloc(fmpl_tl_t *tl, size_t len);
int   fmpl_shm_mem_free(fmpl_tl_t *tl, void *p);
uint8_t *fmpl_shm_key_local(fmpl_shm_t *s, const fmpl_tl_key_t *key, uint64_t roff,
                            uint64_t len);
uint8_t *fmpl_shm_key_remote(fmpl_shm_t *s, int peer, const fmpl_tl_key_t *key,
                             uint64_t roff, uint64_t len);
void  fmpl_shm_mem_cleanup(fmpl_shm_t *s);

/* shm_fifo.c */
int  fmpl_shm_fifo_put(fmpl_shm_t *s, int peer, const void *src, size_t len,
                       const fmpl_tl_key_t *key, uint64_t roff, int stream,
                       fmpl_tl_comp_t *comp);
int  fmpl_shm_fifo_notify(fmpl_shm_t *s, int peer, int idx, unsigned off,
                          const void *rec, unsigned len, fmpl_tl_comp_t *comp);
int  fmpl_shm_fifo_put_notify(fmpl_shm_t *s, int peer, const void *src, size_t len,
                              uint64_t addr, int idx, unsigned off, const void *rec,
                              unsigned reclen);
int  fmpl_shm_fifo_busy(fmpl_shm_t *s, int peer);
int  fmpl_shm_fifo_push(fmpl_shm_t *s, int peer);
int  fmpl_shm_fifo_drain(fmpl_shm_t *s, int peer);

/* shm_mbox.c */
volatile void *fmpl_shm_mbox_in(fmpl_tl_t *tl, int peer, int idx);
int  fmpl_shm_notify(fmpl_tl_t *tl, int peer, int idx, unsigned off,
                     const void *rec, unsigned len, unsigned flags, fmpl_tl_comp_t *comp);
int  fmpl_shm_mbox_cas(fmpl_tl_t *tl, int peer, int idx, unsigned off, int outgoing,
                       uint64_t expect, uint64_t desired, uint64_t *old);

/* shm_coll.c */
static inline _Atomic uint64_t *fmpl_shm_coll_word(fmpl_shm_t *s, int owner, size_t off)
{
    return (_Atomic uint64_t *)(void *)(fmpl_shm_common(s, owner) + s->layout.coll_off + off);
}
int fmpl_shm_barrier(fmpl_tl_t *tl, fmpl_tl_coll_t *st);
int fmpl_shm_bcast(fmpl_tl_t *tl, void *buf, size_t len, int root, fmpl_tl_coll_t *st);

/* shm_put.c */
int  fmpl_shm_put(fmpl_tl_t *tl, int peer, const void *src, size_t len,
                  const fmpl_tl_key_t *key, uint64_t roff, unsigned flags,
                  fmpl_tl_comp_t *comp);
int  fmpl_shm_put_notify(fmpl_tl_t *tl, int peer, const void *src, size_t len,
                         const fmpl_tl_key_t *key, uint64_t roff, int idx, unsigned off,
                         const void *rec, unsigned reclen, fmpl_tl_comp_t *comp);
int  fmpl_shm_put_strided(fmpl_tl_t *tl, int peer, const void *src, size_t blklen,
                          size_t nblk, size_t sstride, const fmpl_tl_key_t *key,
                          uint64_t roff, size_t dstride, fmpl_tl_comp_t *comp);
int  fmpl_shm_get(fmpl_tl_t *tl, int peer, void *dst, size_t len,
                  const fmpl_tl_key_t *key, uint64_t roff);

#endif
