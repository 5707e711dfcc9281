/*
 * op.c - reduction operations: the paper's fmpl_vsum / fmpl_vmax /
 * fmpl_vmin for v = i s d c z, and user operations.
 *
 * max and min are by ABSOLUTE value, as in the BLACS; complex numbers are
 * compared by |re| + |im| (the BLACS' cheap magnitude).  The result is the
 * element itself, sign included.  Ties between different elements of the
 * same magnitude (3 and -3, 0.0 and -0.0) go to the greater value, +0
 * before -0 (then the same for the imaginary part), so the answer does not depend on the order in which a
 * tree combines: every process gets bitwise the same result.
 */
#include <math.h>
#include <stdlib.h>

#include "coll/coll.h"

#define SUM(name, T)                                                           \
    static void name(void *io_, const void *in_, int n)                        \
    {                                                                          \
        T *io = io_;                                                           \
        const T *in = in_;                                                     \
        for (int i = 0; i < n; i++)                                            \
            io[i] += in[i];                                                    \
    }

/* A total order on equal magnitudes, so that a tie (3 and -3, or 0.0 and
 * -0.0) is decided the same way whichever operand comes first: the
 * greater value wins, and +0 beats -0. */
#define AFTER(x, y) ((x) > (y) || ((x) == (y) && !signbit(x) && signbit(y)))
#define IAFTER(x, y) ((x) > (y))

/* real absolute max (>) / min (<); MAG gives the magnitude */
#define ABSX(name, T, M, MAG, BETTER, TIE)                                     \
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

/* complex: pairs (re, im) */
#define CABSX(name, T, MAG, BETTER)                                            \
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

static long long iabs_(int x) { return x < 0 ? -(long long)x : x; }

SUM(isum, int)
SUM(ssum, float)
SUM(dsum, double)
/* a complex sum is the sum of 2n reals */
static void csum(void *io, const void *in, int n) { ssum(io, in, 2 * n); }
static void zsum(void *io, const void *in, int n) { dsum(io, in, 2 * n); }
ABSX(imax, int, long long, iabs_, >, IAFTER)
ABSX(smax, float, float, fabsf, >, AFTER)
ABSX(dmax, double, double, fabs, >, AFTER)
CABSX(cmax, float, fabsf, >)
CABSX(zmax, double, fabs, >)
ABSX(imin, int, long long, iabs_, <, IAFTER)
ABSX(smin, float, float, fabsf, <, AFTER)
ABSX(dmin, double, double, fabs, <, AFTER)
CABSX(cmin, float, fabsf, <)
CABSX(zmin, double, fabs, <)

typedef struct op_entry {
    size_t esize;
    fmpl_op_fn_t fn;
} op_entry_t;

/* indexed by fmpl_op_t; 0 is not an operation */
static const op_entry_t predef[] = {
    [fmpl_isum] = { sizeof(int), isum },        [fmpl_ssum] = { sizeof(float), ssum },
    [fmpl_dsum] = { sizeof(double), dsum },     [fmpl_csum] = { 2 * sizeof(float), csum },
    [fmpl_zsum] = { 2 * sizeof(double), zsum },
    [fmpl_imax] = { sizeof(int), imax },        [fmpl_smax] = { sizeof(float), smax },
    [fmpl_dmax] = { sizeof(double), dmax },     [fmpl_cmax] = { 2 * sizeof(float), cmax },
    [fmpl_zmax] = { 2 * sizeof(double), zmax },
    [fmpl_imin] = { sizeof(int), imin },        [fmpl_smin] = { sizeof(float), smin },
    [fmpl_dmin] = { sizeof(double), dmin },     [fmpl_cmin] = { 2 * sizeof(float), cmin },
    [fmpl_zmin] = { 2 * sizeof(double), zmin },
};
#define NPREDEF ((int)(sizeof predef / sizeof predef[0]))

/* user operations: handles FIRST_USER .. FIRST_USER + nuser - 1 */
#define FIRST_USER 64
static op_entry_t *user;
static int nuser;

int fmpl_op_lookup(fmpl_op_t op, size_t *esize, fmpl_op_fn_t *fn)
{
    const op_entry_t *e = NULL;
    if (op > 0 && op < NPREDEF)
        e = &predef[op];
    else if (op >= FIRST_USER && op - FIRST_USER < nuser)
        e = &user[op - FIRST_USER];
    if (!e || !e->fn)
        return FMPL_ERR_OP;
    *esize = e->esize;
    *fn = e->fn;
    return FMPL_SUCCESS;
}

int fmpl_op_create(size_t elem_size, void (*fn)(void *inout, const void *in, int count),
                   fmpl_op_t *op)
{
    if (!fn || !op || elem_size == 0)
        return FMPL_ERR_ARG;
    fmpl_enter();
    int i = 0;
    while (i < nuser && user[i].fn)
        i++;
    int rc = FMPL_SUCCESS;
    if (i == nuser) {
        op_entry_t *u = realloc(user, (size_t)(nuser + 8) * sizeof *u);
        if (!u) {
            rc = FMPL_ERR_NOMEM;
        } else {
            for (int k = nuser; k < nuser + 8; k++)
                u[k] = (op_entry_t){ 0, NULL };
            user = u;
            nuser += 8;
        }
    }
    if (rc == FMPL_SUCCESS) {
        user[i] = (op_entry_t){ elem_size, fn };
        *op = FIRST_USER + i;
    }
    fmpl_leave();
    return rc;
}

int fmpl_op_free(fmpl_op_t *op)
{
    if (!op)
        return FMPL_ERR_ARG;
    if (*op < FIRST_USER || *op - FIRST_USER >= nuser || !user[*op - FIRST_USER].fn)
        return FMPL_ERR_OP;          /* predefined operations are not freed */
    fmpl_enter();
    user[*op - FIRST_USER].fn = NULL;
    *op = 0;
    fmpl_leave();
    return FMPL_SUCCESS;
}

int fmpl_op_apply(fmpl_op_t op, void *inout, const void *in, int count)
{
    size_t es;
    fmpl_op_fn_t fn;
    if (fmpl_op_lookup(op, &es, &fn) != FMPL_SUCCESS)
        return FMPL_ERR_OP;
    if (count < 0 || (count && (!inout || !in)))
        return FMPL_ERR_ARG;
    if (count)
        fn(inout, in, count);
    return FMPL_SUCCESS;
}

size_t fmpl_op_size(fmpl_op_t op)
{
    size_t es;
    fmpl_op_fn_t fn;
    return fmpl_op_lookup(op, &es, &fn) == FMPL_SUCCESS ? es : 0;
}
