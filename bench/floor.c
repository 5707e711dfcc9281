/*
 * bench/floor - what this machine can do with no library at all, the
 * floor that bench/latency and bench/bw are judged against:
 *
 *   cacheline_oneway  two threads pinned to two CPUs (0 and 1, or the first
 *                     two this process may use) bounce a counter through
 *                     two cache lines; one-way time in ns.  No message
 *                     passing between two cores can beat it: a message
 *                     needs at least one cache line to move.
 *   memcpy            single-core memcpy bandwidth (MB/s = 1e6 bytes copied
 *                     per second): the best a one-copy transfer can do.
 *   cma               the kernel's copy between two processes' memory
 *                     (Linux cross-memory attach, process_vm_readv, here
 *                     from this process to itself), one core, 16 MiB:
 *                     what a single copy into another process's ordinary
 *                     (malloc) memory can do without a kernel module.  It
 *                     pins the pages and copies in the kernel a page at a
 *                     time; on the 2-vCPU VM this was written on it moved
 *                     5.6-11 GB/s where memcpy moved 20-32 (both with the
 *                     host's load).
 *
 * Plain C and pthreads; runs alone, without a launcher: bench/floor
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "bench_util.h"

#define PINGPONG_ROUNDS 200000   /* round trips per run (~30 ms here) */
#define RUN_SECONDS 0.1          /* ... or fewer when they take longer */
#define RUNS 9                   /* median over runs, after one warm-up run */

/* Each side writes only its own line and spins reading the other's.  The
 * lines are 128 bytes apart so the adjacent-line prefetcher does not tie
 * them together. */
struct line {
    _Alignas(128) atomic_long v;
};
static struct line ping, pong;

static pthread_barrier_t start;
static int cpu_a, cpu_b;   /* the two CPUs of the ping-pong */

static int pin(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

/* The first two CPUs of our affinity mask (a container may not own 0-1).
 * Returns how many were found, at most 2. */
static int pick_cpus(void)
{
    cpu_set_t set;
    int n = 0;
    if (sched_getaffinity(0, sizeof set, &set))
        return 0;
    for (int c = 0; c < CPU_SETSIZE && n < 2; c++) {
        if (CPU_ISSET(c, &set)) {
            if (n++ == 0)
                cpu_a = c;
            else
                cpu_b = c;
        }
    }
    return n;
}

/* cpu_b: echo every value the ping side writes, until the run's stop
 * value -(run + 1) (distinct per run, so a stale one is never taken). */
static void *pong_thread(void *arg)
{
    int pinned = pin(cpu_b) == 0;
    long last = 0;
    (void)arg;
    /* Take part in every barrier even when unpinned, or main would hang. */
    for (int r = 0; r <= RUNS; r++) {
        pthread_barrier_wait(&start);
        for (;;) {
            long v;
            while ((v = atomic_load_explicit(&ping.v, memory_order_acquire)) == last)
                ;
            last = v;
            if (v == -(r + 1))
                break;
            atomic_store_explicit(&pong.v, v, memory_order_release);
        }
    }
    return pinned ? NULL : (void *)1;
}

/* cpu_a (the calling thread): write, wait for the echo; time each run. */
static int cacheline_pingpong(double *median, double *best)
{
    double ns[RUNS + 1];
    pthread_t t;
    void *ret;

    /* Start the echo thread before pinning ourselves: it inherits our
     * mask, and had it to share cpu_a with us after a failed pin, every
     * round trip would cost a scheduler time slice. */
    pthread_barrier_init(&start, NULL, 2);
    if (pthread_create(&t, NULL, pong_thread, NULL)) {
        fprintf(stderr, "floor: pthread_create failed\n");
        return -1;
    }
    int pinned = pin(cpu_a) == 0;
    long n = 0;
    for (int r = 0; r <= RUNS; r++) {
        pthread_barrier_wait(&start);
        double t0 = bu_now();
        long i = 0;
        /* Stop early past RUN_SECONDS: on a busy machine every round trip
         * may cost a time slice. */
        while (i < PINGPONG_ROUNDS && (i % 256 || bu_now() - t0 < RUN_SECONDS)) {
            n++;
            i++;
            atomic_store_explicit(&ping.v, n, memory_order_release);
            while (atomic_load_explicit(&pong.v, memory_order_acquire) != n)
                ;
        }
        ns[r] = (bu_now() - t0) / (double)i / 2 * 1e9;
        atomic_store_explicit(&ping.v, -(r + 1), memory_order_release);
    }
    pthread_join(t, &ret);
    pthread_barrier_destroy(&start);
    if (!pinned || ret) {
        fprintf(stderr, "floor: cannot pin to CPU %d\n", pinned ? cpu_b : cpu_a);
        return -1;
    }
    *median = bu_median(ns + 1, RUNS);   /* run 0 warmed up */
    *best = bu_min(ns + 1, RUNS);
    return 0;
}

typedef void *(*copy_t)(void *, const void *, size_t);

/* process_vm_readv from this process into itself: the kernel's copy
 * between two processes' memory.  NULL when the kernel refuses it (no
 * CMA, a ptrace policy), with errno set. */
static void *cma_copy(void *dst, const void *src, size_t size)
{
    struct iovec local = { dst, size }, remote = { (void *)src, size };
    return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)size ? dst : NULL;
}

/* Bandwidth of `copy` over `size` bytes: 0, or -1 when it failed.  The
 * copy is called through a volatile pointer so the compiler cannot
 * inline and then drop (or merge) copies whose result it can see is
 * never read. */
static int copy_bw(copy_t copy, const char *name, size_t size, double *median, double *best)
{
    copy_t volatile fn = copy;
    char *src = bu_alloc(size), *dst = bu_alloc(size);
    /* 256 MiB per run: 16 copies of 16 MiB, millions of 8-byte ones. */
    long iters = bu_iters(size, 4000000, 256.0 * (1 << 20), 1.0);
    double mbps[RUNS + 1];
    int ok = 1;

    bu_fill(src, size, 1);
    for (int r = 0; r <= RUNS && ok; r++) {
        double t0 = bu_now();
        for (long i = 0; i < iters && ok; i++)
            ok = fn(dst, src, size) != NULL;
        mbps[r] = (double)size * (double)iters / (bu_now() - t0) / 1e6;
    }
    if (ok && bu_verify(dst, size, 1) >= 0) {   /* the copies really happened */
        fprintf(stderr, "floor: %s produced wrong data\n", name);
        exit(3);
    }
    if (ok) {
        *median = bu_median(mbps + 1, RUNS);   /* run 0 warmed up */
        *best = bu_max(mbps + 1, RUNS);
    }
    bu_free(src);
    bu_free(dst);
    return ok ? 0 : -1;
}

int main(int argc, char **argv)
{
    static const size_t sizes[] = { 8, 64 << 10, 1 << 20, 16 << 20 };
    double med, best;
    int rc = 0;

    if (argc > 1) {
        int help = argc == 2 && !strcmp(argv[1], "-h");
        fprintf(help ? stdout : stderr,
                "usage: %s\n  the machine without any library: cache-line ping-pong "
                "between two CPUs,\n  single-core memcpy and cross-memory attach\n",
                argv[0]);
        return help ? 0 : 2;
    }
    printf("# Floor: this machine with no library (median and best of %d runs)\n"
           "# test              size          median            best  unit\n",
           RUNS);
    fflush(stdout);
    if (pick_cpus() < 2) {
        /* A one-CPU machine has no floor between two cores: not an error. */
        printf("# cacheline_oneway skipped: fewer than 2 CPUs available\n");
    } else if (cacheline_pingpong(&med, &best) == 0) {
        printf("%-16s %8d %15.2f %15.2f  ns   # CPUs %d and %d\n",
               "cacheline_oneway", 64, med, best, cpu_a, cpu_b);
    } else {
        rc = 1;
    }
    fflush(stdout);
    /* Still pinned to cpu_a when that worked: one core copies. */
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        copy_bw(memcpy, "memcpy", sizes[i], &med, &best);
        printf("%-16s %8zu %15.2f %15.2f  MBps\n", "memcpy", sizes[i], med, best);
        fflush(stdout);
    }
    if (copy_bw(cma_copy, "process_vm_readv", 16 << 20, &med, &best) == 0)
        printf("%-16s %8d %15.2f %15.2f  MBps\n", "cma", 16 << 20, med, best);
    else
        printf("# cma skipped: process_vm_readv refused (%s)\n", strerror(errno));
    return rc;
}
