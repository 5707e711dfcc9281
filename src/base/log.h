/*
 * log.h - one-line diagnostics on stderr, "fmpl: rank R: ...".
 * Log once, where the error is detected; return a code to the caller.
 */
#ifndef FMPL_LOG_H
#define FMPL_LOG_H

struct fmpl_boot;

void fmpl_log_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void fmpl_log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* 1 under FMPL_VERBOSE: an account costly to gather is worth gathering. */
int  fmpl_log_verbose(void);
/* Set by fmpl_init: the job's bootstrap, whose rank prefixes every line
 * once it has one (size > 0), and FMPL_VERBOSE. */
void fmpl_log_set_boot(const struct fmpl_boot *boot);
void fmpl_log_set_verbose(int on);

#endif
