/*
 * hosts.c - where the job's ranks run (hosts.h): every rank publishes its
 * host name, its machine (the running kernel's boot id) and the CPUs it
 * may use through the bootstrap, and reads everybody's.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fmpl.h"
#include "base/boot.h"
#include "base/hosts.h"
#include "base/log.h"

#define HOST_MAX 256

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

/* Is any rank crowded (as fmpl_hosts_learn judges its own case below),
 * counting `extra` more processes on each machine, from every rank's CPUs
 * and machine number: the same answer on every rank (-1: out of memory).
 * Ranks sorted by machine, so that only ranks of one machine meet. */
static const int *sort_mach;
static int by_machine(const void *a, const void *b)
{
    int x = sort_mach[*(const int *)a], y = sort_mach[*(const int *)b];
    return x < y ? -1 : x > y;
}
static int any_crowded(int size, const cpu_set_t *cpus, const int *mach, int extra)
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
            crowded = in + extra > CPU_COUNT(q);
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
int fmpl_hosts_learn(fmpl_hosts_t *lay, fmpl_boot_t *b)
{
    char machine[64], (*names)[HOST_MAX] = NULL;
    host_card_t mine = { 0 };
    int *host = calloc((size_t)b->size, sizeof *host);
    if (!host)
        return FMPL_ERR_NOMEM;
    lay->host = host;
    my_cpus(&mine.cpus);
    lay->nhosts = 1;
    lay->machine_ranks = 1;
    lay->crowded = 0;
    lay->crowded_any = 0;
    lay->spare_all = 0;
    if (b->size == 1)
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
    names = calloc((size_t)b->size, sizeof *names);
    cpu_set_t *cpus = calloc((size_t)b->size, sizeof *cpus);
    int *mach = calloc((size_t)b->size, sizeof *mach);
    char (*machines)[64] = calloc((size_t)b->size, sizeof *machines);
    if (!names || !cpus || !mach || !machines) {
        free(names);
        free(cpus);
        free(mach);
        free(machines);
        return FMPL_ERR_NOMEM;
    }
    int n = 0, inside = 0, nmach = 0;
    lay->machine_ranks = 0;
    for (int r = 0; r < b->size && rc == FMPL_SUCCESS; r++) {
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
            lay->machine_ranks++;
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
    lay->nhosts = n;
    lay->crowded = inside > CPU_COUNT(&mine.cpus);
    if (lay->crowded)
        fmpl_log_info("%d ranks of this machine share the %d CPUs rank %d may use: "
                      "waits give the core away early", inside, CPU_COUNT(&mine.cpus),
                      b->rank);
    if (rc == FMPL_SUCCESS) {
        int any = any_crowded(b->size, cpus, mach, 0);
        int full = any ? any : any_crowded(b->size, cpus, mach, 1);
        if (any < 0 || full < 0)
            rc = FMPL_ERR_NOMEM;
        else {
            lay->crowded_any = any;
            lay->spare_all = !full;
        }
    }
    if (lay->crowded_any && !lay->crowded)
        fmpl_log_info("rank %d has its CPUs, other ranks share theirs: collectives "
                      "choose as where ranks share cores", b->rank);
    free(names);
    free(cpus);
    free(mach);
    free(machines);
    return rc;
}

void fmpl_hosts_free(fmpl_hosts_t *lay)
{
    free((int *)lay->host);
    lay->host = NULL;
}
