/*
 * halo_plan.c - the geometry of a halo exchange: which box of the array a
 * face is, how it reduces to runs and strides, how it travels, and whether
 * the members' descriptions fit together.
 *
 * The classification is the hybrid paper's (reflect_init): for a C-order
 * 3-D array [i][j][k] split in i and j, an i face is one BLOCK (contiguous),
 * a j face is BLOCK-STRIDE (N_i runs of a whole k-line or more), a k face
 * is STRIDE (runs of a few elements).  Block and block-stride faces are
 * written straight from the array into the neighbour's shadow; stride
 * faces are packed, because a write per element costs more than the copy.
 */
#include <string.h>

#include "coll/halo.h"

static void dims(const fmpl_halo_geom_t *g, size_t N[], size_t st[])
{
    int nd = g->ndims;
    for (int e = 0; e < nd; e++)
        N[e] = (size_t)g->ext[e] + 2 * (size_t)g->shadow[e];
    st[nd - 1] = (size_t)g->esize;
    for (int e = nd - 2; e >= 0; e--)
        st[e] = st[e + 1] * N[e + 1];
}

/*
 * Shape of face (d, side): its shadow region (slab = 0), or the interior
 * slab a neighbour sends into it (slab = 1, in the SENDER's geometry g).
 * With corners (the default) dimensions go in order, and the box spans the
 * dimensions before d whole (their shadows are filled by then: that is how
 * edges and corners travel) and only the interior of those after d.  So
 * every shadow element is written exactly once, by the last dimension it
 * is a shadow of, and all READY signals can go out at once.  With
 * FMPL_HALO_FACES the box spans only the interior of the other dimensions.
 */
void fmpl_halo_face_shape(const fmpl_halo_geom_t *g, int d, int side, int slab,
                          fmpl_shape_t *sh)
{
    int nd = g->ndims;
    size_t N[FMPL_HALO_MAXD], st[FMPL_HALO_MAXD], start[FMPL_HALO_MAXD] = { 0 },
           cnt[FMPL_HALO_MAXD] = { 0 };
    dims(g, N, st);
    for (int e = 0; e < nd; e++) {
        size_t w = (size_t)g->shadow[e], x = (size_t)g->ext[e];
        if (e == d) {
            cnt[e] = w;
            /* side 0 is filled from the lower neighbour's LAST slab */
            start[e] = slab ? (side == 0 ? x : w) : (side == 0 ? 0 : w + x);
        } else if ((g->flags & FMPL_HALO_FACES) || e > d) {
            cnt[e] = x;
            start[e] = w;
        } else {
            cnt[e] = N[e];
            start[e] = 0;
        }
    }
    memset(sh, 0, sizeof *sh);
    for (int e = 0; e < nd; e++)
        sh->base += start[e] * st[e];
    /* the innermost dimensions that are contiguous make one run; each
     * other dimension either extends the current level or opens one */
    sh->blk = st[nd - 1] * cnt[nd - 1];
    size_t lc[FMPL_HALO_MAXD], ls[FMPL_HALO_MAXD];
    int nl = 0;
    for (int e = nd - 2; e >= 0; e--) {
        if (cnt[e] == 1)
            continue;
        if (nl == 0 && st[e] == sh->blk) {
            sh->blk *= cnt[e];
        } else if (nl > 0 && st[e] == lc[nl - 1] * ls[nl - 1]) {
            lc[nl - 1] *= cnt[e];
        } else {
            lc[nl] = cnt[e];
            ls[nl++] = st[e];
        }
    }
    if (g->shadow[d] == 0)
        sh->blk = 0;
    sh->nlev = nl;
    for (int l = 0; l < nl; l++) {           /* outer level first */
        sh->cnt[l] = lc[nl - 1 - l];
        sh->stride[l] = ls[nl - 1 - l];
    }
}

size_t fmpl_shape_bytes(const fmpl_shape_t *sh)
{
    size_t n = sh->blk;
    for (int l = 0; l < sh->nlev; l++)
        n *= sh->cnt[l];
    return n;
}

int fmpl_halo_shape_kind(const fmpl_shape_t *sh, unsigned caps)
{
    if (sh->blk == 0)
        return FMPL_HALO_NONE;
    if (sh->nlev == 0)
        return FMPL_HALO_BLOCK;
    if (sh->blk >= FMPL_HALO_BLOCK_MIN && (caps & FMPL_TL_CAP_STRIDED))
        return FMPL_HALO_BLOCK_STRIDE;
    return FMPL_HALO_STRIDE;
}

/* copy between a shape in `array` and a contiguous buffer */
static void walk(uint8_t *array, uint8_t *buf, const fmpl_shape_t *sh, int pack)
{
    size_t c0 = sh->nlev > 0 ? sh->cnt[0] : 1, s0 = sh->nlev > 0 ? sh->stride[0] : 0;
    size_t c1 = sh->nlev > 1 ? sh->cnt[1] : 1, s1 = sh->nlev > 1 ? sh->stride[1] : 0;
    for (size_t a = 0; a < c0; a++)
        for (size_t b = 0; b < c1; b++) {
            uint8_t *p = array + sh->base + a * s0 + b * s1;
            if (pack)
                memcpy(buf, p, sh->blk);
            else
                memcpy(p, buf, sh->blk);
            buf += sh->blk;
        }
}

void fmpl_shape_pack(uint8_t *out, const uint8_t *array, const fmpl_shape_t *sh)
{
    walk((uint8_t *)array, out, sh, 1);
}

void fmpl_shape_unpack(uint8_t *array, const uint8_t *in, const fmpl_shape_t *sh)
{
    walk(array, (uint8_t *)in, sh, 0);
}

/*
 * Do the members' descriptions fit?  Every neighbour must name us back,
 * and two neighbours along d must agree on everything but their extent
 * along d.  All members check the same gathered table, so all agree on
 * the answer.  *bad gets a rank whose description is wrong.
 */
int fmpl_halo_check(const fmpl_halo_geom_t *all, int n, int *bad)
{
    for (int q = 0; q < n; q++) {
        const fmpl_halo_geom_t *g = &all[q];
        *bad = q;
        if (g->ndims != all[0].ndims || g->esize != all[0].esize || g->flags != all[0].flags)
            return FMPL_ERR_ARG;
        for (int d = 0; d < g->ndims; d++) {
            if (g->shadow[d] > g->ext[d])
                return FMPL_ERR_ARG;
            for (int s = 0; s < 2; s++) {
                int r = g->nbr[2 * d + s];
                if (r < 0)
                    continue;
                if (r >= n || all[r].nbr[2 * d + 1 - s] != q ||
                    all[r].shadow[d] != g->shadow[d])
                    return FMPL_ERR_ARG;
                for (int e = 0; e < g->ndims; e++)
                    if (e != d && (all[r].ext[e] != g->ext[e] ||
                                   all[r].shadow[e] != g->shadow[e]))
                        return FMPL_ERR_ARG;
            }
        }
    }
    *bad = -1;
    return FMPL_SUCCESS;
}
