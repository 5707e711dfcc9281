/*
 * errmap.h - one mapping from a system library's error to an FMPL code,
 * for every transport that calls one (ofi: libfabric, whose FI_E* codes
 * are errno values; dcfa: verbs, which report errno values).
 */
#ifndef FMPL_ERRMAP_H
#define FMPL_ERRMAP_H

/* FMPL_ERR_NOMEM, FMPL_ERR_UNSUPPORTED, FMPL_ERR_PEER for what says the
 * peer or the way to it went (refused, reset, aborted, unreachable, not
 * connected, timed out, I/O error), else FMPL_ERR_SYSTEM. */
int fmpl_tl_errno(int err);

/* A call of the transport `name` that failed with errno value `err`:
 * logs "NAME: WHAT (rank PEER): MSG" (no rank for peer < 0; msg: the
 * library's text for err) and returns fmpl_tl_errno(err).  A peer's
 * failure is noted in *failed_peer (when failed_peer and peer >= 0). */
int fmpl_tl_fail(const char *name, const char *what, int peer, int err, const char *msg,
                 int *failed_peer);

#endif
