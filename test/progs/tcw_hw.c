/*
 * tcw_hw - the emulated SR8000's hardware barrier and broadcast
 * (FMPL_TRANSPORT=tcw; Tatebe et al. 2002, 3.2-3.3).
 *
 *   tcw_hw -e hw|none
 *     hw    the conditions hold (test/check_tcw.c knows from the job's
 *           shape): fmpl_hbcast must work on fmpl_alloc_mem buffers at the
 *           same offset on every node, and be refused - FMPL_ERR_UNSUPPORTED
 *           on every rank, the same verdict everywhere - for a malloc buffer,
 *           for buffers at different offsets and for buffers in areas with
 *           different ids;
 *     none  a static condition fails: fmpl_hbcast is refused at once.
 * Both: fmpl_barrier(FMPL_COMM_WORLD) is a barrier in the emulated time
 * (nobody leaves before the last one entered, whatever the hardware), and
 * the world still works after every refusal.  The messages naming the
 * failed condition are the driver's to read (stderr).
 */
#include "prog.h"

#define SYNC_MAI 1

static void barrier_check(void)
{
    for (int late = 0; late < prog_np; late++) {
        CHECK_RC(fmpl_barrier(FMPL_COMM_WORLD), FMPL_SUCCESS);
        if (prog_me == late)
            prog_sleep(0.001);     /* emulated: computes 1 ms */
        double in = fmpl_wtime();
        CHECK_RC(fmpl_barrier(FMPL_COMM_WORLD), FMPL_SUCCESS);
        double out = fmpl_wtime();
        /* max entry and min exit over every rank */
        double v[2] = { in, 1e9 - out };
        CHECK_RC(fmpl_allreduce(v, 2, fmpl_dmax, FMPL_COMM_WORLD, NULL), FMPL_SUCCESS);
        double last_in = v[0], first_out = 1e9 - v[1];
        CHECK(first_out >= last_in, "someone left the barrier %.3f us before rank %d entered it "
              "(emulated time)", (last_in - first_out) * 1e6, late);
    }
}

static void hbcast_ok(int root, size_t size, unsigned char *b)
{
    uint64_t seed = 0x4bca57ull + size * 31 + (uint64_t)root;
    if (prog_me == root)
        pat_fill(b, size, seed, root, 0);
    else
        memset(b, 0, size);
    CHECK_RC(fmpl_hbcast(b, size, root), FMPL_SUCCESS);
    PAT_VERIFY(b, size, seed, root, 0);
}

int main(int argc, char **argv)
{
    const char *expect = "hw";
    struct prog_opt opts[] = {
        {'e', OPT_STR, &expect, "hw or none"},
    };
    prog_name = "tcw_hw";
    prog_parse(argc, argv, opts, 1);
    prog_init("tcw_hw", 4);
    CHECK(strcmp(fmpl_transport(), "tcw") == 0, "runs on tcw, not %s", fmpl_transport());
    int hw = strcmp(expect, "hw") == 0;

    barrier_check();

    size_t big = 300000;
    unsigned char *a = fmpl_alloc_mem(big), *m = prog_xmalloc(big);
    CHECK(a != NULL, "fmpl_alloc_mem");
    if (hw && prog_np > 1) {
        static const size_t sizes[] = {1, 100, 8192, 65536 + 7, 300000};
        for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
            hbcast_ok(0, sizes[k], a);
            hbcast_ok(prog_np - 1, sizes[k], a);
        }
        /* the same offset, inside the area */
        hbcast_ok(prog_np / 2, 1000, a + 4096);
        /* condition (4) at run time: every rank says no, nobody hangs */
        CHECK_RC(fmpl_hbcast(m, 1000, 0), FMPL_ERR_UNSUPPORTED);
        CHECK_RC(fmpl_hbcast(a + 8 * prog_me, 1000, prog_np - 1), FMPL_ERR_UNSUPPORTED);
        /* another area id on rank 0: the same offset is not the same place */
        unsigned char *extra = NULL;
        if (prog_me == 0)
            extra = fmpl_alloc_mem(100);
        unsigned char *b = fmpl_alloc_mem(4096);
        CHECK(b != NULL, "fmpl_alloc_mem");
        CHECK_RC(fmpl_hbcast(b, 100, 0), FMPL_ERR_UNSUPPORTED);
        CHECK_RC(fmpl_free_mem(b), FMPL_SUCCESS);
        if (extra)
            CHECK_RC(fmpl_free_mem(extra), FMPL_SUCCESS);
        /* and after all that it works again */
        hbcast_ok(0, 5000, a);
    } else if (prog_np > 1) {
        CHECK_RC(fmpl_hbcast(a, 1000, 0), FMPL_ERR_UNSUPPORTED);
        CHECK_RC(fmpl_hbcast(m, 1000, prog_np - 1), FMPL_ERR_UNSUPPORTED);
    }
    /* nothing to send: always fine */
    CHECK_RC(fmpl_hbcast(a, 0, 0), FMPL_SUCCESS);
    /* the world still works */
    int v = prog_me;
    CHECK_RC(fmpl_allreduce(&v, 1, fmpl_isum, FMPL_COMM_WORLD, NULL), FMPL_SUCCESS);
    CHECK(v == prog_np * (prog_np - 1) / 2, "allreduce after the hbcasts: %d", v);
    barrier_check();
    CHECK_RC(fmpl_free_mem(a), FMPL_SUCCESS);
    free(m);
    return prog_finish();
}
