/*
 * hosts.h - the job's host layout: which ranks share a host (the same
 * FMPL_HOSTNAME, else host name), which share this machine (one running
 * kernel, which several hosts - network namespaces, FMPL_HOSTNAME - may
 * share: what competes for our cores), and whether ranks crowd the CPUs
 * they may run on.  Learned once per job through the bootstrap by
 * fmpl_init, which owns it; the transports read it (tl->hosts: routing,
 * shm's paths), and so do the waits and the collectives.
 */
#ifndef FMPL_HOSTS_H
#define FMPL_HOSTS_H

struct fmpl_boot;

typedef struct fmpl_hosts {
    /* host[r] numbers rank r's host: 0 .. nhosts-1, in order of first
     * appearance */
    const int *host;
    int nhosts;
    /* ranks on this machine */
    int machine_ranks;
    /* ranks of this machine confined to the CPUs we may use outnumber
     * them: waits must give the core away (p2p/progress.c) */
    int crowded;
    /* ... some rank's are, the same on every rank: what choices every
     * rank must make alike (a collective's algorithm) ask */
    int crowded_any;
    /* every machine has a CPU its ranks leave free (for a helper process
     * such as dcfa's host agent), the same on every rank */
    int spare_all;
} fmpl_hosts_t;

/* Collective over the job (a bootstrap put and fence): fills *lay
 * (host[] allocated even on failure: fmpl_hosts_free frees it).  An FMPL
 * code. */
int  fmpl_hosts_learn(fmpl_hosts_t *lay, struct fmpl_boot *b);
void fmpl_hosts_free(fmpl_hosts_t *lay);

#endif
