/*
 * log.c - diagnostics.  Errors always print; information only with
 * FMPL_VERBOSE=1.  The rank is known once the bootstrap has run.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/log.h"
#include "core/state.h"

static void vlog(const char *fmt, va_list ap)
{
    char msg[512];
    vsnprintf(msg, sizeof msg, fmt, ap);
    if (fmpl_g.boot.size > 0)
        fprintf(stderr, "fmpl: rank %d: %s\n", fmpl_g.boot.rank, msg);
    else
        fprintf(stderr, "fmpl: %s\n", msg);
}

void fmpl_log_err(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog(fmt, ap);
    va_end(ap);
}

int fmpl_log_verbose(void) { return fmpl_g.verbose; }

void fmpl_log_info(const char *fmt, ...)
{
    if (!fmpl_g.verbose)
        return;
    va_list ap;
    va_start(ap, fmt);
    vlog(fmt, ap);
    va_end(ap);
}
