/*
 * matrix_shape.c - the elements of a matrix shape, column by column.
 *
 * A trapezoid follows the BLACS: with d = max(0, m - n) the upper one
 * holds rows i <= j + d of column j; with e = max(0, n - m) the lower one
 * holds rows i >= j - e; a unit diagonal leaves that boundary row out.
 */
#include <string.h>

#include "p2p/matrix.h"

static char up(char c) { return c >= 'a' && c <= 'z' ? (char)(c - 'a' + 'A') : c; }

int fmpl_mshape_init(fmpl_mshape_t *s, const fmpl_matrix_t *m)
{
    if (!m || m->esize == 0 || m->ld < m->m)
        return FMPL_ERR_ARG;
    char uplo = up(m->uplo), diag = up(m->diag);
    if (uplo != 'G' && uplo != 'U' && uplo != 'L')
        return FMPL_ERR_ARG;
    if (uplo != 'G' && diag != 'U' && diag != 'N')
        return FMPL_ERR_ARG;
    /* no element count may overflow the 40-bit size of a header (checked
     * without divisions: this runs on every message) */
    size_t mn, ldn;
    if (m->m && m->n &&
        (__builtin_mul_overflow(m->m, m->n, &mn) || __builtin_mul_overflow(mn, m->esize, &mn) ||
         __builtin_mul_overflow(m->ld, m->n, &ldn) ||
         __builtin_mul_overflow(ldn, m->esize, &ldn) || mn > FMPL_HDR_SIZE_MASK ||
         ldn > FMPL_HDR_SIZE_MASK))
        return FMPL_ERR_ARG;
    *s = (fmpl_mshape_t){ .esize = m->esize, .m = m->m, .n = m->n,
                          .ld = m->ld ? m->ld : 1, .uplo = uplo,
                          .unit = uplo != 'G' && diag == 'U' };
    size_t c = s->m * s->n;
    if (uplo != 'G') {
        c = 0;
        for (size_t j = 0; j < s->n; j++) {
            size_t lo, hi;
            fmpl_mshape_col(s, j, &lo, &hi);
            c += hi - lo;
        }
    }
    s->count = c;
    return FMPL_SUCCESS;
}

void fmpl_mshape_col(const fmpl_mshape_t *s, size_t j, size_t *lo, size_t *hi)
{
    size_t m = s->m, n = s->n;
    *lo = 0;
    *hi = m;
    if (s->uplo == 'U') {
        size_t d = m > n ? m - n : 0, top = j + d + 1;     /* rows < top */
        top = top > (size_t)s->unit ? top - (size_t)s->unit : 0;
        *hi = top < m ? top : m;
    } else if (s->uplo == 'L') {
        size_t e = n > m ? n - m : 0, first = j + (size_t)s->unit;
        first = first > e ? first - e : 0;
        *lo = first < m ? first : m;
    }
}

size_t fmpl_matrix_count(const fmpl_matrix_t *shape)
{
    fmpl_mshape_t s;
    return fmpl_mshape_init(&s, shape) == FMPL_SUCCESS ? s.count : 0;
}

int fmpl_matrix_pack(const void *a, const fmpl_matrix_t *shape, void *out)
{
    fmpl_mshape_t s;
    int rc = fmpl_mshape_init(&s, shape);
    if (rc == FMPL_SUCCESS && s.count && (!a || !out))
        rc = FMPL_ERR_BUFFER;
    if (rc == FMPL_SUCCESS)
        fmpl_mshape_pack(&s, a, out);
    return rc;
}

int fmpl_matrix_unpack(const void *in, const fmpl_matrix_t *shape, void *a)
{
    fmpl_mshape_t s;
    int rc = fmpl_mshape_init(&s, shape);
    if (rc == FMPL_SUCCESS && s.count && (!a || !in))
        rc = FMPL_ERR_BUFFER;
    if (rc == FMPL_SUCCESS)
        fmpl_mshape_unpack(&s, in, a);
    return rc;
}

int fmpl_mshape_contig(const fmpl_mshape_t *s)
{
    return s->uplo == 'G' && (s->n <= 1 || s->ld == s->m);
}

uint64_t fmpl_mshape_tag(const fmpl_mshape_t *s)
{
    /* a multiplicative hash of what both sides must agree on (not ld):
     * a few cycles, on every message */
    uint64_t h = s->esize * 0x9e3779b97f4a7c15ull;
    h = (h ^ s->m) * 0xbf58476d1ce4e5b9ull;
    h = (h ^ s->n) * 0x94d049bb133111ebull;
    h = (h ^ ((uint64_t)(unsigned char)s->uplo << 1 | (uint64_t)s->unit)) * 0x9e3779b97f4a7c15ull;
    h ^= h >> 29;
    return (h >> 24 & 0xfffffe) | 1;
}

size_t fmpl_mshape_extent(const fmpl_mshape_t *s)
{
    if (!s->count)
        return 0;
    return ((s->n - 1) * s->ld + s->m) * s->esize;
}

void fmpl_mshape_pack(const fmpl_mshape_t *s, const void *a, void *out)
{
    const unsigned char *src = a;
    unsigned char *dst = out;
    for (size_t j = 0; j < s->n; j++) {
        size_t lo, hi;
        fmpl_mshape_col(s, j, &lo, &hi);
        size_t len = (hi - lo) * s->esize;
        if (len)
            memcpy(dst, src + (j * s->ld + lo) * s->esize, len);
        dst += len;
    }
}

void fmpl_mshape_unpack(const fmpl_mshape_t *s, const void *in, void *a)
{
    const unsigned char *src = in;
    unsigned char *dst = a;
    for (size_t j = 0; j < s->n; j++) {
        size_t lo, hi;
        fmpl_mshape_col(s, j, &lo, &hi);
        size_t len = (hi - lo) * s->esize;
        if (len)
            memcpy(dst + (j * s->ld + lo) * s->esize, src, len);
        src += len;
    }
}
