/*
 * api_p2p.c - public point-to-point entry points: {i,s,d,c,z} x {gesd2d,
 * gerv2d, trsd2d, trrv2d}, C (C?xxx2d) and Fortran (?xxx2d_).  Complex
 * arrays are float / double pairs, as in the reference C interface.
 */
#include "blacs.h"
#include "fmpl_blacs.h"

/* P: type letter, T: element pointer type, K: BLACS_I...  The routine
 * name given for error reports is the public one. */
#define BLACS_P2P_API(P, T, K)                                                         \
    BLACS_API void C##P##gesd2d(int ConTxt, int m, int n, T *A, int lda, int rdest,    \
                                int cdest)                                             \
    {                                                                                  \
        blacs_p2p_send(K, ConTxt, NULL, NULL, m, n, A, lda, rdest, cdest,              \
                       "C" #P "gesd2d");                                               \
    }                                                                                  \
    BLACS_API void C##P##gerv2d(int ConTxt, int m, int n, T *A, int lda, int rsrc,     \
                                int csrc)                                              \
    {                                                                                  \
        blacs_p2p_recv(K, ConTxt, NULL, NULL, m, n, A, lda, rsrc, csrc,                \
                       "C" #P "gerv2d");                                               \
    }                                                                                  \
    BLACS_API void C##P##trsd2d(int ConTxt, char *uplo, char *diag, int m, int n,      \
                                T *A, int lda, int rdest, int cdest)                   \
    {                                                                                  \
        blacs_p2p_send(K, ConTxt, uplo, diag, m, n, A, lda, rdest, cdest,              \
                       "C" #P "trsd2d");                                               \
    }                                                                                  \
    BLACS_API void C##P##trrv2d(int ConTxt, char *uplo, char *diag, int m, int n,      \
                                T *A, int lda, int rsrc, int csrc)                     \
    {                                                                                  \
        blacs_p2p_recv(K, ConTxt, uplo, diag, m, n, A, lda, rsrc, csrc,                \
                       "C" #P "trrv2d");                                               \
    }                                                                                  \
    BLACS_API void P##gesd2d_(int *ConTxt, int *m, int *n, T *A, int *lda, int *rdest, \
                              int *cdest)                                              \
    {                                                                                  \
        blacs_p2p_send(K, *ConTxt, NULL, NULL, *m, *n, A, *lda, *rdest, *cdest,        \
                       #P "gesd2d");                                                   \
    }                                                                                  \
    BLACS_API void P##gerv2d_(int *ConTxt, int *m, int *n, T *A, int *lda, int *rsrc,  \
                              int *csrc)                                               \
    {                                                                                  \
        blacs_p2p_recv(K, *ConTxt, NULL, NULL, *m, *n, A, *lda, *rsrc, *csrc,          \
                       #P "gerv2d");                                                   \
    }                                                                                  \
    BLACS_API void P##trsd2d_(int *ConTxt, char *uplo, char *diag, int *m, int *n,     \
                              T *A, int *lda, int *rdest, int *cdest)                  \
    {                                                                                  \
        blacs_p2p_send(K, *ConTxt, uplo, diag, *m, *n, A, *lda, *rdest, *cdest,        \
                       #P "trsd2d");                                                   \
    }                                                                                  \
    BLACS_API void P##trrv2d_(int *ConTxt, char *uplo, char *diag, int *m, int *n,     \
                              T *A, int *lda, int *rsrc, int *csrc)                    \
    {                                                                                  \
        blacs_p2p_recv(K, *ConTxt, uplo, diag, *m, *n, A, *lda, *rsrc, *csrc,          \
                       #P "trrv2d");                                                   \
    }

BLACS_P2P_API(i, int, BLACS_I)
BLACS_P2P_API(s, float, BLACS_S)
BLACS_P2P_API(d, double, BLACS_D)
BLACS_P2P_API(c, float, BLACS_C)
BLACS_P2P_API(z, double, BLACS_Z)
