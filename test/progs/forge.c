/*
 * forge - a peer writes into another's mailbox as a third rank: the
 * transport must drop it (transports that keep the mailbox by messages:
 * ofi, dcfa).
 *
 *   forge [-e]
 *     -e  expect the forgery to land instead (the check switched off:
 *         FMPL_OFI_CHECK_SOURCE=0) - proves the test sees a forgery
 *
 * Three ranks.  Rank 1 sends rank 2 a mailbox record written as rank 0's
 * (it lies in the message's writer word: what a buggy or hostile peer
 * can do), then an honest record of its own.  Rank 2 waits for the
 * honest one - messages are applied in order, so the forged one has been
 * looked at by then - and checks that rank 0's line still holds what
 * rank 0 wrote there: nothing.  The line is one of an index this program
 * never uses otherwise.  Rank 0 only waits.
 *
 * The record goes through the transport's own notify (test programs link
 * libfmpl.a and may call its insides); the lie is the transport's rank
 * word, changed around the call.
 */
#include "prog.h"

#include "p2p/state.h"
#include "transport/transport.h"

#define IDX 7                      /* an index nothing else here uses */

int main(int argc, char **argv)
{
    int expect_landed = 0;
    struct prog_opt opts[] = {
        {'e', OPT_FLAG, &expect_landed, "expect the forgery to land (check off)"},
    };
    prog_parse(argc, argv, opts, sizeof opts / sizeof opts[0]);
    prog_init("forge", 16);
    int rank = prog_me;
    CHECK(fmpl_size() == 3, "needs 3 ranks, has %d", fmpl_size());
    fmpl_tl_t *tl = &fmpl_g.tl;
    CHECK(tl->ops->notify && tl->ops->mbox_in, "transport %s has no mailbox", fmpl_transport());
    CHECK(IDX < tl->nidx, "index %d outside the %d indices", IDX, tl->nidx);
    const uint64_t forged = 0x666f72676564ull, honest = 0x686f6e657374ull;

    if (rank == 1) {
        /* an honest record first: the way to rank 2 exists before the
         * lie (on dcfa a connection request made in a lie is refused) */
        CHECK_RC(fmpl_tl_notify(tl, 2, IDX, 8, &honest, sizeof honest, 0, NULL), FMPL_SUCCESS);
        int me = tl->rank;
        tl->rank = 0;              /* the lie */
        int rc = fmpl_tl_notify(tl, 2, IDX, 0, &forged, sizeof forged, 0, NULL);
        tl->rank = me;
        CHECK_RC(rc, FMPL_SUCCESS);
        CHECK_RC(fmpl_tl_notify(tl, 2, IDX, 0, &honest, sizeof honest, 0, NULL), FMPL_SUCCESS);
    } else if (rank == 2) {
        volatile uint64_t *from1 = fmpl_tl_mbox_in(tl, 1, IDX);
        volatile uint64_t *from0 = fmpl_tl_mbox_in(tl, 0, IDX);
        double t0 = fmpl_wtime();
        while (*from1 != honest) {
            tl->ops->progress(tl);
            CHECK(fmpl_wtime() - t0 < 30, "rank 1's honest record never came");
        }
        uint64_t got = *from0;
        if (expect_landed)
            CHECK(got == forged, "the forgery did not land with the check off: rank 0's "
                  "line holds %#" PRIx64, got);
        else
            CHECK(got != forged, "rank 1 wrote rank 0's line: the forgery landed");
        printf("forge: rank 0's line holds %#" PRIx64 " (%s)\n", got,
               got == forged ? "the forgery" : "not the forgery");
    }
    prog_barrier(0);
    return prog_finish();
}
