/*
 * boot.c - which launcher started us: fmplrun, a PMIx server, or nobody.
 * The one place that decides; the back-ends say FMPL_ERR_UNSUPPORTED when
 * their launcher is absent.
 */
#include <stdio.h>
#include <unistd.h>

#include "fmpl.h"
#include "base/boot.h"
#include "base/gcov.h"

int fmpl_boot_open(fmpl_boot_t *b)
{
    int (*const order[])(fmpl_boot_t *) = {
        fmpl_boot_local_open, fmpl_boot_pmix_open, fmpl_boot_single_open,
    };
    for (unsigned i = 0; i < sizeof order / sizeof order[0]; i++) {
        int rc = order[i](b);
        if (rc != FMPL_ERR_UNSUPPORTED)
            return rc;
    }
    return FMPL_ERR_INTERNAL;
}

void fmpl_boot_abort(fmpl_boot_t *b, int code)
{
    fflush(NULL);
    fmpl_gcov_flush();             /* every launcher's abort ends in _exit */
    int rank = b && b->ops ? b->rank : 0;
    fprintf(stderr, "fmpl: rank %d called fmpl_abort(%d): ending the job\n", rank, code);
    if (b && b->ops)
        b->ops->abort(b, code);
    _exit(code ? code : 1);
}
