/*
 * fuzz_input.h - the input of a harness that acts out a peer, read as a
 * stream: a byte or some bytes at a time, zeros once it is spent (so a
 * short input is a peer that stops, never a read past it).  One stream
 * per harness process: fuzz_start() sets it for each input.
 */
#ifndef FMPL_FUZZ_INPUT_H
#define FMPL_FUZZ_INPUT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static const uint8_t *in_p;
static size_t in_n;

static inline void fuzz_start(const uint8_t *data, size_t n)
{
    in_p = data;
    in_n = n;
}
static inline int spent(void) { return in_n == 0; }
static inline unsigned byte(void)
{
    if (!in_n)
        return 0;
    in_n--;
    return *in_p++;
}
static inline void bytes(void *dst, size_t n)
{
    size_t k = n < in_n ? n : in_n;
    memcpy(dst, in_p, k);
    memset((uint8_t *)dst + k, 0, n - k);
    in_p += k;
    in_n -= k;
}

#endif
