/*
 * launch_ctl.h - the job control memory shared by tools/fmplrun and the
 * `local` bootstrap (src/base/boot_local.c).
 *
 * fmplrun creates it as a memfd (never visible in /dev/shm, so nothing can
 * leak even after kill -9), sizes it for the job and passes the open fd to
 * every rank, whose number is in FMPL_CTL_FD.  Layout, in this order:
 *
 *   struct fmpl_ctl        header: identity, abort, first dead rank, fence
 *   struct fmpl_ctl_rank   [size]          one cache line per rank
 *   struct fmpl_ctl_kv     [size][NKEYS]   modex: each rank's own entries
 *
 * Who writes what:
 *   fmplrun   the header identity, first_dead, and a rank's pid (just before
 *             exec), state DEAD and status once it has reaped the process;
 *   a rank    its pid and state RUNNING / FINALIZED, its own modex entries,
 *             the abort words, the fence words, the rank it gave up on
 *             (blamed); first_dead too when it sees a peer's pid vanish
 *             (dead_rank()) or a transport sees a peer die (blame()).
 * Shared words are C11 atomics; they are lock-free, so they work between
 * processes.
 */
#ifndef FMPL_LAUNCH_CTL_H
#define FMPL_LAUNCH_CTL_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "base/boot.h"

/* Environment set by fmplrun for each rank. */
#define FMPL_ENV_JOBID  "FMPL_JOBID"    /* job id, [A-Za-z0-9_-] */
#define FMPL_ENV_RANK   "FMPL_RANK"     /* 0 .. size-1 */
#define FMPL_ENV_SIZE   "FMPL_SIZE"     /* ranks in the job */
#define FMPL_ENV_CTL_FD "FMPL_CTL_FD"   /* fd of the control memory */

#define FMPL_CTL_MAGIC    0x314c54434c504d46ULL  /* "FMPLCTL1", little-endian */
#define FMPL_CTL_VERSION  3u
#define FMPL_CTL_MAX_SIZE 4096                  /* largest job fmplrun starts */
#define FMPL_CTL_NKEYS    16                    /* modex entries per rank */
#define FMPL_CTL_KEY_MAX  32                    /* key bytes, NUL included */
#define FMPL_CTL_LINE     64

/* fmpl_ctl_rank.state */
enum {
    FMPL_CTL_NONE      = 0,   /* started, bootstrap not opened (yet) */
    FMPL_CTL_RUNNING   = 1,   /* bootstrap opened */
    FMPL_CTL_FINALIZED = 2,   /* fmpl_finalize done: exiting is not failing */
    FMPL_CTL_DEAD      = 3    /* exited without finalize, non-zero or by signal */
};

_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "int atomics must be lock-free");

struct fmpl_ctl {
    uint64_t magic;
    uint32_t version;
    uint32_t size;                     /* ranks in the job */
    uint64_t bytes;                    /* length of the whole memory */
    char jobid[FMPL_BOOT_JOBID_MAX];

    /* fmpl_abort: code and rank first, then the flag (release). */
    _Atomic int abort_flag;
    _Atomic int abort_code;
    _Atomic int abort_rank;
    /* The job's first failure, -1 while every rank is fine: the first
     * rank reaped without fmpl_finalize, or one a survivor gave up on. */
    _Atomic int first_dead;

    /* Sense-reversing barrier on its own line, since every waiting rank
     * reads it: the last of `size` arrivals resets count and bumps gen.
     * sleepers counts ranks in futex_wait on gen, so the last arrival makes
     * the wake system call only when someone sleeps. */
    alignas(FMPL_CTL_LINE) _Atomic uint32_t fence_count;
    _Atomic uint32_t fence_gen;
    _Atomic uint32_t fence_sleepers;
};

/* One line per rank so a rank's own writes do not disturb its neighbours. */
struct fmpl_ctl_rank {
    alignas(FMPL_CTL_LINE) _Atomic int pid;
    _Atomic int state;                 /* FMPL_CTL_* */
    _Atomic int status;                /* exit code, or 128 + signal */
    _Atomic uint32_t fence_seen;       /* the fence generation it came to, + 1 */
    /* The rank this one gave up on, + 1 (0: none): fmplrun, reaping this
     * rank, names that one as the job's first failure instead. */
    _Atomic int blamed;
};

/* A modex entry, written only by its rank: key, len and val first, then
 * used = 1 (release), so a reader that sees used sees a whole key.  A value
 * is overwritten in place; readers look only after the next fence. */
struct fmpl_ctl_kv {
    _Atomic uint32_t used;
    uint32_t len;
    char key[FMPL_CTL_KEY_MAX];
    unsigned char val[FMPL_BOOT_VALUE_MAX];
};

static inline size_t fmpl_ctl_bytes(uint32_t size)
{
    return sizeof(struct fmpl_ctl) + size * sizeof(struct fmpl_ctl_rank) +
           (size_t)size * FMPL_CTL_NKEYS * sizeof(struct fmpl_ctl_kv);
}

static inline struct fmpl_ctl_rank *fmpl_ctl_rank(struct fmpl_ctl *c, int r)
{
    return (struct fmpl_ctl_rank *)(c + 1) + r;
}

/* The FMPL_CTL_NKEYS entries of rank r. */
static inline struct fmpl_ctl_kv *fmpl_ctl_kv(struct fmpl_ctl *c, int r)
{
    struct fmpl_ctl_kv *base = (struct fmpl_ctl_kv *)fmpl_ctl_rank(c, (int)c->size);
    return base + (size_t)r * FMPL_CTL_NKEYS;
}

#endif
