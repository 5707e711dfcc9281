/*
 * p2_ring.c - a sub-cluster's PEACH2 boards, their cables, their routing
 * registers, and the routes that follow (Hanawa et al. 2013, 3.2-3.3;
 * Odajima et al. 2015, 2, Fig. 2: 16 nodes as two rings of 8).
 *
 * Cabling.  S nodes make two rings of R = ceil(S/2): ring 0 holds nodes
 * 0 .. R-1, ring 1 the rest, node k at position k mod R.  Port E of a
 * board reaches the next position of its ring, W the previous one, S the
 * same position of the other ring (when it has one: an odd S leaves ring
 * 1 a node short).
 *
 * Routing registers.  Node n owns the window slice [slice(n), slice(n+1)):
 * the address's bits above FMPL_PEACH2_SLICE_BITS name it.  Each board has,
 * for its host port and for each of E, W and S, up to P2_RANGES (base,
 * limit) pairs compared with the address under a mask, as PEACH2's port
 * registers are; they are programmed at open from one rule: towards a
 * node of the other ring cross by S first (where there is an S cable,
 * else go along the ring to the position that has one), then along the
 * ring the shorter way (E on a tie).  No route passes a board twice, so
 * 8 nodes are at most 3 hops apart and 16 at most 5.
 *
 * Routes are found the way the hardware finds them: by walking the
 * boards' registers from the source (fmpl_peach2_walk), once per destination
 * at open.
 */
#include <stdio.h>
#include <string.h>

#include "fmpl.h"
#include "base/log.h"
#include "transport/peach2/p2.h"

#define SLICE_MASK (~((1ull << FMPL_PEACH2_SLICE_BITS) - 1))

static int ring_len(const p2_ring_t *r, int ring) { return ring == 0 ? r->R : r->S - r->R; }
static int node_at(const p2_ring_t *r, int ring, int pos) { return ring * r->R + pos; }

/* The port board b sends a write for node d out of (P2_DOWN: into its
 * own memory), by the rule above. */
static int rule(const p2_ring_t *r, int b, int d)
{
    if (b == d)
        return P2_DOWN;
    int rb = fmpl_peach2_ring_of(r, b), pb = fmpl_peach2_pos_of(r, b);
    int rd = fmpl_peach2_ring_of(r, d), pd = fmpl_peach2_pos_of(r, d);
    int other = 1 - rb;
    int target = pd;               /* the position to reach on our ring */
    if (rd != rb) {
        if (pb < ring_len(r, other))
            return P2_S;
        /* no S cable here: first along our ring to one that has */
    }
    int n = ring_len(r, rb);
    int fwd = ((target - pb) % n + n) % n;
    return fwd <= n / 2 ? P2_E : P2_W;
}

static int add_range(p2_board_t *bd, int port, uint64_t base, uint64_t limit)
{
    int k = bd->nrange[port];
    /* limits are masked addresses: the next slice's follows at + slice */
    if (k > 0 && bd->port[port][k - 1].limit + (1ull << FMPL_PEACH2_SLICE_BITS) == base) {
        bd->port[port][k - 1].limit = limit;           /* extends the last one */
        return 0;
    }
    if (k == P2_RANGES)
        return -1;
    bd->port[port][k] = (p2_range_t){ base, limit };
    bd->nrange[port] = k + 1;
    return 0;
}

int fmpl_peach2_ring_init(p2_ring_t *r, int nodes)
{
    memset(r, 0, sizeof *r);
    if (nodes < 1 || nodes > FMPL_PEACH2_MAX_NODES)
        return FMPL_ERR_ARG;
    r->S = nodes;
    r->R = (nodes + 1) / 2;
    r->nlinks = P2_LINKS_PER_NODE * nodes;
    for (int b = 0; b < nodes; b++) {
        p2_board_t *bd = &r->board[b];
        int rb = fmpl_peach2_ring_of(r, b), pb = fmpl_peach2_pos_of(r, b), n = ring_len(r, rb);
        for (int p = 0; p < P2_LINKS_PER_NODE; p++)
            bd->peer[p] = -1;
        if (n > 1) {
            bd->peer[P2_E] = node_at(r, rb, (pb + 1) % n);
            bd->peer[P2_W] = node_at(r, rb, (pb + n - 1) % n);
        }
        if (pb < ring_len(r, 1 - rb))
            bd->peer[P2_S] = node_at(r, 1 - rb, pb);
        bd->mask = SLICE_MASK;
        bd->host = (p2_range_t){ fmpl_peach2_slice(b), fmpl_peach2_slice(b) };
        for (int d = 0; d < nodes; d++) {
            int port = rule(r, b, d);
            if (port == P2_DOWN)
                continue;
            if (bd->peer[port] < 0 ||
                add_range(bd, port, fmpl_peach2_slice(d), fmpl_peach2_slice(d))) {
                fmpl_log_err("peach2: cannot program board %d's registers for node %d", b, d);
                return FMPL_ERR_INTERNAL;
            }
        }
    }
    return FMPL_SUCCESS;
}

int fmpl_peach2_node_of(const p2_ring_t *r, uint64_t addr)
{
    if (addr < FMPL_PEACH2_WIN_BASE)
        return -1;
    uint64_t n = (addr - FMPL_PEACH2_WIN_BASE) >> FMPL_PEACH2_SLICE_BITS;
    return n < (uint64_t)r->S ? (int)n : -1;
}

/* The port whose registers claim `addr` on board bd (P2_DOWN: the host
 * range), or -1. */
static int match(const p2_board_t *bd, uint64_t addr)
{
    uint64_t a = addr & bd->mask;
    if (a >= bd->host.base && a <= bd->host.limit)
        return P2_DOWN;
    for (int p = P2_E; p < P2_LINKS_PER_NODE; p++)
        for (int k = 0; k < bd->nrange[p]; k++)
            if (a >= bd->port[p][k].base && a <= bd->port[p][k].limit)
                return p;
    return -1;
}

static int link_of(int node, int port) { return node * P2_LINKS_PER_NODE + port; }

int fmpl_peach2_walk(const p2_ring_t *r, int src, uint64_t addr, fmpl_emu_path_t *p, int *hops)
{
    int b = src, h = 0;
    if (p) {
        memset(p, 0, sizeof *p);
        p->comp_link = -1;
        p->link[p->n++] = link_of(src, P2_UP);   /* the host's request into its board */
    }
    for (int guard = 0; guard <= r->S; guard++) {
        int port = match(&r->board[b], addr);
        if (port < 0) {
            fmpl_log_err("peach2: no port of board %d claims PCIe address 0x%llx (outside "
                         "the %d nodes' window)", b, (unsigned long long)addr, r->S);
            return -1;
        }
        if (p) {
            if (p->n == FMPL_EMU_PATH_MAX) {
                fmpl_log_err("peach2: route from node %d longer than %d links", src,
                             FMPL_EMU_PATH_MAX);
                return -1;
            }
            p->link[p->n++] = link_of(b, port);
        }
        if (port == P2_DOWN) {
            if (hops)
                *hops = h;
            return b;
        }
        b = r->board[b].peer[port];
        h++;
    }
    fmpl_log_err("peach2: the routing registers loop (node %d, address 0x%llx)", src,
                 (unsigned long long)addr);
    return -1;
}

int fmpl_peach2_routes(const p2_ring_t *r, const p2_model_t *m, int src, fmpl_emu_path_t *paths,
                       int *hops)
{
    fmpl_emu_time_t board = fmpl_emu_ps(m->board_ns), hop = fmpl_emu_ps(m->hop_ns);
    for (int d = 0; d < r->S; d++) {
        fmpl_emu_path_t *p = &paths[d];
        int got = fmpl_peach2_walk(r, src, fmpl_peach2_slice(d), p, &hops[d]);
        if (got != d) {
            if (got >= 0)
                fmpl_log_err("peach2: node %d's writes for node %d reach node %d", src, d, got);
            return FMPL_ERR_INTERNAL;
        }
        /* the head: through our board, then a cable and a board a hop */
        p->lat[0] = 0;
        for (int k = 1; k < p->n; k++)
            p->lat[k] = k == 1 ? board : hop;
    }
    return FMPL_SUCCESS;
}

void fmpl_peach2_link_ps(const p2_ring_t *r, const p2_model_t *m, fmpl_emu_time_t *ps)
{
    for (int l = 0; l < r->nlinks; l++)
        ps[l] = (fmpl_emu_time_t)(1e6 / m->link_mbps + 0.5);
}
