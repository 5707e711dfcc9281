/*
 * log.h - one-line diagnostics on stderr, "fmpl: rank R: ...".
 * Log once, where the error is detected; return a code to the caller.
 */
#ifndef FMPL_LOG_H
#define FMPL_LOG_H

void fmpl_log_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void fmpl_log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* 1 under FMPL_VERBOSE: an account costly to gather is worth gathering. */
int  fmpl_log_verbose(void);

#endif
