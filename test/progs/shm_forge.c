/*
 * shm_forge - a peer's malformed records on shared memory: refused, and
 * nothing written outside what they may name.
 *
 * Two ranks on the shm transport.  Rank 1 plays a peer whose memory went
 * wrong (or a hostile one):
 *   1. a receive header whose key is a 4 KiB fmpl_alloc_mem region of
 *      rank 1 but whose size says 1 MiB: rank 0's send must fail with an
 *      error instead of copying 64 KiB through its mapping of the region,
 *      past its end;
 *   2. FIFO chunks to rank 0 that name a line far outside rank 0's
 *      lines, a record longer than a line, data running past the FIFO's
 *      end, data for a region of rank 0 at an offset past its end, and
 *      skips (a stream's way back to the FIFO's start) of nothing or past
 *      the end:
 *      rank 0 drops them all and goes on (a later honest exchange works);
 *   3. a collective signal whose record claims 1 KiB inline (a record
 *      holds 24 bytes; 1 KiB signals go through the eager area): rank 0's
 *      allgather must fail with FMPL_ERR_INTERNAL, not read 1 KiB of the
 *      lines after the record.
 * Both run inside the library (test programs link libfmpl.a and may use
 * its insides); before the bounds were checked, (1) crashed rank 0 or
 * wrote over whatever followed the mapping, (2) wrote wherever the chunk
 * said, and (3) returned success with other lines' bytes.
 */
#include "prog.h"

#include "coll/coll.h"
#include "p2p/state.h"
#include "p2p/p2p.h"
#include "transport/shm/shm.h"

#define IDX 3

int main(int argc, char **argv)
{
    prog_parse(argc, argv, NULL, 0);
    prog_init("shm_forge", 8);
    CHECK(fmpl_size() == 2, "needs 2 ranks, has %d", fmpl_size());
    fmpl_tl_t *tl = &fmpl_g.tl;
    CHECK(strcmp(fmpl_transport(), "shm") == 0, "needs the shm transport, runs %s",
          fmpl_transport());
    fmpl_shm_t *s = fmpl_shm_of(tl);

    /* rank 0's region, which a chunk of (2) aims past */
    uint8_t *r0 = prog_me == 0 ? fmpl_alloc_mem(4096) : NULL;
    CHECK(prog_me != 0 || r0, "fmpl_alloc_mem(4096) failed");
    /* 1. an oversized header */
    if (prog_me == 1) {
        uint8_t *r = fmpl_alloc_mem(4096);
        CHECK(r, "fmpl_alloc_mem(4096) failed");
        memset(r, 0x11, 4096);
        fmpl_hdr_rec_t h = { .word = fmpl_hdr_word(1, FMPL_HDR_POSTED), .size = 1 << 20 };
        CHECK_RC(fmpl_tl_mem_reg(tl, r, 4096, &h.key), FMPL_SUCCESS);
        CHECK((h.key.kind & 0xff) == FMPL_SHM_KEY_ALLOC, "not an fmpl_alloc_mem key");
        CHECK_RC(fmpl_tl_notify(tl, 0, IDX, FMPL_HDR_OFF, &h, sizeof h,
                                FMPL_TL_NOTIFY_UNORDERED, NULL), FMPL_SUCCESS);
        /* the sender's answer: an error record, not a message.  A split
         * send (the default from 8 KiB) first says where our half is to
         * be read, then finds its own half does not fit: the error record
         * follows with the same sequence number */
        volatile uint8_t *line = fmpl_tl_mbox_in(tl, 0, IDX);
        double t0 = fmpl_wtime();
        uint64_t w;
        while ((uint32_t)((w = fmpl_line_word(line, FMPL_DATA_OFF)) >> 32) != 1 ||
               ((w >> 16) & 0xff) == FMPL_DST_SPLIT) {
            tl->ops->progress(tl);
            CHECK(fmpl_wtime() - t0 < 30, "rank 0 never answered the header (%#llx)",
                  (unsigned long long)w);
        }
        CHECK(((w >> 16) & 0xff) == FMPL_DST_ERROR, "rank 0 answered %#llx, not an error",
              (unsigned long long)w);
        /* the region itself: rank 0 wrote nothing into it either */
        for (int i = 0; i < 4096; i++)
            CHECK(r[i] == 0x11, "byte %d of the region was written", i);
    } else {
        static uint8_t buf[64 * 1024];
        memset(buf, 0x22, sizeof buf);
        int rc = fmpl_send(buf, sizeof buf, 1, IDX);
        CHECK(rc != FMPL_SUCCESS, "a send into a 4 KiB region declared 1 MiB succeeded");
        printf("shm_forge: the send into the oversized header: %s\n", fmpl_error_name(rc));
    }
    prog_barrier(0);

    /* 2. malformed FIFO chunks, then an honest message behind them */
    if (prog_me == 1) {
        CHECK_RC(fmpl_shm_contact(s, 0), FMPL_SUCCESS);   /* as before a first chunk */
        fmpl_shm_fifo_t f = fmpl_shm_fifo(s, 1, 0);
        fmpl_shm_peer_t *p = &s->peers[0];
        uint64_t rec = fmpl_hdr_word(7, FMPL_HDR_POSTED);
        struct { uint32_t kind, len; uint64_t addr; uint32_t koff, kid; } bad[] = {
            { FMPL_SHM_CH_NOTIFY, 8, (uint64_t)1 << 40, 0, 1 },   /* a line far away */
            { FMPL_SHM_CH_NOTIFY, 8, (uint64_t)-1, 0, 1 },        /* before the lines */
            { FMPL_SHM_CH_NOTIFY, 32, IDX, 48, 1 },               /* past the line's end */
            { FMPL_SHM_CH_NOTIFY, 4096, IDX, 0, 1 },              /* longer than a record */
            { FMPL_SHM_CH_DATA, 1u << 30, 0, 0, 1 },              /* past the FIFO's end */
            { FMPL_SHM_CH_DATA, 64, 4096 - 8, FMPL_SHM_KEY_ALLOC, 1 }, /* past rank 0's region */
            { FMPL_SHM_CH_SKIP, 0, 0, 0, 0 },                     /* a skip of nothing */
            { FMPL_SHM_CH_SKIP, 0, 0, 0, 1u << 30 },              /* a skip past the end */
            { 77, 8, 0, 0, 1 },                                   /* no such kind */
        };
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            while (p->produced - atomic_load_explicit(&fmpl_shm_ack(s, 0, 1)->consumed,
                                                      memory_order_acquire) >=
                   s->layout.fifo_nchunk)
                tl->ops->progress(tl);
            fmpl_shm_chunk_t *d = &f.desc[p->produced % s->layout.fifo_nchunk];
            d->kind = bad[i].kind;
            d->len = bad[i].len;
            d->addr = bad[i].addr;
            d->key_kind = bad[i].koff;   /* NOTIFY: the offset; DATA: the key's kind */
            d->key_id = bad[i].kid;        /* DATA: rank 0's first fmpl_alloc_mem region */
            memcpy(d->rec, &rec, sizeof rec);
            atomic_store_explicit(&d->seq, p->produced + 1, memory_order_release);
            p->produced++;
        }
        uint64_t v = 0x686f6e657374ull;
        CHECK_RC(fmpl_send(&v, sizeof v, 0, IDX + 1), FMPL_SUCCESS);
    } else {
        uint64_t v = 0;
        CHECK_RC(fmpl_recv(&v, sizeof v, 1, IDX + 1), FMPL_SUCCESS);
        CHECK(v == 0x686f6e657374ull, "the honest message after the bad chunks: %#llx",
              (unsigned long long)v);
        printf("shm_forge: malformed FIFO chunks dropped, the next message intact\n");
        fmpl_free_mem(r0);
    }
    prog_barrier(0);

    /* 3. a signal too long for its record, on a communicator of its own
     * (its signal counters are out of step afterwards; it is left alone) */
    fmpl_comm_t c;
    CHECK_RC(fmpl_comm_split(FMPL_COMM_WORLD, 0, prog_me, &c), FMPL_SUCCESS);
    static uint8_t mine[1024], all[2 * 1024];
    memset(mine, prog_me + 1, sizeof mine);
    /* an honest one first: both set up the eager area (collectively) */
    CHECK_RC(fmpl_allgather(mine, sizeof mine, all, c), FMPL_SUCCESS);
    if (prog_me == 1) {
        fmpl_comm_rec_t *cr = fmpl_comm_get(c);
        int idx = fmpl_cidx(cr, FMPL_CI_SIG), w0 = cr->ranks[0];
        fmpl_slot_t *sl = fmpl_slot(w0, idx);
        uint32_t seq = sl->send_seq = fmpl_seq_next(sl->send_seq);
        uint64_t word = (uint64_t)seq << 32 | sizeof mine;   /* no eager bit */
        CHECK_RC(fmpl_tl_notify(tl, w0, idx, (seq & 1) * 32, &word, sizeof word,
                                FMPL_TL_NOTIFY_UNORDERED, NULL), FMPL_SUCCESS);
        uint64_t v;
        CHECK_RC(fmpl_recv(&v, sizeof v, 0, IDX + 2), FMPL_SUCCESS);   /* seen */
    } else {
        int rc = fmpl_allgather(mine, sizeof mine, all, c);
        CHECK(rc == FMPL_ERR_INTERNAL, "an allgather over a 1 KiB signal claimed inline: %s",
              fmpl_error_name(rc));
        printf("shm_forge: a signal longer than its record: %s\n", fmpl_error_name(rc));
        uint64_t v = 1;
        CHECK_RC(fmpl_send(&v, sizeof v, 1, IDX + 2), FMPL_SUCCESS);
    }
    prog_barrier(0);
    return prog_finish();
}
