/*
 * seg.h - memory shared by the processes of one machine, for every
 * transport that runs on one: the shm transport and the emulated fabrics.
 *
 * A segment is a memfd (it never has a name in /dev/shm, so nothing can
 * leak, whatever kills the job) mapped by its owner and opened by peers
 * through /proc/<pid>/fd/<fd>, which only processes allowed to read the
 * owner's descriptors can do: job-private by construction.  Cross-memory
 * attach (process_vm_writev/readv) reaches a peer's ordinary memory.
 */
#ifndef FMPL_SEG_H
#define FMPL_SEG_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Create a segment of `len` bytes (zero-filled, pages touched on use):
 * *fd and *base on success (FMPL_SUCCESS), else an FMPL error, logged. */
int  fmpl_seg_create(const char *name, size_t len, int *fd, void **base);
/* Private zero pages for a table indexed by peer (a matching area): never
 * written at allocation, so only the pages of the peers a rank talks to
 * become resident; page-aligned.  NULL when the address space is short.
 * Free with the same length. */
void *fmpl_seg_zalloc(size_t len);
void  fmpl_seg_zfree(void *p, size_t len);
/* Map another process's memfd; *len == 0 asks for its whole size, which
 * is returned in *len.  NULL on failure (errno set). */
void *fmpl_seg_map_of(pid_t pid, int fd, size_t *len);
/* Map `len` bytes of it from `off` (page-aligned), and, when `len2` is not
 * 0, `len2` more from `off2` at *second: one open for both.  NULL on
 * failure (errno set; nothing stays mapped). */
void *fmpl_seg_map_range(pid_t pid, int fd, size_t off, size_t len, size_t off2, size_t len2,
                         void **second);
/* One process_vm_writev (write) or process_vm_readv, resumed after
 * partial transfers: 0, or -errno. */
int  fmpl_cma_copy(pid_t pid, void *local, size_t len, uint64_t raddr, int write);
/* Write nblk blocks of blklen bytes, sstride apart here, dstride apart
 * from raddr in `pid` (a 2-D sub-array), IOV_MAX blocks a system call:
 * 0, or -errno with *done (may be NULL) the blocks that were written. */
int  fmpl_cma_write_blocks(pid_t pid, const void *src, size_t blklen, size_t nblk,
                           size_t sstride, uint64_t raddr, size_t dstride, size_t *done);

#endif
