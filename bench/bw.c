/*
 * bench/bw - FMPL streaming bandwidth.  Rank 0 sends windows of W
 * messages with fmpl_isend on indices 0..W-1 to rank 1, whose matching
 * fmpl_irecv (same indices) are posted before the window starts - the
 * receiver-initiated case FMPL is built for - and which answers each
 * window with a zero-byte ack.
 *
 *   fmplrun -n 2 bench/bw [-m MAXSIZE] [-s SIZE] [-i SCALE] [-a] [-w W]
 *
 * bench/mpi/bw is the same program over MPI (tags instead of indices).
 */
#include <fmpl.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"

#define BENCH_PROG "bw"
#include "bench_fmpl.h"

/* Every message of a window has its own buffer (so the data can be
 * verified and the receiver really streams), but at most this much is in
 * flight: a 16 MiB window of 64 would not fit in any cache or in RAM
 * comfortably.  32 MiB is this machine's L3 size. */
#define WINDOW_BYTES ((size_t)32 << 20)

struct window {
    char *buf;          /* w slots of `stride` bytes */
    size_t size;        /* message size */
    size_t stride;      /* cache-line multiple >= size: no false sharing */
    int w;              /* messages per window = indices 0..w-1 */
    fmpl_request_t *req;
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
    char ack;
    for (int j = 0; j < win->w; j++)
        CHECK(fmpl_isend(win->buf + j * win->stride, win->size, 1, j, &win->req[j]));
    for (int j = 0; j < win->w; j++)
        CHECK(fmpl_wait_isend(&win->req[j]));
    CHECK(fmpl_recv(&ack, 0, 1, 0));
}

static void post_window(struct window *win)
{
    for (int j = 0; j < win->w; j++)
        CHECK(fmpl_irecv(win->buf + j * win->stride, win->size, 0, j, &win->req[j]));
}

static unsigned seed_of(size_t size, int j)
{
    return (unsigned)size * 131u + (unsigned)j;
}

/* Rank 1: receive `nwin` windows.  The next window's receives are posted
 * before the ack, so rank 0 always finds them waiting.  The first window
 * carries the patterns rank 0 filled in: check them. */
static void receive_windows(struct window *win, long nwin)
{
    char ack = 0;
    for (int j = 0; j < win->w; j++)
        memset(win->buf + j * win->stride, 0, win->size);
    post_window(win);
    for (long k = 0; k < nwin; k++) {
        for (int j = 0; j < win->w; j++)
            CHECK(fmpl_wait_irecv(&win->req[j]));
        for (int j = 0; k == 0 && j < win->w; j++) {
            char *b = win->buf + j * win->stride;
            long off = bu_verify(b, win->size, seed_of(win->size, j));
            if (off >= 0) {
                bu_report_mismatch(BENCH_PROG, 1, win->size, off, b, seed_of(win->size, j));
                fmpl_abort(3);
            }
        }
        if (k + 1 < nwin)
            post_window(win);
        CHECK(fmpl_send(&ack, 0, 0, 0));
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
    int pr = bu_parse(argc, argv, BU_OPT_WINDOW, &o, &err);

    /* One matching-area index per message of a window. */
    CHECK(fmpl_init(o.window > 64 ? o.window : 64));
    bench_fmpl_clock();
    int rank = fmpl_rank(), np = fmpl_size();
    if (pr == 0 && np < 2) {
        err = "needs at least 2 processes";
        pr = -1;
    }
    if (pr != 0) {
        if (rank == 0) {
            if (err)
                fprintf(stderr, "%s: %s\n", BENCH_PROG, err);
            bu_usage(pr > 0 ? stdout : stderr, BENCH_PROG, BU_OPT_WINDOW);
        }
        fmpl_finalize();
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
    if (!win.req)
        bench_die("calloc", FMPL_ERR_NOMEM);
    if (o.use_alloc) {
        if (!(win.buf = fmpl_alloc_mem(bytes)))
            bench_die("fmpl_alloc_mem", FMPL_ERR_NOMEM);
        memset(win.buf, 0, bytes);   /* fault pages in outside the timing */
    } else {
        win.buf = bu_alloc(bytes);
    }

    if (rank == 0) {
        char note[96];
        snprintf(note, sizeof note, "window %d messages, fewer above %zu bytes "
                 "(at most 32 MiB in flight, at least 2)", o.window,
                 WINDOW_BYTES / (size_t)o.window);
        bu_print_header("FMPL", "bw", np, &o,
                        o.use_alloc ? "fmpl_alloc_mem" : "malloc", note,
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
        CHECK(fmpl_free_mem(win.buf));
    else
        bu_free(win.buf);
    free(win.req);
    CHECK(fmpl_finalize());
    return 0;
}
