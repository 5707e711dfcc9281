/*
 * api_aux.c - public entry points of the BLACS support routines, C
 * (Cblacs_*, scalars by value) and Fortran (blacs_*_, everything by
 * reference, hidden CHARACTER lengths ignored).  Each is a thin wrapper
 * over one internal function of context.c; inputs are never written
 * (Fortran may pass read-only literals).
 */
#include "blacs.h"
#include "fmpl_blacs.h"

/* ------------------------------------------------------------------ */
/* C                                                                    */
/* ------------------------------------------------------------------ */

BLACS_API void Cblacs_pinfo(int *mypnum, int *nprocs) { blacs_aux_pinfo(mypnum, nprocs); }
BLACS_API void Cblacs_setup(int *mypnum, int *nprocs) { blacs_aux_pinfo(mypnum, nprocs); }

BLACS_API void Cblacs_get(int ConTxt, int what, int *val) { blacs_aux_get(ConTxt, what, val); }
BLACS_API void Cblacs_set(int ConTxt, int what, int *val) { blacs_aux_set(ConTxt, what, val); }

BLACS_API void Cblacs_gridinit(int *ConTxt, char *order, int nprow, int npcol)
{
    blacs_aux_gridinit(ConTxt, order, nprow, npcol);
}

BLACS_API void Cblacs_gridmap(int *ConTxt, int *usermap, int ldumap, int nprow, int npcol)
{
    blacs_aux_gridmap(ConTxt, usermap, ldumap, nprow, npcol);
}

BLACS_API void Cblacs_gridexit(int ConTxt) { blacs_aux_gridexit(ConTxt); }

BLACS_API void Cblacs_gridinfo(int ConTxt, int *nprow, int *npcol, int *myrow, int *mycol)
{
    blacs_aux_gridinfo(ConTxt, nprow, npcol, myrow, mycol);
}

BLACS_API int Cblacs_pnum(int ConTxt, int prow, int pcol)
{
    return blacs_aux_pnum(ConTxt, prow, pcol);
}

BLACS_API void Cblacs_pcoord(int ConTxt, int nodenum, int *prow, int *pcol)
{
    blacs_aux_pcoord(ConTxt, nodenum, prow, pcol);
}

BLACS_API void Cblacs_barrier(int ConTxt, char *scope) { blacs_aux_barrier(ConTxt, scope); }
BLACS_API void Cblacs_exit(int NotDone) { blacs_aux_exit(NotDone); }
BLACS_API void Cblacs_abort(int ConTxt, int ErrNo) { blacs_aux_abort(ConTxt, ErrNo); }

/* FMPL keeps no BLACS send buffers: nothing to release or wait for. */
BLACS_API void Cblacs_freebuff(int ConTxt, int Wait) { (void)ConTxt; (void)Wait; }

BLACS_API int Csys2blacs_handle(fmpl_comm_t SysCtxt)
{
    return blacs_sys_register(SysCtxt, "Csys2blacs_handle");
}

BLACS_API fmpl_comm_t Cblacs2sys_handle(int BlacsCtxt)
{
    return blacs_sys_comm(BlacsCtxt, "Cblacs2sys_handle");
}

BLACS_API void Cfree_blacs_system_handle(int ISysCtxt)
{
    blacs_sys_release(ISysCtxt, "Cfree_blacs_system_handle");
}

BLACS_API double Cdcputime00(void) { return blacs_cputime(); }
BLACS_API double Cdwalltime00(void) { return blacs_walltime(); }

/* The reference's fixed point-to-point id (its tag 9976, plus one). */
#define BLACS_PT2PT_ID 9977

BLACS_API int Cksendid(int ConTxt, int rdest, int cdest)
{
    (void)ConTxt, (void)rdest, (void)cdest;
    return BLACS_PT2PT_ID;
}

BLACS_API int Ckrecvid(int ConTxt, int rsrc, int csrc)
{
    (void)ConTxt, (void)rsrc, (void)csrc;
    return BLACS_PT2PT_ID;
}

BLACS_API int Ckbsid(int ConTxt, char *scope) { return blacs_msgid(ConTxt, scope, "Ckbsid"); }

BLACS_API int Ckbrid(int ConTxt, char *scope, int rsrc, int csrc)
{
    (void)rsrc, (void)csrc;
    return blacs_msgid(ConTxt, scope, "Ckbrid");
}

/* ------------------------------------------------------------------ */
/* Fortran                                                              */
/* ------------------------------------------------------------------ */

BLACS_API void blacs_pinfo_(int *mypnum, int *nprocs) { blacs_aux_pinfo(mypnum, nprocs); }
BLACS_API void blacs_setup_(int *mypnum, int *nprocs) { blacs_aux_pinfo(mypnum, nprocs); }

BLACS_API void blacs_get_(int *ConTxt, int *what, int *val)
{
    blacs_aux_get(*ConTxt, *what, val);
}

BLACS_API void blacs_set_(int *ConTxt, int *what, int *val)
{
    blacs_aux_set(*ConTxt, *what, val);
}

BLACS_API void blacs_gridinit_(int *ConTxt, char *order, int *nprow, int *npcol)
{
    blacs_aux_gridinit(ConTxt, order, *nprow, *npcol);
}

BLACS_API void blacs_gridmap_(int *ConTxt, int *usermap, int *ldumap, int *nprow, int *npcol)
{
    blacs_aux_gridmap(ConTxt, usermap, *ldumap, *nprow, *npcol);
}

BLACS_API void blacs_gridexit_(int *ConTxt) { blacs_aux_gridexit(*ConTxt); }

BLACS_API void blacs_gridinfo_(int *ConTxt, int *nprow, int *npcol, int *myrow, int *mycol)
{
    blacs_aux_gridinfo(*ConTxt, nprow, npcol, myrow, mycol);
}

BLACS_API int blacs_pnum_(int *ConTxt, int *prow, int *pcol)
{
    return blacs_aux_pnum(*ConTxt, *prow, *pcol);
}

BLACS_API void blacs_pcoord_(int *ConTxt, int *nodenum, int *prow, int *pcol)
{
    blacs_aux_pcoord(*ConTxt, *nodenum, prow, pcol);
}

BLACS_API void blacs_barrier_(int *ConTxt, char *scope) { blacs_aux_barrier(*ConTxt, scope); }
BLACS_API void blacs_exit_(int *NotDone) { blacs_aux_exit(*NotDone); }
BLACS_API void blacs_abort_(int *ConTxt, int *ErrNo) { blacs_aux_abort(*ConTxt, *ErrNo); }

BLACS_API void blacs_freebuff_(int *ConTxt, int *Wait) { (void)ConTxt; (void)Wait; }

/* Fortran's system context is the FMPL communicator handle itself. */
BLACS_API int sys2blacs_handle_(int *SysCtxt)
{
    return blacs_sys_register(*SysCtxt, "SYS2BLACS_HANDLE");
}

BLACS_API int blacs2sys_handle_(int *BlacsCtxt)
{
    return blacs_sys_comm(*BlacsCtxt, "BLACS2SYS_HANDLE");
}

BLACS_API void free_blacs_system_handle_(int *ISysCtxt)
{
    blacs_sys_release(*ISysCtxt, "FREE_BLACS_SYSTEM_HANDLE");
}

BLACS_API double dcputime00_(void) { return blacs_cputime(); }
BLACS_API double dwalltime00_(void) { return blacs_walltime(); }

BLACS_API int ksendid_(int *ConTxt, int *rdest, int *cdest)
{
    (void)ConTxt, (void)rdest, (void)cdest;
    return BLACS_PT2PT_ID;
}

BLACS_API int krecvid_(int *ConTxt, int *rsrc, int *csrc)
{
    (void)ConTxt, (void)rsrc, (void)csrc;
    return BLACS_PT2PT_ID;
}

BLACS_API int kbsid_(int *ConTxt, char *scope) { return blacs_msgid(*ConTxt, scope, "KBSID"); }

BLACS_API int kbrid_(int *ConTxt, char *scope, int *rsrc, int *csrc)
{
    (void)rsrc, (void)csrc;
    return blacs_msgid(*ConTxt, scope, "KBRID");
}
