/*
 * bcast.c - broadcasts: ?gebs2d / ?trbs2d at the root, ?gebr2d / ?trbr2d
 * everywhere else in the scope.
 *
 * Every topology but the default is a plan (topology.c): receive from the
 * parent, send to the children, each a matrix message straight from the
 * caller's array into the receiver's (strided, trapezoids included, no
 * packing).  Sends are locally blocking, so a ring's root returns after
 * its one send and the data pipelines down the ring.
 *
 * A send whose receive is not posted yet waits in the sender's queue
 * until the sender calls FMPL again: a root that computes after a ring
 * broadcast holds up its child meanwhile (FMPL_PROGRESS_THREAD=1 moves
 * the queue in the background).
 *
 * The default topology ' ' must choose the same algorithm on every
 * process, and only M, N, UPLO, DIAG are known everywhere: LDA may differ
 * between the root and each receiver.  Up to BCAST_FMPL_MAX bytes it is
 * fmpl_bcast: one-way signals written straight into the receivers, the
 * fastest for small data, and nothing left queued; a process packs or
 * unpacks on its own where its array is not one contiguous run.  Above,
 * a binary tree of matrix messages: one strided copy per child, no
 * packing anywhere (with 4 processes on 2 cores, 300 x 200 doubles took
 * about half the time of fmpl_bcast's segmented pipeline, contiguous or
 * not).
 */

#include "blacs.h"

#define BCAST_FMPL_MAX (64 * 1024)

static void check(int rc, int ictxt, const char *rout, const char *what)
{
    if (rc != FMPL_SUCCESS)
        blacs_fatal(ictxt, rout, "%s failed: %s (%s)", what, fmpl_error_name(rc),
                    fmpl_strerror(rc));
}

static int by_fmpl(const fmpl_matrix_t *s, void *a, size_t count, int me, int root,
                   fmpl_comm_t comm)
{
    size_t bytes = count * s->esize;
    if (s->uplo == 'G' && (s->ld == s->m || s->n == 1))
        return fmpl_bcast(a, bytes, root, comm);
    void *v = blacs_coll_scratch(BLACS_SCRATCH_A, bytes);
    if (!v)
        return FMPL_ERR_NOMEM;
    int rc = me == root ? fmpl_matrix_pack(a, s, v) : FMPL_SUCCESS;
    if (rc == FMPL_SUCCESS)
        rc = fmpl_bcast(v, bytes, root, comm);
    if (rc == FMPL_SUCCESS && me != root)
        rc = fmpl_matrix_unpack(v, s, a);
    return rc;
}

static void bcast(int type, int ictxt, const char *scope, const char *top, const char *uplo,
                  const char *diag, int m, int n, void *a, int lda, int rsrc, int csrc,
                  int isroot, const char *rout)
{
    blacs_ctx_t *c = blacs_ctx(ictxt, rout);
    char sc = blacs_upper(scope), t = blacs_upper(top);
    blacs_scope_t s;
    if (blacs_scope(c, sc, &s, rout))
        return;
    int root = s.rank;
    if (!isroot) {
        if ((sc != 'R' && (rsrc < 0 || rsrc >= c->nprow)) ||
            (sc != 'C' && (csrc < 0 || csrc >= c->npcol)))
            blacs_fatal(ictxt, rout, "Illegal source process {%d,%d} of a %d x %d grid",
                        rsrc, csrc, c->nprow, c->npcol);
        root = sc == 'R' ? csrc : sc == 'C' ? rsrc : rsrc * c->npcol + csrc;
        if (root == s.rank)
            blacs_fatal(ictxt, rout, "the source {%d,%d} cannot receive its own "
                        "broadcast", rsrc, csrc);
    }
    int kind = BLACS_TOPO_TREE, arg = 2;
    switch (t) {
    case ' ': break;
    case 'I': kind = BLACS_TOPO_PATHS; arg = 1; break;
    case 'D': kind = BLACS_TOPO_PATHS; arg = -1; break;
    case 'S': kind = BLACS_TOPO_SPLIT; break;
    case 'M': kind = BLACS_TOPO_PATHS; arg = c->nr_bs ? c->nr_bs : 1; break;
    case 'F': kind = BLACS_TOPO_PATHS; arg = s.size - 1; break;
    case 'H': kind = BLACS_TOPO_HYPER; break;
    case 'T': arg = blacs_tree_branches(c->nb_bs); break;
    default:
        if (t < '1' || t > '9')
            blacs_fatal(ictxt, rout, "Unknown topology '%c'", top ? *top : ' ');
        arg = blacs_tree_branches(t - '0');
    }
    char u = 'G', d = 'N';
    if (uplo) {                    /* as the reference: not 'U' is lower */
        u = blacs_upper(uplo) == 'U' ? 'U' : 'L';
        d = blacs_upper(diag) == 'U' ? 'U' : 'N';
    }
    fmpl_matrix_t sh = blacs_shape(type, m, n, lda, u, d);
    size_t count = fmpl_matrix_count(&sh);
    if (count == 0 || s.size < 2)  /* the same answer everywhere: no message */
        return;
    fmpl_comm_t comm = blacs_coll_comm(ictxt, rout, c, sc, &s);
    if (t == ' ' && count * sh.esize <= BCAST_FMPL_MAX) {
        check(by_fmpl(&sh, a, count, s.rank, root, comm), ictxt, rout, "fmpl_bcast");
        return;
    }
    int *kids = blacs_coll_scratch(BLACS_SCRATCH_KIDS, (size_t)s.size * sizeof *kids);
    if (!kids)
        blacs_fatal(ictxt, rout, "out of memory");
    int parent, nk = blacs_bcast_plan(kind, arg, s.size, s.rank, root, &parent, kids);
    if (parent >= 0)
        check(fmpl_comm_recvm(a, &sh, parent, comm), ictxt, rout, "fmpl_comm_recvm");
    for (int i = 0; i < nk; i++)
        check(fmpl_comm_sendm(a, &sh, kids[i], comm), ictxt, rout, "fmpl_comm_sendm");
}

void blacs_bs(int type, int ictxt, const char *scope, const char *top, const char *uplo,
              const char *diag, int m, int n, const void *a, int lda, const char *rout)
{
    /* the root only reads `a` */
    bcast(type, ictxt, scope, top, uplo, diag, m, n, (void *)a, lda, -1, -1, 1, rout);
}

void blacs_br(int type, int ictxt, const char *scope, const char *top, const char *uplo,
              const char *diag, int m, int n, void *a, int lda, int rsrc, int csrc,
              const char *rout)
{
    bcast(type, ictxt, scope, top, uplo, diag, m, n, a, lda, rsrc, csrc, 0, rout);
}
