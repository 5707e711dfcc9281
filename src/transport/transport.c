/*
 * transport.c - choosing the transport, and what every transport inherits.
 *
 * The routing decision lives here and nowhere else.  On one machine the
 * shared-memory transport serves every peer; FMPL_TRANSPORT names another
 * for all of them ("ofi": libfabric, built when libfabric is installed).
 */
#include <stdlib.h>
#include <string.h>

#include "fmpl.h"
#include "core/log.h"
#include "transport/transport.h"

const fmpl_tl_ops_t *fmpl_tl_select(void)
{
    static const fmpl_tl_ops_t *const all[] = { &fmpl_shm_ops,
#ifdef FMPL_HAVE_OFI
                                                &fmpl_ofi_ops,
#endif
    };
    const char *want = getenv("FMPL_TRANSPORT");
    if (!want || !*want)
        return all[0];
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (strcmp(all[i]->name, want) == 0)
            return all[i];
    fmpl_log_err("FMPL_TRANSPORT=%s: no such transport in this build (have: shm%s)", want,
#ifdef FMPL_HAVE_OFI
                 ", ofi"
#else
                 ""
#endif
    );
    return NULL;
}

int fmpl_tl_unsupported_put_strided(fmpl_tl_t *tl, int peer, const void *src, size_t blklen,
                                    size_t nblk, size_t sstride, const fmpl_tl_key_t *key,
                                    uint64_t roff, size_t dstride, fmpl_tl_comp_t *comp)
{
    (void)tl; (void)peer; (void)src; (void)blklen; (void)nblk; (void)sstride;
    (void)key; (void)roff; (void)dstride; (void)comp;
    return FMPL_ERR_UNSUPPORTED;
}

int fmpl_tl_unsupported_cas(fmpl_tl_t *tl, int peer, int idx, unsigned off, int out,
                            uint64_t expect, uint64_t desired, uint64_t *old)
{
    (void)tl; (void)peer; (void)idx; (void)off; (void)out; (void)expect; (void)desired;
    (void)old;
    return FMPL_ERR_UNSUPPORTED;
}

int fmpl_tl_unsupported_get(fmpl_tl_t *tl, int peer, void *dst, size_t len,
                            const fmpl_tl_key_t *key, uint64_t roff)
{
    (void)tl; (void)peer; (void)dst; (void)len; (void)key; (void)roff;
    return FMPL_ERR_UNSUPPORTED;
}

int fmpl_tl_unsupported_barrier(fmpl_tl_t *tl, fmpl_tl_coll_t *st)
{
    (void)tl; (void)st;
    return FMPL_ERR_UNSUPPORTED;
}

int fmpl_tl_unsupported_bcast(fmpl_tl_t *tl, void *buf, size_t len, int root,
                              fmpl_tl_coll_t *st)
{
    (void)tl; (void)buf; (void)len; (void)root; (void)st;
    return FMPL_ERR_UNSUPPORTED;
}

/* A 2-D block-stride put as one put per block, for transports without
 * strided DMA. */
int fmpl_tl_put_strided_by_put(fmpl_tl_t *tl, int peer, const void *src, size_t blklen,
                               size_t nblk, size_t sstride, const fmpl_tl_key_t *key,
                               uint64_t roff, size_t dstride, fmpl_tl_comp_t *comp)
{
    const uint8_t *s = src;
    for (size_t b = 0; b < nblk; b++) {
        int rc = tl->ops->put(tl, peer, s + b * sstride, blklen, key, roff + b * dstride, comp);
        if (rc != FMPL_SUCCESS)
            return rc;
    }
    return FMPL_SUCCESS;
}

int fmpl_tl_put_iov_by_put(fmpl_tl_t *tl, int peer, const fmpl_tl_iov_t *iov, int n,
                           const fmpl_tl_key_t *key, fmpl_tl_comp_t *comp)
{
    for (int i = 0; i < n; i++) {
        int rc = tl->ops->put(tl, peer, iov[i].src, iov[i].len, key, iov[i].roff, comp);
        if (rc != FMPL_SUCCESS)
            return rc;
    }
    return FMPL_SUCCESS;
}
