/*
 * ofi.h - the libfabric transport (private to src/transport/ofi/).
 *
 * One FI_EP_RDM endpoint per process with FI_RMA (and FI_ATOMIC when the
 * provider has it), one completion queue, an address vector of every
 * rank.  The model of transport.h maps onto it so:
 *
 *   mailbox   each process registers one area [size][nidx] x 64 B in its
 *             own memory: line (w, i) is what writer w tells us about
 *             index i.  We poll it with plain loads; peers write it with
 *             RMA.  Its address and key travel in the bootstrap modex.
 *   notify    two RMA writes into our line at the peer: the body, then
 *             the first word.  The endpoint is opened with write-after-
 *             write ordering (FI_ORDER_WAW), so the word lands after the
 *             body and after every earlier put to that peer: the ordered
 *             notification the p2p layer relies on.
 *   put/get   fi_write / fi_read on a registered region; a put's
 *             completion decrements its fmpl_tl_comp_t.
 *   CAS       fi_compare_atomic on the word, also for our own lines
 *             (through the provider), so that it is atomic with respect
 *             to the peers' atomics on them.
 *   progress  fi_cq_read, from every FMPL wait.  A provider that moves
 *             data on its own (FI_PROGRESS_AUTO: tcp) needs nothing more;
 *             for one with manual data progress (shm) a thread of ours
 *             reads the queue every 50 us, so a process that computes
 *             outside FMPL never holds up its peers.  The domain is
 *             thread safe in both cases.
 *
 * Keys: fmpl_tl_key_t.addr is the remote address (the buffer's address
 * with FI_MR_VIRT_ADDR, else its offset in the registered region), kind
 * and id are the low and high halves of the 64-bit protection key.
 */
#ifndef FMPL_OFI_H
#define FMPL_OFI_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>

#include "transport/transport.h"

#define FMPL_OFI_REC_MAX  32       /* largest notify record */
#define FMPL_OFI_NREG     64       /* registration cache entries */

/* A cached registration of [base, base + len). */
typedef struct fmpl_ofi_reg {
    uintptr_t base;
    size_t len;
    struct fid_mr *mr;
    uint64_t key;
    unsigned long used;            /* last use, for eviction */
    int allocated;                 /* from mem_alloc: ours to free, never evicted */
} fmpl_ofi_reg_t;

typedef struct fmpl_ofi {
    fmpl_tl_t *tl;
    struct fi_info *info;
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_av *av;
    struct fid_cq *cq;
    struct fid_ep *ep;
    fi_addr_t *addr;               /* [size] */
    uint8_t *mbox;                 /* [size][nidx] lines written by peers */
    size_t mbox_len;
    struct fid_mr *mbox_mr;
    uint64_t *peer_mbox;           /* [size] remote address of each peer's mailbox */
    uint64_t *peer_key;            /* [size] and its key */
    int virt_addr;                 /* FI_MR_VIRT_ADDR: remote addresses are virtual */
    int prov_key;                  /* FI_MR_PROV_KEY: the provider picks keys */
    uint64_t next_key;             /* else ours, unique in the domain */
    size_t max_msg;                /* largest single transfer */
    fmpl_ofi_reg_t reg[FMPL_OFI_NREG];
    unsigned long clock;
    int failed_peer;               /* a peer the provider reported unreachable */
    pthread_t ticker;              /* manual progress only: see ofi_ops.c */
    int ticking;
    _Atomic int stop;
} fmpl_ofi_t;

/* Completions may come from the progress thread: counters are atomic. */
static inline void fmpl_ofi_start(fmpl_tl_comp_t *c)
{
    __atomic_fetch_add(&c->pending, 1, __ATOMIC_RELAXED);
}
static inline void fmpl_ofi_done(fmpl_tl_comp_t *c)
{
    __atomic_fetch_sub(&c->pending, 1, __ATOMIC_RELEASE);
}

static inline fmpl_ofi_t *fmpl_ofi_of(fmpl_tl_t *tl) { return (fmpl_ofi_t *)tl->priv; }

/* ofi_lib.c: libfabric's real entry points, from dlopen */
typedef struct fmpl_ofi_lib {
    void *handle;
    int (*getinfo)(uint32_t, const char *, const char *, uint64_t, const struct fi_info *,
                   struct fi_info **);
    void (*freeinfo)(struct fi_info *);
    struct fi_info *(*dupinfo)(const struct fi_info *);
    int (*fabric)(struct fi_fabric_attr *, struct fid_fabric **, void *);
    const char *(*strerror)(int);
} fmpl_ofi_lib_t;
extern fmpl_ofi_lib_t fmpl_fi;
int fmpl_ofi_lib_load(void);

/* ofi_ops.c */
int  fmpl_ofi_error(fmpl_ofi_t *o, int fi_rc, const char *what, int peer);
int  fmpl_ofi_progress(fmpl_tl_t *tl);
/* Wait until *pending is 0, making progress; an error ends the wait. */
int  fmpl_ofi_wait(fmpl_ofi_t *o, volatile int *pending, int peer);

/* ofi_mem.c */
int  fmpl_ofi_mem_reg(fmpl_tl_t *tl, void *addr, size_t len, fmpl_tl_key_t *key);
void *fmpl_ofi_mem_alloc(fmpl_tl_t *tl, size_t len);
int  fmpl_ofi_mem_free(fmpl_tl_t *tl, void *p);
int  fmpl_ofi_register(fmpl_ofi_t *o, void *addr, size_t len, struct fid_mr **mr,
                       uint64_t *key);
void fmpl_ofi_mem_cleanup(fmpl_ofi_t *o);

/* ofi_rma.c */
int  fmpl_ofi_put(fmpl_tl_t *tl, int peer, const void *src, size_t len,
                  const fmpl_tl_key_t *key, uint64_t roff, fmpl_tl_comp_t *comp);
int  fmpl_ofi_get(fmpl_tl_t *tl, int peer, void *dst, size_t len, const fmpl_tl_key_t *key,
                  uint64_t roff);
volatile void *fmpl_ofi_mbox_in(fmpl_tl_t *tl, int peer, int idx);
int  fmpl_ofi_notify(fmpl_tl_t *tl, int peer, int idx, unsigned off, const void *rec,
                     unsigned len, unsigned flags, fmpl_tl_comp_t *comp);
int  fmpl_ofi_mbox_cas(fmpl_tl_t *tl, int peer, int idx, unsigned off, int outgoing,
                       uint64_t expect, uint64_t desired, uint64_t *old);

#endif
