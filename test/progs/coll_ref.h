/*
 * coll_ref.h - the serial reference of the reductions, shared by coll_ops,
 * coll_vops and coll_nb.
 *
 * Every process computes every member's contribution from (seed, member
 * rank, element), so it knows the exact result of each reduction:
 *   - sums of small integers (exact in float);
 *   - max/min of signed data whose magnitudes (|re|+|im| for complex)
 *     differ between the members, so that the absolute max/min is one
 *     definite element with its sign, whatever the order of combination;
 *   - user ops: a 12-byte struct (sum/max/xor), 1 byte (add mod 256), and
 *     BIGELEM-byte elements of int sums (few elements, a large message).
 * ref_fill and ref_reduce work on any run of elements (first, count) and
 * combine members 0 .. upto-1 (a scan's prefix).
 *
 * Also here: the ties (max/min with equal magnitudes, signed zeros), whose
 * result is any member's element but must be the same everywhere, and the
 * inexact sums (random data of wildly different magnitudes), whose result
 * must be close to the reference.
 *
 * Nothing here reads a program's globals: the data seed, the members and
 * a call's salt come in a struct ref_data.  The user ops' handles are kept
 * here (ref_op), made by ref_ops_create.
 */
#ifndef FMPL_TEST_COLL_REF_H
#define FMPL_TEST_COLL_REF_H

#include "prog.h"

#include <math.h>

/* element types of the reductions, and the kinds of op */
enum { T_INT, T_FLOAT, T_DOUBLE, T_CFLOAT, T_CDOUBLE, T_USER12, T_USER1, T_USERBIG, REF_NTYPES };
enum { K_SUM, K_MAX, K_MIN, K_USER };
#define BIGELEM 40000           /* bytes: a few elements are a large message */
static const char *const tname[REF_NTYPES] PROG_UNUSED = {"i", "s", "d", "c", "z", "user12",
                                                          "user1", "user40000"};
static const char *const kname[4] PROG_UNUSED = {"sum", "max", "min", ""};
static const size_t tsize[REF_NTYPES] PROG_UNUSED = {4, 4, 8, 8, 16, 12, 1, BIGELEM};

/* the data of a reduction */
struct ref_data {
    long seed;                  /* the data seed (-s) */
    int n;                      /* members of the communicator */
    unsigned salt;              /* data of a call's own (coll_nb); 0: the same for every call */
};

static PROG_UNUSED uint64_t hash4(uint64_t a, uint64_t b, uint64_t c, uint64_t d)
{
    return prog_mix64(prog_mix64(prog_mix64(prog_mix64(a) ^ b) ^ c) ^ d);
}

/* ------------------------------------------------------------------ */
/* the user ops                                                          */
/* ------------------------------------------------------------------ */

struct u12 { int32_t s; int32_t mx; uint32_t x; };

static PROG_UNUSED void user12_fn(void *inout, const void *in, int count)
{
    struct u12 *a = inout;
    const struct u12 *b = in;
    int i;
    for (i = 0; i < count; i++) {
        a[i].s += b[i].s;
        if (b[i].mx > a[i].mx)
            a[i].mx = b[i].mx;
        a[i].x ^= b[i].x;
    }
}

static PROG_UNUSED void user1_fn(void *inout, const void *in, int count)
{
    unsigned char *a = inout;
    const unsigned char *b = in;
    int i;
    for (i = 0; i < count; i++)
        a[i] = (unsigned char)(a[i] + b[i]);
}

/* elements of BIGELEM bytes: BIGELEM / 4 independent int sums */
static PROG_UNUSED void userbig_fn(void *inout, const void *in, int count)
{
    int32_t *a = inout;
    const int32_t *b = in;
    size_t i, n = (size_t)count * (BIGELEM / 4);
    for (i = 0; i < n; i++)
        a[i] += b[i];
}

typedef void (*ref_user_fn_t)(void *inout, const void *in, int count);

/* the function of user type t (T_USER12 ..) */
static PROG_UNUSED ref_user_fn_t ref_user_fn(int t)
{
    return t == T_USER12 ? user12_fn : t == T_USER1 ? user1_fn : userbig_fn;
}

/* the handles of the user ops (0 until ref_ops_create) */
static fmpl_op_t ref_op[REF_NTYPES] PROG_UNUSED;

/* fmpl_op_create the user ops of the types T_USER12 .. last */
static PROG_UNUSED void ref_ops_create(int last)
{
    int t;
    for (t = T_USER12; t <= last; t++)
        CHECK_RC(fmpl_op_create(tsize[t], ref_user_fn(t), &ref_op[t]), FMPL_SUCCESS);
}

/* fmpl_op_free them: each handle must come back 0 */
static PROG_UNUSED void ref_ops_free(void)
{
    int t;
    for (t = T_USER12; t < REF_NTYPES; t++)
        if (ref_op[t] != 0) {
            CHECK_RC(fmpl_op_free(&ref_op[t]), FMPL_SUCCESS);
            CHECK(ref_op[t] == 0, "fmpl_op_free(%s) left the handle %d", tname[t], ref_op[t]);
        }
}

/* the op of type t, kind k (k does not matter for the user types) */
static PROG_UNUSED fmpl_op_t op_of(int t, int k)
{
    return t >= T_USER12 ? ref_op[t] : fmpl_isum + k * 5 + t;
}

/* ------------------------------------------------------------------ */
/* the members' contributions                                            */
/* ------------------------------------------------------------------ */

/* element i of member r's contribution, as (re, im) */
struct val { double re, im; };

/* a cheap hash of (a, b, c): the reference costs n x count of these on
 * every process */
static PROG_UNUSED uint32_t ref_h32(const struct ref_data *d, uint32_t a, uint32_t b, uint32_t c)
{
    uint32_t h = a * 0x9e3779b1u ^ (b + 0x7f4a7c15u) * 0x85ebca6bu ^ (c + (uint32_t)d->seed) *
                 0xc2b2ae35u;
    h ^= h >> 15;
    h *= 0x2c1b3c6du;
    h ^= h >> 12;
    h *= 0x297a2d39u;
    return h ^ (h >> 15);
}

/* element i of member r's contribution, a predefined type */
static PROG_UNUSED struct val ref_gen(const struct ref_data *d, int t, int k, int r, long i)
{
    uint32_t tk = (uint32_t)(t * 16 + k) + d->salt * 256u;
    uint32_t h = ref_h32(d, (uint32_t)i, (uint32_t)r, tk);
    struct val v = {0, 0};
    if (k == K_SUM) {
        v.re = (double)((int)(h % 41) - 20);
        v.im = (double)((int)((h >> 20) % 41) - 20);
    } else {
        /* magnitude distinct per member: a permutation of 1..n, plus a
         * multiple of n that varies with i */
        uint32_t hi = ref_h32(d, (uint32_t)i, 0xffff, tk + 99);
        double m = 1 + (double)(((uint32_t)r + hi % (uint32_t)d->n) % (uint32_t)d->n) +
                   (double)d->n * (double)(i % 7);
        if (t == T_CFLOAT || t == T_CDOUBLE) {
            double a = (double)((h >> 8) % (uint32_t)(m + 1));
            v.re = (h & 1) ? -a : a;
            v.im = (h & 2) ? -(m - a) : (m - a);
        } else {
            v.re = (h & 1) ? -m : m;
        }
    }
    if (t != T_CFLOAT && t != T_CDOUBLE)
        v.im = 0;
    return v;
}

/* element i of buf (a predefined type) := v */
static PROG_UNUSED void ref_put(unsigned char *buf, int t, long i, struct val v)
{
    switch (t) {
    case T_INT: { int32_t x = (int32_t)v.re; memcpy(buf + 4 * i, &x, 4); break; }
    case T_FLOAT: { float x = (float)v.re; memcpy(buf + 4 * i, &x, 4); break; }
    case T_DOUBLE: memcpy(buf + 8 * i, &v.re, 8); break;
    case T_CFLOAT: {
        float x[2] = {(float)v.re, (float)v.im};
        memcpy(buf + 8 * i, x, 8);
        break;
    }
    case T_CDOUBLE: {
        double x[2] = {v.re, v.im};
        memcpy(buf + 16 * i, x, 16);
        break;
    }
    }
}

/* element i of buf, as text for a message */
static PROG_UNUSED void describe_elem(char *d, size_t n, const unsigned char *buf, int t, long i)
{
    switch (t) {
    case T_INT: { int32_t x; memcpy(&x, buf + 4 * i, 4); snprintf(d, n, "%d", x); break; }
    case T_FLOAT: { float x; memcpy(&x, buf + 4 * i, 4); snprintf(d, n, "%.9g", x); break; }
    case T_DOUBLE: { double x; memcpy(&x, buf + 8 * i, 8); snprintf(d, n, "%.17g", x); break; }
    case T_CFLOAT: {
        float x[2];
        memcpy(x, buf + 8 * i, 8);
        snprintf(d, n, "(%.9g,%.9g)", x[0], x[1]);
        break;
    }
    case T_CDOUBLE: {
        double x[2];
        memcpy(x, buf + 16 * i, 16);
        snprintf(d, n, "(%.17g,%.17g)", x[0], x[1]);
        break;
    }
    case T_USER12: {
        struct u12 u;
        memcpy(&u, buf + 12 * i, 12);
        snprintf(d, n, "{s %d, max %d, xor %#x}", u.s, u.mx, u.x);
        break;
    }
    case T_USER1:
        snprintf(d, n, "%u", buf[i]);
        break;
    default: {                  /* the first bytes, in hex */
        size_t k, u = 0, es = tsize[t];
        d[0] = 0;
        for (k = 0; k < es && k < 16 && u + 3 < n; k++)
            u += (size_t)snprintf(d + u, n - u, "%02x", buf[es * (size_t)i + k]);
    }
    }
}

/* elements first .. first+count-1 of member r's contribution, into
 * buf[0 .. count) */
static PROG_UNUSED void ref_fill(const struct ref_data *d, unsigned char *buf, int t, int k,
                                 int r, long first, long count)
{
    uint32_t salt = d->salt * 256u;
    long i;
    if (t == T_USER12) {
        for (i = 0; i < count; i++) {
            uint32_t gi = (uint32_t)(first + i);
            uint32_t h = ref_h32(d, gi, (uint32_t)r, 777 + salt),
                     h2 = ref_h32(d, gi, (uint32_t)r, 778 + salt);
            struct u12 u = {(int32_t)(h % 2001) - 1000, (int32_t)(h2 % 200001) - 100000,
                            h ^ h2};
            memcpy(buf + 12 * i, &u, 12);
        }
        return;
    }
    if (t == T_USER1) {
        for (i = 0; i < count; i++)
            buf[i] = (unsigned char)ref_h32(d, (uint32_t)(first + i), (uint32_t)r, 779 + salt);
        return;
    }
    if (t == T_USERBIG) {
        long w0 = first * (BIGELEM / 4);   /* its int words */
        for (i = 0; i < count * (BIGELEM / 4); i++) {
            int32_t x = (int32_t)(ref_h32(d, (uint32_t)(w0 + i), (uint32_t)r, 780 + salt) %
                                  100001) - 50000;
            memcpy(buf + 4 * i, &x, 4);
        }
        return;
    }
    for (i = 0; i < count; i++)
        ref_put(buf, t, i, ref_gen(d, t, k, r, first + i));
}

/* the serial reference for elements first .. first+count-1, into
 * ref[0 .. count): member 0's contribution combined with 1, 2, ...,
 * upto-1 (upto >= 1; d->n for a reduction over all) */
static PROG_UNUSED void ref_reduce(const struct ref_data *d, unsigned char *ref, int t, int k,
                                   long first, long count, int upto)
{
    long i;
    int r;
    if (t >= T_USER12) {
        unsigned char *tmp = prog_xmalloc((size_t)count * tsize[t]);
        ref_fill(d, ref, t, k, 0, first, count);
        for (r = 1; r < upto; r++) {
            ref_fill(d, tmp, t, k, r, first, count);
            ref_user_fn(t)(ref, tmp, (int)count);
        }
        free(tmp);
        return;
    }
    for (i = 0; i < count; i++) {
        struct val acc = ref_gen(d, t, k, 0, first + i);
        for (r = 1; r < upto; r++) {
            struct val v = ref_gen(d, t, k, r, first + i);
            double ma = fabs(acc.re) + fabs(acc.im), mv = fabs(v.re) + fabs(v.im);
            if (k == K_SUM) {
                acc.re += v.re;
                acc.im += v.im;
            } else if ((k == K_MAX && mv > ma) || (k == K_MIN && mv < ma)) {
                acc = v;
            }
        }
        ref_put(ref, t, i, acc);
    }
}

/* the first of the count elements in which got and want differ bitwise,
 * -1 if none; *ndiff (unless NULL): how many differ */
static PROG_UNUSED long ref_first_diff(const unsigned char *got, const unsigned char *want, int t,
                                       long count, long *ndiff)
{
    size_t es = tsize[t];
    long i, first = -1, nd = 0;
    if (memcmp(got, want, (size_t)count * es) != 0)
        for (i = 0; i < count; i++)
            if (memcmp(got + (size_t)i * es, want + (size_t)i * es, es) != 0) {
                if (first < 0)
                    first = i;
                nd++;
                if (!ndiff)
                    break;
            }
    if (ndiff)
        *ndiff = nd;
    return first;
}

/* ------------------------------------------------------------------ */
/* ties: the same legal result everywhere                                */
/* ------------------------------------------------------------------ */

/* Member r's element i of a max/min (t from T_FLOAT to T_CDOUBLE) with
 * ties: magnitude 1 + i % 5 on every member (0 when i % 5 == 4 with
 * `zeros`), signs (and re/im splits) depending on the member.  Without
 * `zeros` no component is -0.0. */
static PROG_UNUSED struct val ref_tie(int t, int r, long i, int zeros)
{
    int cplx = t >= T_CFLOAT;
    double m = (zeros && i % 5 == 4) ? 0.0 : (double)(1 + i % 5), a;
    struct val v;
    int neg_re = (int)((r + i) % 2), neg_im = (int)((r / 2 + i) % 2);
    a = cplx ? (double)((r + i) % ((long)m + 1)) : m;
    v.re = neg_re ? -a : a;
    v.im = cplx ? (neg_im ? -(m - a) : (m - a)) : 0;
    if (!zeros) {
        v.re = v.re == 0 ? 0.0 : v.re;
        v.im = v.im == 0 ? 0.0 : v.im;
    }
    return v;
}

/* the n members' tie data, member r's count elements at cand + r * count
 * elements */
static PROG_UNUSED void ref_tie_fill(unsigned char *cand, int t, long count, int n, int zeros)
{
    size_t bytes = (size_t)count * tsize[t];
    long i;
    int r;
    for (r = 0; r < n; r++)
        for (i = 0; i < count; i++)
            ref_put(cand + (size_t)r * bytes, t, i, ref_tie(t, r, i, zeros));
}

/* the first element of got that is no member's element (bitwise) in
 * cand (as ref_tie_fill made it), -1 if there is none */
static PROG_UNUSED long ref_tie_check(const unsigned char *got, const unsigned char *cand, int t,
                                      long count, int n)
{
    size_t es = tsize[t], bytes = (size_t)count * es;
    long i;
    int r, found;
    for (i = 0; i < count; i++) {
        found = 0;
        for (r = 0; r < n && !found; r++)
            found = memcmp(got + (size_t)i * es, cand + (size_t)r * bytes + (size_t)i * es,
                           es) == 0;
        if (!found)
            return i;
    }
    return -1;
}

/* Every member's p[0 .. bytes) must be bitwise the same: members 1 ..
 * n-1 (world ranks wr[]) send theirs to member 0 over matching-area index
 * mai, which compares.  Purely point-to-point. */
static PROG_UNUSED void ref_same_everywhere(const void *p, size_t bytes, int t, int n, int me,
                                            const int *wr, int mai, const char *where,
                                            const char *what)
{
    unsigned char *o;
    int i;
    if (n == 1)
        return;
    if (me == 0) {
        o = prog_xmalloc(bytes);
        for (i = 1; i < n; i++) {
            long e;
            CHECK_RC(fmpl_recv(o, bytes, wr[i], mai), FMPL_SUCCESS);
            e = ref_first_diff(o, p, t, (long)(bytes / tsize[t]), NULL);
            if (e >= 0) {
                char a[128], b[128];
                describe_elem(a, sizeof a, p, t, e);
                describe_elem(b, sizeof b, o, t, e);
                prog_fail(__FILE__, __LINE__, "%s on %s: results not bitwise the same on "
                          "every member: element %ld is %s on member 0 but %s on member %d",
                          what, where, e, a, b, i);
            }
        }
        free(o);
    } else {
        CHECK_RC(fmpl_send(p, bytes, wr[0], mai), FMPL_SUCCESS);
    }
}

/* ------------------------------------------------------------------ */
/* inexact sums: close to the reference                                  */
/* ------------------------------------------------------------------ */

/* T_FLOAT and T_CFLOAT have components of 4 bytes, the others of 8 */
static PROG_UNUSED int single_prec(int t)
{
    return t == T_FLOAT || t == T_CFLOAT;
}

/* component c of member r's vector: random, of wildly different
 * magnitudes (only d->seed matters) */
static PROG_UNUSED double ref_inexact(const struct ref_data *d, int t, int r, size_t c)
{
    uint64_t h = hash4((uint64_t)d->seed, 555, (uint64_t)r, c);
    double x = ((double)(h >> 11) / 9007199254740992.0 - 0.5) * ldexp(1.0, (int)(h % 40) - 20);
    return single_prec(t) ? (double)(float)x : x;
}

/* components c0 .. c0+n-1 of member r's vector into buf */
static PROG_UNUSED void ref_inexact_fill(const struct ref_data *d, unsigned char *buf, int t,
                                         int r, size_t c0, size_t n)
{
    size_t c;
    for (c = 0; c < n; c++) {
        double x = ref_inexact(d, t, r, c0 + c);
        if (single_prec(t)) {
            float f = (float)x;
            memcpy(buf + 4 * c, &f, 4);
        } else {
            memcpy(buf + 8 * c, &x, 8);
        }
    }
}

/* component c of the sum over members 0 .. upto-1, in member order; *tol:
 * how far a sum in another order may be from it (d->n members) */
static PROG_UNUSED double ref_inexact_sum(const struct ref_data *d, int t, size_t c, int upto,
                                          double *tol)
{
    double ref = 0, absv = 0;
    int r;
    for (r = 0; r < upto; r++) {
        double x = ref_inexact(d, t, r, c);
        ref += x;
        absv += fabs(x);
    }
    *tol = (single_prec(t) ? 1e-6 : 1e-14) * absv * d->n;
    return ref;
}

/* component c of buf */
static PROG_UNUSED double ref_component(const unsigned char *buf, int t, size_t c)
{
    if (single_prec(t)) {
        float f;
        memcpy(&f, buf + 4 * c, 4);
        return f;
    } else {
        double g;
        memcpy(&g, buf + 8 * c, 8);
        return g;
    }
}

/* The communicators of the -c letters besides WORLD, each made
 * collectively over WORLD and checked: c, fmpl_comm_create with world
 * ranks r % 3 != 1 joining; s, fmpl_comm_split of WORLD by colour r % 2
 * with key -r (ranks reversed), r % 5 == 4 passing FMPL_UNDEFINED.
 * FMPL_COMM_NULL where this rank is not a member or the letter is absent. */
static PROG_UNUSED void ref_make_comms(const char *comms, fmpl_comm_t *cc, fmpl_comm_t *sc)
{
    int size, rank, i;
    *cc = *sc = FMPL_COMM_NULL;
    if (strchr(comms, 'c')) {
        int nmem = 0, myrank = -1;
        CHECK_RC(fmpl_comm_create(prog_me % 3 != 1, cc), FMPL_SUCCESS);
        for (i = 0; i < prog_np; i++)
            if (i % 3 != 1) {
                if (i == prog_me)
                    myrank = nmem;
                nmem++;
            }
        if (prog_me % 3 != 1) {
            CHECK(*cc != FMPL_COMM_NULL && *cc != FMPL_COMM_WORLD, "comm_create handle %d", *cc);
            CHECK_RC(fmpl_comm_size(*cc, &size), FMPL_SUCCESS);
            CHECK_RC(fmpl_comm_rank(*cc, &rank), FMPL_SUCCESS);
            CHECK(size == nmem && rank == myrank, "comm_create: rank %d of %d, expected %d of %d",
                  rank, size, myrank, nmem);
        } else {
            CHECK(*cc == FMPL_COMM_NULL, "comm_create with key 0 gave handle %d", *cc);
        }
    }
    if (strchr(comms, 's')) {
        int color = prog_me % 5 == 4 ? FMPL_UNDEFINED : prog_me % 2;
        CHECK_RC(fmpl_comm_split(FMPL_COMM_WORLD, color, -prog_me, sc), FMPL_SUCCESS);
        if (color == FMPL_UNDEFINED) {
            CHECK(*sc == FMPL_COMM_NULL, "split with FMPL_UNDEFINED gave handle %d", *sc);
        } else {
            int nmem = 0, higher = 0;
            for (i = 0; i < prog_np; i++)
                if (i % 5 != 4 && i % 2 == color) {
                    nmem++;
                    if (i > prog_me)
                        higher++;
                }
            CHECK(*sc != FMPL_COMM_NULL && *sc != FMPL_COMM_WORLD, "comm_split handle %d", *sc);
            CHECK_RC(fmpl_comm_size(*sc, &size), FMPL_SUCCESS);
            CHECK_RC(fmpl_comm_rank(*sc, &rank), FMPL_SUCCESS);
            /* key -rank: ranks in reverse world order */
            CHECK(size == nmem && rank == higher,
                  "comm_split(color %d, key %d): rank %d of %d, expected %d of %d", color,
                  -prog_me, rank, size, higher, nmem);
        }
    }
}

#endif
