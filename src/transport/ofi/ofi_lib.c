/*
 * ofi_lib.c - libfabric, loaded when the ofi transport is chosen
 * (base/dlib.h says why it is not linked).
 *
 * Only five libfabric entry points are real symbols; everything else
 * (fi_domain, fi_write, fi_cq_read, ...) is an inline call through the
 * objects' ops tables.
 */
#include "fmpl.h"
#include "base/dlib.h"
#include "base/log.h"
#include "transport/ofi/ofi.h"

fmpl_ofi_lib_t fmpl_fi;

static const char *const files[] = { "libfabric.so.1", NULL };
static const fmpl_dlib_sym_t syms[] = {
    { "fi_getinfo", (void **)&fmpl_fi.getinfo },
    { "fi_freeinfo", (void **)&fmpl_fi.freeinfo },
    { "fi_dupinfo", (void **)&fmpl_fi.dupinfo },
    { "fi_fabric", (void **)&fmpl_fi.fabric },
    { "fi_strerror", (void **)&fmpl_fi.strerror },
    { NULL, NULL },
};
static fmpl_dlib_t lib = { files, syms, NULL };

int fmpl_ofi_lib_load(void)
{
    char why[256];
    if (fmpl_dlib_load(&lib, why, sizeof why) != 0) {
        fmpl_log_err("ofi: cannot load libfabric (%s); install libfabric1", why);
        return FMPL_ERR_UNSUPPORTED;
    }
    return FMPL_SUCCESS;
}
