/*
 * boot_local.c - bootstrap for jobs started by tools/fmplrun.
 *
 * fmplrun hands every rank the job control memory (src/base/launch_ctl.h)
 * as an inherited memfd.  Everything here is loads and stores in that
 * memory: put writes our own modex entries, get reads a peer's, fence is a
 * sense-reversing barrier.  fmplrun reaps the ranks and records the first
 * one that died, which is how a fence (and the library's waits, through
 * dead_rank) learn that a peer is gone instead of hanging.
 */
#include "base/boot.h"
#include "base/clock.h"
#include "base/cpu.h"
#include "base/launch_ctl.h"
#include "fmpl.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define SPIN_ITERS      200                 /* busy polls before yielding */
#define YIELD_NS        200000LL            /* then sched_yield for 0.2 ms */
#define CHECK_NS        10000000LL          /* look for dead ranks every 10 ms */
#define PROBE_PIDS      16                  /* kill(pid, 0) per look */

struct local_priv {
    struct fmpl_ctl *ctl;
    size_t bytes;
    /* Atomic only because a progress thread may ask dead_rank() while the
     * application thread is in a fence. */
    _Atomic long long next_probe;           /* time of the next pid probe */
    long long peer_timeout_ns;              /* FMPL_PEER_TIMEOUT, 0: none */
    _Atomic int probe_rank;                 /* where it goes on */
};

static int key_ok(const char *key)
{
    return key != NULL && key[0] != '\0' && strlen(key) < FMPL_CTL_KEY_MAX;
}

/* Another process wrote the entries of `rank` (every rank maps the
 * control memory writable): an entry counts only when its key ends
 * inside the entry and its length fits it, so a broken or hostile
 * writer cannot make a reader run past the entry (test/fuzz/). */
static struct fmpl_ctl_kv *find_key(struct fmpl_ctl *c, int rank, const char *key)
{
    struct fmpl_ctl_kv *kv = fmpl_ctl_kv(c, rank);

    for (int i = 0; i < FMPL_CTL_NKEYS; i++)
        if (atomic_load_explicit(&kv[i].used, memory_order_acquire) &&
            memchr(kv[i].key, '\0', sizeof kv[i].key) != NULL &&
            kv[i].len <= sizeof kv[i].val && strcmp(kv[i].key, key) == 0)
            return &kv[i];
    return NULL;
}

static int local_put(fmpl_boot_t *b, const char *key, const void *val, size_t len)
{
    struct local_priv *p = b->priv;
    struct fmpl_ctl_kv *kv;

    if (!key_ok(key) || len > FMPL_BOOT_VALUE_MAX || (val == NULL && len > 0))
        return FMPL_ERR_ARG;

    kv = find_key(p->ctl, b->rank, key);
    if (kv == NULL) {
        struct fmpl_ctl_kv *mine = fmpl_ctl_kv(p->ctl, b->rank);
        for (int i = 0; i < FMPL_CTL_NKEYS && kv == NULL; i++)
            if (!atomic_load_explicit(&mine[i].used, memory_order_relaxed))
                kv = &mine[i];
        if (kv == NULL) {
            fprintf(stderr, "fmpl: bootstrap: more than %d keys put\n", FMPL_CTL_NKEYS);
            return FMPL_ERR_NOMEM;
        }
        strcpy(kv->key, key);
    }
    if (len > 0)
        memcpy(kv->val, val, len);
    kv->len = (uint32_t)len;
    /* Publishes a new key; the fence publishes the value of an old one. */
    atomic_store_explicit(&kv->used, 1, memory_order_release);
    return FMPL_SUCCESS;
}

static int local_get(fmpl_boot_t *b, int rank, const char *key, void *val, size_t *len)
{
    struct local_priv *p = b->priv;
    struct fmpl_ctl_kv *kv;

    if (len == NULL || (val == NULL && *len > 0) || !key_ok(key))
        return FMPL_ERR_ARG;
    if (rank < 0 || rank >= b->size)
        return FMPL_ERR_RANK;
    /* A missing key is a caller's mistake or an optional key being probed:
     * no message, as in the other back-ends. */
    kv = find_key(p->ctl, rank, key);
    if (kv == NULL)
        return FMPL_ERR_ARG;
    /* read once: its writer may change it under us (find_key checked an
     * earlier read) */
    uint32_t n = *(volatile uint32_t *)&kv->len;
    if (n > sizeof kv->val)
        return FMPL_ERR_ARG;
    if (n > *len) {
        *len = n;
        return FMPL_ERR_TRUNCATE;
    }
    *len = n;
    if (n > 0)
        memcpy(val, kv->val, n);
    return FMPL_SUCCESS;
}

static int first_dead(const struct fmpl_ctl *c)
{
    return atomic_load_explicit(&c->first_dead, memory_order_acquire);
}

/*
 * fmplrun records a rank as dead when it reaps it.  A running rank whose
 * pid is gone while fmplrun has not said so (the program runs under a
 * wrapper script that outlives it) is found here with kill(pid, 0).  Each
 * process probes a few ranks every 10 ms, round robin from its own rank
 * on, so all of them together cover the job quickly at a bounded cost,
 * and the first to notice records it for everybody.
 */
static int probe_dead(fmpl_boot_t *b)
{
    struct local_priv *p = b->priv;
    struct fmpl_ctl *c = p->ctl;
    int dead = first_dead(c), r;
    long long t;

    if (dead >= 0)
        return dead;
    t = fmpl_rtime_ns();
    if (t < atomic_load_explicit(&p->next_probe, memory_order_relaxed))
        return -1;
    atomic_store_explicit(&p->next_probe, t + CHECK_NS, memory_order_relaxed);
    r = atomic_load_explicit(&p->probe_rank, memory_order_relaxed);
    for (int i = 0; i < PROBE_PIDS && i < b->size; i++, r = (r + 1) % b->size) {
        struct fmpl_ctl_rank *cr = fmpl_ctl_rank(c, r);
        int pid = atomic_load_explicit(&cr->pid, memory_order_relaxed);

        if (atomic_load_explicit(&cr->state, memory_order_acquire) == FMPL_CTL_RUNNING &&
            pid > 0 && kill(pid, 0) == -1 && errno == ESRCH) {
            atomic_compare_exchange_strong(&c->first_dead, &dead, r);
            break;
        }
    }
    atomic_store_explicit(&p->probe_rank, r, memory_order_relaxed);
    return first_dead(c);
}

/* A rank that gave up on this one (FMPL_PEER_TIMEOUT) may have had it
 * recorded as the job's failure while it is alive, only slow: it is not
 * told that it died itself, and finds its own way out (the ranks that
 * gave up leave, and it sees them go). */
static int local_dead_rank(fmpl_boot_t *b)
{
    int dead = probe_dead(b);
    return dead == b->rank ? -1 : dead;
}

/* Recorded before this rank can leave, so fmplrun, which may reap this
 * rank before the one it gave up on, still names that one. */
static void local_blame(fmpl_boot_t *b, int rank, int dead)
{
    struct local_priv *p = b->priv;
    int none = 0, first = -1;

    atomic_compare_exchange_strong(&fmpl_ctl_rank(p->ctl, b->rank)->blamed, &none, rank + 1);
    if (dead)
        atomic_compare_exchange_strong(&p->ctl->first_dead, &first, rank);
}

/* Sleep until *word != old or timeout_ns passes.  Not FUTEX_PRIVATE: the
 * word is in memory shared between processes. */
static void futex_wait(_Atomic uint32_t *word, uint32_t old, long long timeout_ns)
{
    struct timespec ts = { timeout_ns / 1000000000LL, timeout_ns % 1000000000LL };
    syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT, old, &ts, NULL, 0);
}

static void futex_wake_all(_Atomic uint32_t *word)
{
    syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

/*
 * Ranks may outnumber cores (8 ranks on 2 cores), so a waiter spins only
 * briefly, then yields its core to the ranks still on their way, and after
 * 0.2 ms sleeps on the generation word (futex), which keeps many waiters
 * off the run queue; it wakes every 10 ms to look for a dead rank.  With
 * 8 to 64 ranks on 2 cores, 0.2 ms of yielding did at least as well as
 * none or 2 ms (1000 fences of 8 ranks: about 0.1 s).
 */
static int local_fence(fmpl_boot_t *b)
{
    struct local_priv *p = b->priv;
    struct fmpl_ctl *c = p->ctl;
    uint32_t gen;
    long long start, next_check, t;

    if (first_dead(c) >= 0)
        return FMPL_ERR_PEER;   /* that rank can never arrive */

    /* gen cannot move before we arrive, so it names this fence. */
    gen = atomic_load_explicit(&c->fence_gen, memory_order_acquire);
    /* who came (FMPL_PEER_TIMEOUT names who did not) */
    atomic_store_explicit(&fmpl_ctl_rank(c, b->rank)->fence_seen, gen + 1, memory_order_relaxed);
    if (atomic_fetch_add_explicit(&c->fence_count, 1, memory_order_acq_rel) + 1 ==
        (uint32_t)b->size) {
        /* Nobody arrives at the next fence before seeing the new gen. */
        atomic_store_explicit(&c->fence_count, 0, memory_order_relaxed);
        atomic_store(&c->fence_gen, gen + 1);
        /* seq_cst pairs with a sleeper's increment before its futex_wait:
         * either we see it or its futex_wait sees the new gen. */
        if (atomic_load(&c->fence_sleepers) > 0)
            futex_wake_all(&c->fence_gen);
        return FMPL_SUCCESS;
    }

    for (int i = 0; i < SPIN_ITERS; i++) {
        if (atomic_load_explicit(&c->fence_gen, memory_order_acquire) != gen)
            return FMPL_SUCCESS;
        fmpl_cpu_relax();
    }
    start = fmpl_rtime_ns();
    next_check = start + CHECK_NS;
    for (;;) {
        /* Arrival first: a rank that left after this fence completed is
         * not a reason to fail it. */
        if (atomic_load_explicit(&c->fence_gen, memory_order_acquire) != gen)
            return FMPL_SUCCESS;
        t = fmpl_rtime_ns();
        if (t >= next_check) {
            if (probe_dead(b) >= 0)
                return FMPL_ERR_PEER;
            next_check = t + CHECK_NS;
            /* a rank that is alive but does not come (stopped, or stuck
             * outside FMPL) is waited for FMPL_PEER_TIMEOUT, as in every
             * other wait */
            if (p->peer_timeout_ns > 0 && t - start > p->peer_timeout_ns) {
                int r = 0;
                while (r < b->size &&
                       atomic_load(&fmpl_ctl_rank(c, r)->fence_seen) == gen + 1)
                    r++;
                fprintf(stderr, "fmpl: rank %d: waited %.0f s for rank %d in the job's fence "
                        "(FMPL_PEER_TIMEOUT): giving up\n", b->rank,
                        (double)p->peer_timeout_ns * 1e-9, r < b->size ? r : -1);
                if (r < b->size)
                    local_blame(b, r, 0);
                return FMPL_ERR_PEER;
            }
        }
        if (t - start < YIELD_NS) {
            sched_yield();
        } else {
            atomic_fetch_add(&c->fence_sleepers, 1);
            futex_wait(&c->fence_gen, gen, CHECK_NS);
            atomic_fetch_sub(&c->fence_sleepers, 1);
        }
    }
}

static void local_mark_finalized(fmpl_boot_t *b)
{
    struct local_priv *p = b->priv;

    atomic_store_explicit(&fmpl_ctl_rank(p->ctl, b->rank)->state, FMPL_CTL_FINALIZED,
                          memory_order_release);
}

/* fmplrun sees the flag when we exit and kills every other rank at once. */
static void local_abort(fmpl_boot_t *b, int code)
{
    struct local_priv *p = b->priv;

    atomic_store(&p->ctl->abort_code, code);
    atomic_store(&p->ctl->abort_rank, b->rank);
    atomic_store_explicit(&p->ctl->abort_flag, 1, memory_order_release);
    fflush(NULL);
    _exit(code != 0 ? code : 1);
}

static void local_close(fmpl_boot_t *b)
{
    struct local_priv *p = b->priv;

    munmap(p->ctl, p->bytes);
    free(p);
    b->priv = NULL;
}

/* The peers' modex entries are a page or more each in the control
 * memory, and start-up reads every rank's: 16 MiB of a 1024-rank job's
 * memory mapped into every rank.  Their pages stay in the memfd; only our
 * view of them goes. */
static void local_release(fmpl_boot_t *b)
{
    struct local_priv *p = b->priv;
    uintptr_t from = (uintptr_t)fmpl_ctl_kv(p->ctl, 0);
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t start = (from + page - 1) & ~(page - 1);
    uintptr_t end = ((uintptr_t)p->ctl + p->bytes) & ~(page - 1);
    if (end > start)
        madvise((void *)start, end - start, MADV_DONTNEED);
}

static const struct fmpl_boot_ops local_ops = {
    .name = "local",
    .put = local_put,
    .fence = local_fence,
    .get = local_get,
    .dead_rank = local_dead_rank,
    .blame = local_blame,
    .mark_finalized = local_mark_finalized,
    .release = local_release,
    .abort = local_abort,
    .close = local_close,
};

/* A decimal environment variable in [lo, hi], or -1. */
static long env_long(const char *name, long lo, long hi)
{
    const char *s = getenv(name);
    char *end;
    long v;

    if (s == NULL || *s == '\0')
        return -1;
    errno = 0;
    v = strtol(s, &end, 10);
    if (errno != 0 || *end != '\0' || v < lo || v > hi)
        return -1;
    return v;
}

static int bad_env(const char *what)
{
    fprintf(stderr, "fmpl: FMPL_JOBID is set but %s; start the program with fmplrun"
            " (or unset FMPL_JOBID)\n", what);
    return FMPL_ERR_SYSTEM;
}

int fmpl_boot_local_open(fmpl_boot_t *b)
{
    const char *jobid = getenv(FMPL_ENV_JOBID);
    long fd, rank, size;
    struct local_priv *p;
    struct fmpl_ctl *c;
    struct stat st;

    if (b == NULL)
        return FMPL_ERR_ARG;
    if (jobid == NULL)
        return FMPL_ERR_UNSUPPORTED;

    if (strlen(jobid) >= FMPL_BOOT_JOBID_MAX)
        return bad_env("FMPL_JOBID is too long");
    fd = env_long(FMPL_ENV_CTL_FD, 0, INT_MAX);
    size = env_long(FMPL_ENV_SIZE, 1, FMPL_CTL_MAX_SIZE);
    rank = size > 0 ? env_long(FMPL_ENV_RANK, 0, size - 1) : -1;
    if (fd < 0 || size < 0 || rank < 0)
        return bad_env("FMPL_CTL_FD, FMPL_SIZE or FMPL_RANK is missing or invalid");
    /* A process started by a rank inherits the environment but not the fd
     * (close-on-exec, below), so the fd number may be anything here. */
    if (fstat((int)fd, &st) != 0 || !S_ISREG(st.st_mode) ||
        (size_t)st.st_size != fmpl_ctl_bytes((uint32_t)size))
        return bad_env("FMPL_CTL_FD is not this job's control memory");

    c = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, (int)fd, 0);
    if (c == MAP_FAILED) {
        fprintf(stderr, "fmpl: mmap of the job control memory failed: %s\n", strerror(errno));
        return FMPL_ERR_SYSTEM;
    }
    if (c->magic != FMPL_CTL_MAGIC || c->version != FMPL_CTL_VERSION ||
        c->size != (uint32_t)size || c->bytes != (uint64_t)st.st_size ||
        strcmp(c->jobid, jobid) != 0) {
        munmap(c, (size_t)st.st_size);
        return bad_env("FMPL_CTL_FD is not this job's control memory");
    }
    p = calloc(1, sizeof *p);
    if (p == NULL) {
        munmap(c, (size_t)st.st_size);
        return FMPL_ERR_NOMEM;
    }
    p->ctl = c;
    p->bytes = (size_t)st.st_size;
    p->peer_timeout_ns = b->peer_timeout > 0 ? (long long)(b->peer_timeout * 1e9) : 0;
    /* Our own children must not join the job by accident. */
    fcntl((int)fd, F_SETFD, FD_CLOEXEC);

    /* Our pid, not fmplrun's child's: they differ under a wrapper. */
    atomic_store(&fmpl_ctl_rank(c, (int)rank)->pid, (int)getpid());
    atomic_store(&fmpl_ctl_rank(c, (int)rank)->state, FMPL_CTL_RUNNING);

    p->probe_rank = (int)((rank + 1) % size);
    b->rank = (int)rank;
    b->size = (int)size;
    snprintf(b->jobid, sizeof b->jobid, "%s", jobid);
    b->ops = &local_ops;
    b->priv = p;
    return FMPL_SUCCESS;
}
