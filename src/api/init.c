/*
 * init.c - fmpl_init / fmpl_finalize / fmpl_abort and the environment
 * queries: the layers below wired together (the settings read, the
 * bootstrap, the transport, the point-to-point state and the
 * communicators made, and undone in the reverse order).
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "fmpl.h"
#include "base/cpu.h"
#include "base/env.h"
#include "base/hosts.h"
#include "base/log.h"
#include "p2p/progress.h"
#include "p2p/state.h"
#include "coll/coll.h"
#include "p2p/p2p.h"
#include "p2p/matrix.h"
#include "p2p/spill.h"

/* Upper bound on indices: the mailbox holds size x count lines. */
#define FMPL_MAX_INDICES (1 << 20)
/* Messages larger than this are copied by both sides.  bench/latency on
 * shm: the pipelined FIFO wins up to 64 KiB, the split from 128 KiB on
 * (262 KiB: 22-27 us split, 43-47 us one process_vm_writev). */
#define FMPL_SPLIT_MIN_DEFAULT (64 * 1024)

/* FMPL_PROGRESS_THREAD: -1 unset, 0, 1 */
static int progress_thread;
/* FMPL_PMIX_POLL, for the boot */
static double launcher_poll;

/* Every setting of fmpl(7)'s "Every transport", checked before anything
 * is made: a bad one fails fmpl_init with FMPL_ERR_ARG and its name. */
static int read_settings(void)
{
    static const char *const bcast_names[] = { "auto", "tree", "scatter", NULL };
    static const char *const coll_names[] = { "fmpl", "paper", NULL };
    long inline_max, early, comms, halos;
    uint64_t split_min;
    int verbose = 0, bcast = 0, paper = 0;
    int rc = fmpl_env_bool("FMPL_VERBOSE", 0, "0 or 1 (1: say what FMPL chose and why)",
                           &verbose);
    fmpl_log_set_verbose(verbose);
    rc = rc ? rc : fmpl_env_double("FMPL_PEER_TIMEOUT", 0, 0, 1e9,
                                   "seconds a wait on one peer may last, 0 (no limit) to 1e9",
                                   &fmpl_g.peer_timeout);
    rc = rc ? rc : fmpl_env_double("FMPL_PMIX_POLL", 1, 0, 1e6,
                                   "seconds between asks of a PMIx launcher's process "
                                   "table from an idle wait, 0 (never) to 1e6",
                                   &launcher_poll);
    rc = rc ? rc : fmpl_env_size("FMPL_SPLIT_MIN", FMPL_SPLIT_MIN_DEFAULT, 0, UINT64_MAX,
                                 "bytes above which sender and receiver copy half each "
                                 "(K, M, G allowed; 0: never)", &split_min);
    /* The protocol of the paper (Tatebe et al. 2002, 4.2): FMPL_INLINE=0
     * writes even an 8-byte message into the receive buffer and then the flag,
     * and FMPL_EARLY=0 waits for every header (bench/sr8000 measures
     * Table 1 so).  Every rank must use the same values. */
    rc = rc ? rc : fmpl_env_long("FMPL_INLINE", FMPL_EXT_MAX, 0, FMPL_EXT_MAX,
                                 "bytes a message may carry in its completion record, "
                                 "0 to 2048 (at most what the transport's records hold)",
                                 &inline_max);
    rc = rc ? rc : fmpl_env_long("FMPL_EARLY", 1, 0, 1,
                                 "0 (every message waits for its receive's header) or 1",
                                 &early);
    rc = rc ? rc : fmpl_env_long("FMPL_MAX_COMMS", FMPL_MAX_COMMS_DEFAULT, 1, 4096,
                                 "communicators alive at once, 1 to 4096", &comms);
    rc = rc ? rc : fmpl_env_long("FMPL_MAX_HALOS", FMPL_MAX_HALOS_DEFAULT, 0, 4096,
                                 "halo exchanges alive at once, 0 to 4096", &halos);
    rc = rc ? rc : fmpl_env_bool("FMPL_PROGRESS_THREAD", -1,
                                 "0 (never) or 1 (from fmpl_init on); unset: when needed",
                                 &progress_thread);
    rc = rc ? rc : fmpl_env_choice("FMPL_BCAST", bcast_names, FMPL_BCAST_AUTO,
                                   "auto, tree (the binomial tree at every size) or "
                                   "scatter (scatter + allgather for large messages)", &bcast);
    rc = rc ? rc : fmpl_env_choice("FMPL_COLL", coll_names, 0,
                                   "fmpl (FMPL's own choices) or paper (the hybrid paper's "
                                   "broadcast and allgather)", &paper);
    if (rc != FMPL_SUCCESS)
        return rc;
    fmpl_coll_g.bcast_alg = bcast;
    fmpl_coll_g.paper = paper;
    fmpl_g.split_min = split_min ? split_min : UINT64_MAX;   /* 0 turns splitting off */
    fmpl_g.split_max = UINT64_MAX;
    fmpl_g.inline_max = (unsigned)inline_max;
    fmpl_g.early = (int)early;
    fmpl_coll_g.max_comms = (int)comms;
    fmpl_coll_g.max_halos = (int)halos;
    return FMPL_SUCCESS;
}

static void release_all(void)
{
    fmpl_comm_teardown();
    fmpl_coll_scratch_free();
    fmpl_tl_close(&fmpl_g.tl);
    fmpl_hosts_free(&fmpl_g.hosts);
    free(fmpl_g.slots);
    fmpl_g.slots = NULL;
    if (fmpl_g.boot.ops)
        fmpl_g.boot.ops->close(&fmpl_g.boot);
    memset(&fmpl_g.boot, 0, sizeof fmpl_g.boot);
    memset(&fmpl_g.hosts, 0, sizeof fmpl_g.hosts);
    memset(&fmpl_g.tl, 0, sizeof fmpl_g.tl);
}

int fmpl_init(int count)
{
    if (fmpl_g.initialized)
        return FMPL_ERR_INIT;
    if (count < 1 || count > FMPL_MAX_INDICES)
        return FMPL_ERR_ARG;

    fmpl_log_set_boot(&fmpl_g.boot);   /* its rank names our lines once it has one */
    int rc = read_settings();
    if (rc != FMPL_SUCCESS)
        return rc;
    fmpl_g.clock_stuck = 0;
    fmpl_g.boot.peer_timeout = fmpl_g.peer_timeout;
    fmpl_g.boot.launcher_poll = launcher_poll;

    rc = fmpl_boot_open(&fmpl_g.boot);
    if (rc != FMPL_SUCCESS) {
        memset(&fmpl_g.boot, 0, sizeof fmpl_g.boot);
        return rc == FMPL_ERR_PEER ? rc : FMPL_ERR_INIT;
    }
    fmpl_log_info("bootstrap %s: rank %d of %d, job %s", fmpl_g.boot.ops->name,
                  fmpl_g.boot.rank, fmpl_g.boot.size, fmpl_g.boot.jobid);

    /* the user's indices, then the communicators' and the halo exchanges',
     * and one for point-to-point control */
    fmpl_g.user_nidx = count;
    fmpl_g.nidx = count + fmpl_coll_g.max_comms * FMPL_COMM_NIDX +
                  fmpl_coll_g.max_halos * FMPL_HALO_NIDX + 1;
    fmpl_g.ctl_idx = fmpl_g.nidx - 1;
    fmpl_g.slots = calloc((size_t)fmpl_g.boot.size * (size_t)fmpl_g.nidx, sizeof *fmpl_g.slots);
    if (!fmpl_g.slots) {
        release_all();
        return FMPL_ERR_NOMEM;
    }

    /* where every rank runs (collective), then the transport that serves
     * this layout */
    fmpl_g.tl = (fmpl_tl_t){ .rank = fmpl_g.boot.rank, .size = fmpl_g.boot.size,
                             .nidx = fmpl_g.nidx, .boot = &fmpl_g.boot,
                             .hosts = &fmpl_g.hosts };
    rc = fmpl_hosts_learn(&fmpl_g.hosts, &fmpl_g.boot);
    if (rc == FMPL_SUCCESS)
        rc = fmpl_tl_open(&fmpl_g.tl);
    if (rc != FMPL_SUCCESS) {
        if (rc == FMPL_ERR_PEER)
            fmpl_check_peer(-1);   /* name the rank the launcher knows dead */
        release_all();
        return rc;
    }
    /* The transport may know better than the default where splitting
     * pays (shm: from 8 KiB up to FMPL_SHM_SPLIT_MAX); FMPL_SPLIT_MIN
     * still rules the lower end, unless the transport splits nothing. */
    if (fmpl_g.tl.split_min == UINT64_MAX ||
        (fmpl_g.tl.split_min && !getenv("FMPL_SPLIT_MIN")))
        fmpl_g.split_min = fmpl_g.tl.split_min;
    if (fmpl_g.tl.split_max)
        fmpl_g.split_max = fmpl_g.tl.split_max;
    /* A message rides in its record up to what the transport's records
     * hold: 24 bytes in half a line, more where a record may run on into
     * the slot's next lines (p2p.h).  The same on every rank: every rank
     * runs the same transport. */
    unsigned cap = fmpl_g.tl.max_inline > FMPL_EXT_OFF ? fmpl_g.tl.max_inline - FMPL_EXT_OFF
                                                       : FMPL_INLINE_MAX;
    cap = cap > FMPL_EXT_MAX ? FMPL_EXT_MAX : cap < FMPL_INLINE_MAX ? FMPL_INLINE_MAX : cap;
    if (fmpl_g.inline_max > cap) {
        if (getenv("FMPL_INLINE"))
            fmpl_log_info("FMPL_INLINE=%u: %s's records hold %u bytes, so %u",
                          fmpl_g.inline_max, fmpl_tl_name(&fmpl_g.tl), cap, cap);
        fmpl_g.inline_max = cap;
    }
    fmpl_enter();                  /* an emulated machine's clock starts here */
    rc = fmpl_comm_setup();
    fmpl_leave();
    if (rc != FMPL_SUCCESS) {
        if (rc == FMPL_ERR_PEER)
            fmpl_check_peer(-1);
        release_all();
        return rc;
    }
    fmpl_g.initialized = 1;
    if (fmpl_g.boot.ops->release)
        fmpl_g.boot.ops->release(&fmpl_g.boot);
    /* FMPL_PROGRESS_THREAD=1: from the start; unset: once a locally
     * blocking send had to be queued (its receiver may be waiting while
     * we block outside FMPL, e.g. in MPI); 0: never.  Not on an emulated
     * machine with a clock: its time would depend on when the thread
     * happened to run; every FMPL call makes progress there instead. */
    fmpl_g.thread_lazy = progress_thread < 0 && !fmpl_g.tl.clock;
    if (fmpl_g.tl.clock && progress_thread == 1)
        fmpl_log_info("FMPL_PROGRESS_THREAD ignored: %s keeps an emulated clock",
                      fmpl_tl_name(&fmpl_g.tl));
    else if (progress_thread == 1 && fmpl_progress_thread_start() != FMPL_SUCCESS) {
        fmpl_g.initialized = 0;
        release_all();
        return FMPL_ERR_SYSTEM;
    }
    return FMPL_SUCCESS;
}

int fmpl_finalize(void)
{
    if (!fmpl_g.initialized)
        return FMPL_ERR_NOT_INIT;
    fmpl_enter();
    /* Spilled and queued messages must reach their receivers before we
     * leave. */
    int rc = fmpl_spill_drain();
    int mrc = fmpl_mx_drain();
    if (rc == FMPL_SUCCESS)
        rc = mrc;
    fmpl_leave();
    fmpl_progress_thread_stop();
    /* Without remote atomics a cancel needs its sender's answer (cancel.c):
     * answer until everybody has arrived. */
    if (!(fmpl_g.tl.caps & FMPL_TL_CAP_CAS) && fmpl_g.boot.size > 1) {
        int brc = fmpl_barrier(FMPL_COMM_WORLD);
        if (rc == FMPL_SUCCESS)
            rc = brc;
    }
    /* An emulated machine: we kick nothing more, nobody waits for our clock. */
    if (fmpl_g.tl.clock)
        fmpl_g.tl.clock->finish(&fmpl_g.tl);
    /* Nobody may still need us once everybody has arrived here. */
    int frc = fmpl_g.boot.ops->fence(&fmpl_g.boot);
    if (frc == FMPL_ERR_PEER)
        fmpl_check_peer(-1);       /* the fence only says somebody is gone: who */
    if (rc == FMPL_SUCCESS)
        rc = frc;
    fmpl_spill_free();
    fmpl_p2p_send_forget();
    fmpl_p2p_recv_forget();
    fmpl_p2p_cancel_forget();
    fmpl_mx_forget();
    fmpl_g.boot.ops->mark_finalized(&fmpl_g.boot);
    fmpl_g.initialized = 0;
    release_all();
    return rc;
}

void fmpl_abort(int code) { fmpl_boot_abort(&fmpl_g.boot, code); }

int fmpl_rank(void) { return fmpl_g.initialized ? fmpl_g.boot.rank : -1; }
int fmpl_size(void) { return fmpl_g.initialized ? fmpl_g.boot.size : -1; }

const char *fmpl_transport(void)
{
    return fmpl_g.initialized ? fmpl_tl_name(&fmpl_g.tl) : NULL;
}

int fmpl_host(int rank, int *nhosts)
{
    if (!fmpl_g.initialized)
        return FMPL_ERR_NOT_INIT;
    if (rank < 0 || rank >= fmpl_g.tl.size)
        return FMPL_ERR_RANK;
    if (nhosts)
        *nhosts = fmpl_g.hosts.nhosts;
    return fmpl_g.hosts.host[rank];
}

/* A day: beyond it a modeled computation is surely a unit mistake (ns or
 * us passed as seconds), and nanoseconds of it still fit a size_t. */
#define FMPL_COMPUTE_MAX 86400.0

int fmpl_compute(double seconds)
{
    if (!fmpl_g.initialized)
        return FMPL_ERR_NOT_INIT;
    if (!(seconds >= 0.0 && seconds <= FMPL_COMPUTE_MAX))      /* NaN fails too */
        return FMPL_ERR_ARG;
    if (fmpl_g.tl.clock) {
        /* the model's time, charged as FMPL's own work: the call's real
         * CPU time is inside FMPL, so nothing else is charged with it */
        fmpl_enter();
        fmpl_tl_work(&fmpl_g.tl, FMPL_TL_WORK_NS, (size_t)(seconds * 1e9 + 0.5));
        fmpl_leave();
        return FMPL_SUCCESS;
    }
    double end = fmpl_wtime() + seconds;
    while (fmpl_wtime() < end)
        fmpl_cpu_relax();
    return FMPL_SUCCESS;
}
