/*
 * p2p.c - point-to-point sends and receives of general and trapezoidal
 * matrices (?gesd2d, ?gerv2d, ?trsd2d, ?trrv2d).
 *
 * One FMPL matrix message on the context's `all` communicator per call:
 * the pair's FIFO order is the BLACS order, the send is locally blocking
 * (it returns once A may be reused, even before the receive is posted)
 * and the data goes from A to A, strided on both sides, unpacked.
 */
#include "blacs.h"

static void check_peer(const blacs_ctx_t *c, int ictxt, int prow, int pcol,
                       const char *who, const char *rout)
{
    if (prow < 0 || prow >= c->nprow)
        blacs_fatal(ictxt, rout, "R%s out of range; R%s=%d, NPROW=%d", who, who, prow,
                    c->nprow);
    if (pcol < 0 || pcol >= c->npcol)
        blacs_fatal(ictxt, rout, "C%s out of range; C%s=%d, NPCOL=%d", who, who, pcol,
                    c->npcol);
}

/*
 * The shape both sides must agree on.  Any UPLO but 'U' means lower and
 * any DIAG but 'U' non-unit, as in the reference.  Every empty matrix is
 * the same empty message (of bytes): only its place in the pair's order
 * matters, so a 0 x 5 send meets a 0 x 3 receive as it does with MPI.
 */
static fmpl_matrix_t shape_of(int type, int ictxt, const char *uplo, const char *diag,
                              int m, int n, int lda, const char *rout)
{
    if (m <= 0 || n <= 0)
        return (fmpl_matrix_t){ .esize = 1, .m = 0, .n = 0, .ld = 1, .uplo = 'G',
                                .diag = 'N' };
    if (lda < m)
        blacs_warn(ictxt, rout, "Illegal LDA, LDA=%d, M=%d; LDA assumed to be %d", lda, m,
                   m);
    /* A row and a column of the same length are the same message, as with
     * MPI-BLACS (ScaLAPACK sends N x 1 and receives 1 x N): every vector
     * travels as 1 x length, a column with stride 1. */
    if (!uplo && (m == 1 || n == 1))
        return blacs_shape(type, 1, m == 1 ? n : m, n == 1 ? 1 : lda, 'G', 'N');
    char u = 'G', d = 'N';
    if (uplo) {
        u = blacs_upper(uplo) == 'U' ? 'U' : 'L';
        d = blacs_upper(diag) == 'U' ? 'U' : 'N';
    }
    return blacs_shape(type, m, n, lda, u, d);
}

static void fail(int rc, int ictxt, const char *rout, const char *dir, int prow, int pcol,
                 const fmpl_matrix_t *s)
{
    if (rc == FMPL_ERR_SHAPE)
        blacs_fatal(ictxt, rout, "message %s {%d,%d}: M, N, UPLO or DIAG of the send and "
                    "the receive differ (here %zu x %zu '%c%c')", dir, prow, pcol, s->m,
                    s->n, s->uplo, s->diag);
    blacs_fatal(ictxt, rout, "message %s {%d,%d}: %s (%s)", dir, prow, pcol,
                fmpl_error_name(rc), fmpl_strerror(rc));
}

void blacs_p2p_send(int type, int ictxt, const char *uplo, const char *diag, int m, int n,
                    const void *a, int lda, int rdest, int cdest, const char *rout)
{
    blacs_ctx_t *c = blacs_ctx(ictxt, rout);
    check_peer(c, ictxt, rdest, cdest, "DEST", rout);
    fmpl_matrix_t s = shape_of(type, ictxt, uplo, diag, m, n, lda, rout);
    int rc = fmpl_comm_sendm(a, &s, rdest * c->npcol + cdest, c->all);
    if (rc != FMPL_SUCCESS)
        fail(rc, ictxt, rout, "to", rdest, cdest, &s);
}

void blacs_p2p_recv(int type, int ictxt, const char *uplo, const char *diag, int m, int n,
                    void *a, int lda, int rsrc, int csrc, const char *rout)
{
    blacs_ctx_t *c = blacs_ctx(ictxt, rout);
    check_peer(c, ictxt, rsrc, csrc, "SRC", rout);
    fmpl_matrix_t s = shape_of(type, ictxt, uplo, diag, m, n, lda, rout);
    int rc = fmpl_comm_recvm(a, &s, rsrc * c->npcol + csrc, c->all);
    if (rc != FMPL_SUCCESS)
        fail(rc, ictxt, rout, "from", rsrc, csrc, &s);
}
