/*
 * context.c - FMPL start-up, the context table, system handles, grids.
 *
 * A context is a process grid over the processes of a "system handle".
 * System handles stand for FMPL communicators:
 *   0                      FMPL_COMM_WORLD (all processes, world order)
 *   BLACS_SYS_BASE + i     the i-th communicator registered with
 *                          Csys2blacs_handle / blacs_get(ctxt, 10, ...)
 *   a live context number  that context's processes in pnum order
 *                          (ScaLAPACK passes contexts as system handles)
 * Contexts are numbered from 0, lowest free slot first, per process: a
 * process outside a grid gets -1 and uses no slot.
 *
 * Grid creation splits the system communicator (collective over it);
 * grid processes get three communicators: all (rank = pnum), row and
 * column.  Freeing them is local in FMPL, but contexts are still freed in
 * creation order so that a collective free would never cross.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "blacs.h"

typedef struct ctx_rec {
    blacs_ctx_t c;                 /* first: blacs_ctx() hands out &rec->c */
    unsigned long born;            /* creation order */
    int ictxt;                     /* own number, for messages */
    int msgid[3];                  /* kbsid/kbrid counters: row, col, all */
} ctx_rec_t;

static ctx_rec_t **ctxs;           /* [nctxs], NULL = free slot */
static int nctxs;
static unsigned long births;

static fmpl_comm_t *sys;           /* [nsys], FMPL_COMM_NULL = free slot */
static int nsys;

/* blacs_set(WHAT 1): message-id range of contexts created afterwards */
static int id_min = 0, id_max = INT_MAX;

/* Debug level reported by blacs_get(WHAT 2): arguments are checked. */
#define BLACS_DEBUG_LEVEL 1

/* ------------------------------------------------------------------ */
/* FMPL start-up                                                        */
/* ------------------------------------------------------------------ */

int blacs_init(void)
{
    if (fmpl_size() > 0)
        return FMPL_SUCCESS;       /* the program (or we) started FMPL */
    /* every context costs three communicators; a user's value wins */
    setenv("FMPL_MAX_COMMS", "512", 0);
    return fmpl_init(1);
}

static void need_fmpl(const char *rout)
{
    int rc = blacs_init();
    if (rc != FMPL_SUCCESS)
        blacs_fatal(-1, rout, "cannot start FMPL: %s", fmpl_strerror(rc));
}

static void fmpl_check(int rc, int ictxt, const char *rout, const char *what)
{
    if (rc != FMPL_SUCCESS)
        blacs_fatal(ictxt, rout, "%s failed: %s (%s)", what, fmpl_error_name(rc),
                    fmpl_strerror(rc));
}

/* ------------------------------------------------------------------ */
/* Contexts                                                             */
/* ------------------------------------------------------------------ */

static ctx_rec_t *lookup(int ictxt)
{
    return ictxt >= 0 && ictxt < nctxs ? ctxs[ictxt] : NULL;
}

blacs_ctx_t *blacs_ctx(int ictxt, const char *rout)
{
    ctx_rec_t *r = lookup(ictxt);
    if (!r)
        blacs_fatal(ictxt, rout, "Invalid context handle: %d", ictxt);
    return &r->c;
}

int blacs_scope(const blacs_ctx_t *c, char scope, blacs_scope_t *s, const char *rout)
{
    switch (blacs_upper(&scope)) {
    case 'R':
        *s = (blacs_scope_t){ .comm = c->row, .rank = c->mycol, .size = c->npcol };
        return 0;
    case 'C':
        *s = (blacs_scope_t){ .comm = c->col, .rank = c->myrow, .size = c->nprow };
        return 0;
    case 'A':
        *s = (blacs_scope_t){ .comm = c->all, .rank = c->myrow * c->npcol + c->mycol,
                              .size = c->nprow * c->npcol };
        return 0;
    }
    blacs_fatal(((const ctx_rec_t *)c)->ictxt, rout, "Unknown scope '%c'", scope);
}

int blacs_world_rank(const blacs_ctx_t *c, int prow, int pcol)
{
    if (prow < 0 || prow >= c->nprow || pcol < 0 || pcol >= c->npcol)
        return -1;
    return c->pmap[prow * c->npcol + pcol];
}

/* a free slot number, growing the table as needed */
static int new_slot(void)
{
    for (int i = 0; i < nctxs; i++)
        if (!ctxs[i])
            return i;
    int n = nctxs ? 2 * nctxs : 8;
    ctx_rec_t **t = realloc(ctxs, (size_t)n * sizeof *t);
    if (!t)
        blacs_fatal(-1, "BLACS_GRIDMAP", "out of memory");
    for (int i = nctxs; i < n; i++)
        t[i] = NULL;
    ctxs = t;
    int slot = nctxs;
    nctxs = n;
    return slot;
}

/* ------------------------------------------------------------------ */
/* System handles                                                       */
/* ------------------------------------------------------------------ */

/* the communicator behind a system handle, FMPL_COMM_NULL for none */
static fmpl_comm_t sys_lookup(int h)
{
    if (h == 0)
        return FMPL_COMM_WORLD;
    if (h >= BLACS_SYS_BASE && h - BLACS_SYS_BASE < nsys)
        return sys[h - BLACS_SYS_BASE];
    ctx_rec_t *r = lookup(h);
    return r ? r->c.all : FMPL_COMM_NULL;
}

int blacs_sys_register(fmpl_comm_t comm, const char *rout)
{
    need_fmpl(rout);
    if (comm == FMPL_COMM_WORLD)
        return 0;
    int n;
    if (fmpl_comm_size(comm, &n) != FMPL_SUCCESS)
        blacs_fatal(-1, rout, "Cannot define a BLACS system handle based on %d: "
                    "not an FMPL communicator of this process", comm);
    int free_slot = -1;
    for (int i = 0; i < nsys; i++) {
        if (sys[i] == comm)
            return BLACS_SYS_BASE + i;
        if (sys[i] == FMPL_COMM_NULL && free_slot < 0)
            free_slot = i;
    }
    if (free_slot < 0) {
        int m = nsys ? 2 * nsys : 8;
        fmpl_comm_t *t = realloc(sys, (size_t)m * sizeof *t);
        if (!t)
            blacs_fatal(-1, rout, "out of memory");
        for (int i = nsys; i < m; i++)
            t[i] = FMPL_COMM_NULL;
        sys = t;
        free_slot = nsys;
        nsys = m;
    }
    sys[free_slot] = comm;
    return BLACS_SYS_BASE + free_slot;
}

fmpl_comm_t blacs_sys_comm(int handle, const char *rout)
{
    need_fmpl(rout);
    fmpl_comm_t c = sys_lookup(handle);
    if (c == FMPL_COMM_NULL)
        blacs_fatal(-1, rout, "No system context corresponding to BLACS system "
                    "context handle %d", handle);
    return c;
}

void blacs_sys_release(int handle, const char *rout)
{
    if (handle == 0)
        return;                    /* the world is never freed */
    int i = handle - BLACS_SYS_BASE;
    if (handle >= BLACS_SYS_BASE && i < nsys && sys[i] != FMPL_COMM_NULL)
        sys[i] = FMPL_COMM_NULL;   /* the communicator stays the caller's */
    else
        blacs_warn(-1, rout, "Trying to free non-existent system context handle %d",
                   handle);
}

/* Handles of a context's communicators die with it: FMPL reuses the
 * numbers of freed communicators. */
static void sys_forget(const blacs_ctx_t *c)
{
    for (int i = 0; i < nsys; i++)
        if (sys[i] == c->all || sys[i] == c->row || sys[i] == c->col)
            sys[i] = FMPL_COMM_NULL;
}

/* ------------------------------------------------------------------ */
/* Grids                                                                */
/* ------------------------------------------------------------------ */

/* Checks USERMAP against the system group (every process sees the same
 * map, so all fail together) and returns this process's pnum, -1 when it
 * is left out. */
static int map_pnum(const int *umap, int ld, int nprow, int npcol, int np, int me,
                    const char *rout)
{
    char *seen = calloc((size_t)np, 1);
    if (!seen)
        blacs_fatal(-1, rout, "out of memory");
    int pnum = -1;
    for (int j = 0; j < npcol; j++)
        for (int i = 0; i < nprow; i++) {
            int p = umap[(size_t)j * (size_t)ld + (size_t)i];
            if (p < 0 || p >= np)
                blacs_fatal(-1, rout, "USERMAP(%d,%d)=%d: not a process of the system "
                            "context (0..%d)", i + 1, j + 1, p, np - 1);
            if (seen[p])
                blacs_fatal(-1, rout, "process %d appears twice in USERMAP", p);
            seen[p] = 1;
            if (p == me)
                pnum = i * npcol + j;
        }
    free(seen);
    return pnum;
}

/* gridmap, errors naming `rout` (gridinit's or gridmap's) */
static void grid_map(int *ictxt, const int *usermap, int ldumap, int nprow, int npcol,
                     const char *rout)
{
    need_fmpl(rout);
    int h = *ictxt;
    fmpl_comm_t parent = sys_lookup(h);
    if (parent == FMPL_COMM_NULL)
        blacs_fatal(-1, rout, "No system context corresponding to BLACS system "
                    "context handle %d", h);
    int np, me;
    fmpl_check(fmpl_comm_size(parent, &np), -1, rout, "fmpl_comm_size");
    fmpl_check(fmpl_comm_rank(parent, &me), -1, rout, "fmpl_comm_rank");
    if (nprow < 1 || npcol < 1 || (long long)nprow * npcol > np)
        blacs_fatal(-1, rout, "Illegal grid (%d x %d), #procs=%d", nprow, npcol, np);
    if (ldumap < nprow)
        blacs_fatal(-1, rout, "Illegal LDUMAP=%d; must be at least NPROW=%d", ldumap,
                    nprow);
    if (!usermap)
        blacs_fatal(-1, rout, "USERMAP is NULL");
    int pnum = map_pnum(usermap, ldumap, nprow, npcol, np, me, rout);

    /* collective over the system group; rank in `all` = pnum */
    fmpl_comm_t all, row, col;
    fmpl_check(fmpl_comm_split(parent, pnum >= 0 ? 0 : FMPL_UNDEFINED, pnum, &all), -1,
               rout, "fmpl_comm_split");
    if (pnum < 0) {
        *ictxt = -1;
        return;
    }
    int myrow = pnum / npcol, mycol = pnum % npcol;
    fmpl_check(fmpl_comm_split(all, myrow, mycol, &row), -1, rout, "fmpl_comm_split");
    fmpl_check(fmpl_comm_split(all, mycol, myrow, &col), -1, rout, "fmpl_comm_split");

    ctx_rec_t *r = calloc(1, sizeof *r);
    int *pmap = malloc((size_t)nprow * (size_t)npcol * sizeof *pmap);
    if (!r || !pmap)
        blacs_fatal(-1, rout, "out of memory");
    for (int p = 0; p < nprow * npcol; p++)
        fmpl_check(fmpl_comm_world_rank(all, p, &pmap[p]), -1, rout,
                   "fmpl_comm_world_rank");
    int slot = new_slot();
    if (slot >= BLACS_SYS_BASE)
        blacs_fatal(-1, rout, "too many contexts alive");
    /* visible defaults of blacs_get WHAT 11..16 as in the reference */
    r->c = (blacs_ctx_t){ .used = 1, .nprow = nprow, .npcol = npcol, .myrow = myrow,
                          .mycol = mycol, .pmap = pmap, .all = all, .row = row,
                          .col = col, .sys = h, .nr_bs = 1, .nb_bs = 1, .nr_co = 1,
                          .nb_co = 1, .repeat = 0, .coherent = 0 };
    r->born = births++;
    r->ictxt = slot;
    r->msgid[0] = r->msgid[1] = r->msgid[2] = id_min;
    ctxs[slot] = r;
    *ictxt = slot;
}

void blacs_aux_gridmap(int *ictxt, const int *usermap, int ldumap, int nprow, int npcol)
{
    grid_map(ictxt, usermap, ldumap, nprow, npcol, "BLACS_GRIDMAP");
}

void blacs_aux_gridinit(int *ictxt, const char *order, int nprow, int npcol)
{
    /* the world bounds every system group: check before allocating */
    need_fmpl("BLACS_GRIDINIT");
    if (nprow < 1 || npcol < 1 || (long long)nprow * npcol > fmpl_size())
        blacs_fatal(-1, "BLACS_GRIDINIT", "Illegal grid (%d x %d), #procs=%d", nprow, npcol,
                    fmpl_size());
    int *map = malloc((size_t)nprow * (size_t)npcol * sizeof *map);
    if (!map)
        blacs_fatal(-1, "BLACS_GRIDINIT", "out of memory");
    /* map(i, j), column-major, ld = nprow: the process at grid (i, j) */
    int colmajor = blacs_upper(order) == 'C';
    for (int j = 0; j < npcol; j++)
        for (int i = 0; i < nprow; i++)
            map[j * nprow + i] = colmajor ? j * nprow + i : i * npcol + j;
    grid_map(ictxt, map, nprow, nprow, npcol, "BLACS_GRIDINIT");
    free(map);
}

static void ctx_free(ctx_rec_t *r)
{
    blacs_ctx_t *c = &r->c;
    sys_forget(c);
    blacs_coll_free(c);            /* the collectives' own communicator */
    fmpl_check(fmpl_comm_free(&c->col), r->ictxt, "BLACS_GRIDEXIT", "fmpl_comm_free");
    fmpl_check(fmpl_comm_free(&c->row), r->ictxt, "BLACS_GRIDEXIT", "fmpl_comm_free");
    fmpl_check(fmpl_comm_free(&c->all), r->ictxt, "BLACS_GRIDEXIT", "fmpl_comm_free");
    ctxs[r->ictxt] = NULL;
    free(c->pmap);
    free(r);
}

void blacs_aux_gridexit(int ictxt)
{
    if (ictxt < 0 || ictxt >= nctxs)
        blacs_fatal(ictxt, "BLACS_GRIDEXIT", "Trying to exit non-existent context %d",
                    ictxt);
    if (!ctxs[ictxt])
        blacs_fatal(ictxt, "BLACS_GRIDEXIT", "Trying to exit an already freed context %d",
                    ictxt);
    ctx_free(ctxs[ictxt]);
}

void blacs_aux_gridinfo(int ictxt, int *nprow, int *npcol, int *myrow, int *mycol)
{
    ctx_rec_t *r = lookup(ictxt);
    *nprow = r ? r->c.nprow : -1;
    *npcol = r ? r->c.npcol : -1;
    *myrow = r ? r->c.myrow : -1;
    *mycol = r ? r->c.mycol : -1;
}

int blacs_aux_pnum(int ictxt, int prow, int pcol)
{
    blacs_ctx_t *c = blacs_ctx(ictxt, "BLACS_PNUM");
    if (prow < 0 || prow >= c->nprow || pcol < 0 || pcol >= c->npcol)
        return -1;
    return prow * c->npcol + pcol;
}

void blacs_aux_pcoord(int ictxt, int pnum, int *prow, int *pcol)
{
    blacs_ctx_t *c = blacs_ctx(ictxt, "BLACS_PCOORD");
    if (pnum < 0 || pnum >= c->nprow * c->npcol) {
        *prow = *pcol = -1;
        return;
    }
    *prow = pnum / c->npcol;
    *pcol = pnum % c->npcol;
}

/* ------------------------------------------------------------------ */
/* Process information, barrier, exit, abort                            */
/* ------------------------------------------------------------------ */

void blacs_aux_pinfo(int *mypnum, int *nprocs)
{
    need_fmpl("BLACS_PINFO");
    *mypnum = fmpl_rank();
    *nprocs = fmpl_size();
}

void blacs_aux_barrier(int ictxt, const char *scope)
{
    static const char rout[] = "BLACS_BARRIER";
    blacs_ctx_t *c = blacs_ctx(ictxt, rout);
    blacs_scope_t s;
    blacs_scope(c, blacs_upper(scope), &s, rout);
    fmpl_check(fmpl_barrier(s.comm), ictxt, rout, "fmpl_barrier");
}

/*
 * A program built for ScaLAPACK's MPI-BLACS and run on this library with
 * LD_PRELOAD may have started MPI itself (Debian's BLACS testers do) and
 * relies on blacs_exit(0) to end it, as the MPI-BLACS do.  When MPI is in
 * the process, started and not yet ended, end it too.
 */
static void end_foreign_mpi(void)
{
    int (*started)(int *) = (int (*)(int *))dlsym(RTLD_DEFAULT, "MPI_Initialized");
    int (*ended)(int *) = (int (*)(int *))dlsym(RTLD_DEFAULT, "MPI_Finalized");
    int (*end)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "MPI_Finalize");
    int on = 0, off = 1;
    if (started && ended && end && started(&on) == 0 && on && ended(&off) == 0 && !off)
        end();
}

void blacs_aux_exit(int cont)
{
    /* oldest first: the order in which every member created them */
    for (;;) {
        ctx_rec_t *old = NULL;
        for (int i = 0; i < nctxs; i++)
            if (ctxs[i] && (!old || ctxs[i]->born < old->born))
                old = ctxs[i];
        if (!old)
            break;
        ctx_free(old);
    }
    free(ctxs);
    ctxs = NULL;
    nctxs = 0;
    if (cont)
        return;                    /* FMPL stays up for the program */
    free(sys);
    sys = NULL;
    nsys = 0;
    id_min = 0;
    id_max = INT_MAX;
    if (fmpl_size() > 0)
        fmpl_check(fmpl_finalize(), -1, "BLACS_EXIT", "fmpl_finalize");
    end_foreign_mpi();
}

void blacs_aux_abort(int ictxt, int errnum)
{
    int nprow, npcol, myrow, mycol;
    blacs_aux_gridinfo(ictxt, &nprow, &npcol, &myrow, &mycol);
    fprintf(stderr, "{%d,%d}, pnum=%d, Contxt=%d, BLACS_ABORT: ending every process "
            "with error #%d.\n\n", myrow, mycol, fmpl_rank(), ictxt, errnum);
    fflush(stdout);
    fflush(stderr);
    fmpl_abort(errnum);
    _Exit(errnum ? errnum : 1);    /* fmpl_abort does not return */
}

/* ------------------------------------------------------------------ */
/* blacs_get / blacs_set                                                */
/* ------------------------------------------------------------------ */

void blacs_aux_get(int ictxt, int what, int *val)
{
    static const char rout[] = "BLACS_GET";
    blacs_ctx_t *c;
    switch (what) {
    case 0:                        /* the system context: all processes */
        need_fmpl(rout);
        *val = 0;
        return;
    case 1:                        /* message-id range (kbsid/kbrid) */
        need_fmpl(rout);
        val[0] = id_min;
        val[1] = id_max;
        return;
    case 2:
        *val = BLACS_DEBUG_LEVEL;
        return;
    case 10:                       /* the system handle of the grid's processes */
        c = blacs_ctx(ictxt, rout);
        *val = blacs_sys_register(c->all, rout);
        return;
    case 11: *val = blacs_ctx(ictxt, rout)->nr_bs; return;
    case 12: *val = blacs_ctx(ictxt, rout)->nb_bs; return;
    case 13: *val = blacs_ctx(ictxt, rout)->nr_co; return;
    case 14: *val = blacs_ctx(ictxt, rout)->nb_co; return;
    case 15: *val = blacs_ctx(ictxt, rout)->repeat; return;
    case 16: *val = blacs_ctx(ictxt, rout)->coherent; return;
    }
    blacs_warn(ictxt, rout, "Unknown WHAT (%d)", what);
}

void blacs_aux_set(int ictxt, int what, const int *val)
{
    static const char rout[] = "BLACS_SET";
    blacs_ctx_t *c;
    switch (what) {
    case 0:
        blacs_warn(ictxt, rout, "Cannot set BLACS system context, can only BLACS_GET");
        return;
    case 1:
        /* FMPL has no tags: the range only numbers kbsid/kbrid ids, so it is
         * taken silently (the reference warns that it is not needed) */
        if (val[0] >= 0 && val[1] > val[0]) {
            id_min = val[0];
            id_max = val[1];
        } else {
            blacs_warn(ictxt, rout, "Illegal message ID range [%d, %d]", val[0], val[1]);
        }
        return;
    case 2:
        blacs_warn(ictxt, rout, "Cannot set BLACS debug level; it is fixed at %d",
                   BLACS_DEBUG_LEVEL);
        return;
    case 10:
        blacs_warn(ictxt, rout, "Cannot set BLACS context, can only BLACS_GET");
        return;
    case 11:
    case 13:
        c = blacs_ctx(ictxt, rout);
        if (*val == 0)
            blacs_warn(ictxt, rout, "%s nrings cannot be set to zero",
                       what == 11 ? "BSBR" : "COMB");
        else
            *(what == 11 ? &c->nr_bs : &c->nr_co) = *val;
        return;
    case 12:
    case 14:
        c = blacs_ctx(ictxt, rout);
        if (*val <= 0)
            blacs_warn(ictxt, rout, "Illegal %s nbranches (%d); must be strictly positive",
                       what == 12 ? "BSBR" : "COMB", *val);
        else
            *(what == 12 ? &c->nb_bs : &c->nb_co) = *val;
        return;
    case 15: blacs_ctx(ictxt, rout)->repeat = *val; return;
    case 16: blacs_ctx(ictxt, rout)->coherent = *val; return;
    }
    blacs_warn(ictxt, rout, "Unknown WHAT (%d)", what);
}

/* ------------------------------------------------------------------ */
/* Legacy message ids and timers                                        */
/* ------------------------------------------------------------------ */

/* The next id of a scope's sequence, cycling through [id_min, id_max). */
int blacs_msgid(int ictxt, const char *scope, const char *rout)
{
    ctx_rec_t *r = (ctx_rec_t *)blacs_ctx(ictxt, rout);
    blacs_scope_t s;
    char sc = blacs_upper(scope);
    blacs_scope(&r->c, sc, &s, rout);
    int *id = &r->msgid[sc == 'R' ? 0 : sc == 'C' ? 1 : 2];
    int v = *id;
    *id = v + 1 >= id_max ? id_min : v + 1;
    return v;
}

double blacs_walltime(void)
{
    return fmpl_wtime();
}

double blacs_cputime(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0)
        return -1.0;               /* the reference's "not available" */
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
