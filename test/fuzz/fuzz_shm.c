/*
 * fuzz_shm - libFuzzer harness for what a peer's segment tells the
 * shared-memory transport (transport/shm): the chunks of its FIFO to us
 * (data for our memory, notifications for our lines), its FIFO's
 * acknowledgement word, and the keys its headers hand us for our puts
 * and gets.
 *
 * A job of two in one process: we are rank 0 and run the transport's
 * real code (fmpl_shm_fifo_drain, fmpl_shm_put - streamed or not -,
 * fmpl_shm_put_strided, fmpl_shm_get); rank 1's segment and its fmpl_alloc_mem region (as if
 * mapped here) are heap blocks of exactly their size that the fuzzer
 * writes (its block for us).  Our own segment and region are heap blocks
 * of exactly their size too, and every source and destination buffer has exactly the
 * operation's length: AddressSanitizer sees a byte written or read past
 * any of them.  A chunk or a key may at worst be dropped with an error.
 *
 * Not fuzzed, on purpose: a data chunk for ordinary memory names a bare
 * address in our process, which the transport cannot check
 * (docs/security.md); such chunks are turned into chunks for our region here,
 * and a data-and-record chunk's data is written into our region.
 *
 * Input: operations of one byte and their arguments.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fmpl.h"
#include "p2p/state.h"
#include "transport/shm/shm.h"
#include "transport/transport.h"
#include "fuzz_input.h"

#define NIDX    4
#define NCHUNK  4
#define REGION  4096               /* our fmpl_alloc_mem region */
#define PREGION 8192               /* the peer's, mapped here */
#define PGEN    7                  /* its generation */
#define MAXLEN  (3 * FMPL_SHM_CHUNK)
#define SLOT    (64 + FMPL_SHM_EXT_MAX)   /* the longest slot a layout has */

/* a length or offset: small, near a boundary, or anything */
static uint64_t amount(void)
{
    static const uint64_t v[] = { 0, 1, 8, 64, 4088, 4096, 4097, 8184, 8192, 8193,
                                  FMPL_SHM_CHUNK + 1, 3 * FMPL_SHM_CHUNK };
    unsigned c = byte();
    if (c < 0xf0)
        return v[c % (sizeof v / sizeof v[0])];
    uint64_t x;
    bytes(&x, sizeof x);
    return x;
}

static fmpl_tl_t tl;
static const fmpl_hosts_t hosts = { .nhosts = 1 }; /* one host, nobody crowded */
static fmpl_shm_t s;
static fmpl_shm_peer_t peers[2];
static fmpl_shm_alloc_t ours;
static size_t seg_len;
static fmpl_tl_direct_t direct[2]; /* (tl.direct stays NULL: the harness calls the ops) */
static uint64_t published;         /* chunks the peer has put in its FIFO to us */

static void job_open(void)
{
    static int once;
    if (!once) {
        /* our segment: a block for each reader (no common part: nothing
         * here uses it); the peer's: its block for us */
        size_t lines = NIDX * SLOT;
        size_t fifo = NCHUNK * (sizeof(fmpl_shm_chunk_t) + FMPL_SHM_CHUNK);
        s.layout = (fmpl_shm_seg_hdr_t){ .size = 2, .nidx = NIDX, .blocks_off = 0,
                                         .ack_off = lines,
                                         .fifo_off = lines + sizeof(fmpl_shm_ack_t),
                                         .fifo_stride = fifo, .fifo_nchunk = NCHUNK,
                                         .slot = SLOT };
        s.layout.block_len = s.layout.fifo_off + fifo;
        seg_len = 2 * s.layout.block_len;
        s.seg = malloc(seg_len);
        peers[1].block = malloc(s.layout.block_len);
        ours.base = malloc(REGION);
        ours.len = REGION;
        ours.gen = 1;
        ours.fd = -1;
        s.rmap[0] = (fmpl_shm_rmap_t){ .peer = 1, .gen = PGEN, .base = malloc(PREGION),
                                       .len = PREGION };
        once = 1;
    }
    memset(s.seg, 0, seg_len);
    memset(peers[1].block, 0, s.layout.block_len);
    for (int r = 0; r < 2; r++) {
        peers[r].produced = peers[r].acked = peers[r].consumed = 0;
        /* known (as once the modex was read) and no process: the peer's
         * regions cannot be mapped through /proc, only rmap[0] is there */
        peers[r].pid = INT32_MAX;
        peers[r].cma_ok = 0;
        peers[r].contacted = 1;    /* as after the first contact (shm_seg.c) */
    }
    s.tl = &tl;
    s.peers = peers;
    memset(direct, 0, sizeof direct);
    s.direct = direct;
    s.allocs = &ours;
    s.cma = 0;
    s.eager = 0;
    published = 0;
    tl = (fmpl_tl_t){ .ops = &fmpl_shm_ops, .rank = 0, .size = 2, .nidx = NIDX, .priv = &s,
                      .hosts = &hosts, .max_inline = SLOT - 32 };
}

static void job_close(void)
{
    for (int r = 0; r < 2; r++) {
        while (peers[r].pend) {
            fmpl_shm_pend_t *e = peers[r].pend;
            peers[r].pend = e->next;
            free(e);
        }
        peers[r].pend_tail = NULL;
    }
    s.npend = 0;
}

/* the peer puts a chunk into its FIFO to us, and we drain it */
static void peer_chunk(void)
{
    fmpl_shm_fifo_t f = fmpl_shm_fifo(&s, 1, 0);
    unsigned k = (unsigned)(published % NCHUNK);
    fmpl_shm_chunk_t *d = &f.desc[k];
    unsigned c = byte();
    d->kind = c & 1 ? FMPL_SHM_CH_NOTIFY : c & 2 ? FMPL_SHM_CH_DATA
            : c & 4 ? FMPL_SHM_CH_DATA_NOTIFY : c >> 3;
    d->len = (uint32_t)amount();
    d->addr = amount();
    bytes(&d->key_kind, sizeof d->key_kind);
    bytes(&d->key_id, sizeof d->key_id);
    if (d->kind == FMPL_SHM_CH_NOTIFY && byte() & 1) {
        /* a plausible one: an index, an offset in the slot */
        d->addr = byte() % (NIDX + 1);
        d->key_kind = (byte() % (SLOT / 8 + 1)) * 8;
        if (byte() & 1)
            d->len = (byte() | (byte() & 15u) << 8) % (FMPL_SHM_REC_MAX + 9);
    }
    if (d->kind == FMPL_SHM_CH_DATA || d->kind == FMPL_SHM_CH_DATA_NT) {
        /* ordinary memory is a bare address (see above): our region instead */
        if ((d->key_kind & 0xff) != FMPL_SHM_KEY_ALLOC)
            d->key_kind = FMPL_SHM_KEY_ALLOC;
        if (byte() & 1)
            d->key_id = ours.gen;
    }
    if (d->kind == FMPL_SHM_CH_DATA_NOTIFY) {
        /* its data names a bare address too: our region instead (and
         * no longer than it, unless longer than a chunk: refused);
         * what is fuzzed is the record's index, offset and length */
        d->addr = (uintptr_t)ours.base;
        if (d->len <= FMPL_SHM_CHUNK && d->len > REGION)
            d->len = REGION;
        if (byte() & 1) {
            d->key_kind = byte() % (NIDX + 1);
            unsigned off = (byte() % 9) * 8;
            d->key_id = FMPL_SHM_DN_WORD(off, byte() % (FMPL_SHM_DREC_MAX + 9));
        }
    }
    bytes(d->rec, sizeof d->rec);
    bytes(fmpl_shm_fifo_chunk(f, k), FMPL_SHM_REC_MAX);   /* a long record's place */
    atomic_store_explicit(&d->seq, byte() == 0xff ? amount() : published + 1,
                          memory_order_release);
    published++;
    fmpl_shm_fifo_drain(&s, 1);
}

/* a key the peer handed us in a header: its region, or anything */
static void peer_key(fmpl_tl_key_t *k)
{
    bytes(k, sizeof *k);
    unsigned c = byte();
    if (c & 1) {
        k->kind = FMPL_SHM_KEY_ALLOC;
        k->id = PGEN;
    } else if (c & 2) {
        k->kind = FMPL_SHM_KEY_USER;   /* through our FIFO to it: its problem */
    }
    if (c & 4)
        k->addr = amount();
}

static void our_put(int strided)
{
    fmpl_tl_key_t k;
    peer_key(&k);
    uint64_t roff = amount();
    fmpl_tl_comp_t comp = { 0 };
    if (!strided) {
        s.stream = byte() & 1;     /* through the FIFO in spans, or chunk by chunk */
        size_t len = (size_t)(amount() % (MAXLEN + 1));
        uint8_t *src = malloc(len ? len : 1);
        memset(src, 0x44, len);
        fmpl_shm_put(&tl, 1, src, len, &k, roff, 0, &comp);
        job_close();               /* a queued put must not outlive its source */
        free(src);
        return;
    }
    size_t blklen = 1 + byte() % 200, nblk = 1 + byte() % 8;
    size_t sstride = blklen + byte() % 64, dstride = (size_t)amount() % 100000;
    size_t span = (nblk - 1) * sstride + blklen;
    uint8_t *src = malloc(span);
    memset(src, 0x55, span);
    fmpl_shm_put_strided(&tl, 1, src, blklen, nblk, sstride, &k, roff, dstride, &comp);
    job_close();
    free(src);
}

static void our_get(void)
{
    fmpl_tl_key_t k;
    peer_key(&k);
    uint64_t roff = amount();
    size_t len = (size_t)(amount() % (MAXLEN + 1));
    uint8_t *dst = malloc(len ? len : 1);
    fmpl_shm_get(&tl, 1, dst, len, &k, roff);
    free(dst);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
    fuzz_start(data, n);
    job_open();
    for (unsigned steps = 0; !spent() && steps < 64; steps++) {
        switch (byte() % 5) {
        case 0: peer_chunk(); break;
        case 1: our_put(0); break;
        case 2: our_put(1); break;
        case 3: our_get(); break;
        default: {                 /* the peer's acknowledgement of our FIFO */
            uint64_t v = amount();
            atomic_store_explicit(&fmpl_shm_ack(&s, 1, 0)->consumed, v,
                                  memory_order_release);
            fmpl_shm_fifo_push(&s, 1);
        }
        }
    }
    job_close();
    return 0;
}
