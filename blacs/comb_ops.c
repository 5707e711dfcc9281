/*
 * comb_ops.c - the element operations of the combines.
 *
 * Values alone: FMPL's predefined operations (fmpl_{i,s,d,c,z}{sum,max,
 * min}), applied locally with fmpl_op_apply on the topologies' own
 * schedules.  With location arrays: (value, distance) pairs, absolute
 * maximum or minimum, equal magnitudes going to the smaller distance (the
 * reference's rule; distances of different processes differ, so the
 * operation commutes exactly and two processes that combine each other's
 * vectors get the same bits).
 * Complex magnitudes are |re| + |im|, in the type's own precision.
 */
#include <math.h>
#include <stddef.h>

#include "blacs.h"

static long long iabs_(int x) { return x < 0 ? -(long long)x : x; }

/* With locations: (value, distance); equal magnitudes go to the smaller
 * distance (the reference's rule; distances differ, so it commutes). */
typedef struct { int v; int d; } li_t;
typedef struct { float v; int d; } ls_t;
typedef struct { double v; int d; } ld_t;
typedef struct { float re, im; int d; } lc_t;
typedef struct { double re, im; int d; } lz_t;
#define LOC(name, ST, M, MAG, BETTER)                                          \
    static void name(void *io_, const void *in_, int n)                        \
    {                                                                          \
        ST *io = io_;                                                          \
        const ST *in = in_;                                                    \
        for (int i = 0; i < n; i++) {                                          \
            M a = MAG(in[i].v), b = MAG(io[i].v);                              \
            if (a BETTER b || (a == b && in[i].d < io[i].d))                   \
                io[i] = in[i];                                                 \
        }                                                                      \
    }
#define CLOC(name, ST, T, MAG, BETTER)                                         \
    static void name(void *io_, const void *in_, int n)                        \
    {                                                                          \
        ST *io = io_;                                                          \
        const ST *in = in_;                                                    \
        for (int i = 0; i < n; i++) {                                          \
            T a = MAG(in[i].re) + MAG(in[i].im), b = MAG(io[i].re) + MAG(io[i].im); \
            if (a BETTER b || (a == b && in[i].d < io[i].d))                   \
                io[i] = in[i];                                                 \
        }                                                                      \
    }
LOC(iamx_l, li_t, long long, iabs_, >)
LOC(samx_l, ls_t, float, fabsf, >)
LOC(damx_l, ld_t, double, fabs, >)
CLOC(camx_l, lc_t, float, fabsf, >)
CLOC(zamx_l, lz_t, double, fabs, >)
LOC(iamn_l, li_t, long long, iabs_, <)
LOC(samn_l, ls_t, float, fabsf, <)
LOC(damn_l, ld_t, double, fabs, <)
CLOC(camn_l, lc_t, float, fabsf, <)
CLOC(zamn_l, lz_t, double, fabs, <)

typedef void (*loc_fn_t)(void *inout, const void *in, int n);
static const loc_fn_t locs[3][BLACS_NTYPES] = {
    { NULL },
    { iamx_l, samx_l, damx_l, camx_l, zamx_l },
    { iamn_l, samn_l, damn_l, camn_l, zamn_l },
};
static const size_t loc_size[BLACS_NTYPES] = { sizeof(li_t), sizeof(ls_t), sizeof(ld_t),
                                               sizeof(lc_t), sizeof(lz_t) };
static const size_t loc_off[BLACS_NTYPES] = { offsetof(li_t, d), offsetof(ls_t, d),
                                              offsetof(ld_t, d), offsetof(lc_t, d),
                                              offsetof(lz_t, d) };

/* Values alone: FMPL's predefined operations; with locations, a user
 * operation of ours, made once. */
int blacs_comb_fmpl_op(int op, int type, int loc, fmpl_op_t *h)
{
    static fmpl_op_t made[3][BLACS_NTYPES];       /* user ops, made once */
    static const fmpl_op_t base[3] = { fmpl_isum, fmpl_imax, fmpl_imin };
    if (!loc) {
        *h = base[op] + type;                      /* i s d c z in order */
        return FMPL_SUCCESS;
    }
    if (!made[op][type]) {
        int rc = fmpl_op_create(loc_size[type], locs[op][type], &made[op][type]);
        if (rc != FMPL_SUCCESS)
            return rc;
    }
    *h = made[op][type];
    return FMPL_SUCCESS;
}

size_t blacs_comb_esize(int type, int loc)
{
    return loc ? loc_size[type] : blacs_esize(type);
}

size_t blacs_comb_locoff(int type)
{
    return loc_off[type];
}
