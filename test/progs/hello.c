/*
 * hello - a small program for the launcher tests (check_launch).
 *
 *   hello [options] [args...]
 *     -r RANK   the rank the options below apply to (default: last rank)
 *     -e CODE   that rank exits with CODE after fmpl_finalize
 *     -a CODE   that rank calls fmpl_abort(CODE); the others wait in
 *               fmpl_recv from it
 *     -k SIG    that rank raises SIG; the others wait in fmpl_recv from it
 *               (and exit 3 on FMPL_ERR_PEER)
 *     -s SEC    every rank sleeps SEC seconds (outside FMPL) before finalize
 *     -b        every rank blocks in fmpl_recv from the next rank forever
 *     -l LINES  every rank prints LINES numbered lines on stdout and on
 *               stderr ("out R i" / "err R i")
 *     -N        do not call fmpl_init at all
 *     -E        that rank exits at once with CODE (-e, default 0) without
 *               fmpl_init; the others report what fmpl_init returned and
 *               exit 3 on FMPL_ERR_PEER
 *     -S        every rank reads one line of standard input and prints
 *               "stdin R <line>" (or "stdin R EOF")
 *     -q        that rank returns 0 right after fmpl_init, without
 *               fmpl_finalize; the others wait in fmpl_recv from it
 *
 * Always prints "hello rank R size N pid P" on stdout, then one line per
 * extra argument "arg I <ARG>" and "env FMPL_TEST_VAR=<value>".
 */
#include "prog.h"

int main(int argc, char **argv)
{
    long who = -1, code = -1, abort_code = -1, sig = 0, lines = 0;
    double sleep_s = 0;
    int block = 0, noinit = 0, early = 0, quit = 0, rdin = 0, first, i, rc;
    struct prog_opt opts[] = {
        {'r', OPT_INT, &who, "rank the options apply to (default last)"},
        {'e', OPT_INT, &code, "exit code after finalize"},
        {'a', OPT_INT, &abort_code, "fmpl_abort code"},
        {'k', OPT_INT, &sig, "raise this signal"},
        {'s', OPT_DOUBLE, &sleep_s, "sleep seconds"},
        {'b', OPT_FLAG, &block, "block in fmpl_recv forever"},
        {'l', OPT_INT, &lines, "lines to print on stdout and stderr"},
        {'N', OPT_FLAG, &noinit, "no fmpl_init"},
        {'E', OPT_FLAG, &early, "that rank exits before fmpl_init"},
        {'q', OPT_FLAG, &quit, "that rank returns after init, no finalize"},
        {'S', OPT_FLAG, &rdin, "read a line of standard input"},
    };
    const char *var;
    static char buf[64];

    prog_name = "hello";
    first = prog_parse(argc, argv, opts, 11);
    if (noinit) {
        const char *r = getenv("FMPL_RANK");
        printf("hello rank %s size - pid %d (no init)\n", r ? r : "-", (int)getpid());
        for (i = first; i < argc; i++)
            printf("arg %d <%s>\n", i - first, argv[i]);
        return code >= 0 ? (int)code : 0;
    }
    if (early) {
        const char *r = getenv("FMPL_RANK"), *n = getenv("FMPL_SIZE");
        int me = r ? atoi(r) : 0, np = n ? atoi(n) : 1;
        if (me == (who < 0 ? np - 1 : who)) {
            printf("hello rank %d: exiting before fmpl_init\n", me);
            return code >= 0 ? (int)code : 0;
        }
        rc = fmpl_init(4);
        printf("hello rank %d: fmpl_init returned %s\n", me, fmpl_error_name(rc));
        return rc == FMPL_ERR_PEER ? 3 : 1;
    }
    prog_init("hello", 4);
    if (who < 0)
        who = prog_np - 1;
    printf("hello rank %d size %d pid %d\n", prog_me, prog_np, (int)getpid());
    for (i = first; i < argc; i++)
        printf("arg %d <%s>\n", i - first, argv[i]);
    if (rdin) {
        char line[256];
        if (fgets(line, sizeof line, stdin)) {
            line[strcspn(line, "\n")] = 0;
            printf("stdin %d <%s>\n", prog_me, line);
        } else {
            printf("stdin %d EOF\n", prog_me);
        }
    }
    var = getenv("FMPL_TEST_VAR");
    printf("env FMPL_TEST_VAR=%s\n", var ? var : "(unset)");
    for (i = 0; i < lines; i++) {
        printf("out %d %d\n", prog_me, i);
        fprintf(stderr, "err %d %d\n", prog_me, i);
    }
    fflush(stdout);
    fflush(stderr);

    if (quit && prog_me == who) {
        printf("hello rank %d: leaving without fmpl_finalize\n", prog_me);
        return 0;
    }
    if (abort_code >= 0 || sig > 0 || quit) {
        if (prog_me == who) {
            prog_sleep(0.3);
            if (sig > 0)
                raise((int)sig);
            else
                fmpl_abort((int)abort_code);
            return 98;
        }
        rc = fmpl_recv(buf, sizeof buf, (int)who, 0);
        printf("hello rank %d: fmpl_recv from %ld returned %s\n", prog_me, who,
               fmpl_error_name(rc));
        fflush(stdout);
        return rc == FMPL_ERR_PEER ? 3 : 1;
    }
    if (block) {
        rc = fmpl_recv(buf, sizeof buf, (prog_me + 1) % prog_np, 0);
        printf("hello rank %d: blocking fmpl_recv returned %s\n", prog_me,
               fmpl_error_name(rc));
        return 1;
    }
    if (sleep_s > 0)
        prog_sleep(sleep_s);
    CHECK_RC(fmpl_finalize(), FMPL_SUCCESS);
    if (prog_me == 0)
        printf("OK hello\n");
    fflush(stdout);
    if (prog_me == who && code >= 0)
        return (int)code;
    return 0;
}
