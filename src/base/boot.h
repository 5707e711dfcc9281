/*
 * boot.h - how a process learns its job: rank, size, job id, and a small
 * key/value exchange ("modex") for addresses.
 *
 * Three back-ends behind one ops table, chosen in exactly one place
 * (fmpl_boot_open in boot.c):
 *   local   started by tools/fmplrun (environment FMPL_JOBID is set);
 *   pmix    started by mpirun / prterun / srun --mpi=pmix (PMIX_NAMESPACE);
 *   single  no launcher: a job of one process.
 *
 * The sequence every back-end supports, as PMIx defines it:
 *   put(key, value) ... fence() ... get(rank, key)
 * A value put before a fence is visible to every rank after it.
 */
#ifndef FMPL_BOOT_H
#define FMPL_BOOT_H

#include <stddef.h>
#include <sys/types.h>

#define FMPL_BOOT_JOBID_MAX 64
#define FMPL_BOOT_VALUE_MAX 1024   /* largest value put() accepts */

typedef struct fmpl_boot fmpl_boot_t;

struct fmpl_boot_ops {
    const char *name;
    /* publish `len` bytes under `key` (short ASCII) for this rank */
    int (*put)(fmpl_boot_t *b, const char *key, const void *val, size_t len);
    /* collective over the job: wait for everybody, make puts visible.
     * Returns FMPL_ERR_PEER if a rank died instead of arriving. */
    int (*fence)(fmpl_boot_t *b);
    /* read what `rank` put under `key` before the last fence; *len is the
     * buffer size on entry and the value size on return */
    int (*get)(fmpl_boot_t *b, int rank, const char *key, void *val, size_t *len);
    /* launcher-reported failure: returns a rank that died or left the job
     * without fmpl_finalize, or -1 if the launcher knows of none */
    int (*dead_rank)(fmpl_boot_t *b);
    /* this rank gives up on `rank`: a transport saw it die (dead = 1), or
     * it stayed silent past FMPL_PEER_TIMEOUT (dead = 0).  The launcher
     * then names `rank`, not this rank, as the job's first failure, even
     * when this rank's exit reaches it first.  NULL where the launcher
     * learns of deaths by its own means */
    void (*blame)(fmpl_boot_t *b, int rank, int dead);
    /* this rank has finalised (a later exit is not a failure) */
    void (*mark_finalized)(fmpl_boot_t *b);
    /* start-up is over: let go of what reading the peers' entries brought
     * into this process (a later get brings back only what it reads);
     * NULL where there is nothing to let go */
    void (*release)(fmpl_boot_t *b);
    /* tell the launcher to end the job; does not return */
    void (*abort)(fmpl_boot_t *b, int code);
    void (*close)(fmpl_boot_t *b);
};

struct fmpl_boot {
    int rank;
    int size;
    char jobid[FMPL_BOOT_JOBID_MAX];   /* unique per job; [A-Za-z0-9_-] only */
    const struct fmpl_boot_ops *ops;
    void *priv;
    /* set by the caller before opening: seconds a fence waits for a rank
     * that does not come (FMPL_PEER_TIMEOUT), 0: no limit */
    double peer_timeout;
    /* set by the caller before opening: seconds between asks of the
     * launcher's process table from a wait that is idle (FMPL_PMIX_POLL),
     * 0: never ask */
    double launcher_poll;
};

static inline void fmpl_boot_blame(fmpl_boot_t *b, int rank, int dead)
{
    if (b->ops && b->ops->blame && rank >= 0 && rank < b->size && rank != b->rank)
        b->ops->blame(b, rank, dead);
}

/* Each returns FMPL_SUCCESS, FMPL_ERR_UNSUPPORTED when its launcher is not
 * present (so the next can be tried), or another error. */
int fmpl_boot_local_open(fmpl_boot_t *b);
int fmpl_boot_pmix_open(fmpl_boot_t *b);
int fmpl_boot_single_open(fmpl_boot_t *b);

/* Pick the back-end for this process and open it. */
int fmpl_boot_open(fmpl_boot_t *b);

/* End the whole job now (fmpl_abort, and a transport that finds the job
 * cannot go on): flush stdio, say so on stderr, have the launcher of `b`
 * (if open) end every rank, exit with `code` (1 for 0). */
void fmpl_boot_abort(fmpl_boot_t *b, int code) __attribute__((noreturn));

#endif
