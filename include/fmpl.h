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
 *     unless a spill buffer was given with fmpl_sendbuff_set(), or it is
 *     a small message that may go early (fmpl_send()).
 *
 * THREADS
 *   FMPL calls must come from one thread at a time.  With the environment
 *   variable FMPL_PROGRESS_THREAD=1, FMPL runs its own progress thread that
 *   pushes spilled sends and drains incoming pipelined data while the
 *   application computes.
 *
 * ENVIRONMENT
 *   FMPL_PROGRESS_THREAD=1   start a progress thread in fmpl_init() (unset:
 *                            only when a queued matrix message cannot be
 *                            pulled by its receiver; 0: never).
 *   FMPL_TRANSPORT=NAME      force a transport for every peer: "shm" (one
 *                            machine) or "ofi" (libfabric: FI_PROVIDER
 *                            picks the provider, else the first of verbs,
 *                            efa, cxi, tcp, shm), or "route".  Unset: shm
 *                            when every rank is on this host, else route
 *                            (shm to the peers on the same host, ofi to
 *                            the others; ofi alone when no host has two
 *                            ranks).  See fmpl_transport().
 *   FMPL_HOSTNAME=NAME       this process's host identity (default: its
 *                            host name): ranks with the same one share
 *                            memory.
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
 *   FMPL_MAX_COMMS=N         communicators alive at once (default 64;
 *                            each costs 10 matching-area lines per peer).
 *   FMPL_MAX_HALOS=N         halo exchanges alive at once (default 16).
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

/* The version of this header (the Makefile reads it from here: one source).
 * fmpl_version() tells the version of the library a program runs with. */
#define FMPL_VERSION_MAJOR 0
#define FMPL_VERSION_MINOR 1
#define FMPL_VERSION_PATCH 0
#define FMPL_VERSION_(a, b, c) #a "." #b "." #c
#define FMPL_VERSION_STR_(a, b, c) FMPL_VERSION_(a, b, c)
#define FMPL_VERSION_STRING \
    FMPL_VERSION_STR_(FMPL_VERSION_MAJOR, FMPL_VERSION_MINOR, FMPL_VERSION_PATCH)

/* fmpl_version - the version of the FMPL library linked, "MAJOR.MINOR.PATCH"
 * (may differ from the header's FMPL_VERSION_STRING when a program runs
 * with another libfmpl.so.0 than it was built with); stores the three
 * numbers where the pointers are not NULL.  Callable at any time, before
 * fmpl_init too. */
const char *fmpl_version(int *major, int *minor, int *patch);

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
    X(ERR_INTERNAL, -16, "internal error")                                    \
    X(ERR_COMM,     -17, "invalid or freed communicator")                      \
    X(ERR_OP,       -18, "invalid reduction operation")                        \
    X(ERR_LIMIT,    -19, "too many communicators or halo exchanges alive") \
    X(ERR_SHAPE,    -20, "matrix message shape differs from the receive's")

enum {
#define FMPL_ERRNO_ENUM_(name, code, msg) FMPL_##name = code,
    FMPL_ERRNO_MAP(FMPL_ERRNO_ENUM_)
#undef FMPL_ERRNO_ENUM_
    FMPL_ERR_LAST_ = -21
};

/*
 * A nonblocking operation.  A complete type: declare it on the stack or in
 * an array.  Its content is private.  A request is active from a successful
 * fmpl_isend()/fmpl_irecv() (or a nonblocking collective's start) until
 * the matching wait (or a successful fmpl_cancel_irecv()) returns; it must
 * not be moved or copied while active.
 */
typedef struct fmpl_request {
    int      kind;      /* 0 = inactive, 1 = send, 2 = receive, 3 = collective */
    int      peer;
    int      mai;
    int      status;    /* FMPL_SUCCESS or an error once complete */
    uint32_t seq;
    uint32_t flags;
    void    *buf;
    size_t   size;
    uint64_t priv[6];
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

/* fmpl_transport - the transport serving this job: "shm" (every rank on
 * this host), "ofi" (libfabric to every peer), "route" (shm to the ranks
 * on this host, libfabric to the others), "tcw" (the Hitachi SR8000,
 * emulated: FMPL_TRANSPORT=tcw), "peach2" (a PEACH2 sub-cluster of
 * HA-PACS/TCA, emulated: FMPL_TRANSPORT=peach2) or "tca" (HA-PACS/TCA,
 * emulated: PEACH2 sub-clusters and InfiniBand, FMPL_TRANSPORT=tca) or
 * "dcfa" (InfiniBand or RoCE verbs, FMPL_TRANSPORT=dcfa); NULL before
 * fmpl_init.
 * shm and tcw have the hardware broadcast (fmpl_hbcast). */
const char *fmpl_transport(void);

/* fmpl_host - the host world rank `rank` runs on, numbered 0 .. nhosts-1
 * in order of first appearance (ranks with the same host name - or
 * FMPL_HOSTNAME - share a host).  Stores the number of hosts in *nhosts
 * unless it is NULL.  Returns the host number, FMPL_ERR_NOT_INIT or
 * FMPL_ERR_RANK. */
int fmpl_host(int rank, int *nhosts);

/* fmpl_wtime - wall-clock seconds from a monotonic clock.  On an emulated
 * machine (FMPL_TRANSPORT=tcw, peach2 or tca with its timing model) it is that machine's
 * clock instead: the seconds the program would have taken there so far
 * (the CPU time it computed between FMPL calls, and FMPL's calls as the
 * model times them). */
double fmpl_wtime(void);

/* fmpl_wtime_emulated - 1 when fmpl_wtime() is an emulated machine's
 * clock, 0 otherwise (or before fmpl_init).  There, only computation
 * moves the clock between FMPL calls: a process that sleeps takes no
 * time. */
int fmpl_wtime_emulated(void);

/* fmpl_compute - stand for `seconds` of computation this process does not
 * actually perform: a model of a processor this machine does not have (a
 * GPU of the emulated machine, a faster node), or the dummy compute of an
 * overlap benchmark.  On an emulated machine it moves fmpl_wtime() on by
 * exactly `seconds` (and the cost of one FMPL call) - deterministic, unlike
 * the program's measured CPU time, which the machine also charges unless
 * its CPU scale is 0 (FMPL_TCW_CPU_SCALE, FMPL_TCA_CPU_SCALE).  Elsewhere
 * it spins until `seconds` of wall-clock time have passed, without
 * progressing communication (as computing would not).  Returns
 * FMPL_SUCCESS, FMPL_ERR_NOT_INIT, or FMPL_ERR_ARG when `seconds` is
 * negative, not finite or above one day. */
int fmpl_compute(double seconds);

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
 * Early sends: a message of at most 24 bytes need not wait for its
 * receive to be posted.  Once the receiver has taken our previous message
 * on `mai` and said so (it does in its own messages to us on `mai`, as in
 * a ping-pong or an exchange), and its last receive there had room for
 * this one, the message goes at once into the receiver's matching area
 * and fmpl_send returns.
 * Errors: FMPL_ERR_NOT_INIT, FMPL_ERR_RANK, FMPL_ERR_INDEX, FMPL_ERR_BUFFER
 * (NULL with size > 0), FMPL_ERR_BUSY (another send to dst on mai is
 * active), FMPL_ERR_TRUNCATE (the receive buffer is smaller than `size`;
 * nothing is written to it and the receiver gets FMPL_ERR_TRUNCATE too;
 * a message that went early or through the spill buffer returns
 * FMPL_SUCCESS, and only the receiver learns of it), FMPL_ERR_PEER (dst
 * died).
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
 * fmpl_wait - wait for any request (a send, a receive or a nonblocking
 * collective) to complete and make it inactive; its outcome, or
 * FMPL_ERR_REQUEST for an inactive request.
 */
int fmpl_wait(fmpl_request_t *req);

/*
 * fmpl_cancel_irecv - withdraw a receive posted with fmpl_irecv.  On
 * FMPL_SUCCESS the receive is gone: no data will be written to its buffer
 * and the request is inactive (do not wait on it); the next receive from
 * the same peer on the same index takes its place in the order.  Returns
 * FMPL_ERR_BUSY when the sender has already claimed the receive: the
 * message is then delivered and fmpl_wait_irecv() must be called.
 * This is the documented replacement for ANY_SOURCE.  On a transport
 * without remote atomics (tcw) the sender decides: the call returns once
 * the sender's next FMPL call has answered (FMPL_ERR_PEER if it died).
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
/* Communicators                                                        */
/* ------------------------------------------------------------------ */
/*
 * A communicator is a group of processes with ranks 0..n-1 in it.  Its
 * collectives run on matching-area indices of their own, beyond the
 * `count` given to fmpl_init(): they never meet the user's point-to-point
 * traffic, nor the collectives of another communicator.  A handle is a
 * small integer, the same on every member (FMPL_COMM_WORLD is 0).
 *
 * Collectives must be called by every member of the communicator, in the
 * same order.  Collectives on different communicators may interleave in
 * any order that does not make a cycle of waits (as in MPI).
 */
typedef int fmpl_comm_t;
#define FMPL_COMM_WORLD  0
#define FMPL_COMM_NULL  (-1)
#define FMPL_UNDEFINED  (-32766)   /* fmpl_comm_split color: join nothing */

/*
 * fmpl_comm_create - the paper's call: collective over ALL processes; those
 * with key != 0 join the new communicator, in world-rank order; the others
 * get FMPL_COMM_NULL.  FMPL_ERR_LIMIT past FMPL_MAX_COMMS communicators.
 */
int fmpl_comm_create(int key, fmpl_comm_t *comm);
/*
 * fmpl_comm_split - collective over `comm`: processes with the same color
 * form a communicator, ranked by (key, rank in comm).  color ==
 * FMPL_UNDEFINED (or any negative color) gives FMPL_COMM_NULL.
 */
int fmpl_comm_split(fmpl_comm_t comm, int color, int key, fmpl_comm_t *newcomm);
/* fmpl_comm_rank, fmpl_comm_size - FMPL_ERR_COMM for an invalid handle. */
int fmpl_comm_rank(fmpl_comm_t comm, int *rank);
int fmpl_comm_size(fmpl_comm_t comm, int *size);
/* fmpl_comm_world_rank - the world rank of rank `rank` of `comm`. */
int fmpl_comm_world_rank(fmpl_comm_t comm, int rank, int *world_rank);
/*
 * fmpl_comm_free - collective over the members: release the communicator
 * and set *comm to FMPL_COMM_NULL.  FMPL_COMM_WORLD cannot be freed
 * (FMPL_ERR_COMM).
 */
int fmpl_comm_free(fmpl_comm_t *comm);

/* ------------------------------------------------------------------ */
/* Matrix messages on a communicator                                    */
/* ------------------------------------------------------------------ */
/*
 * A column-major matrix (or submatrix) in memory: `n` columns of `m`
 * elements of `esize` bytes, column j starting `j * ld` elements after
 * the first.  uplo 'G' (or 'g') is the whole matrix; 'U' / 'L' the upper /
 * lower trapezoid as the BLACS define it: with d = max(0, m - n) and
 * e = max(0, n - m), element (i, j) belongs to the upper trapezoid when
 * i <= j + d, to the lower one when i >= j - e; diag 'U' (unit) leaves
 * the diagonal i == j + d (upper) or i == j - e (lower) out, 'N' keeps it.
 */
typedef struct fmpl_matrix {
    size_t esize;                  /* bytes per element, >= 1 */
    size_t m, n;                   /* rows, columns (either may be 0) */
    size_t ld;                     /* leading dimension in elements, >= m */
    char uplo;                     /* 'G', 'U' or 'L' */
    char diag;                     /* 'U' or 'N' (trapezoids only) */
} fmpl_matrix_t;

/*
 * fmpl_comm_sendm - send the elements of matrix `a` (shape `shape`) to rank
 * `dst` of `comm`; fmpl_comm_recvm - receive them from rank `src` into `a`.
 *
 * Messages between two members of a communicator are received in the
 * order they were sent (one FIFO per ordered pair): no index, no tag.  The
 * receive's shape must have the same esize, m, n, uplo and diag as the
 * send's, or the receive fails with FMPL_ERR_SHAPE and nothing is written
 * (the sender gets FMPL_ERR_SHAPE too when it met the posted receive; a
 * send already copied aside is dropped with a message on stderr, and one
 * of at most 16 bytes that went early, as fmpl_send's small messages go,
 * returned FMPL_SUCCESS).  The
 * receive's ld may differ from the send's.  The data goes straight from the sender's matrix into the
 * receiver's, strided on both sides where the transport can (no packing).
 *
 * fmpl_comm_sendm is LOCALLY BLOCKING: it returns once `a` may be reused.
 * When the receive is not posted yet it waits about as long as copying
 * the message would take, then copies the message aside and returns; any
 * later FMPL call (or the progress thread) delivers it.  So two members
 * may both send to each other before either receives.  fmpl_comm_recvm
 * blocks until the message is in `a`.  dst == src == own rank works.
 *
 * Errors: FMPL_ERR_COMM, FMPL_ERR_RANK, FMPL_ERR_ARG (shape: esize 0, ld <
 * m, bad uplo/diag), FMPL_ERR_BUFFER (NULL with elements), FMPL_ERR_SHAPE,
 * FMPL_ERR_NOMEM, FMPL_ERR_PEER.
 */
int fmpl_comm_sendm(const void *a, const fmpl_matrix_t *shape, int dst, fmpl_comm_t comm);
int fmpl_comm_recvm(void *a, const fmpl_matrix_t *shape, int src, fmpl_comm_t comm);
/* The number of elements of a shape (0 for an invalid one). */
size_t fmpl_matrix_count(const fmpl_matrix_t *shape);
/*
 * fmpl_matrix_pack - copy the elements of matrix `a` (column by column,
 * each column's rows in order) into the contiguous `out`;
 * fmpl_matrix_unpack - the reverse, writing only the shape's elements of
 * `a`.  FMPL_ERR_ARG for an invalid shape.
 */
int fmpl_matrix_pack(const void *a, const fmpl_matrix_t *shape, void *out);
int fmpl_matrix_unpack(const void *in, const fmpl_matrix_t *shape, void *a);

/* ------------------------------------------------------------------ */
/* Collectives                                                          */
/* ------------------------------------------------------------------ */
/*
 * Reduction operations.  Predefined: sum, ABSOLUTE maximum, ABSOLUTE
 * minimum (BLACS semantics) over the element types
 *   i  int             s  float           d  double
 *   c  float complex   z  double complex  (pairs re, im)
 * The complex max/min compare |re| + |im|, as the BLACS do; an absolute
 * max/min returns the element itself, with its sign.  Ties are broken the
 * same way on every process, so every process gets bitwise the same
 * result.
 */
typedef int fmpl_op_t;
enum {
    fmpl_isum = 1, fmpl_ssum, fmpl_dsum, fmpl_csum, fmpl_zsum,
    fmpl_imax, fmpl_smax, fmpl_dmax, fmpl_cmax, fmpl_zmax,
    fmpl_imin, fmpl_smin, fmpl_dmin, fmpl_cmin, fmpl_zmin
};
/*
 * fmpl_op_create - a user operation on elements of `elem_size` bytes:
 * fn(inout, in, count) sets inout[i] = inout[i] (op) in[i].  The operation
 * must be associative and commutative.  Local (not collective).
 * fmpl_op_free - release it; *op becomes 0.
 */
int fmpl_op_create(size_t elem_size, void (*fn)(void *inout, const void *in, int count),
                   fmpl_op_t *op);
int fmpl_op_free(fmpl_op_t *op);
/* fmpl_op_size - element size of `op` in bytes (0 for an invalid op). */
size_t fmpl_op_size(fmpl_op_t op);
/*
 * fmpl_op_apply - inout[i] = inout[i] (op) in[i] for `count` elements,
 * locally: the very operation (and tie rule) the reductions use, for
 * libraries that combine data on their own schedule.  FMPL_ERR_OP,
 * FMPL_ERR_ARG (count < 0, NULL with count > 0).
 */
int fmpl_op_apply(fmpl_op_t op, void *inout, const void *in, int count);

/*
 * fmpl_barrier - return once every member has entered.  FMPL_COMM_WORLD
 * uses the transport's hardware barrier where it has one (shm: one shared
 * counter; tcw: the SR8000's hmpc_barrier, when the ranks are on separate
 * nodes that fill a rectangle of the partition); other communicators a
 * dissemination barrier of single cache-line signals.
 */
int fmpl_barrier(fmpl_comm_t comm);

/*
 * fmpl_bcast - copy `size` bytes at `buf` of rank `root` of `comm` to `buf`
 * on every member.  The paper's binomial tree: up to 8 KiB of one-way
 * signals (tiny messages straight from the root), above of point-to-point
 * messages, pipelined in segments for large messages.  Every member
 * passes the same size.
 */
int fmpl_bcast(void *buf, size_t size, int root, fmpl_comm_t comm);
/*
 * fmpl_hbcast - the transport's hardware broadcast over all processes
 * (shm: the root writes one shared buffer, every reader copies from it;
 * tcw: the SR8000's broadcast through its serialising crossbar).
 * FMPL_ERR_UNSUPPORTED where the transport has none - and on tcw when one
 * of the paper's conditions fails (section 3.2): ranks sharing a node, a
 * partition that is not exclusive and global or overlaps a shared one,
 * nodes that do not fill a rectangle, or a buffer that is not at the same
 * offset of the same fmpl_alloc_mem area on every rank; the root says
 * which on stderr, and every rank gets the same answer.  That last check
 * costs an exchange, which is why fmpl_bcast does not try it.
 */
int fmpl_hbcast(void *buf, size_t size, int root);

/*
 * fmpl_reduce - combine `count` elements of `buf` over the members with
 * `func`; the result replaces `buf` at `root`.  On the other members `buf`
 * holds a partial result afterwards (as in the paper: the call works in
 * place).  `work` is scratch space of the size of buf; NULL lets the
 * library allocate it.  Small messages by binomial tree, large by
 * reduce-scatter + gather.
 * fmpl_allreduce - the same with the result in `buf` on every member;
 * every member gets bitwise the same result.  Small messages by recursive
 * doubling, large by reduce-scatter + allgather.
 */
int fmpl_reduce(void *buf, int count, fmpl_op_t func, int root, fmpl_comm_t comm,
                void *work);
int fmpl_allreduce(void *buf, int count, fmpl_op_t func, fmpl_comm_t comm, void *work);

/*
 * fmpl_allgather - every member contributes `size` bytes at `sendbuf`;
 * `recvbuf` (size x comm size bytes) receives them in rank order on every
 * member.  In place: sendbuf == recvbuf + rank * size.  Recursive doubling
 * for powers of two, a ring otherwise and for large messages.
 * fmpl_gather - the same, with the result at `root` only (recvbuf is
 * ignored elsewhere and may be NULL).
 * fmpl_scatter - rank `root` sends block i of `sendbuf` (size x comm size
 * bytes) to rank i, which receives it in `recvbuf` (`size` bytes);
 * sendbuf is ignored except at root.  In place at root: recvbuf ==
 * sendbuf + root * size.
 */
int fmpl_allgather(const void *sendbuf, size_t size, void *recvbuf, fmpl_comm_t comm);
int fmpl_gather(const void *sendbuf, size_t size, void *recvbuf, int root, fmpl_comm_t comm);
int fmpl_scatter(const void *sendbuf, size_t size, void *recvbuf, int root, fmpl_comm_t comm);

/*
 * The v-variants: block i has its own size and place.  sizes[] and
 * displs[] (bytes, one per member) describe the blocks of the buffer that
 * holds all of them; a block that arrives is at most as large as the
 * receiver's size for it (shorter is allowed, longer is FMPL_ERR_TRUNCATE
 * on both sides).  Every pair exchanges a message even when its size is
 * 0, so that a size one side gives and the other does not know is an
 * error rather than a hang.
 * fmpl_allgatherv - member i contributes `size` bytes, which must be
 * sizes[i] (FMPL_ERR_ARG otherwise), and they land at recvbuf + displs[i]
 * on every member; sizes[] and displs[] are the same on every member.  In place: sendbuf == recvbuf + displs[rank].
 * fmpl_gatherv - the same at `root` only: sizes[], displs[] and recvbuf
 * are read at root only (NULL elsewhere).  In place at root as above.
 * fmpl_scatterv - root sends sizes[i] bytes at sendbuf + displs[i] to
 * rank i, which receives them in `recvbuf` of `size` bytes; sendbuf,
 * sizes[] and displs[] are read at root only.  In place at root:
 * recvbuf == sendbuf + displs[root].
 */
int fmpl_allgatherv(const void *sendbuf, size_t size, void *recvbuf, const size_t sizes[],
                    const size_t displs[], fmpl_comm_t comm);
int fmpl_gatherv(const void *sendbuf, size_t size, void *recvbuf, const size_t sizes[],
                 const size_t displs[], int root, fmpl_comm_t comm);
int fmpl_scatterv(const void *sendbuf, const size_t sizes[], const size_t displs[],
                  void *recvbuf, size_t size, int root, fmpl_comm_t comm);

/*
 * fmpl_alltoall - block j (`size` bytes at sendbuf + j * size) goes to
 * member j, and the block from member i lands at recvbuf + i * size.  In
 * place: sendbuf == recvbuf (any other overlap is FMPL_ERR_BUFFER).
 * fmpl_alltoallv - sendsizes[j] bytes at sendbuf + sdispls[j] go to
 * member j; recvsizes[i] bytes at recvbuf + rdispls[i] receive member i's
 * (a shorter block is allowed, a longer one is FMPL_ERR_TRUNCATE); every
 * pair exchanges a message, of 0 bytes too.  Not in place: the span the
 * send blocks cover must not overlap that of the receive blocks
 * (FMPL_ERR_BUFFER).
 * Small blocks among few members go to everybody at once as one-way
 * signals; otherwise each member receives every block straight into its
 * place, pairs exchanging in the order of increasing distance (rank + s,
 * rank - s) with a window of messages in flight.
 */
int fmpl_alltoall(const void *sendbuf, size_t size, void *recvbuf, fmpl_comm_t comm);
int fmpl_alltoallv(const void *sendbuf, const size_t sendsizes[], const size_t sdispls[],
                   void *recvbuf, const size_t recvsizes[], const size_t rdispls[],
                   fmpl_comm_t comm);

/*
 * fmpl_reduce_scatter - reduce `sendbuf` (counts[0] + ... + counts[n-1]
 * elements, counts[] the same on every member) element by element over
 * the members with `func`, and give member i block i of the result
 * (counts[i] elements, after those of the blocks before it) in
 * `recvbuf`.  sendbuf is not changed; sendbuf == recvbuf is allowed (the
 * block is written at its start).  Up to 8 KiB in all by allreduce;
 * equal blocks on a power of two of members by recursive halving;
 * otherwise pairwise (n - 1 exchanges, each member combining its block).
 * fmpl_scan - recvbuf on member r = the reduction over members 0..r of
 * sendbuf (inclusive prefix); fmpl_exscan - over members 0..r-1, and
 * recvbuf of member 0 is left as it was.  `count` elements; sendbuf ==
 * recvbuf is allowed.  Each element is combined in one fixed order, so a
 * call repeated with the same data gives bitwise the same result.
 * Recursive doubling (log2 n exchanges of the whole vector).
 */
int fmpl_reduce_scatter(const void *sendbuf, void *recvbuf, const int counts[], fmpl_op_t func,
                        fmpl_comm_t comm);
int fmpl_scan(const void *sendbuf, void *recvbuf, int count, fmpl_op_t func, fmpl_comm_t comm);
int fmpl_exscan(const void *sendbuf, void *recvbuf, int count, fmpl_op_t func,
                fmpl_comm_t comm);

/*
 * Nonblocking collectives: the same calls as the blocking ones with a
 * request last.  The call checks its arguments, starts the collective
 * and returns; fmpl_test() tells whether it has completed and fmpl_wait()
 * waits for it (a completed request still needs its fmpl_wait, which then
 * returns at once with the outcome).  Until then the buffers are the
 * library's: the user must not read what it receives nor write what it
 * sends (ireduce and iallreduce work in place: neither).
 *   Order: every member starts the collectives of a communicator in the
 * same order, blocking and nonblocking interleaved as it likes; their
 * messages are told apart without tags because the nonblocking ones of
 * a communicator run one after the other, in that order, on an index of
 * their own (so a later one may complete only after an earlier one on
 * the same communicator has; on different communicators they are
 * independent), while the blocking ones use other indices.
 *   Progress: a collective advances whenever its process is in an FMPL
 * call (fmpl_test included) or, with FMPL_PROGRESS_THREAD=1, by itself;
 * on dcfa with FMPL_DCFA_OFFLOAD, the host's agent runs the ones without
 * reductions (they leave the order above when they start, and still
 * complete in it).
 *   Errors: argument errors are returned by the call and start nothing;
 * a dead peer ends the request with FMPL_ERR_PEER.  fmpl_comm_free of a
 * communicator with collectives under way is FMPL_ERR_BUSY.
 */
int fmpl_ibarrier(fmpl_comm_t comm, fmpl_request_t *req);
int fmpl_ibcast(void *buf, size_t size, int root, fmpl_comm_t comm, fmpl_request_t *req);
int fmpl_ireduce(void *buf, int count, fmpl_op_t func, int root, fmpl_comm_t comm,
                 fmpl_request_t *req);
int fmpl_iallreduce(void *buf, int count, fmpl_op_t func, fmpl_comm_t comm,
                    fmpl_request_t *req);
int fmpl_iallgather(const void *sendbuf, size_t size, void *recvbuf, fmpl_comm_t comm,
                    fmpl_request_t *req);
int fmpl_igather(const void *sendbuf, size_t size, void *recvbuf, int root, fmpl_comm_t comm,
                 fmpl_request_t *req);
int fmpl_iscatter(const void *sendbuf, size_t size, void *recvbuf, int root, fmpl_comm_t comm,
                  fmpl_request_t *req);
int fmpl_ialltoall(const void *sendbuf, size_t size, void *recvbuf, fmpl_comm_t comm,
                   fmpl_request_t *req);

/*
 * fmpl_neighbor_alltoallv - a sparse all-to-all: this member sends
 * sendsizes[i] bytes at sendbuf + sdispls[i] to member dsts[i] (i <
 * ndst) and receives recvsizes[i] bytes at recvbuf + rdispls[i] from
 * member srcs[i] (i < nsrc); ranks of `comm`.  The lists must agree:
 * member a names b as a destination as often as b names a as a source,
 * and the k-th block a sends to b is the k-th b receives from a (shorter
 * is allowed, longer is FMPL_ERR_TRUNCATE).  Members that exchange
 * nothing pass ndst = nsrc = 0 but still call it.  Each block is written
 * once, from its place in sendbuf straight into its place in recvbuf.
 * fmpl_ineighbor_alltoallv - the same, nonblocking (as the collectives
 * above: fmpl_test, fmpl_wait, same ordering rules).
 * fmpl_neighbor_init - keep the lists and buffers (copied; local, not
 * collective) for an exchange repeated many times: each
 * fmpl_neighbor_start starts one, as fmpl_ineighbor_alltoallv would, and
 * its request completes it; the buffers must stay where they are until
 * fmpl_neighbor_free (*nb becomes NULL).  The structured case, a
 * Cartesian grid's faces, is fmpl_halo_init below.
 * Errors: FMPL_ERR_COMM, FMPL_ERR_RANK (a neighbour not in comm),
 * FMPL_ERR_ARG (negative counts, NULL lists with counts, NULL req or nb),
 * FMPL_ERR_BUFFER (NULL buffer with a non-zero block), FMPL_ERR_NOMEM;
 * the request: FMPL_ERR_TRUNCATE, FMPL_ERR_PEER.
 */
typedef struct fmpl_neighbor *fmpl_neighbor_t;
int fmpl_neighbor_alltoallv(const void *sendbuf, int ndst, const int dsts[],
                            const size_t sendsizes[], const size_t sdispls[], void *recvbuf,
                            int nsrc, const int srcs[], const size_t recvsizes[],
                            const size_t rdispls[], fmpl_comm_t comm);
int fmpl_ineighbor_alltoallv(const void *sendbuf, int ndst, const int dsts[],
                             const size_t sendsizes[], const size_t sdispls[], void *recvbuf,
                             int nsrc, const int srcs[], const size_t recvsizes[],
                             const size_t rdispls[], fmpl_comm_t comm, fmpl_request_t *req);
int fmpl_neighbor_init(const void *sendbuf, int ndst, const int dsts[], const size_t sendsizes[],
                       const size_t sdispls[], void *recvbuf, int nsrc, const int srcs[],
                       const size_t recvsizes[], const size_t rdispls[], fmpl_comm_t comm,
                       fmpl_neighbor_t *nb);
int fmpl_neighbor_start(fmpl_neighbor_t nb, fmpl_request_t *req);
int fmpl_neighbor_free(fmpl_neighbor_t *nb);

/* ------------------------------------------------------------------ */
/* Persistent halo exchange                                             */
/* ------------------------------------------------------------------ */
/*
 * The reflect_init / reflect_do of the hybrid-communication paper as a
 * library call.  An array of `ndims` (2 or 3) dimensions in C order (the
 * last index varies fastest), elements of `elem_size` bytes, is
 * distributed on a Cartesian process grid.  Along dimension d the local
 * array holds extent[d] interior elements plus shadow[d] shadow elements
 * on each side: its allocated extent is extent[d] + 2 * shadow[d].
 * nbr[2*d] is the rank (in `comm`) of the lower neighbour along d and
 * nbr[2*d+1] the upper one; -1 for none (a physical boundary).  Periodic
 * grids name the wrap-around neighbours, possibly this process itself.
 *
 * fmpl_halo_init (collective over comm) classifies each face as
 *   block         one contiguous piece             sent as it lies
 *   block-stride  pieces of 64 bytes or more at a  written strided, no
 *                 stride                           packing, when the
 *                                                  transport can
 *   stride        shorter pieces                   packed and unpacked
 * and exchanges the addresses once.  fmpl_halo_do sends every face to its
 * neighbour and waits until every shadow is filled.  By default the
 * dimensions are exchanged one after the other: the face of dimension d
 * spans dimensions before d whole (shadows included) and only the
 * interior of those after d, so edge and corner shadows are filled too
 * (diagonal stencils) and every shadow element is written once.
 * FMPL_HALO_FACES exchanges all faces at once, interiors only, without
 * corners.  For an array [ni][nj][nk] split in i and j with no shadow in
 * k, the i faces are blocks (one i-plane is one piece when the width is 1)
 * and the j faces block-stride, as in the hybrid paper.  A bad argument on
 * any member makes every member fail (that member with its own code, the
 * others with FMPL_ERR_ARG).  The array must stay where it is until
 * fmpl_halo_free.
 */
typedef struct fmpl_halo *fmpl_halo_t;
#define FMPL_HALO_FACES 1u
enum { FMPL_HALO_NONE = 0, FMPL_HALO_BLOCK = 1, FMPL_HALO_BLOCK_STRIDE = 2,
       FMPL_HALO_STRIDE = 3 };
int fmpl_halo_init(void *array, size_t elem_size, int ndims, const int extent[],
                   const int shadow[], const int nbr[], unsigned flags, fmpl_comm_t comm,
                   fmpl_halo_t *halo);
int fmpl_halo_do(fmpl_halo_t halo);
/*
 * fmpl_halo_start / fmpl_halo_test / fmpl_halo_wait - fmpl_halo_do in
 * parts, to compute while the faces travel (local calls; every member
 * starts each exchange, as each calls fmpl_halo_do).  Start returns once
 * the faces whose receivers were ready are on their way; test moves what
 * can move without waiting and sets *done to 1 when every shadow is
 * filled (the exchange is then over: no wait); wait returns when it is.
 * Between start and the end the user must not read the shadows nor write
 * the interior slabs that are sent (the faces of the exchange); the rest
 * of the interior is free.  Faces move while this process is in an FMPL
 * call: with dimensions one after the other a dimension's faces leave
 * only once the one before has arrived.  FMPL_ERR_BUSY: start or
 * fmpl_halo_do (or fmpl_halo_free) of an exchange under way;
 * FMPL_ERR_REQUEST: test or wait of one not started.
 */
int fmpl_halo_start(fmpl_halo_t halo);
int fmpl_halo_test(fmpl_halo_t halo, int *done);
int fmpl_halo_wait(fmpl_halo_t halo);
/* fmpl_halo_kind - how dimension d's faces travel (FMPL_HALO_BLOCK...). */
int fmpl_halo_kind(fmpl_halo_t halo, int d);
/* fmpl_halo_free - collective over comm; *halo becomes NULL.  FMPL_ERR_BUSY
 * while an exchange is under way. */
int fmpl_halo_free(fmpl_halo_t *halo);

/* ------------------------------------------------------------------ */
/* Fortran                                                              */
/* ------------------------------------------------------------------ */
/*
 * Fortran bindings follow the paper: the same names with a trailing
 * underscore, every argument by reference, the error code `ier` last,
 * e.g. `call fmpl_send(buf, size, dst, mai, ier)`; sizes are INTEGER*8
 * in fmpl_send/recv/isend/irecv, requests are INTEGER*8 arrays of
 * FMPL_REQUEST_WORDS elements.  `include 'fmplf.h'` gives the constants;
 * `use fmpl` gives them too, with explicit interfaces of every binding
 * (src/fortran/fmpl_mod.f90: wrong arguments are compile errors).
 */
#define FMPL_REQUEST_WORDS ((sizeof(fmpl_request_t) + 7) / 8)

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif
#endif /* FMPL_H */
