/*
 * check_coll - communicators, collectives and the persistent halo
 * exchange, in real jobs of 1 to 8 processes (more ranks than cores).
 *
 * Workers (test/progs/coll_*.c; each prints "OK <name>" and exits 0 only
 * when every check held):
 *   coll_ops    every collective (barrier, bcast, hbcast, reduce,
 *               allreduce, allgather, gather, scatter) against a serial
 *               reference for every predefined op and type and user ops,
 *               every root, sizes 0 B .. 8 MiB, on WORLD and on
 *               communicators from fmpl_comm_create and fmpl_comm_split;
 *               in-place allgather and scatter; ties and signed zeros
 *               bitwise the same on every process
 *   coll_vops   allgatherv, gatherv, scatterv, alltoall, alltoallv,
 *               reduce_scatter, scan and exscan against a serial
 *               reference on the same communicators: odd per-member block
 *               sizes (some 0), permuted displacements with gaps whose
 *               guard bytes must stay untouched, receive sizes larger than
 *               the blocks, every root, in place, empty buffers as NULL;
 *               every predefined op and user ops, counts 0 .. ~200 KiB
 *               (equal and unequal blocks), inexact sums bitwise the same
 *               when repeated; buffers that end at a page without access;
 *               a random mix; -T: an alltoallv block longer than its
 *               receive size is FMPL_ERR_TRUNCATE, no hang
 *   coll_comm   creation, splitting, interleaved collectives on several
 *               communicators, user point-to-point traffic in flight
 *               during collectives, free/create more than FMPL_MAX_COMMS
 *               times, FMPL_ERR_LIMIT
 *   coll_args   bad arguments (FMPL_ERR_COMM, _RANK, _OP, _ARG, _BUFFER,
 *               _NOT_INIT before fmpl_init)
 *   coll_halo   halo exchange on 2-D and 3-D grids, periodic and not,
 *               element sizes 1, 8 and 24, widths 0, 1 and 2, corners and
 *               FMPL_HALO_FACES, fmpl_halo_kind, changing data, several
 *               exchanges alive, sub-communicators, FMPL_ERR_LIMIT; the
 *               exchange in parts (start / test / wait, -o)
 *   coll_nb     the nonblocking collectives with fmpl_test / fmpl_wait:
 *               each alone, several in flight on one communicator and on
 *               several, blocking ones in between, user point-to-point
 *               beside them, errors (FMPL_ERR_BUSY from fmpl_comm_free), a
 *               random mix
 *   coll_neighbor  fmpl_neighbor_alltoallv blocking, nonblocking and
 *               persistent over random multigraphs, errors, truncation
 *   coll_kill   a rank killed during a collective: every survivor gets
 *               FMPL_ERR_PEER within seconds (as check_errors' kill test)
 * Each job runs with fmplrun -t; the Check timeout is larger.
 */
#include "fmpl.h"
#include "testlib.h"

#define JOB_TIMEOUT tl_job_timeout(90)
#define CK_TIMEOUT (JOB_TIMEOUT + 60)

struct spec {
    const char *prog;
    int np;                 /* 0: without the launcher */
    const char *env;
    const char *args[24];
};

#define NOCMA "FMPL_SHM_CMA=0"
#define PTHR "FMPL_PROGRESS_THREAD=1"

static const struct spec ops_specs[] = {
    {"coll_ops", 0, NULL, {NULL}},
    {"coll_ops", 1, NULL, {NULL}},
    {"coll_ops", 2, NULL, {NULL}},
    {"coll_ops", 3, NULL, {"-A", "256K", NULL}},         /* every root, every size */
    {"coll_ops", 4, NULL, {NULL}},
    {"coll_ops", 5, NULL, {"-s", "5", "-A", "64K", NULL}},
    {"coll_ops", 7, NULL, {"-M", "128K", "-s", "6", NULL}},
    {"coll_ops", 8, NULL, {"-M", "128K", NULL}},
    {"coll_ops", 4, NOCMA, {"-s", "8", NULL}},
    {"coll_ops", 3, PTHR, {"-s", "9", "-c", "ws", NULL}},
    {"coll_ops", 6, "FMPL_SHM_EAGER=1024", {"-M", "64K", "-c", "wc", NULL}},
    /* the big sizes: a few cases only */
    {"coll_ops", 3, NULL, {"-M", "8M", "-B", "-c", "w", NULL}},
    {"coll_ops", 8, NULL, {"-M", "8M", "-B", "-c", "w", NULL}},
    {"coll_ops", 4, NOCMA, {"-M", "4M", "-B", "-c", "s", NULL}},
    {"coll_ops", 5, "FMPL_SPLIT_MIN=0", {"-M", "2M", "-B", "-c", "c", NULL}},
    /* rank 0 shares its CPUs, the others have one each: they must still
     * choose each collective's algorithm alike */
    {"coll_ops", 3, "PROG_BIND=1", {"-M", "1M", "-B", "-c", "w", NULL}},
};

static const struct spec vops_specs[] = {
    {"coll_vops", 0, NULL, {NULL}},
    {"coll_vops", 1, NULL, {NULL}},
    {"coll_vops", 2, NULL, {NULL}},
    {"coll_vops", 3, NULL, {"-s", "3", NULL}},
    {"coll_vops", 4, NULL, {NULL}},
    {"coll_vops", 5, NULL, {"-s", "5", NULL}},
    {"coll_vops", 7, NULL, {"-s", "6", "-R", "60", NULL}},
    {"coll_vops", 8, NULL, {NULL}},
    {"coll_vops", 4, NOCMA, {"-s", "8", NULL}},
    {"coll_vops", 3, PTHR, {"-s", "9", "-c", "ws", NULL}},
    /* large blocks: alltoall up to 512 KiB a block, reduce_scatter 2 MiB */
    {"coll_vops", 4, NULL, {"-M", "2M", "-s", "10", NULL}},
    /* an alltoallv block longer than its receive size: FMPL_ERR_TRUNCATE */
    {"coll_vops", 3, NULL, {"-T", NULL}},
};

static const struct spec comm_specs[] = {
    /* matrix messages on a communicator: shapes, FIFO, locally blocking */
    {"comm_matrix", 1, NULL, {NULL}},
    {"comm_matrix", 2, NULL, {"-M", "700", "-k", "8", NULL}},
    {"comm_matrix", 3, NULL, {"-s", "3", NULL}},
    {"comm_matrix", 4, NULL, {"-S", "-s", "4", NULL}},
    {"comm_matrix", 3, NOCMA, {"-M", "500", NULL}},
    {"comm_matrix", 2, PTHR, {"-s", "9", NULL}},
    {"comm_matrix", 2, "FMPL_SPLIT_MIN=4096", {"-M", "600", "-s", "11", NULL}},
    /* queued sends while their sender stays away: pulled by the receiver,
     * or (beyond the announcement slots, or without remote reads)
     * delivered by the lazily started progress thread */
    {"comm_matrix", 3, "FMPL_PROGRESS_THREAD=0", {"-k", "2", "-P", "5", NULL}},
    {"comm_matrix", 4, NULL, {"-S", "-k", "2", "-P", "12", NULL}},
    {"comm_matrix", 2, NOCMA, {"-k", "2", "-P", "4", NULL}},
    /* the kernel refuses cross-memory attach: found at start-up, the
     * pipelined path carries everything */
    {"comm_matrix", 3, "PROG_DENY_CMA=1", {"-M", "500", "-k", "3", "-P", "4", NULL}},
    {"coll_comm", 0, NULL, {NULL}},
    {"coll_comm", 1, NULL, {NULL}},
    {"coll_comm", 2, NULL, {NULL}},
    {"coll_comm", 3, NULL, {NULL}},
    {"coll_comm", 4, NULL, {NULL}},
    {"coll_comm", 5, NULL, {NULL}},
    {"coll_comm", 7, NULL, {NULL}},
    {"coll_comm", 8, NULL, {NULL}},
    {"coll_comm", 4, NOCMA, {NULL}},
    {"coll_comm", 3, PTHR, {NULL}},
    {"coll_comm", 4, "FMPL_SHM_EAGER=1024", {"-t", "nip", NULL}},
    {"coll_comm", 3, "FMPL_MAX_COMMS=8", {"-t", "fl", "-L", "8", "-F", "40", NULL}},
    {"coll_comm", 8, "FMPL_MAX_COMMS=12", {"-t", "fl", "-L", "12", NULL}},
};

static const struct spec args_specs[] = {
    {"coll_args", 0, NULL, {NULL}},
    {"coll_args", 1, NULL, {NULL}},
    {"coll_args", 2, NULL, {NULL}},
    {"coll_args", 3, NULL, {NULL}},
    {"coll_args", 4, NOCMA, {NULL}},
    {"coll_args", 8, NULL, {NULL}},
};

/* -K pins fmpl_halo_kind where the layout leaves no doubt: B block,
 * T block-stride, S stride, N none (width 0) */
static const struct spec halo_specs[] = {
    /* one process, periodic: every neighbour is itself */
    {"coll_halo", 1, NULL, {"-g", "1x1", "-e", "8", "-K", "BS", NULL}},
    {"coll_halo", 0, NULL, {"-g", "1x1", "-w", "2", "-e", "24", "-m", NULL}},
    {"coll_halo", 1, NULL, {"-g", "1x1x1", "-e", "1", "-n", "5x4x3", "-f", NULL}},
    {"coll_halo", 1, NULL, {"-g", "1x1x1", "-w", "2x1x2", "-e", "8", "-m", NULL}},
    /* two: both neighbours along a dimension are the same process */
    {"coll_halo", 2, NULL, {"-g", "2x1", "-e", "8", "-K", "BS", NULL}},
    {"coll_halo", 2, NULL, {"-g", "1x2", "-e", "1", "-w", "2", "-n", "13x600", "-K", "TS", NULL}},
    {"coll_halo", 2, NULL, {"-g", "2x1", "-p", "00", "-w", "2", "-e", "24", "-m", NULL}},
    {"coll_halo", 2, NULL, {"-g", "1x2", "-p", "10", "-f", "-e", "8", NULL}},
    {"coll_halo", 2, NULL, {"-g", "2x1", "-w", "2x0", "-e", "8", "-K", "BN", NULL}},
    {"coll_halo", 3, NULL, {"-g", "3x1", "-e", "8", "-w", "2", "-n", "9x7", NULL}},
    {"coll_halo", 3, NULL, {"-g", "3x1", "-p", "00", "-e", "24", "-m", NULL}},
    {"coll_halo", 4, NULL, {"-g", "2x2", "-e", "8", "-w", "2", "-m", "-i", "10", NULL}},
    {"coll_halo", 4, NULL, {"-g", "2x2", "-p", "00", "-e", "24", "-K", "BS", NULL}},
    {"coll_halo", 4, NULL, {"-g", "2x2", "-f", "-e", "1", "-w", "2", NULL}},
    /* 3-D: the paper's layout (split in i and j, k whole) and others */
    {"coll_halo", 4, NULL, {"-g", "2x2x1", "-w", "1x1x0", "-e", "8", "-n", "8x8x40", "-K", "BTN",
                            NULL}},
    {"coll_halo", 4, NULL, {"-g", "2x2x1", "-e", "1", "-n", "6x6x300", "-K", "TTS", NULL}},
    {"coll_halo", 4, NULL, {"-g", "1x2x2", "-w", "2", "-e", "24", "-n", "5x6x6", "-m", NULL}},
    {"coll_halo", 4, NULL, {"-g", "2x1x2", "-p", "101", "-e", "8", "-f", NULL}},
    {"coll_halo", 4, NULL, {"-g", "1x2x2", "-p", "000", "-e", "1", "-m", NULL}},
    {"coll_halo", 6, NULL, {"-g", "2x3", "-w", "2", "-p", "00", "-n", "9x8", NULL}},
    {"coll_halo", 8, NULL, {"-g", "2x2x2", "-e", "8", "-n", "8x8x40", "-m", NULL}},
    {"coll_halo", 8, NULL, {"-g", "2x2x2", "-p", "000", "-w", "2", "-e", "24", "-n", "6x6x6",
                            "-f", NULL}},
    /* many exchanges of small arrays: epochs and reuse */
    {"coll_halo", 8, NULL, {"-g", "2x2x2", "-i", "200", "-n", "4x4x4", "-m", NULL}},
    {"coll_halo", 2, NULL, {"-g", "2x1", "-i", "500", "-w", "2", "-n", "4x3", "-m", "-f", NULL}},
    {"coll_halo", 3, NOCMA, {"-g", "1x3", "-p", "10", "-i", "300", "-n", "5x6", "-m", NULL}},
    /* sub-communicators with reversed ranks, some ranks outside */
    {"coll_halo", 5, NULL, {"-g", "2x2", "-S", "-e", "8", "-m", NULL}},
    {"coll_halo", 7, NULL, {"-g", "3x2", "-S", "-p", "01", "-w", "2x1", "-e", "1", "-n", "20x300",
                            NULL}},
    /* transports and progress */
    {"coll_halo", 4, NOCMA, {"-g", "2x2x1", "-e", "8", "-n", "8x8x40", "-m", NULL}},
    {"coll_halo", 4, NOCMA, {"-g", "2x2", "-w", "2", "-e", "24", "-f", NULL}},
    {"coll_halo", 4, PTHR, {"-g", "2x2", "-m", "-i", "10", NULL}},
    /* in parts: start, tests with work between them, waits; two under way */
    {"coll_halo", 4, NULL, {"-g", "2x2", "-o", "-m", "-i", "8", NULL}},
    {"coll_halo", 8, NULL, {"-g", "2x2x2", "-o", "-e", "8", "-n", "8x8x40", "-m", NULL}},
    {"coll_halo", 2, NULL, {"-g", "2x1", "-o", "-f", "-w", "2", "-i", "20", NULL}},
    {"coll_halo", 4, PTHR, {"-g", "2x2", "-o", "-m", "-i", "10", NULL}},
    /* slots: more exchanges than FMPL_MAX_HALOS one after the other, and
     * the limit */
    {"coll_halo", 4, NULL, {"-g", "2x2", "-c", "20", "-L", "16", "-m", "-i", "2", NULL}},
    {"coll_halo", 2, "FMPL_MAX_HALOS=3", {"-g", "2x1", "-c", "5", "-L", "3", NULL}},
};

/* the nonblocking collectives: alone, several in flight on one and on
 * several communicators, beside user point-to-point, errors, a mix */
static const struct spec nb_specs[] = {
    {"coll_nb", 0, NULL, {NULL}},
    {"coll_nb", 1, NULL, {NULL}},
    {"coll_nb", 2, NULL, {"-s", "2", NULL}},
    {"coll_nb", 3, NULL, {"-s", "3", NULL}},
    {"coll_nb", 5, NULL, {"-s", "5", "-R", "20", NULL}},
    {"coll_nb", 8, NULL, {"-M", "64K", "-R", "20", NULL}},
    {"coll_nb", 4, PTHR, {"-s", "4", NULL}},
    {"coll_nb", 4, NOCMA, {"-s", "6", "-M", "1M", NULL}},
};

/* neighbour exchanges over random multigraphs, the three forms */
static const struct spec neighbor_specs[] = {
    {"coll_neighbor", 0, NULL, {NULL}},
    {"coll_neighbor", 1, NULL, {NULL}},
    {"coll_neighbor", 2, NULL, {NULL}},
    {"coll_neighbor", 3, NULL, {"-s", "3", NULL}},
    {"coll_neighbor", 5, NULL, {"-e", "6", NULL}},
    {"coll_neighbor", 8, NULL, {"-s", "8", NULL}},
    {"coll_neighbor", 7, NULL, {"-S", "-s", "7", NULL}},
    {"coll_neighbor", 4, PTHR, {"-s", "4", NULL}},
    {"coll_neighbor", 4, NOCMA, {"-M", "300000", "-g", "3", NULL}},
};

static void run_spec(const struct spec *s)
{
    tl_run_worker(s->prog, s->np, s->env, s->args, JOB_TIMEOUT);
}

#define SPEC_TEST(name, table)                                                \
    START_TEST(test_##name) { run_spec(&table[_i]); }                         \
    END_TEST

SPEC_TEST(ops, ops_specs)
SPEC_TEST(vops, vops_specs)
SPEC_TEST(neighbor, neighbor_specs)
SPEC_TEST(nb, nb_specs)
SPEC_TEST(comm, comm_specs)
SPEC_TEST(args, args_specs)
SPEC_TEST(halo, halo_specs)

/* ---- a rank killed during a collective --------------------------------- */

/* nap: coll_kill -y (microseconds between fmpl_test calls) */
struct kspec { int np; const char *what; int sub; const char *env; int nap; };
static const struct kspec kill_specs[] = {
    {2, "barrier", 0, NULL, 0},
    {8, "barrier", 0, NULL, 0},
    {4, "barrier", 1, NULL, 0},
    {3, "bcast", 0, NULL, 0},
    {8, "bcast", 1, NULL, 0},
    {4, "hbcast", 0, NULL, 0},
    {3, "reduce", 0, NULL, 0},
    {5, "reduce", 1, NULL, 0},
    {2, "allreduce", 0, NULL, 0},
    {8, "allreduce", 0, NULL, 0},
    {3, "allreduce", 0, PTHR, 0},
    {4, "bigallreduce", 0, NULL, 0},
    {3, "allgather", 0, NOCMA, 0},
    {7, "allgather", 1, NULL, 0},
    {4, "gather", 0, NULL, 0},
    {5, "scatter", 0, NULL, 0},
    {3, "split", 0, NULL, 0},
    {4, "halo", 0, NULL, 0},
    {3, "halo", 1, NULL, 0},
    {4, "alltoall", 0, NULL, 0},
    {3, "iallreduce", 0, NULL, 0},
    {5, "ibcast", 1, NULL, 0},
    {4, "ialltoall", 0, NULL, 0},
    {4, "neighbor", 0, NULL, 0},
    {3, "iallreduce", 0, PTHR, 0},
    /* 4096 slow tests between two looks at the peer took 4 s */
    {3, "iallreduce", 0, NULL, 1000},
    {4, "ialltoall", 1, NULL, 1000},
};

START_TEST(test_kill)
{
    const struct kspec *k = &kill_specs[_i];
    job_t j;
    int st, r;
    char desc[200], left[1024];

    char nap[32];
    snprintf(nap, sizeof nap, "%d", k->nap);
    snprintf(desc, sizeof desc, "%s%sfmplrun -n %d coll_kill -w %s%s%s%s", k->env ? k->env : "",
             k->env ? " " : "", k->np, k->what, k->sub ? " -S" : "", k->nap ? " -y " : "",
             k->nap ? nap : "");
    ck_assert_msg(tl_have_prog("coll_kill"), "test/progs/coll_kill is not built");
    st = run_job(&j, k->np, k->env, 60, "coll_kill", "-w", k->what, "-y", nap,
                 k->sub ? "-S" : NULL, NULL);
    job_log(&j, desc);
    fprintf(stderr, "  %-60s status %d, %.2f s\n", desc, st, j.secs);
    ck_assert_msg(st != 0 && st != TL_HARD_TIMEOUT && st != 124,
                  "%s: exit status %d, expected a failure status; output:\n%s", desc, st,
                  job_tail(&j, 2500));
    ck_assert_msg(!job_has(&j, "FAIL"), "%s: a rank failed a check; output:\n%s", desc,
                  job_tail(&j, 2500));
    /* fmplrun's grace period is 3 s: a survivor that hangs is killed then,
     * without its FMPL_ERR_PEER line */
    ck_assert_msg(j.secs < 10.0, "%s: fmplrun took %.1f s after a rank died (limit 10 s); "
                  "output:\n%s", desc, j.secs, job_tail(&j, 2500));
    for (r = 0; r < k->np - 1; r++) {
        char line[64];
        snprintf(line, sizeof line, "coll_kill: rank %d: FMPL_ERR_PEER", r);
        ck_assert_msg(job_has(&j, line), "%s: rank %d did not report FMPL_ERR_PEER; "
                      "output:\n%s", desc, r, job_tail(&j, 2500));
    }
    ck_assert_msg(tl_pids_alive(&j, left, sizeof left) == 0, "%s: %s", desc, left);
    ck_assert_msg(job_leftovers(&j, 3.0, left, sizeof left) == 0, "%s: leftovers: %s", desc,
                  left);
    job_free(&j);
}
END_TEST

/* ---- the constants of the API ------------------------------------------ */

START_TEST(test_constants)
{
    /* the handles and ops are part of the ABI (Fortran uses the numbers) */
    ck_assert_int_eq(FMPL_COMM_WORLD, 0);
    ck_assert_int_eq(FMPL_COMM_NULL, -1);
    ck_assert_int_lt(FMPL_UNDEFINED, 0);
    ck_assert_int_eq(fmpl_isum, 1);
    ck_assert_int_eq(fmpl_zmin, 15);
    ck_assert_int_eq(fmpl_imax - fmpl_isum, 5);
    ck_assert_int_eq(fmpl_imin - fmpl_imax, 5);
    ck_assert_int_eq(FMPL_HALO_NONE, 0);
    ck_assert(FMPL_HALO_BLOCK != FMPL_HALO_BLOCK_STRIDE &&
              FMPL_HALO_BLOCK_STRIDE != FMPL_HALO_STRIDE && FMPL_HALO_BLOCK != FMPL_HALO_STRIDE);
    ck_assert_str_eq(fmpl_error_name(FMPL_ERR_COMM), "FMPL_ERR_COMM");
    ck_assert_str_eq(fmpl_error_name(FMPL_ERR_OP), "FMPL_ERR_OP");
    ck_assert_str_eq(fmpl_error_name(FMPL_ERR_LIMIT), "FMPL_ERR_LIMIT");
}
END_TEST

#define NSPEC(t) ((int)(sizeof t / sizeof t[0]))

static Suite *coll_suite(void)
{
    Suite *s = suite_create("coll");
    TCase *tc;

    tc = tcase_create("unit");
    tcase_add_test(tc, test_constants);
    suite_add_tcase(s, tc);

#define ADD(name, table)                                                      \
    tc = tcase_create(#name);                                                 \
    tcase_set_timeout(tc, CK_TIMEOUT);                                        \
    tcase_add_loop_test(tc, test_##name, 0, NSPEC(table));                    \
    suite_add_tcase(s, tc);

    ADD(args, args_specs)
    ADD(comm, comm_specs)
    ADD(halo, halo_specs)
    ADD(ops, ops_specs)
    ADD(vops, vops_specs)
    ADD(neighbor, neighbor_specs)
    ADD(nb, nb_specs)
    tc = tcase_create("peer_death");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_kill, 0, NSPEC(kill_specs));
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(coll_suite());
    int nfail;
    srunner_run_all(sr, CK_NORMAL);
    nfail = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nfail == 0 ? 0 : 1;
}
