/*
 * pmix_serve - a PMIx launcher for tests: N copies of a program on this
 * host as one PMIx namespace, served by libpmix's server library, and a
 * death told to the survivors as PRRTE tells it: a process that ends
 * without PMIx_Finalize is announced by a PMIx event (code by how it
 * ended, PMIX_EVENT_AFFECTED_PROC naming it), and the job goes on.
 *
 *   pmix_serve [-n N] [-q] PROGRAM [ARG...]
 *     -n  processes (default 2)
 *     -q  tell nobody: a server that knows of a death but sends no event
 *
 * Neither launcher Debian 12 has does this: Open MPI 4.1's mpirun sends
 * its event with a range that PMIx 4.2 refuses, and Slurm 22.05's PMIx
 * plugin kills the step instead (test/pmix_test.sh).  So this program is
 * how FMPL's handler of those events (src/base/boot_pmix.c) is tested.
 * It serves what FMPL's bootstrap asks for (job size, put/commit/fence
 * with collected data, get, finalize, abort) and nothing more.
 *
 * Prints "pmix_serve: rank R ended ..." for each process that ended
 * without finalizing, and exits with the first non-zero status of a
 * process (128 + signal for a signal), 0 if all were 0.
 */
#include <pmix.h>
#include <pmix_server.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define NSPACE "pmix-serve-job"

static int nprocs = 2;
static pid_t *pids;
static volatile int *finalized;   /* set on PMIx's thread */

/* fence upcalls, answered from the main loop: PMIx's thread must not be
 * called back from inside its own upcall */
struct fence {
    char *data;
    size_t ndata;
    pmix_modex_cbfunc_t cb;
    void *cbdata;
    struct fence *next;
};
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct fence *fences;

static void die(const char *what, pmix_status_t rc)
{
    fprintf(stderr, "pmix_serve: %s: %s\n", what, PMIx_Error_string(rc));
    exit(2);
}

static pmix_status_t on_connected(const pmix_proc_t *p, void *obj, pmix_op_cbfunc_t cb,
                                  void *cbdata)
{
    (void)p, (void)obj, (void)cb, (void)cbdata;
    return PMIX_OPERATION_SUCCEEDED;
}

static pmix_status_t on_finalized(const pmix_proc_t *p, void *obj, pmix_op_cbfunc_t cb,
                                  void *cbdata)
{
    (void)obj, (void)cb, (void)cbdata;
    if (p->rank < (pmix_rank_t)nprocs)
        finalized[p->rank] = 1;
    return PMIX_OPERATION_SUCCEEDED;
}

static pmix_status_t on_abort(const pmix_proc_t *p, void *obj, int status, const char msg[],
                              pmix_proc_t procs[], size_t nprocs_, pmix_op_cbfunc_t cb,
                              void *cbdata)
{
    (void)obj, (void)procs, (void)nprocs_, (void)cb, (void)cbdata;
    fprintf(stderr, "pmix_serve: rank %u aborts the job (%d): %s\n", p->rank, status,
            msg ? msg : "");
    for (int r = 0; r < nprocs; r++)
        if (pids[r] > 0)
            kill(pids[r], SIGKILL);
    return PMIX_OPERATION_SUCCEEDED;
}

/* one host: the library has gathered every local contribution; hand the
 * data back as it is */
static pmix_status_t on_fence(const pmix_proc_t procs[], size_t n, const pmix_info_t info[],
                              size_t ninfo, char *data, size_t ndata, pmix_modex_cbfunc_t cb,
                              void *cbdata)
{
    struct fence *f = calloc(1, sizeof *f);
    (void)procs, (void)n, (void)info, (void)ninfo;
    if (f == NULL)
        return PMIX_ERR_NOMEM;
    *f = (struct fence){ data, ndata, cb, cbdata, NULL };
    pthread_mutex_lock(&lock);
    f->next = fences;
    fences = f;
    pthread_mutex_unlock(&lock);
    return PMIX_SUCCESS;
}

static void answer_fences(void)
{
    pthread_mutex_lock(&lock);
    struct fence *f = fences;
    fences = NULL;
    pthread_mutex_unlock(&lock);
    while (f != NULL) {
        struct fence *next = f->next;
        f->cb(PMIX_SUCCESS, f->data, f->ndata, f->cbdata, NULL, NULL);
        free(f);
        f = next;
    }
}

static void op_done(pmix_status_t st, void *cbdata)
{
    (void)st;
    *(volatile int *)cbdata = 1;
}

static void wait_flag(volatile int *flag)
{
    while (!*flag)
        usleep(1000);
}

static void info_array(pmix_info_t *slot, const char *key, size_t n, pmix_info_t **out)
{
    pmix_data_array_t *d = calloc(1, sizeof *d);
    pmix_info_t *a = calloc(n, sizeof *a);
    if (d == NULL || a == NULL)
        die("calloc", PMIX_ERR_NOMEM);
    d->type = PMIX_INFO;
    d->size = n;
    d->array = a;
    snprintf(slot->key, sizeof slot->key, "%s", key);
    slot->value.type = PMIX_DATA_ARRAY;
    slot->value.data.darray = d;
    *out = a;
}

/* the job: one node, nprocs ranks, each its own local and node rank */
static void register_job(void)
{
    char host[256], ranks[4096] = "", *regex = NULL, *ppn = NULL;
    uint32_t size = (uint32_t)nprocs, zero = 0, one = 1;
    size_t ninfo = 2 + (size_t)nprocs, k = 0;
    pmix_info_t *info = calloc(ninfo, sizeof *info), *a;
    volatile int done = 0;

    if (info == NULL)
        die("calloc", PMIX_ERR_NOMEM);
    gethostname(host, sizeof host);
    host[sizeof host - 1] = '\0';
    for (int r = 0; r < nprocs; r++)
        snprintf(ranks + strlen(ranks), sizeof ranks - strlen(ranks), "%s%d", r ? "," : "", r);
    PMIx_generate_regex(host, &regex);
    PMIx_generate_ppn(ranks, &ppn);

    info_array(&info[k++], PMIX_JOB_INFO_ARRAY, 6, &a);
    PMIx_Info_load(&a[0], PMIX_NODE_MAP, regex, PMIX_REGEX);
    PMIx_Info_load(&a[1], PMIX_PROC_MAP, ppn, PMIX_REGEX);
    PMIx_Info_load(&a[2], PMIX_JOB_SIZE, &size, PMIX_UINT32);
    PMIx_Info_load(&a[3], PMIX_UNIV_SIZE, &size, PMIX_UINT32);
    PMIx_Info_load(&a[4], PMIX_MAX_PROCS, &size, PMIX_UINT32);
    PMIx_Info_load(&a[5], PMIX_NUM_NODES, &one, PMIX_UINT32);
    info_array(&info[k++], PMIX_NODE_INFO_ARRAY, 3, &a);
    PMIx_Info_load(&a[0], PMIX_HOSTNAME, host, PMIX_STRING);
    PMIx_Info_load(&a[1], PMIX_NODEID, &zero, PMIX_UINT32);
    PMIx_Info_load(&a[2], PMIX_NODE_SIZE, &size, PMIX_UINT32);
    for (int r = 0; r < nprocs; r++) {
        pmix_rank_t rank = (pmix_rank_t)r;
        uint16_t local = (uint16_t)r;
        info_array(&info[k++], PMIX_PROC_DATA, 5, &a);
        PMIx_Info_load(&a[0], PMIX_RANK, &rank, PMIX_PROC_RANK);
        PMIx_Info_load(&a[1], PMIX_LOCAL_RANK, &local, PMIX_UINT16);
        PMIx_Info_load(&a[2], PMIX_NODE_RANK, &local, PMIX_UINT16);
        PMIx_Info_load(&a[3], PMIX_NODEID, &zero, PMIX_UINT32);
        PMIx_Info_load(&a[4], PMIX_HOSTNAME, host, PMIX_STRING);
    }
    pmix_nspace_t ns;
    PMIX_LOAD_NSPACE(ns, NSPACE);
    pmix_status_t rc = PMIx_server_register_nspace(ns, nprocs, info, ninfo, op_done,
                                                   (void *)&done);
    if (rc != PMIX_SUCCESS)
        die("PMIx_server_register_nspace", rc);
    wait_flag(&done);
    free(regex);
    free(ppn);
}

/* PRRTE's way: the code says how it ended, the info names the process */
static void tell_death(int rank, int status)
{
    pmix_proc_t dead, me;
    pmix_info_t info;
    pmix_status_t code = WIFSIGNALED(status) ? PMIX_ERR_PROC_ABORTED_BY_SIG
                                             : PMIX_ERR_PROC_TERM_WO_SYNC;
    PMIX_LOAD_PROCID(&dead, NSPACE, (pmix_rank_t)rank);
    PMIX_LOAD_PROCID(&me, "pmix-serve", 0);
    PMIX_INFO_CONSTRUCT(&info);
    PMIx_Info_load(&info, PMIX_EVENT_AFFECTED_PROC, &dead, PMIX_PROC);
    volatile int done = 0;
    pmix_status_t rc = PMIx_Notify_event(code, &me, PMIX_RANGE_LOCAL, &info, 1, op_done,
                                         (void *)&done);
    if (rc == PMIX_SUCCESS)
        wait_flag(&done);
    else if (rc != PMIX_OPERATION_SUCCEEDED)
        fprintf(stderr, "pmix_serve: PMIx_Notify_event: %s\n", PMIx_Error_string(rc));
}

int main(int argc, char **argv)
{
    int quiet = 0, opt, left, first = 0;
    char dir[] = "/tmp/pmix_serve.XXXXXX";
    pmix_server_module_t module = {
        .client_connected = on_connected,
        .client_finalized = on_finalized,
        .abort = on_abort,
        .fence_nb = on_fence,
    };
    pmix_info_t init[3];
    pmix_status_t rc;

    while ((opt = getopt(argc, argv, "+n:q")) != -1) {
        if (opt == 'n')
            nprocs = atoi(optarg);
        else if (opt == 'q')
            quiet = 1;
        else
            return 2;
    }
    if (optind >= argc || nprocs < 1 || nprocs > 256) {
        fprintf(stderr, "usage: pmix_serve [-n 1..256] [-q] PROGRAM [ARG...]\n");
        return 2;
    }
    pids = calloc((size_t)nprocs, sizeof *pids);
    finalized = calloc((size_t)nprocs, sizeof *finalized);
    if (pids == NULL || finalized == NULL || mkdtemp(dir) == NULL) {
        perror("pmix_serve");
        return 2;
    }
    for (int i = 0; i < 3; i++)
        PMIX_INFO_CONSTRUCT(&init[i]);
    PMIx_Info_load(&init[0], PMIX_SERVER_TMPDIR, dir, PMIX_STRING);
    PMIx_Info_load(&init[1], PMIX_SYSTEM_TMPDIR, dir, PMIX_STRING);
    PMIx_Info_load(&init[2], PMIX_SERVER_NSPACE, "pmix-serve", PMIX_STRING);
    if ((rc = PMIx_server_init(&module, init, 3)) != PMIX_SUCCESS)
        die("PMIx_server_init", rc);
    register_job();

    for (int r = 0; r < nprocs; r++) {
        pmix_proc_t p;
        char **env = NULL;
        volatile int done = 0;
        PMIX_LOAD_PROCID(&p, NSPACE, (pmix_rank_t)r);
        if ((rc = PMIx_server_register_client(&p, getuid(), getgid(), NULL, op_done,
                                              (void *)&done)) != PMIX_SUCCESS)
            die("PMIx_server_register_client", rc);
        wait_flag(&done);
        if ((rc = PMIx_server_setup_fork(&p, &env)) != PMIX_SUCCESS)
            die("PMIx_server_setup_fork", rc);
        pids[r] = fork();
        if (pids[r] < 0) {
            perror("pmix_serve: fork");
            return 2;
        }
        if (pids[r] == 0) {
            for (char **e = env; e && *e; e++)
                putenv(*e);
            execvp(argv[optind], argv + optind);
            perror(argv[optind]);
            _exit(127);
        }
    }

    for (left = nprocs; left > 0;) {
        int status;
        pid_t pid = waitpid(-1, &status, WNOHANG);
        answer_fences();
        if (pid == 0 || (pid < 0 && errno == EINTR)) {
            usleep(1000);
            continue;
        }
        if (pid < 0)
            break;
        for (int r = 0; r < nprocs; r++) {
            if (pids[r] != pid)
                continue;
            pids[r] = 0;
            left--;
            int code = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
            if (first == 0 && code != 0)
                first = code;
            if (!finalized[r]) {
                fprintf(stderr, "pmix_serve: rank %d ended without finalizing (%s %d)%s\n", r,
                        WIFSIGNALED(status) ? "signal" : "status",
                        WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status),
                        quiet ? "" : ": telling the others");
                if (!quiet)
                    tell_death(r, status);
            }
        }
    }
    answer_fences();
    PMIx_server_finalize();
    if (rmdir(dir) != 0)   /* PMIx_server_finalize empties it */
        fprintf(stderr, "pmix_serve: %s left behind\n", dir);
    return first;
}
