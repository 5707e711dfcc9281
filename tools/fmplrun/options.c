/*
 * options.c - fmplrun's command line and FMPL_KILL_GRACE.
 *
 * Nothing here exits or touches the process beyond printing: a usage
 * error, --help and --version come back as the status main() exits with,
 * so the fuzz harness (test/fuzz/fuzz_fmplrun.c) links this file alone
 * with src/base/parse.c.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/parse.h"
#include "fmpl.h"
#include "fmplrun.h"

#define DEFAULT_GRACE_MS 3000     /* dead rank -> SIGTERM to the others */

static void usage(void)
{
    printf(
"Usage: fmplrun -n N [options] [--] program [args...]\n"
"Start N processes of program on this machine as one FMPL job.\n"
"\n"
"Options:\n"
"  -n, -np N           number of processes, 1 to %d (default 1)\n"
"  -t, --timeout SEC   kill the job after SEC seconds (exit status 124)\n"
"  -p, --prefix        prefix every output line of rank R with \"[R] \"\n"
"  -v, --verbose       report the job id, the pids, the CPUs and every exit\n"
"      --bind-to core|none  bind rank R to the R-th CPU fmplrun may run on,\n"
"                      or leave the ranks to the scheduler (default: core\n"
"                      when 2 <= N <= those CPUs, else none)\n"
"  -h, --help          print this help\n"
"  -V, --version       print fmplrun's version (its FMPL's) and exit\n"
"\n"
"Rank 0 reads fmplrun's standard input, the others read /dev/null.\n"
"When a rank dies, or exits without fmpl_finalize, the other ranks' FMPL\n"
"calls fail with FMPL_ERR_PEER; ranks still running after a grace period\n"
"get SIGTERM, and SIGKILL 2 s later.  fmpl_abort kills the job at once.\n"
"SIGINT or SIGTERM to fmplrun is passed on as SIGTERM (a second one kills).\n"
"Processes the ranks leave behind are killed when the job ends.\n"
"\n"
"Exit status: the first non-zero exit status of a rank (128+S for a rank\n"
"killed by signal S); the code given to fmpl_abort; 124 after --timeout;\n"
"130 or 143 after SIGINT or SIGTERM; 2 for a usage error or a program\n"
"that cannot be executed; 0 when every rank exits with 0.\n"
"\n"
"Environment:\n"
"  FMPL_KILL_GRACE=SEC  grace period before the survivors of a failed job\n"
"                       are terminated (default 3)\n"
"Set for every rank: FMPL_JOBID, FMPL_RANK, FMPL_SIZE, FMPL_CTL_FD.\n"
"Removed for every rank: PMIX_* and OMPI_*, so a job started inside\n"
"mpirun is a local job.  The library's own variables (FMPL_PROGRESS_THREAD,\n"
"FMPL_TRANSPORT, FMPL_SHM_CMA, FMPL_SHM_EAGER, FMPL_PEER_TIMEOUT,\n"
"FMPL_VERBOSE; see fmpl.h) pass through.\n",
            FMPL_CTL_MAX_SIZE);
}

/* Returns 2, the status a usage error exits with. */
static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    fputs("fmplrun: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputs("\nTry 'fmplrun --help'.\n", stderr);
    va_end(ap);
    return 2;
}

int frun_parse_args(struct frun_opts *opt, int argc, char **argv)
{
    int i;

    *opt = (struct frun_opts){ .n = 1, .bind = FRUN_BIND_AUTO };

    for (i = 1; i < argc && argv[i][0] == '-'; i++) {
        const char *a = argv[i], *val;

        if (strcmp(a, "--") == 0) {
            i++;
            break;
        }
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage();
            return 0;
        } else if (strcmp(a, "-V") == 0 || strcmp(a, "--version") == 0) {
            printf("fmplrun (FMPL) %s\n", FMPL_VERSION_STRING);
            return 0;
        } else if (strcmp(a, "-p") == 0 || strcmp(a, "--prefix") == 0) {
            opt->prefix = 1;
        } else if (strcmp(a, "-v") == 0 || strcmp(a, "--verbose") == 0) {
            opt->verbose = 1;
        } else if (strcmp(a, "-n") == 0 || strcmp(a, "-np") == 0 ||
                   strcmp(a, "--np") == 0 || (a[1] == 'n' && isdigit((unsigned char)a[2]))) {
            long n;

            val = isdigit((unsigned char)a[2]) ? a + 2 : argv[++i];
            if (val == NULL)
                return usage_error("%s needs a number of processes", a);
            if (fmpl_parse_long(val, 1, FMPL_CTL_MAX_SIZE, &n) != 0)
                return usage_error("the number of processes must be 1 to %d, not '%s'",
                                   FMPL_CTL_MAX_SIZE, val);
            opt->n = (int)n;
        } else if (strcmp(a, "-t") == 0 || strcmp(a, "--timeout") == 0 ||
                   strncmp(a, "--timeout=", 10) == 0) {
            val = a[1] == '-' && a[9] == '=' ? a + 10 : argv[++i];
            if (val == NULL)
                return usage_error("%s needs a number of seconds", a);
            if (fmpl_parse_double(val, 0, 1e9, &opt->timeout_s) != 0 || !(opt->timeout_s > 0))
                return usage_error("the timeout must be a number of seconds > 0, not '%s'", val);
        } else if (strcmp(a, "--bind-to") == 0 || strncmp(a, "--bind-to=", 10) == 0) {
            val = a[9] == '=' ? a + 10 : argv[++i];
            if (val == NULL)
                return usage_error("%s needs 'core' or 'none'", a);
            if (strcmp(val, "core") == 0)
                opt->bind = FRUN_BIND_CORE;
            else if (strcmp(val, "none") == 0)
                opt->bind = FRUN_BIND_NONE;
            else
                return usage_error("--bind-to takes 'core' or 'none', not '%s'", val);
        } else {
            return usage_error("unknown option '%s'", a);
        }
    }
    if (i >= argc)
        return usage_error("no program to run");
    opt->argv = argv + i;
    return FRUN_RUN_JOB;
}

int frun_grace_from_env(struct frun_opts *opt)
{
    const char *s = getenv("FMPL_KILL_GRACE");
    double v;

    opt->grace_ms = DEFAULT_GRACE_MS;
    if (s == NULL || *s == '\0')
        return FRUN_RUN_JOB;
    if (fmpl_parse_double(s, 0, 1e6, &v) != 0)
        return usage_error("FMPL_KILL_GRACE=%s: seconds between a rank's failure and SIGTERM "
                           "to the others, 0 to 1e6", s);
    opt->grace_ms = (long long)(v * 1000 + 0.5);
    return FRUN_RUN_JOB;
}
