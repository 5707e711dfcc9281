/*
 * check_blacs - fmpl-blacs, the BLACS on FMPL, in real jobs of 1 to 6
 * processes (more processes than cores).
 *
 * Workers (test/progs/blacs_*.c, C BLACS interface only; each prints
 * "OK <name>" and exits 0 only when every check held; the same sources
 * built against MPI-BLACS pass under mpirun, see test/progs/blacs_test.h):
 *   blacs_p2p   C?gesd2d/C?gerv2d, C?trsd2d/C?trrv2d: every type, every
 *               pair (and self), general and U/L x unit/non-unit
 *               trapezoids with m < n, m = n, m > n, odd sender LDA,
 *               another receiver LDA, guards around and between the
 *               columns, zero-size messages; several 200 KB messages sent
 *               both ways before any receive (locally blocking); big
 *               strided messages; two contexts between the same pair
 *   blacs_coll  C?gebs2d/C?gebr2d, C?trbs2d/C?trbr2d, C?gsum2d, C?gamx2d,
 *               C?gamn2d against serial references: every type, scopes
 *               R C A, every topology (' ' I D S M H F T 1-9, and M/T
 *               with blacs_set 11-14), every root, rdest -1 and a
 *               specific destination, location arrays (LDIA = M, > M,
 *               -1) with |value| ties resolved as the reference BLACS do,
 *               guards; repeatable/coherent sums (WHAT 15, 16); on every
 *               grid shape and on a gridmap grid leaving a process out
 *   blacs_grid  gridinit 'R'/'C', gridmap, gridinfo, pnum/pcoord, several
 *               contexts alive and interleaved, processes left out
 *               (context -1, gridinfo -1s), blacs_get/set WHAT 11-16,
 *               barrier scopes, context reuse, blacs_exit(1) then FMPL
 *               still usable, a program that started FMPL itself
 *   blacs_fail  Cblacs_abort on one process ends the job; a process
 *               killed (SIGKILL) during broadcasts / sums: the others
 *               must fail by themselves, not hang
 * Each job runs with fmplrun -t; the Check timeout is larger.
 */
#include "fmpl.h"
#include "testlib.h"

#define JOB_TIMEOUT tl_job_timeout(60)
#define CK_TIMEOUT (JOB_TIMEOUT + 60)

struct spec {
    const char *prog;
    int np;
    const char *env;
    const char *args[16];
};

#define NOCMA "FMPL_SHM_CMA=0"
#define PTHR "FMPL_PROGRESS_THREAD=1"

static const struct spec p2p_specs[] = {
    {"blacs_p2p", 1, NULL, {NULL}},
    {"blacs_p2p", 2, NULL, {NULL}},
    {"blacs_p2p", 3, NULL, {NULL}},
    {"blacs_p2p", 4, NULL, {NULL}},                         /* 2 x 2 */
    {"blacs_p2p", 4, NULL, {"-g", "1x4", "-P", "sx", NULL}},
    {"blacs_p2p", 6, NULL, {"-P", "asx", NULL}},            /* 2 x 3 */
    {"blacs_p2p", 5, NULL, {"-P", "ax", "-T", "dz", NULL}},
    {"blacs_p2p", 2, NOCMA, {"-P", "sba", "-T", "c", NULL}},
    {"blacs_p2p", 3, PTHR, {"-P", "sa", "-T", "is", NULL}},
    {"blacs_p2p", 2, "FMPL_SHM_EAGER=1024", {"-P", "sb", NULL}},
    /* strided columns through the shallowest FIFO (shm.h): puts wait for room */
    {"blacs_p2p", 2, "FMPL_SHM_FIFO=16K", {"-P", "asb", "-T", "dz", NULL}},
};

static const struct spec coll_specs[] = {
    {"blacs_coll", 1, NULL, {NULL}},
    {"blacs_coll", 2, NULL, {"-B", NULL}},
    {"blacs_coll", 3, NULL, {NULL}},
    {"blacs_coll", 4, NULL, {NULL}},          /* 1x4 2x2 4x1, 1x3 gridmap */
    {"blacs_coll", 5, NULL, {"-w", "bc", "-T", "dz", "-g", "1x5,2x2m", NULL}},
    {"blacs_coll", 6, NULL, {"-w", "bc", "-T", "sc", "-g", "2x3,3x2c", NULL}},
    {"blacs_coll", 6, NULL, {"-w", "bck", "-T", "id", "-g", "2x3,2x2m", "-t", " HST2", NULL}},
    {"blacs_coll", 4, NOCMA, {"-w", "bc", "-B", "-T", "d", "-g", "2x2", NULL}},
    {"blacs_coll", 3, PTHR, {"-w", "bck", "-T", "z", "-B", NULL}},
};

static const struct spec grid_specs[] = {
    {"blacs_grid", 1, NULL, {NULL}},
    {"blacs_grid", 2, NULL, {NULL}},
    {"blacs_grid", 3, NULL, {NULL}},
    {"blacs_grid", 4, NULL, {NULL}},
    {"blacs_grid", 5, NULL, {"-w", "iore", NULL}},
    {"blacs_grid", 6, NULL, {NULL}},
    {"blacs_grid", 3, NULL, {"-f", NULL}},
    {"blacs_grid", 4, NULL, {"-f", "-w", "imse", NULL}},
    {"blacs_grid", 2, NULL, {"-f", "-w", "ims", NULL}},    /* ends with blacs_exit(1) +
                                                            * fmpl_finalize */
};

static void run_spec(const struct spec *s)
{
    tl_run_worker(s->prog, s->np, s->env, s->args, JOB_TIMEOUT);
}

#define SPEC_TEST(name, table)                                                \
    START_TEST(test_##name) { run_spec(&table[_i]); }                         \
    END_TEST

SPEC_TEST(p2p, p2p_specs)
SPEC_TEST(coll, coll_specs)
SPEC_TEST(grid, grid_specs)

/* ---- failures: abort, a dead peer ------------------------------------- */

struct fspec {
    int np;
    const char *what;
    const char *top;
    const char *victim;     /* NULL: the last rank */
    const char *env;
};
/* FMPL_KILL_GRACE=30: fmplrun would wait 30 s before killing survivors of
 * a dead rank, so a job that ends within the limit ended by itself */
#define GRACE "FMPL_KILL_GRACE=30"
static const struct fspec fail_specs[] = {
    {2, "abort", " ", NULL, GRACE},
    {4, "abort", " ", "1", GRACE},
    {2, "kill", " ", NULL, GRACE},
    {3, "kill", "S", NULL, GRACE},
    {4, "kill", "T", "0", GRACE},
    {5, "kill", "I", "2", GRACE},
    {3, "kill", " ", NULL, GRACE " " NOCMA},
    {3, "killsum", " ", NULL, GRACE},
    {4, "killsum", "1", "1", GRACE},
    {2, "killsum", "H", NULL, GRACE},
};

START_TEST(test_fail)
{
    const struct fspec *k = &fail_specs[_i];
    const char *args[12];
    int na = 0, st;
    job_t j;
    char desc[256], left[1024];
    double limit = !strcmp(k->what, "abort") ? 8.0 : 12.0;

    args[na++] = "-w";
    args[na++] = k->what;
    args[na++] = "-t";
    args[na++] = k->top;
    if (k->victim) {
        args[na++] = "-v";
        args[na++] = k->victim;
    }
    args[na] = NULL;
    snprintf(desc, sizeof desc, "%s fmplrun -n %d blacs_fail -w %s -t '%s'%s%s", k->env, k->np,
             k->what, k->top, k->victim ? " -v " : "", k->victim ? k->victim : "");
    ck_assert_msg(tl_have_prog("blacs_fail"), "test/progs/blacs_fail is not built");
    st = run_jobv(&j, k->np, k->env, 60, "blacs_fail", args);
    job_log(&j, desc);
    fprintf(stderr, "  %-70s status %d, %.2f s\n", desc, st, j.secs);
    ck_assert_msg(st != 0 && st != TL_HARD_TIMEOUT && st != TL_NOT_STARTED,
                  "%s: exit status %d, expected a failure status; output:\n%s", desc, st,
                  job_tail(&j, 2500));
    ck_assert_msg(!job_has(&j, "FAIL") && !job_has(&j, "survived") &&
                      !job_has(&j, "nobody sent") && !job_has(&j, "abort returned"),
                  "%s: a process went on as if nothing happened; output:\n%s", desc,
                  job_tail(&j, 2500));
    ck_assert_msg(j.secs < limit,
                  "%s: the job took %.1f s to end (limit %.0f s; fmplrun's grace period is "
                  "30 s here, so the survivors hung until fmplrun killed them); output:\n%s",
                  desc, j.secs, limit, job_tail(&j, 2500));
    if (!strcmp(k->what, "abort")) {
        /* Cblacs_abort(ctx, 7): the job's status is the error number,
         * unless a survivor saw the dead peer and ended first (fmplrun
         * reports the first rank that failed): then the abort said so */
        ck_assert_msg(st == 7 || job_has(&j, "ending every process with error #7"),
                      "%s: exit status %d, expected 7 (Cblacs_abort's error number); "
                      "output:\n%s", desc, st, job_tail(&j, 2500));
    } else {
        /* a survivor saw the dead peer itself and said so (fmpl_blacs.h:
         * errors print "BLACS ERROR" and end the job) */
        ck_assert_msg(job_has(&j, "BLACS ERROR"), "%s: no survivor reported a BLACS ERROR; "
                      "output:\n%s", desc, job_tail(&j, 2500));
    }
    ck_assert_msg(tl_pids_alive(&j, left, sizeof left) == 0, "%s: %s", desc, left);
    ck_assert_msg(job_leftovers(&j, 3.0, left, sizeof left) == 0, "%s: leftovers: %s", desc,
                  left);
    job_free(&j);
}
END_TEST

#define NSPEC(t) ((int)(sizeof t / sizeof t[0]))

static Suite *blacs_suite(void)
{
    Suite *s = suite_create("blacs");
    TCase *tc;

#define ADD(name, table)                                                      \
    tc = tcase_create(#name);                                                 \
    tcase_set_timeout(tc, CK_TIMEOUT);                                        \
    tcase_add_loop_test(tc, test_##name, 0, NSPEC(table));                    \
    suite_add_tcase(s, tc);

    ADD(grid, grid_specs)
    ADD(p2p, p2p_specs)
    ADD(coll, coll_specs)
    tc = tcase_create("failures");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_fail, 0, NSPEC(fail_specs));
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(blacs_suite());
    int nfail;
    srunner_run_all(sr, CK_NORMAL);
    nfail = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nfail == 0 ? 0 : 1;
}
