/*
 * log.c - diagnostics.  Errors always print; information only with
 * FMPL_VERBOSE=1.  The rank is known once the bootstrap has run.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/boot.h"
#include "base/log.h"

static const fmpl_boot_t *log_boot;
static int log_verbose;

void fmpl_log_set_boot(const fmpl_boot_t *boot) { log_boot = boot; }
void fmpl_log_set_verbose(int on) { log_verbose = on; }

static void vlog(const char *fmt, va_list ap)
{
    char msg[512];
    vsnprintf(msg, sizeof msg, fmt, ap);
    if (log_boot && log_boot->size > 0)
        fprintf(stderr, "fmpl: rank %d: %s\n", log_boot->rank, msg);
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

int fmpl_log_verbose(void) { return log_verbose; }

void fmpl_log_info(const char *fmt, ...)
{
    if (!log_verbose)
        return;
    va_list ap;
    va_start(ap, fmt);
    vlog(fmt, ap);
    va_end(ap);
}
