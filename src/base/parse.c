/*
 * parse.c - numbers a user wrote, parsed whole (parse.h).
 *
 * strtol and friends accept leading blanks, a sign and any tail, and
 * saturate on overflow: "12abc", " -1" for an unsigned size and
 * "99999999999999999999" all come back as numbers.  Here each of those is
 * an error, so a typo is reported instead of becoming a setting.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "base/parse.h"

/* The digits must start at s itself: no blanks (strto* would skip them). */
static int starts_number(const char *s, int sign_ok)
{
    if (s == NULL)
        return 0;
    if (sign_ok && (*s == '-' || *s == '+'))
        s++;
    return isdigit((unsigned char)*s) || (*s == '.' && isdigit((unsigned char)s[1]));
}

/* base 0 would read "010" as octal eight: decimal, or 0x hexadecimal */
static int base_of(const char *s)
{
    if (*s == '-' || *s == '+')
        s++;
    return s[0] == '0' && (s[1] == 'x' || s[1] == 'X') ? 16 : 10;
}

int fmpl_parse_long(const char *s, long lo, long hi, long *out)
{
    if (!starts_number(s, 1))
        return -1;
    char *end;
    errno = 0;
    long v = strtol(s, &end, base_of(s));
    if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

int fmpl_parse_size(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
    if (!starts_number(s, 0) || *s == '.')
        return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, base_of(s));
    if (errno != 0 || end == s)
        return -1;
    unsigned shift = 0;
    switch (*end) {
    case 'k': case 'K': shift = 10; break;
    case 'm': case 'M': shift = 20; break;
    case 'g': case 'G': shift = 30; break;
    case '\0': break;
    default: return -1;
    }
    if (shift != 0 && end[1] != '\0')
        return -1;
    if (v > (UINT64_MAX >> shift))
        return -1;
    uint64_t b = (uint64_t)v << shift;
    if (b < lo || b > hi)
        return -1;
    *out = b;
    return 0;
}

int fmpl_parse_double(const char *s, double lo, double hi, double *out)
{
    if (!starts_number(s, 1))
        return -1;
    /* strtod's ERANGE: an overflow is infinite (refused below), an
     * underflow the nearest double to a tiny number (taken as such) */
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end != '\0' || !isfinite(v) || !(v >= lo) || !(v <= hi))
        return -1;
    *out = v;
    return 0;
}
