/*
 * matrix.h - matrix messages: a column-major (sub)matrix or trapezoid
 * sent from user memory into user memory, strided on both sides.
 *
 * The receive header (p2p.h) carries the receive's shape tag in the top
 * bits of its size word, so the sender refuses a message whose shape
 * differs.  A receive whose columns are not adjacent also needs its
 * leading dimension: it writes a LAYOUT record into the header half of its
 * line on the communicator's AUX index first (same sequence number), and
 * marks the header FMPL_HDR_POSTED_M.  The sender then writes every column
 * where it belongs (one strided put for a whole matrix, a list of pieces
 * for a trapezoid), then the usual data record.  Both sides contiguous is
 * the plain protocol of send.c/recv.c (split copies included).
 *
 * Sends are locally blocking: a send whose receive is not posted within
 * about the time a copy would take is packed aside and queued.  Sequence
 * numbers keep the pair's FIFO order.  A queued send is ANNOUNCED (the
 * key and size of its packed copy, in a slot of the AUX lines) when
 * the transport can read remotely and compare-and-swap: its receiver then
 * pulls it itself, racing the sender's progress by CAS on the header
 * word, so a sender that computes, or blocks outside FMPL, holds nobody
 * up.  Without that, only the sender's progress delivers it.
 */
#ifndef FMPL_MATRIX_H
#define FMPL_MATRIX_H

#include <stddef.h>
#include <stdint.h>

#include "fmpl.h"
#include "p2p/p2p.h"

/* A validated shape: its elements as column pieces [lo, hi). */
typedef struct fmpl_mshape {
    size_t esize, m, n, ld;
    char uplo;                     /* 'G', 'U', 'L' */
    int unit;                      /* trapezoid without its diagonal */
    size_t count;                  /* elements */
} fmpl_mshape_t;

/* matrix_shape.c */
int      fmpl_mshape_init(fmpl_mshape_t *s, const fmpl_matrix_t *m);
void     fmpl_mshape_col(const fmpl_mshape_t *s, size_t j, size_t *lo, size_t *hi);
int      fmpl_mshape_contig(const fmpl_mshape_t *s);   /* one run of bytes */
uint64_t fmpl_mshape_tag(const fmpl_mshape_t *s);      /* nonzero, 24 bits */
size_t   fmpl_mshape_extent(const fmpl_mshape_t *s);   /* bytes spanned */
void     fmpl_mshape_pack(const fmpl_mshape_t *s, const void *a, void *out);
void     fmpl_mshape_unpack(const fmpl_mshape_t *s, const void *in, void *a);

/* matrix.c: on world rank `peer`, index `idx` (data) and the FMPL_MX_NAUX
 * indices from `aux` (layouts and announcements) */
#define FMPL_MX_NAUX 3
int  fmpl_mx_send(const void *a, const fmpl_mshape_t *s, int peer, int idx, int aux);
int  fmpl_mx_recv(void *a, const fmpl_mshape_t *s, int peer, int idx, int aux);
int  fmpl_mx_pending(void);
int  fmpl_mx_stalled(void);       /* a queued send its receiver cannot pull */
int  fmpl_mx_progress(void);
int  fmpl_mx_drain(void);          /* fmpl_finalize: deliver every queued send */
void fmpl_mx_forget(void);

#endif
