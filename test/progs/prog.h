/*
 * prog.h - helpers for the FMPL test worker programs (test/progs/<name>.c).
 *
 * A worker is an ordinary FMPL program run under bin/fmplrun by the Check
 * drivers.  It exits 0 only when every check held, and rank 0 prints one
 * line "OK <name>" at the end (prog_finish()).  A failed check prints
 *   [rank R] file.c:LINE: what failed ... (values, fmpl_strerror)
 * on stderr and exits 1.
 *
 *   CHECK(cond, fmt, ...)        condition with a printf-style explanation
 *   CHECK_RC(call, expected)     an FMPL call must return `expected`
 *   pat_fill / pat_verify        data whose every byte depends on
 *                                (seed, rank, index, offset)
 *   prog_parse                   tiny getopt-based option table
 *   prog_rng_*                   deterministic random numbers (splitmix64)
 *   prog_barrier                 a barrier built from p2p on one index
 *
 * PROG_DENY_CMA=1 in the environment makes the kernel refuse cross-memory
 * attach to the worker (a seccomp filter: process_vm_readv/writev fail
 * with EPERM, as under Yama's ptrace_scope 2 or a container profile),
 * which as root it would otherwise always allow.
 *
 * PROG_BIND=1 binds every rank but rank 0 to one CPU before fmpl_init
 * (rank r to the (r-1)-th CPU it may use, round robin), rank 0 keeping
 * them all: with more ranks than CPUs, rank 0 finds its CPUs crowded and
 * the others each find theirs free - ranks that judge the machine
 * differently must still choose alike (transport.h: crowded_any).
 */
#ifndef FMPL_TEST_PROG_H
#define FMPL_TEST_PROG_H

#include "fmpl.h"

#include <errno.h>
#include <getopt.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#if defined(__GNUC__)
#define PROG_UNUSED __attribute__((unused))
#define PROG_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define PROG_UNUSED
#define PROG_PRINTF(a, b)
#endif

/* The program's short name, used in messages and "OK <name>". */
static const char *prog_name PROG_UNUSED = "prog";

/* ------------------------------------------------------------------ */
/* Failing                                                              */
/* ------------------------------------------------------------------ */

static int prog_rank_for_msg(void)
{
    int r = fmpl_rank();
    if (r < 0) {
        /* before fmpl_init: take the launcher's word if there is one */
        const char *e = getenv("FMPL_RANK");
        if (e)
            r = atoi(e);
    }
    return r;
}

static void prog_fail(const char *file, int line, const char *fmt, ...) PROG_PRINTF(3, 4);
static void prog_fail(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    char msg[1024];

    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fflush(stdout);
    fprintf(stderr, "[rank %d] %s: %s:%d: FAIL: %s\n", prog_rank_for_msg(),
            prog_name, file, line, msg);
    fflush(stderr);
    exit(1);
}

#define CHECK(cond, ...)                                                      \
    do {                                                                      \
        if (!(cond))                                                          \
            prog_fail(__FILE__, __LINE__, "CHECK(" #cond ") " __VA_ARGS__);   \
    } while (0)

#define CHECK_RC(call, expected)                                              \
    do {                                                                      \
        int prog_rc_ = (call);                                                \
        int prog_ex_ = (expected);                                            \
        if (prog_rc_ != prog_ex_)                                             \
            prog_fail(__FILE__, __LINE__,                                     \
                      "%s returned %d %s (%s), expected %d %s (%s)", #call,   \
                      prog_rc_, fmpl_error_name(prog_rc_),                    \
                      fmpl_strerror(prog_rc_), prog_ex_,                      \
                      fmpl_error_name(prog_ex_), fmpl_strerror(prog_ex_));    \
    } while (0)

/* Like CHECK_RC, but the call may return any of the codes in the list
 * (used where the documentation leaves a choice). */
#define CHECK_RC2(call, ex1, ex2)                                             \
    do {                                                                      \
        int prog_rc_ = (call);                                                \
        if (prog_rc_ != (ex1) && prog_rc_ != (ex2))                           \
            prog_fail(__FILE__, __LINE__,                                     \
                      "%s returned %d %s (%s), expected %s or %s", #call,     \
                      prog_rc_, fmpl_error_name(prog_rc_),                    \
                      fmpl_strerror(prog_rc_), fmpl_error_name(ex1),          \
                      fmpl_error_name(ex2));                                  \
    } while (0)

/* ------------------------------------------------------------------ */
/* Deterministic random numbers                                          */
/* ------------------------------------------------------------------ */

static inline uint64_t prog_mix64(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

typedef struct { uint64_t s; } prog_rng_t;

static inline void prog_rng_seed(prog_rng_t *g, uint64_t seed) { g->s = prog_mix64(seed); }
static inline uint64_t prog_rng_next(prog_rng_t *g)
{
    g->s += 0x9e3779b97f4a7c15ull;
    return prog_mix64(g->s);
}
/* uniform in [0, n) (n > 0) */
static inline uint64_t prog_rng_below(prog_rng_t *g, uint64_t n)
{
    return n ? prog_rng_next(g) % n : 0;
}

/* ------------------------------------------------------------------ */
/* Data patterns                                                        */
/* ------------------------------------------------------------------ */

/* The 8 bytes at offsets [8k, 8k+8) of the message (seed, rank, index). */
static inline uint64_t pat_word(uint64_t seed, int rank, int index, size_t k)
{
    uint64_t h = seed * 0x100000001b3ull ^ ((uint64_t)(uint32_t)rank << 40)
                 ^ ((uint64_t)(uint32_t)index << 8);
    return prog_mix64(h ^ prog_mix64(k + 0x51ed27));
}

/* The byte at `offset`. */
static inline unsigned char pat_byte(uint64_t seed, int rank, int index, size_t offset)
{
    return (unsigned char)(pat_word(seed, rank, index, offset / 8) >> (8 * (offset % 8)));
}

static PROG_UNUSED void pat_fill(void *buf, size_t size, uint64_t seed, int rank, int index)
{
    unsigned char *p = (unsigned char *)buf;
    size_t k, nw = size / 8;

    for (k = 0; k < nw; k++) {
        uint64_t w = pat_word(seed, rank, index, k);
        unsigned char b[8];
        int i;
        for (i = 0; i < 8; i++)
            b[i] = (unsigned char)(w >> (8 * i));
        memcpy(p + 8 * k, b, 8);
    }
    for (k = nw * 8; k < size; k++)
        p[k] = pat_byte(seed, rank, index, k);
}

/* Returns -1 when buf holds the pattern, else the first wrong offset. */
static PROG_UNUSED long pat_find_error(const void *buf, size_t size, uint64_t seed,
                                       int rank, int index)
{
    const unsigned char *p = (const unsigned char *)buf;
    size_t k, nw = size / 8;

    for (k = 0; k < nw; k++) {
        uint64_t w = pat_word(seed, rank, index, k);
        unsigned char b[8];
        int i;
        for (i = 0; i < 8; i++)
            b[i] = (unsigned char)(w >> (8 * i));
        if (memcmp(p + 8 * k, b, 8) != 0) {
            for (i = 0; i < 8; i++)
                if (p[8 * k + i] != b[i])
                    return (long)(8 * k + i);
        }
    }
    for (k = nw * 8; k < size; k++)
        if (p[k] != pat_byte(seed, rank, index, k))
            return (long)k;
    return -1;
}

/* CHECK that buf holds the pattern; the message tells where it broke. */
#define PAT_VERIFY(buf, size, seed, rank, index)                              \
    do {                                                                      \
        size_t pv_size_ = (size);                                             \
        long pv_off_ = pat_find_error((buf), pv_size_, (seed), (rank), (index)); \
        if (pv_off_ >= 0)                                                     \
            prog_fail(__FILE__, __LINE__,                                     \
                      "data mismatch: message of %zu bytes from rank %d "     \
                      "index %d seed %#" PRIx64 ": byte %ld is 0x%02x, "      \
                      "expected 0x%02x",                                      \
                      pv_size_, (int)(rank), (int)(index), (uint64_t)(seed),  \
                      pv_off_, ((const unsigned char *)(buf))[pv_off_],       \
                      pat_byte((seed), (rank), (index), (size_t)pv_off_));    \
    } while (0)

/* Poison: a constant byte used for "must stay untouched" regions. */
#define PROG_POISON 0xa5

/* CHECK that [buf, buf+size) is all `byte`. */
#define POISON_VERIFY(buf, size, byte, what)                                  \
    do {                                                                      \
        const unsigned char *pz_p_ = (const unsigned char *)(buf);            \
        size_t pz_n_ = (size), pz_i_;                                         \
        for (pz_i_ = 0; pz_i_ < pz_n_; pz_i_++)                               \
            if (pz_p_[pz_i_] != (unsigned char)(byte))                        \
                prog_fail(__FILE__, __LINE__,                                 \
                          "%s: byte %zu of %zu was overwritten (0x%02x, "     \
                          "expected 0x%02x)", (what), pz_i_, pz_n_,           \
                          pz_p_[pz_i_], (unsigned)(unsigned char)(byte));     \
    } while (0)

/* ------------------------------------------------------------------ */
/* Options                                                              */
/* ------------------------------------------------------------------ */

enum prog_opt_type { OPT_FLAG, OPT_INT, OPT_SIZE, OPT_STR, OPT_DOUBLE };

struct prog_opt {
    char key;                  /* the letter: -k */
    enum prog_opt_type type;
    void *ptr;                 /* int*, long*, size_t*, const char**, double* */
    const char *help;
};

/* "64", "4k", "1M", "2G" (binary units) */
static PROG_UNUSED int prog_parse_size(const char *s, size_t *out)
{
    char *end;
    unsigned long long v;

    errno = 0;
    v = strtoull(s, &end, 0);
    if (errno || end == s)
        return -1;
    switch (*end) {
    case 'k': case 'K': v <<= 10; end++; break;
    case 'm': case 'M': v <<= 20; end++; break;
    case 'g': case 'G': v <<= 30; end++; break;
    default: break;
    }
    if (*end == 'i' || *end == 'B')
        end++;
    if (*end)
        return -1;
    *out = (size_t)v;
    return 0;
}

static PROG_UNUSED void prog_usage(const struct prog_opt *o, int n, FILE *f)
{
    int i;
    fprintf(f, "usage: %s [options]\n", prog_name);
    for (i = 0; i < n; i++)
        fprintf(f, "  -%c%s  %s\n", o[i].key,
                o[i].type == OPT_FLAG ? "    " : " ARG", o[i].help);
}

/* Parse argv against the table; exits 2 on a bad option.  Returns optind. */
static PROG_UNUSED int prog_parse(int argc, char **argv, const struct prog_opt *o, int n)
{
    char optstr[128];
    int i, c, len = 0;

    for (i = 0; i < n && len < (int)sizeof optstr - 3; i++) {
        optstr[len++] = o[i].key;
        if (o[i].type != OPT_FLAG)
            optstr[len++] = ':';
    }
    optstr[len++] = 'h';
    optstr[len] = 0;
    while ((c = getopt(argc, argv, optstr)) != -1) {
        for (i = 0; i < n; i++)
            if (o[i].key == c)
                break;
        if (i == n) {
            prog_usage(o, n, c == 'h' ? stdout : stderr);
            exit(c == 'h' ? 0 : 2);
        }
        switch (o[i].type) {
        case OPT_FLAG: (*(int *)o[i].ptr)++; break;
        case OPT_INT: {
            char *end;
            long v = strtol(optarg, &end, 0);
            if (*end || end == optarg) goto bad;
            *(long *)o[i].ptr = v;
            break;
        }
        case OPT_SIZE:
            if (prog_parse_size(optarg, (size_t *)o[i].ptr)) goto bad;
            break;
        case OPT_STR: *(const char **)o[i].ptr = optarg; break;
        case OPT_DOUBLE: {
            char *end;
            double v = strtod(optarg, &end);
            if (*end || end == optarg) goto bad;
            *(double *)o[i].ptr = v;
            break;
        }
        }
        continue;
bad:
        fprintf(stderr, "%s: bad value '%s' for -%c\n", prog_name, optarg, c);
        prog_usage(o, n, stderr);
        exit(2);
    }
    return optind;
}

/* ------------------------------------------------------------------ */
/* Job helpers                                                          */
/* ------------------------------------------------------------------ */

static int prog_me = -1, prog_np = -1;

/* fmpl_init with a check; remembers rank and size. */
/* The job runs on the shm transport (every rank on one host): it has the
 * hardware broadcast and strided puts; others answer fmpl_hbcast with
 * FMPL_ERR_UNSUPPORTED and send halo faces as pieces.  After fmpl_init. */
static PROG_UNUSED int prog_on_shm(void)
{
    const char *t = fmpl_transport();
    return t && strcmp(t, "shm") == 0;
}

/* Is `t` an emulated fabric (the SR8000, tcw; a PEACH2 sub-cluster,
 * peach2; HA-PACS/TCA, tca; an InfiniBand cluster, ib)?  Their DMA
 * engines write the other nodes' memory with cross-memory attach, and
 * they cannot read remotely. */
static PROG_UNUSED int prog_emulated_fabric(const char *t)
{
    return t && (strcmp(t, "tcw") == 0 || strcmp(t, "peach2") == 0 || strcmp(t, "tca") == 0 ||
                 strcmp(t, "ib") == 0);
}

/* Does the transport put block-stride faces without packing (shm's
 * copies; PEACH2's block-stride DMA descriptors, which tca uses inside a
 * sub-cluster - and a write a block over InfiniBand - except with
 * InfiniBand alone, which packs as MPI does)? */
static PROG_UNUSED int prog_strided_puts(void)
{
    const char *t = fmpl_transport(), *route = getenv("FMPL_TCA_ROUTE");
    if (t && strcmp(t, "tca") == 0)
        return !(route && strcmp(route, "ib") == 0);
    return prog_on_shm() || (t && strcmp(t, "peach2") == 0);
}

/* Does fmpl_hbcast of `size` bytes succeed on ordinary (malloc) memory?
 * On shm always.  On tcw, the SR8000's hardware broadcast, only when
 * there is nothing to move (a job of one, or 0 bytes): its buffers must be
 * fmpl_alloc_mem memory at the same offset on every node (section 3.2,
 * condition (4); test/progs/hwcoll tests that side).  Elsewhere never. */
static PROG_UNUSED int prog_hbcast_ok(size_t size)
{
    const char *t = fmpl_transport();
    if (prog_on_shm())
        return 1;
    return t && strcmp(t, "tcw") == 0 && (size == 0 || fmpl_size() == 1);
}

/* Do queued sends move while their sender stays out of FMPL?  Their
 * receiver pulls them where the transport reads remotely (shm, ofi: not
 * the emulated fabrics), else the progress thread pushes them unless
 * FMPL_PROGRESS_THREAD=0 - and never on an emulated clock, which has no
 * progress thread (fmpl_wtime_emulated). */
static PROG_UNUSED int prog_moves_while_away(void)
{
    const char *t = fmpl_transport(), *pt = getenv("FMPL_PROGRESS_THREAD");
    int pull = !prog_emulated_fabric(t), thread = !(pt && strcmp(pt, "0") == 0);
    return !fmpl_wtime_emulated() && (pull || thread);
}

static PROG_UNUSED void prog_deny_cma(void)
{
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),     /* another ABI */
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_process_vm_readv, 2, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_process_vm_writev, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
    };
    struct sock_fprog fp = { .len = sizeof f / sizeof f[0], .filter = f };
    CHECK(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
          prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fp) == 0,
          "PROG_DENY_CMA: cannot install the seccomp filter: %s", strerror(errno));
}

static void prog_bind(void)
{
    const char *bind = getenv("PROG_BIND"), *rank = getenv("FMPL_RANK");
    if (!bind || strcmp(bind, "1") != 0 || !rank || atoi(rank) == 0)
        return;
    /* (the system calls themselves: the glibc macros would need
     * _GNU_SOURCE before every program's first include) */
    enum { W = 8 * sizeof(unsigned long), NW = 16 };
    unsigned long all[NW] = { 0 }, one[NW] = { 0 };
    if (syscall(SYS_sched_getaffinity, 0, sizeof all, all) <= 0)
        prog_fail(__FILE__, __LINE__, "PROG_BIND: sched_getaffinity: %s", strerror(errno));
    int ncpu = 0;
    for (int c = 0; c < NW * (int)W; c++)
        ncpu += (all[c / W] >> (c % W)) & 1;
    int k = (atoi(rank) - 1) % ncpu, c = -1;
    while (k >= 0) {
        c++;
        k -= (int)((all[c / W] >> (c % W)) & 1);
    }
    one[c / W] = 1UL << (c % W);
    if (syscall(SYS_sched_setaffinity, 0, sizeof one, one) != 0)
        prog_fail(__FILE__, __LINE__, "PROG_BIND: sched_setaffinity: %s", strerror(errno));
}

static PROG_UNUSED void prog_init(const char *name, int nidx)
{
    prog_name = name;
    setvbuf(stdout, NULL, _IOLBF, 0);
    prog_bind();
    const char *deny = getenv("PROG_DENY_CMA");
    if (deny && *deny && strcmp(deny, "0") != 0) {
        prog_deny_cma();
        /* an emulated fabric's DMA engine writes the other nodes' memory
         * with cross-memory attach: without it the job must not start,
         * and say so (shm falls back to its pipelined buffers instead) */
        const char *t = getenv("FMPL_TRANSPORT");
        if (prog_emulated_fabric(t)) {
            CHECK_RC(fmpl_init(nidx), FMPL_ERR_SYSTEM);
            printf("OK %s (%s without cross-memory attach: refused)\n", name, t);
            exit(0);
        }
    }
    CHECK_RC(fmpl_init(nidx), FMPL_SUCCESS);
    prog_me = fmpl_rank();
    prog_np = fmpl_size();
    CHECK(prog_np >= 1 && prog_me >= 0 && prog_me < prog_np,
          "rank %d size %d", prog_me, prog_np);
}

/* fmpl_finalize with a check, "OK <name>" from rank 0, exit 0. */
static PROG_UNUSED int prog_finish(void)
{
    CHECK_RC(fmpl_finalize(), FMPL_SUCCESS);
    if (prog_me == 0)
        printf("OK %s\n", prog_name);
    fflush(stdout);
    return 0;
}

/* Barrier over p2p on index `mai` (every rank calls it with the same mai;
 * no other traffic may use that index at the same time). */
static PROG_UNUSED void prog_barrier(int mai)
{
    int r;
    if (prog_np <= 1)
        return;
    if (prog_me == 0) {
        for (r = 1; r < prog_np; r++)
            CHECK_RC(fmpl_recv(NULL, 0, r, mai), FMPL_SUCCESS);
        for (r = 1; r < prog_np; r++)
            CHECK_RC(fmpl_send(NULL, 0, r, mai), FMPL_SUCCESS);
    } else {
        CHECK_RC(fmpl_send(NULL, 0, 0, mai), FMPL_SUCCESS);
        CHECK_RC(fmpl_recv(NULL, 0, 0, mai), FMPL_SUCCESS);
    }
}

/* Exchange with one partner on `mai` without needing a spill buffer:
 * irecv, isend, wait both.  Works for partner == self too. */
static PROG_UNUSED void prog_exchange(const void *sbuf, void *rbuf, size_t size,
                                      int partner, int mai)
{
    fmpl_request_t rs, rr;
    memset(&rs, 0, sizeof rs);
    memset(&rr, 0, sizeof rr);
    CHECK_RC(fmpl_irecv(rbuf, size, partner, mai, &rr), FMPL_SUCCESS);
    CHECK_RC(fmpl_isend(sbuf, size, partner, mai, &rs), FMPL_SUCCESS);
    CHECK_RC(fmpl_wait_isend(&rs), FMPL_SUCCESS);
    CHECK_RC(fmpl_wait_irecv(&rr), FMPL_SUCCESS);
}

/* The same, but completing both requests by polling fmpl_test before the
 * waits, so that the send is never spilled (fmpl_wait_isend may spill). */
static PROG_UNUSED void prog_exchange_poll(const void *sbuf, void *rbuf, size_t size,
                                           int partner, int mai)
{
    fmpl_request_t rs, rr;
    int ds = 0, dr = 0;
    memset(&rs, 0, sizeof rs);
    memset(&rr, 0, sizeof rr);
    CHECK_RC(fmpl_irecv(rbuf, size, partner, mai, &rr), FMPL_SUCCESS);
    CHECK_RC(fmpl_isend(sbuf, size, partner, mai, &rs), FMPL_SUCCESS);
    while (!ds || !dr) {
        if (!ds)
            CHECK_RC(fmpl_test(&rs, &ds), FMPL_SUCCESS);
        if (!dr)
            CHECK_RC(fmpl_test(&rr, &dr), FMPL_SUCCESS);
    }
    CHECK_RC(fmpl_wait_isend(&rs), FMPL_SUCCESS);
    CHECK_RC(fmpl_wait_irecv(&rr), FMPL_SUCCESS);
}

static PROG_UNUSED double prog_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Does the emulated machine charge the CPU time the program computes
 * (its CPU scale above 0; the default, 0, charges only fmpl_compute)? */
static PROG_UNUSED int prog_cpu_charged(void)
{
    const char *t = fmpl_transport(), *v = NULL;
    if (!t)
        return 0;
    if (strcmp(t, "tcw") == 0)
        v = getenv("FMPL_TCW_CPU_SCALE");
    else if (strcmp(t, "peach2") == 0 || strcmp(t, "tca") == 0)
        v = getenv("FMPL_TCA_CPU_SCALE");
    else if (strcmp(t, "ib") == 0)
        v = getenv("FMPL_IB_CPU_SCALE");
    return v && atof(v) > 0;
}

/* Stay away from FMPL for `sec` seconds.  On an emulated machine only
 * computation moves the clock (fmpl_wtime_emulated): fmpl_compute says
 * so, or, where the machine charges the CPU time, this computes for that
 * much CPU time.  What a test orders by sleeping stays ordered in the
 * emulated time too, and a rank that waits for another outside FMPL
 * lets the others' clocks go on. */
static PROG_UNUSED void prog_sleep(double sec)
{
    if (fmpl_wtime_emulated() && !prog_cpu_charged())
        CHECK_RC(fmpl_compute(sec), FMPL_SUCCESS);
    else if (fmpl_wtime_emulated()) {
        struct timespec t0, t;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
        do {
            for (volatile int i = 0; i < 1000; i++)
                ;
            clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
        } while ((double)(t.tv_sec - t0.tv_sec) + 1e-9 * (double)(t.tv_nsec - t0.tv_nsec) < sec);
        return;
    }
    struct timespec ts;
    ts.tv_sec = (time_t)sec;
    ts.tv_nsec = (long)((sec - (double)ts.tv_sec) * 1e9);
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* zero-filled malloc that never returns NULL (exits 1).  Zero-filled so
 * that valgrind sees defined memory even where a peer wrote the data with
 * cross-memory attach, which memcheck cannot observe. */
static PROG_UNUSED void *prog_xmalloc(size_t n)
{
    void *p = calloc(1, n ? n : 1);
    CHECK(p != NULL, "malloc(%zu) failed", n);
    return p;
}

#endif /* FMPL_TEST_PROG_H */
