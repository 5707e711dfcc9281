/*
 * dcfa_lib.c - libibverbs, loaded when the dcfa transport opens a device
 * (base/dlib.h says why it is not linked: with libnl beside it, about
 * 0.6 MiB resident in every process of a job that never uses it).
 *
 * The data path (ibv_post_send, ibv_poll_cq, ...) is inline in verbs.h,
 * through the context's ops; only the set-up and the error strings are
 * real symbols.  A rank in split mode (dcfa_uverbs.h) issues the kernel's
 * commands itself and needs the library for error strings alone.
 */
#include <string.h>

#include "fmpl.h"
#include "base/dlib.h"
#include "base/log.h"
#include "transport/dcfa/dcfa.h"

fmpl_ibv_lib_t fmpl_ibv;

#define IBV_SYM(f) FMPL_DLIB_SYM(fmpl_ibv, f)
static const fmpl_dlib_sym_t syms[] = { FMPL_IBV_FNS(IBV_SYM) { NULL, NULL } };
static const char *const files[] = { "libibverbs.so.1", NULL };
static fmpl_dlib_t lib = { files, syms, NULL };

int fmpl_dcfa_lib_load(void)
{
    char why[256];
    if (fmpl_dlib_load(&lib, why, sizeof why) != 0) {
        fmpl_log_err("dcfa: cannot load libibverbs (%s); install libibverbs1", why);
        return FMPL_ERR_UNSUPPORTED;
    }
    return FMPL_SUCCESS;
}

/* verbs.h's ___ibv_query_port, whose fallback names the library's symbol */
int fmpl_dcfa_query_port(struct ibv_context *c, uint8_t port, struct ibv_port_attr *a)
{
    struct verbs_context *v = verbs_get_ctx_op(c, query_port);
    if (v)
        return v->query_port(c, port, a, sizeof *a);
    memset(a, 0, sizeof *a);
    /* parenthesised: ibv_query_port( is a verbs.h macro */
    return (fmpl_ibv.ibv_query_port)(c, port, (struct _compat_ibv_port_attr *)a);
}

const char *fmpl_dcfa_wc_str(enum ibv_wc_status s)
{
    if (fmpl_dcfa_lib_load() != FMPL_SUCCESS)
        return "(no libibverbs to name the status)";
    return fmpl_ibv.ibv_wc_status_str(s);
}
