/*
 * fuzz_fmplrun - libFuzzer harness for fmplrun's command line and its
 * FMPL_KILL_GRACE (tools/fmplrun/options.c: frun_parse_args and
 * frun_grace_from_env), linked with options.c and src/base/parse.c alone.
 *
 * Input: the arguments after "fmplrun", separated by NUL bytes (at most
 * 32); if the first byte is odd, the first argument is FMPL_KILL_GRACE's
 * value instead.  The parsers return the status fmplrun exits with when
 * it does not start a job (a usage error, --help, --version).  What they
 * accept must be a job fmplrun can start: 1 to FMPL_CTL_MAX_SIZE ranks, a
 * timeout of 0 (none) or in (0, 1e9], a grace of 0 to 1e6 s, and a
 * program that is one of the arguments given; a usage error must return
 * 2, --help and --version 0.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../tools/fmplrun/fmplrun.h"

#define MAXARGS 32

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
    /* the arguments, each NUL-terminated in a copy of the input */
    static char buf[4200];
    static char *argv[MAXARGS + 2];
    int argc = 0, grace = n > 0 && (data[0] & 1);
    if (n > 0) {
        data++;
        n--;
    }
    if (n > sizeof buf - 1)
        n = sizeof buf - 1;
    memcpy(buf, data, n);
    buf[n] = '\0';
    argv[argc++] = "fmplrun";
    const char *grace_val = NULL;
    for (size_t i = 0; i <= n && argc <= MAXARGS;) {
        char *a = buf + i;
        if (grace && grace_val == NULL)
            grace_val = a;
        else
            argv[argc++] = a;
        i += strlen(a) + 1;
    }
    argv[argc] = NULL;

    if (grace_val)
        setenv("FMPL_KILL_GRACE", grace_val, 1);
    else
        unsetenv("FMPL_KILL_GRACE");

    /* not a job: a usage error (2), or --help / --version (0), and only
     * from the parser that may */
    struct frun_opts opt;
    int st = frun_parse_args(&opt, argc, argv);
    if (st != FRUN_RUN_JOB) {
        if (st != 0 && st != 2)
            abort();
        return 0;
    }
    st = frun_grace_from_env(&opt);
    if (st != FRUN_RUN_JOB) {
        if (st != 2)
            abort();
        return 0;
    }

    if (opt.n < 1 || opt.n > FMPL_CTL_MAX_SIZE)
        abort();
    if (!(opt.timeout_s == 0 || (opt.timeout_s > 0 && opt.timeout_s <= 1e9)))
        abort();
    if (opt.grace_ms < 0 || opt.grace_ms > 1000000000LL)
        abort();
    /* the program is one of our arguments, and the rest follow it */
    int k = (int)(opt.argv - argv);
    if (opt.argv == NULL || k < 1 || k >= argc || opt.argv[0] == NULL)
        abort();
    for (int i = k; i < argc; i++)
        if (opt.argv[i - k] != argv[i])
            abort();
    return 0;
}
