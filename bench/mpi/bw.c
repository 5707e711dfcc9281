/*
 * bench/mpi/bw - MPI streaming bandwidth, the reference for bench/bw.
 * Rank 0 sends windows of W messages (MPI_Isend, tags 0..W-1) to rank 1,
 * which has its matching MPI_Irecv posted before the window starts and
 * answers each window with a zero-byte ack.  Same structure, sweep and
 * output as bench/bw (bench_util).
 *
 *   mpirun -n 2 bench/mpi/bw [-m MAXSIZE] [-s SIZE] [-i SCALE] [-a] [-w W]
 */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"

static const char *prog = "mpi/bw";

/* Every message of a window has its own buffer (so the data can be
 * verified and the receiver really streams), but at most this much is in
 * flight: a 16 MiB window of 64 would not fit in any cache or in RAM
 * comfortably.  32 MiB is this machine's L3 size. */
#define WINDOW_BYTES ((size_t)32 << 20)

#define CHECK(call)                                                           \
    do {                                                                      \
        int rc_ = (call);                                                     \
        if (rc_ != MPI_SUCCESS) {                                             \
            fprintf(stderr, "%s: %s failed (%d)\n", prog, #call, rc_);        \
            MPI_Abort(MPI_COMM_WORLD, 2);                                     \
        }                                                                     \
    } while (0)

struct window {
    char *buf;          /* w slots of `stride` bytes */
    size_t size;        /* message size */
    size_t stride;      /* cache-line multiple >= size: no false sharing */
    int w;              /* messages per window */
    MPI_Request *req;
};

/* Messages in flight for one size: the requested window, shrunk so that
 * w * size <= WINDOW_BYTES, but at least 2 so sends still overlap. */
static int window_for(size_t size, int want)
{
    if (size > 0 && (size_t)want * size > WINDOW_BYTES) {
        size_t w = WINDOW_BYTES / size;
        return w < 2 ? 2 : (int)w;
    }
    return want;
}

static size_t stride_for(size_t size)
{
    return size ? (size + 63) / 64 * 64 : 64;
}

static void send_window(struct window *win)
{
    for (int j = 0; j < win->w; j++)
        CHECK(MPI_Isend(win->buf + j * win->stride, (int)win->size, MPI_BYTE,
                        1, j, MPI_COMM_WORLD, &win->req[j]));
    CHECK(MPI_Waitall(win->w, win->req, MPI_STATUSES_IGNORE));
    CHECK(MPI_Recv(NULL, 0, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
}

static void post_window(struct window *win)
{
    for (int j = 0; j < win->w; j++)
        CHECK(MPI_Irecv(win->buf + j * win->stride, (int)win->size, MPI_BYTE,
                        0, j, MPI_COMM_WORLD, &win->req[j]));
}

static unsigned seed_of(size_t size, int j)
{
    return (unsigned)size * 131u + (unsigned)j;
}

/* Rank 1: receive `nwin` windows.  The next window's receives are posted
 * before the ack, so no message of a window ever arrives unexpected.
 * The first window carries the patterns rank 0 filled in: check them. */
static void receive_windows(struct window *win, long nwin)
{
    for (int j = 0; j < win->w; j++)
        memset(win->buf + j * win->stride, 0, win->size);
    post_window(win);
    for (long k = 0; k < nwin; k++) {
        CHECK(MPI_Waitall(win->w, win->req, MPI_STATUSES_IGNORE));
        for (int j = 0; k == 0 && j < win->w; j++) {
            char *b = win->buf + j * win->stride;
            long off = bu_verify(b, win->size, seed_of(win->size, j));
            if (off >= 0) {
                bu_report_mismatch(prog, 1, win->size, off, b, seed_of(win->size, j));
                MPI_Abort(MPI_COMM_WORLD, 3);
            }
        }
        if (k + 1 < nwin)
            post_window(win);
        CHECK(MPI_Send(NULL, 0, MPI_BYTE, 0, 0, MPI_COMM_WORLD));
    }
}

/* One size on both ranks: a verified window, warm-up windows, then
 * BU_REPS timed batches (rank 0 times from first send to last ack).
 * Returns the median batch time per window in seconds (rank 0). */
static double run_size(int rank, struct window *win, long iters)
{
    long warm = iters / 10 + 2;
    double t[BU_REPS];

    if (rank == 1) {
        receive_windows(win, 1 + warm + BU_REPS * iters);
        return 0;
    }
    for (int j = 0; j < win->w; j++)
        bu_fill(win->buf + j * win->stride, win->size, seed_of(win->size, j));
    for (long i = 0; i < 1 + warm; i++)
        send_window(win);
    for (int r = 0; r < BU_REPS; r++) {
        double t0 = bu_now();
        for (long i = 0; i < iters; i++)
            send_window(win);
        t[r] = (bu_now() - t0) / (double)iters;
    }
    return bu_median(t, BU_REPS);
}

int main(int argc, char **argv)
{
    struct bu_opts o;
    const char *err;
    int rank, np;
    int pr = bu_parse(argc, argv, BU_OPT_WINDOW, &o, &err);

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (pr == 0 && np < 2) {
        err = "needs at least 2 processes";
        pr = -1;
    }
    if (pr == 0 && bu_sweep_max(&o) > (size_t)1 << 30) {
        err = "sizes above 1G are not supported (MPI int counts)";
        pr = -1;
    }
    if (pr != 0) {
        if (rank == 0) {
            if (err)
                fprintf(stderr, "%s: %s\n", prog, err);
            bu_usage(pr > 0 ? stdout : stderr, prog, BU_OPT_WINDOW);
        }
        MPI_Finalize();
        return pr > 0 ? 0 : 2;
    }

    /* One allocation big enough for the largest window of the sweep. */
    size_t bytes = 0;
    for (size_t s = bu_first_size(&o); s != BU_SIZE_END; s = bu_next_size(&o, s)) {
        size_t b = (size_t)window_for(s, o.window) * stride_for(s);
        bytes = b > bytes ? b : bytes;
    }
    struct window win;
    win.req = calloc((size_t)o.window, sizeof *win.req);   /* -w may be big */
    if (!win.req) {
        fprintf(stderr, "%s: out of memory\n", prog);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (o.use_alloc) {
        CHECK(MPI_Alloc_mem((MPI_Aint)bytes, MPI_INFO_NULL, &win.buf));
        memset(win.buf, 0, bytes);
    } else {
        win.buf = bu_alloc(bytes);
    }

    if (rank == 0) {
        char note[96];
        snprintf(note, sizeof note, "window %d messages, fewer above %zu bytes "
                 "(at most 32 MiB in flight, at least 2)", o.window,
                 WINDOW_BYTES / (size_t)o.window);
        bu_print_header("MPI", "bw", np, &o,
                        o.use_alloc ? "MPI_Alloc_mem" : "malloc", note,
                        "bandwidth_MBps  kmsg_per_s");
    }
    if (rank < 2) {
        for (size_t s = bu_first_size(&o); s != BU_SIZE_END; s = bu_next_size(&o, s)) {
            win.size = s;
            win.stride = stride_for(s);
            win.w = window_for(s, o.window);
            /* ~200 MiB per batch keeps the biggest sizes near 0.2 s. */
            long iters = bu_iters(s * (size_t)win.w, 200, 200.0 * (1 << 20),
                                  o.iter_scale);
            double t = run_size(rank, &win, iters);
            double cols[2] = { (double)s * win.w / t / 1e6, win.w / t / 1e3 };
            if (rank == 0)
                bu_print_row(s, 2, cols);
        }
    }
    if (o.use_alloc)
        MPI_Free_mem(win.buf);
    else
        bu_free(win.buf);
    free(win.req);
    MPI_Finalize();
    return 0;
}
