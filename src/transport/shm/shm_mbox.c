/*
 * shm_mbox.c - mailbox lines: the matching area and completion flags.
 *
 * A slot (writer w, reader r, index i) lives in w's segment; r polls it
 * with plain loads.  A record is written body first, then its first 8-byte
 * word with release order, so a reader that acquires the new word sees
 * the body: one cache-line transfer carries a header or a small message,
 * and the lines after it a longer one.
 */
#include <stdint.h>
#include <string.h>

#include "fmpl.h"
#include "transport/shm/shm.h"

volatile void *fmpl_shm_mbox_in(fmpl_tl_t *tl, int peer, int idx)
{
    /* A peer we cannot map (gone) shows an empty line, which never
     * matches: the wait on it ends by its liveness check. */
    static const uint8_t nothing[FMPL_TL_LINE + FMPL_SHM_EXT_MAX]
        __attribute__((aligned(FMPL_TL_LINE)));
    fmpl_shm_t *s = fmpl_shm_of(tl);
    if (fmpl_shm_mapped(s, peer) != FMPL_SUCCESS)
        return (volatile void *)(uintptr_t)nothing;
    return fmpl_shm_line(s, peer, tl->rank, idx);
}

int fmpl_shm_notify(fmpl_tl_t *tl, int peer, int idx, unsigned off,
                    const void *rec, unsigned len, unsigned flags, fmpl_tl_comp_t *comp)
{
    fmpl_shm_t *s = fmpl_shm_of(tl);
    if (len < 8 || len > FMPL_SHM_REC_MAX || off + len > s->layout.slot)
        return FMPL_ERR_ARG;
    /* Behind FIFO data still on its way, the record must queue in the FIFO
     * too, or the reader could see the flag before the data. */
    if (!(flags & FMPL_TL_NOTIFY_UNORDERED) && peer != tl->rank &&
        fmpl_shm_fifo_busy(s, peer))
        return fmpl_shm_fifo_notify(s, peer, idx, off, rec, len, comp);
    fmpl_tl_line_write(fmpl_shm_line(s, tl->rank, peer, idx), off, rec, len);
    return FMPL_SUCCESS;
}

/* CAS on a record word: outgoing = the line we write for `peer`, else the
 * line `peer` writes for us.  Both are plain shared memory here. */
int fmpl_shm_mbox_cas(fmpl_tl_t *tl, int peer, int idx, unsigned off, int outgoing,
                      uint64_t expect, uint64_t desired, uint64_t *old)
{
    fmpl_shm_t *s = fmpl_shm_of(tl);
    int rc = outgoing ? FMPL_SUCCESS : fmpl_shm_mapped(s, peer);
    if (rc != FMPL_SUCCESS)
        return rc;
    uint8_t *line = outgoing ? fmpl_shm_line(s, tl->rank, peer, idx)
                             : fmpl_shm_line(s, peer, tl->rank, idx);
    return fmpl_tl_word_cas(line + off, expect, desired, old);
}
