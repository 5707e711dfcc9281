/*
 * fuzz_peer.h - what the harnesses that act out a peer's writes into our
 * mailbox (fuzz_p2p, fuzz_sig) share: a job of two ranks, we are rank 0
 * and the peer (PEER) is the fuzzer; the mailbox lines it writes and we
 * read, the lines we write into its mailbox, the fake transport's line
 * operations with the ops table's contract (a notify stays inside one
 * line and the transport's inline size, every line is its own heap block
 * so AddressSanitizer sees a read past one), sequence numbers near the
 * ones we expect, and FMPL's state for one input.
 *
 * The includer defines NIDX (the indices it uses) first, and includes
 * fuzz_input.h.
 */
#ifndef FMPL_FUZZ_PEER_H
#define FMPL_FUZZ_PEER_H

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "p2p/state.h"
#include "p2p/p2p.h"
#include "transport/transport.h"
#include "fuzz_input.h"

#ifndef NIDX
#error "define NIDX before including fuzz_peer.h"
#endif

#define PEER 1
/* a mailbox slot: the line, and the extension a long record runs on into
 * (the harness's transport has one when its max_inline says so) */
#define FUZZ_SLOT (FMPL_DATA_OFF + FMPL_EXT_OFF + FMPL_EXT_MAX)

static uint8_t *in_line[NIDX];     /* the peer writes these, we read */
static uint8_t *out_line[NIDX];    /* we write these (the peer's mailbox) */
static uint8_t *self_line[NIDX];   /* our lines to ourselves: we talk only to the peer */

static void check_peer_idx(int peer, int idx)
{
    if (peer != PEER || idx < 0 || idx >= NIDX)
        abort();
}

static volatile void *f_mbox_in(fmpl_tl_t *tl, int peer, int idx)
{
    (void)tl;
    if (peer == 0 && idx >= 0 && idx < NIDX)
        return self_line[idx];     /* our own lines: nobody writes them */
    check_peer_idx(peer, idx);
    return in_line[idx];
}

static int f_notify(fmpl_tl_t *tl, int peer, int idx, unsigned off, const void *rec,
                    unsigned len, unsigned flags, fmpl_tl_comp_t *comp)
{
    (void)flags; (void)comp;
    check_peer_idx(peer, idx);
    if (len < 8 || len > tl->max_inline || off + len > FUZZ_SLOT || off % 8)
        abort();
    memcpy(out_line[idx] + off, rec, len);
    return FMPL_SUCCESS;
}

/* a sequence number near the one we expect: the fuzzer reaches the
 * matching states, and the ones around them */
static uint32_t near_seq(uint32_t expect)
{
    unsigned c = byte();
    switch (c % 5) {
    case 0: return expect;
    case 1: return expect - 1;
    case 2: return expect + 1;
    case 3: return 0;
    default: { uint32_t s; bytes(&s, sizeof s); return s; }
    }
}

/* a record word, published as a peer's store is */
static void store_word(uint8_t *line, unsigned off, uint64_t w)
{
    atomic_store_explicit((_Atomic uint64_t *)(void *)(line + off), w, memory_order_release);
}

/* FMPL's state for one input: a job of two that nobody leaves, on the
 * harness's transport, with every line zero (the lines are allocated
 * once, so that libFuzzer's leak check sees nothing). */
static void fuzz_job_state(const fmpl_tl_ops_t *ops, const struct fmpl_boot_ops *boot,
                           unsigned caps)
{
    static int once;
    if (!once) {
        for (int i = 0; i < NIDX; i++) {
            in_line[i] = malloc(FUZZ_SLOT);
            out_line[i] = malloc(FUZZ_SLOT);
            self_line[i] = calloc(1, FUZZ_SLOT);
            if (!in_line[i] || !out_line[i] || !self_line[i])
                abort();
        }
        once = 1;
    }
    for (int i = 0; i < NIDX; i++) {
        memset(in_line[i], 0, FUZZ_SLOT);
        memset(out_line[i], 0, FUZZ_SLOT);
    }
    fmpl_g = (fmpl_state_t){ 0 };
    fmpl_g.boot = (fmpl_boot_t){ .rank = 0, .size = 2, .jobid = "fuzz", .ops = boot };
    fmpl_log_set_boot(&fmpl_g.boot);
    fmpl_g.nidx = NIDX;
    fmpl_g.slots = calloc(2 * NIDX, sizeof *fmpl_g.slots);
    if (!fmpl_g.slots)
        abort();
    fmpl_g.tl = (fmpl_tl_t){ .ops = ops, .rank = 0, .size = 2, .nidx = NIDX,
                             .boot = &fmpl_g.boot, .max_inline = 32, .caps = caps };
    fmpl_g.initialized = 1;
}

static void fuzz_job_free(void)
{
    free(fmpl_g.slots);
    fmpl_g.slots = NULL;
    fmpl_g.initialized = 0;
}

#endif
