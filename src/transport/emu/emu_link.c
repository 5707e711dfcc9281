/*
 * emu_link.c - when a link can carry a packet: each link's calendar of
 * the times it is already reserved.
 *
 * The engine reserves all the links of a packet's route when the packet
 * leaves its channel, in the order packets leave, not in the order they
 * reach a link further on.  With one "busy until" time a link, a packet
 * that reaches a link early would queue behind one reserved before it but
 * arriving later, and the gap before that one was lost: flows that share
 * a link a hop or two from their sources (recursive doubling on a PEACH2
 * ring: every node 2 hops the same way) then ran several times slower
 * than the shared bandwidth allows.  So a link keeps its reserved
 * intervals (EMU_LINK_CAL of them, sorted; a flow's packets merge into
 * one), and a packet takes the first gap at or after its arrival that
 * holds it.  Intervals that end before the engine's current event can
 * matter to nobody (every later packet leaves its channel after it) and
 * are dropped; when the calendar is full, the two intervals with the
 * smallest gap between them merge (that gap is lost, as before).
 */
#include <string.h>

#include "transport/emu/emu_int.h"

static void drop(emu_link_t *L, int i)
{
    memmove(&L->iv[i], &L->iv[i + 1], (size_t)(L->n - i - 1) * sizeof L->iv[0]);
    L->n--;
}

fmpl_emu_time_t fmpl_emu_link_reserve(emu_link_t *L, fmpl_emu_time_t now, fmpl_emu_time_t a,
                                      fmpl_emu_time_t d)
{
    int k = 0;
    while (k < L->n && L->iv[k].end <= now)
        k++;
    if (k) {
        memmove(&L->iv[0], &L->iv[k], (size_t)(L->n - k) * sizeof L->iv[0]);
        L->n -= k;
    }
    /* the first gap at or after a that holds d */
    fmpl_emu_time_t s = a;
    int pos = 0;
    while (pos < L->n) {
        if (L->iv[pos].end <= s) {
            pos++;
            continue;
        }
        if (s + d <= L->iv[pos].start)
            break;
        s = L->iv[pos].end;
        pos++;
    }
    fmpl_emu_time_t e = s + d;
    /* [s, e) goes before iv[pos]: join a neighbour it touches */
    int before = pos > 0 && L->iv[pos - 1].end == s;
    int after = pos < L->n && L->iv[pos].start == e;
    if (before && after) {
        L->iv[pos - 1].end = L->iv[pos].end;
        drop(L, pos);
    } else if (before) {
        L->iv[pos - 1].end = e;
    } else if (after) {
        L->iv[pos].start = s;
    } else {
        if (L->n == EMU_LINK_CAL) {
            /* full: close the smallest gap */
            int g = 0;
            for (int i = 1; i < L->n - 1; i++)
                if (L->iv[i + 1].start - L->iv[i].end < L->iv[g + 1].start - L->iv[g].end)
                    g = i;
            L->iv[g].end = L->iv[g + 1].end;
            drop(L, g + 1);
            if (pos > g + 1)
                pos--;
            /* the merged interval may now cover the place found */
            if (pos > 0 && L->iv[pos - 1].end > s)
                return fmpl_emu_link_reserve(L, now, a, d);
        }
        memmove(&L->iv[pos + 1], &L->iv[pos], (size_t)(L->n - pos) * sizeof L->iv[0]);
        L->iv[pos].start = s;
        L->iv[pos].end = e;
        L->n++;
    }
    return s;
}
