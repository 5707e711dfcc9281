/*
 * api_coll.c - the public broadcast and combine entry points, C (Cxxx,
 * arguments by value) and Fortran (xxx_, arguments by reference, the
 * hidden lengths of character arguments ignored), for x = i s d c z.
 * Each is one call to bcast.c or combine.c.
 */
#include "blacs.h"
#include "fmpl_blacs.h"

#define COLL_API(x, X, T, TYPE)                                                \
    BLACS_API void C##x##gebs2d(int ConTxt, char *scope, char *top, int m, int n, \
                                T *A, int lda)                                 \
    {                                                                          \
        blacs_bs(TYPE, ConTxt, scope, top, NULL, NULL, m, n, A, lda,           \
                 #X "GEBS2D");                                                 \
    }                                                                          \
    BLACS_API void x##gebs2d_(int *ConTxt, char *scope, char *top, int *m, int *n, \
                              T *A, int *lda)                                  \
    {                                                                          \
        blacs_bs(TYPE, *ConTxt, scope, top, NULL, NULL, *m, *n, A, *lda,       \
                 #X "GEBS2D");                                                 \
    }                                                                          \
    BLACS_API void C##x##gebr2d(int ConTxt, char *scope, char *top, int m, int n, \
                                T *A, int lda, int rsrc, int csrc)             \
    {                                                                          \
        blacs_br(TYPE, ConTxt, scope, top, NULL, NULL, m, n, A, lda, rsrc, csrc, \
                 #X "GEBR2D");                                                 \
    }                                                                          \
    BLACS_API void x##gebr2d_(int *ConTxt, char *scope, char *top, int *m, int *n, \
                              T *A, int *lda, int *rsrc, int *csrc)            \
    {                                                                          \
        blacs_br(TYPE, *ConTxt, scope, top, NULL, NULL, *m, *n, A, *lda, *rsrc, \
                 *csrc, #X "GEBR2D");                                          \
    }                                                                          \
    BLACS_API void C##x##trbs2d(int ConTxt, char *scope, char *top, char *uplo, \
                                char *diag, int m, int n, T *A, int lda)       \
    {                                                                          \
        blacs_bs(TYPE, ConTxt, scope, top, uplo, diag, m, n, A, lda,           \
                 #X "TRBS2D");                                                 \
    }                                                                          \
    BLACS_API void x##trbs2d_(int *ConTxt, char *scope, char *top, char *uplo, \
                              char *diag, int *m, int *n, T *A, int *lda)      \
    {                                                                          \
        blacs_bs(TYPE, *ConTxt, scope, top, uplo, diag, *m, *n, A, *lda,       \
                 #X "TRBS2D");                                                 \
    }                                                                          \
    BLACS_API void C##x##trbr2d(int ConTxt, char *scope, char *top, char *uplo, \
                                char *diag, int m, int n, T *A, int lda,       \
                                int rsrc, int csrc)                            \
    {                                                                          \
        blacs_br(TYPE, ConTxt, scope, top, uplo, diag, m, n, A, lda, rsrc, csrc, \
                 #X "TRBR2D");                                                 \
    }                                                                          \
    BLACS_API void x##trbr2d_(int *ConTxt, char *scope, char *top, char *uplo, \
                              char *diag, int *m, int *n, T *A, int *lda,      \
                              int *rsrc, int *csrc)                            \
    {                                                                          \
        blacs_br(TYPE, *ConTxt, scope, top, uplo, diag, *m, *n, A, *lda, *rsrc, \
                 *csrc, #X "TRBR2D");                                          \
    }                                                                          \
    BLACS_API void C##x##gsum2d(int ConTxt, char *scope, char *top, int m, int n, \
                                T *A, int lda, int rdest, int cdest)           \
    {                                                                          \
        blacs_comb(TYPE, BLACS_SUM, ConTxt, scope, top, m, n, A, lda, NULL, NULL, \
                   -1, rdest, cdest, #X "GSUM2D");                             \
    }                                                                          \
    BLACS_API void x##gsum2d_(int *ConTxt, char *scope, char *top, int *m, int *n, \
                              T *A, int *lda, int *rdest, int *cdest)          \
    {                                                                          \
        blacs_comb(TYPE, BLACS_SUM, *ConTxt, scope, top, *m, *n, A, *lda, NULL, \
                   NULL, -1, *rdest, *cdest, #X "GSUM2D");                     \
    }                                                                          \
    BLACS_API void C##x##gamx2d(int ConTxt, char *scope, char *top, int m, int n, \
                                T *A, int lda, int *rA, int *cA, int ldia,     \
                                int rdest, int cdest)                          \
    {                                                                          \
        blacs_comb(TYPE, BLACS_AMX, ConTxt, scope, top, m, n, A, lda, rA, cA, ldia, \
                   rdest, cdest, #X "GAMX2D");                                 \
    }                                                                          \
    BLACS_API void x##gamx2d_(int *ConTxt, char *scope, char *top, int *m, int *n, \
                              T *A, int *lda, int *rA, int *cA, int *ldia,     \
                              int *rdest, int *cdest)                          \
    {                                                                          \
        blacs_comb(TYPE, BLACS_AMX, *ConTxt, scope, top, *m, *n, A, *lda, rA, cA, \
                   *ldia, *rdest, *cdest, #X "GAMX2D");                        \
    }                                                                          \
    BLACS_API void C##x##gamn2d(int ConTxt, char *scope, char *top, int m, int n, \
                                T *A, int lda, int *rA, int *cA, int ldia,     \
                                int rdest, int cdest)                          \
    {                                                                          \
        blacs_comb(TYPE, BLACS_AMN, ConTxt, scope, top, m, n, A, lda, rA, cA, ldia, \
                   rdest, cdest, #X "GAMN2D");                                 \
    }                                                                          \
    BLACS_API void x##gamn2d_(int *ConTxt, char *scope, char *top, int *m, int *n, \
                              T *A, int *lda, int *rA, int *cA, int *ldia,     \
                              int *rdest, int *cdest)                          \
    {                                                                          \
        blacs_comb(TYPE, BLACS_AMN, *ConTxt, scope, top, *m, *n, A, *lda, rA, cA, \
                   *ldia, *rdest, *cdest, #X "GAMN2D");                        \
    }

/* complex arrays are (re, im) pairs of float / double, as the reference's
 * C interface passes them */
COLL_API(i, I, int, BLACS_I)
COLL_API(s, S, float, BLACS_S)
COLL_API(d, D, double, BLACS_D)
COLL_API(c, C, float, BLACS_C)
COLL_API(z, Z, double, BLACS_Z)
