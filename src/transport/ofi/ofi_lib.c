/*
 * ofi_lib.c - libfabric, loaded when the ofi transport is chosen.
 *
 * libfmpl does not link libfabric: a shared-memory job never loads it.
 * That matters beyond start-up time: libfabric pulls in provider
 * libraries (PSM's libinfinipath) whose constructors install handlers
 * for SIGTERM and other signals, so a process killed by SIGTERM would
 * exit with status 1 instead of dying by the signal.  When the ofi
 * transport does load it, the application's signal dispositions are put
 * back afterwards.
 *
 * Only five libfabric entry points are real symbols; everything else
 * (fi_domain, fi_write, fi_cq_read, ...) is an inline call through the
 * objects' ops tables.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <string.h>

#include "fmpl.h"
#include "base/log.h"
#include "transport/ofi/ofi.h"

fmpl_ofi_lib_t fmpl_fi;

int fmpl_ofi_lib_load(void)
{
    if (fmpl_fi.handle)
        return FMPL_SUCCESS;
    struct sigaction saved[NSIG];
    for (int s = 1; s < NSIG; s++)
        sigaction(s, NULL, &saved[s]);
    void *h = dlopen("libfabric.so.1", RTLD_NOW | RTLD_LOCAL);
    for (int s = 1; s < NSIG; s++) {
        struct sigaction now;
        if (s == SIGKILL || s == SIGSTOP || sigaction(s, NULL, &now) != 0)
            continue;
        if (now.sa_handler != saved[s].sa_handler)
            sigaction(s, &saved[s], NULL);
    }
    if (!h) {
        fmpl_log_err("ofi: cannot load libfabric (%s); install libfabric1", dlerror());
        return FMPL_ERR_UNSUPPORTED;
    }
    fmpl_fi.getinfo = (int (*)(uint32_t, const char *, const char *, uint64_t,
                               const struct fi_info *, struct fi_info **))dlsym(h, "fi_getinfo");
    fmpl_fi.freeinfo = (void (*)(struct fi_info *))dlsym(h, "fi_freeinfo");
    fmpl_fi.dupinfo = (struct fi_info * (*)(const struct fi_info *))dlsym(h, "fi_dupinfo");
    fmpl_fi.fabric = (int (*)(struct fi_fabric_attr *, struct fid_fabric **, void *))dlsym(
        h, "fi_fabric");
    fmpl_fi.strerror = (const char *(*)(int))dlsym(h, "fi_strerror");
    if (!fmpl_fi.getinfo || !fmpl_fi.freeinfo || !fmpl_fi.dupinfo || !fmpl_fi.fabric ||
        !fmpl_fi.strerror) {
        fmpl_log_err("ofi: libfabric.so.1 lacks fi_getinfo and friends");
        dlclose(h);
        memset(&fmpl_fi, 0, sizeof fmpl_fi);
        return FMPL_ERR_UNSUPPORTED;
    }
    fmpl_fi.handle = h;
    return FMPL_SUCCESS;
}
