/*
 * error.c - BLACS warnings and errors.
 *
 * The messages keep the shape users of the reference BLACS know (the
 * quoted text, then where: grid coordinates, process number, context),
 * naming the routine instead of a source line.  pnum is the world rank,
 * as in the reference; {-1,-1} when the context is not a live one.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "blacs.h"

/* Grid coordinates for the report, without ever reporting an error (an
 * invalid context must not recurse into blacs_ctx()). */
static void report(const char *kind, int ictxt, const char *rout, const char *fmt,
                   va_list ap)
{
    char msg[512];
    vsnprintf(msg, sizeof msg, fmt, ap);
    int nprow, npcol, myrow, mycol;
    blacs_aux_gridinfo(ictxt, &nprow, &npcol, &myrow, &mycol);
    /* one fprintf: lines of several processes do not interleave */
    fprintf(stderr, "BLACS %s '%s'\nfrom {%d,%d}, pnum=%d, Contxt=%d, in routine '%s'.\n\n",
            kind, msg, myrow, mycol, fmpl_rank(), ictxt, rout ? rout : "?");
}

void blacs_warn(int ictxt, const char *rout, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    report("WARNING", ictxt, rout, fmt, ap);
    va_end(ap);
}

void blacs_fatal(int ictxt, const char *rout, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    report("ERROR", ictxt, rout, fmt, ap);
    va_end(ap);
    fflush(stdout);
    fflush(stderr);
    /* ends every process of the job, as the reference's MPI_Abort does */
    fmpl_abort(1);
    _Exit(1);                      /* not reached: fmpl_abort does not return */
}
