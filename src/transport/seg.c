/*
 * seg.c - memfd segments and cross-memory attach (seg.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "fmpl.h"
#include "base/log.h"
#include "transport/seg.h"

int fmpl_seg_create(const char *name, size_t len, int *fd, void **base)
{
    int f = memfd_create(name, MFD_CLOEXEC);
    if (f < 0) {
        fmpl_log_err("memfd_create: %s", strerror(errno));
        return FMPL_ERR_SYSTEM;
    }
    fchmod(f, 0600);
    if (ftruncate(f, (off_t)len) != 0) {
        fmpl_log_err("ftruncate(%zu): %s", len, strerror(errno));
        close(f);
        return FMPL_ERR_NOMEM;
    }
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, f, 0);
    if (p == MAP_FAILED) {
        fmpl_log_err("mmap(%zu): %s", len, strerror(errno));
        close(f);
        return FMPL_ERR_NOMEM;
    }
    *fd = f;
    *base = p;
    return FMPL_SUCCESS;
}

void *fmpl_seg_zalloc(size_t len)
{
    void *p = mmap(NULL, len ? len : 1, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

void fmpl_seg_zfree(void *p, size_t len)
{
    if (p)
        munmap(p, len ? len : 1);
}

/* another process's memfd, opened through /proc (the mappings keep the
 * memory alive once it is closed) */
static int open_of(pid_t pid, int fd)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)pid, fd);
    return open(path, O_RDWR | O_CLOEXEC);
}

void *fmpl_seg_map_of(pid_t pid, int fd, size_t *len)
{
    int pfd = open_of(pid, fd);
    if (pfd < 0)
        return NULL;
    struct stat st;
    if (*len == 0 && fstat(pfd, &st) == 0)
        *len = (size_t)st.st_size;
    void *p = *len ? mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_SHARED, pfd, 0) : MAP_FAILED;
    close(pfd);
    return p == MAP_FAILED ? NULL : p;
}

void *fmpl_seg_map_range(pid_t pid, int fd, size_t off, size_t len, size_t off2, size_t len2,
                         void **second)
{
    int f = open_of(pid, fd);
    if (f < 0)
        return NULL;
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, f, (off_t)off);
    void *q = len2 && p != MAP_FAILED
                  ? mmap(NULL, len2, PROT_READ | PROT_WRITE, MAP_SHARED, f, (off_t)off2)
                  : NULL;
    int e = errno;
    close(f);
    if (p == MAP_FAILED || q == MAP_FAILED) {
        if (p != MAP_FAILED)
            munmap(p, len);
        errno = e;
        return NULL;
    }
    if (second)
        *second = q;
    return p;
}

int fmpl_cma_copy(pid_t pid, void *local, size_t len, uint64_t raddr, int write)
{
    uint8_t *l = local;
    while (len) {
        struct iovec li = { l, len };
        struct iovec ri = { (void *)(uintptr_t)raddr, len };
        ssize_t n = write ? process_vm_writev(pid, &li, 1, &ri, 1, 0)
                          : process_vm_readv(pid, &li, 1, &ri, 1, 0);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        if (n == 0)
            return -EFAULT;
        l += n;
        raddr += (uint64_t)n;
        len -= (size_t)n;
    }
    return 0;
}

int fmpl_cma_write_blocks(pid_t pid, const void *src, size_t blklen, size_t nblk,
                          size_t sstride, uint64_t raddr, size_t dstride, size_t *done)
{
    enum { BATCH = 1024 };                 /* IOV_MAX on Linux */
    struct iovec l[BATCH], r[BATCH];
    const uint8_t *sp = src;
    size_t b = 0;
    int rc = 0;
    while (b < nblk && blklen) {
        size_t m = nblk - b < BATCH ? nblk - b : BATCH;
        for (size_t i = 0; i < m; i++) {
            l[i] = (struct iovec){ (void *)(sp + (b + i) * sstride), blklen };
            r[i] = (struct iovec){ (void *)(uintptr_t)(raddr + (b + i) * dstride), blklen };
        }
        ssize_t n = process_vm_writev(pid, l, m, r, m, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            rc = n < 0 ? -errno : -EFAULT;
            break;
        }
        /* a partial transfer stops at some block: finish it, go on */
        size_t whole = (size_t)n / blklen, part = (size_t)n % blklen;
        if (part) {
            rc = fmpl_cma_copy(pid, (uint8_t *)sp + (b + whole) * sstride + part, blklen - part,
                               raddr + (b + whole) * dstride + part, 1);
            if (rc)
                break;
            whole++;
        }
        b += whole;
    }
    if (done)
        *done = b;
    return rc;
}
