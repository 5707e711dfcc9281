/*
 * parse.h - numbers a user wrote (environment variables, fmplrun's
 * options), parsed whole: no trailing bytes, no overflow, in range.
 * Free of the rest of the library, so fmplrun and the fuzz harness link
 * it alone.  Each returns 0 and the value, or -1 and leaves *out alone.
 */
#ifndef FMPL_PARSE_H
#define FMPL_PARSE_H

#include <stdint.h>

/* A whole number in [lo, hi]: decimal, or hexadecimal after 0x. */
int fmpl_parse_long(const char *s, long lo, long hi, long *out);
/* Bytes in [lo, hi]: a whole number as above, optionally followed by K, M
 * or G (powers of 1024, either case). */
int fmpl_parse_size(const char *s, uint64_t lo, uint64_t hi, uint64_t *out);
/* A finite number in [lo, hi], in strtod's syntax. */
int fmpl_parse_double(const char *s, double lo, double hi, double *out);

#endif
