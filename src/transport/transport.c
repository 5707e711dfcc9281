/*
 * transport.c - choosing the transports, and what every transport inherits.
 *
 * The routing decision lives here and nowhere else.  Every rank publishes
 * its host name; ranks with the same name share a host.  Then:
 *   every rank on this host          shm for every peer (no routing cost)
 *   ranks on several hosts           route: shm to the peers on our host,
 *                                    ofi (libfabric) to the others; ofi
 *                                    alone when no host has two ranks
 *   FMPL_TRANSPORT=shm|ofi|route     that one, for every peer
 *   FMPL_TRANSPORT=tcw               the emulated SR8000 (every rank a node)
 *   FMPL_TRANSPORT=peach2            an emulated PEACH2 sub-cluster (up to 16 nodes)
 *   FMPL_TRANSPORT=tca               emulated HA-PACS/TCA: PEACH2 sub-clusters
 *                                    and InfiniBand, routed per peer and size
 *   FMPL_TRANSPORT=dcfa              InfiniBand (or RoCE) verbs, every peer
 * The decision is a function of what every rank published, so every rank
 * makes the same one (the transports' start-ups are collective).
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fmpl.h"
#include "core/boot.h"
#include "core/log.h"
#include "transport/transport.h"

#define HOST_MAX 256

static const fmpl_tl_ops_t *const all_ops[] = { &fmpl_shm_ops, &fmpl_tcw_ops, &fmpl_peach2_ops,
                                                &fmpl_tca_ops, &fmpl_ib_ops,
#ifdef FMPL_HAVE_OFI
                                                &fmpl_ofi_ops, &fmpl_route_ops,
#endif
#ifdef FMPL_HAVE_VERBS
                                                &fmpl_dcfa_ops,
#endif
};

static const fmpl_tl_ops_t *by_name(const char *want)
{
    for (size_t i = 0; i < sizeof all_ops / sizeof all_ops[0]; i++)
        if (strcmp(all_ops[i]->name, want) == 0)
            return all_ops[i];
    fmpl_log_err("FMPL_TRANSPORT=%s: no such transport in this build (have: shm, tcw, peach2, "
                 "tca, ib%s%s)", want,
#ifdef FMPL_HAVE_OFI
                 ", ofi, route",
#else
                 "",
#endif
#ifdef FMPL_HAVE_VERBS
                 ", dcfa"
#else
                 ""
#endif
    );
    return NULL;
}

/* This process's host identity: FMPL_HOSTNAME, else the host name. */
static void my_host(char *name, size_t len)
{
    const char *e = getenv("FMPL_HOSTNAME");
    if (e && *e) {
        snprintf(name, len, "%s", e);
        return;
    }
    if (gethostname(name, len - 1) != 0)
        snprintf(name, len, "localhost");
    name[len - 1] = '\0';
}

/* The running kernel's boot id: the same for every namespace of one
 * machine, different on every other machine. */
static void my_machine(char *id, size_t len)
{
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (!f || !fgets(id, (int)len, f))
        snprintf(id, len, "unknown");
    if (f)
        fclose(f);
    id[strcspn(id, "\n")] = '\0';
}

/* The CPUs this process may run on (all online ones when unknown). */
static void my_cpus(cpu_set_t *set)
{
    CPU_ZERO(set);
    if (sched_getaffinity(0, sizeof *set, set) != 0 || CPU_COUNT(set) == 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        for (long c = 0; c < (n > 0 ? n : 1) && c < CPU_SETSIZE; c++)
            CPU_SET((int)c, set);
    }
}

/* What a rank publishes: its CPUs, then "host\0machine\0". */
typedef struct host_card {
    cpu_set_t cpus;
    char names[HOST_MAX + 64];
} host_card_t;

/* Is any rank crowded (as learn_hosts judges its own case below), from
 * every rank's CPUs and machine number: the same answer on every rank
 * (-1: out of memory).  Ranks sorted by machine, so that only ranks of
 * one machine meet. */
static const int *sort_mach;
static int by_machine(const void *a, const void *b)
{
    int x = sort_mach[*(const int *)a], y = sort_mach[*(const int *)b];
    return x < y ? -1 : x > y;
}
static int any_crowded(int size, const cpu_set_t *cpus, const int *mach)
{
    int *order = malloc((size_t)size * sizeof *order);
    if (!order)
        return -1;                 /* (no guess: every rank must answer alike) */
    for (int r = 0; r < size; r++)
        order[r] = r;
    sort_mach = mach;
    qsort(order, (size_t)size, sizeof *order, by_machine);
    int crowded = 0;
    for (int i = 0, end; i < size && !crowded; i = end) {
        for (end = i + 1; end < size && mach[order[end]] == mach[order[i]]; end++)
            ;
        for (int a = i; a < end && !crowded; a++) {
            const cpu_set_t *q = &cpus[order[a]];
            int in = 0;
            for (int b = i; b < end; b++) {
                cpu_set_t both;
                CPU_AND(&both, &cpus[order[b]], q);
                in += CPU_EQUAL(&both, &cpus[order[b]]);
            }
            crowded = in > CPU_COUNT(q);
        }
    }
    free(order);
    return crowded;
}

/* host[r] for every rank, numbered in order of first appearance; how many
 * ranks share this machine; and whether they crowd our CPUs: more ranks
 * confined to (a subset of) the CPUs we may use than there are of them -
 * unbound ranks outnumbering the cores, or fake hosts on one machine
 * whose launchers bound their first ranks to the same core. */
static int learn_hosts(fmpl_tl_t *tl, int **hostp)
{
    fmpl_boot_t *b = tl->boot;
    char machine[64], (*names)[HOST_MAX] = NULL;
    host_card_t mine = { 0 };
    int *host = calloc((size_t)tl->size, sizeof *host);
    if (!host)
        return FMPL_ERR_NOMEM;
    *hostp = host;
    my_cpus(&mine.cpus);
    tl->nhosts = 1;
    tl->machine_ranks = 1;
    tl->crowded = 0;
    tl->crowded_any = 0;
    if (tl->size == 1)
        return FMPL_SUCCESS;
    my_host(mine.names, HOST_MAX);
    my_machine(machine, sizeof machine);
    size_t hl = strlen(mine.names) + 1;
    memcpy(mine.names + hl, machine, strlen(machine) + 1);
    int rc = b->ops->put(b, "host", &mine,
                         offsetof(host_card_t, names) + hl + strlen(machine) + 1);
    if (rc == FMPL_SUCCESS)
        rc = b->ops->fence(b);
    if (rc != FMPL_SUCCESS)
        return rc;
    names = calloc((size_t)tl->size, sizeof *names);
    cpu_set_t *cpus = calloc((size_t)tl->size, sizeof *cpus);
    int *mach = calloc((size_t)tl->size, sizeof *mach);
    char (*machines)[64] = calloc((size_t)tl->size, sizeof *machines);
    if (!names || !cpus || !mach || !machines) {
        free(names);
        free(cpus);
        free(mach);
        free(machines);
        return FMPL_ERR_NOMEM;
    }
    int n = 0, inside = 0, nmach = 0;
    tl->machine_ranks = 0;
    for (int r = 0; r < tl->size && rc == FMPL_SUCCESS; r++) {
        size_t len = sizeof(host_card_t);
        host_card_t card;
        rc = b->ops->get(b, r, "host", &card, &len);
        if (rc != FMPL_SUCCESS || len < offsetof(host_card_t, names) + 2) {
            fmpl_log_err("rank %d published no host name", r);
            rc = rc ? rc : FMPL_ERR_INTERNAL;
            break;
        }
        len -= offsetof(host_card_t, names);
        char *name = card.names;
        name[len - 1] = '\0';
        size_t hl = strnlen(name, len);
        cpus[r] = card.cpus;
        if (hl + 1 < len) {
            /* (a card without a machine is a machine of its own) */
            char *m = name + hl + 1;
            m[strnlen(m, sizeof machines[0] - 1)] = '\0';
            int k = 0;
            while (k < nmach && strcmp(machines[k], m) != 0)
                k++;
            if (k == nmach)
                memcpy(machines[nmach++], m, strlen(m) + 1);
            mach[r] = k;
        } else {
            mach[r] = -1 - r;
        }
        if (hl + 1 < len && strcmp(name + hl + 1, machine) == 0) {
            cpu_set_t both;
            CPU_AND(&both, &card.cpus, &mine.cpus);
            tl->machine_ranks++;
            inside += CPU_EQUAL(&both, &card.cpus);
        }
        name[HOST_MAX - 1] = '\0';
        int h = 0;
        while (h < n && strcmp(names[h], name) != 0)
            h++;
        if (h == n)
            memcpy(names[n++], name, HOST_MAX);
        host[r] = h;
    }
    tl->nhosts = n;
    tl->crowded = inside > CPU_COUNT(&mine.cpus);
    if (tl->crowded)
        fmpl_log_info("%d ranks of this machine share the %d CPUs rank %d may use: "
                      "waits give the core away early", inside, CPU_COUNT(&mine.cpus),
                      tl->rank);
    if (rc == FMPL_SUCCESS) {
        int any = any_crowded(tl->size, cpus, mach);
        if (any < 0)
            rc = FMPL_ERR_NOMEM;
        else
            tl->crowded_any = any;
    }
    if (tl->crowded_any && !tl->crowded)
        fmpl_log_info("rank %d has its CPUs, other ranks share theirs: collectives "
                      "choose as where ranks share cores", tl->rank);
    free(names);
    free(cpus);
    free(mach);
    free(machines);
    return rc;
}

int fmpl_tl_open(fmpl_tl_t *tl)
{
    int *host = NULL;
    int rc = learn_hosts(tl, &host);
    tl->host = host;
    if (rc != FMPL_SUCCESS) {
        fmpl_tl_close(tl);
        return rc;
    }
    int here = 0, shared = 0;      /* ranks on our host; a host with two */
    int *count = calloc((size_t)tl->nhosts, sizeof *count);
    if (!count) {
        fmpl_tl_close(tl);
        return FMPL_ERR_NOMEM;
    }
    for (int r = 0; r < tl->size; r++)
        shared |= ++count[host[r]] > 1;
    here = count[host[tl->rank]];
    free(count);

    const char *want = getenv("FMPL_TRANSPORT");
    const fmpl_tl_ops_t *ops;
    if (want && *want)
        ops = by_name(want);
    else if (tl->nhosts == 1)
        ops = &fmpl_shm_ops;
    else {
#ifdef FMPL_HAVE_OFI
        ops = shared ? &fmpl_route_ops : &fmpl_ofi_ops;
#else
        fmpl_log_err("the job spans %d hosts, but this FMPL was built without "
                     "libfabric (install libfabric-dev and rebuild)", tl->nhosts);
        ops = NULL;
#endif
    }
    if (!ops) {
        fmpl_tl_close(tl);
        return FMPL_ERR_ARG;
    }
    tl->ops = ops;
    rc = ops->open(tl);
    if (rc != FMPL_SUCCESS) {
        tl->priv = NULL;
        fmpl_tl_close(tl);
        return rc;
    }
#ifdef FMPL_HAVE_OFI
    if (ops == &fmpl_route_ops)
        fmpl_log_info("route: rank %d on host %d of %d: shm to the %d other ranks there, "
                      "ofi to the %d elsewhere", tl->rank, host[tl->rank], tl->nhosts,
                      here - 1, tl->size - here);
    else
#endif
        fmpl_log_info("route: rank %d on host %d of %d: %s to all %d ranks", tl->rank,
                      host[tl->rank], tl->nhosts, ops->name, tl->size);
    return FMPL_SUCCESS;
}

void fmpl_tl_close(fmpl_tl_t *tl)
{
    if (tl->ops && tl->priv)
        tl->ops->close(tl);
    tl->priv = NULL;
    free((int *)tl->host);
    tl->host = NULL;
    free(tl->watch.peer);
    free(tl->watch.listed);
    tl->watch = (fmpl_tl_watch_t){ .idx = -1 };
}

int fmpl_tl_watch(fmpl_tl_t *tl, int idx)
{
    if (!(tl->caps & FMPL_TL_CAP_WATCH))
        return FMPL_ERR_UNSUPPORTED;
    fmpl_tl_watch_t *w = &tl->watch;
    if (!w->peer) {
        w->peer = calloc((size_t)tl->size, sizeof *w->peer);
        w->listed = calloc((size_t)tl->size, sizeof *w->listed);
        if (!w->peer || !w->listed) {
            free(w->peer);
            free(w->listed);
            *w = (fmpl_tl_watch_t){ .idx = -1 };
            return FMPL_ERR_NOMEM;
        }
    }
    w->idx = idx;
    w->n = 0;
    return FMPL_SUCCESS;
}

int fmpl_tl_unsupported_put_strided(fmpl_tl_t *tl, int peer, const void *src, size_t blklen,
                                    size_t nblk, size_t sstride, const fmpl_tl_key_t *key,
                                    uint64_t roff, size_t dstride, fmpl_tl_comp_t *comp)
{
    (void)tl; (void)peer; (void)src; (void)blklen; (void)nblk; (void)sstride;
    (void)key; (void)roff; (void)dstride; (void)comp;
    return FMPL_ERR_UNSUPPORTED;
}

int fmpl_tl_unsupported_cas(fmpl_tl_t *tl, int peer, int idx, unsigned off, int out,
                            uint64_t expect, uint64_t desired, uint64_t *old)
{
    (void)tl; (void)peer; (void)idx; (void)off; (void)out; (void)expect; (void)desired;
    (void)old;
    return FMPL_ERR_UNSUPPORTED;
}

int fmpl_tl_unsupported_get(fmpl_tl_t *tl, int peer, void *dst, size_t len,
                            const fmpl_tl_key_t *key, uint64_t roff)
{
    (void)tl; (void)peer; (void)dst; (void)len; (void)key; (void)roff;
    return FMPL_ERR_UNSUPPORTED;
}

int fmpl_tl_unsupported_barrier(fmpl_tl_t *tl, fmpl_tl_coll_t *st)
{
    (void)tl; (void)st;
    return FMPL_ERR_UNSUPPORTED;
}

int fmpl_tl_unsupported_bcast(fmpl_tl_t *tl, void *buf, size_t len, int root,
                              fmpl_tl_coll_t *st)
{
    (void)tl; (void)buf; (void)len; (void)root; (void)st;
    return FMPL_ERR_UNSUPPORTED;
}

/* A 2-D block-stride put as one put per block, for transports without
 * strided DMA. */
int fmpl_tl_put_strided_by_put(fmpl_tl_t *tl, int peer, const void *src, size_t blklen,
                               size_t nblk, size_t sstride, const fmpl_tl_key_t *key,
                               uint64_t roff, size_t dstride, fmpl_tl_comp_t *comp)
{
    const uint8_t *s = src;
    for (size_t b = 0; b < nblk; b++) {
        int rc = tl->ops->put(tl, peer, s + b * sstride, blklen, key, roff + b * dstride, comp);
        if (rc != FMPL_SUCCESS)
            return rc;
    }
    return FMPL_SUCCESS;
}

int fmpl_tl_put_iov_by_put(fmpl_tl_t *tl, int peer, const fmpl_tl_iov_t *iov, int n,
                           const fmpl_tl_key_t *key, fmpl_tl_comp_t *comp)
{
    for (int i = 0; i < n; i++) {
        int rc = tl->ops->put(tl, peer, iov[i].src, iov[i].len, key, iov[i].roff, comp);
        if (rc != FMPL_SUCCESS)
            return rc;
    }
    return FMPL_SUCCESS;
}

/* put_notify as the two calls it stands for (the ordering is notify's) */
int fmpl_tl_put_notify_by_parts(fmpl_tl_t *tl, int peer, const void *src, size_t len,
                                const fmpl_tl_key_t *key, uint64_t roff, int idx, unsigned off,
                                const void *rec, unsigned reclen, fmpl_tl_comp_t *comp)
{
    int rc = tl->ops->put(tl, peer, src, len, key, roff, comp);
    if (rc != FMPL_SUCCESS)
        return rc;
    return tl->ops->notify(tl, peer, idx, off, rec, reclen, 0, comp);
}

#define IDLE_SPIN 1024             /* idle turns before yielding the CPU */

int fmpl_tl_wait_check(fmpl_tl_t *tl, int failed, int peer, double *t0)
{
    /* named once: the caller's error may reach a layer (a matrix receive
     * under the BLACS, say) that knows no rank to name */
    static int named = -1;
    int dead = failed ? peer : tl->boot->ops->dead_rank(tl->boot);
    if (dead >= 0) {
        if (dead != named) {
            named = dead;
            fmpl_log_err("%s: peer rank %d died or left the job without fmpl_finalize",
                         tl->ops->name, dead);
        }
        return FMPL_ERR_PEER;
    }
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    double now = (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
    if (*t0 == 0) {
        *t0 = now;
    } else if (tl->boot->peer_timeout > 0 && now - *t0 > tl->boot->peer_timeout) {
        if (peer >= 0)
            fmpl_log_err("%s: waited %.0f s for rank %d (FMPL_PEER_TIMEOUT): giving up",
                         tl->ops->name, now - *t0, peer);
        else
            fmpl_log_err("%s: waited %.0f s for the other ranks (FMPL_PEER_TIMEOUT): "
                         "giving up", tl->ops->name, now - *t0);
        return FMPL_ERR_PEER;
    }
    return FMPL_SUCCESS;
}

int fmpl_tl_idle(fmpl_tl_t *tl, const int *failed_peer, int peer, fmpl_tl_wait_t *w)
{
    if (++w->spins > IDLE_SPIN)
        sched_yield();
    if (w->spins % 256 != 0 || peer < 0)
        return FMPL_SUCCESS;
    return fmpl_tl_wait_check(tl, *failed_peer == peer, peer, &w->t0);
}

int fmpl_tl_wait_pending(fmpl_tl_t *tl, volatile int *pending, const int *failed_peer, int peer)
{
    fmpl_tl_wait_t w = { 0 };
    while (__atomic_load_n(pending, __ATOMIC_ACQUIRE) > 0) {
        if (tl->ops->progress(tl) != 0)
            continue;
        int rc = fmpl_tl_idle(tl, failed_peer, peer, &w);
        if (rc != FMPL_SUCCESS)
            return rc;
    }
    return FMPL_SUCCESS;
}

unsigned fmpl_tl_slot_ext(int size, int nidx)
{
    unsigned ext = FMPL_TL_EXT_MAX;
    while (ext > FMPL_TL_EXT_MIN &&
           (size_t)size * (size_t)nidx * (FMPL_TL_LINE + ext) > FMPL_TL_SLOT_BUDGET)
        ext /= 2;
    return ext;
}
