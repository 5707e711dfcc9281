/*
 * p2_fabric - what the emulated PEACH2 sub-cluster (FMPL_TRANSPORT=peach2)
 * does below FMPL's messages: its address window, its DMA controller's
 * puts, the checks its boards make, and the order of data and records.
 *
 *   p2_fabric -w window|order
 *
 *   window  every rank registers a buffer: its key is a place in the
 *           rank's own 32 GiB slice of the window (2^40 + rank x 2^35), and
 *           two live registrations never share a page of it.  Each rank
 *           writes its right neighbour's buffer with a contiguous put
 *           (register mode), a list put (chained descriptors) and a
 *           block-stride put (one descriptor), waits for their
 *           completions, and the neighbour finds every byte where it
 *           belongs and nothing else touched.  Refused, with FMPL_ERR_ARG:
 *           a key used for another node than its owner, a write past the
 *           region, a key whose region is gone.  Registering and dropping
 *           4096 regions of 1 MiB (4 GiB of window) reuses the slice.
 *   order   (timing model on) a message's receive ends no sooner than its
 *           bytes can have crossed the PCIe links: the record that
 *           completes it must not overtake the data (it follows them on
 *           their DMA channel); for 4 KiB, 64 KiB and 1 MiB from rank 0 to
 *           every other rank.
 */
#include "prog.h"

#include "p2p/progress.h"
#include "p2p/state.h"
#include "transport/peach2/p2.h"
#include "transport/transport.h"

#define KEY_MAI 1
#define MSG_MAI 2
#define TIME_MAI 3
#define BUF (64 * 1024)

static fmpl_tl_t *tl;

static void wait_comp(fmpl_tl_comp_t *c)
{
    fmpl_wait_t w;
    fmpl_wait_init(&w, -1);
    while (c->pending > 0)
        if (fmpl_progress() == 0)
            CHECK_RC(fmpl_wait_idle(&w), FMPL_SUCCESS);
    CHECK_RC(c->status, FMPL_SUCCESS);
}

static uint8_t byte_at(int writer, size_t i) { return (uint8_t)(writer * 37 + i * 7 + 1); }

/* where writer's three puts land in its right neighbour's buffer */
#define CONT_OFF 0
#define CONT_LEN 3000
#define IOV_OFF 4096
#define IOV_N 5
#define IOV_LEN 700
#define STR_OFF 16384
#define STR_BLK 100
#define STR_N 16
#define STR_SSTRIDE 256
#define STR_DSTRIDE 300

static int covered(size_t i)
{
    if (i < CONT_OFF + CONT_LEN)
        return 1;
    if (i >= IOV_OFF && i < IOV_OFF + (size_t)IOV_N * IOV_LEN * 2 && (i - IOV_OFF) / IOV_LEN % 2 == 0)
        return 1;
    if (i >= STR_OFF && i < STR_OFF + (size_t)STR_N * STR_DSTRIDE &&
        (i - STR_OFF) % STR_DSTRIDE < STR_BLK)
        return 1;
    return 0;
}

/* the source byte a covered destination byte came from */
static size_t source_of(size_t i)
{
    if (i >= STR_OFF && i < STR_OFF + (size_t)STR_N * STR_DSTRIDE)
        return STR_OFF + (i - STR_OFF) / STR_DSTRIDE * STR_SSTRIDE + (i - STR_OFF) % STR_DSTRIDE;
    return i;
}

static void window(void)
{
    int right = (prog_me + 1) % prog_np, left = (prog_me + prog_np - 1) % prog_np;
    uint8_t *src = prog_xmalloc(BUF), *dst = prog_xmalloc(BUF);
    for (size_t i = 0; i < BUF; i++)
        src[i] = byte_at(prog_me, i);
    memset(dst, PROG_POISON, BUF);
    fmpl_tl_key_t key, *keys = prog_xmalloc(sizeof key * (size_t)prog_np);
    CHECK_RC(fmpl_tl_mem_reg(tl, dst, BUF, &key), FMPL_SUCCESS);
    CHECK_RC(fmpl_allgather(&key, sizeof key, keys, FMPL_COMM_WORLD), FMPL_SUCCESS);
    for (int r = 0; r < prog_np; r++) {
        uint64_t slice = (1ull << 40) + ((uint64_t)r << 35);
        CHECK(keys[r].addr >= slice && keys[r].addr < slice + (1ull << 35),
              "rank %d's key 0x%llx is not in its window slice 0x%llx", r,
              (unsigned long long)keys[r].addr, (unsigned long long)slice);
    }
    /* a second registration: another place of our slice, no page shared */
    fmpl_tl_key_t k2;
    uint8_t *other = prog_xmalloc(BUF);
    CHECK_RC(fmpl_tl_mem_reg(tl, other, BUF, &k2), FMPL_SUCCESS);
    CHECK(k2.addr / 4096 > (key.addr + BUF - 1) / 4096 || (k2.addr + BUF - 1) / 4096 < key.addr / 4096,
          "two live registrations share window pages: 0x%llx and 0x%llx",
          (unsigned long long)key.addr, (unsigned long long)k2.addr);
    fmpl_tl_mem_dereg(tl, &k2);
    free(other);

    /* the three puts, their completions */
    const fmpl_tl_key_t *rk = &keys[right];
    fmpl_tl_comp_t comp = { 0, FMPL_SUCCESS };
    fmpl_enter();
    CHECK_RC(tl->ops->put(tl, right, src + CONT_OFF, CONT_LEN, rk, CONT_OFF, 0, &comp),
             FMPL_SUCCESS);
    fmpl_tl_iov_t iov[IOV_N];
    for (int i = 0; i < IOV_N; i++) {
        size_t off = IOV_OFF + (size_t)i * IOV_LEN * 2;
        iov[i] = (fmpl_tl_iov_t){ .src = src + off, .len = IOV_LEN, .roff = off };
    }
    CHECK_RC(tl->ops->put_iov(tl, right, iov, IOV_N, rk, &comp), FMPL_SUCCESS);
    CHECK_RC(tl->ops->put_strided(tl, right, src + STR_OFF, STR_BLK, STR_N, STR_SSTRIDE, rk,
                                  STR_OFF, STR_DSTRIDE, &comp), FMPL_SUCCESS);
    wait_comp(&comp);
    /* refused: the neighbour's key for another node, past the end */
    if (prog_np > 2) {
        int third = (prog_me + 2) % prog_np;
        CHECK_RC(tl->ops->put(tl, third, src, 8, rk, 0, 0, &comp), FMPL_ERR_ARG);
    }
    CHECK_RC(tl->ops->put(tl, right, src, 16, rk, BUF - 8, 0, &comp), FMPL_ERR_ARG);
    CHECK(comp.pending == 0, "a refused put is pending");
    fmpl_leave();
    CHECK_RC(fmpl_barrier(FMPL_COMM_WORLD), FMPL_SUCCESS);
    for (size_t i = 0; i < BUF; i++) {
        uint8_t want = covered(i) ? byte_at(left, source_of(i)) : PROG_POISON;
        CHECK(dst[i] == want, "byte %zu from rank %d is 0x%02x, expected 0x%02x", i, left,
              dst[i], want);
    }
    /* the region goes: its key is stale for everybody */
    fmpl_tl_mem_dereg(tl, &key);
    CHECK_RC(fmpl_barrier(FMPL_COMM_WORLD), FMPL_SUCCESS);
    fmpl_enter();
    CHECK_RC(tl->ops->put(tl, right, src, 8, rk, 0, 0, &comp), FMPL_ERR_ARG);
    fmpl_leave();

    /* the slice is reused: 4096 x 1 MiB through a 32 GiB slice... many times over */
    size_t big = (size_t)1 << 20;
    uint8_t *b = prog_xmalloc(big);
    for (int i = 0; i < 4096; i++) {
        fmpl_tl_key_t k;
        CHECK_RC(fmpl_tl_mem_reg(tl, b, big, &k), FMPL_SUCCESS);
        fmpl_tl_mem_dereg(tl, &k);
    }
    free(b);
    free(src);
    free(dst);
    free(keys);
}

/* one-way time of `n` bytes from rank 0 to `peer`, in the model */
static void order(void)
{
    CHECK(fmpl_wtime_emulated(), "needs the timing model (FMPL_TCA_MODEL unset)");
    static const size_t sizes[] = {4096, 65536, 1 << 20};
    size_t max = (size_t)1 << 20;
    uint8_t *buf = prog_xmalloc(max);
    for (int peer = 1; peer < prog_np; peer++)
        for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
            size_t n = sizes[k];
            CHECK_RC(fmpl_barrier(FMPL_COMM_WORLD), FMPL_SUCCESS);
            double t0 = 0, t1;
            if (prog_me == 0) {
                pat_fill(buf, n, k, 0, MSG_MAI);
                t0 = fmpl_wtime();
                CHECK_RC(fmpl_send(buf, n, peer, MSG_MAI), FMPL_SUCCESS);
                CHECK_RC(fmpl_send(&t0, sizeof t0, peer, TIME_MAI), FMPL_SUCCESS);
            } else if (prog_me == peer) {
                CHECK_RC(fmpl_recv(buf, n, 0, MSG_MAI), FMPL_SUCCESS);
                t1 = fmpl_wtime();
                PAT_VERIFY(buf, n, k, 0, MSG_MAI);
                CHECK_RC(fmpl_recv(&t0, sizeof t0, 0, TIME_MAI), FMPL_SUCCESS);
                /* 256-byte TLPs, 24 bytes of overhead each, 4 GB/s */
                double wire = (double)n * 280.0 / 256.0 / 4e9;
                printf("p2_fabric: %zu bytes to rank %d in %.3f us (the wire alone: %.3f us)\n",
                       n, peer, (t1 - t0) * 1e6, wire * 1e6);
                CHECK(t1 - t0 >= wire, "%zu bytes reached rank %d %.3f us after the send: "
                      "sooner than their %.3f us on the wire (the record overtook the data)",
                      n, peer, (t1 - t0) * 1e6, wire * 1e6);
            }
        }
    free(buf);
}

int main(int argc, char **argv)
{
    const char *what = "window";
    int opt;
    while ((opt = getopt(argc, argv, "w:")) != -1)
        if (opt == 'w')
            what = optarg;
    prog_init("p2_fabric", 8);
    tl = &fmpl_g.tl;
    CHECK(strcmp(fmpl_transport(), "peach2") == 0, "runs on peach2, not %s", fmpl_transport());
    CHECK(prog_np >= 2, "needs 2 ranks or more");
    if (strcmp(what, "window") == 0)
        window();
    else if (strcmp(what, "order") == 0)
        order();
    else
        CHECK(0, "-w window|order, not %s", what);
    return prog_finish();
}
