/*
 * comm.c - communicators: the paper's fmpl_comm_create, fmpl_comm_split,
 * and the table that maps a handle to its members and indices.
 */
#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"
#include "coll/sched.h"

fmpl_coll_state_t fmpl_coll_g;

static fmpl_comm_rec_t *table;     /* [fmpl_coll_g.max_comms] */

static int nwords(int nslots) { return (nslots + 63) / 64; }

int fmpl_comm_setup(void)
{
    fmpl_sched_setup();
    table = calloc((size_t)fmpl_coll_g.max_comms, sizeof *table);
    int n = fmpl_g.boot.size;
    int *ranks = malloc((size_t)n * sizeof *ranks);
    if (!table || !ranks) {
        free(table);
        free(ranks);
        table = NULL;
        return FMPL_ERR_NOMEM;
    }
    for (int r = 0; r < n; r++)
        ranks[r] = r;
    table[FMPL_COMM_WORLD] = (fmpl_comm_rec_t){ .used = 1, .size = n,
                                                .rank = fmpl_g.boot.rank, .ranks = ranks,
                                                .idx = fmpl_g.user_nidx };
    return FMPL_SUCCESS;
}

void fmpl_comm_teardown(void)
{
    fmpl_sched_teardown();
    fmpl_halo_forget();
    if (table)
        for (int i = 0; i < fmpl_coll_g.max_comms; i++) {
            fmpl_sig_eager_free(&table[i]);
            fmpl_hier_free(&table[i]);
            free(table[i].ranks);
        }
    free(table);
    table = NULL;
}

fmpl_comm_rec_t *fmpl_comm_get(fmpl_comm_t comm)
{
    if (!table || comm < 0 || comm >= fmpl_coll_g.max_comms || !table[comm].used)
        return NULL;
    return &table[comm];
}

int fmpl_coll_begin(fmpl_comm_t comm, fmpl_comm_rec_t **c)
{
    if (!fmpl_g.initialized)
        return FMPL_ERR_NOT_INIT;
    *c = fmpl_comm_get(comm);
    return *c ? FMPL_SUCCESS : FMPL_ERR_COMM;
}

int fmpl_halo_index(int h)
{
    return fmpl_g.user_nidx + fmpl_coll_g.max_comms * FMPL_COMM_NIDX + h * FMPL_HALO_NIDX;
}

/* lowest slot clear in the OR of n bitmaps (`stride` words apart), or -1 */
static int lowest_free(const uint64_t *maps, int n, size_t stride, int nslots)
{
    for (int s = 0; s < nslots; s++) {
        uint64_t bit = 1ull << (s % 64);
        int used = 0;
        for (int i = 0; i < n && !used; i++)
            used = (maps[(size_t)i * stride + (size_t)(s / 64)] & bit) != 0;
        if (!used)
            return s;
    }
    return -1;
}

int fmpl_coll_agree_slot(fmpl_comm_rec_t *c, const uint64_t *mine, int nslots, int *slot)
{
    int w = nwords(nslots);
    uint64_t *all = malloc((size_t)c->size * (size_t)w * sizeof *all);
    if (!all)
        return FMPL_ERR_NOMEM;
    memcpy(all + (size_t)c->rank * (size_t)w, mine, (size_t)w * sizeof *all);
    int rc = fmpl_coll_allgather(c, all, (size_t)w * sizeof *all);
    if (rc == FMPL_SUCCESS)
        *slot = lowest_free(all, c->size, (size_t)w, nslots);
    free(all);
    return rc;
}

/* this process's used communicator slots as a bitmap */
static void used_map(uint64_t *map)
{
    memset(map, 0, (size_t)nwords(fmpl_coll_g.max_comms) * sizeof *map);
    for (int s = 0; s < fmpl_coll_g.max_comms; s++)
        if (table[s].used)
            map[s / 64] |= 1ull << (s % 64);
}

/* Fill slot `s` with the members (world ranks, in communicator order). */
static int install(int s, int *ranks, int n)
{
    int me = -1;
    for (int i = 0; i < n; i++)
        if (ranks[i] == fmpl_g.boot.rank)
            me = i;
    table[s] = (fmpl_comm_rec_t){ .used = 1, .size = n, .rank = me, .ranks = ranks,
                                  .idx = fmpl_g.user_nidx + s * FMPL_COMM_NIDX };
    return s;
}

/*
 * Every process of `parent` contributes (color, key, its used slots); all
 * compute the same answer from the same gathered table, so no second
 * round is needed.
 */
static int split(fmpl_comm_rec_t *parent, int color, int key, fmpl_comm_t *out)
{
    int w = nwords(fmpl_coll_g.max_comms), rec = 2 + w, n = parent->size;
    uint64_t *all = calloc((size_t)n * (size_t)rec, sizeof *all);
    int *ranks = malloc((size_t)n * sizeof *ranks);
    int *keys = malloc((size_t)n * sizeof *keys);
    int rc = all && ranks && keys ? FMPL_SUCCESS : FMPL_ERR_NOMEM;
    /* every member must take part even when out of memory: an allgather
     * of a zero record keeps the others from waiting forever */
    if (all) {
        uint64_t *me = all + (size_t)parent->rank * (size_t)rec;
        me[0] = (uint64_t)(int64_t)(color < 0 ? FMPL_UNDEFINED : color);
        me[1] = (uint64_t)(int64_t)key;
        used_map(me + 2);
        int arc = fmpl_coll_allgather(parent, all, (size_t)rec * sizeof *all);
        if (rc == FMPL_SUCCESS)
            rc = arc;
    }
    int slot = -1;
    if (rc == FMPL_SUCCESS) {
        slot = lowest_free(all + 2, n, (size_t)rec, fmpl_coll_g.max_comms);
        if (slot < 0)
            rc = FMPL_ERR_LIMIT;
    }
    *out = FMPL_COMM_NULL;
    if (rc == FMPL_SUCCESS && color >= 0) {
        /* members of our color, ordered by (key, parent rank): insertion
         * sort keeps equal keys in parent order */
        int m = 0;
        for (int i = 0; i < n; i++) {
            const uint64_t *r = all + (size_t)i * (size_t)rec;
            if ((int64_t)r[0] != color)
                continue;
            int k = (int)(int64_t)r[1], j = m++;
            while (j > 0 && keys[j - 1] > k) {
                keys[j] = keys[j - 1];
                ranks[j] = ranks[j - 1];
                j--;
            }
            keys[j] = k;
            ranks[j] = parent->ranks[i];
        }
        *out = install(slot, ranks, m);
        ranks = NULL;
    }
    free(all);
    free(ranks);
    free(keys);
    return rc;
}

int fmpl_comm_create(int key, fmpl_comm_t *comm)
{
    fmpl_comm_rec_t *w;
    int rc = fmpl_coll_begin(FMPL_COMM_WORLD, &w);
    if (rc != FMPL_SUCCESS)
        return rc;
    if (!comm)
        return FMPL_ERR_ARG;
    fmpl_enter();
    /* the paper's call: key != 0 joins, world order */
    rc = split(w, key != 0 ? 0 : FMPL_UNDEFINED, 0, comm);
    fmpl_leave();
    return rc;
}

int fmpl_comm_split(fmpl_comm_t comm, int color, int key, fmpl_comm_t *newcomm)
{
    fmpl_comm_rec_t *c;
    int rc = fmpl_coll_begin(comm, &c);
    if (rc != FMPL_SUCCESS)
        return rc;
    if (!newcomm)
        return FMPL_ERR_ARG;
    fmpl_enter();
    rc = split(c, color, key, newcomm);
    fmpl_leave();
    return rc;
}

int fmpl_comm_rank(fmpl_comm_t comm, int *rank)
{
    fmpl_comm_rec_t *c;
    int rc = fmpl_coll_begin(comm, &c);
    if (rc == FMPL_SUCCESS && !rank)
        rc = FMPL_ERR_ARG;
    if (rc == FMPL_SUCCESS)
        *rank = c->rank;
    return rc;
}

int fmpl_comm_size(fmpl_comm_t comm, int *size)
{
    fmpl_comm_rec_t *c;
    int rc = fmpl_coll_begin(comm, &c);
    if (rc == FMPL_SUCCESS && !size)
        rc = FMPL_ERR_ARG;
    if (rc == FMPL_SUCCESS)
        *size = c->size;
    return rc;
}

int fmpl_comm_world_rank(fmpl_comm_t comm, int rank, int *world_rank)
{
    fmpl_comm_rec_t *c;
    int rc = fmpl_coll_begin(comm, &c);
    if (rc != FMPL_SUCCESS)
        return rc;
    if (!world_rank)
        return FMPL_ERR_ARG;
    if (rank < 0 || rank >= c->size)
        return FMPL_ERR_RANK;
    *world_rank = c->ranks[rank];
    return FMPL_SUCCESS;
}

/* Local: the slot's indices keep their sequence numbers, so whoever reuses
 * the slot next continues them (see coll.h). */
int fmpl_comm_free(fmpl_comm_t *comm)
{
    if (!fmpl_g.initialized)
        return FMPL_ERR_NOT_INIT;
    if (!comm)
        return FMPL_ERR_ARG;
    fmpl_comm_rec_t *c = fmpl_comm_get(*comm);
    if (!c || *comm == FMPL_COMM_WORLD)
        return FMPL_ERR_COMM;
    if (fmpl_sched_busy(c))
        return FMPL_ERR_BUSY;      /* nonblocking collectives under way */
    fmpl_enter();
    fmpl_sig_eager_free(c);
    fmpl_hier_free(c);
    free(c->ranks);
    memset(c, 0, sizeof *c);
    *comm = FMPL_COMM_NULL;
    fmpl_leave();
    return FMPL_SUCCESS;
}
