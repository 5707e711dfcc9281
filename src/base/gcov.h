/*
 * gcov.h - a coverage build's counts from processes that leave by _exit()
 * or are ended by a signal.  gcov writes them from exit(), which a forked
 * child (the dcfa agent) or an abort must not call (the application's
 * atexit handlers would run), and the agent is often ended by its job's
 * launcher before it leaves by itself: make coverage would see the code
 * they ran as never run.  make coverage defines FMPL_GCOV (its -O0
 * --coverage build); elsewhere this is nothing.  The compiler's run-time
 * (gcc's and clang's --coverage) writes the counts so far, then zeroes
 * them, so that the next flush adds only what ran since.
 */
#ifndef FMPL_BASE_GCOV_H
#define FMPL_BASE_GCOV_H

#ifdef FMPL_GCOV
void __gcov_dump(void);
void __gcov_reset(void);

static inline void fmpl_gcov_flush(void)
{
    __gcov_dump();
    __gcov_reset();
}
#else
static inline void fmpl_gcov_flush(void) {}
#endif

#endif
