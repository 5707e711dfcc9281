/*
 * util.c - what every part of fmplrun uses: its messages and its clock.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "fmplrun.h"

long long frun_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void frun_verbose(const struct frun_opts *opt, const char *fmt, ...)
{
    va_list ap;

    if (!opt->verbose)
        return;
    va_start(ap, fmt);
    fputs("fmplrun: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

void frun_die(int code, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    fputs("fmplrun: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(code);
}
