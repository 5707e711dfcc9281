/*
 * fmpl_fortran_coll.c - Fortran bindings of the communicators, collectives
 * and halo exchange, in the paper's style (see fmpl_fortran.c for the
 * conventions: trailing underscore, arguments by reference, `ier` last):
 *
 *   call fmpl_comm_create(comm, key, ier)        ! the paper's order
 *   call fmpl_comm_split(comm, color, key, newcomm, ier)
 *   call fmpl_comm_rank(comm, rank, ier)
 *   call fmpl_comm_size(comm, size, ier)
 *   call fmpl_comm_free(comm, ier)
 *   call fmpl_barrier(comm, ier)
 *   call fmpl_bcast(buf, size, root, comm, ier)  ! size INTEGER*8 bytes
 *   call fmpl_hbcast(buf, size, root, ier)
 *   call fmpl_reduce(buf, count, func, root, comm, work, ier)
 *   call fmpl_allreduce(buf, count, func, comm, work, ier)
 *   call fmpl_allgather(sendbuf, size, recvbuf, comm, ier)
 *   call fmpl_gather(sendbuf, size, recvbuf, root, comm, ier)
 *   call fmpl_scatter(sendbuf, size, recvbuf, root, comm, ier)
 *   call fmpl_allgatherv(sendbuf, size, recvbuf, sizes, displs, comm, ier)
 *   call fmpl_gatherv(sendbuf, size, recvbuf, sizes, displs, root, comm, ier)
 *   call fmpl_scatterv(sendbuf, sizes, displs, recvbuf, size, root, comm, ier)
 *   call fmpl_alltoall(sendbuf, size, recvbuf, comm, ier)
 *   call fmpl_alltoallv(sendbuf, sendsizes, sdispls, recvbuf, recvsizes,
 *                       rdispls, comm, ier)
 *   call fmpl_reduce_scatter(sendbuf, recvbuf, counts, func, comm, ier)
 *   call fmpl_scan(sendbuf, recvbuf, count, func, comm, ier)
 *   call fmpl_exscan(sendbuf, recvbuf, count, func, comm, ier)
 *   call fmpl_ibarrier(comm, req, ier)
 *   call fmpl_ibcast(buf, size, root, comm, req, ier)
 *   call fmpl_ireduce(buf, count, func, root, comm, req, ier)
 *   call fmpl_iallreduce(buf, count, func, comm, req, ier)
 *   call fmpl_iallgather(sendbuf, size, recvbuf, comm, req, ier)
 *   call fmpl_igather(sendbuf, size, recvbuf, root, comm, req, ier)
 *   call fmpl_iscatter(sendbuf, size, recvbuf, root, comm, req, ier)
 *   call fmpl_ialltoall(sendbuf, size, recvbuf, comm, req, ier)
 *   call fmpl_neighbor_alltoallv(sendbuf, ndst, dsts, sendsizes, sdispls,
 *                                recvbuf, nsrc, srcs, recvsizes, rdispls,
 *                                comm, ier)
 *   call fmpl_ineighbor_alltoallv(sendbuf, ndst, dsts, sendsizes, sdispls,
 *                                 recvbuf, nsrc, srcs, recvsizes, rdispls,
 *                                 comm, req, ier)
 *   call fmpl_neighbor_init(sendbuf, ndst, dsts, sendsizes, sdispls,
 *                           recvbuf, nsrc, srcs, recvsizes, rdispls,
 *                           comm, nb, ier)
 *   call fmpl_neighbor_start(nb, req, ier)
 *   call fmpl_neighbor_free(nb, ier)
 *   call fmpl_halo_init(array, elem_size, ndims, extent, shadow, nbr,
 *                       flags, comm, halo, ier)
 *   call fmpl_halo_do(halo, ier)
 *   call fmpl_halo_start(halo, ier)
 *   call fmpl_halo_test(halo, done, ier)
 *   call fmpl_halo_wait(halo, ier)
 *   call fmpl_halo_kind(halo, d, kind, ier)
 *   call fmpl_halo_free(halo, ier)
 *
 * The nonblocking collectives take the arguments of the blocking ones
 * (ireduce and iallreduce without `work`: the library keeps its own
 * scratch) and a request `req` before `ier`: an INTEGER*8 array of
 * FMPL_REQUEST_WORDS elements, as for fmpl_isend (fmpl_fortran.c; a
 * misaligned one is FMPL_ERR_ARG), ended by fmpl_wait (or fmpl_test,
 * then fmpl_wait).  Their buffers are the library's until then: pass
 * whole contiguous arrays, declared ASYNCHRONOUS.  done (fmpl_halo_test)
 * is a default INTEGER, 1 when the exchange is over, else 0.
 *
 * count, counts, func, root, comm, key, color, rank, ndims, flags, d, kind,
 * done, ndst, nsrc, dsts, srcs: default INTEGER; func is one of the
 * fmpl_[iscdz]{sum,max,min} constants of fmplf.h; `work` an array the
 * size of buf (the paper's scratch area); dsts and srcs arrays of ndst
 * and nsrc ranks of comm, from 0 as in C.
 * sizes, displs, sendsizes, sdispls, recvsizes, rdispls: INTEGER*8 arrays
 * of one byte count per member of comm, copied into size_t arrays; a
 * negative one is FMPL_ERR_ARG.  Those that fmpl.h reads at the root only
 * (gatherv, scatterv) are read at the root only here too, so the other
 * members may pass any array (of one element, say).  The neighbour
 * exchanges' have one per list entry instead: ndst for sendsizes and
 * sdispls, nsrc for recvsizes and rdispls.  Their buffers are the
 * library's until the request's wait (ineighbor, start) or until
 * fmpl_neighbor_free (init): ASYNCHRONOUS, like the halo array.  nb is
 * INTEGER*8, as halo is (an address; 0 after fmpl_neighbor_free).
 * The halo calls take the array's dimensions in FORTRAN order: for
 * a(1-w:nx+w, 1-w:ny+w) pass extent = (/nx, ny/), shadow = (/w, w/),
 * nbr = (/lower_x, upper_x, lower_y, upper_y/) (ranks in comm, -1 for
 * none), and d = 1..ndims in fmpl_halo_kind; the binding turns them into
 * the C order of fmpl.h.  elem_size and halo are INTEGER*8 (the handle
 * is an address).
 */
#include <stdint.h>
#include <stddef.h>
#include <stdlib.h>

#include "fmpl.h"
#include "coll/halo.h"

#define FMPLF_API __attribute__((visibility("default")))

/* include/fmplf.h repeats these values; keep both files in step. */
_Static_assert(FMPL_COMM_WORLD == 0 && FMPL_COMM_NULL == -1 && FMPL_UNDEFINED == -32766 &&
               fmpl_isum == 1 && fmpl_zsum == 5 && fmpl_imax == 6 && fmpl_zmax == 10 &&
               fmpl_imin == 11 && fmpl_zmin == 15 && FMPL_HALO_FACES == 1 &&
               FMPL_HALO_BLOCK == 1 && FMPL_HALO_BLOCK_STRIDE == 2 && FMPL_HALO_STRIDE == 3,
               "constants changed: update include/fmplf.h");

FMPLF_API void fmpl_comm_create_(int *comm, const int *key, int *ier)
{
    *ier = fmpl_comm_create(*key, comm);
}

FMPLF_API void fmpl_comm_split_(const int *comm, const int *color, const int *key,
                                int *newcomm, int *ier)
{
    *ier = fmpl_comm_split(*comm, *color, *key, newcomm);
}

FMPLF_API void fmpl_comm_rank_(const int *comm, int *rank, int *ier)
{
    *ier = fmpl_comm_rank(*comm, rank);
}

FMPLF_API void fmpl_comm_size_(const int *comm, int *size, int *ier)
{
    *ier = fmpl_comm_size(*comm, size);
}

FMPLF_API void fmpl_comm_free_(int *comm, int *ier)
{
    *ier = fmpl_comm_free(comm);
}

FMPLF_API void fmpl_barrier_(const int *comm, int *ier)
{
    *ier = fmpl_barrier(*comm);
}

/* INTEGER*8 byte counts; negative ones are bad arguments */
#define FSIZE(s) (*(s) < 0 ? (size_t)-1 : (size_t)*(s))
#define CHECK_SIZE(s)                                                          \
    do {                                                                       \
        if (*(s) < 0) {                                                        \
            *ier = FMPL_ERR_ARG;                                               \
            return;                                                            \
        }                                                                      \
    } while (0)

FMPLF_API void fmpl_bcast_(void *buf, const int64_t *size, const int *root, const int *comm,
                           int *ier)
{
    CHECK_SIZE(size);
    *ier = fmpl_bcast(buf, FSIZE(size), *root, *comm);
}

FMPLF_API void fmpl_hbcast_(void *buf, const int64_t *size, const int *root, int *ier)
{
    CHECK_SIZE(size);
    *ier = fmpl_hbcast(buf, FSIZE(size), *root);
}

FMPLF_API void fmpl_reduce_(void *buf, const int *count, const int *func, const int *root,
                            const int *comm, void *work, int *ier)
{
    *ier = fmpl_reduce(buf, *count, *func, *root, *comm, work);
}

FMPLF_API void fmpl_allreduce_(void *buf, const int *count, const int *func, const int *comm,
                               void *work, int *ier)
{
    *ier = fmpl_allreduce(buf, *count, *func, *comm, work);
}

FMPLF_API void fmpl_allgather_(const void *sendbuf, const int64_t *size, void *recvbuf,
                               const int *comm, int *ier)
{
    CHECK_SIZE(size);
    *ier = fmpl_allgather(sendbuf, FSIZE(size), recvbuf, *comm);
}

FMPLF_API void fmpl_gather_(const void *sendbuf, const int64_t *size, void *recvbuf,
                            const int *root, const int *comm, int *ier)
{
    CHECK_SIZE(size);
    *ier = fmpl_gather(sendbuf, FSIZE(size), recvbuf, *root, *comm);
}

FMPLF_API void fmpl_scatter_(const void *sendbuf, const int64_t *size, void *recvbuf,
                             const int *root, const int *comm, int *ier)
{
    CHECK_SIZE(size);
    *ier = fmpl_scatter(sendbuf, FSIZE(size), recvbuf, *root, *comm);
}

/*
 * The byte counts of the v-variants: n INTEGER*8 values (n the size of
 * comm) as size_t, in `small` when they fit, else in memory of their own.
 * A NULL array stays NULL (so that the C call reports it).  Returns
 * FMPL_SUCCESS, FMPL_ERR_ARG (a negative value) or FMPL_ERR_NOMEM;
 * fsizes_free() releases what it took.
 */
#define FSIZES_SMALL 64
typedef struct {
    size_t small[FSIZES_SMALL];
    size_t *v;
} fsizes_t;

static int fsizes(fsizes_t *s, const int64_t *f, int n)
{
    s->v = NULL;
    if (f == NULL)
        return FMPL_SUCCESS;
    for (int i = 0; i < n; i++)
        if (f[i] < 0)
            return FMPL_ERR_ARG;
    size_t *v = n <= FSIZES_SMALL ? s->small : malloc((size_t)n * sizeof *v);
    if (v == NULL)
        return FMPL_ERR_NOMEM;
    for (int i = 0; i < n; i++)
        v[i] = (size_t)f[i];
    s->v = v;
    return FMPL_SUCCESS;
}

static void fsizes_free(fsizes_t *s)
{
    if (s->v != s->small)
        free(s->v);
    s->v = NULL;
}

/* sizes and displacements together, n from comm; on an error neither
 * holds anything */
static int fsizes_pair(fsizes_t *a, const int64_t *fa, fsizes_t *b, const int64_t *fb, int comm)
{
    int n, rc = fmpl_comm_size(comm, &n);
    a->v = b->v = NULL;
    if (rc == FMPL_SUCCESS && (rc = fsizes(a, fa, n)) == FMPL_SUCCESS &&
        (rc = fsizes(b, fb, n)) != FMPL_SUCCESS)
        fsizes_free(a);
    return rc;
}

/* whether this member is `root` of comm, for what fmpl.h reads at the
 * root only.  Where comm is bad, yes: fmpl_comm_size then reports it.  A
 * bad root is nobody's rank: every member passes NULL arrays and the C
 * call reports the root. */
static int fis_root(int comm, int root)
{
    int me;
    return fmpl_comm_rank(comm, &me) != FMPL_SUCCESS || me == root;
}

FMPLF_API void fmpl_allgatherv_(const void *sendbuf, const int64_t *size, void *recvbuf,
                                const int64_t *sizes, const int64_t *displs, const int *comm,
                                int *ier)
{
    CHECK_SIZE(size);
    fsizes_t sz, dp;
    int rc = fsizes_pair(&sz, sizes, &dp, displs, *comm);
    if (rc == FMPL_SUCCESS)
        rc = fmpl_allgatherv(sendbuf, FSIZE(size), recvbuf, sz.v, dp.v, *comm);
    fsizes_free(&dp);
    fsizes_free(&sz);
    *ier = rc;
}

FMPLF_API void fmpl_gatherv_(const void *sendbuf, const int64_t *size, void *recvbuf,
                             const int64_t *sizes, const int64_t *displs, const int *root,
                             const int *comm, int *ier)
{
    CHECK_SIZE(size);
    fsizes_t sz = { .v = NULL }, dp = { .v = NULL };
    int rc = fis_root(*comm, *root) ? fsizes_pair(&sz, sizes, &dp, displs, *comm)
                                    : FMPL_SUCCESS;
    if (rc == FMPL_SUCCESS)
        rc = fmpl_gatherv(sendbuf, FSIZE(size), recvbuf, sz.v, dp.v, *root, *comm);
    fsizes_free(&dp);
    fsizes_free(&sz);
    *ier = rc;
}

FMPLF_API void fmpl_scatterv_(const void *sendbuf, const int64_t *sizes, const int64_t *displs,
                              void *recvbuf, const int64_t *size, const int *root,
                              const int *comm, int *ier)
{
    CHECK_SIZE(size);
    fsizes_t sz = { .v = NULL }, dp = { .v = NULL };
    int rc = fis_root(*comm, *root) ? fsizes_pair(&sz, sizes, &dp, displs, *comm)
                                    : FMPL_SUCCESS;
    if (rc == FMPL_SUCCESS)
        rc = fmpl_scatterv(sendbuf, sz.v, dp.v, recvbuf, FSIZE(size), *root, *comm);
    fsizes_free(&dp);
    fsizes_free(&sz);
    *ier = rc;
}

FMPLF_API void fmpl_alltoall_(const void *sendbuf, const int64_t *size, void *recvbuf,
                              const int *comm, int *ier)
{
    CHECK_SIZE(size);
    *ier = fmpl_alltoall(sendbuf, FSIZE(size), recvbuf, *comm);
}

FMPLF_API void fmpl_alltoallv_(const void *sendbuf, const int64_t *sendsizes,
                               const int64_t *sdispls, void *recvbuf, const int64_t *recvsizes,
                               const int64_t *rdispls, const int *comm, int *ier)
{
    fsizes_t ss, sd, rs = { .v = NULL }, rd = { .v = NULL };
    int rc = fsizes_pair(&ss, sendsizes, &sd, sdispls, *comm);
    if (rc == FMPL_SUCCESS)
        rc = fsizes_pair(&rs, recvsizes, &rd, rdispls, *comm);
    if (rc == FMPL_SUCCESS)
        rc = fmpl_alltoallv(sendbuf, ss.v, sd.v, recvbuf, rs.v, rd.v, *comm);
    fsizes_free(&rd);
    fsizes_free(&rs);
    fsizes_free(&sd);
    fsizes_free(&ss);
    *ier = rc;
}

FMPLF_API void fmpl_reduce_scatter_(const void *sendbuf, void *recvbuf, const int *counts,
                                    const int *func, const int *comm, int *ier)
{
    *ier = fmpl_reduce_scatter(sendbuf, recvbuf, counts, *func, *comm);
}

FMPLF_API void fmpl_scan_(const void *sendbuf, void *recvbuf, const int *count, const int *func,
                          const int *comm, int *ier)
{
    *ier = fmpl_scan(sendbuf, recvbuf, *count, *func, *comm);
}

FMPLF_API void fmpl_exscan_(const void *sendbuf, void *recvbuf, const int *count,
                            const int *func, const int *comm, int *ier)
{
    *ier = fmpl_exscan(sendbuf, recvbuf, *count, *func, *comm);
}

/* INTEGER*8 request array -> C request; NULL if misaligned (as in
 * fmpl_fortran.c) */
static inline fmpl_request_t *freq(int64_t *req)
{
    if ((uintptr_t)req % _Alignof(fmpl_request_t) != 0)
        return NULL;
    return (fmpl_request_t *)(void *)req;
}

/* the nonblocking collectives: a misaligned request is FMPL_ERR_ARG, as
 * a NULL one is for the C call */
FMPLF_API void fmpl_ibarrier_(const int *comm, int64_t *req, int *ier)
{
    fmpl_request_t *r = freq(req);
    *ier = r ? fmpl_ibarrier(*comm, r) : FMPL_ERR_ARG;
}

FMPLF_API void fmpl_ibcast_(void *buf, const int64_t *size, const int *root, const int *comm,
                            int64_t *req, int *ier)
{
    CHECK_SIZE(size);
    fmpl_request_t *r = freq(req);
    *ier = r ? fmpl_ibcast(buf, FSIZE(size), *root, *comm, r) : FMPL_ERR_ARG;
}

FMPLF_API void fmpl_ireduce_(void *buf, const int *count, const int *func, const int *root,
                             const int *comm, int64_t *req, int *ier)
{
    fmpl_request_t *r = freq(req);
    *ier = r ? fmpl_ireduce(buf, *count, *func, *root, *comm, r) : FMPL_ERR_ARG;
}

FMPLF_API void fmpl_iallreduce_(void *buf, const int *count, const int *func, const int *comm,
                                int64_t *req, int *ier)
{
    fmpl_request_t *r = freq(req);
    *ier = r ? fmpl_iallreduce(buf, *count, *func, *comm, r) : FMPL_ERR_ARG;
}

FMPLF_API void fmpl_iallgather_(const void *sendbuf, const int64_t *size, void *recvbuf,
                                const int *comm, int64_t *req, int *ier)
{
    CHECK_SIZE(size);
    fmpl_request_t *r = freq(req);
    *ier = r ? fmpl_iallgather(sendbuf, FSIZE(size), recvbuf, *comm, r) : FMPL_ERR_ARG;
}

FMPLF_API void fmpl_igather_(const void *sendbuf, const int64_t *size, void *recvbuf,
                             const int *root, const int *comm, int64_t *req, int *ier)
{
    CHECK_SIZE(size);
    fmpl_request_t *r = freq(req);
    *ier = r ? fmpl_igather(sendbuf, FSIZE(size), recvbuf, *root, *comm, r) : FMPL_ERR_ARG;
}

FMPLF_API void fmpl_iscatter_(const void *sendbuf, const int64_t *size, void *recvbuf,
                              const int *root, const int *comm, int64_t *req, int *ier)
{
    CHECK_SIZE(size);
    fmpl_request_t *r = freq(req);
    *ier = r ? fmpl_iscatter(sendbuf, FSIZE(size), recvbuf, *root, *comm, r) : FMPL_ERR_ARG;
}

FMPLF_API void fmpl_ialltoall_(const void *sendbuf, const int64_t *size, void *recvbuf,
                               const int *comm, int64_t *req, int *ier)
{
    CHECK_SIZE(size);
    fmpl_request_t *r = freq(req);
    *ier = r ? fmpl_ialltoall(sendbuf, FSIZE(size), recvbuf, *comm, r) : FMPL_ERR_ARG;
}

/*
 * The neighbour exchanges' byte counts: sendsizes and sdispls of ndst
 * elements, recvsizes and rdispls of nsrc, as size_t (fsizes).  A
 * negative ndst or nsrc converts nothing, for the C call to report.  On
 * an error none holds anything; fnb_free() releases what they took.
 */
typedef struct {
    fsizes_t ss, sd, rs, rd;
} fnb_t;

static void fnb_free(fnb_t *l)
{
    fsizes_free(&l->rd);
    fsizes_free(&l->rs);
    fsizes_free(&l->sd);
    fsizes_free(&l->ss);
}

static int fnb_lists(fnb_t *l, const int64_t *sendsizes, const int64_t *sdispls, int ndst,
                     const int64_t *recvsizes, const int64_t *rdispls, int nsrc)
{
    int rc;
    l->ss.v = l->sd.v = l->rs.v = l->rd.v = NULL;
    if ((rc = fsizes(&l->ss, sendsizes, ndst)) != FMPL_SUCCESS ||
        (rc = fsizes(&l->sd, sdispls, ndst)) != FMPL_SUCCESS ||
        (rc = fsizes(&l->rs, recvsizes, nsrc)) != FMPL_SUCCESS ||
        (rc = fsizes(&l->rd, rdispls, nsrc)) != FMPL_SUCCESS)
        fnb_free(l);
    return rc;
}

FMPLF_API void fmpl_neighbor_alltoallv_(const void *sendbuf, const int *ndst, const int *dsts,
                                        const int64_t *sendsizes, const int64_t *sdispls,
                                        void *recvbuf, const int *nsrc, const int *srcs,
                                        const int64_t *recvsizes, const int64_t *rdispls,
                                        const int *comm, int *ier)
{
    fnb_t l;
    int rc = fnb_lists(&l, sendsizes, sdispls, *ndst, recvsizes, rdispls, *nsrc);
    if (rc == FMPL_SUCCESS)
        rc = fmpl_neighbor_alltoallv(sendbuf, *ndst, dsts, l.ss.v, l.sd.v, recvbuf, *nsrc,
                                     srcs, l.rs.v, l.rd.v, *comm);
    fnb_free(&l);
    *ier = rc;
}

/* the lists are read when the exchange starts: their size_t copies may
 * go when the call returns */
FMPLF_API void fmpl_ineighbor_alltoallv_(const void *sendbuf, const int *ndst, const int *dsts,
                                         const int64_t *sendsizes, const int64_t *sdispls,
                                         void *recvbuf, const int *nsrc, const int *srcs,
                                         const int64_t *recvsizes, const int64_t *rdispls,
                                         const int *comm, int64_t *req, int *ier)
{
    fmpl_request_t *r = freq(req);
    if (r == NULL) {
        *ier = FMPL_ERR_ARG;
        return;
    }
    fnb_t l;
    int rc = fnb_lists(&l, sendsizes, sdispls, *ndst, recvsizes, rdispls, *nsrc);
    if (rc == FMPL_SUCCESS)
        rc = fmpl_ineighbor_alltoallv(sendbuf, *ndst, dsts, l.ss.v, l.sd.v, recvbuf, *nsrc,
                                      srcs, l.rs.v, l.rd.v, *comm, r);
    fnb_free(&l);
    *ier = rc;
}

/* fmpl_neighbor_init copies the lists; nb is 0 unless it succeeds */
FMPLF_API void fmpl_neighbor_init_(const void *sendbuf, const int *ndst, const int *dsts,
                                   const int64_t *sendsizes, const int64_t *sdispls,
                                   void *recvbuf, const int *nsrc, const int *srcs,
                                   const int64_t *recvsizes, const int64_t *rdispls,
                                   const int *comm, int64_t *nb, int *ier)
{
    fmpl_neighbor_t h = NULL;
    fnb_t l;
    int rc = fnb_lists(&l, sendsizes, sdispls, *ndst, recvsizes, rdispls, *nsrc);
    if (rc == FMPL_SUCCESS)
        rc = fmpl_neighbor_init(sendbuf, *ndst, dsts, l.ss.v, l.sd.v, recvbuf, *nsrc, srcs,
                                l.rs.v, l.rd.v, *comm, &h);
    fnb_free(&l);
    *nb = (int64_t)(intptr_t)h;
    *ier = rc;
}

FMPLF_API void fmpl_neighbor_start_(const int64_t *nb, int64_t *req, int *ier)
{
    fmpl_request_t *r = freq(req);
    *ier = r ? fmpl_neighbor_start((fmpl_neighbor_t)(intptr_t)*nb, r) : FMPL_ERR_ARG;
}

FMPLF_API void fmpl_neighbor_free_(int64_t *nb, int *ier)
{
    fmpl_neighbor_t h = (fmpl_neighbor_t)(intptr_t)*nb;
    *ier = fmpl_neighbor_free(&h);
    if (*ier == FMPL_SUCCESS)
        *nb = 0;
}

FMPLF_API void fmpl_halo_init_(void *array, const int64_t *elem_size, const int *ndims,
                               const int *extent, const int *shadow, const int *nbr,
                               const int *flags, const int *comm, int64_t *halo, int *ier)
{
    int nd = *ndims, ext[FMPL_HALO_MAXD], sh[FMPL_HALO_MAXD], nb[2 * FMPL_HALO_MAXD];
    /* Fortran order -> C order; a bad ndims goes through unchanged, so
     * that fmpl_halo_init still takes part and reports it everywhere */
    for (int d = 0; nd <= FMPL_HALO_MAXD && d < nd; d++) {
        ext[d] = extent[nd - 1 - d];
        sh[d] = shadow[nd - 1 - d];
        nb[2 * d] = nbr[2 * (nd - 1 - d)];
        nb[2 * d + 1] = nbr[2 * (nd - 1 - d) + 1];
    }
    fmpl_halo_t h = NULL;
    *ier = fmpl_halo_init(array, *elem_size > 0 ? (size_t)*elem_size : 0, nd,
                          ext, sh, nb, (unsigned)*flags, *comm, &h);
    *halo = (int64_t)(intptr_t)h;
}

FMPLF_API void fmpl_halo_do_(const int64_t *halo, int *ier)
{
    *ier = fmpl_halo_do((fmpl_halo_t)(intptr_t)*halo);
}

FMPLF_API void fmpl_halo_start_(const int64_t *halo, int *ier)
{
    *ier = fmpl_halo_start((fmpl_halo_t)(intptr_t)*halo);
}

FMPLF_API void fmpl_halo_test_(const int64_t *halo, int *done, int *ier)
{
    int d = 0;
    *ier = fmpl_halo_test((fmpl_halo_t)(intptr_t)*halo, &d);
    *done = d ? 1 : 0;
}

FMPLF_API void fmpl_halo_wait_(const int64_t *halo, int *ier)
{
    *ier = fmpl_halo_wait((fmpl_halo_t)(intptr_t)*halo);
}

FMPLF_API void fmpl_halo_kind_(const int64_t *halo, const int *d, int *kind, int *ier)
{
    fmpl_halo_t h = (fmpl_halo_t)(intptr_t)*halo;
    int nd = h ? h->me.ndims : 0;
    int k = *d >= 1 && *d <= nd ? fmpl_halo_kind(h, nd - *d) : FMPL_ERR_ARG;
    *kind = k < 0 ? 0 : k;
    *ier = k < 0 ? k : FMPL_SUCCESS;
}

FMPLF_API void fmpl_halo_free_(int64_t *halo, int *ier)
{
    fmpl_halo_t h = (fmpl_halo_t)(intptr_t)*halo;
    *ier = fmpl_halo_free(&h);
    if (*ier == FMPL_SUCCESS)
        *halo = 0;
}
