/*
 * comm_p2p.c - fmpl_comm_sendm / fmpl_comm_recvm: matrix messages between
 * members of a communicator, on the communicator's own P2P index.  The
 * protocol is in p2p/matrix.c; here ranks become world ranks.
 */
#include "fmpl.h"
#include "coll/coll.h"
#include "p2p/progress.h"
#include "p2p/matrix.h"

_Static_assert(FMPL_COMM_NIDX - FMPL_CI_AUX == FMPL_MX_NAUX,
               "a communicator's last indices are the matrix messages' AUX lines");

static int begin(const void *a, const fmpl_matrix_t *shape, int peer, fmpl_comm_t comm,
                 fmpl_comm_rec_t **c, fmpl_mshape_t *s)
{
    int rc = fmpl_coll_begin(comm, c);
    if (rc != FMPL_SUCCESS)
        return rc;
    if (peer < 0 || peer >= (*c)->size)
        return FMPL_ERR_RANK;
    rc = fmpl_mshape_init(s, shape);
    if (rc != FMPL_SUCCESS)
        return rc;
    return !a && s->count ? FMPL_ERR_BUFFER : FMPL_SUCCESS;
}

int fmpl_comm_sendm(const void *a, const fmpl_matrix_t *shape, int dst, fmpl_comm_t comm)
{
    fmpl_comm_rec_t *c;
    fmpl_mshape_t s;
    int rc = begin(a, shape, dst, comm, &c, &s);
    if (rc != FMPL_SUCCESS)
        return rc;
    fmpl_enter();
    rc = fmpl_mx_send(a, &s, c->ranks[dst], fmpl_cidx(c, FMPL_CI_P2P),
                      fmpl_cidx(c, FMPL_CI_AUX));
    fmpl_leave();
    /* A queued send must not depend on our next FMPL call: the caller may
     * block elsewhere (in MPI, say) while its receiver waits for it.  Its
     * receiver pulls it when it was announced; one that could not be
     * (no remote reads, or many queued to one peer) needs the progress
     * thread, started here, outside the lock. */
    if (!fmpl_g.thread_on && fmpl_g.thread_lazy && fmpl_mx_stalled())
        fmpl_progress_thread_start();
    return rc;
}

int fmpl_comm_recvm(void *a, const fmpl_matrix_t *shape, int src, fmpl_comm_t comm)
{
    fmpl_comm_rec_t *c;
    fmpl_mshape_t s;
    int rc = begin(a, shape, src, comm, &c, &s);
    if (rc != FMPL_SUCCESS)
        return rc;
    fmpl_enter();
    rc = fmpl_mx_recv(a, &s, c->ranks[src], fmpl_cidx(c, FMPL_CI_P2P),
                      fmpl_cidx(c, FMPL_CI_AUX));
    fmpl_leave();
    return rc;
}
