/* nfq_delay - hold the packets of a netfilter queue for a random delay, then
 * let them go: the delay and reordering that this machine's kernel cannot
 * give by netem (not built), for the network-namespace hosts of the tests
 * (test/netns_fault.sh).
 *
 *   nfq_delay -q QUEUE -d MIN_US -D MAX_US [-r] [-s SEED]
 *
 * An iptables NFQUEUE rule (netns_fault.sh's delay and reorder) sends a
 * host's outgoing packets to QUEUE; each is held for a delay drawn
 * uniformly from [MIN_US, MAX_US] and then accepted.  Without -r the
 * packets leave in the order they came (a packet is never let go before
 * the one ahead of it, as netem's delay with a rate does): jitter without
 * reordering.  With -r each leaves at its own time, so later packets
 * overtake earlier ones.  Only metadata is read (no payload copies).
 *
 * Runs until SIGTERM or SIGINT; prints on exit how many packets it held
 * and how many it let go ahead of an earlier one ("reordered").  If it is
 * gone, the rule's --queue-bypass lets the packets through undelayed, and
 * the queue fails open when full: it never drops a packet itself.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <libnetfilter_queue/libnetfilter_queue.h>
#include <linux/netfilter.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    uint64_t at;                   /* when it goes, ns (CLOCK_MONOTONIC) */
    uint32_t id;                   /* the queue's packet id */
    uint64_t seq;                  /* arrival order */
} held_t;

static held_t *heap;               /* min-heap on (at, seq) */
static size_t nheld, cap;
static uint64_t dmin, dmax, last_at, arrived, reordered, max_seq_out;
static int reorder;
static uint64_t rng;
static volatile sig_atomic_t stop;

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static uint64_t next_rand(void)    /* xorshift64* */
{
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return rng * 2685821657736338717ull;
}

static int before(const held_t *a, const held_t *b)
{
    return a->at < b->at || (a->at == b->at && a->seq < b->seq);
}

static void push(held_t h)
{
    if (nheld == cap) {
        cap = cap ? 2 * cap : 4096;
        heap = realloc(heap, cap * sizeof *heap);
        if (!heap) {
            perror("nfq_delay: realloc");
            exit(1);
        }
    }
    size_t i = nheld++;
    while (i && before(&h, &heap[(i - 1) / 2])) {
        heap[i] = heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    heap[i] = h;
}

static held_t pop(void)
{
    held_t top = heap[0], last = heap[--nheld];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= nheld)
            break;
        if (c + 1 < nheld && before(&heap[c + 1], &heap[c]))
            c++;
        if (!before(&heap[c], &last))
            break;
        heap[i] = heap[c];
        i = c;
    }
    if (nheld)
        heap[i] = last;
    return top;
}

static int on_packet(struct nfq_q_handle *qh, struct nfgenmsg *msg, struct nfq_data *nfa,
                     void *arg)
{
    (void)qh; (void)msg; (void)arg;
    struct nfqnl_msg_packet_hdr *ph = nfq_get_msg_packet_hdr(nfa);
    if (!ph)
        return 0;
    uint64_t d = dmin + (dmax > dmin ? next_rand() % (dmax - dmin + 1) : 0);
    held_t h = { now_ns() + d, ntohl(ph->packet_id), ++arrived };
    if (!reorder && h.at < last_at)
        h.at = last_at;            /* never ahead of the packet before it */
    last_at = h.at;
    push(h);
    return 0;
}

static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

static uint64_t number(const char *s, const char *what)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *end) {
        fprintf(stderr, "nfq_delay: %s: not a number: '%s'\n", what, s);
        exit(2);
    }
    return v;
}

int main(int argc, char **argv)
{
    int qnum = -1, o;
    uint64_t seed = 1;
    dmin = dmax = UINT64_MAX;
    while ((o = getopt(argc, argv, "q:d:D:rs:")) != -1) {
        switch (o) {
        case 'q': qnum = (int)number(optarg, "-q"); break;
        case 'd': dmin = number(optarg, "-d") * 1000; break;
        case 'D': dmax = number(optarg, "-D") * 1000; break;
        case 'r': reorder = 1; break;
        case 's': seed = number(optarg, "-s"); break;
        default:
            fprintf(stderr, "usage: nfq_delay -q QUEUE -d MIN_US -D MAX_US [-r] [-s SEED]\n");
            return 2;
        }
    }
    if (qnum < 0 || qnum > 65535 || dmin == UINT64_MAX || dmax == UINT64_MAX || dmax < dmin) {
        fprintf(stderr, "nfq_delay: need -q QUEUE (0-65535), -d MIN_US and -D MAX_US >= MIN_US\n");
        return 2;
    }
    rng = seed * 0x9E3779B97F4A7C15ull | 1;

    struct nfq_handle *h = nfq_open();
    if (!h) {
        perror("nfq_delay: nfq_open");
        return 1;
    }
    struct nfq_q_handle *qh = nfq_create_queue(h, (uint16_t)qnum, on_packet, NULL);
    if (!qh) {
        fprintf(stderr, "nfq_delay: cannot bind queue %d: %s\n", qnum, strerror(errno));
        return 1;
    }
    if (nfq_set_mode(qh, NFQNL_COPY_META, 0) < 0 || nfq_set_queue_maxlen(qh, 65536) < 0) {
        perror("nfq_delay: queue settings");
        return 1;
    }
    /* full queue: let packets through rather than drop them (a drop is
     * the loss conditions' business, not this one's) */
    nfq_set_queue_flags(qh, NFQA_CFG_F_FAIL_OPEN, NFQA_CFG_F_FAIL_OPEN);
    int fd = nfq_fd(h);
    nfnl_rcvbufsiz(nfq_nfnlh(h), 8u << 20);

    struct sigaction sa = { .sa_handler = on_signal };
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    printf("nfq_delay: queue %d, %llu-%llu us%s\n", qnum, (unsigned long long)(dmin / 1000),
           (unsigned long long)(dmax / 1000), reorder ? ", reordering" : ", in order");
    fflush(stdout);

    static char buf[65536] __attribute__((aligned));
    uint64_t held = 0, lost_verdicts = 0;
    while (!stop) {
        uint64_t t = now_ns();
        while (nheld && heap[0].at <= t) {
            held_t p = pop();
            if (p.seq < max_seq_out)
                reordered++;
            else
                max_seq_out = p.seq;
            if (nfq_set_verdict(qh, p.id, NF_ACCEPT, 0, NULL) < 0)
                lost_verdicts++;
            held++;
        }
        struct timespec ts, *tp = NULL;
        if (nheld) {
            uint64_t d = heap[0].at - t;
            ts.tv_sec = (time_t)(d / 1000000000u);
            ts.tv_nsec = (long)(d % 1000000000u);
            tp = &ts;
        }
        struct pollfd pf = { fd, POLLIN, 0 };
        int n = ppoll(&pf, 1, tp, NULL);
        if (n > 0) {
            ssize_t r = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
            if (r > 0)
                nfq_handle_packet(h, buf, (int)r);
            else if (r < 0 && errno == ENOBUFS)
                fprintf(stderr, "nfq_delay: queue %d: the kernel's socket buffer overflowed\n",
                        qnum);
        }
    }
    /* let everything still held go before the queue closes */
    while (nheld) {
        held_t p = pop();
        nfq_set_verdict(qh, p.id, NF_ACCEPT, 0, NULL);
        held++;
    }
    nfq_destroy_queue(qh);
    nfq_close(h);
    printf("nfq_delay: queue %d: %llu packets held, %llu reordered%s\n", qnum,
           (unsigned long long)held, (unsigned long long)reordered,
           lost_verdicts ? " (some verdicts failed)" : "");
    return 0;
}
