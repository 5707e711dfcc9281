/*
 * fuzz_sig - libFuzzer harness for the collective signals a peer writes
 * (coll/signal.c): the record word in either half of a communicator's
 * signal line (sequence number, eager bit, length) and the bytes behind
 * it, the eager area's slots, and the acknowledgements of flow-controlled
 * signals.  Barriers, small allreduces and allgathers and small
 * broadcasts are made of these.
 *
 * A communicator of two members.  We are member 0 and run FMPL's real
 * signal code: waits for a signal of a given length (the length the
 * collective expects) into a buffer of exactly that size, and sends of
 * both channels (a flow-controlled send first waits for the
 * acknowledgement of the one two before).  Member 1 is the fuzzer: in
 * every progress call (so inside every wait) and between our calls it
 * writes records around the sequence numbers we expect, raw lines,
 * acknowledgements, or bytes into the eager slots it may write.  A record
 * that no correct peer writes must end the wait with FMPL_ERR_INTERNAL:
 * never a read past the line or the eager slot (AddressSanitizer), never
 * a copy of more than the receive's size.  Once the input is spent the
 * peer is a correct one, so every wait ends.
 *
 * Input: one byte of configuration (eager area or none), then operations
 * of one byte and their arguments.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fmpl.h"
#include "coll/coll.h"

#define NIDX   (FMPL_CI_ACK + 1)   /* the communicator's lines we use */
#define EAGER  256                 /* bytes per eager slot */
#define AREA   (2 * 2 * 2 * EAGER) /* [member][channel][slot] */

static const unsigned lens[] = { 0, 1, 8, 23, 24, 25, 100, EAGER - 1, EAGER, EAGER + 1 };
#define NLENS (sizeof lens / sizeof lens[0])

#include "fuzz_peer.h"

/* ---- the fake transport: lines only -------------------------------------- */

static volatile uint8_t sink;

static int f_put(fmpl_tl_t *tl, int peer, const void *src, size_t len,
                 const fmpl_tl_key_t *key, uint64_t roff, unsigned flags, fmpl_tl_comp_t *comp)
{
    (void)tl; (void)key; (void)flags; (void)comp;
    check_peer_idx(peer, 0);
    /* an eager signal goes into the peer's slot for us: inside its area */
    if (len > EAGER || roff + len > AREA)
        abort();
    uint8_t x = 0;
    for (size_t i = 0; i < len; i++)
        x ^= ((const uint8_t *)src)[i];
    sink = x;
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

/* what the signal code uses; the rest of the table is never called */
static const fmpl_tl_ops_t fuzz_ops = {
    .size = sizeof(fmpl_tl_ops_t), .name = "fuzz",
    .put = f_put, .mbox_in = f_mbox_in, .notify = f_notify,
    .put_notify = fmpl_tl_put_notify_by_parts,
    .progress = f_progress, .peer_ok = f_peer_ok,
};

static int b_dead(fmpl_boot_t *b) { (void)b; return -1; }
static const struct fmpl_boot_ops boot_ops = { .name = "fuzz", .dead_rank = b_dead };

/* ---- the communicator ----------------------------------------------------- */

static int ranks[2] = { 0, PEER };
static fmpl_tl_key_t keys[2];
static fmpl_comm_rec_t comm;

/* what we wait for: the honest peer ends it */
static int wait_chan = -1;
static unsigned wait_len;

/* ---- the peer -------------------------------------------------------------- */

static int sig_idx(int chan) { return fmpl_cidx(&comm, chan ? FMPL_CI_FLOW : FMPL_CI_SIG); }

/* a signal on channel chan: near the one we expect, any length, eager or
 * not, and up to 24 bytes of record */
static void peer_signal(int chan)
{
    int idx = sig_idx(chan);
    uint32_t seq = near_seq(fmpl_seq_next(fmpl_slot(PEER, idx)->recv_seq));
    unsigned c = byte();
    uint64_t len = c & 0x80 ? lens[c % NLENS] : (c & 0x40 ? byte() | byte() << 8 : wait_len);
    uint64_t eager = byte() & 1 ? 1ull << 31 : 0;
    unsigned off = (seq & 1) * 32;
    bytes(in_line[idx] + off + 8, 24);
    store_word(in_line[idx], off, (uint64_t)seq << 32 | eager | (len & 0x7fffffffu));
}

/* a correct peer: the signal we wait for, and the acknowledgement of
 * every flow-controlled signal we sent */
static void peer_honest(void)
{
    uint64_t ack = fmpl_slot(PEER, fmpl_cidx(&comm, FMPL_CI_FLOW))->send_seq;
    store_word(in_line[fmpl_cidx(&comm, FMPL_CI_ACK)], 0, ack);
    if (wait_chan < 0)
        return;
    int idx = sig_idx(wait_chan);
    uint32_t seq = fmpl_seq_next(fmpl_slot(PEER, idx)->recv_seq);
    uint64_t eager = wait_len > FMPL_SIG_MAX ? 1ull << 31 : 0;
    unsigned off = (seq & 1) * 32;
    memset(in_line[idx] + off + 8, 0x11, 24);
    store_word(in_line[idx], off, (uint64_t)seq << 32 | eager | wait_len);
}

static void peer_act(void)
{
    if (spent()) {
        peer_honest();
        return;
    }
    unsigned op = byte();
    switch (op & 7) {
    case 0: peer_signal(0); break;
    case 1: peer_signal(1); break;
    case 2: {                      /* an acknowledgement, near our sends */
        uint32_t a = near_seq(fmpl_slot(PEER, fmpl_cidx(&comm, FMPL_CI_FLOW))->send_seq);
        store_word(in_line[fmpl_cidx(&comm, FMPL_CI_ACK)], 0, a);
        break;
    }
    case 3: bytes(in_line[(op >> 3) % NIDX], FUZZ_SLOT); break;   /* anything */
    case 4:                        /* its bytes in its eager slots for us */
        if (comm.eager)
            bytes(comm.eager + (size_t)PEER * 2 * 2 * EAGER, 2 * 2 * EAGER);
        break;
    default: break;
    }
}

/* ---- our side --------------------------------------------------------------- */

/* wait for a signal of len bytes into a buffer of exactly len */
static void recv_sig(int chan, unsigned len)
{
    uint8_t *buf = malloc(len ? len : 1);
    if (!buf)
        abort();
    wait_chan = chan;
    wait_len = len;
    if (!fmpl_sig_fits(&comm, len)) {
        free(buf);
        wait_chan = -1;
        return;                    /* the collectives would not use a signal */
    }
    int rc = fmpl_sig_wait(&comm, chan, PEER, buf, len);
    if (rc != FMPL_SUCCESS && rc != FMPL_ERR_INTERNAL)
        abort();
    if (rc == FMPL_ERR_INTERNAL)   /* the collective ends there: as a new one */
        fmpl_sig_done(&comm, chan, PEER);
    wait_chan = -1;
    free(buf);
}

static void send_sig(int chan, unsigned len)
{
    uint8_t *data = malloc(len ? len : 1);
    if (!data)
        abort();
    memset(data, 0x22, len);
    if (fmpl_sig_fits(&comm, len)) {
        int rc = fmpl_sig_send(&comm, chan, PEER, data, len);
        if (rc != FMPL_SUCCESS)
            abort();
    }
    free(data);
}

/* ---- one job per input -------------------------------------------------------- */

static void job_open(unsigned cfg)
{
    wait_chan = -1;
    fuzz_job_state(&fuzz_ops, &boot_ops, 0);
    /* with an eager area (as fmpl_sig_eager leaves it) or without */
    comm = (fmpl_comm_rec_t){ .used = 1, .size = 2, .rank = 0, .ranks = ranks, .idx = 0,
                              .eager_state = cfg & 1 ? 1 : -1, .eager_max = EAGER,
                              .eager_keys = keys };
    if (cfg & 1) {
        comm.eager = malloc(AREA);  /* exactly: ASan sees one byte past it */
        if (!comm.eager)
            abort();
        memset(comm.eager, 0, AREA);
    }
}

static void job_close(void)
{
    free(comm.eager);
    comm.eager = NULL;
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
        int chan = (op >> 3) & 1;
        switch (op & 3) {
        case 0: recv_sig(chan, lens[byte() % NLENS]); break;
        case 1: send_sig(chan, lens[byte() % NLENS]); break;
        default: peer_act(); break;
        }
    }
    job_close();
    return 0;
}
