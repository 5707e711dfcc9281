/*
 * errmap.c - a system library's errors as FMPL codes (errmap.h).
 */
#include <errno.h>

#include "fmpl.h"
#include "base/log.h"
#include "transport/errmap.h"

int fmpl_tl_errno(int err)
{
    switch (err) {
    case ENOMEM:
        return FMPL_ERR_NOMEM;
    case ENOSYS: case EOPNOTSUPP:
        return FMPL_ERR_UNSUPPORTED;
    case EHOSTUNREACH: case ECONNREFUSED: case ECONNRESET: case ECONNABORTED:
    case ENOTCONN: case ETIMEDOUT: case EIO:
        return FMPL_ERR_PEER;
    default:
        return FMPL_ERR_SYSTEM;
    }
}

int fmpl_tl_fail(const char *name, const char *what, int peer, int err, const char *msg,
                 int *failed_peer)
{
    if (peer >= 0)
        fmpl_log_err("%s: %s (rank %d): %s", name, what, peer, msg);
    else
        fmpl_log_err("%s: %s: %s", name, what, msg);
    int rc = fmpl_tl_errno(err);
    if (rc == FMPL_ERR_PEER && peer >= 0 && failed_peer)
        *failed_peer = peer;
    return rc;
}
