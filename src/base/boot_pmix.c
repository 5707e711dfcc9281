/*
 * boot_pmix.c - bootstrap through PMIx, for jobs started by mpirun
 * (Open MPI 4.x/5.x), prterun or srun --mpi=pmix.
 *
 * The launcher runs a PMIx server; we are one of its clients.  Rank and
 * namespace come from PMIx_Init, the job size from the job-level data the
 * server hands every client, and the modex is PMIx's own put / commit /
 * fence(collect) / get sequence, which is exactly the model boot.h copies.
 *
 * Living next to MPI: Open MPI's MPI_Init is itself a PMIx client of the
 * same server and, on Debian, of the same libpmix.so.2 (its ext3x component
 * links the external library).  PMIx_Init and PMIx_Finalize are reference
 * counted inside that one library, so FMPL and MPI may each init and
 * finalize in any order: only the last PMIx_Finalize really disconnects.
 * Every key we put is prefixed "fmpl." so it never collides with Open MPI's
 * own modex keys, and our fences name the whole namespace, which the
 * server matches by process set and call order just as it matches MPI's.
 */
#include "base/boot.h"
#include "fmpl.h"

#include "base/clock.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef FMPL_HAVE_PMIX

int fmpl_boot_pmix_open(fmpl_boot_t *b)
{
    (void)b;
    return FMPL_ERR_UNSUPPORTED;
}

#else /* FMPL_HAVE_PMIX */

#include <pmix.h>

#ifndef FMPL_PMIX_DIRECT          /* a harness with PMIx_* of its own (fuzz_pmix.c) */
#include "base/dlib.h"

/* libpmix is loaded by the first job a PMIx launcher starts (dlib.h):
 * the entry points FMPL calls, the header's macros among them */
#define PMIX_FNS(X) X(PMIx_Init) X(PMIx_Finalize) X(PMIx_Abort) X(PMIx_Put) \
    X(PMIx_Commit) X(PMIx_Fence) X(PMIx_Get) X(PMIx_Error_string) X(PMIx_Info_load) \
    X(PMIx_Value_destruct) X(PMIx_Register_event_handler) X(PMIx_Deregister_event_handler) \
    X(PMIx_Query_info_nb)
static struct { PMIX_FNS(FMPL_DLIB_FIELD) } pmix;
#define PMIX_SYM(f) FMPL_DLIB_SYM(pmix, f)
static const fmpl_dlib_sym_t pmix_syms[] = { PMIX_FNS(PMIX_SYM) { NULL, NULL } };
/* the library's own directory first (pkg-config's libdir: Debian's
 * libpmix is not on the loader's path), then wherever the loader finds it */
static const char *const pmix_files[] = {
#ifdef FMPL_PMIX_LIBDIR
    FMPL_PMIX_LIBDIR "/libpmix.so.2",
#endif
    "libpmix.so.2", NULL
};
static fmpl_dlib_t pmix_lib = { pmix_files, pmix_syms, NULL };
/* every call below, the header's macros' too, goes through the table */
#define PMIx_Init pmix.PMIx_Init
#define PMIx_Finalize pmix.PMIx_Finalize
#define PMIx_Abort pmix.PMIx_Abort
#define PMIx_Put pmix.PMIx_Put
#define PMIx_Commit pmix.PMIx_Commit
#define PMIx_Fence pmix.PMIx_Fence
#define PMIx_Get pmix.PMIx_Get
#define PMIx_Error_string pmix.PMIx_Error_string
#define PMIx_Info_load pmix.PMIx_Info_load
#define PMIx_Value_destruct pmix.PMIx_Value_destruct
#define PMIx_Register_event_handler pmix.PMIx_Register_event_handler
#define PMIx_Deregister_event_handler pmix.PMIx_Deregister_event_handler
#define PMIx_Query_info_nb pmix.PMIx_Query_info_nb
#endif

#define KEY_PREFIX "fmpl."
/* Arrival markers of fence() (see there).  ':' keeps them apart from the
 * callers' keys, which all become "fmpl.<key>". */
#define FENCE_KEY_FMT "fmpl:fence.%u"

/* Fences done by this process, over every open of the back-end: after a
 * close and a new open the server still holds the old rounds' markers, so
 * numbering must not restart.  Every rank makes the same collective calls,
 * so the counts agree. */
static unsigned fence_round;

struct pmix_priv {
    pmix_proc_t me;     /* our namespace and rank, from PMIx_Init */
    pmix_proc_t all;    /* {namespace, PMIX_RANK_WILDCARD}: the whole job */
    int timeout;        /* FMPL_PEER_TIMEOUT in whole seconds, 0: none */
};

/*
 * What the server knows of deaths, before FMPL's own waits find out.
 * Two ways in, both answered on PMIx's own thread:
 *   events   PMIx_Register_event_handler for the codes of a process that
 *            ended badly; PRRTE (Open MPI 5's prterun) sends them.
 *   table    the server's process table (PMIX_QUERY_PROC_TABLE), asked
 *            at most every FMPL_PMIX_POLL seconds and only from a wait that
 *            is idle (dead_rank is called from there).  For servers that
 *            know but do not tell: Open MPI 4.1's mpirun marks a killed
 *            rank in its table, but its notification is refused by PMIx
 *            4.2 (a custom range with PMIX_RANGE_SESSION: "BAD-PARAM").
 *            Its daemons know their own host's processes only, so across
 *            hosts only the dead rank's host learns this way; passing it
 *            on by an event of our own made mpirun hang, even as it
 *            ended a job on a death without --enable-recovery.
 * Slurm 22.05's PMIx plugin does neither: it kills the step itself.
 * File scope, not pmix_priv: a late answer may come after close.
 */
static struct {
    _Atomic int dead;       /* the first rank found dead, or -1 */
    _Atomic int claimed;    /* note_dead is setting dead */
    _Atomic int why;        /* its event code or process state */
    _Atomic int how;        /* HOW_* */
    _Atomic int told;       /* the message about it was printed */
    _Atomic int asking;     /* a table query is in flight */
    _Atomic int no_table;   /* the server does not answer table queries */
    double next_ask;        /* fmpl_rtime() of the next query (asking's owner) */
    double poll;            /* FMPL_PMIX_POLL */
    int size, self;
    pmix_nspace_t nspace;
    size_t evref;           /* the handler's reference, if have_ev */
    int have_ev;
} watch;

enum { HOW_FENCE = 1, HOW_EVENT, HOW_TABLE };
static void note_dead(int rank, int how, int why);

static int report(const char *call, pmix_status_t rc)
{
    fprintf(stderr, "fmpl: %s failed: %s\n", call, PMIx_Error_string(rc));
    return FMPL_ERR_SYSTEM;
}

/* A peer that died makes a fence fail with one of these, depending on the
 * PMIx version and the host runtime.  The names moved between PMIx 3 and 4
 * (several are "deprecated" aliases in 4), hence the #ifdefs. */
static int is_peer_failure(pmix_status_t rc)
{
    switch (rc) {
#ifdef PMIX_ERR_PROC_ABORTED
    case PMIX_ERR_PROC_ABORTED:
#endif
#ifdef PMIX_ERR_PROC_ABORTING
    case PMIX_ERR_PROC_ABORTING:
#endif
#ifdef PMIX_ERR_PROC_TERM_WO_SYNC
    case PMIX_ERR_PROC_TERM_WO_SYNC:
#endif
#ifdef PMIX_ERR_PROC_ABORTED_BY_SIG
    case PMIX_ERR_PROC_ABORTED_BY_SIG:
#endif
#ifdef PMIX_ERR_EXIT_NONZERO_TERM
    case PMIX_ERR_EXIT_NONZERO_TERM:
#endif
#ifdef PMIX_PROC_TERMINATED
    case PMIX_PROC_TERMINATED:
#endif
    /* What Open MPI 4.1's runtime actually returns to the waiting ranks
     * when one of them calls PMIx_Abort or exits in the middle of a fence
     * (measured with test/pmix_test.sh): not every participant arrived. */
#ifdef PMIX_ERR_PARTIAL_SUCCESS
    case PMIX_ERR_PARTIAL_SUCCESS:
#endif
        return 1;
    default:
        return 0;
    }
}

/* "fmpl.<key>" into out[PMIX_MAX_KEYLEN + 1]; FMPL_ERR_ARG if it won't fit
 * (PMIx would silently truncate it, and two long keys could then meet). */
static int make_key(char *out, const char *key)
{
    size_t n;

    if (key == NULL || key[0] == '\0')
        return FMPL_ERR_ARG;
    n = strlen(key);
    if (n > PMIX_MAX_KEYLEN - (sizeof KEY_PREFIX - 1))
        return FMPL_ERR_ARG;
    memcpy(out, KEY_PREFIX, sizeof KEY_PREFIX - 1);
    memcpy(out + sizeof KEY_PREFIX - 1, key, n + 1);
    return FMPL_SUCCESS;
}

static int pmix_put(fmpl_boot_t *b, const char *key, const void *val, size_t len)
{
    char pkey[PMIX_MAX_KEYLEN + 1];
    pmix_value_t v;
    pmix_status_t rc;
    int err;

    (void)b;    /* PMIx keeps our identity itself */
    if ((err = make_key(pkey, key)) != FMPL_SUCCESS)
        return err;
    if (len > FMPL_BOOT_VALUE_MAX || (val == NULL && len > 0))
        return FMPL_ERR_ARG;

    /* PMIx_Put copies the value, so pointing at the caller's bytes (cast
     * away const: pmix_byte_object_t has no const member) is safe. */
    memset(&v, 0, sizeof v);
    v.type = PMIX_BYTE_OBJECT;
    v.data.bo.bytes = (char *)(uintptr_t)val;
    v.data.bo.size = len;
    rc = PMIx_Put(PMIX_GLOBAL, pkey, &v);
    if (rc != PMIX_SUCCESS)
        return report("PMIx_Put", rc);
    /* No PMIx_Commit here: each costs a message to the server, and the
     * one in fence() carries every put made since the previous fence. */
    return FMPL_SUCCESS;
}

/* Look up `key` of `rank` in the local store only (PMIX_OPTIONAL): after a
 * collecting fence every value is there; without OPTIONAL a missing key
 * would become a request to the server, which may wait for a put that
 * never comes.  On success the caller releases *v. */
static pmix_status_t get_local(struct pmix_priv *p, int rank, const char *key,
                               pmix_value_t **v)
{
    pmix_proc_t peer = p->me;
    pmix_info_t info;
    pmix_status_t rc;
    bool optional = true;

    peer.rank = (pmix_rank_t)rank;
    *v = NULL;
    PMIX_INFO_CONSTRUCT(&info);
    PMIX_INFO_LOAD(&info, PMIX_OPTIONAL, &optional, PMIX_BOOL);
    rc = PMIx_Get(&peer, key, &info, 1, v);
    PMIX_INFO_DESTRUCT(&info);
    if (rc != PMIX_SUCCESS && *v != NULL) {
        PMIX_VALUE_RELEASE(*v);
        *v = NULL;
    }
    return rc;
}

/* The first rank whose marker `key` is not in our store, or -1. */
static int find_absent(fmpl_boot_t *b, const char *key)
{
    struct pmix_priv *p = b->priv;
    pmix_value_t *v;

    for (int r = 0; r < b->size; r++) {
        if (r == b->rank)
            continue;
        if (get_local(p, r, key, &v) != PMIX_SUCCESS)
            return r;
        PMIX_VALUE_RELEASE(v);
    }
    return -1;
}

/*
 * A PMIx server drops a client that disconnects from the collectives it
 * was in, and may then complete them: with Open MPI 4.1, a fence that a
 * rank died before joining returned PMIX_SUCCESS in about a third of our
 * runs (PMIX_ERR_PARTIAL_SUCCESS otherwise).  So every rank puts a marker
 * for this round with its data, and after the fence we check that every
 * marker arrived: a missing one names a rank that never got here, and
 * the fence fails with FMPL_ERR_PEER as boot.h promises.  The check is
 * one local lookup per rank.
 */
static int pmix_fence(fmpl_boot_t *b)
{
    struct pmix_priv *p = b->priv;
    char key[48];
    pmix_info_t info[2];
    size_t ninfo = 1;
    pmix_value_t v;
    pmix_status_t rc;
    bool collect = true;
    int dead;

    snprintf(key, sizeof key, FENCE_KEY_FMT, ++fence_round);
    memset(&v, 0, sizeof v);
    v.type = PMIX_UINT32;
    v.data.uint32 = fence_round;
    rc = PMIx_Put(PMIX_GLOBAL, key, &v);
    if (rc != PMIX_SUCCESS)
        return report("PMIx_Put", rc);

    /* One commit carries every put() made since the previous fence. */
    rc = PMIx_Commit();
    if (rc != PMIX_SUCCESS)
        return report("PMIx_Commit", rc);

    /* COLLECT_DATA makes the server ship every rank's committed data to
     * every node during the fence, so get() afterwards is a local lookup
     * and never waits on a peer (no direct modex). */
    PMIX_INFO_CONSTRUCT(&info[0]);
    PMIX_INFO_LOAD(&info[0], PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
    if (p->timeout > 0) {
        PMIX_INFO_CONSTRUCT(&info[1]);
        PMIX_INFO_LOAD(&info[1], PMIX_TIMEOUT, &p->timeout, PMIX_INT);
        ninfo = 2;
    }
    rc = PMIx_Fence(&p->all, 1, info, ninfo);
    for (size_t i = 0; i < ninfo; i++)
        PMIX_INFO_DESTRUCT(&info[i]);
    if (rc == PMIX_ERR_TIMEOUT) {
        /* nobody can say who is missing: no rank's data came */
        fprintf(stderr, "fmpl: rank %d: PMIx_Fence waited %d s (FMPL_PEER_TIMEOUT) for a "
                "rank that never came: giving up\n", b->rank, p->timeout);
        return FMPL_ERR_PEER;
    }
    if (rc != PMIX_SUCCESS && !is_peer_failure(rc))
        return report("PMIx_Fence", rc);

    dead = find_absent(b, key);
    if (dead >= 0) {
        note_dead(dead, HOW_FENCE, rc);
        fprintf(stderr, "fmpl: rank %d left the job before PMIx_Fence completed%s%s\n",
                dead, rc != PMIX_SUCCESS ? ": " : "",
                rc != PMIX_SUCCESS ? PMIx_Error_string(rc) : "");
        return FMPL_ERR_PEER;
    }
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "fmpl: PMIx_Fence failed: %s (a process of the job"
                " died or aborted)\n", PMIx_Error_string(rc));
        return FMPL_ERR_PEER;
    }
    return FMPL_SUCCESS;
}

/* get() is documented for keys put before the last fence.  A key that is
 * not there is a caller's mistake or an optional key being probed, so it
 * is FMPL_ERR_ARG without a message; a value too large for the buffer is
 * FMPL_ERR_TRUNCATE with *len set to the size needed. */
static int pmix_get(fmpl_boot_t *b, int rank, const char *key, void *val, size_t *len)
{
    struct pmix_priv *p = b->priv;
    char pkey[PMIX_MAX_KEYLEN + 1];
    pmix_value_t *v;
    pmix_status_t rc;
    int err;

    if (len == NULL || (val == NULL && *len > 0))
        return FMPL_ERR_ARG;
    if (rank < 0 || rank >= b->size)
        return FMPL_ERR_RANK;
    if ((err = make_key(pkey, key)) != FMPL_SUCCESS)
        return err;

    rc = get_local(p, rank, pkey, &v);
    if (rc == PMIX_ERR_NOT_FOUND)
        return FMPL_ERR_ARG;
    if (rc != PMIX_SUCCESS)
        return report("PMIx_Get", rc);
    if (v == NULL || v->type != PMIX_BYTE_OBJECT) {
        /* Only we write "fmpl." keys, and always as byte objects. */
        if (v != NULL)
            PMIX_VALUE_RELEASE(v);
        fprintf(stderr, "fmpl: PMIx_Get returned an unexpected value type for %s\n", pkey);
        return FMPL_ERR_INTERNAL;
    }
    if (v->data.bo.size > *len) {
        *len = v->data.bo.size;
        PMIX_VALUE_RELEASE(v);
        return FMPL_ERR_TRUNCATE;
    }
    *len = v->data.bo.size;
    if (*len > 0)
        memcpy(val, v->data.bo.bytes, *len);
    PMIX_VALUE_RELEASE(v);
    return FMPL_SUCCESS;
}

/* Codes of a process that ended badly.  Not PMIX_EVENT_PROC_TERMINATED
 * nor PMIX_ERR_EXIT_NONZERO_TERM: a rank that called fmpl_finalize may
 * end so and owes nobody a message. */
static const pmix_status_t death_codes[] = {
    PMIX_ERR_PROC_ABORTED, PMIX_ERR_PROC_REQUESTED_ABORT, PMIX_ERR_PROC_TERM_WO_SYNC,
    PMIX_ERR_PROC_KILLED_BY_CMD, PMIX_ERR_PROC_ABORTED_BY_SIG,
    PMIX_ERR_PROC_SENSOR_BOUND_EXCEEDED, PMIX_ERR_JOB_ABORTED, PMIX_ERR_JOB_KILLED_BY_CMD,
    PMIX_ERR_JOB_ABORTED_BY_SIG, PMIX_ERR_JOB_TERM_WO_SYNC, PMIX_ERR_JOB_CANCELED,
    PMIX_ERR_JOB_ABORTED_BY_SYS_EVENT,
};

/* the process states of the same (pmix_common.h), as the table gives them */
static const char *state_words(int state)
{
    switch (state) {
    case PMIX_PROC_STATE_KILLED_BY_CMD: return "was killed by a command";
    case PMIX_PROC_STATE_ABORTED: return "aborted";
    case PMIX_PROC_STATE_FAILED_TO_START: return "failed to start";
    case PMIX_PROC_STATE_ABORTED_BY_SIG: return "was killed by a signal";
    case PMIX_PROC_STATE_TERM_WO_SYNC: return "ended without finalizing";
    case PMIX_PROC_STATE_COMM_FAILED: return "cannot be reached";
    case PMIX_PROC_STATE_SENSOR_BOUND_EXCEEDED: return "exceeded a sensor limit";
    case PMIX_PROC_STATE_CALLED_ABORT: return "called PMIx_Abort";
    case PMIX_PROC_STATE_HEARTBEAT_FAILED: return "missed its heartbeat";
    case PMIX_PROC_STATE_CANNOT_RESTART: return "failed and cannot restart";
    case PMIX_PROC_STATE_FAILED_TO_LAUNCH: return "failed to launch";
    default: return NULL;   /* alive, ended well, or not ours to judge */
    }
}

/* The first one wins; how and why are in place before dead shows it. */
static void note_dead(int rank, int how, int why)
{
    int unclaimed = 0;
    if (rank < 0 || rank >= watch.size || rank == watch.self)
        return;
    if (atomic_compare_exchange_strong(&watch.claimed, &unclaimed, 1)) {
        atomic_store(&watch.why, why);
        atomic_store(&watch.how, how);
        atomic_store(&watch.dead, rank);
    }
}

static int ours(const pmix_proc_t *pr)
{
    return pr != NULL && strncmp(pr->nspace, watch.nspace, PMIX_MAX_NSLEN) == 0 &&
           pr->rank < (pmix_rank_t)watch.size;
}

/* On PMIx's thread.  The process is named by PMIX_EVENT_AFFECTED_PROC(S)
 * or, failing those, by the event's source (Open MPI 4's way). */
static void on_death(size_t id, pmix_status_t status, const pmix_proc_t *source,
                     pmix_info_t info[], size_t ninfo, pmix_info_t *results, size_t nresults,
                     pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    int named = 0;
    (void)id;
    (void)results;
    (void)nresults;
    for (size_t i = 0; info != NULL && i < ninfo; i++) {
        const pmix_value_t *v = &info[i].value;
        if (strncmp(info[i].key, PMIX_EVENT_AFFECTED_PROC, PMIX_MAX_KEYLEN) == 0 &&
            v->type == PMIX_PROC && ours(v->data.proc)) {
            note_dead((int)v->data.proc->rank, HOW_EVENT, status);
            named = 1;
        } else if (strncmp(info[i].key, PMIX_EVENT_AFFECTED_PROCS, PMIX_MAX_KEYLEN) == 0 &&
                   v->type == PMIX_DATA_ARRAY && v->data.darray != NULL &&
                   v->data.darray->type == PMIX_PROC && v->data.darray->array != NULL) {
            const pmix_proc_t *pr = v->data.darray->array;
            for (size_t k = 0; k < v->data.darray->size; k++)
                if (ours(&pr[k])) {
                    note_dead((int)pr[k].rank, HOW_EVENT, status);
                    named = 1;
                }
        }
    }
    if (!named && ours(source))
        note_dead((int)source->rank, HOW_EVENT, status);
    /* PMIX_SUCCESS, not ACTION_COMPLETE: an MPI in this process may have
     * a handler of its own further down the chain */
    if (cbfunc != NULL)
        cbfunc(PMIX_SUCCESS, NULL, 0, NULL, NULL, cbdata);
}

/* A table tells no order.  When it shows several dead, a survivor that
 * gave up on the first and left without finalizing is among them: so a
 * death by a signal or a command outranks an abort, and that outranks an
 * end without finalizing; then the lowest rank. */
static int state_rank(int state)
{
    switch (state) {
    case PMIX_PROC_STATE_ABORTED_BY_SIG:
    case PMIX_PROC_STATE_KILLED_BY_CMD: return 3;
    case PMIX_PROC_STATE_TERM_WO_SYNC: return 1;
    default: return state_words(state) != NULL ? 2 : 0;
    }
}

static void table_entry(const pmix_proc_info_t *pi, const pmix_proc_info_t **best)
{
    if (pi != NULL && ours(&pi->proc) && (int)pi->proc.rank != watch.self &&
        state_rank(pi->state) > 0 &&
        (*best == NULL || state_rank(pi->state) > state_rank((*best)->state) ||
         (state_rank(pi->state) == state_rank((*best)->state) &&
          pi->proc.rank < (*best)->proc.rank)))
        *best = pi;
}

/* On PMIx's thread: the answer to ask_table().  The table is an array of
 * pmix_proc_info_t, or (Open MPI 4.1) of pmix_info_t each holding one. */
static void table_done(pmix_status_t status, pmix_info_t *info, size_t ninfo, void *cbdata,
                       pmix_release_cbfunc_t release_fn, void *release_cbdata)
{
    const pmix_proc_info_t *best = NULL;

    (void)cbdata;
    if (status == PMIX_ERR_NOT_SUPPORTED)
        atomic_store(&watch.no_table, 1);
    for (size_t i = 0; (status == PMIX_SUCCESS || status == PMIX_ERR_PARTIAL_SUCCESS) &&
                       info != NULL && i < ninfo; i++) {
        const pmix_data_array_t *d = info[i].value.data.darray;
        if (strncmp(info[i].key, PMIX_QUERY_PROC_TABLE, PMIX_MAX_KEYLEN) != 0 ||
            info[i].value.type != PMIX_DATA_ARRAY || d == NULL || d->array == NULL)
            continue;
        for (size_t k = 0; k < d->size; k++) {
            if (d->type == PMIX_PROC_INFO) {
                table_entry(&((const pmix_proc_info_t *)d->array)[k], &best);
            } else if (d->type == PMIX_INFO) {
                const pmix_value_t *v = &((const pmix_info_t *)d->array)[k].value;
                if (v->type == PMIX_PROC_INFO)
                    table_entry(v->data.pinfo, &best);
            }
        }
    }
    if (best != NULL)
        note_dead((int)best->proc.rank, HOW_TABLE, best->state);
    if (release_fn != NULL)
        release_fn(release_cbdata);
    atomic_store(&watch.asking, 0);
}

static void ask_table(void)
{
    static char *keys[] = { PMIX_QUERY_PROC_TABLE, NULL };
    static pmix_info_t qual;
    static pmix_query_t q;
    int idle = 0;
    double now;

    if (watch.poll <= 0 || atomic_load(&watch.no_table) ||
        !atomic_compare_exchange_strong(&watch.asking, &idle, 1))
        return;
    now = fmpl_rtime();
    if (now < watch.next_ask) {
        atomic_store(&watch.asking, 0);
        return;
    }
    watch.next_ask = now + watch.poll;
    /* static, made once: PMIx may read them until table_done */
    if (q.keys == NULL) {
        PMIX_INFO_CONSTRUCT(&qual);
        PMIX_INFO_LOAD(&qual, PMIX_NSPACE, watch.nspace, PMIX_STRING);
        q.keys = keys;
        q.qualifiers = &qual;
        q.nqual = 1;
    }
    pmix_status_t rc = PMIx_Query_info_nb(&q, 1, table_done, NULL);
    if (rc != PMIX_SUCCESS) {
        if (rc == PMIX_ERR_NOT_SUPPORTED)
            atomic_store(&watch.no_table, 1);
        atomic_store(&watch.asking, 0);
    }
}

/* A rank the server or a fence found dead, or -1.  Called from idle
 * waits (transport/wait.c, p2p/progress.c), so it may ask the table. */
static int pmix_dead_rank(fmpl_boot_t *b)
{
    int dead = atomic_load(&watch.dead), told = 0;

    (void)b;
    if (dead < 0) {
        ask_table();
        dead = atomic_load(&watch.dead);
    }
    if (dead >= 0 && atomic_load(&watch.how) != HOW_FENCE &&
        atomic_compare_exchange_strong(&watch.told, &told, 1)) {
        int why = atomic_load(&watch.why);
        if (atomic_load(&watch.how) == HOW_EVENT)
            fprintf(stderr, "fmpl: rank %d: the PMIx server reports rank %d ended: %s\n",
                    watch.self, dead, PMIx_Error_string(why));
        else
            fprintf(stderr, "fmpl: rank %d: the PMIx server's process table says rank %d %s\n",
                    watch.self, dead, state_words(why) ? state_words(why) : "failed");
    }
    return dead;
}

static void pmix_mark_finalized(fmpl_boot_t *b)
{
    /* Nothing to record: PMIx_Finalize in close() tells the server that we
     * left on purpose. */
    (void)b;
}

static void pmix_abort(fmpl_boot_t *b, int code)
{
    char msg[96];
    pmix_status_t rc;
    int status = code != 0 ? code : 1;

    /* Flush first: the launcher kills every process, us included, and
     * stdio buffers would be lost. */
    fflush(NULL);

    /* Open MPI 4.x's mpirun (ORTE; it alone exports OMPI_MCA_orte_hnp_uri)
     * with PMIx 4.2 segfaults or hangs for ever in its own
     * PMIx_server_finalize in about half the runs when PMIx_Abort arrives
     * while other ranks wait in a PMIx_Fence (e.g. one rank fails in
     * fmpl_init and aborts while the rest are in the modex fence; a bare
     * PMIx client without FMPL reproduces it).  ORTE ends the whole
     * job anyway when a process exits without PMIx_Finalize, so there we
     * just leave; it never crashed that way.  Other launchers (prterun,
     * Slurm without --kill-on-bad-exit) need the explicit abort. */
    if (getenv("OMPI_MCA_orte_hnp_uri") != NULL)
        _exit(status);

    snprintf(msg, sizeof msg, "fmpl: rank %d aborted the job with code %d",
             b->rank, code);
    /* NULL procs = every process of our namespace.  PMIx_Abort normally
     * does not return because the runtime kills us; if it does (server
     * gone, or it merely acknowledged) we leave anyway. */
    rc = PMIx_Abort(status, msg, NULL, 0);
    if (rc != PMIX_SUCCESS)
        report("PMIx_Abort", rc);
    _exit(status);
}

static void pmix_close(fmpl_boot_t *b)
{
    pmix_status_t rc;

    /* Only drops our reference if MPI (or another library) still holds
     * PMIx open; the last finalize disconnects from the server. */
    if (watch.have_ev)
        PMIx_Deregister_event_handler(watch.evref, NULL, NULL);
    watch.have_ev = 0;
    rc = PMIx_Finalize(NULL, 0);
    if (rc != PMIX_SUCCESS)
        report("PMIx_Finalize", rc);
    free(b->priv);
    b->priv = NULL;
}

static const struct fmpl_boot_ops pmix_ops = {
    .name = "pmix",
    .put = pmix_put,
    .fence = pmix_fence,
    .get = pmix_get,
    .dead_rank = pmix_dead_rank,
    .mark_finalized = pmix_mark_finalized,
    .abort = pmix_abort,
    .close = pmix_close,
};

static int jobid_char_ok(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
           (c >= '0' && c <= '9') || c == '_' || c == '-';
}

/*
 * The job id names shared-memory objects and files, so it may only hold
 * [A-Za-z0-9_-].  Open MPI 4's namespaces are decimal job ids and pass
 * unchanged; prterun's ("prterun-host-123@1") and Slurm's ("slurm.pmix.7.0")
 * do not.  Mapping bad characters to '_' or cutting the name could make two
 * namespaces equal, so whenever the name changes we append a 64-bit FNV-1a
 * hash of the original namespace.
 */
static void make_jobid(char *out, const char *nspace)
{
    const size_t hexlen = 16;
    const size_t keep_max = FMPL_BOOT_JOBID_MAX - 1 - 1 - hexlen; /* NUL, '-' */
    uint64_t h = 1469598103934665603ULL;
    size_t n = strnlen(nspace, PMIX_MAX_NSLEN), i, keep;
    int changed = (n == 0 || n > FMPL_BOOT_JOBID_MAX - 1);

    for (i = 0; i < n; i++) {
        h = (h ^ (unsigned char)nspace[i]) * 1099511628211ULL;
        if (!jobid_char_ok((unsigned char)nspace[i]))
            changed = 1;
    }
    if (!changed) {
        memcpy(out, nspace, n + 1);
        return;
    }
    keep = n < keep_max ? n : keep_max;
    for (i = 0; i < keep; i++)
        out[i] = jobid_char_ok((unsigned char)nspace[i]) ? nspace[i] : '_';
    if (keep > 0)
        out[keep++] = '-';
    snprintf(out + keep, FMPL_BOOT_JOBID_MAX - keep, "%016llx",
             (unsigned long long)h);
}

static int value_to_size(const pmix_value_t *v, long long *out)
{
    switch (v->type) {
    case PMIX_UINT32: *out = v->data.uint32; return 0;
    case PMIX_UINT64: *out = (long long)v->data.uint64; return 0;
    case PMIX_UINT16: *out = v->data.uint16; return 0;
    case PMIX_INT:    *out = v->data.integer; return 0;
    case PMIX_UINT:   *out = v->data.uint; return 0;
    case PMIX_INT32:  *out = v->data.int32; return 0;
    case PMIX_INT64:  *out = v->data.int64; return 0;
    case PMIX_SIZE:   *out = (long long)v->data.size; return 0;
    default:          return -1;
    }
}

/* Before the first fence, so that a death during start-up is heard. */
static void watch_start(const struct pmix_priv *p, const fmpl_boot_t *b)
{
    pmix_status_t rc;

    atomic_store(&watch.dead, -1);
    atomic_store(&watch.claimed, 0);
    atomic_store(&watch.told, 0);
    atomic_store(&watch.no_table, 0);
    atomic_store(&watch.asking, 0);
    watch.size = b->size;
    watch.self = b->rank;
    watch.poll = b->launcher_poll;
    watch.next_ask = 0;
    memcpy(watch.nspace, p->me.nspace, sizeof watch.nspace);
    /* blocking (no callback): returns the reference, or an error */
    rc = PMIx_Register_event_handler((pmix_status_t *)death_codes,
                                     sizeof death_codes / sizeof death_codes[0], NULL, 0,
                                     on_death, NULL, NULL);
    watch.have_ev = rc >= 0;
    watch.evref = rc >= 0 ? (size_t)rc : 0;
}

int fmpl_boot_pmix_open(fmpl_boot_t *b)
{
    struct pmix_priv *p;
    pmix_value_t *v = NULL;
    pmix_status_t rc;
    long long size = 0;            /* -O1 cannot see value_to_size set it */

    if (b == NULL)
        return FMPL_ERR_ARG;

    /* Every PMIx launcher exports both to its children (Open MPI 4.1's
     * mpirun sets PMIX_NAMESPACE, PMIX_RANK, PMIX_SERVER_URI*, ...).
     * Without them PMIx_Init would not fail but make us a PMIx singleton,
     * which is the single back-end's job; so decline without touching
     * libpmix.  An Open MPI singleton (MPI_Init without mpirun) starts its
     * own server and sets these in our environment, and then we join it. */
    if (getenv("PMIX_NAMESPACE") == NULL || getenv("PMIX_RANK") == NULL)
        return FMPL_ERR_UNSUPPORTED;

#ifndef FMPL_PMIX_DIRECT
    char why[256];
    if (fmpl_dlib_load(&pmix_lib, why, sizeof why) != 0) {
        fprintf(stderr, "fmpl: started by a PMIx launcher, but libpmix cannot be loaded"
                " (%s); install libpmix2\n", why);
        return FMPL_ERR_SYSTEM;
    }
#endif

    p = calloc(1, sizeof *p);
    if (p == NULL)
        return FMPL_ERR_NOMEM;

    rc = PMIx_Init(&p->me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        free(p);
        return report("PMIx_Init", rc);
    }
    p->all = p->me;
    p->all.rank = PMIX_RANK_WILDCARD;
    /* a fence waits for a rank that stopped (or loops outside FMPL) no
     * longer than any other wait of FMPL does (fmpl(7)); PMIx counts in
     * whole seconds */
    double t = b->peer_timeout;
    p->timeout = t > 0 ? (t < 1 ? 1 : t > 1e6 ? 1000000 : (int)(t + 0.999)) : 0;

    rc = PMIx_Get(&p->all, PMIX_JOB_SIZE, NULL, 0, &v);
    if (rc != PMIX_SUCCESS) {
        if (v != NULL)
            PMIX_VALUE_RELEASE(v);
        report("PMIx_Get(PMIX_JOB_SIZE)", rc);
        goto fail;
    }
    if (value_to_size(v, &size) != 0 || size < 1 || size > 0x7fffffff ||
        p->me.rank >= (pmix_rank_t)size) {
        fprintf(stderr, "fmpl: PMIx_Get(PMIX_JOB_SIZE) gave an unusable value"
                " (type %d) for rank %u\n", (int)v->type, (unsigned)p->me.rank);
        PMIX_VALUE_RELEASE(v);
        goto fail;
    }
    PMIX_VALUE_RELEASE(v);

    b->rank = (int)p->me.rank;
    b->size = (int)size;
    watch_start(p, b);
    make_jobid(b->jobid, p->me.nspace);
    b->ops = &pmix_ops;
    b->priv = p;
    return FMPL_SUCCESS;

fail:
    /* Drop our reference so an MPI that initialised PMIx keeps working. */
    PMIx_Finalize(NULL, 0);
    free(p);
    return FMPL_ERR_SYSTEM;
}

#endif /* FMPL_HAVE_PMIX */
