/*
 * env.c - FMPL's settings from the environment (env.h), over the
 * parsers of parse.c, with one message format for every variable.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "fmpl.h"
#include "base/env.h"
#include "base/log.h"
#include "base/parse.h"

/* The variable's value, or NULL when it is unset or empty (the default). */
static const char *value(const char *name)
{
    const char *s = getenv(name);
    return s != NULL && *s != '\0' ? s : NULL;
}

static int bad(const char *name, const char *s, const char *what)
{
    fmpl_log_err("%s=%s: %s", name, s, what);
    return FMPL_ERR_ARG;
}

int fmpl_env_long(const char *name, long def, long lo, long hi, const char *what, long *out)
{
    const char *s = value(name);
    *out = def;
    if (s != NULL && fmpl_parse_long(s, lo, hi, out) != 0)
        return bad(name, s, what);
    return FMPL_SUCCESS;
}

int fmpl_env_size(const char *name, uint64_t def, uint64_t lo, uint64_t hi, const char *what,
                  uint64_t *out)
{
    const char *s = value(name);
    *out = def;
    if (s != NULL && fmpl_parse_size(s, lo, hi, out) != 0)
        return bad(name, s, what);
    return FMPL_SUCCESS;
}

int fmpl_env_double(const char *name, double def, double lo, double hi, const char *what,
                    double *out)
{
    const char *s = value(name);
    *out = def;
    if (s != NULL && fmpl_parse_double(s, lo, hi, out) != 0)
        return bad(name, s, what);
    return FMPL_SUCCESS;
}

int fmpl_env_bool(const char *name, int def, const char *what, int *out)
{
    static const char *const bits[] = { "0", "1", NULL };
    return fmpl_env_choice(name, bits, def, what, out);
}

int fmpl_env_choice(const char *name, const char *const *names, int def, const char *what,
                    int *out)
{
    const char *s = value(name);
    *out = def;
    if (s == NULL)
        return FMPL_SUCCESS;
    for (int k = 0; names[k] != NULL; k++)
        if (strcmp(s, names[k]) == 0) {
            *out = k;
            return FMPL_SUCCESS;
        }
    return bad(name, s, what);
}
