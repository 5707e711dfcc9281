/*
 * peer_index.c - a number -> peer index (peer_index.h).
 */
#include <stdlib.h>

#include "transport/peer_index.h"

static void put(fmpl_peer_slot_t *t, uint32_t mask, uint32_t key, int peer)
{
    uint32_t h = key * 2654435761u;
    while (t[h & mask].peer >= 0)
        h++;
    t[h & mask] = (fmpl_peer_slot_t){ key, peer };
}

int fmpl_peer_index_add(fmpl_peer_index_t *x, uint32_t key, int peer)
{
    if (!x->slot || 2 * (uint32_t)(x->n + 1) > x->mask + 1) {
        uint32_t n = x->slot ? 2 * (x->mask + 1) : 64;
        fmpl_peer_slot_t *t = malloc(n * sizeof *t);
        if (!t)
            return -1;
        for (uint32_t i = 0; i < n; i++)
            t[i].peer = -1;
        for (uint32_t i = 0; x->slot && i <= x->mask; i++)
            if (x->slot[i].peer >= 0)
                put(t, n - 1, x->slot[i].key, x->slot[i].peer);
        free(x->slot);
        x->slot = t;
        x->mask = n - 1;
    }
    put(x->slot, x->mask, key, peer);
    x->n++;
    return 0;
}

int fmpl_peer_index_find(const fmpl_peer_index_t *x, uint32_t key)
{
    if (!x->slot)
        return -1;
    for (uint32_t h = key * 2654435761u;; h++) {
        const fmpl_peer_slot_t *s = &x->slot[h & x->mask];
        if (s->peer < 0 || s->key == key)
            return s->peer;
    }
}

void fmpl_peer_index_free(fmpl_peer_index_t *x)
{
    free(x->slot);
    *x = (fmpl_peer_index_t){ 0 };
}
