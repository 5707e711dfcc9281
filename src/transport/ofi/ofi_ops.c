/*
 * ofi_ops.c - lifecycle, progress, errors and the ops table of the
 * libfabric transport (see ofi.h).
 *
 * Provider choice: FI_PROVIDER, when set, is libfabric's own filter;
 * otherwise the first RDM provider with RMA in the order a cluster user
 * expects (verbs, efa, cxi, net, tcp, shm), never the emulations (sockets,
 * udp) unless nothing else is there.  net is libfabric 1.17's rewrite of
 * the tcp provider with RDM endpoints of its own (1.18 renamed it tcp and
 * dropped the old one); tcp there is the tcp;ofi_rxm stack.  Across two
 * network namespaces FMPL's 8-byte latency was 7.3-8.6 us over net and
 * 10-12.5 us over tcp;ofi_rxm (bench/compare -o).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rdma/fi_cm.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include "fmpl.h"
#include "base/boot.h"
#include "base/env.h"
#include "base/log.h"
#include "transport/errmap.h"
#include "transport/ofi/ofi.h"

/* What a rank publishes in the modex: its endpoints' addresses. */
#define FMPL_OFI_NAME_MAX ((FMPL_BOOT_VALUE_MAX - 4 * FMPL_OFI_NEP) / FMPL_OFI_NEP)
typedef struct ofi_card {
    uint32_t addrlen[FMPL_OFI_NEP];
    uint8_t addr[FMPL_OFI_NEP][FMPL_OFI_NAME_MAX];
} ofi_card_t;

/* (libfabric's FI_E* codes are errno values: one mapping, errmap.h) */
int fmpl_ofi_error(fmpl_ofi_t *o, int fi_rc, const char *what, int peer)
{
    int e = fi_rc < 0 ? -fi_rc : fi_rc;
    return fmpl_tl_fail("ofi", what, peer, e, fmpl_fi.strerror(e), o ? &o->failed_peer : NULL);
}

/* Completions: the context of an operation is its fmpl_tl_comp_t, or
 * for a receive its slot in the ring. */
/* The rank whose address libfabric reports as a message's source. */
static int rank_of(const fmpl_ofi_t *o, fi_addr_t a)
{
    if (a == FI_ADDR_NOTAVAIL)
        return FMPL_MMSG_FROM_STRANGER;
    if (a < o->naddr && o->rank_of[a] >= 0)
        return o->rank_of[a];
    for (int c = 0; c < FMPL_OFI_NEP; c++)      /* an address vector of another kind */
        for (int r = 0; r < o->tl->size; r++)
            if (o->ch[c].addr[r] == a)
                return r;
    return FMPL_MMSG_FROM_STRANGER;
}

int fmpl_ofi_cq_drain(fmpl_ofi_t *o)
{
    struct fi_cq_entry ev[16];
    fi_addr_t src[16];
    int n = 0;
    for (;;) {
        ssize_t got = o->check_src ? fi_cq_readfrom(o->cq, ev, 16, src)
                                   : fi_cq_read(o->cq, ev, 16);
        if (got > 0) {
            for (ssize_t i = 0; i < got; i++) {
                void *ctx = ev[i].op_context;
                fmpl_ofi_rx_t *rx = fmpl_ofi_msg_rx(o, ctx);
                if (rx) {
                    rx->from = o->check_src ? rank_of(o, src[i]) : FMPL_MMSG_FROM_ANY;
                    rx->done = 1;
                } else if (ctx) {
                    fmpl_ofi_op_end(o, ctx, FMPL_SUCCESS);
                }
            }
            n += (int)got;
            if (got < 16)
                return n;          /* drained: another read costs a poll() */
            continue;
        }
        if (got == -FI_EAVAIL) {
            struct fi_cq_err_entry err = { 0 };
            if (fi_cq_readerr(o->cq, &err, 0) > 0) {
                fmpl_ofi_rx_t *rx = fmpl_ofi_msg_rx(o, err.op_context);
                if (rx) {
                    /* nothing came: the slot is skipped and posted again */
                    if (err.err != FI_ECANCELED)
                        fmpl_ofi_error(o, err.err, "receive failed", -1);
                    rx->msg.kind = 0;
                    rx->from = FMPL_MMSG_FROM_ANY;
                    rx->done = 1;
                } else {
                    int rc = fmpl_ofi_error(o, err.err, "operation failed", -1);
                    if (err.op_context)
                        fmpl_ofi_op_end(o, err.op_context, rc);
                }
                n++;
                continue;
            }
        }
        return n;
    }
}

/* One caller at a time (the ticker, the application's threads): the
 * messages must be applied in order.  A caller that finds somebody else
 * at it has nothing to do. */
int fmpl_ofi_progress(fmpl_tl_t *tl)
{
    fmpl_ofi_t *o = fmpl_ofi_of(tl);
    fmpl_ticker_note(&o->ticker);
    if (pthread_mutex_trylock(&o->lock) != 0)
        return 0;
    int n = fmpl_ofi_cq_drain(o);
    n += fmpl_ofi_msg_apply(o);
    pthread_mutex_unlock(&o->lock);
    return n;
}

/*
 * Waits inside the transport (a get, a CAS answer, a post the provider
 * cannot take yet) last a round trip or two.  Past that the peer may be
 * waiting for our core (more ranks than cores): give it up between polls.
 * And the peer may be dead: an injected message that never arrives
 * reports no error, and a post to a dead peer may find the provider
 * "busy" for ever.  So ask, now and then, the provider (an operation on
 * that peer failed) and the launcher (a rank died), as fmpl_check_peer
 * does.
 */
int fmpl_ofi_wait(fmpl_ofi_t *o, volatile int *pending, int peer)
{
    return fmpl_tl_wait_pending(o->tl, pending, &o->failed_peer, peer);
}

int fmpl_ofi_busy(fmpl_ofi_t *o, int peer, fmpl_tl_wait_t *w, int locked)
{
    if (locked)
        fmpl_ofi_cq_drain(o);
    else
        fmpl_ofi_progress(o->tl);
    return fmpl_tl_idle(o->tl, &o->failed_peer, peer, w);
}

/* the provider's core is `name` ("tcp;ofi_rxm": tcp) */
static int core_is(const char *prov_name, const char *name)
{
    size_t n = strcspn(prov_name, ";");
    return strlen(name) == n && strncmp(prov_name, name, n) == 0;
}

/* The first RDM provider with what we need, in the preferred order. */
static struct fi_info *choose(struct fi_info *list)
{
    if (getenv("FI_PROVIDER"))
        return list;               /* libfabric filtered already */
    static const char *const order[] = { "verbs", "efa", "cxi", "net", "tcp", "shm" };
    for (size_t k = 0; k < sizeof order / sizeof order[0]; k++)
        for (struct fi_info *i = list; i; i = i->next)
            if (core_is(i->fabric_attr->prov_name, order[k]))
                return i;
    return list;
}

static void ofi_close(fmpl_tl_t *tl);

/* One endpoint on the shared address vector and completion queue. */
static int open_ep(fmpl_ofi_t *o, fmpl_ofi_chan_t *ch, const char **what)
{
    *what = "fi_endpoint";
    int rc = fi_endpoint(o->domain, o->info, &ch->ep, NULL);
    if (!rc) {
        *what = "fi_ep_bind";
        rc = fi_ep_bind(ch->ep, &o->av->fid, 0);
    }
    if (!rc)
        rc = fi_ep_bind(ch->ep, &o->cq->fid, FI_TRANSMIT | FI_RECV);
    if (!rc) {
        *what = "fi_enable";
        rc = fi_enable(ch->ep);
    }
    return rc;
}

/* auto: the provider moves data without our calls, from a thread of its own */
static int ofi_getinfo(struct fi_info **out, int autoprog)
{
    struct fi_info *hints = fmpl_fi.dupinfo(NULL);
    if (!hints)
        return -FI_ENOMEM;
    hints->ep_attr->type = FI_EP_RDM;
    hints->caps = FI_MSG | FI_SEND | FI_RECV | FI_RMA | FI_READ | FI_WRITE | FI_REMOTE_READ |
                  FI_REMOTE_WRITE;
    hints->mode = 0;
    hints->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
    /* thread safe: our ticker calls progress beside the application */
    hints->domain_attr->threading = FI_THREAD_SAFE;
    if (autoprog)
        hints->domain_attr->data_progress = FI_PROGRESS_AUTO;
    /* a notification travels behind the puts and notifications before it */
    hints->tx_attr->msg_order = FI_ORDER_SAW | FI_ORDER_SAS;
    hints->rx_attr->msg_order = FI_ORDER_SAW | FI_ORDER_SAS;
    int rc = fmpl_fi.getinfo(FI_VERSION(1, 9), NULL, NULL, 0, hints, out);
    fmpl_fi.freeinfo(hints);
    return rc;
}

/* The chosen provider again, now asked to say where each message comes
 * from (FI_SOURCE, a secondary capability some providers lack): *in is
 * replaced when it can.  Asked only after the choice, so that the
 * choice of provider does not depend on it. */
static int ofi_want_source(struct fi_info **in)
{
    struct fi_info *hints = fmpl_fi.dupinfo(*in), *got = NULL;
    if (!hints)
        return 0;
    hints->caps |= FI_SOURCE;
    int rc = fmpl_fi.getinfo(FI_VERSION(1, 9), NULL, NULL, 0, hints, &got);
    fmpl_fi.freeinfo(hints);
    if (rc != 0 || !got)
        return 0;
    struct fi_info *dup = (got->caps & FI_SOURCE) ? fmpl_fi.dupinfo(got) : NULL;
    fmpl_fi.freeinfo(got);
    if (!dup)
        return 0;
    fmpl_fi.freeinfo(*in);
    *in = dup;
    return 1;
}

static int ofi_open(fmpl_tl_t *tl)
{
    /* the settings (fmpl(7)).  FMPL_OFI_PROGRESS=manual: drive the
     * provider ourselves even where it could progress on its own (its
     * thread competes for the cores); FMPL_OFI_CHECK_SOURCE=0: do not ask
     * who sent each message (the test of the check needs the unchecked
     * path too); FMPL_OFI_MR_CACHE: ofi_mem.c */
    static const char *const progress[] = { "auto", "manual", NULL };
    int manual, check_src, mr_cache;
    if (fmpl_env_choice("FMPL_OFI_PROGRESS", progress, 0,
                        "auto or manual (FMPL's calls drive the provider)", &manual) ||
        fmpl_env_bool("FMPL_OFI_CHECK_SOURCE", 1,
                      "0 (do not ask the provider who sent each message) or 1", &check_src) ||
        fmpl_env_bool("FMPL_OFI_MR_CACHE", -1,
                      "0 (close unused registrations) or 1 (keep them)", &mr_cache))
        return FMPL_ERR_ARG;
    int lrc = fmpl_ofi_lib_load();
    if (lrc != FMPL_SUCCESS)
        return lrc;
    fmpl_ofi_t *o = calloc(1, sizeof *o);
    if (!o)
        return FMPL_ERR_NOMEM;
    o->tl = tl;
    o->failed_peer = -1;
    pthread_mutex_init(&o->lock, NULL);
    pthread_mutex_init(&o->op_lock, NULL);
    tl->priv = o;
    /* records in the line: a longer one would be injected (copied) into a
     * provider's buffer, whose size each provider decides (tcp's is 64) */
    tl->max_inline = FMPL_MMSG_REC_BASE;
    /* CAS is ours (ofi_msg.c): no provider atomics needed */
    tl->caps = FMPL_TL_CAP_GET | FMPL_TL_CAP_CAS | FMPL_TL_CAP_SHARED_LINK;

    /* libfabric sizes some providers' queues for the job it is told of,
     * FI_UNIVERSE_SIZE (read once, by the first fi_getinfo), else for 256
     * peers: the verbs provider under ofi_rxm then asks the device for a
     * completion queue of (384 + 384) x 256 entries, more than soft-RoCE
     * and small HCAs allow, and fi_enable fails.  The
     * job's size is what we know; a value the user set stays. */
    char univ[16];
    snprintf(univ, sizeof univ, "%d", tl->size > 0 ? tl->size : 1);
    setenv("FI_UNIVERSE_SIZE", univ, 0);

    struct fi_info *list = NULL;
    int rc = -FI_ENODATA;
    for (int autoprog = !manual; autoprog >= 0 && rc != 0; autoprog--)
        rc = ofi_getinfo(&list, autoprog);
    if (rc != 0) {
        fmpl_log_err("ofi: no libfabric provider with RDM endpoints, messages, RMA and "
                     "send-after-write ordering%s: %s",
                     getenv("FI_PROVIDER") ? " (FI_PROVIDER is set)" : "",
                     fmpl_fi.strerror(-rc));
        pthread_mutex_destroy(&o->lock);
        pthread_mutex_destroy(&o->op_lock);
        free(o);
        tl->priv = NULL;
        return FMPL_ERR_UNSUPPORTED;
    }
    o->info = fmpl_fi.dupinfo(choose(list));
    fmpl_fi.freeinfo(list);
    if (!o->info) {
        ofi_close(tl);
        return FMPL_ERR_NOMEM;
    }
    if (check_src)
        o->check_src = ofi_want_source(&o->info);
    struct fi_info *in = o->info;
    o->virt_addr = !!(in->domain_attr->mr_mode & FI_MR_VIRT_ADDR);
    o->prov_key = !!(in->domain_attr->mr_mode & FI_MR_PROV_KEY);
    /* software providers: over the kernel's sockets (waits give the core
     * away: p2p/progress.c), or shared memory; both reach registered
     * memory by address (ofi_mem.c) */
    const char *pn = in->fabric_attr->prov_name;
    tl->kernel_any = core_is(pn, "tcp") || core_is(pn, "net") || core_is(pn, "sockets") ||
                     core_is(pn, "udp");   /* net: libfabric 1.17's newer tcp */
    tl->kernel_peer = NULL;
    fmpl_ofi_mem_policy(o, tl->kernel_any || core_is(pn, "shm"), mr_cache);
    if (o->virt_addr)
        tl->caps |= FMPL_TL_CAP_VADDR;
    o->next_key = 1;               /* keys are per domain, i.e. per process; small
                                      ones fit the route transport's keys */
    o->max_msg = in->ep_attr->max_msg_size ? in->ep_attr->max_msg_size : (1u << 30);
    if (o->max_msg > (1u << 30))
        o->max_msg = 1u << 30;
    if (in->tx_attr->inject_size < sizeof(fmpl_mmsg_t)) {
        fmpl_log_err("ofi: provider %s injects only %zu bytes (need %zu)",
                     in->fabric_attr->prov_name, in->tx_attr->inject_size,
                     sizeof(fmpl_mmsg_t));
        ofi_close(tl);
        return FMPL_ERR_UNSUPPORTED;
    }

    struct fi_av_attr av_attr = { .type = FI_AV_TABLE,
                                  .count = (size_t)tl->size * FMPL_OFI_NEP };
    struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_CONTEXT, .size = 4096 };
    const char *what = "fi_fabric";
    rc = fmpl_fi.fabric(in->fabric_attr, &o->fabric, NULL);
    if (!rc) {
        what = "fi_domain";
        rc = fi_domain(o->fabric, in, &o->domain, NULL);
    }
    if (!rc) {
        what = "fi_av_open";
        rc = fi_av_open(o->domain, &av_attr, &o->av, NULL);
    }
    if (!rc) {
        what = "fi_cq_open";
        rc = fi_cq_open(o->domain, &cq_attr, &o->cq, NULL);
    }
    for (int c = 0; c < FMPL_OFI_NEP && !rc; c++) {
        what = "fi_endpoint";
        rc = open_ep(o, &o->ch[c], &what);
    }
    if (rc) {
        int e = fmpl_ofi_error(o, rc, what, -1);
        ofi_close(tl);
        return e;
    }

    /* our mailbox and the receives for messages, then the card */
    rc = fmpl_mmsg_open(&o->box, tl->rank, tl->size, tl->nidx, 0);
    if (rc != FMPL_SUCCESS) {
        ofi_close(tl);
        return rc;
    }
    o->box.answer = fmpl_ofi_answer;
    o->box.request = fmpl_ofi_request;
    o->box.wait = fmpl_ofi_box_wait;
    o->box.ctx = o;
    for (int c = 0; c < FMPL_OFI_NEP && rc == FMPL_SUCCESS; c++)
        rc = fmpl_ofi_msg_open(o, &o->ch[c]);
    if (rc != FMPL_SUCCESS) {
        ofi_close(tl);
        return rc;
    }
    ofi_card_t card;
    memset(&card, 0, sizeof card);
    for (int c = 0; c < FMPL_OFI_NEP; c++) {
        size_t alen = FMPL_OFI_NAME_MAX;
        rc = fi_getname(&o->ch[c].ep->fid, card.addr[c], &alen);
        if (rc) {
            int e = fmpl_ofi_error(o, rc, "fi_getname", -1);
            ofi_close(tl);
            return e;
        }
        card.addrlen[c] = (uint32_t)alen;
    }
    rc = tl->boot->ops->put(tl->boot, "ofi", &card, sizeof card);
    if (rc == FMPL_SUCCESS)
        rc = tl->boot->ops->fence(tl->boot);
    for (int c = 0; c < FMPL_OFI_NEP && rc == FMPL_SUCCESS; c++) {
        o->ch[c].addr = calloc((size_t)tl->size, sizeof *o->ch[c].addr);
        if (!o->ch[c].addr)
            rc = FMPL_ERR_NOMEM;
    }
    o->naddr = (size_t)tl->size * FMPL_OFI_NEP;
    if (rc == FMPL_SUCCESS && !(o->rank_of = malloc(o->naddr * sizeof *o->rank_of)))
        rc = FMPL_ERR_NOMEM;
    for (size_t a = 0; rc == FMPL_SUCCESS && a < o->naddr; a++)
        o->rank_of[a] = -1;
    for (int r = 0; r < tl->size && rc == FMPL_SUCCESS; r++) {
        ofi_card_t cd;
        size_t len = sizeof cd;
        rc = tl->boot->ops->get(tl->boot, r, "ofi", &cd, &len);
        if (rc != FMPL_SUCCESS || len != sizeof cd) {
            fmpl_log_err("ofi: rank %d published no libfabric address", r);
            rc = rc ? rc : FMPL_ERR_INTERNAL;
            break;
        }
        for (int c = 0; c < FMPL_OFI_NEP && rc == FMPL_SUCCESS; c++)
            if (fi_av_insert(o->av, cd.addr[c], 1, &o->ch[c].addr[r], 0, NULL) != 1) {
                fmpl_log_err("ofi: cannot reach rank %d at its address", r);
                rc = FMPL_ERR_PEER;
            } else if (o->ch[c].addr[r] < o->naddr) {
                o->rank_of[o->ch[c].addr[r]] = r;
            }
    }
    /* nobody sends before everybody can receive */
    if (rc == FMPL_SUCCESS)
        rc = tl->boot->ops->fence(tl->boot);
    if (rc != FMPL_SUCCESS) {
        ofi_close(tl);
        return rc;
    }
    /* the waiting rank drives the provider itself; when it computes
     * outside FMPL the ticker does (transport/ticker.h): peers' messages
     * and, with manual data progress, their puts and gets need it */
    rc = fmpl_ticker_start(&o->ticker, tl, fmpl_ofi_progress, "ofi");
    if (rc != FMPL_SUCCESS) {
        ofi_close(tl);
        return rc;
    }
    fmpl_log_info("ofi: provider %s, fabric %s, %d ranks, %d indices, unused "
                  "registrations %s, %s data progress, senders %s",
                  in->fabric_attr->prov_name, in->fabric_attr->name, tl->size, tl->nidx,
                  o->rc.keep_idle ? "cached" : "closed",
                  in->domain_attr->data_progress == FI_PROGRESS_AUTO ? "auto" : "manual",
                  o->check_src ? "checked (FI_SOURCE)"
                               : "not checked (the provider cannot tell them)");
    return FMPL_SUCCESS;
}

static void ofi_close(fmpl_tl_t *tl)
{
    fmpl_ofi_t *o = fmpl_ofi_of(tl);
    if (!o)
        return;
    int opened = o->ticker.running;   /* started last in ofi_open */
    fmpl_ticker_stop(&o->ticker);
    /* take what the peers' providers sent last (verbs;ofi_rxm's own
     * acknowledgements and credits: with manual progress only our calls
     * handle them) before the endpoint goes; libfabric 1.17 closing an
     * rxm endpoint over them crashed (issue 17's note) */
    for (int idle = 0, n = 0; opened && idle < 64 && n < 100000; n++)
        idle = fmpl_ofi_progress(tl) ? 0 : idle + 1;
    for (int c = 0; c < FMPL_OFI_NEP; c++) {
        if (o->ch[c].ep)
            fi_close(&o->ch[c].ep->fid);
        fmpl_ofi_msg_close(&o->ch[c]);
        free(o->ch[c].addr);
    }
    free(o->rank_of);
    fmpl_ofi_mem_cleanup(o);
    if (o->cq)
        fi_close(&o->cq->fid);
    if (o->av)
        fi_close(&o->av->fid);
    if (o->domain)
        fi_close(&o->domain->fid);
    if (o->fabric)
        fi_close(&o->fabric->fid);
    if (o->info)
        fmpl_fi.freeinfo(o->info);
    fmpl_mmsg_close(&o->box);
    fmpl_ofi_op_cleanup(o);        /* after the endpoints: nothing completes now */
    pthread_mutex_destroy(&o->lock);
    pthread_mutex_destroy(&o->op_lock);
    free(o);
    tl->priv = NULL;
}

static int ofi_peer_ok(fmpl_tl_t *tl, int peer)
{
    return fmpl_ofi_of(tl)->failed_peer != peer;
}

static void ofi_forget(fmpl_tl_t *tl, fmpl_tl_comp_t *comp)
{
    fmpl_ofi_op_forget(fmpl_ofi_of(tl), comp);
}

const fmpl_tl_ops_t fmpl_ofi_ops = {
    .size = sizeof(fmpl_tl_ops_t),
    .name = "ofi",
    .open = ofi_open,
    .close = ofi_close,
    .mem_reg = fmpl_ofi_mem_reg,
    .mem_dereg = fmpl_ofi_mem_dereg,
    .mem_alloc = fmpl_ofi_mem_alloc,
    .mem_free = fmpl_ofi_mem_free,
    .put = fmpl_ofi_put,
    .put_strided = fmpl_tl_put_strided_by_put,
    .put_iov = fmpl_tl_put_iov_by_put,
    .get = fmpl_ofi_get,
    .mbox_in = fmpl_ofi_mbox_in,
    .notify = fmpl_ofi_notify,
    .put_notify = fmpl_tl_put_notify_by_parts,
    .mbox_cas = fmpl_ofi_mbox_cas,
    .progress = fmpl_ofi_progress,
    .peer_ok = ofi_peer_ok,
    .forget = ofi_forget,
    .barrier = fmpl_tl_unsupported_barrier,
    .bcast = fmpl_tl_unsupported_bcast,
};
