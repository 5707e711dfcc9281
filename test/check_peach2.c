/*
 * check_peach2 - what only the emulated PEACH2 sub-cluster
 * (FMPL_TRANSPORT=peach2) has: its rings, routing registers and address
 * window, its DMA controller, its virtual time, its settings.  (The
 * point-to-point, collective, BLACS and error suites run on it too:
 * test/run_tests.sh runs them with FMPL_TRANSPORT=peach2, with the timing
 * model and without.)
 *
 *   route        in this process: the boards' registers of every
 *                sub-cluster of 1 to 16 nodes, walked from every node to
 *                every slice of the window, reach the slice's owner in the
 *                hops the two rings allow (8 nodes: at most 3; 16: 5), and
 *                an address outside the window is claimed by no port
 *   window       test/progs/p2_fabric -w window: keys are places in their
 *                owner's slice; contiguous, list and block-stride puts land
 *                where they belong; a key used for another node, a write
 *                past its region, a stale key are refused
 *   order        test/progs/p2_fabric -w order: no receive ends before its
 *                bytes can have crossed the links (the record follows the
 *                data on its DMA channel)
 *   determinism  bench/tca_dma: the same PIO and DMA figures on 2 ranks,
 *                again, and on 8
 *   paper        bench/tca -q -k: the point-to-point figures of both papers
 *                within 10 % (the hybrid collectives are counted apart)
 *   settings     bad FMPL_TCA_* values, too many ranks: fmpl_init fails
 *                with a message naming the setting, nobody hangs
 *   bench        bench/latency and bench/bcast (docs/emulation.md's) run on it
 */
#include "fmpl.h"
#include "testlib.h"
#include "transport/peach2/p2.h"

#define JOB_TIMEOUT tl_job_timeout(120)
#define CK_TIMEOUT (JOB_TIMEOUT + 60)

#define P2 "FMPL_TRANSPORT=peach2"

/* ---- routing registers ---------------------------------------------------- */

/* hops between two nodes of S, from the cabling alone: along a ring the
 * shorter way, and one S cable between the rings */
static int ring_dist(int a, int b, int n)
{
    int d = a > b ? a - b : b - a;
    return d < n - d ? d : n - d;
}

static int expected_hops(int S, int s, int d)
{
    int R = (S + 1) / 2, rs = s / R, ps = s % R, rd = d / R, pd = d % R;
    int len[2] = {R, S - R};
    if (rs == rd)
        return ring_dist(ps, pd, len[rs]);
    /* S first where our position has a cable, else along our ring to one */
    if (ps < len[rd])
        return 1 + ring_dist(ps, pd, len[rd]);
    return ring_dist(ps, pd, len[rs]) + 1;
}

START_TEST(test_route)
{
    p2_ring_t r;
    for (int S = 1; S <= FMPL_PEACH2_MAX_NODES; S++) {
        ck_assert_int_eq(fmpl_peach2_ring_init(&r, S), FMPL_SUCCESS);
        int far = 0;
        for (int s = 0; s < S; s++)
            for (int d = 0; d < S; d++) {
                fmpl_emu_path_t p;
                int hops = -1;
                /* an address inside the slice, not only its start */
                uint64_t a = fmpl_peach2_slice(d) + ((uint64_t)(s + 1) << 20) + 24;
                int got = fmpl_peach2_walk(&r, s, a, &p, &hops);
                ck_assert_msg(got == d, "%d nodes: node %d's write for node %d reaches %d", S, s,
                              d, got);
                ck_assert_msg(hops == expected_hops(S, s, d), "%d nodes: %d -> %d in %d hops, "
                              "expected %d", S, s, d, hops, expected_hops(S, s, d));
                /* host up, a port per hop, host down */
                ck_assert_int_eq(p.n, hops + 2);
                far = hops > far ? hops : far;
            }
        if (S == 8)
            ck_assert_msg(far == 3, "8 nodes: farthest %d hops, the paper's 3", far);
        if (S == 16)
            ck_assert_msg(far == 5, "16 nodes: farthest %d hops (two rings of 8)", far);
        /* nobody claims what lies outside the S slices */
        ck_assert_int_eq(fmpl_peach2_walk(&r, 0, fmpl_peach2_slice(S), NULL, NULL), -1);
        ck_assert_int_eq(fmpl_peach2_walk(&r, 0, FMPL_PEACH2_WIN_BASE - 8, NULL, NULL), -1);
    }
}
END_TEST

/* ---- the fabric below the messages --------------------------------------- */

static const struct fab_spec {
    int np;
    const char *env, *what;
} fab_specs[] = {
    {2, P2, "window"},
    {5, P2, "window"},
    {8, P2, "window"},
    {16, P2, "window"},
    {4, P2 " FMPL_TCA_MODEL=0", "window"},
    {4, P2, "order"},
    {16, P2, "order"},
};

START_TEST(test_fabric)
{
    const struct fab_spec *f = &fab_specs[_i];
    const char *args[] = {"-w", f->what, NULL};
    tl_run_worker("p2_fabric", f->np, f->env, args, JOB_TIMEOUT);
}
END_TEST

/* ---- determinism ------------------------------------------------------------ */

/* bench/tca_dma -o p45: every "key value" line */
static void figures(int np, char *out, size_t cap)
{
    job_t j;
    char nb[16], desc[128];
    snprintf(nb, sizeof nb, "%d", np);
    snprintf(desc, sizeof desc, "fmplrun -n %d bench/tca_dma -o p45", np);
    int st = run_cmd(&j, P2, JOB_TIMEOUT + 30, "bin/fmplrun", "-n", nb, "-t", "120",
                     tl_path("bench/tca_dma"), "-o", "p45", NULL);
    job_log(&j, desc);
    fprintf(stderr, "  %-60s status %d, %.2f s\n", desc, st, j.secs);
    ck_assert_msg(st == 0, "%s: status %d:\n%s", desc, st, job_tail(&j, 2000));
    /* the DMA figures, and the PIO line of peer 1 (more ranks, more lines) */
    out[0] = 0;
    for (const char *l = j.out; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        if (strncmp(l, "fig", 3) && strncmp(l, "pio 1 ", 6))
            continue;
        size_t n = strcspn(l, "\n") + 1, have = strlen(out);
        ck_assert_msg(have + n < cap, "too many figures");
        memcpy(out + have, l, n);
        out[have + n] = 0;
    }
    ck_assert_msg(strstr(out, "pio 1 ") && strstr(out, "fig4 4096") && strstr(out, "fig5 2048"),
                  "%s: figures missing:\n%s", desc, job_tail(&j, 2000));
    job_free(&j);
}

START_TEST(test_determinism)
{
    static char a[8192], b[8192], c[8192];
    figures(2, a, sizeof a);
    figures(2, b, sizeof b);
    figures(8, c, sizeof c);
    /* the DMA times are FMPL's own work and the fabric's: exactly the same */
    ck_assert_msg(strcmp(a, b) == 0, "two runs differ:\n%s\n---\n%s", a, b);
    ck_assert_msg(strcmp(a, c) == 0, "2 and 8 ranks differ:\n%s\n---\n%s", a, c);
}
END_TEST

START_TEST(test_paper)
{
    job_t j;
    int st = run_cmd(&j, NULL, 600, tl_path("bench/tca"), "-q", "-k", NULL);
    job_log(&j, "bench/tca -q -k");
    fprintf(stderr, "  %-60s status %d, %.2f s\n", "bench/tca -q -k", st, j.secs);
    ck_assert_msg(st == 0 && job_has(&j, "point-to-point: every figure within 10 %"),
                  "bench/tca -q -k: status %d:\n%s", st, job_tail(&j, 4000));
    job_free(&j);
}
END_TEST

/* ---- settings ------------------------------------------------------------------ */

static const struct set_spec {
    int np;
    const char *env, *said;
} set_specs[] = {
    {2, P2 " FMPL_TCA_HOP_NS=-1", "FMPL_TCA_HOP_NS=-1: not a number"},
    {2, P2 " FMPL_TCA_LINK_MBPS=fast", "FMPL_TCA_LINK_MBPS=fast: not a number"},
    {2, P2 " FMPL_TCA_TLP_PAYLOAD=4", "FMPL_TCA_TLP_PAYLOAD=4: not a number >= 8"},
    {17, P2, "use FMPL_TRANSPORT=tca"},
    {2, P2 " FMPL_TCA_BOARD_NS=0 FMPL_TCA_PIO_NS=0 FMPL_TCA_MEM_NS=0", "the emulation's lookahead"},
};

START_TEST(test_settings)
{
    tl_run_refused(set_specs[_i].np, set_specs[_i].env, set_specs[_i].said);
}
END_TEST

/* ---- docs/emulation.md's benchmarks on the emulated machine ------------- */

static const char *const bench_cmds[][8] = {
    {"bench/latency", "-m", "64", "-i", "0.05", NULL},
    {"bench/bcast", "-m", "1K", "-i", "0.2", NULL},
};

START_TEST(test_bench)
{
    const char *const *c = bench_cmds[_i];
    const char *argv[16] = {tl_path("bin/fmplrun"), "-n", "4", "-t", "120", tl_path(c[0])};
    int n = 6;
    for (int k = 1; c[k]; k++)
        argv[n++] = c[k];
    argv[n] = NULL;
    job_t j;
    char desc[128];
    snprintf(desc, sizeof desc, P2 " fmplrun -n 4 %s", c[0]);
    int st = run_cmdv(&j, P2, JOB_TIMEOUT + 30, argv);
    job_log(&j, desc);
    fprintf(stderr, "  %-60s status %d, %.2f s\n", desc, st, j.secs);
    ck_assert_msg(st == 0, "%s: status %d:\n%s", desc, st, job_tail(&j, 2000));
    /* the first timed row: its time is the emulated one, microseconds -
     * PEACH2's PIO makes an 8-byte message a microsecond or two */
    const char *row = strstr(j.out, "\n8 ");
    double us = row ? atof(row + 3) : 0;
    ck_assert_msg(row && us > 0.5 && us < 100, "%s: no plausible emulated time for 8 bytes "
                  "(%.3f us):\n%s", desc, us, job_tail(&j, 2000));
    job_free(&j);
}
END_TEST

#define NSPEC(t) ((int)(sizeof t / sizeof t[0]))

static Suite *peach2_suite(void)
{
    Suite *s = suite_create("peach2");
    TCase *tc;
#define ADD(name, n)                                                          \
    tc = tcase_create(#name);                                                 \
    tcase_set_timeout(tc, CK_TIMEOUT);                                        \
    tcase_add_loop_test(tc, test_##name, 0, n);                               \
    suite_add_tcase(s, tc);
    ADD(route, 1)
    ADD(fabric, NSPEC(fab_specs))
    ADD(settings, NSPEC(set_specs))
    ADD(determinism, 1)
    ADD(bench, NSPEC(bench_cmds))
    tc = tcase_create("paper");
    tcase_set_timeout(tc, 660);
    tcase_add_test(tc, test_paper);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(peach2_suite());
    int nfail;
    srunner_run_all(sr, CK_NORMAL);
    nfail = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nfail == 0 ? 0 : 1;
}
