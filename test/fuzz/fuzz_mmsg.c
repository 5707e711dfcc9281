/*
 * fuzz_mmsg - libFuzzer harness for the mailbox messages a peer sends
 * (transport/mbox_msg.c: libfabric's and InfiniBand verbs' mailbox).
 *
 * Input: one byte choosing who the network says sent it (a rank of the
 * 4-rank job, "cannot say", a stranger, or a rank outside the job), then
 * the message as it came off the wire, in a buffer of exactly its length
 * (AddressSanitizer catches a read past the message).  Applied to the
 * mailbox of rank 1 (a heap block at most a line longer than the mailbox:
 * a write past it is caught), whose slots have an extension of EXT bytes: a
 * record may run on past the line, never past its slot.  A CAS request is answered through the
 * transport's answer hook, which checks what it is asked to send.
 * Whatever a peer sends may at worst be dropped: no crash, no access
 * outside the message or the mailbox, no answer to a rank outside the job.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "transport/mbox_msg.h"

#define SIZE 4
#define NIDX 16
#define EXT  256

/* mbox_msg.c reports drops through the library's log; not under test */
void fmpl_log_err(const char *fmt, ...) { (void)fmt; }

static int answer(fmpl_mmsg_box_t *b, int peer, const fmpl_mmsg_t *m, size_t len)
{
    if (peer < 0 || peer >= b->size || len > sizeof *m || m->kind != FMPL_MMSG_ANSWER ||
        m->writer != b->rank)
        abort();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
    static fmpl_mmsg_box_t box;
    static int ready;
    if (!ready) {
        if (fmpl_mmsg_open(&box, 1, SIZE, NIDX, EXT) != 0 || box.slot != 64 + EXT)
            abort();
        box.answer = answer;
        ready = 1;
    }
    if (n < 1 || n - 1 > FMPL_MMSG_HDR + box.rec_max + 8)
        return 0;
    static const int who[] = { 0, 1, 2, 3, FMPL_MMSG_FROM_ANY, FMPL_MMSG_FROM_STRANGER, 4, -7 };
    int from = who[data[0] % (sizeof who / sizeof who[0])];
    size_t len = n - 1;
    /* the apply reads the header's fields only after checking the
     * length: a message shorter than the header has nothing to read */
    void *msg = malloc(len ? len : 1);
    if (!msg)
        return 0;
    memcpy(msg, data + 1, len);
    if (len >= FMPL_MMSG_HDR || len == 0)
        fmpl_mmsg_apply(&box, from, msg, len);
    free(msg);
    return 0;
}
