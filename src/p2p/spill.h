/*
 * spill.h - the spill send buffer (fmpl_sendbuff_set / fmpl_sendbuff_check).
 *
 * A blocking send that waited longer than the timeout copies its data here
 * and returns; the message keeps its sequence number and goes out when its
 * receive header arrives, pushed by every FMPL call's progress.
 */
#ifndef FMPL_SPILL_H
#define FMPL_SPILL_H

#include "fmpl.h"

struct fmpl_spill;

/* Copy a not-yet-matched send into the spill buffer.  FMPL_SUCCESS: the
 * send is complete for its caller; FMPL_ERR_SPILL: no buffer or no room. */
int  fmpl_spill_send(fmpl_request_t *req);
/* timeout in seconds, or a negative value when no buffer is set */
double fmpl_spill_timeout(void);
int  fmpl_spill_progress(void);
int  fmpl_spill_drain(void);
void fmpl_spill_free(void);

#endif
