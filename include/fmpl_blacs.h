/*
 * fmpl_blacs.h - fmpl-blacs: the BLACS (Basic Linear Algebra
 * Communication Subprograms) on FMPL, C interface
 *
 * SYNOPSIS
 *   #include <fmpl_blacs.h>
 *   cc prog.c $(pkg-config --cflags --libs fmpl-blacs)
 *   fmplrun -n 4 ./prog
 *
 *   A program built against another BLACS (ScaLAPACK's MPI-BLACS) runs on
 *   this one with LD_PRELOAD=/path/to/libfmpl_blacs.so; FMPL then joins
 *   the MPI job through PMIx.
 *
 * DESCRIPTION
 *   The BLACS move whole matrices between the processes of a 2-D process
 *   grid.  A grid lives in a CONTEXT (an int handle) made by
 *   Cblacs_gridinit or Cblacs_gridmap from a SYSTEM HANDLE (a group of
 *   processes); a process has grid coordinates {myrow, mycol} and a
 *   process number pnum = myrow * npcol + mycol in it.
 *
 *   Matrices are column-major: M rows, N columns, element (i, j) at
 *   A[i + j * LDA], LDA >= M.  A TRAPEZOIDAL matrix (UPLO 'U' upper, any
 *   other value lower; DIAG 'U' unit = diagonal not communicated, any
 *   other value non-unit) holds, with d = max(0, M - N) and
 *   e = max(0, N - M), the elements i <= j + d (upper) or i >= j - e
 *   (lower).  Only those elements are read or written.  Character
 *   arguments are single letters in either case; only the first letter
 *   counts ("Row", "all").
 *
 *   Element types: i int, s float, d double, c single complex, z double
 *   complex (complex arrays are interleaved re, im pairs of float or
 *   double).
 *
 *   SCOPE ('R' row, 'C' column, 'A' all) names the processes of a
 *   collective.  TOP names its topology as in the reference: ' ' (the
 *   default) runs FMPL's own collectives; 'I' 'D' 'S' 'M' rings, 'H'
 *   hypercube, 'F' fully connected, 'T' and '1'-'9' trees run those
 *   patterns of matrix messages.
 *
 *   Point-to-point messages between two processes of a context are
 *   received in the order they were sent; sends are locally blocking
 *   (they return once A may be reused, whether or not the receive is
 *   posted).  Every process of a scope must call a collective, in the
 *   same order.
 *
 *   System handles: 0 is every process in rank order.  Csys2blacs_handle
 *   gives a handle for any FMPL communicator; blacs_get(ctxt, 10, &h)
 *   gives the handle of a context's processes in pnum order; a live
 *   context number itself is accepted as the handle of its processes (as
 *   ScaLAPACK uses it).
 *
 * FMPL
 *   The first BLACS call that needs communication starts FMPL
 *   (fmpl_init(1)) unless the program already did; FMPL_MAX_COMMS
 *   defaults to 512 then (each context holds three communicators).
 *   Cblacs_exit(0) ends FMPL (fmpl_finalize).
 *
 * ERRORS
 *   Warnings are printed on stderr ("BLACS WARNING '...' from {r,c},
 *   pnum=..."); errors (an invalid context, a destination outside the
 *   grid, a send and a receive that disagree, a dead peer) print
 *   "BLACS ERROR '...'" and end every process of the job.
 *
 * FORTRAN
 *   Every routine also exists for Fortran as its lower-case name without
 *   the leading C and with a trailing underscore (blacs_gridinit_,
 *   dgesd2d_, sys2blacs_handle_, dwalltime00_...), every argument by
 *   reference; the Fortran system context is the FMPL communicator
 *   handle itself.
 */
#ifndef FMPL_BLACS_H_PUBLIC
#define FMPL_BLACS_H_PUBLIC

#include "fmpl.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

/* ------------------------------------------------------------------ */
/* Initialisation and process information                              */
/* ------------------------------------------------------------------ */

/*
 * Cblacs_pinfo - this process's number and the number of processes.
 *   *mypnum   rank in the whole job (0 .. *nprocs - 1)
 *   *nprocs   processes in the job
 * Starts FMPL when nobody has.  Cblacs_setup is the same call (the
 * reference needs it only to spawn PVM processes).
 */
void Cblacs_pinfo(int *mypnum, int *nprocs);
void Cblacs_setup(int *mypnum, int *nprocs);

/*
 * Cblacs_get - query a BLACS setting.
 *   what 0    *val = the default system handle (0: every process)
 *   what 1    val[0], val[1] = the message-id range [min, max) of
 *             Ckbsid / Ckbrid
 *   what 2    *val = the debug level (1: arguments are checked)
 *   what 10   *val = the system handle of context ConTxt's processes
 *   what 11   *val = broadcast ring count of ConTxt
 *   what 12   *val = broadcast tree branching of ConTxt
 *   what 13   *val = combine ring count of ConTxt
 *   what 14   *val = combine tree branching of ConTxt
 *   what 15   *val = 1 when ConTxt's combines must be repeatable
 *   what 16   *val = 1 when ConTxt's combines must be coherent
 * ConTxt is ignored for what 0, 1 and 2.  Defaults: 1, 1, 1, 1, 0, 0.
 */
void Cblacs_get(int ConTxt, int what, int *val);

/*
 * Cblacs_set - change a setting of Cblacs_get: what 11..16 for context
 * ConTxt (rings non-zero, branchings > 0), what 1 the message-id range
 * val[0] >= 0, val[1] > val[0] for contexts created afterwards.  What 0,
 * 2 and 10 cannot be set (warning).
 */
void Cblacs_set(int ConTxt, int what, int *val);

/* ------------------------------------------------------------------ */
/* Grids                                                                */
/* ------------------------------------------------------------------ */

/*
 * Cblacs_gridinit - make an nprow x npcol grid of the first nprow * npcol
 * processes of system handle *ConTxt; *ConTxt becomes the new context.
 *   order   'R' row-major (process k at {k / npcol, k % npcol}), 'C'
 *           column-major (at {k % nprow, k / nprow}); anything else is
 *           row-major
 * Collective over the processes of the system handle; those left out get
 * *ConTxt = -1.  Error if nprow * npcol exceeds the processes there.
 */
void Cblacs_gridinit(int *ConTxt, char *order, int nprow, int npcol);

/*
 * Cblacs_gridmap - as Cblacs_gridinit, with the process at grid {i, j}
 * named by usermap[i + j * ldumap] (column-major, ldumap >= nprow), as a
 * process number relative to the system handle.  Each process may appear
 * once.
 */
void Cblacs_gridmap(int *ConTxt, int *usermap, int ldumap, int nprow, int npcol);

/*
 * Cblacs_gridexit - free context ConTxt (every process of its grid calls
 * it).  Error for a context that is not alive.
 */
void Cblacs_gridexit(int ConTxt);

/*
 * Cblacs_gridinfo - grid shape and this process's coordinates; all four
 * are -1 when ConTxt is not a live context of this process.
 */
void Cblacs_gridinfo(int ConTxt, int *nprow, int *npcol, int *myrow, int *mycol);

/* Cblacs_pnum - process number of grid {prow, pcol} in ConTxt
 * (prow * npcol + pcol), -1 outside the grid. */
int Cblacs_pnum(int ConTxt, int prow, int pcol);

/* Cblacs_pcoord - grid coordinates of process number nodenum of ConTxt;
 * -1, -1 when nodenum is outside the grid. */
void Cblacs_pcoord(int ConTxt, int nodenum, int *prow, int *pcol);

/* ------------------------------------------------------------------ */
/* Synchronisation, buffers, exit                                       */
/* ------------------------------------------------------------------ */

/* Cblacs_barrier - wait until every process of the scope ('R', 'C', 'A')
 * of ConTxt has entered. */
void Cblacs_barrier(int ConTxt, char *scope);

/* Cblacs_freebuff - release BLACS message buffers: a no-op, FMPL keeps
 * none (Wait is ignored). */
void Cblacs_freebuff(int ConTxt, int Wait);

/*
 * Cblacs_exit - free every context.  NotDone == 0: also end FMPL
 * (collective over the job; no BLACS or FMPL call may follow); otherwise
 * FMPL stays up for the program (and for later BLACS use).  Returns.
 */
void Cblacs_exit(int NotDone);

/* Cblacs_abort - print ErrNo and where, then end every process of the
 * job (exit status ErrNo, 1 for 0).  Does not return. */
void Cblacs_abort(int ConTxt, int ErrNo);

/* ------------------------------------------------------------------ */
/* System handles                                                       */
/* ------------------------------------------------------------------ */

/*
 * Csys2blacs_handle - a BLACS system handle for FMPL communicator
 * SysCtxt (0 for FMPL_COMM_WORLD; the same handle for the same
 * communicator).  Give it to Cblacs_gridinit / Cblacs_gridmap.
 * Cblacs2sys_handle - the communicator behind a system handle (error for
 * an unknown one).  Cfree_blacs_system_handle - forget a handle (not the
 * communicator; handle 0 is never freed).
 */
int Csys2blacs_handle(fmpl_comm_t SysCtxt);
fmpl_comm_t Cblacs2sys_handle(int BlacsCtxt);
void Cfree_blacs_system_handle(int ISysCtxt);

/* ------------------------------------------------------------------ */
/* Timers and legacy message ids                                        */
/* ------------------------------------------------------------------ */

/* Cdwalltime00 - wall-clock seconds (monotonic); Cdcputime00 - CPU
 * seconds of this process. */
double Cdcputime00(void);
double Cdwalltime00(void);

/*
 * Message ids of the BLACS 1.x interface, kept for old codes: FMPL needs
 * none.  Cksendid / Ckrecvid return the fixed point-to-point id (9977);
 * Ckbsid / Ckbrid the next id of the scope's cycle in the range of
 * Cblacs_get(what 1), the same sequence on every process of the scope.
 */
int Cksendid(int ConTxt, int rdest, int cdest);
int Ckrecvid(int ConTxt, int rsrc, int csrc);
int Ckbsid(int ConTxt, char *scope);
int Ckbrid(int ConTxt, char *scope, int rsrc, int csrc);

/* ------------------------------------------------------------------ */
/* Point-to-point                                                       */
/* ------------------------------------------------------------------ */

/*
 * C?gesd2d - send the m x n matrix A (leading dimension lda) to grid
 * process {rdest, cdest} of ConTxt.  C?gerv2d - receive it from {rsrc,
 * csrc} into A.  Locally blocking send, blocking receive; the receive
 * must name the same m and n (lda may differ).  m <= 0 or n <= 0 is an
 * empty message that still keeps its place in the pair's order.  A
 * process may send to itself.  lda < m: warning, lda = m is used.
 */
void Cigesd2d(int ConTxt, int m, int n, int *A, int lda, int rdest, int cdest);
void Csgesd2d(int ConTxt, int m, int n, float *A, int lda, int rdest, int cdest);
void Cdgesd2d(int ConTxt, int m, int n, double *A, int lda, int rdest, int cdest);
void Ccgesd2d(int ConTxt, int m, int n, float *A, int lda, int rdest, int cdest);
void Czgesd2d(int ConTxt, int m, int n, double *A, int lda, int rdest, int cdest);

void Cigerv2d(int ConTxt, int m, int n, int *A, int lda, int rsrc, int csrc);
void Csgerv2d(int ConTxt, int m, int n, float *A, int lda, int rsrc, int csrc);
void Cdgerv2d(int ConTxt, int m, int n, double *A, int lda, int rsrc, int csrc);
void Ccgerv2d(int ConTxt, int m, int n, float *A, int lda, int rsrc, int csrc);
void Czgerv2d(int ConTxt, int m, int n, double *A, int lda, int rsrc, int csrc);

/*
 * C?trsd2d, C?trrv2d - the same for the trapezoid (uplo, diag) of A; both
 * sides must give the same m, n, uplo and diag.
 */
void Citrsd2d(int ConTxt, char *uplo, char *diag, int m, int n, int *A, int lda,
              int rdest, int cdest);
void Cstrsd2d(int ConTxt, char *uplo, char *diag, int m, int n, float *A, int lda,
              int rdest, int cdest);
void Cdtrsd2d(int ConTxt, char *uplo, char *diag, int m, int n, double *A, int lda,
              int rdest, int cdest);
void Cctrsd2d(int ConTxt, char *uplo, char *diag, int m, int n, float *A, int lda,
              int rdest, int cdest);
void Cztrsd2d(int ConTxt, char *uplo, char *diag, int m, int n, double *A, int lda,
              int rdest, int cdest);

void Citrrv2d(int ConTxt, char *uplo, char *diag, int m, int n, int *A, int lda,
              int rsrc, int csrc);
void Cstrrv2d(int ConTxt, char *uplo, char *diag, int m, int n, float *A, int lda,
              int rsrc, int csrc);
void Cdtrrv2d(int ConTxt, char *uplo, char *diag, int m, int n, double *A, int lda,
              int rsrc, int csrc);
void Cctrrv2d(int ConTxt, char *uplo, char *diag, int m, int n, float *A, int lda,
              int rsrc, int csrc);
void Cztrrv2d(int ConTxt, char *uplo, char *diag, int m, int n, double *A, int lda,
              int rsrc, int csrc);

/* ------------------------------------------------------------------ */
/* Broadcast                                                            */
/* ------------------------------------------------------------------ */

/*
 * C?gebs2d - broadcast the m x n matrix A to every other process of the
 * scope; C?gebr2d - receive that broadcast into A, naming its source
 * {rsrc, csrc}.  Every process of the scope calls one or the other with
 * the same m, n and top.
 */
void Cigebs2d(int ConTxt, char *scope, char *top, int m, int n, int *A, int lda);
void Csgebs2d(int ConTxt, char *scope, char *top, int m, int n, float *A, int lda);
void Cdgebs2d(int ConTxt, char *scope, char *top, int m, int n, double *A, int lda);
void Ccgebs2d(int ConTxt, char *scope, char *top, int m, int n, float *A, int lda);
void Czgebs2d(int ConTxt, char *scope, char *top, int m, int n, double *A, int lda);

void Cigebr2d(int ConTxt, char *scope, char *top, int m, int n, int *A, int lda,
              int rsrc, int csrc);
void Csgebr2d(int ConTxt, char *scope, char *top, int m, int n, float *A, int lda,
              int rsrc, int csrc);
void Cdgebr2d(int ConTxt, char *scope, char *top, int m, int n, double *A, int lda,
              int rsrc, int csrc);
void Ccgebr2d(int ConTxt, char *scope, char *top, int m, int n, float *A, int lda,
              int rsrc, int csrc);
void Czgebr2d(int ConTxt, char *scope, char *top, int m, int n, double *A, int lda,
              int rsrc, int csrc);

/* C?trbs2d, C?trbr2d - the same for the trapezoid (uplo, diag) of A. */
void Citrbs2d(int ConTxt, char *scope, char *top, char *uplo, char *diag, int m, int n,
              int *A, int lda);
void Cstrbs2d(int ConTxt, char *scope, char *top, char *uplo, char *diag, int m, int n,
              float *A, int lda);
void Cdtrbs2d(int ConTxt, char *scope, char *top, char *uplo, char *diag, int m, int n,
              double *A, int lda);
void Cctrbs2d(int ConTxt, char *scope, char *top, char *uplo, char *diag, int m, int n,
              float *A, int lda);
void Cztrbs2d(int ConTxt, char *scope, char *top, char *uplo, char *diag, int m, int n,
              double *A, int lda);

void Citrbr2d(int ConTxt, char *scope, char *top, char *uplo, char *diag, int m, int n,
              int *A, int lda, int rsrc, int csrc);
void Cstrbr2d(int ConTxt, char *scope, char *top, char *uplo, char *diag, int m, int n,
              float *A, int lda, int rsrc, int csrc);
void Cdtrbr2d(int ConTxt, char *scope, char *top, char *uplo, char *diag, int m, int n,
              double *A, int lda, int rsrc, int csrc);
void Cctrbr2d(int ConTxt, char *scope, char *top, char *uplo, char *diag, int m, int n,
              float *A, int lda, int rsrc, int csrc);
void Cztrbr2d(int ConTxt, char *scope, char *top, char *uplo, char *diag, int m, int n,
              double *A, int lda, int rsrc, int csrc);

/* ------------------------------------------------------------------ */
/* Combines                                                             */
/* ------------------------------------------------------------------ */

/*
 * C?gsum2d - element-wise sum of the m x n matrices A of every process of
 * the scope.  The result lands in A of {rdest, cdest} (A of the other
 * processes is undefined afterwards), or in A of every process when
 * rdest == -1, bitwise the same everywhere.
 */
void Cigsum2d(int ConTxt, char *scope, char *top, int m, int n, int *A, int lda,
              int rdest, int cdest);
void Csgsum2d(int ConTxt, char *scope, char *top, int m, int n, float *A, int lda,
              int rdest, int cdest);
void Cdgsum2d(int ConTxt, char *scope, char *top, int m, int n, double *A, int lda,
              int rdest, int cdest);
void Ccgsum2d(int ConTxt, char *scope, char *top, int m, int n, float *A, int lda,
              int rdest, int cdest);
void Czgsum2d(int ConTxt, char *scope, char *top, int m, int n, double *A, int lda,
              int rdest, int cdest);

/*
 * C?gamx2d, C?gamn2d - element-wise absolute maximum / minimum (complex:
 * |re| + |im|); the element keeps its sign.  With ldia != -1, rA and cA
 * (ldia x n, ldia >= m) receive the grid coordinates of the process each
 * result came from.  Destination as C?gsum2d.
 */
void Cigamx2d(int ConTxt, char *scope, char *top, int m, int n, int *A, int lda,
              int *rA, int *cA, int ldia, int rdest, int cdest);
void Csgamx2d(int ConTxt, char *scope, char *top, int m, int n, float *A, int lda,
              int *rA, int *cA, int ldia, int rdest, int cdest);
void Cdgamx2d(int ConTxt, char *scope, char *top, int m, int n, double *A, int lda,
              int *rA, int *cA, int ldia, int rdest, int cdest);
void Ccgamx2d(int ConTxt, char *scope, char *top, int m, int n, float *A, int lda,
              int *rA, int *cA, int ldia, int rdest, int cdest);
void Czgamx2d(int ConTxt, char *scope, char *top, int m, int n, double *A, int lda,
              int *rA, int *cA, int ldia, int rdest, int cdest);

void Cigamn2d(int ConTxt, char *scope, char *top, int m, int n, int *A, int lda,
              int *rA, int *cA, int ldia, int rdest, int cdest);
void Csgamn2d(int ConTxt, char *scope, char *top, int m, int n, float *A, int lda,
              int *rA, int *cA, int ldia, int rdest, int cdest);
void Cdgamn2d(int ConTxt, char *scope, char *top, int m, int n, double *A, int lda,
              int *rA, int *cA, int ldia, int rdest, int cdest);
void Ccgamn2d(int ConTxt, char *scope, char *top, int m, int n, float *A, int lda,
              int *rA, int *cA, int ldia, int rdest, int cdest);
void Czgamn2d(int ConTxt, char *scope, char *top, int m, int n, double *A, int lda,
              int *rA, int *cA, int ldia, int rdest, int cdest);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif
#endif /* FMPL_BLACS_H_PUBLIC */
