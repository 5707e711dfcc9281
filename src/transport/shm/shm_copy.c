/*
 * shm_copy.c - how a receiver copies a stream out when the message will
 * not stay in the caches anyway.
 *
 * A streamed message at least half the last-level cache is copied out of
 * the FIFO with non-temporal stores: the destination's lines are not read
 * first (ordinary stores fetch each line before they write it) and do not
 * push the FIFO and the sender's source out of the cache.  Smaller ones
 * may be read again soon from the cache, so they get ordinary stores.  On
 * the 2-vCPU EPYC VM (32 MiB L3; bench/bw and bench/latency, interleaved
 * runs) every stream copied out so: 16 MiB streaming 1.30x and 8 MiB
 * 1.38x, 16 MiB one-way 0.70-0.90x, but 8 MiB one-way 1.33x (a ping-pong
 * of 8 MiB keeps its 32 MiB in the L3) - hence the half; from half on:
 * 16 MiB streaming 1.07x, one-way 0.93x (8 runs).  glibc's memcpy makes
 * the same choice for one large copy; a FIFO hands it 32 KiB at a time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "transport/shm/shm.h"

/* The largest cache of cpu0 as sysfs describes it, 0 if it does not. */
size_t fmpl_shm_llc_bytes(void)
{
    size_t best = 0;
    for (int i = 0; i < 8; i++) {
        char path[96], buf[32];
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
        FILE *f = fopen(path, "r");
        if (!f)
            break;
        char *ok = fgets(buf, sizeof buf, f);
        fclose(f);
        if (!ok)
            continue;
        char *end;
        unsigned long long v = strtoull(buf, &end, 10);
        if (*end == 'K')
            v <<= 10;
        else if (*end == 'M')
            v <<= 20;
        if (v > best)
            best = (size_t)v;
    }
    return best;
}

void fmpl_shm_copy_nt(void *dst, const void *src, size_t n)
{
#if defined(__SSE2__)
    uint8_t *d = dst;
    const uint8_t *s = src;
    size_t head = (16 - ((uintptr_t)d & 15)) & 15;
    if (n < head + 64) {
        memcpy(d, s, n);
        return;
    }
    memcpy(d, s, head);
    d += head;
    s += head;
    n -= head;
    for (; n >= 64; n -= 64, d += 64, s += 64) {
        __m128i a = _mm_loadu_si128((const __m128i *)(const void *)s);
        __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(s + 16));
        __m128i c = _mm_loadu_si128((const __m128i *)(const void *)(s + 32));
        __m128i e = _mm_loadu_si128((const __m128i *)(const void *)(s + 48));
        _mm_stream_si128((__m128i *)(void *)d, a);
        _mm_stream_si128((__m128i *)(void *)(d + 16), b);
        _mm_stream_si128((__m128i *)(void *)(d + 32), c);
        _mm_stream_si128((__m128i *)(void *)(d + 48), e);
    }
    memcpy(d, s, n);
    /* the stores above are weakly ordered: before the record that says
     * the data is there (written after this with release order) */
    _mm_sfence();
#else
    memcpy(dst, src, n);
#endif
}
