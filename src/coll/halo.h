/*
 * halo.h - the persistent halo exchange (internal).
 *
 * A face is one shadow region of one process, (dimension d, side s):
 * side 0 is the lower shadow, filled by the lower neighbour nbr[2d] from
 * its last interior slab; side 1 the upper shadow, filled by nbr[2d+1]
 * from its first interior slab.  Its geometry, on either side, is a box of
 * a C-order array reduced to a SHAPE: contiguous runs of `blk` bytes,
 * repeated over at most two strided levels.
 */
#ifndef FMPL_HALO_H
#define FMPL_HALO_H

#include "coll/coll.h"

#define FMPL_HALO_MAXD 3
/* runs at least this long travel as block-stride (no packing) */
#define FMPL_HALO_BLOCK_MIN 64

typedef struct fmpl_shape {
    size_t base;                   /* byte offset of the first run */
    size_t blk;                    /* bytes per contiguous run */
    int nlev;                      /* 0, 1 or 2 strided levels, outer first */
    size_t cnt[2], stride[2];
} fmpl_shape_t;

/* What every member publishes at init (one allgather). */
typedef struct fmpl_halo_geom {
    int32_t esize, ndims, flags, pad;
    int32_t ext[FMPL_HALO_MAXD], shadow[FMPL_HALO_MAXD], nbr[2 * FMPL_HALO_MAXD];
    fmpl_tl_key_t array, landing;  /* where peers write faces / packed faces */
} fmpl_halo_geom_t;

/* One face this process sends (to `peer`) or receives (from `peer`). */
typedef struct fmpl_face {
    int d, side;                   /* the RECEIVER's face */
    int peer;                      /* world rank */
    int idx;                       /* mailbox line of this face */
    int kind;                      /* FMPL_HALO_BLOCK ... */
    fmpl_shape_t src, dst;         /* send: my slab, its shadow; recv: dst only */
    size_t land_off;               /* packed faces: offset in the landing area */
    fmpl_tl_key_t key;             /* send: where to write */
    uint8_t *pack;                 /* send, packed: staging buffer */
    uint32_t seq;                  /* this epoch's sequence number */
    int state;
} fmpl_face_t;

struct fmpl_halo {
    fmpl_comm_rec_t *comm;
    fmpl_comm_t handle;
    int slot;
    uint8_t *array;
    fmpl_halo_geom_t me;
    int kind[FMPL_HALO_MAXD];
    int nsend, nrecv;
    fmpl_face_t send[2 * FMPL_HALO_MAXD], recv[2 * FMPL_HALO_MAXD];
    uint8_t *landing;              /* packed faces arrive here (fmpl_alloc_mem) */
    size_t landing_len;
    int reg_array, reg_landing;    /* me.array, me.landing are registered */
    fmpl_tl_comp_t comp;
    int active;                    /* started, not yet through */
    int phase;                     /* the dimension under way (0 with FACES) */
};

/* halo_plan.c */
int  fmpl_halo_check(const fmpl_halo_geom_t *all, int n, int *bad);
void fmpl_halo_face_shape(const fmpl_halo_geom_t *g, int d, int side, int slab,
                          fmpl_shape_t *sh);
int  fmpl_halo_shape_kind(const fmpl_shape_t *sh, unsigned caps);
size_t fmpl_shape_bytes(const fmpl_shape_t *sh);
void fmpl_shape_pack(uint8_t *out, const uint8_t *array, const fmpl_shape_t *sh);
void fmpl_shape_unpack(uint8_t *array, const uint8_t *in, const fmpl_shape_t *sh);

#endif
