/*
 * blacs.h - fmpl-blacs internals: contexts, scopes, element types.
 *
 * fmpl-blacs is the BLACS on FMPL's public interface.  A context is a
 * process grid with three FMPL communicators, one per scope:
 *   all  every grid process, rank = pnum = prow * npcol + pcol
 *   row  my grid row, rank = pcol
 *   col  my grid column, rank = prow
 * Point-to-point messages travel as FMPL matrix messages on `all`
 * (fmpl_comm_sendm/recvm): FIFO per pair and context, locally blocking,
 * strided on both sides without packing.  The BLACS have no tags: the
 * matching index is the context's own, the order is the pair's sequence.
 *
 * Every public entry point (C `Cxxx` and Fortran `xxx_`) is a thin
 * wrapper over one internal `blacs_*` function: internal calls never go
 * through the exported names (which a program or an LD_PRELOAD may
 * replace).  Only names marked BLACS_API leave the library.
 */
#ifndef FMPL_BLACS_H
#define FMPL_BLACS_H

#include <stddef.h>

#include "fmpl.h"

#define BLACS_API __attribute__((visibility("default")))

/* element types, in BLACS order */
enum { BLACS_I = 0, BLACS_S, BLACS_D, BLACS_C, BLACS_Z, BLACS_NTYPES };

typedef struct blacs_ctx {
    int used;
    int nprow, npcol, myrow, mycol;
    int *pmap;                     /* [nprow * npcol]: world rank of pnum */
    fmpl_comm_t all, row, col;     /* scope communicators */
    int sys;                       /* the system handle it was built from */
    /* blacs_set / blacs_get WHAT 11..16 */
    int nr_bs, nb_bs, nr_co, nb_co;
    int repeat, coherent;
} blacs_ctx_t;

/* Scope of one collective call, resolved from the context and 'R'/'C'/'A'. */
typedef struct blacs_scope {
    fmpl_comm_t comm;
    int rank, size;                /* in comm */
} blacs_scope_t;

/* context.c */
int  blacs_init(void);             /* start FMPL if nobody has; 0 or an FMPL error */
/* The live context `ictxt`, or NULL after reporting a BLACS error that
 * names `rout` (the caller's public name). */
blacs_ctx_t *blacs_ctx(int ictxt, const char *rout);
/* 'R'/'C'/'A' in any case -> scope of ctx; 0, or -1 after an error report */
int  blacs_scope(const blacs_ctx_t *c, char scope, blacs_scope_t *s, const char *rout);
/* world rank of grid process (prow, pcol), -1 outside the grid */
int  blacs_world_rank(const blacs_ctx_t *c, int prow, int pcol);

/* error.c: BLACS warnings ("BLACS WARNING ... from {r,c}, pnum=...") on
 * stderr; errors end the job as the reference does (blacs_abort). */
void blacs_warn(int ictxt, const char *rout, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void blacs_fatal(int ictxt, const char *rout, const char *fmt, ...)
    __attribute__((format(printf, 3, 4), noreturn));

/* bytes per element of a BLACS type */
static inline size_t blacs_esize(int type)
{
    static const size_t sz[BLACS_NTYPES] = { sizeof(int), sizeof(float), sizeof(double),
                                             2 * sizeof(float), 2 * sizeof(double) };
    return sz[type];
}

/* A single-character argument, upper-cased (Fortran passes 'Row', 'all'). */
static inline char blacs_upper(const char *c)
{
    char ch = c ? *c : ' ';
    return ch >= 'a' && ch <= 'z' ? (char)(ch - 'a' + 'A') : ch;
}

/* The matrix shape of a general (uplo 'G') or trapezoidal M x N array. */
static inline fmpl_matrix_t blacs_shape(int type, int m, int n, int lda, char uplo,
                                        char diag)
{
    fmpl_matrix_t s = { .esize = blacs_esize(type), .m = m > 0 ? (size_t)m : 0,
                        .n = n > 0 ? (size_t)n : 0, .uplo = uplo, .diag = diag };
    s.ld = lda > 0 && (size_t)lda >= s.m ? (size_t)lda : (s.m ? s.m : 1);
    return s;
}


/* ------------------------------------------------------------------ */
/* Added by the context / point-to-point side (context.c, p2p.c).      */
/* Internal names never look like a public BLACS name in any Fortran   */
/* mangling (blacs_gridinit, BLACS_GRIDINIT, ...): a static link must  */
/* not bind a user's call to them.                                     */
/* ------------------------------------------------------------------ */

/* Registered system handles (other than 0 = FMPL_COMM_WORLD) count from
 * here: above every possible context number, so a context number given
 * as a system handle (ScaLAPACK's PDLAQR3 does that) is never mistaken for
 * a registered handle. */
#define BLACS_SYS_BASE 65536

/* context.c: the auxiliary routines behind the public wrappers */
void   blacs_aux_pinfo(int *mypnum, int *nprocs);
void   blacs_aux_get(int ictxt, int what, int *val);
void   blacs_aux_set(int ictxt, int what, const int *val);
void   blacs_aux_gridinit(int *ictxt, const char *order, int nprow, int npcol);
void   blacs_aux_gridmap(int *ictxt, const int *usermap, int ldumap, int nprow, int npcol);
void   blacs_aux_gridexit(int ictxt);
void   blacs_aux_gridinfo(int ictxt, int *nprow, int *npcol, int *myrow, int *mycol);
int    blacs_aux_pnum(int ictxt, int prow, int pcol);
void   blacs_aux_pcoord(int ictxt, int pnum, int *prow, int *pcol);
void   blacs_aux_barrier(int ictxt, const char *scope);
void   blacs_aux_exit(int cont);
void   blacs_aux_abort(int ictxt, int errnum) __attribute__((noreturn));
int    blacs_sys_register(fmpl_comm_t comm, const char *rout);   /* sys2blacs */
fmpl_comm_t blacs_sys_comm(int handle, const char *rout);         /* blacs2sys */
void   blacs_sys_release(int handle, const char *rout);          /* free handle */
int    blacs_msgid(int ictxt, const char *scope, const char *rout); /* kbsid/kbrid */
double blacs_cputime(void);
double blacs_walltime(void);

/* p2p.c: ?gesd2d/?gerv2d (uplo 'G') and ?trsd2d/?trrv2d (uplo, diag as
 * the caller gave them) on ctx->all; errors end the job. */
void blacs_p2p_send(int type, int ictxt, const char *uplo, const char *diag, int m, int n,
                    const void *a, int lda, int rdest, int cdest, const char *rout);
void blacs_p2p_recv(int type, int ictxt, const char *uplo, const char *diag, int m, int n,
                    void *a, int lda, int rsrc, int csrc, const char *rout);


/* ------------------------------------------------------------------ */
/* Added by the collectives side (bcast.c, combine.c, topology.c).     */
/* ------------------------------------------------------------------ */

/* combine operations */
enum { BLACS_SUM = 0, BLACS_AMX, BLACS_AMN };

/* bcast.c: ?gebs2d/?trbs2d (uplo NULL = general) and ?gebr2d/?trbr2d */
void blacs_bs(int type, int ictxt, const char *scope, const char *top, const char *uplo,
              const char *diag, int m, int n, const void *a, int lda, const char *rout);
void blacs_br(int type, int ictxt, const char *scope, const char *top, const char *uplo,
              const char *diag, int m, int n, void *a, int lda, int rsrc, int csrc,
              const char *rout);

/* combine.c: ?gsum2d (op BLACS_SUM, ra/ca unused) and ?gamx2d/?gamn2d */
void blacs_comb(int type, int op, int ictxt, const char *scope, const char *top, int m,
                int n, void *a, int lda, int *ra, int *ca, int ldia, int rdest, int cdest,
                const char *rout);

/* comb_ops.c: loc = with (value, distance) elements (location arrays) */
size_t blacs_comb_esize(int type, int loc);    /* bytes per element */
size_t blacs_comb_locoff(int type);            /* offset of the int distance */
/* the operation, for fmpl_reduce / fmpl_allreduce / fmpl_op_apply */
int    blacs_comb_fmpl_op(int op, int type, int loc, fmpl_op_t *h);

/* topology.c.  blacs_coll_comm() is the communicator a collective of a
 * scope travels on: the scope's own, for 'A' a duplicate of ctx->all
 * (made by the first 'A' collective; see topology.c).
 * blacs_coll_free() releases what the collectives keep for a
 * context (its scope-'A' communicator); call it when freeing the context,
 * on every grid process, before its communicators are freed. */
void  blacs_coll_free(const blacs_ctx_t *c);
fmpl_comm_t blacs_coll_comm(int ictxt, const char *rout, const blacs_ctx_t *c, char scope,
                            const blacs_scope_t *s);
enum { BLACS_SCRATCH_A = 0, BLACS_SCRATCH_B, BLACS_SCRATCH_KIDS, BLACS_SCRATCH_N };
void *blacs_coll_scratch(int slot, size_t bytes);
/* broadcast plans: kind BLACS_TOPO_*, arg = branches (tree) or signed
 * number of paths; returns the number of children written to kids[] (at
 * most n - 1), *parent = -1 at the root */
enum { BLACS_TOPO_TREE = 0, BLACS_TOPO_HYPER, BLACS_TOPO_PATHS, BLACS_TOPO_SPLIT };
int   blacs_bcast_plan(int kind, int arg, int n, int me, int root, int *parent, int *kids);
int   blacs_tree_branches(int k);  /* blacs_set's k (or '1'..'9') -> branches */

#endif
