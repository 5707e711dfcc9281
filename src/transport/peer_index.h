/*
 * peer_index.h - which peer a 32-bit number belongs to, for completions
 * that name only that number: a verbs completion names its queue pair.
 * dcfa's ranks keep one for their RC queue pairs, its host agent one for
 * the queue pairs of a rank's offloaded collectives.  Open addressing
 * grown at half full: a probe or two, not a search over the job.
 */
#ifndef FMPL_PEER_INDEX_H
#define FMPL_PEER_INDEX_H

#include <stdint.h>

typedef struct fmpl_peer_slot {
    uint32_t key;
    int peer;                      /* -1: empty */
} fmpl_peer_slot_t;

typedef struct fmpl_peer_index {
    fmpl_peer_slot_t *slot;        /* [mask + 1], NULL until the first add */
    uint32_t mask;
    int n;
} fmpl_peer_index_t;

/* 0, or -1 out of memory (the index is as it was).  A key is added once. */
int  fmpl_peer_index_add(fmpl_peer_index_t *x, uint32_t key, int peer);
/* the peer of key, or -1 */
int  fmpl_peer_index_find(const fmpl_peer_index_t *x, uint32_t key);
void fmpl_peer_index_free(fmpl_peer_index_t *x);

#endif
