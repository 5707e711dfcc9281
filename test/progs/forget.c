/*
 * forget - a send given up on a stopped peer leaves the request's memory
 * to the user: the transport's completions of its writes, which come
 * once the peer runs again or dies, must not count down in it
 * (transport.h: ops->forget).
 *
 *   forget [-s SIZE] [-k]        2 ranks, FMPL_PEER_TIMEOUT set short
 *
 * Rank 1 sends its pid, posts a receive of SIZE (default 64 MiB: more than
 * a FIFO or a socket holds), makes progress for a moment and stops itself
 * (SIGSTOP).  Rank 0 waits until it has stopped; its isend of SIZE must
 * end with FMPL_ERR_PEER from fmpl_wait (the peer timed out) with writes
 * still on their way (on shm, with CMA refused: PROG_DENY_CMA=1); rank 0
 * then fills the request with a pattern, lets rank 1 run on (SIGCONT: its
 * writes complete) or kills it (-k: they fail), makes progress for half a
 * second with requests of its own (a send to itself), and checks that the
 * pattern is whole and that its own requests completed well.  Rank 0
 * prints "OK forget"; the job fails, as a job whose rank timed out does.
 */
#include <signal.h>

#include "prog.h"

/* is process pid stopped (state T in /proc/PID/stat) */
static int stopped(int pid)
{
    char path[64], line[512];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    char *got = fgets(line, sizeof line, f);
    fclose(f);
    const char *e = got ? strrchr(line, ')') : NULL;
    return e && e[1] == ' ' && e[2] == 'T';
}

int main(int argc, char **argv)
{
    size_t size = 64u << 20;
    int killit = 0;
    struct prog_opt opts[] = {
        {'s', OPT_SIZE, &size, "message size"},
        {'k', OPT_FLAG, &killit, "kill the stopped rank instead of continuing it"},
    };
    prog_name = "forget";
    prog_parse(argc, argv, opts, 2);
    prog_init("forget", 4);
    CHECK(prog_np == 2, "2 ranks, not %d", prog_np);
    char *buf = malloc(size);
    CHECK(buf != NULL, "malloc %zu", size);
    memset(buf, 1, size);
    if (prog_me == 1) {
        int pid = (int)getpid();
        CHECK_RC(fmpl_send(&pid, sizeof pid, 0, 1), FMPL_SUCCESS);
        fmpl_request_t r;
        CHECK_RC(fmpl_irecv(buf, size, 0, 0, &r), FMPL_SUCCESS);
        /* long enough for the header to reach rank 0 and writes to start */
        for (double t0 = prog_now(); prog_now() - t0 < 0.3;) {
            int done;
            CHECK_RC(fmpl_test(&r, &done), FMPL_SUCCESS);
        }
        raise(SIGSTOP);
        fmpl_wait(&r);             /* run on: whatever the job's end brings */
        return 0;
    }
    int pid;
    CHECK_RC(fmpl_recv(&pid, sizeof pid, 1, 1), FMPL_SUCCESS);
    /* send only to a stopped receiver, or the message may be through first */
    for (double t0 = prog_now(); !stopped(pid);)
        CHECK(prog_now() - t0 < 30, "rank 1 (pid %d) did not stop", pid);
    fmpl_request_t *req = malloc(sizeof *req);
    CHECK(req != NULL, "malloc");
    CHECK_RC(fmpl_isend(buf, size, 1, 0, req), FMPL_SUCCESS);
    CHECK_RC(fmpl_wait(req), FMPL_ERR_PEER);
    /* the request's memory is ours again */
    memset(req, 0x5a, sizeof *req);
    CHECK(kill(pid, killit ? SIGKILL : SIGCONT) == 0, "kill %d: %s", pid, strerror(errno));
    int n = 0;
    for (double t0 = prog_now(); prog_now() - t0 < 0.5; n++) {
        uint64_t out = (uint64_t)n, in = ~0ull;
        fmpl_request_t rs, rr;
        CHECK_RC(fmpl_irecv(&in, sizeof in, 0, 2, &rr), FMPL_SUCCESS);
        CHECK_RC(fmpl_isend(&out, sizeof out, 0, 2, &rs), FMPL_SUCCESS);
        CHECK_RC(fmpl_wait(&rs), FMPL_SUCCESS);
        CHECK_RC(fmpl_wait(&rr), FMPL_SUCCESS);
        CHECK(in == out, "self message %d: got %llu", n, (unsigned long long)in);
    }
    const unsigned char *p = (const unsigned char *)req;
    for (size_t i = 0; i < sizeof *req; i++)
        CHECK(p[i] == 0x5a, "the given-up request's byte %zu changed to 0x%02x after rank 1 %s",
              i, p[i], killit ? "died" : "ran on");
    printf("OK forget (%d messages to itself meanwhile)\n", n);
    fflush(stdout);
    return 0;
}
