/*
 * tcw_xbar.c - the SR8000's multi-dimensional crossbar (Tatebe et al.
 * 2002, 3):
 * up to 8 nodes on one x-crossbar, x-crossbars joined by y-crossbars, each
 * crossbar complete; the larger configurations join planes of those by a
 * third, z-crossbar ("the crossbar's dimension rises with the node
 * count", section 5).  Node k of an X x Y x Z partition sits at
 * (k mod X, k div X mod Y, k div XY); ranks fill nodes in order,
 * FMPL_TCW_PPN to a node.
 *
 * Links.  Each node has one link into and one out of each of its
 * crossbars, and the NIA's loopback to its own memory; one more link is
 * the serialising crossbar's input (hardware broadcasts).  A packet
 * crosses its x-crossbar to the destination's x, then that node's
 * y-crossbar, then the z one (dimension order), so contention happens
 * where it did on the machine: at a crossbar's output (many senders, one
 * receiver) and on a node's way out.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmpl.h"
#include "base/env.h"
#include "base/log.h"
#include "base/parse.h"
#include "transport/tcw/tcw.h"

#define XBAR_MAX_X 8               /* nodes on one x-crossbar */
#define XBAR_MAX_Y 64
#define XBAR_MAX_Z 64
#define XBAR_MAX_NODES 4096
#define XBAR_MAX_PPN 8             /* an SR8000 node has 8 CPUs */

/* "XxY" or "XxYxZ", each number whole and in range */
static int parse_shape(const char *s, int *X, int *Y, int *Z)
{
    char buf[64];
    long v[3] = { 1, 1, 1 }, max[3] = { XBAR_MAX_X, XBAR_MAX_Y, XBAR_MAX_Z };
    int k = 0;
    if (strlen(s) >= sizeof buf)
        return -1;
    snprintf(buf, sizeof buf, "%s", s);
    /* strtok would skip empty fields ("3x" or "2xx8"): split by hand */
    for (char *p = buf, *sep;; p = sep + 1) {
        sep = strpbrk(p, "xX");
        if (sep)
            *sep = '\0';
        if (k == 3 || fmpl_parse_long(p, 1, max[k], &v[k]) != 0)
            return -1;
        k++;
        if (!sep)
            break;
    }
    if (k < 2 || v[0] * v[1] * v[2] > XBAR_MAX_NODES)
        return -1;
    *X = (int)v[0];
    *Y = (int)v[1];
    *Z = (int)v[2];
    return 0;
}

/* FMPL_TCW_PARTITION: its attributes, "exclusive,global" by default;
 * "shared" says it overlaps a shared partition (section 3.2, (2)-(3)). */
static int parse_partition(tcw_xbar_t *x, const char *s)
{
    x->exclusive = x->global = x->shared_overlap = 0;
    char buf[128];
    if (strlen(s) >= sizeof buf)   /* a cut list could read as another */
        return -1;
    snprintf(buf, sizeof buf, "%s", s);
    for (char *save = NULL, *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
        if (strcmp(w, "exclusive") == 0)
            x->exclusive = 1;
        else if (strcmp(w, "global") == 0)
            x->global = 1;
        else if (strcmp(w, "shared") == 0)
            x->shared_overlap = 1;
        else
            return -1;
    }
    return 0;
}

int fmpl_tcw_xbar_init(tcw_xbar_t *x, int size)
{
    memset(x, 0, sizeof *x);
    x->X = 2;
    x->Y = 8;
    x->Z = 1;
    const char *e = getenv("FMPL_TCW_SHAPE");
    if (e && *e && parse_shape(e, &x->X, &x->Y, &x->Z) != 0) {
        fmpl_log_err("FMPL_TCW_SHAPE=%s: not a partition XxY or XxYxZ with 1 <= X <= %d nodes "
                     "on an x-crossbar, 1 <= Y <= %d, 1 <= Z <= %d and at most %d nodes", e,
                     XBAR_MAX_X, XBAR_MAX_Y, XBAR_MAX_Z, XBAR_MAX_NODES);
        return FMPL_ERR_ARG;
    }
    char what[64];
    long ppn;
    snprintf(what, sizeof what, "ranks per node must be 1 to %d", XBAR_MAX_PPN);
    int rc = fmpl_env_long("FMPL_TCW_PPN", 1, 1, XBAR_MAX_PPN, what, &ppn);
    if (rc != FMPL_SUCCESS)
        return rc;
    x->ppn = (int)ppn;
    e = getenv("FMPL_TCW_PARTITION");
    if (parse_partition(x, e && *e ? e : "exclusive,global") != 0) {
        fmpl_log_err("FMPL_TCW_PARTITION=%s: a comma list of exclusive, global, shared", e);
        return FMPL_ERR_ARG;
    }
    x->nodes = (size + x->ppn - 1) / x->ppn;
    int all = x->X * x->Y * x->Z, plane = x->X * x->Y;
    if (x->nodes > all) {
        fmpl_log_err("tcw: %d ranks need %d nodes at %d per node, but the %s partition has "
                     "%d (set FMPL_TCW_SHAPE or FMPL_TCW_PPN)", size, x->nodes, x->ppn,
                     fmpl_tcw_shape(x), all);
        return FMPL_ERR_ARG;
    }
    /* a line, whole lines of a plane, or whole planes */
    x->rect = x->nodes <= x->X || (x->nodes % x->X == 0 &&
                                   (x->nodes <= plane || x->nodes % plane == 0));
    x->nlinks = TCW_LINKS_PER_NODE * all + 1;
    x->ser_link = x->nlinks - 1;
    return FMPL_SUCCESS;
}

static int link_of(const tcw_xbar_t *x, int node, int kind)
{
    (void)x;
    return node * TCW_LINKS_PER_NODE + kind;
}

const char *fmpl_tcw_shape(const tcw_xbar_t *x)
{
    static char buf[48];
    if (x->Z > 1)
        snprintf(buf, sizeof buf, "%dx%dx%d", x->X, x->Y, x->Z);
    else
        snprintf(buf, sizeof buf, "%dx%d", x->X, x->Y);
    return buf;
}

void fmpl_tcw_route(const tcw_xbar_t *x, const tcw_model_t *m, int src, int dst,
                    fmpl_emu_path_t *p)
{
    int ns = fmpl_tcw_node(x, src), nd = fmpl_tcw_node(x, dst);
    int plane = x->X * x->Y;
    int c[3] = { ns % x->X, ns / x->X % x->Y, ns / plane };
    const int d[3] = { nd % x->X, nd / x->X % x->Y, nd / plane };
    static const int out[3] = { TCW_XOUT, TCW_YOUT, TCW_ZOUT }, in[3] = { TCW_XIN, TCW_YIN,
                                                                          TCW_ZIN };
    fmpl_emu_time_t xbar = fmpl_tcw_ps(m->xbar_ns);
    memset(p, 0, sizeof *p);
    p->comp_link = -1;             /* complete when the write is visible */
    p->start = fmpl_tcw_ps(m->nia_send_ns);
    p->to_mem = fmpl_tcw_ps(m->nia_recv_ns);
    int crossings = 0, at = ns;
    if (ns == nd)
        p->link[p->n++] = link_of(x, ns, TCW_LOOP);
    for (int k = 0; k < 3; k++) {  /* dimension order: x, then y, then z */
        if (c[k] == d[k])
            continue;
        c[k] = d[k];
        int next = c[2] * plane + c[1] * x->X + c[0];
        p->link[p->n++] = link_of(x, at, out[k]);
        p->lat[p->n] = xbar;
        p->link[p->n++] = link_of(x, next, in[k]);
        at = next;
        crossings++;
    }
    p->ack = fmpl_tcw_ps(m->ack_ns) + crossings * xbar;
}

void fmpl_tcw_link_ps(const tcw_xbar_t *x, const tcw_model_t *m, fmpl_emu_time_t *ps)
{
    fmpl_emu_time_t per_byte = (fmpl_emu_time_t)(1e6 / m->link_mbps + 0.5);
    for (int l = 0; l < x->nlinks; l++)
        ps[l] = per_byte;
}

const char *fmpl_tcw_hw_refusal(const tcw_xbar_t *x)
{
    static char why[200];
    if (x->ppn > 1)
        snprintf(why, sizeof why, "condition (1) of section 3.2 fails: ranks share a node "
                                  "(FMPL_TCW_PPN=%d)", x->ppn);
    else if (!x->exclusive || !x->global)
        snprintf(why, sizeof why, "condition (2) of section 3.2 fails: the partition is not "
                                  "exclusive and global (FMPL_TCW_PARTITION)");
    else if (x->shared_overlap)
        snprintf(why, sizeof why, "condition (3) of section 3.2 fails: the partition overlaps "
                                  "a shared one (FMPL_TCW_PARTITION)");
    else if (!x->rect)
        snprintf(why, sizeof why, "condition (4) of section 3.2 fails: %d nodes do not fill a "
                                  "%s of the %s partition", x->nodes,
                 x->Z > 1 ? "box (whole lines of a plane, or whole planes)" : "rectangle",
                 fmpl_tcw_shape(x));
    else
        return NULL;
    return why;
}
