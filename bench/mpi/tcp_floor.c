/*
 * bench/mpi/tcp_floor - the network with no message-passing library: what
 * plain TCP sockets between ranks 0 and 1 reach, the floor under FMPL's
 * libfabric tcp transport and under Open MPI's tcp BTL alike
 * (bench/compare_multihost prints it beside them).
 *
 *   mpirun -n 2 bench/mpi/tcp_floor [-i SCALE]
 *
 * MPI only starts the job and carries rank 0's addresses to rank 1; every
 * measured byte goes through one TCP connection (TCP_NODELAY) that the
 * two ranks open themselves, on the first of rank 0's IPv4 interfaces
 * (loopback last) that rank 1 reaches.
 *
 *   tcp_oneway_spin  8 B ping-pong, each side polling recv(MSG_DONTWAIT):
 *                    one-way time = round trip / 2, as bench/latency
 *                    reports it (both libraries spin while they wait)
 *   tcp_oneway_block the same with blocking recv (the wake-up included)
 *   tcp_stream       16 MiB messages, two per batch, then a 1-byte ack,
 *                    as bench/bw streams them, both sides polling
 *                    (MSG_DONTWAIT): payload MB/s
 *
 * Output as bench/floor: "test size median best unit", 9 batches each
 * (best = lowest time, highest bandwidth).  Only rank 0 prints.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <mpi.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bench_util.h"

static const char *prog = "mpi/tcp_floor";

#define NADDR   8
#define BATCHES 9
#define LAT_SIZE 8
#define BW_SIZE ((size_t)16 << 20)
#define BW_MSGS 2

struct card {
    int n;
    uint16_t port;                 /* network order */
    struct in_addr addr[NADDR];
};

static void die(const char *what)
{
    fprintf(stderr, "%s: %s: %s\n", prog, what, strerror(errno));
    MPI_Abort(MPI_COMM_WORLD, 2);
    exit(2);
}

/* Rank 0's IPv4 addresses, loopback last (a host's own name for itself
 * would hide the network we mean to measure). */
static void my_addrs(struct card *c)
{
    struct ifaddrs *ifs, *i;
    if (getifaddrs(&ifs) != 0)
        die("getifaddrs");
    for (int lo = 0; lo < 2; lo++)
        for (i = ifs; i && c->n < NADDR; i = i->ifa_next)
            if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET &&
                (i->ifa_flags & IFF_UP) && !!(i->ifa_flags & IFF_LOOPBACK) == lo)
                c->addr[c->n++] = ((struct sockaddr_in *)(void *)i->ifa_addr)->sin_addr;
    freeifaddrs(ifs);
}

static void nodelay(int s)
{
    int one = 1;
    if (setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0)
        die("TCP_NODELAY");
}

/* The connection: rank 0 listens and accepts, rank 1 connects. */
static int connect_pair(int rank)
{
    struct card c = { 0 };
    int s;
    if (rank == 0) {
        int l = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a = { .sin_family = AF_INET };
        socklen_t al = sizeof a;
        if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof a) != 0 || listen(l, 1) != 0 ||
            getsockname(l, (struct sockaddr *)&a, &al) != 0)
            die("listen");
        c.port = a.sin_port;
        my_addrs(&c);
        MPI_Send(&c, sizeof c, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
        s = accept(l, NULL, NULL);
        if (s < 0)
            die("accept");
        close(l);
    } else {
        MPI_Recv(&c, sizeof c, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        s = -1;
        for (int k = 0; k < c.n && s < 0; k++) {
            struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = c.port,
                                     .sin_addr = c.addr[k] };
            s = socket(AF_INET, SOCK_STREAM, 0);
            if (s >= 0 && connect(s, (struct sockaddr *)&a, sizeof a) != 0) {
                close(s);
                s = -1;
            }
        }
        if (s < 0)
            die("connect to rank 0");
    }
    nodelay(s);
    return s;
}

static void send_all(int s, const char *b, size_t n, int spin)
{
    while (n) {
        ssize_t k = send(s, b, n, spin ? MSG_DONTWAIT : 0);
        if (k < 0 && (errno == EAGAIN || errno == EINTR))
            continue;
        if (k <= 0)
            die("send");
        b += k;
        n -= (size_t)k;
    }
}

static void recv_all(int s, char *b, size_t n, int spin)
{
    while (n) {
        ssize_t k = recv(s, b, n, spin ? MSG_DONTWAIT : 0);
        if (k < 0 && (errno == EAGAIN || errno == EINTR))
            continue;
        if (k <= 0)
            die("recv");
        b += k;
        n -= (size_t)k;
    }
}

/* One batch of `iters` round trips; one-way seconds. */
static double pingpong(int s, int rank, long iters, int spin)
{
    char b[LAT_SIZE] = { 0 };
    double t0 = bu_now();
    for (long i = 0; i < iters; i++) {
        if (rank == 0) {
            send_all(s, b, sizeof b, spin);
            recv_all(s, b, sizeof b, spin);
        } else {
            recv_all(s, b, sizeof b, spin);
            send_all(s, b, sizeof b, spin);
        }
    }
    return (bu_now() - t0) / (2.0 * (double)iters);
}

/* One batch of BW_MSGS messages and the ack; payload bytes per second. */
static double stream(int s, int rank, char *buf)
{
    char ack = 0;
    double t0 = bu_now();
    for (int m = 0; m < BW_MSGS; m++) {
        if (rank == 0)
            send_all(s, buf, BW_SIZE, 1);
        else
            recv_all(s, buf, BW_SIZE, 1);
    }
    if (rank == 0)
        recv_all(s, &ack, 1, 1);
    else
        send_all(s, &ack, 1, 1);
    return (double)BW_SIZE * BW_MSGS / (bu_now() - t0);
}

static void row(const char *test, size_t size, double *v, int time, const char *unit)
{
    double med = bu_median(v, BATCHES);
    double best = time ? bu_min(v, BATCHES) : bu_max(v, BATCHES);
    double k = time ? 1e6 : 1e-6;
    printf("%-18s %8zu %15.2f %15.2f  %s\n", test, size, med * k, best * k, unit);
}

int main(int argc, char **argv)
{
    int rank, size;
    double scale = 1;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-i") == 0 && i + 1 < argc && (scale = atof(argv[++i])) > 0)
            continue;
        if (rank == 0)
            fprintf(stderr, "usage: %s [-i SCALE]\n", prog);
        MPI_Finalize();
        return 2;
    }
    if (size < 2) {
        if (rank == 0)
            fprintf(stderr, "%s: needs 2 ranks\n", prog);
        MPI_Finalize();
        return 2;
    }
    if (rank < 2) {
        MPI_Comm pair;
        MPI_Comm_split(MPI_COMM_WORLD, 0, rank, &pair);
        int s = connect_pair(rank);
        long iters = (long)(2000 * scale) > 2 ? (long)(2000 * scale) : 2;
        double spin[BATCHES], block[BATCHES], bw[BATCHES];
        char *buf = bu_alloc(BW_SIZE);
        pingpong(s, rank, iters / 10 + 1, 1);        /* warm up */
        for (int b = 0; b < BATCHES; b++) {
            MPI_Barrier(pair);
            spin[b] = pingpong(s, rank, iters, 1);
            MPI_Barrier(pair);
            block[b] = pingpong(s, rank, iters, 0);
        }
        /* back to back, after one untimed batch: an idle connection
         * starts again from a small congestion window */
        MPI_Barrier(pair);
        stream(s, rank, buf);
        for (int b = 0; b < BATCHES; b++)
            bw[b] = stream(s, rank, buf);
        if (rank == 0) {
            printf("# TCP floor: plain sockets between ranks 0 and 1 (TCP_NODELAY), "
                   "no library; median and best of %d batches\n", BATCHES);
            printf("# test                   size          median            best  unit\n");
            row("tcp_oneway_spin", LAT_SIZE, spin, 1, "us");
            row("tcp_oneway_block", LAT_SIZE, block, 1, "us");
            row("tcp_stream", BW_SIZE, bw, 0, "MBps");
        }
        bu_free(buf);
        close(s);
        MPI_Comm_free(&pair);
    } else {
        MPI_Comm idle;
        MPI_Comm_split(MPI_COMM_WORLD, MPI_UNDEFINED, rank, &idle);
    }
    MPI_Finalize();
    return 0;
}
