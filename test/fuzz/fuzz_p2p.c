/*
 * fuzz_p2p - libFuzzer harness for the point-to-point records a peer
 * writes into our matching area (p2p/recv.c, send.c, cancel.c,
 * matrix.c): headers, data records (inline, early, split, truncation and
 * error records, a cancel's answer), the cancel doorbell, and a matrix
 * message's layout and announcement records.
 *
 * The job has two ranks.  We are rank 0 and run FMPL's real p2p code; the
 * peer, rank 1, is the fuzzer.  Between our calls, and in every progress
 * call of the transport (so also inside a wait), the input makes the peer
 * write records into our mailbox lines: built around the sequence
 * numbers we expect (so that the fuzzer reaches deep states) or raw.
 *
 * The transport is a fake with the ops table's contract (transport.h):
 *   - every mailbox line is its own 64-byte heap block, every receive
 *     buffer and send source one of exactly the request's size: a read or
 *     write past one is AddressSanitizer's report;
 *   - a get (the receiver's half of a split message) writes every byte
 *     it is asked to into our memory: FMPL must ask only for bytes inside
 *     the receive buffer;
 *   - a notify must stay inside one line and the transport's inline size;
 *   - every mem_reg is matched by one mem_dereg of a key it returned.
 * A violation aborts.  FMPL's calls are the nonblocking ones (a fuzzed
 * peer may never complete anything; a blocking call would wait for it),
 * and a cancel, which may wait for the peer's answer without remote
 * atomics: once the input is spent the peer answers as a correct one
 * would, so nothing hangs.
 *
 * Input: one byte of configuration (remote atomics, remote reads, early
 * sends, inline messages), then operations of one byte and their
 * arguments.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fmpl.h"
#include "p2p/matrix.h"
#include "p2p/p2p.h"

#define NUSER  2                   /* the user's indices */
#define MXIDX  NUSER               /* a communicator's: matrix messages */
#define AUX    (MXIDX + 1)         /* ... and their FMPL_MX_NAUX auxiliary lines */
#define NIDX   (AUX + FMPL_MX_NAUX + 1)   /* and the control index */
#include "fuzz_peer.h"

#define NREG   64
#define MAXSZ  (72 * 1024)

static const size_t sizes[] = { 0, 1, 8, 20, 24, 25, 100, 256, 257, 2048, 2049, 4096, 8193,
                                 16384, 70000 };
#define NSIZES (sizeof sizes / sizeof sizes[0])
/* matrices: contiguous, strided, trapezoids; inline, put, split sizes */
static const fmpl_matrix_t shapes[] = {
    { 8, 1, 1, 1, 'G', 'N' },   { 8, 2, 3, 2, 'G', 'N' },   { 8, 2, 3, 5, 'G', 'N' },
    { 4, 2, 2, 3, 'G', 'N' },   { 8, 3, 3, 4, 'U', 'N' },   { 8, 3, 3, 3, 'L', 'U' },
    { 8, 64, 3, 70, 'G', 'N' }, { 8, 700, 3, 700, 'G', 'N' }, { 8, 40, 40, 41, 'L', 'N' },
};
#define NSHAPES (sizeof shapes / sizeof shapes[0])
static fmpl_mshape_t mx_shape;     /* the last matrix receive's, for announcements */
static uint32_t mx_wait_seq;       /* the matrix receive we block in, 0: none */

/* ---- the fake transport ------------------------------------------------- */

static struct { uint8_t *addr; size_t len; uint32_t id; } reg[NREG];
static uint32_t reg_next;
static int io_fail;                /* the next put or get fails */

static int f_open(fmpl_tl_t *tl) { (void)tl; return FMPL_SUCCESS; }
static void f_close(fmpl_tl_t *tl) { (void)tl; }

static int f_mem_reg(fmpl_tl_t *tl, void *addr, size_t len, fmpl_tl_key_t *key)
{
    (void)tl;
    for (int i = 0; i < NREG; i++)
        if (!reg[i].id) {
            reg[i].addr = addr;
            reg[i].len = len;
            reg[i].id = ++reg_next ? reg_next : ++reg_next;
            *key = (fmpl_tl_key_t){ .addr = (uintptr_t)addr, .kind = 1, .id = reg[i].id };
            return FMPL_SUCCESS;
        }
    return FMPL_ERR_NOMEM;
}

static void f_mem_dereg(fmpl_tl_t *tl, const fmpl_tl_key_t *key)
{
    (void)tl;
    for (int i = 0; i < NREG; i++)
        if (reg[i].id && reg[i].id == key->id && (uintptr_t)reg[i].addr == key->addr) {
            reg[i].id = 0;
            return;
        }
    abort();                       /* not a key mem_reg returned, or dropped twice */
}

static void *f_mem_alloc(fmpl_tl_t *tl, size_t len) { (void)tl; return malloc(len); }
static int f_mem_free(fmpl_tl_t *tl, void *p) { (void)tl; free(p); return FMPL_SUCCESS; }

static volatile uint8_t sink;

/* Into the peer's memory: whatever its key says is its business; ours is
 * only to read the source we were given, all of it. */
static int f_put(fmpl_tl_t *tl, int peer, const void *src, size_t len,
                 const fmpl_tl_key_t *key, uint64_t roff, unsigned flags, fmpl_tl_comp_t *comp)
{
    (void)tl; (void)key; (void)roff; (void)flags; (void)comp;
    check_peer_idx(peer, 0);
    if (len > MAXSZ)
        abort();                   /* more than any source the harness has */
    uint8_t x = 0;
    for (size_t i = 0; i < len; i++)
        x ^= ((const uint8_t *)src)[i];
    sink = x;
    if (io_fail) {
        io_fail = 0;
        return FMPL_ERR_SYSTEM;
    }
    return FMPL_SUCCESS;
}

/* From the peer's memory into ours: every byte asked for is written. */
static int f_get(fmpl_tl_t *tl, int peer, void *dst, size_t len, const fmpl_tl_key_t *key,
                 uint64_t roff)
{
    (void)tl; (void)key; (void)roff;
    check_peer_idx(peer, 0);
    if (io_fail) {
        io_fail = 0;
        return FMPL_ERR_SYSTEM;
    }
    memset(dst, 0x5a, len);
    return FMPL_SUCCESS;
}

static int f_mbox_cas(fmpl_tl_t *tl, int peer, int idx, unsigned off, int outgoing,
                      uint64_t expect, uint64_t desired, uint64_t *old)
{
    if (!(tl->caps & FMPL_TL_CAP_CAS) || off % 8 || off >= FMPL_TL_LINE)
        abort();
    check_peer_idx(peer, idx);
    uint64_t *w = (uint64_t *)(void *)((outgoing ? out_line : in_line)[idx] + off);
    uint64_t cur = *w;
    if (old)
        *old = cur;
    if (cur != expect)
        return FMPL_ERR_BUSY;
    *w = desired;
    return FMPL_SUCCESS;
}

static void peer_act(void);

static int f_progress(fmpl_tl_t *tl)
{
    (void)tl;
    peer_act();
    return 0;
}

static int f_peer_ok(fmpl_tl_t *tl, int peer) { (void)tl; (void)peer; return 1; }

static const fmpl_tl_ops_t fuzz_ops = {
    .size = sizeof(fmpl_tl_ops_t), .name = "fuzz",
    .open = f_open, .close = f_close,
    .mem_reg = f_mem_reg, .mem_dereg = f_mem_dereg,
    .mem_alloc = f_mem_alloc, .mem_free = f_mem_free,
    .put = f_put, .put_strided = fmpl_tl_put_strided_by_put, .put_iov = fmpl_tl_put_iov_by_put,
    .get = f_get, .mbox_in = f_mbox_in, .notify = f_notify, .mbox_cas = f_mbox_cas,
    .put_notify = fmpl_tl_put_notify_by_parts,
    .progress = f_progress, .peer_ok = f_peer_ok,
    .barrier = fmpl_tl_unsupported_barrier, .bcast = fmpl_tl_unsupported_bcast,
};

/* ---- the bootstrap: a job of two that nobody leaves ---------------------- */

static int b_put(fmpl_boot_t *b, const char *k, const void *v, size_t n)
{ (void)b; (void)k; (void)v; (void)n; return FMPL_SUCCESS; }
static int b_fence(fmpl_boot_t *b) { (void)b; return FMPL_SUCCESS; }
static int b_get(fmpl_boot_t *b, int r, const char *k, void *v, size_t *n)
{ (void)b; (void)r; (void)k; (void)v; (void)n; return FMPL_ERR_UNSUPPORTED; }
static int b_dead(fmpl_boot_t *b) { (void)b; return -1; }
static void b_fin(fmpl_boot_t *b) { (void)b; }
static void b_abort(fmpl_boot_t *b, int code) { (void)b; (void)code; abort(); }
static void b_close(fmpl_boot_t *b) { (void)b; }
static const struct fmpl_boot_ops boot_ops = {
    .name = "fuzz", .put = b_put, .fence = b_fence, .get = b_get, .dead_rank = b_dead,
    .mark_finalized = b_fin, .abort = b_abort, .close = b_close,
};

/* ---- the peer ----------------------------------------------------------- */

/* the peer's data record on idx: our receive's sequence number or near it */
static void peer_data(int idx, int split)
{
    fmpl_slot_t *sl = fmpl_slot(PEER, idx);
    uint32_t seq = near_seq(split || byte() & 1 ? sl->recv_seq : fmpl_seq_next(sl->recv_seq));
    uint8_t *l = in_line[idx];
    if (split) {
        /* the sender's key and size: the size near the receive's */
        fmpl_tl_key_t k;
        bytes(&k, sizeof k);
        unsigned c = byte();
        uint64_t sz = sizes[c % NSIZES] + (c & 0x80 ? 4096 : 0);
        if (c >= 0xf0)
            bytes(&sz, sizeof sz);
        memcpy(l + FMPL_DATA_OFF + 8, &k, sizeof k);
        memcpy(l + FMPL_DATA_OFF + 8 + sizeof k, &sz, sizeof sz);
        store_word(l, FMPL_DATA_OFF, fmpl_data_word(seq, FMPL_DST_SPLIT, 0, 0));
        return;
    }
    unsigned status = byte(), flags = byte(), len = byte();
    if (flags & FMPL_DFLAG_EXT)
        len |= (byte() & 15u) << 8;  /* an extension's length: up to 4095 */
    bytes(l + FMPL_DATA_OFF + 8, FUZZ_SLOT - FMPL_DATA_OFF - 8);
    store_word(l, FMPL_DATA_OFF, fmpl_data_word(seq, status % 6, flags % 32, len));
}

/* the peer's header on idx: a receive of our send, or near it */
static void peer_header(int idx)
{
    fmpl_slot_t *sl = fmpl_slot(PEER, idx);
    uint32_t seq = near_seq(byte() & 1 ? sl->send_seq : fmpl_seq_next(sl->send_seq));
    unsigned state = byte() % 10;
    unsigned c = byte();
    uint64_t size = sizes[c % NSIZES];
    if (c >= 0xf0)
        bytes(&size, sizeof size);
    fmpl_tl_key_t k;
    bytes(&k, sizeof k);
    uint8_t *l = in_line[idx];
    memcpy(l + FMPL_HDR_OFF + 8, &size, sizeof size);
    memcpy(l + FMPL_HDR_OFF + 16, &k, sizeof k);
    store_word(l, FMPL_HDR_OFF, fmpl_hdr_word(seq, state));
}

/* the peer announces a queued matrix send (matrix.c: slot (seq - 1) % 5
 * of the auxiliary lines), of our last receive's size and shape or not */
static void peer_announce(void)
{
    uint32_t seq = near_seq(fmpl_seq_next(fmpl_slot(PEER, MXIDX)->recv_seq));
    unsigned slot = (seq - 1) % (2 * FMPL_MX_NAUX - 1);
    uint8_t *l = in_line[AUX + (slot + 1) / 2];
    unsigned off = slot % 2 ? 0 : 32;
    uint64_t size = mx_shape.esize ? mx_shape.count * mx_shape.esize |
                                         fmpl_mshape_tag(&mx_shape) << FMPL_HDR_SIZE_BITS
                                   : 0;
    if (byte() & 1)
        bytes(&size, sizeof size);
    fmpl_tl_key_t k;
    bytes(&k, sizeof k);
    memcpy(l + off + 8, &size, sizeof size);
    memcpy(l + off + 16, &k, sizeof k);
    store_word(l, off, (uint64_t)seq << 32 | 0xa5);
}

/* the peer, receiving a strided matrix of ours, says its leading dimension */
static void peer_layout(void)
{
    uint32_t seq = near_seq(fmpl_slot(PEER, MXIDX)->send_seq);
    uint64_t ld;
    bytes(&ld, sizeof ld);
    memcpy(in_line[AUX] + 8, &ld, sizeof ld);
    store_word(in_line[AUX], 0, (uint64_t)seq << 32 | 1);
}

/* the peer rings the cancel doorbell (cancel.c's bell: id, index, seq) */
static void peer_bell(void)
{
    struct { uint64_t id; uint32_t mai, seq; } b;
    bytes(&b, sizeof b);
    uint8_t *l = in_line[NIDX - 1];
    memcpy(l + 8, (uint8_t *)&b + 8, sizeof b - 8);
    store_word(l, 0, b.id);
}

/* Once the input is spent the peer is a correct one where we could wait
 * for it: it answers the last cancel request we rang for (cancel.c) with
 * its consent, whatever its fuzzed self did to the header before, and
 * ends the matrix receive we block in with an error record (a sender
 * that failed to write), unless its record is there. */
static void peer_honest(void)
{
    struct { uint64_t id; uint32_t mai, seq; } b;
    memcpy(&b, out_line[NIDX - 1], sizeof b);
    if (b.id && b.mai < NUSER) {
        memcpy(in_line[b.mai] + FMPL_DATA_OFF + 8, &b.id, sizeof b.id);
        store_word(in_line[b.mai], FMPL_DATA_OFF,
                   fmpl_data_word(b.seq, FMPL_DST_CANCELLED, 0, 0));
    }
    /* the matrix receive we block in: a record that ends it */
    uint64_t d = *(uint64_t *)(void *)(in_line[MXIDX] + FMPL_DATA_OFF);
    unsigned dst = (unsigned)(d >> 16) & 0xff;
    if (mx_wait_seq && ((uint32_t)(d >> 32) != mx_wait_seq || dst == FMPL_DST_CANCELLED ||
                        dst == FMPL_DST_SPLIT)) {
        int32_t e = FMPL_ERR_SYSTEM;
        memcpy(in_line[MXIDX] + FMPL_DATA_OFF + 8, &e, sizeof e);
        store_word(in_line[MXIDX], FMPL_DATA_OFF,
                   fmpl_data_word(mx_wait_seq, FMPL_DST_ERROR, 0, 0));
    }
}

/* one thing the peer does (in the transport's progress, and between our
 * calls) */
static void peer_act(void)
{
    if (spent()) {
        peer_honest();
        return;
    }
    unsigned op = byte();
    int idx = (int)(op >> 4) % (NUSER + 1);     /* the user's, or the matrices' */
    switch (op & 0xf) {
    case 0: peer_data(idx, 0); break;
    case 1: peer_data(idx, 1); break;
    case 2: peer_header(idx); break;
    case 7: peer_announce(); break;
    case 8: peer_layout(); break;
    case 3: peer_bell(); break;
    case 4: bytes(in_line[(op >> 4) % NIDX], FUZZ_SLOT); break;   /* anything */
    case 5: io_fail = 1; break;
    case 6: {                      /* it claims, reads, fails our header (its CAS) */
        uint8_t *l = out_line[idx];
        uint64_t w = *(uint64_t *)(void *)l;
        store_word(l, FMPL_HDR_OFF, (w & ~(uint64_t)0xff) | byte() % 10);
        break;
    }
    default: break;                /* the peer does nothing this time */
    }
}

/* ---- our side ------------------------------------------------------------ */

typedef struct {
    fmpl_request_t req;
    uint8_t *buf;
    int blocking;                  /* started as fmpl_recv does (not cancellable) */
} op_t;
static op_t ops[NUSER][2];         /* [index][0 send, 1 receive] */

static void release(op_t *o)
{
    free(o->buf);
    o->buf = NULL;
    o->req.kind = FMPL_REQ_NONE;
}

static void start(int idx, int recv, unsigned c, int blocking)
{
    op_t *o = &ops[idx][recv];
    if (o->buf || o->req.kind)
        return;
    size_t n = sizes[c % NSIZES];
    o->buf = malloc(n);            /* exactly n: ASan sees one byte past it */
    if (!o->buf && n)
        abort();
    if (!o->buf)
        o->buf = malloc(0);
    for (size_t i = 0; i < n; i++)
        o->buf[i] = (uint8_t)i;
    int rc;
    o->blocking = blocking;
    if (!recv)
        rc = fmpl_isend(o->buf, n, PEER, idx, &o->req);
    else if (!blocking)
        rc = fmpl_irecv(o->buf, n, PEER, idx, &o->req);
    else
        rc = fmpl_p2p_recv_start(&o->req, o->buf, n, PEER, idx,
                                 FMPL_RS_BLOCKING | FMPL_RS_WAITS);
    if (rc != FMPL_SUCCESS) {
        free(o->buf);
        o->buf = NULL;
        o->req.kind = FMPL_REQ_NONE;
    }
}

/* A matrix message on the matrices' index (what fmpl_comm_sendm and
 * fmpl_comm_recvm do on a communicator's): the receive into a block of
 * exactly the matrix's extent.  Both block, the receive until the peer's
 * record ends it (the correct peer's error record at the latest), a send
 * at most about a copy's time before it queues itself. */
static void matrix(int recv, unsigned c)
{
    fmpl_mshape_t sh;
    if (fmpl_mshape_init(&sh, &shapes[c % NSHAPES]) != FMPL_SUCCESS)
        abort();
    size_t ext = fmpl_mshape_extent(&sh);
    uint8_t *a = malloc(ext ? ext : 1);
    if (!a)
        abort();
    memset(a, 0x33, ext);
    if (recv) {
        mx_shape = sh;
        mx_wait_seq = fmpl_seq_next(fmpl_slot(PEER, MXIDX)->recv_seq);
        fmpl_mx_recv(a, &sh, PEER, MXIDX, AUX);
        mx_wait_seq = 0;
        free(a);
    } else {
        fmpl_mx_send(a, &sh, PEER, MXIDX, AUX);
        /* a queued send packed its copy: the source is ours again */
        free(a);
    }
}

static void test_all(void)
{
    for (int i = 0; i < NUSER; i++)
        for (int k = 0; k < 2; k++) {
            op_t *o = &ops[i][k];
            if (!o->buf)
                continue;
            int done = 0;
            if (fmpl_test(&o->req, &done) != FMPL_SUCCESS)
                abort();
            if (!done)
                continue;
            if (k == 0)
                fmpl_wait_isend(&o->req);
            else if (!o->blocking)
                fmpl_wait_irecv(&o->req);
            else
                fmpl_slot(PEER, i)->recv_busy = 0;   /* as fmpl_recv ends */
            if (o->req.kind != FMPL_REQ_NONE && !o->blocking)
                abort();           /* a wait of a completed request makes it inactive */
            release(o);
        }
}

static void cancel(int idx)
{
    op_t *o = &ops[idx][1];
    if (!o->buf)
        return;
    int rc = fmpl_cancel_irecv(&o->req);
    if (o->blocking) {
        if (rc != FMPL_ERR_REQUEST)
            abort();               /* a blocking receive is not cancellable */
        return;
    }
    if (rc == FMPL_SUCCESS)
        release(o);
}

/* ---- one job per input -------------------------------------------------- */

static void job_open(unsigned cfg)
{
    memset(reg, 0, sizeof reg);
    memset(&mx_shape, 0, sizeof mx_shape);
    mx_wait_seq = 0;
    io_fail = 0;
    fuzz_job_state(&fuzz_ops, &boot_ops,
                   (cfg & 1 ? FMPL_TL_CAP_CAS : 0) | (cfg & 2 ? FMPL_TL_CAP_GET : 0));
    fmpl_g.user_nidx = NUSER;
    fmpl_g.ctl_idx = NIDX - 1;
    fmpl_g.split_min = 8192;
    fmpl_g.split_max = UINT64_MAX;
    /* no inline data, the record's 24 bytes, or a transport whose
     * records run on into an extension (shm) */
    fmpl_g.inline_max = cfg & 8 ? 0 : cfg & 16 ? FMPL_EXT_MAX : FMPL_INLINE_MAX;
    if (cfg & 16)
        fmpl_g.tl.max_inline = FMPL_EXT_OFF + FMPL_EXT_MAX;
    fmpl_g.early = !(cfg & 4);
}

static void job_close(void)
{
    int busy = 0;
    for (int i = 0; i < NUSER; i++)
        for (int k = 0; k < 2; k++)
            if (ops[i][k].buf) {
                busy = 1;
                release(&ops[i][k]);
            }
    fmpl_mx_forget();              /* queued matrix sends drop their copies' keys */
    /* with nothing active, every registration must have been dropped */
    for (int i = 0; i < NREG && !busy; i++)
        if (reg[i].id)
            abort();
    fmpl_p2p_send_forget();
    fmpl_p2p_recv_forget();
    fmpl_p2p_cancel_forget();
    fuzz_job_free();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
    if (n < 1)
        return 0;
    fuzz_start(data + 1, n - 1);
    job_open(data[0]);
    for (unsigned steps = 0; !spent() && steps < 256; steps++) {
        unsigned op = byte();
        int idx = (int)(op >> 5) % NUSER;
        switch (op & 7) {
        case 0: start(idx, 0, byte(), 0); break;
        case 1: start(idx, 1, byte(), 0); break;
        case 2: start(idx, 1, byte(), 1); break;
        case 3: test_all(); break;
        case 4: cancel(idx); break;
        case 5: matrix(op & 8, byte()); break;
        default: peer_act(); break;
        }
    }
    /* the peer as a correct one from now on: what can end, ends */
    for (int i = 0; i < 4; i++) {
        test_all();
        for (int k = 0; k < NUSER; k++)
            cancel(k);
    }
    job_close();
    return 0;
}
