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
#include "core/log.h"
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

void *fmpl_seg_map_of(pid_t pid, int fd, size_t *len)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)pid, fd);
    int pfd = open(path, O_RDWR | O_CLOEXEC);
    if (pfd < 0)
        return NULL;
    struct stat st;
    if (*len == 0 && fstat(pfd, &st) == 0)
        *len = (size_t)st.st_size;
    void *p = *len ? mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_SHARED, pfd, 0) : MAP_FAILED;
    close(pfd);                    /* the mapping keeps the memory alive */
    return p == MAP_FAILED ? NULL : p;
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
