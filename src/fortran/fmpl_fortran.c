/*
 * fmpl_fortran.c - Fortran bindings of FMPL, in the paper's style.
 *
 * Every C call of fmpl.h is a Fortran subroutine of the same name.  The
 * symbol is the C name with a trailing underscore (gfortran's default
 * mangling, also that of ifort/ifx and flang on Linux); no C name of the
 * API ends in an underscore, so nothing collides.  Every argument is passed
 * by reference and the error code `ier` comes last:
 *
 *   call fmpl_init(count, ier)
 *   call fmpl_finalize(ier)
 *   call fmpl_abort(code)                          ! never returns
 *   call fmpl_rank(rank, ier)                      ! -1, FMPL_ERR_NOT_INIT
 *   call fmpl_size(size, ier)                      !   before fmpl_init
 *   call fmpl_wtime(t)                             ! DOUBLE PRECISION t
 *   call fmpl_wtime_emulated(flag)                 ! 1: an emulated machine's clock
 *   call fmpl_compute(seconds, ierr)               ! DOUBLE PRECISION seconds
 *   call fmpl_send(buf, size, dst, mai, ier)
 *   call fmpl_recv(buf, size, src, mai, ier)
 *   call fmpl_isend(buf, size, dst, mai, req, ier)
 *   call fmpl_irecv(buf, size, src, mai, req, ier)
 *   call fmpl_wait_isend(req, ier)
 *   call fmpl_wait_irecv(req, ier)
 *   call fmpl_test(req, done, ier)
 *   call fmpl_wait(req, ier)                       ! any request, collectives too
 *   call fmpl_cancel_irecv(req, ier)
 *   call fmpl_sendbuff_set(buf, size, timeout_us, ier)
 *   call fmpl_sendbuff_check(nsend, nspool, ier)
 *
 * Types:
 *   count, code, rank, dst, src, mai, done, nsend, nspool, ier
 *            default INTEGER (32 bits, C int).  Do not compile callers
 *            with -fdefault-integer-8 / -i8.
 *   size     INTEGER*8 (integer(8), integer(int64)): a size in BYTES, e.g.
 *            8_8 * n for n DOUBLE PRECISION elements.  A default INTEGER
 *            here is a bug (the library would read 8 bytes); write the
 *            literal as 0_8, 800_8, ...  A negative size gives FMPL_ERR_ARG.
 *   t, timeout_us
 *            DOUBLE PRECISION (real(8)).
 *   req      INTEGER*8 array of FMPL_REQUEST_WORDS elements (fmplf.h); the
 *            C request lives inside it.  Pass the whole array (or its first
 *            element) of contiguous storage; an array section that the
 *            compiler copies in and out breaks the request.  Set it to 0
 *            (inactive) before the first use if it may be waited on or
 *            tested without a successful isend/irecv (or nonblocking
 *            collective, fmpl_fortran_coll.c).  Like the C request it must
 *            not be copied or moved while active.
 *   done     INTEGER: 1 when the request has completed, else 0 (an INTEGER
 *            rather than a LOGICAL because LOGICAL's representation is
 *            compiler-specific).  A completed request still needs its wait.
 *   buf      any contiguous array (whole arrays: gfortran passes them
 *            without copying).  For fmpl_isend/fmpl_irecv the buffer must
 *            stay where it is until the wait returns; declare it
 *            ASYNCHRONOUS (or VOLATILE) so that the compiler does not keep
 *            its elements in registers across the wait.
 *
 * fmpl_sendbuff_set with size 0 removes the spill buffer (the C call gets
 * NULL, 0).  fmpl_sendbuff_check always returns both counts.
 *
 * With `include 'fmplf.h'` (implicit interfaces) gfortran 10 and later
 * reject calls of one external subroutine with different actual argument
 * types in one file; use one buffer type per file or compile with
 * -fallow-argument-mismatch.  The module `use fmpl` (fmpl_mod.f90) has
 * none of that: explicit interfaces of these very symbols, buffers of any
 * type, and every other argument checked at compile time.  When a binding
 * here changes, change its interface there (test/fortran_module_test.sh
 * compares them).
 *
 * `include 'fmplf.h'` (or `use fmpl`) gives FMPL_SUCCESS, the FMPL_ERR_*
 * codes and FMPL_REQUEST_WORDS.
 */
#include <stdint.h>
#include <stddef.h>

#include "fmpl.h"

/* The library is built with -fvisibility=hidden: export the bindings. */
#define FMPLF_API __attribute__((visibility("default")))

/* include/fmplf.h repeats these values; keep both files in step. */
#define FMPLF_REQUEST_WORDS 11
_Static_assert(FMPL_REQUEST_WORDS == FMPLF_REQUEST_WORDS,
               "fmpl_request_t changed size: update FMPL_REQUEST_WORDS in include/fmplf.h");
_Static_assert(sizeof(fmpl_request_t) <= FMPLF_REQUEST_WORDS * sizeof(int64_t),
               "fmpl_request_t does not fit in FMPL_REQUEST_WORDS INTEGER*8 words");
_Static_assert(_Alignof(fmpl_request_t) <= _Alignof(int64_t),
               "fmpl_request_t needs more alignment than an INTEGER*8 array gives");
_Static_assert(sizeof(int) == 4, "default Fortran INTEGER is 32 bits");
_Static_assert(sizeof(size_t) <= sizeof(int64_t), "size_t wider than INTEGER*8");
_Static_assert(FMPL_SUCCESS == 0 && FMPL_ERR_NOT_INIT == -1 && FMPL_ERR_INIT == -2 &&
               FMPL_ERR_ARG == -3 && FMPL_ERR_RANK == -4 && FMPL_ERR_INDEX == -5 &&
               FMPL_ERR_BUFFER == -6 && FMPL_ERR_BUSY == -7 && FMPL_ERR_TRUNCATE == -8 &&
               FMPL_ERR_PEER == -9 && FMPL_ERR_NOMEM == -10 && FMPL_ERR_REQUEST == -11 &&
               FMPL_ERR_SPILL == -12 && FMPL_ERR_UNSUPPORTED == -13 &&
               FMPL_ERR_SYSTEM == -14 && FMPL_ERR_CANCELED == -15 &&
               FMPL_ERR_INTERNAL == -16 && FMPL_ERR_COMM == -17 &&
               FMPL_ERR_OP == -18 && FMPL_ERR_LIMIT == -19 && FMPL_ERR_SHAPE == -20 && FMPL_ERR_LAST_ == -21,
               "error codes changed: update include/fmplf.h");

/* INTEGER*8 byte count -> size_t; 0 on success, FMPL_ERR_ARG if negative
 * (or too large for this machine). */
static inline int fsize(const int64_t *size, size_t *out)
{
    if (*size < 0 || (uint64_t)*size > (uint64_t)SIZE_MAX)
        return FMPL_ERR_ARG;
    *out = (size_t)*size;
    return FMPL_SUCCESS;
}

/* INTEGER*8 request array -> C request; NULL if misaligned (an INTEGER*4
 * array passed by mistake, say). */
static inline fmpl_request_t *freq(int64_t *req)
{
    if ((uintptr_t)req % _Alignof(fmpl_request_t) != 0)
        return NULL;
    return (fmpl_request_t *)(void *)req;
}

/* ------------------------------------------------------------------ */
/* Environment                                                          */
/* ------------------------------------------------------------------ */

FMPLF_API void fmpl_init_(const int *count, int *ier)
{
    *ier = fmpl_init(*count);
}

FMPLF_API void fmpl_finalize_(int *ier)
{
    *ier = fmpl_finalize();
}

/* libgfortran's FLUSH intrinsic; NULL flushes every unit.  Weak, so that
 * the library does not depend on libgfortran: it is there exactly when a
 * gfortran program is running. */
extern void _gfortran_flush_i4(int *unit) __attribute__((weak));

FMPLF_API void fmpl_abort_(const int *code)
{
    /* fmpl_abort flushes C stdio only; flush the Fortran units too, or
     * the program's last PRINTs are lost when stdout is a file. */
    if (_gfortran_flush_i4)
        _gfortran_flush_i4(NULL);
    fmpl_abort(*code);
}

FMPLF_API void fmpl_rank_(int *rank, int *ier)
{
    int r = fmpl_rank();
    *rank = r;
    *ier = r < 0 ? FMPL_ERR_NOT_INIT : FMPL_SUCCESS;
}

FMPLF_API void fmpl_size_(int *size, int *ier)
{
    int s = fmpl_size();
    *size = s;
    *ier = s < 0 ? FMPL_ERR_NOT_INIT : FMPL_SUCCESS;
}

FMPLF_API void fmpl_wtime_(double *t)
{
    *t = fmpl_wtime();
}

FMPLF_API void fmpl_wtime_emulated_(int *flag)
{
    *flag = fmpl_wtime_emulated();
}

FMPLF_API void fmpl_compute_(const double *seconds, int *ier)
{
    *ier = fmpl_compute(*seconds);
}

/* ------------------------------------------------------------------ */
/* Point-to-point                                                       */
/* ------------------------------------------------------------------ */

FMPLF_API void fmpl_send_(const void *buf, const int64_t *size, const int *dst,
                          const int *mai, int *ier)
{
    size_t n;
    int rc = fsize(size, &n);
    *ier = rc ? rc : fmpl_send(buf, n, *dst, *mai);
}

FMPLF_API void fmpl_recv_(void *buf, const int64_t *size, const int *src,
                          const int *mai, int *ier)
{
    size_t n;
    int rc = fsize(size, &n);
    *ier = rc ? rc : fmpl_recv(buf, n, *src, *mai);
}

FMPLF_API void fmpl_isend_(const void *buf, const int64_t *size, const int *dst,
                           const int *mai, int64_t *req, int *ier)
{
    fmpl_request_t *r = freq(req);
    size_t n;
    int rc = fsize(size, &n);
    if (rc == FMPL_SUCCESS && r == NULL)
        rc = FMPL_ERR_ARG;
    *ier = rc ? rc : fmpl_isend(buf, n, *dst, *mai, r);
}

FMPLF_API void fmpl_irecv_(void *buf, const int64_t *size, const int *src,
                           const int *mai, int64_t *req, int *ier)
{
    fmpl_request_t *r = freq(req);
    size_t n;
    int rc = fsize(size, &n);
    if (rc == FMPL_SUCCESS && r == NULL)
        rc = FMPL_ERR_ARG;
    *ier = rc ? rc : fmpl_irecv(buf, n, *src, *mai, r);
}

FMPLF_API void fmpl_wait_isend_(int64_t *req, int *ier)
{
    fmpl_request_t *r = freq(req);
    *ier = r ? fmpl_wait_isend(r) : FMPL_ERR_ARG;
}

FMPLF_API void fmpl_wait_irecv_(int64_t *req, int *ier)
{
    fmpl_request_t *r = freq(req);
    *ier = r ? fmpl_wait_irecv(r) : FMPL_ERR_ARG;
}

FMPLF_API void fmpl_test_(int64_t *req, int *done, int *ier)
{
    fmpl_request_t *r = freq(req);
    int d = 0;
    *ier = r ? fmpl_test(r, &d) : FMPL_ERR_ARG;
    *done = d ? 1 : 0;
}

FMPLF_API void fmpl_wait_(int64_t *req, int *ier)
{
    fmpl_request_t *r = freq(req);
    *ier = r ? fmpl_wait(r) : FMPL_ERR_ARG;
}

FMPLF_API void fmpl_cancel_irecv_(int64_t *req, int *ier)
{
    fmpl_request_t *r = freq(req);
    *ier = r ? fmpl_cancel_irecv(r) : FMPL_ERR_ARG;
}

FMPLF_API void fmpl_sendbuff_set_(void *buf, const int64_t *size,
                                  const double *timeout_us, int *ier)
{
    size_t n;
    int rc = fsize(size, &n);
    *ier = rc ? rc : fmpl_sendbuff_set(n ? buf : NULL, n, *timeout_us);
}

FMPLF_API void fmpl_sendbuff_check_(int *nsend, int *nspool, int *ier)
{
    int s = 0, p = 0;
    *ier = fmpl_sendbuff_check(&s, &p);
    *nsend = s;
    *nspool = p;
}
