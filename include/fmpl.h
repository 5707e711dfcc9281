/*
 * fmpl.h - FMPL, a fast message-passing library (public API)
 *
 * NAME
 *   fmpl - point-to-point messaging matched by matching-area indices
 *
 * SYNOPSIS
 *   #include <fmpl.h>
 *   cc prog.c $(pkg-config --cflags --libs fmpl)
 *   fmplrun -n 4 ./prog
 *
 * DESCRIPTION
 *   FMPL follows the FMPL library of Tatebe et al. for the Hitachi SR8000.
 *   A send and its receive name the same matching-area index ("mai")
 *   instead of a tag.  The receiver initiates: fmpl_recv() writes a small
 *   header (where its buffer is, how large, a sequence number) into the
 *   sender's matching-area slot `mai`; the sender then writes the data once,
 *   straight into the receiver's buffer, and sets the receiver's completion
 *   flag.  Matching is an array access; a message costs one round trip.
 *
 *   Rules that follow from the design (the paper's rules):
 *   - The receiver must name the source: there is no ANY_SOURCE.  Post one
 *     fmpl_irecv() per candidate and cancel the others with
 *     fmpl_cancel_irecv().
 *   - A process must not have two overlapping sends, or two overlapping
 *     receives, to/from the same peer on the same index.  FMPL detects this
 *     and returns FMPL_ERR_BUSY.  A send and a receive on the same index
 *     and peer may overlap.
 *   - Messages between a pair on one index are matched in posting order:
 *     the k-th send to rank r on index i meets r's k-th receive from us on i.
 *   - A blocking send cannot finish before the matching receive is posted
 *     unless a spill buffer was given with fmpl_sendbuff_set().
 *
 * THREADS
 *   FMPL calls must come from one thread at a time.  With the environment
 *   variable FMPL_PROGRESS_THREAD=1, FMPL runs its own progress thread that
 *   pushes spilled sends and drains incoming pipelined data while the
 *   application computes.
 *
 * ENVIRONMENT
 *   FMPL_PROGRESS_THREAD=1   start a progress thread in fmpl_init().
 *   FMPL_TRANSPORT=shm       force a transport (only "shm" on one machine).
 *   FMPL_SHM_CMA=0           never use cross-memory attach; large messages
 *                            go through the pipelined shared buffers.
 *   FMPL_SHM_EAGER=BYTES     largest message sent through the pipelined
 *                            shared buffers when cross-memory attach is on.
 *   FMPL_SPLIT_MIN=BYTES     messages larger than this (default 64 KiB)
 *                            are copied by sender and receiver together,
 *                            half each, when the transport can read
 *                            remotely; 0 turns this off.
 *   FMPL_PEER_TIMEOUT=SEC    (none by default) give up a wait on one peer
 *                            after SEC seconds with FMPL_ERR_PEER.
 *   FMPL_VERBOSE=1           print bootstrap and transport decisions.
 */
#ifndef FMPL_H
#define FMPL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The library is built with hidden visibility; everything declared here is
 * its exported interface. */
#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

#define FMPL_VERSION_MAJOR 0
#define FMPL_VERSION_MINOR 1

/*
 * Error codes.  Every call returns FMPL_SUCCESS (0) or one of these
 * (negative) codes; fmpl_strerror() turns a code into a message and
 * fmpl_error_name() into its symbolic name.  One table defines all three.
 */
#define FMPL_ERRNO_MAP(X)                                                      \
    X(SUCCESS,      0,  "success")                                             \
    X(ERR_NOT_INIT, -1, "FMPL is not initialised (call fmpl_init first)")      \
    X(ERR_INIT,     -2, "FMPL is already initialised, or initialisation failed") \
    X(ERR_ARG,      -3, "invalid argument")                                    \
    X(ERR_RANK,     -4, "rank out of range")                                   \
    X(ERR_INDEX,    -5, "matching-area index out of range")                    \
    X(ERR_BUFFER,   -6, "NULL buffer with a non-zero size")                    \
    X(ERR_BUSY,     -7, "index already in use by an overlapping operation")    \
    X(ERR_TRUNCATE, -8, "message larger than the receive buffer")              \
    X(ERR_PEER,     -9, "peer process died or became unreachable")             \
    X(ERR_NOMEM,    -10, "out of memory")                                      \
    X(ERR_REQUEST,  -11, "invalid or inactive request")                        \
    X(ERR_SPILL,    -12, "spill send buffer is in use or too small")           \
    X(ERR_UNSUPPORTED, -13, "operation not supported by this transport")       \
    X(ERR_SYSTEM,   -14, "operating-system call failed")                       \
    X(ERR_CANCELED, -15, "receive was cancelled")                              \
    X(ERR_INTERNAL, -16, "internal error")

enum {
#define FMPL_ERRNO_ENUM_(name, code, msg) FMPL_##name = code,
    FMPL_ERRNO_MAP(FMPL_ERRNO_ENUM_)
#undef FMPL_ERRNO_ENUM_
    FMPL_ERR_LAST_ = -17
};

/*
 * A nonblocking operation.  A complete type: declare it on the stack or in
 * an array.  Its content is private.  A request is active from a successful
 * fmpl_isend()/fmpl_irecv() until the matching wait (or a successful
 * fmpl_cancel_irecv()) returns; it must not be moved or copied while active.
 */
typedef struct fmpl_request {
    int      kind;      /* 0 = inactive, 1 = send, 2 = receive */
    int      peer;
    int      mai;
    int      status;    /* FMPL_SUCCESS or an error once complete */
    uint32_t seq;
    uint32_t flags;
    void    *buf;
    size_t   size;
    uint64_t priv[4];
} fmpl_request_t;

/* ------------------------------------------------------------------ */
/* Environment                                                          */
/* ------------------------------------------------------------------ */

/*
 * fmpl_init - join the job and create the matching area.
 *   count  number of matching-area indices per peer, 1 .. 1048576.
 *          Indices run from 0 to count-1.
 * Under fmplrun the job is the processes fmplrun started; under mpirun,
 * prterun or srun --mpi=pmix it is the PMIx job; without a launcher it is
 * a job of one process.  Collective: every process of the job calls it.
 * Errors: FMPL_ERR_INIT (called twice), FMPL_ERR_ARG (count out of range),
 * FMPL_ERR_NOMEM, FMPL_ERR_SYSTEM (shared memory or launcher failure),
 * FMPL_ERR_PEER (a process of the job died during start-up).
 */
int fmpl_init(int count);

/*
 * fmpl_finalize - leave the job.  Collective.  Waits for the spill buffer
 * to drain and for the other processes (so no peer still writes into our
 * memory), then releases every resource.  Returns FMPL_ERR_NOT_INIT when
 * not initialised, FMPL_ERR_PEER when a peer died.
 */
int fmpl_finalize(void);

/*
 * fmpl_abort - end the whole job now.  Flushes stdio, prints `code` and
 * the calling rank on stderr, tells the launcher to kill every process and
 * exits with `code` (1 if code is 0).  Never returns.
 */
void fmpl_abort(int code);

/* fmpl_rank, fmpl_size - this process's rank and the job size; -1 before
 * fmpl_init. */
int fmpl_rank(void);
int fmpl_size(void);

/* fmpl_wtime - wall-clock seconds from a monotonic clock. */
double fmpl_wtime(void);

/* fmpl_strerror - message for an error code (never NULL). */
const char *fmpl_strerror(int code);
/* fmpl_error_name - "FMPL_ERR_TRUNCATE" etc. (never NULL). */
const char *fmpl_error_name(int code);

/* ------------------------------------------------------------------ */
/* Point-to-point                                                       */
/* ------------------------------------------------------------------ */

/*
 * fmpl_send - blocking send of `size` bytes at `buf` to rank `dst` on
 * matching-area index `mai`.
 * Returns when `buf` may be reused: when the data is in the receiver's
 * buffer, or when it was copied to the spill buffer (see
 * fmpl_sendbuff_set()).  Zero-size messages and sends to self are allowed
 * (a blocking send to self needs a prior fmpl_irecv or a spill buffer).
 * Errors: FMPL_ERR_NOT_INIT, FMPL_ERR_RANK, FMPL_ERR_INDEX, FMPL_ERR_BUFFER
 * (NULL with size > 0), FMPL_ERR_BUSY (another send to dst on mai is
 * active), FMPL_ERR_TRUNCATE (the receive buffer is smaller than `size`;
 * nothing is written to it and the receiver gets FMPL_ERR_TRUNCATE too),
 * FMPL_ERR_PEER (dst died).
 */
int fmpl_send(const void *buf, size_t size, int dst, int mai);

/*
 * fmpl_recv - blocking receive of at most `size` bytes into `buf` from rank
 * `src` on index `mai`.  Returns when the data is in `buf`.  Messages
 * shorter than `size` are allowed.  Errors as fmpl_send(); FMPL_ERR_BUSY if
 * a receive from src on mai is already active; FMPL_ERR_TRUNCATE if the
 * sender's message is larger (the buffer is left untouched).
 */
int fmpl_recv(void *buf, size_t size, int src, int mai);

/*
 * fmpl_isend, fmpl_irecv - start a send or receive and return at once.
 * `req` must stay valid (and `buf` untouched) until fmpl_wait_isend /
 * fmpl_wait_irecv returns.  Posting receives early is what makes FMPL
 * fast: the matching send then writes the data at once.
 * Errors as the blocking calls, plus FMPL_ERR_ARG for a NULL `req`.
 */
int fmpl_isend(const void *buf, size_t size, int dst, int mai, fmpl_request_t *req);
int fmpl_irecv(void *buf, size_t size, int src, int mai, fmpl_request_t *req);

/*
 * fmpl_wait_isend, fmpl_wait_irecv - wait for a request to complete and
 * make it inactive.  Return its outcome (FMPL_SUCCESS, FMPL_ERR_TRUNCATE,
 * FMPL_ERR_PEER, ...), or FMPL_ERR_REQUEST for an inactive request or one
 * of the other kind.  fmpl_wait_isend may spill to the spill buffer after
 * its timeout like fmpl_send.
 */
int fmpl_wait_isend(fmpl_request_t *req);
int fmpl_wait_irecv(fmpl_request_t *req);

/*
 * fmpl_test - make progress and report whether `req` has completed
 * (*done = 1) or not (*done = 0).  A completed request still needs its
 * wait call, which then returns at once with the outcome.
 * Errors: FMPL_ERR_REQUEST (inactive request), FMPL_ERR_ARG (NULL done).
 */
int fmpl_test(fmpl_request_t *req, int *done);

/*
 * fmpl_cancel_irecv - withdraw a receive posted with fmpl_irecv.  On
 * FMPL_SUCCESS the receive is gone: no data will be written to its buffer
 * and the request is inactive (do not wait on it); the next receive from
 * the same peer on the same index takes its place in the order.  Returns
 * FMPL_ERR_BUSY when the sender has already claimed the receive: the
 * message is then delivered and fmpl_wait_irecv() must be called.
 * This is the documented replacement for ANY_SOURCE.
 */
int fmpl_cancel_irecv(fmpl_request_t *req);

/*
 * fmpl_sendbuff_set - give FMPL a spill send buffer.
 *   buf, size    memory FMPL may use to hold the data of unmatched sends;
 *                NULL/0 removes the buffer (FMPL_ERR_SPILL while it still
 *                holds data).
 *   timeout_us   how long (microseconds, >= 0) a blocking send waits for
 *                its receive before copying its data here and returning.
 * Spilled messages go out when their receive is posted: every FMPL call
 * pushes them, fmpl_sendbuff_check pushes them and reports, and the
 * progress thread (FMPL_PROGRESS_THREAD=1) pushes them in the background.
 * A message larger than the free space of the buffer is not spilled; the
 * send keeps waiting.  Errors: FMPL_ERR_ARG (negative timeout, NULL with a
 * size), FMPL_ERR_SPILL.
 */
int fmpl_sendbuff_set(void *buf, size_t size, double timeout_us);

/*
 * fmpl_sendbuff_check - push spilled messages whose receive has arrived.
 *   *nsend   spilled messages delivered since the previous call
 *   *nspool  messages still waiting in the spill buffer
 * Either pointer may be NULL.
 */
int fmpl_sendbuff_check(int *nsend, int *nspool);

/*
 * fmpl_alloc_mem - allocate `size` bytes that peers write directly (one
 * plain copy, no system call on the data path).  Receive buffers in this
 * memory are the fastest.  Returns NULL on failure or before fmpl_init.
 * fmpl_free_mem - release it; FMPL_ERR_ARG for a pointer not from
 * fmpl_alloc_mem.  Memory must not be freed while a receive into it is
 * active.
 */
void *fmpl_alloc_mem(size_t size);
int   fmpl_free_mem(void *p);

/* ------------------------------------------------------------------ */
/* Fortran                                                              */
/* ------------------------------------------------------------------ */
/*
 * Fortran bindings follow the paper: the same names with a trailing
 * underscore, every argument by reference, the error code `ier` last,
 * e.g. `call fmpl_send(buf, size, dst, mai, ier)`; sizes are INTEGER*8
 * in fmpl_send/recv/isend/irecv, requests are INTEGER*8 arrays of
 * FMPL_REQUEST_WORDS elements.  `include 'fmplf.h'` gives the constants.
 */
#define FMPL_REQUEST_WORDS ((sizeof(fmpl_request_t) + 7) / 8)

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif
#endif /* FMPL_H */
