/*
 * memcheck.h - telling Valgrind's memcheck what another process wrote.
 * A peer's cross-memory attach (process_vm_writev) fills our memory
 * without memcheck seeing it, so memcheck would go on calling those bytes
 * uninitialised; a receive that completes says they are defined.  A few
 * instructions when not under Valgrind; nothing without its header.
 */
#ifndef FMPL_MEMCHECK_H
#define FMPL_MEMCHECK_H

#if defined(__has_include)
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#define FMPL_MEM_DEFINED(p, n) ((void)VALGRIND_MAKE_MEM_DEFINED((p), (n)))
#endif
#endif
#ifndef FMPL_MEM_DEFINED
#define FMPL_MEM_DEFINED(p, n) ((void)0)
#endif

#endif
