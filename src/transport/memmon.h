/*
 * memmon.h - a memory monitor: tells a registration cache when memory it
 * watches stops being the memory that was registered.
 *
 * A transport whose device pins pages (InfiniBand verbs) may keep a
 * registration after the transfer that needed it only if it learns when
 * the application unmaps those pages, or discards them, and maps other
 * pages at the same addresses: free() of a large block and a new malloc()
 * do exactly that, and a stale registration would read and write the old
 * pages.  glibc's free reaches munmap and madvise through internal calls
 * no symbol interposition sees, so the monitor asks the kernel instead:
 * a userfaultfd (userfaultfd(2), ioctl_userfaultfd(2)) with the events
 *   UFFD_EVENT_UNMAP    munmap, brk shrinking, mmap MAP_FIXED over it
 *   UFFD_EVENT_REMOVE   madvise(MADV_DONTNEED / MADV_REMOVE)
 *   UFFD_EVENT_REMAP    mremap moving it
 * on the watched ranges.  The kernel holds the thread that unmaps until
 * the event is read, and the monitor's thread reads it and queues the
 * range under the queue's lock: so once munmap has returned, the next
 * fmpl_memmon_gone (which takes that lock) returns the range.  That is
 * what makes the cache correct, not merely likely to be.
 *
 * Watching is registration in "missing" mode (the only mode every kernel
 * with these events has).  A watched page can go missing only through the
 * events above while it is registered and pinned; if one is missing
 * anyway (discarded after its registration was closed), the fault comes
 * to the monitor's thread, which stops watching that page - waking the
 * faulting thread, whose fault then proceeds as it would have - and
 * reports the page as gone.
 *
 * Only anonymous and shared-memory mappings can be watched (the kernel's
 * rule for missing mode); fmpl_memmon_watch fails on others, and the
 * caller then does not cache their registration.  Without userfaultfd
 * (an old kernel, a seccomp filter, vm.unprivileged_userfaultfd=0 and
 * no UFFD_USER_MODE_ONLY) fmpl_memmon_open fails and the caller caches
 * nothing.
 */
#ifndef FMPL_MEMMON_H
#define FMPL_MEMMON_H

#include <stddef.h>
#include <stdint.h>

typedef struct fmpl_memmon fmpl_memmon_t;

typedef struct fmpl_memmon_range {
    uintptr_t start, end;          /* [start, end) */
} fmpl_memmon_range_t;

/* A monitor and its thread; NULL when the kernel will not give one (the
 * reason in *why). */
fmpl_memmon_t *fmpl_memmon_open(const char **why);
void fmpl_memmon_close(fmpl_memmon_t *m);

/* Watch the pages of [addr, addr + len): 0, or -1 when they cannot be
 * watched (not anonymous or shared memory). */
int  fmpl_memmon_watch(fmpl_memmon_t *m, uintptr_t addr, size_t len);
/* Stop watching them (what no cached registration covers any more). */
void fmpl_memmon_unwatch(fmpl_memmon_t *m, uintptr_t addr, size_t len);

/* Ranges gone since the last call, up to n into out; returns how many,
 * or -1 when more went than the queue held (then treat everything
 * watched as gone).  Call again until it returns 0. */
int  fmpl_memmon_gone(fmpl_memmon_t *m, fmpl_memmon_range_t *out, int n);

#endif
