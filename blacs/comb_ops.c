/*
 * comb_ops.c - the element operations of the combines: sum, absolute
 * maximum and absolute minimum of the five BLACS types, on values alone
 * or on (value, distance) pairs when the caller wants location arrays.
 *
 * Every operation is exactly commutative, so two processes that combine
 * each other's vectors get the same bits (see combine.c):
 *   - values alone: equal magnitudes (3 and -3, 0 and -0) go to the
 *     greater value, +0 before -0 (complex: real part, then imaginary
 *     part), as FMPL's predefined operations do;
 *   - with locations: equal magnitudes go to the smaller distance, the
 *     reference's rule (distances of different processes differ).
 * Complex magnitudes are |re| + |im|, in the type's own precision.
 */
#include <math.h>
#include <stddef.h>

#include "blacs.h"

static void isum(void *io_, const void *in_, int n)
{
    int *io = io_;
    const int *in = in_;
    for (int i = 0; i < n; i++)    /* wraps like the hardware, without UB */
        io[i] = (int)((unsigned)io[i] + (unsigned)in[i]);
}
#define SUM(name, T)                                                           \
    static void name(void *io_, const void *in_, int n)                        \
    {                                                                          \
        T *io = io_;                                                           \
        const T *in = in_;                                                     \
        for (int i = 0; i < n; i++)                                            \
            io[i] += in[i];                                                    \
    }
SUM(ssum, float)
SUM(dsum, double)
static void csum(void *io, const void *in, int n) { ssum(io, in, 2 * n); }
static void zsum(void *io, const void *in, int n) { dsum(io, in, 2 * n); }

static long long iabs_(int x) { return x < 0 ? -(long long)x : x; }

/* Values only: ties of magnitude (3 and -3, 0 and -0) go to the greater
 * value, +0 before -0, so the order of combination never shows. */
#define AFTER(x, y) ((x) > (y) || ((x) == (y) && !signbit(x) && signbit(y)))
#define IAFTER(x, y) ((x) > (y))
#define VAL(name, T, M, MAG, BETTER, TIE)                                      \
    static void name(void *io_, const void *in_, int n)                        \
    {                                                                          \
        T *io = io_;                                                           \
        const T *in = in_;                                                     \
        for (int i = 0; i < n; i++) {                                          \
            M a = MAG(in[i]), b = MAG(io[i]);                                  \
            if (a BETTER b || (a == b && TIE(in[i], io[i])))                   \
                io[i] = in[i];                                                 \
        }                                                                      \
    }
#define CVAL(name, T, MAG, BETTER)                                             \
    static void name(void *io_, const void *in_, int n)                        \
    {                                                                          \
        T *io = io_;                                                           \
        const T *in = in_;                                                     \
        for (int i = 0; i < 2 * n; i += 2) {                                   \
            T a = MAG(in[i]) + MAG(in[i + 1]), b = MAG(io[i]) + MAG(io[i + 1]); \
            if (a BETTER b ||                                                  \
                (a == b && (AFTER(in[i], io[i]) ||                             \
                            (in[i] == io[i] && signbit(in[i]) == signbit(io[i]) && \
                             AFTER(in[i + 1], io[i + 1]))))) {                 \
                io[i] = in[i];                                                 \
                io[i + 1] = in[i + 1];                                         \
            }                                                                  \
        }                                                                      \
    }
VAL(iamx, int, long long, iabs_, >, IAFTER)
VAL(samx, float, float, fabsf, >, AFTER)
VAL(damx, double, double, fabs, >, AFTER)
CVAL(camx, float, fabsf, >)
CVAL(zamx, double, fabs, >)
VAL(iamn, int, long long, iabs_, <, IAFTER)
VAL(samn, float, float, fabsf, <, AFTER)
VAL(damn, double, double, fabs, <, AFTER)
CVAL(camn, float, fabsf, <)
CVAL(zamn, double, fabs, <)

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

static const blacs_vv_t vals[3][BLACS_NTYPES] = {
    { isum, ssum, dsum, csum, zsum },
    { iamx, samx, damx, camx, zamx },
    { iamn, samn, damn, camn, zamn },
};
static const blacs_vv_t locs[3][BLACS_NTYPES] = {
    { NULL },
    { iamx_l, samx_l, damx_l, camx_l, zamx_l },
    { iamn_l, samn_l, damn_l, camn_l, zamn_l },
};
static const size_t loc_size[BLACS_NTYPES] = { sizeof(li_t), sizeof(ls_t), sizeof(ld_t),
                                               sizeof(lc_t), sizeof(lz_t) };
static const size_t loc_off[BLACS_NTYPES] = { offsetof(li_t, d), offsetof(ls_t, d),
                                              offsetof(ld_t, d), offsetof(lc_t, d),
                                              offsetof(lz_t, d) };

/* Values alone: FMPL's predefined operations (src/coll/op.c), which break
 * ties as vals[] do; with locations, a user operation of ours, made once. */
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

blacs_vv_t blacs_comb_fn(int op, int type, int loc)
{
    return loc ? locs[op][type] : vals[op][type];
}

size_t blacs_comb_esize(int type, int loc)
{
    return loc ? loc_size[type] : blacs_esize(type);
}

size_t blacs_comb_locoff(int type)
{
    return loc_off[type];
}
