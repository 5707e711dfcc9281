/*
 * env.h - FMPL's settings from the environment, read one way.
 *
 * Unset or empty: the default.  Anything else must parse whole and lie in
 * range; if it does not, the call logs one line naming the variable, its
 * value and what it takes (`what`, which fmpl(7) also says), and returns
 * FMPL_ERR_ARG with *out left at the default.  A misspelt or out-of-range
 * setting fails fmpl_init rather than silently becoming another value:
 * many settings must agree on every rank, and a job that quietly ran
 * with the default would be wrong or slow with no word why.
 */
#ifndef FMPL_ENV_H
#define FMPL_ENV_H

#include <stdint.h>

/* A whole number in [lo, hi]: decimal, or 0x hexadecimal. */
int fmpl_env_long(const char *name, long def, long lo, long hi, const char *what, long *out);
/* A size in bytes in [lo, hi]: a whole number as above, optionally with
 * K, M or G (powers of 1024). */
int fmpl_env_size(const char *name, uint64_t def, uint64_t lo, uint64_t hi, const char *what,
                  uint64_t *out);
/* A finite number in [lo, hi] (strtod's syntax). */
int fmpl_env_double(const char *name, double def, double lo, double hi, const char *what,
                    double *out);
/* 0 or 1. */
int fmpl_env_bool(const char *name, int def, const char *what, int *out);
/* One of the NULL-terminated `names`: *out is its position. */
int fmpl_env_choice(const char *name, const char *const *names, int def, const char *what,
                    int *out);

#endif
