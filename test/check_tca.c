/*
 * check_tca - what only emulated HA-PACS/TCA (FMPL_TRANSPORT=tca) has:
 * two networks, PEACH2 inside sub-clusters and InfiniBand everywhere, and
 * the choice between them.  (The point-to-point, collective, BLACS and
 * error suites run on it too: test/run_tests.sh runs them with
 * FMPL_TRANSPORT=tca, sub-clusters of 2, with the timing model and
 * without, and with InfiniBand alone.)
 *
 *   routing      FMPL_VERBOSE=1 jobs, each rank's count of what each
 *                network carried: near peers' small writes and records on
 *                PEACH2, their large writes on InfiniBand (hybrid), every
 *                write on one network (FMPL_TCA_ROUTE=peach2 or ib), far
 *                peers always on InfiniBand (sub-clusters of 1), and the
 *                halo exchange's block-stride faces on PEACH2 inside a
 *                sub-cluster, on InfiniBand between sub-clusters, and
 *                its block faces on InfiniBand beside them; near peers
 *                2 hops away on InfiniBand (FMPL_TCA_IB_HOPS)
 *   determinism  bench/latency on tca: the same modeled times twice (the
 *                second with a tenth of the iterations)
 *   compute      examples/himeno with its processor modeled (-g, through
 *                fmpl_compute, the CPU scale 0): the same time per
 *                iteration twice, and the model's sweep added exactly
 *   figure       bench/latency, PEACH2 alone against InfiniBand alone: the
 *                hybrid paper's Fig. 4 - PEACH2 faster up to 512 KB,
 *                InfiniBand from 1 MB (modeled times: exact, not timed)
 *   gpu          bench/latency over InfiniBand from GPU memory
 *                (FMPL_TCA_MV2=gdr, qpi): each size pays exactly what
 *                MVAPICH2-GDR's protocol for it adds
 *   settings     bad FMPL_TCA_SUBCLUSTER, _ROUTE, _SWITCH_BYTES, _IB_*, _MV2*
 *                values: fmpl_init fails with a message naming the
 *                setting, nobody hangs
 */
#include <math.h>

#include "fmpl.h"
#include "testlib.h"

#define JOB_TIMEOUT tl_job_timeout(120)
#define CK_TIMEOUT (JOB_TIMEOUT + 60)

#define TCA "FMPL_TRANSPORT=tca FMPL_VERBOSE=1"

/* ---- routing ------------------------------------------------------------------ */

/* The counts rank `rank` logged for network `net` ("PEACH2",
 * "InfiniBand"): puts, block-stride puts, list puts, records, contiguous
 * halo faces; 0 if the line is missing. */
static int carried(const job_t *j, int rank, const char *net, long c[5])
{
    char pat[96];
    snprintf(pat, sizeof pat, "tca: rank %d: %s carried ", rank, net);
    const char *l = j->out ? strstr(j->out, pat) : NULL;
    if (!l)
        return 0;
    return sscanf(l + strlen(pat), "%ld puts, %ld block-stride puts, %ld list puts, %ld records, "
                  "%ld contiguous halo faces", &c[0], &c[1], &c[2], &c[3], &c[4]) == 5;
}

enum { ANY = -1, NONE = 0, SOME = 1 };

static const struct route_spec {
    int np;
    const char *env, *prog, *args[12];
    /* rank 0's expectations: PEACH2 puts, block-stride, records, halo
     * faces; InfiniBand the same (ANY, NONE, SOME) */
    int p2[4], ib[4];
} route_specs[] = {
    /* two near nodes, writes above 4 KiB on InfiniBand */
    {2, TCA " FMPL_TCA_SUBCLUSTER=2 FMPL_TCA_SWITCH_BYTES=4096", "pingpong",
     {"-m", "65536", NULL}, {SOME, NONE, SOME, NONE}, {SOME, NONE, SOME, NONE}},
    /* the same, every write under 1 MiB on PEACH2 (the default 512 KB) */
    {2, TCA " FMPL_TCA_SUBCLUSTER=2", "pingpong", {"-m", "65536", NULL},
     {SOME, NONE, SOME, NONE}, {NONE, NONE, NONE, NONE}},
    {2, TCA " FMPL_TCA_SUBCLUSTER=2 FMPL_TCA_ROUTE=ib", "pingpong", {"-m", "65536", NULL},
     {NONE, NONE, NONE, NONE}, {SOME, NONE, SOME, NONE}},
    {2, TCA " FMPL_TCA_SUBCLUSTER=2 FMPL_TCA_ROUTE=peach2 FMPL_TCA_SWITCH_BYTES=0", "pingpong",
     {"-m", "65536", NULL}, {SOME, NONE, SOME, NONE}, {NONE, NONE, NONE, NONE}},
    /* sub-clusters of one: every peer far */
    {2, TCA " FMPL_TCA_SUBCLUSTER=1 FMPL_TCA_ROUTE=peach2", "pingpong", {"-m", "65536", NULL},
     {NONE, NONE, NONE, NONE}, {SOME, NONE, SOME, NONE}},
    /* a 2 x 2 x 1 halo whose faces in x and y are block-stride (-K TTS;
     * z's are packed), sub-clusters of 2 (ranks 0-1, 2-3): block-stride
     * faces to the near neighbour on PEACH2, to the far one on InfiniBand */
    {4, TCA " FMPL_TCA_SUBCLUSTER=2", "coll_halo",
     {"-g", "2x2x1", "-e", "1", "-n", "6x6x300", "-K", "TTS", NULL},
     {ANY, SOME, SOME, ANY}, {ANY, SOME, SOME, ANY}},
    /* 2 x 2 x 1 with block faces in x and block-stride faces in y (-K
     * BTN), one sub-cluster of 4: the block faces on InfiniBand beside
     * the block-stride ones on PEACH2 (Odajima et al. 2015, 5.2) */
    {4, TCA " FMPL_TCA_SUBCLUSTER=4", "coll_halo",
     {"-g", "2x2x1", "-w", "1x1x0", "-e", "8", "-n", "8x8x40", "-K", "BTN", NULL},
     {ANY, SOME, SOME, NONE}, {ANY, NONE, ANY, SOME}},
    /* one sub-cluster of 4 (two rings of 2): rank 3 is 2 hops from rank
     * 0, and from 2 hops InfiniBand is the quicker (FMPL_TCA_IB_HOPS's
     * default, from the models); FMPL_TCA_IB_HOPS=0: PEACH2 only */
    {4, TCA " FMPL_TCA_SUBCLUSTER=4", "coll_ops", {"-s", "3", NULL},
     {SOME, NONE, SOME, NONE}, {SOME, NONE, SOME, NONE}},
    {4, TCA " FMPL_TCA_SUBCLUSTER=4 FMPL_TCA_IB_HOPS=0", "coll_ops", {"-s", "3", NULL},
     {SOME, NONE, SOME, NONE}, {NONE, NONE, NONE, NONE}},
    /* every near peer 1 hop away or more on InfiniBand: from host memory
     * the writes go there, from a GPU across QPI (FMPL_TCA_MV2=qpi) they
     * stay on PEACH2, whose hop costs less than MVAPICH2-GDR's protocol;
     * the bare records still follow the hops */
    {2, TCA " FMPL_TCA_SUBCLUSTER=2 FMPL_TCA_IB_HOPS=1", "pingpong", {"-m", "65536", NULL},
     {NONE, NONE, NONE, NONE}, {SOME, NONE, SOME, NONE}},
    {2, TCA " FMPL_TCA_SUBCLUSTER=2 FMPL_TCA_IB_HOPS=1 FMPL_TCA_MV2=qpi", "pingpong",
     {"-m", "65536", NULL}, {SOME, NONE, SOME, NONE}, {NONE, NONE, SOME, NONE}},
    /* 16 nodes in two sub-clusters of 8: every collective, and a 4 x 4
     * halo exchange, right over both networks */
    {16, TCA " FMPL_TCA_SUBCLUSTER=8", "coll_ops", {"-s", "3", NULL},
     {SOME, NONE, SOME, NONE}, {SOME, NONE, SOME, NONE}},
    {16, TCA " FMPL_TCA_SUBCLUSTER=8", "coll_halo", {"-g", "4x4", "-n", "40x40", NULL},
     {ANY, ANY, SOME, ANY}, {ANY, ANY, SOME, ANY}},
    /* InfiniBand alone packs block-stride faces, as MPI does (-K BSN) */
    {4, TCA " FMPL_TCA_SUBCLUSTER=4 FMPL_TCA_ROUTE=ib", "coll_halo",
     {"-g", "2x2x1", "-w", "1x1x0", "-e", "8", "-n", "8x8x40", "-K", "BSN", NULL},
     {NONE, NONE, NONE, NONE}, {ANY, NONE, SOME, SOME}},
    /* the same with PEACH2 alone: no face on InfiniBand */
    {4, TCA " FMPL_TCA_SUBCLUSTER=4 FMPL_TCA_ROUTE=peach2", "coll_halo",
     {"-g", "2x2x1", "-w", "1x1x0", "-e", "8", "-n", "8x8x40", "-K", "BTN", NULL},
     {ANY, SOME, SOME, SOME}, {NONE, NONE, NONE, NONE}},
};

START_TEST(test_routing)
{
    const struct route_spec *s = &route_specs[_i];
    job_t j;
    char desc[256];
    tl_describe(desc, sizeof desc, s->env, s->np, s->prog, s->args);
    int st = run_jobv(&j, s->np, s->env, JOB_TIMEOUT, s->prog, s->args);
    job_log(&j, desc);
    fprintf(stderr, "  %-60s status %d, %.2f s\n", desc, st, j.secs);
    ck_assert_msg(st == 0, "%s: status %d:\n%s", desc, st, job_tail(&j, 3000));
    long p2[5], ib[5];
    ck_assert_msg(carried(&j, 0, "PEACH2", p2) && carried(&j, 0, "InfiniBand", ib),
                  "%s: no counts from rank 0:\n%s", desc, job_tail(&j, 3000));
    const int col[4] = {0, 1, 3, 4};
    const char *what[4] = {"puts", "block-stride puts", "records", "contiguous halo faces"};
    for (int k = 0; k < 4; k++) {
        long got[2] = {p2[col[k]], ib[col[k]]};
        int want[2] = {s->p2[k], s->ib[k]};
        for (int n = 0; n < 2; n++) {
            if (want[n] == ANY)
                continue;
            ck_assert_msg(want[n] == SOME ? got[n] > 0 : got[n] == 0,
                          "%s: %s carried %ld %s, expected %s:\n%s", desc,
                          n ? "InfiniBand" : "PEACH2", got[n], what[k],
                          want[n] == SOME ? "some" : "none", job_tail(&j, 3000));
        }
    }
    job_free(&j);
}
END_TEST

/* ---- bench/latency's modeled times ------------------------------------------ */

/* bench/latency's "size time bandwidth" rows, as text */
static void latency_rows(const char *env, const char *max, const char *iters, char *out,
                         size_t cap)
{
    job_t j;
    char desc[256];
    snprintf(desc, sizeof desc, "%s fmplrun -n 2 bench/latency -m %s -i %s", env, max,
             iters);
    int st = run_cmd(&j, env, JOB_TIMEOUT + 30, "bin/fmplrun", "-n", "2", "-t", "240",
                     tl_path("bench/latency"), "-m", max, "-i", iters, NULL);
    job_log(&j, desc);
    fprintf(stderr, "  %-60s status %d, %.2f s\n", desc, st, j.secs);
    ck_assert_msg(st == 0, "%s: status %d:\n%s", desc, st, job_tail(&j, 2000));
    out[0] = 0;
    for (const char *l = j.out; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        if (*l < '0' || *l > '9')
            continue;
        size_t n = strcspn(l, "\n") + 1, have = strlen(out);
        ck_assert_msg(have + n < cap, "too many rows");
        memcpy(out + have, l, n);
        out[have + n] = 0;
    }
    ck_assert_msg(strstr(out, "\n8 ") || strncmp(out, "8 ", 2) == 0, "%s: no rows:\n%s", desc,
                  job_tail(&j, 2000));
    job_free(&j);
}

/* The program's own CPU time between calls is charged when a burst
 * exceeds FMPL_TCA_CPU_THRESHOLD_NS, and on a loaded machine a burst of
 * bench/latency's loop sometimes does (a page fault, a cache miss):
 * hundredths of a microsecond.  Not charging it leaves FMPL's work and
 * the fabric's, which must come out the same every time. */
#define EXACT "FMPL_TCA_CPU_THRESHOLD_NS=1e9"

START_TEST(test_determinism)
{
    static char a[8192], b[8192];
    const char *env = "FMPL_TRANSPORT=tca FMPL_TCA_SUBCLUSTER=2 FMPL_TCA_SWITCH_BYTES=4096 " EXACT;
    /* and with a tenth of the iterations (bench/tca -q, test_figure):
     * every iteration takes the same modeled time */
    latency_rows(env, "256K", "1", a, sizeof a);
    latency_rows(env, "256K", "0.1", b, sizeof b);
    ck_assert_msg(strcmp(a, b) == 0, "two runs differ:\n%s\n---\n%s", a, b);
}
END_TEST

/* examples/himeno on 4 ranks (2 x 2, 16 x 16 x 18 updated points each)
 * with every sweep modeled at `gflops`: its time per iteration (us) */
static double himeno_env_us(const char *env, double gflops)
{
    job_t j;
    char g[32], desc[512];
    snprintf(g, sizeof g, "%g", gflops);
    snprintf(desc, sizeof desc, "%s fmplrun -n 4 examples/himeno -x 34 -y 34 -z 20 -n 10 -g %s",
             env, g);
    int st = run_cmd(&j, env, JOB_TIMEOUT + 30, "bin/fmplrun", "-n", "4", "-t", "240",
                     tl_path("examples/himeno"), "-x", "34", "-y", "34", "-z", "20", "-n", "10",
                     "-g", g, NULL);
    job_log(&j, desc);
    fprintf(stderr, "  %-60s status %d, %.2f s\n", desc, st, j.secs);
    ck_assert_msg(st == 0, "%s: status %d:\n%s", desc, st, job_tail(&j, 2000));
    const char *l = j.out ? strstr(j.out, "us_per_iter ") : NULL;
    ck_assert_msg(l != NULL, "%s: no us_per_iter:\n%s", desc, job_tail(&j, 2000));
    double us = atof(l + strlen("us_per_iter "));
    job_free(&j);
    return us;
}

static double himeno_us(double gflops)
{
    return himeno_env_us("FMPL_TRANSPORT=tca FMPL_TCA_SUBCLUSTER=2 FMPL_TCA_CPU_SCALE=0", gflops);
}

START_TEST(test_compute)
{
    double a = himeno_us(10), b = himeno_us(10), fast = himeno_us(1000);
    ck_assert_msg(a == b, "examples/himeno -g 10 took %.2f, then %.2f us an iteration", a, b);
    /* every rank sweeps 16 x 16 x 18 points of 34 flops: 15.67 us at 10
     * GFLOPS, 0.16 us at 1000, the same on every rank, so the exchange
     * and the reduction that follow are the same too (to the 0.01 us
     * himeno prints) */
    double want = 34.0 * 16 * 16 * 18 * (1.0 / 10e3 - 1.0 / 1000e3);
    ck_assert_msg(a - fast > want - 0.02 && a - fast < want + 0.02,
                  "-g 10: %.2f us, -g 1000: %.2f us an iteration: %.2f apart, want %.2f", a, fast,
                  a - fast, want);
}
END_TEST

/* the modeled one-way time of `size` bytes in bench/latency's rows */
static double row_us(const char *rows, long size)
{
    char pat[32];
    snprintf(pat, sizeof pat, "%ld ", size);
    for (const char *l = rows; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
        if (strncmp(l, pat, strlen(pat)) == 0)
            return atof(l + strlen(pat));
    return -1;
}

START_TEST(test_figure)
{
    static char p2[8192], ib[8192];
    latency_rows("FMPL_TRANSPORT=tca FMPL_TCA_ROUTE=peach2 " EXACT, "2M", "0.1", p2, sizeof p2);
    latency_rows("FMPL_TRANSPORT=tca FMPL_TCA_ROUTE=ib " EXACT, "2M", "0.1", ib, sizeof ib);
    /* Odajima et al. 2015, Fig. 4: TCA ahead up to 512 KB, InfiniBand above */
    const long sizes[] = {8, 1024, 65536, 524288, 1048576, 2097152};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        double a = row_us(p2, sizes[i]), b = row_us(ib, sizes[i]);
        ck_assert_msg(a > 0 && b > 0, "no row for %ld bytes:\n%s\n---\n%s", sizes[i], p2, ib);
        if (sizes[i] <= 524288)
            ck_assert_msg(a < b, "%ld bytes: PEACH2 %.2f us, InfiniBand %.2f us: PEACH2 should "
                          "be faster up to 512 KB", sizes[i], a, b);
        else
            ck_assert_msg(b < a, "%ld bytes: PEACH2 %.2f us, InfiniBand %.2f us: InfiniBand "
                          "should be faster above 512 KB", sizes[i], a, b);
    }
}
END_TEST

/* MVAPICH2-GDR's protocols on GPU memory (FMPL_TCA_MV2, ib_gpu_model.c), seen in
 * FMPL's own ping-pong over InfiniBand alone: what each message costs more
 * than from host memory, by its size - a slow first GPUDirect read up to
 * 8 KiB, through QPI at 290 MB/s as well; a copy to host memory (both
 * ends across QPI) up to 256 KiB; nothing above (the pipeline).  Modeled
 * times: exact to the 0.01 us bench/latency prints. */
START_TEST(test_gpu)
{
    static char host[8192], gdr[8192], qpi[8192];
    latency_rows("FMPL_TRANSPORT=tca FMPL_TCA_ROUTE=ib " EXACT, "1M", "0.1", host, sizeof host);
    latency_rows("FMPL_TRANSPORT=tca FMPL_TCA_ROUTE=ib FMPL_TCA_MV2=gdr " EXACT, "1M", "0.1", gdr,
                 sizeof gdr);
    latency_rows("FMPL_TRANSPORT=tca FMPL_TCA_ROUTE=ib FMPL_TCA_MV2=qpi " EXACT, "1M", "0.1", qpi,
                 sizeof qpi);
    /* the defaults: GDR_NS 1000, QPI_MBPS 290, COPY_NS 8000, COPY_MBPS
     * 6000; the link's FMPL_TCA_IB_LINK_MBPS 3380 */
    const struct { long size; double gdr, qpi; } want[] = {
        {4096, 1.0, 1.0 + 4096.0 / 290 - 4096.0 / 3380},
        {8192, 1.0, 1.0 + 8192.0 / 290 - 8192.0 / 3380},
        {16384, 8.0 + 16384.0 / 6000, 2 * (8.0 + 16384.0 / 6000)},
        {262144, 8.0 + 262144.0 / 6000, 2 * (8.0 + 262144.0 / 6000)},
        {524288, 0, 0},
        {1048576, 0, 0},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        double h = row_us(host, want[i].size), g = row_us(gdr, want[i].size),
               q = row_us(qpi, want[i].size);
        ck_assert_msg(h > 0 && g > 0 && q > 0, "no row for %ld bytes", want[i].size);
        ck_assert_msg(fabs(g - h - want[i].gdr) < 0.02 && fabs(q - h - want[i].qpi) < 0.02,
                      "%ld bytes: host memory %.2f us, gdr %.2f (+%.2f, want +%.2f), qpi %.2f "
                      "(+%.2f, want +%.2f)", want[i].size, h, g, g - h, want[i].gdr, q, q - h,
                      want[i].qpi);
    }
    /* InfiniBand alone packs Himeno's block-stride faces (y), here with a
     * GPU kernel each (5 us): on 2 x 2 ranks each has one y neighbour, a
     * pack and an unpack an iteration, the unpack partly beside the other
     * faces' transfers - between one and two kernels more */
    const char *ib = "FMPL_TRANSPORT=tca FMPL_TCA_SUBCLUSTER=2 FMPL_TCA_CPU_SCALE=0 "
                     "FMPL_TCA_ROUTE=ib FMPL_TCA_MV2=gdr";
    char env[256];
    snprintf(env, sizeof env, "%s FMPL_TCA_MV2_PACK_NS=0", ib);
    double kern = himeno_env_us(ib, 10), none = himeno_env_us(env, 10);
    ck_assert_msg(kern - none >= 5.0 - 0.01 && kern - none <= 10.0 + 0.01,
                  "himeno over InfiniBand: %.2f us an iteration with 5 us pack kernels, %.2f "
                  "without: want 5 to 10 us apart", kern, none);
}
END_TEST

/* ---- settings ------------------------------------------------------------------ */

static const struct set_spec {
    int np;
    const char *env, *said;
} set_specs[] = {
    {2, "FMPL_TRANSPORT=tca FMPL_TCA_SUBCLUSTER=17", "FMPL_TCA_SUBCLUSTER=17: nodes a PEACH2"},
    {2, "FMPL_TRANSPORT=tca FMPL_TCA_SUBCLUSTER=two", "FMPL_TCA_SUBCLUSTER=two"},
    {2, "FMPL_TRANSPORT=tca FMPL_TCA_ROUTE=fastest", "FMPL_TCA_ROUTE=fastest: hybrid"},
    {2, "FMPL_TRANSPORT=tca FMPL_TCA_SWITCH_BYTES=-1", "FMPL_TCA_SWITCH_BYTES=-1: not a size"},
    {2, "FMPL_TRANSPORT=tca FMPL_TCA_IB_MTU=64", "FMPL_TCA_IB_MTU=64: not a number >= 256"},
    {2, "FMPL_TRANSPORT=tca FMPL_TCA_IB_SWITCH_NS=x", "FMPL_TCA_IB_SWITCH_NS=x: not a number"},
    {2, "FMPL_TRANSPORT=tca FMPL_TCA_IB_HOPS=-2", "FMPL_TCA_IB_HOPS=-2: near peers"},
    {2, "FMPL_TRANSPORT=tca FMPL_TCA_MV2=gpu", "FMPL_TCA_MV2=gpu: off (host memory)"},
    {2, "FMPL_TRANSPORT=tca FMPL_TCA_MV2=gdr FMPL_TCA_MV2_COPY_NS=-5",
     "FMPL_TCA_MV2_COPY_NS=-5: not a number >= 0"},
};

START_TEST(test_settings)
{
    tl_run_refused(set_specs[_i].np, set_specs[_i].env, set_specs[_i].said);
}
END_TEST

#define NSPEC(t) ((int)(sizeof t / sizeof t[0]))

static Suite *tca_suite(void)
{
    Suite *s = suite_create("tca");
    TCase *tc;
#define ADD(name, n)                                                          \
    tc = tcase_create(#name);                                                 \
    tcase_set_timeout(tc, CK_TIMEOUT);                                        \
    tcase_add_loop_test(tc, test_##name, 0, n);                               \
    suite_add_tcase(s, tc);
    ADD(routing, NSPEC(route_specs))
    ADD(settings, NSPEC(set_specs))
    ADD(determinism, 1)
    ADD(compute, 1)
    ADD(figure, 1)
    ADD(gpu, 1)
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(tca_suite());
    int nfail;
    srunner_run_all(sr, CK_NORMAL);
    nfail = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nfail == 0 ? 0 : 1;
}
