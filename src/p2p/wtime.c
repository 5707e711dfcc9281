/*
 * wtime.c - the job's clock, fmpl_wtime: the emulated machine's time when
 * the transport keeps one (transport.h), else this machine's monotonic
 * clock.  Here, not with fmpl_init: the point-to-point layer reads it too
 * (its trace points, the deadlines of its waits).
 */
#include "fmpl.h"
#include "base/clock.h"
#include "p2p/state.h"

int fmpl_wtime_emulated(void) { return fmpl_g.initialized && fmpl_g.tl.clock != NULL; }

double fmpl_wtime(void)
{
    if (fmpl_g.tl.clock)
        return fmpl_g.tl.clock->now(&fmpl_g.tl);
    return fmpl_rtime();
}
