/*
 * blacs_fault - the last process fails at a chosen moment inside the BLACS
 * traffic of a dense solve; the job must end, not hang (the "blacs"
 * activity of test/fault_test.sh).
 *
 *   blacs_fault -f kill|stop|exit [-t MS]
 *
 * A 2 x (np/2) grid (1 x np for odd np) repeats what ScaLAPACK's LU
 * factorisation and solve do each step: the pivot search (Cdgamx2d down a
 * column), the panel broadcast along the rows (Cdgebs2d / Cdgebr2d, root
 * turning), the pivot rows swapped between two processes of a column
 * (Cdgesd2d / Cdgerv2d), a trapezoid to the process below (Cdtrsd2d /
 * Cdtrrv2d) and the residual's sum over all (Cdgsum2d).  The last process
 * fails MS (default 100) ms in by fault_timer.h (it prints "fault: rank V
 * fails (F) at T").
 *
 * A survivor does not see FMPL's error: as with MPI-BLACS, the BLACS
 * report it ("BLACS ERROR ... FMPL_ERR_PEER") and end the whole job
 * (fmpl_abort); stopped, it needs FMPL_PEER_TIMEOUT.  Every process prints
 * "fault: rank R pid P" first; one that finishes 100000 steps prints
 * "blacs_fault: rank R survived" and exits 1.
 */
#include "blacs_test.h"
#include "fault_timer.h"

#define NB 64                      /* a panel's width */

int main(int argc, char **argv)
{
    double at = 100;
    int opt, ctx;
    while ((opt = getopt(argc, argv, "f:t:")) != -1) {
        switch (opt) {
        case 'f': fault_kind = optarg; break;
        case 't': at = atof(optarg); break;
        default:
            fprintf(stderr, "usage: blacs_fault -f kill|stop|exit [-t MS]\n");
            return 2;
        }
    }
    CHECK(!strcmp(fault_kind, "kill") || !strcmp(fault_kind, "stop") ||
          !strcmp(fault_kind, "exit"), "unknown -f %s", fault_kind);
    bt_start("blacs_fault");
    fault_me = bt_me;
    CHECK(bt_np >= 2, "needs 2 processes or more, got %d", bt_np);
    printf("fault: rank %d pid %d\n", bt_me, (int)getpid());
    fflush(stdout);
    int nprow = bt_np % 2 ? 1 : 2, npcol = bt_np / nprow, myrow, mycol;
    Cblacs_get(-1, 0, &ctx);
    Cblacs_gridinit(&ctx, "R", nprow, npcol);
    Cblacs_gridinfo(ctx, &nprow, &npcol, &myrow, &mycol);

    const int m = 4 * NB;          /* local rows of a panel */
    double *panel = calloc((size_t)m * NB, sizeof(double));
    double *row = calloc(NB, sizeof(double)), res = 0;
    CHECK(panel && row, "calloc");
    int ri[1], ci[1];
    if (bt_me == bt_np - 1)
        arm(at);
    for (int k = 0; k < 100000; k++) {
        int pcol = k % npcol;      /* the panel's owners */
        /* pivot search down the panel's column of processes */
        if (mycol == pcol) {
            double piv = (double)((k * 31 + myrow * 7) % 97);
            Cdgamx2d(ctx, "C", " ", 1, 1, &piv, 1, ri, ci, 1, -1, -1);
        }
        /* the panel, along each row */
        if (mycol == pcol)
            Cdgebs2d(ctx, "R", " ", m, NB, panel, m);
        else
            Cdgebr2d(ctx, "R", " ", m, NB, panel, m, myrow, pcol);
        /* two rows swapped between the processes of a column */
        if (nprow == 2) {
            if (myrow == 0) {
                Cdgesd2d(ctx, 1, NB, row, 1, 1, mycol);
                Cdgerv2d(ctx, 1, NB, row, 1, 1, mycol);
            } else {
                Cdgerv2d(ctx, 1, NB, row, 1, 0, mycol);
                Cdgesd2d(ctx, 1, NB, row, 1, 0, mycol);
            }
            /* the updated triangle to the process below */
            if (myrow == 0)
                Cdtrsd2d(ctx, "L", "U", NB, NB, panel, m, 1, mycol);
            else
                Cdtrrv2d(ctx, "L", "U", NB, NB, panel, m, 0, mycol);
        }
        /* the residual */
        res = 1;
        Cdgsum2d(ctx, "A", " ", 1, 1, &res, 1, -1, -1);
        CHECK(res == bt_np, "the residual's sum is %g, not %d", res, bt_np);
    }
    printf("blacs_fault: rank %d survived\n", bt_me);
    return 1;
}
