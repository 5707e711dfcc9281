/*
 * neighbor.c - fmpl_neighbor_alltoallv and its nonblocking and persistent
 * forms: each member sends a block to each of its destinations and
 * receives one from each of its sources, a sparse all-to-all (PETSc's
 * vector scatters, unstructured halos).
 *
 * One schedule (sched.h) serves all three forms: the blocking call starts
 * it and waits, the nonblocking one returns its request, the persistent
 * one keeps the lists and builds the schedule again at every start.  The
 * blocks move by FMPL's receiver-initiated point-to-point, so each is
 * written once, straight from the send buffer into its place in the
 * receive buffer.  A peer named k times (a multigraph) is met in k
 * rounds: round r carries the r-th occurrence of every peer, which is
 * how both sides pair the k-th block to a peer with the k-th from it.
 */
#include <stdlib.h>
#include <string.h>

#include "coll/sched.h"

struct fmpl_neighbor {
    fmpl_comm_t comm;
    const uint8_t *sendbuf;
    uint8_t *recvbuf;
    int ndst, nsrc;
    int *dsts, *srcs;
    size_t *ssize, *sdisp, *rsize, *rdisp;
};

typedef struct nb_lists {
    const uint8_t *sendbuf;
    uint8_t *recvbuf;
    int ndst, nsrc;
    const int *dsts, *srcs;
    const size_t *ssize, *sdisp, *rsize, *rdisp;
} nb_lists_t;

static int check(const fmpl_comm_rec_t *c, const nb_lists_t *l)
{
    if (l->ndst < 0 || l->nsrc < 0)
        return FMPL_ERR_ARG;
    if ((l->ndst && (!l->dsts || !l->ssize || !l->sdisp)) ||
        (l->nsrc && (!l->srcs || !l->rsize || !l->rdisp)))
        return FMPL_ERR_ARG;
    for (int i = 0; i < l->ndst; i++) {
        if (l->dsts[i] < 0 || l->dsts[i] >= c->size)
            return FMPL_ERR_RANK;
        if (l->ssize[i] && !l->sendbuf)
            return FMPL_ERR_BUFFER;
    }
    for (int i = 0; i < l->nsrc; i++) {
        if (l->srcs[i] < 0 || l->srcs[i] >= c->size)
            return FMPL_ERR_RANK;
        if (l->rsize[i] && !l->recvbuf)
            return FMPL_ERR_BUFFER;
    }
    return FMPL_SUCCESS;
}

/* The schedule: round r holds every peer's r-th occurrence, so that two
 * messages to one peer never share a round (one index, one at a time). */
static int build(fmpl_comm_rec_t *c, const nb_lists_t *l, fmpl_request_t *req)
{
    fmpl_sched_t *s = fmpl_sched_new(c);
    if (!s)
        return FMPL_ERR_NOMEM;
    int n = c->size, most = 0;
    int *seen = calloc((size_t)n, sizeof *seen);
    int *rd = malloc(((size_t)l->ndst + (size_t)l->nsrc + 1) * sizeof *rd);
    if (!seen || !rd) {
        free(seen);
        free(rd);
        fmpl_sched_free(s);
        return FMPL_ERR_NOMEM;
    }
    /* occurrence number of each entry: sends, then (counted apart) receives */
    for (int i = 0; i < l->ndst; i++) {
        rd[i] = seen[l->dsts[i]]++;
        most = rd[i] + 1 > most ? rd[i] + 1 : most;
    }
    memset(seen, 0, (size_t)n * sizeof *seen);
    for (int i = 0; i < l->nsrc; i++) {
        rd[l->ndst + i] = seen[l->srcs[i]]++;
        most = rd[l->ndst + i] + 1 > most ? rd[l->ndst + i] + 1 : most;
    }
    for (int r = 0; r < most; r++) {
        for (int i = 0; i < l->nsrc; i++)
            if (rd[l->ndst + i] == r)
                fmpl_sched_recv(s, l->srcs[i], l->rsize[i] ? l->recvbuf + l->rdisp[i] : NULL,
                                l->rsize[i]);
        for (int i = 0; i < l->ndst; i++)
            if (rd[i] == r)
                fmpl_sched_send(s, l->dsts[i], l->ssize[i] ? l->sendbuf + l->sdisp[i] : NULL,
                                l->ssize[i]);
        fmpl_sched_round(s);
    }
    free(seen);
    free(rd);
    return fmpl_sched_start(s, req);
}

static int start_lists(fmpl_comm_t comm, const nb_lists_t *l, fmpl_request_t *req)
{
    fmpl_comm_rec_t *c;
    int rc = fmpl_coll_begin(comm, &c);
    if (rc != FMPL_SUCCESS)
        return rc;
    if (!req)
        return FMPL_ERR_ARG;
    if ((rc = check(c, l)) != FMPL_SUCCESS)
        return rc;
    fmpl_enter();
    rc = build(c, l, req);
    fmpl_leave();
    return rc;
}

int fmpl_ineighbor_alltoallv(const void *sendbuf, int ndst, const int dsts[],
                             const size_t sendsizes[], const size_t sdispls[], void *recvbuf,
                             int nsrc, const int srcs[], const size_t recvsizes[],
                             const size_t rdispls[], fmpl_comm_t comm, fmpl_request_t *req)
{
    nb_lists_t l = { sendbuf, recvbuf, ndst, nsrc, dsts, srcs, sendsizes, sdispls,
                     recvsizes, rdispls };
    return start_lists(comm, &l, req);
}

int fmpl_neighbor_alltoallv(const void *sendbuf, int ndst, const int dsts[],
                            const size_t sendsizes[], const size_t sdispls[], void *recvbuf,
                            int nsrc, const int srcs[], const size_t recvsizes[],
                            const size_t rdispls[], fmpl_comm_t comm)
{
    fmpl_request_t req;
    int rc = fmpl_ineighbor_alltoallv(sendbuf, ndst, dsts, sendsizes, sdispls, recvbuf, nsrc,
                                      srcs, recvsizes, rdispls, comm, &req);
    return rc != FMPL_SUCCESS ? rc : fmpl_wait(&req);
}

static void *dup_array(const void *a, size_t n, size_t each)
{
    void *p = malloc(n ? n * each : 1);
    if (p && n)
        memcpy(p, a, n * each);
    return p;
}

int fmpl_neighbor_init(const void *sendbuf, int ndst, const int dsts[], const size_t sendsizes[],
                       const size_t sdispls[], void *recvbuf, int nsrc, const int srcs[],
                       const size_t recvsizes[], const size_t rdispls[], fmpl_comm_t comm,
                       fmpl_neighbor_t *nb)
{
    fmpl_comm_rec_t *c;
    int rc = fmpl_coll_begin(comm, &c);
    if (rc != FMPL_SUCCESS)
        return rc;
    if (!nb)
        return FMPL_ERR_ARG;
    *nb = NULL;
    nb_lists_t l = { sendbuf, recvbuf, ndst, nsrc, dsts, srcs, sendsizes, sdispls,
                     recvsizes, rdispls };
    if ((rc = check(c, &l)) != FMPL_SUCCESS)
        return rc;
    struct fmpl_neighbor *p = calloc(1, sizeof *p);
    if (!p)
        return FMPL_ERR_NOMEM;
    p->comm = comm;
    p->sendbuf = sendbuf;
    p->recvbuf = recvbuf;
    p->ndst = ndst;
    p->nsrc = nsrc;
    p->dsts = dup_array(dsts, (size_t)ndst, sizeof *dsts);
    p->srcs = dup_array(srcs, (size_t)nsrc, sizeof *srcs);
    p->ssize = dup_array(sendsizes, (size_t)ndst, sizeof *sendsizes);
    p->sdisp = dup_array(sdispls, (size_t)ndst, sizeof *sdispls);
    p->rsize = dup_array(recvsizes, (size_t)nsrc, sizeof *recvsizes);
    p->rdisp = dup_array(rdispls, (size_t)nsrc, sizeof *rdispls);
    if (!p->dsts || !p->srcs || !p->ssize || !p->sdisp || !p->rsize || !p->rdisp) {
        fmpl_neighbor_free(&p);
        return FMPL_ERR_NOMEM;
    }
    *nb = p;
    return FMPL_SUCCESS;
}

int fmpl_neighbor_start(fmpl_neighbor_t nb, fmpl_request_t *req)
{
    if (!fmpl_g.initialized)
        return FMPL_ERR_NOT_INIT;
    if (!nb)
        return FMPL_ERR_ARG;
    nb_lists_t l = { nb->sendbuf, nb->recvbuf, nb->ndst, nb->nsrc, nb->dsts, nb->srcs,
                     nb->ssize, nb->sdisp, nb->rsize, nb->rdisp };
    return start_lists(nb->comm, &l, req);
}

int fmpl_neighbor_free(fmpl_neighbor_t *nb)
{
    if (!nb || !*nb)
        return FMPL_ERR_ARG;
    struct fmpl_neighbor *p = *nb;
    free(p->dsts);
    free(p->srcs);
    free(p->ssize);
    free(p->sdisp);
    free(p->rsize);
    free(p->rdisp);
    free(p);
    *nb = NULL;
    return FMPL_SUCCESS;
}
