/*
 * fuzz_env - libFuzzer harness for FMPL's settings from the environment:
 * the parsers of base/parse.c against an oracle written here, the
 * readers of base/env.c, and the readers of the emulated machines'
 * settings (the SR8000's crossbar and timing model, PEACH2's and
 * InfiniBand's models), which take their variables whole from the user.
 *
 * Input: byte 0 picks what is tried, byte 1 a range or variable, bytes
 * 2-9 a range's ends, the rest (up to a NUL) is the value.
 *   parse_long, parse_size  the oracle parses the strict syntax itself
 *                           (sign, decimal or 0x digits, suffix) with
 *                           overflow checks: both must agree on whether
 *                           the value is accepted and on its value;
 *   parse_double            accepted means strtod read all of it, finite
 *                           and in range; a plain decimal in range must
 *                           be accepted;
 *   env_*                   a variable set to the value: success leaves
 *                           the parsed value, a failure FMPL_ERR_ARG and
 *                           the default;
 *   tcw, p2, ib             the value (and a second one after a NUL) in
 *                           one of the fabric's variables: a reader that
 *                           succeeds leaves a model of finite,
 *                           non-negative numbers and a crossbar that fits
 *                           its limits.
 */
#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fmpl.h"
#include "base/env.h"
#include "base/parse.h"
#include "transport/ib/ib.h"
#include "transport/peach2/p2.h"
#include "transport/tcw/tcw.h"

#include "fuzz_input.h"

static const char *const names[] = {
    "FMPL_TCW_SHAPE", "FMPL_TCW_PPN", "FMPL_TCW_PARTITION", "FMPL_TCW_MODEL",
    "FMPL_TCW_XBAR_NS", "FMPL_TCW_LINK_MBPS", "FMPL_TCW_NIA_SEND_NS", "FMPL_TCA_MODEL",
    "FMPL_TCA_HOP_NS", "FMPL_TCA_PIO_MAX_BYTES", "FMPL_TCA_IB_MTU", "FMPL_TCA_IB_SWITCH_NS",
    "FMPL_FUZZ_SETTING",
};
#define NNAMES (sizeof names / sizeof names[0])

static int hexval(int c)
{
    return isdigit(c) ? c - '0' : isxdigit(c) ? (tolower(c) - 'a' + 10) : -1;
}

/* The strict syntax of parse.h, read here digit by digit: 0 and the
 * value (as a magnitude and a sign), or -1. */
static int oracle_digits(const char **sp, unsigned __int128 *mag)
{
    const char *s = *sp;
    int base = 10;
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        base = 16;
        s += 2;
    }
    if (hexval((unsigned char)*s) < 0 || hexval((unsigned char)*s) >= base)
        return -1;
    unsigned __int128 v = 0;
    for (; hexval((unsigned char)*s) >= 0 && hexval((unsigned char)*s) < base; s++) {
        v = v * (unsigned)base + (unsigned)hexval((unsigned char)*s);
        if (v > ((unsigned __int128)1 << 70))
            v = (unsigned __int128)1 << 70;          /* past any range: saturate */
    }
    *sp = s;
    *mag = v;
    return 0;
}

static int oracle_long(const char *s, long lo, long hi, long *out)
{
    int neg = 0;
    if (*s == '-' || *s == '+')
        neg = *s++ == '-';
    unsigned __int128 m;
    if (oracle_digits(&s, &m) != 0 || *s != '\0')
        return -1;
    __int128 v = neg ? -(__int128)m : (__int128)m;
    if (v < lo || v > hi)
        return -1;
    *out = (long)v;
    return 0;
}

static int oracle_size(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
    unsigned __int128 m;
    if (oracle_digits(&s, &m) != 0)
        return -1;
    int shift = 0;
    if (*s != '\0') {
        const char *k = strchr("kKmMgG", *s);
        if (k == NULL || s[1] != '\0')
            return -1;
        shift = (int)(k - "kKmMgG") / 2 * 10 + 10;
    }
    m <<= shift;
    if (m < lo || m > hi)
        return -1;
    *out = (uint64_t)m;
    return 0;
}

/* [+-]digits[.digits][e[+-]digits]: what any reader of numbers takes */
static int plain_decimal(const char *s)
{
    if (*s == '-' || *s == '+')
        s++;
    if (!isdigit((unsigned char)*s))
        return 0;
    while (isdigit((unsigned char)*s))
        s++;
    if (*s == '.') {
        s++;
        while (isdigit((unsigned char)*s))
            s++;
    }
    if (*s == 'e' || *s == 'E') {
        s++;
        if (*s == '-' || *s == '+')
            s++;
        if (!isdigit((unsigned char)*s))
            return 0;
        while (isdigit((unsigned char)*s))
            s++;
    }
    return *s == '\0';
}

static int64_t in64(void)
{
    int64_t v = 0;
    bytes(&v, sizeof v);
    return v;
}

static void check_values(const double *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(v[i]) || v[i] < 0)
            abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
    fuzz_start(data, n);
    int what = byte() % 9;
    int sel = byte();
    int64_t a = in64(), b = in64();
    /* the value: the rest up to a NUL; a second value after it */
    char val[512], val2[64];
    size_t k = 0;
    while (!spent() && k < sizeof val - 1) {
        int c = byte();
        if (c == 0)
            break;
        val[k++] = (char)c;
    }
    val[k] = '\0';
    k = 0;
    while (!spent() && k < sizeof val2 - 1) {
        int c = byte();
        if (c == 0)
            break;
        val2[k++] = (char)c;
    }
    val2[k] = '\0';
    for (size_t i = 0; i < NNAMES; i++)
        unsetenv(names[i]);

    long lo = a < b ? (long)a : (long)b, hi = a < b ? (long)b : (long)a;
    uint64_t ulo = (uint64_t)a < (uint64_t)b ? (uint64_t)a : (uint64_t)b;
    uint64_t uhi = (uint64_t)a < (uint64_t)b ? (uint64_t)b : (uint64_t)a;
    if (sel & 1) {                 /* small ranges too, where the edges are */
        lo = (long)(int8_t)a;
        hi = lo + (uint8_t)b;
        ulo = (uint8_t)a;
        uhi = ulo + ((uint64_t)(uint8_t)b << ((sel >> 1) % 40));
    }

    switch (what) {
    case 0: {
        long got = 7, want = 7;
        int rg = fmpl_parse_long(val, lo, hi, &got), rw = oracle_long(val, lo, hi, &want);
        if (rg != rw || got != want)
            abort();
        break;
    }
    case 1: {
        uint64_t got = 7, want = 7;
        int rg = fmpl_parse_size(val, ulo, uhi, &got), rw = oracle_size(val, ulo, uhi, &want);
        if (rg != rw || got != want)
            abort();
        break;
    }
    case 2: {
        double dlo = (double)lo / 16, dhi = (double)hi / 16, got = 0.5;
        int rg = fmpl_parse_double(val, dlo, dhi, &got);
        if (rg == 0) {
            char *end;
            double v = strtod(val, &end);
            if (*end != '\0' || v != got || !isfinite(got) || got < dlo || got > dhi)
                abort();
        } else if (got != 0.5) {
            abort();                            /* a failure leaves *out alone */
        } else if (plain_decimal(val)) {
            double v = strtod(val, NULL);
            if (isfinite(v) && v >= dlo && v <= dhi && fabs(v) < 1e300)
                abort();                        /* an ordinary number refused */
        }
        break;
    }
    case 3: case 4: case 5: {
        const char *name = names[sel % NNAMES];
        if (sel & 0x80)
            setenv(name, val, 1);
        int rc;
        if (what == 3) {
            long def = lo, got;
            rc = fmpl_env_long(name, def, lo, hi, "fuzz", &got);
            long want = def;
            if (*val && (sel & 0x80) && oracle_long(val, lo, hi, &want) != 0) {
                if (rc != FMPL_ERR_ARG || got != def)
                    abort();
            } else if (rc != FMPL_SUCCESS || got != want) {
                abort();
            }
        } else if (what == 4) {
            uint64_t got, want = ulo;
            rc = fmpl_env_size(name, ulo, ulo, uhi, "fuzz", &got);
            if (*val && (sel & 0x80) && oracle_size(val, ulo, uhi, &want) != 0) {
                if (rc != FMPL_ERR_ARG || got != ulo)
                    abort();
            } else if (rc != FMPL_SUCCESS || got != want) {
                abort();
            }
        } else {
            static const char *const choice[] = { "auto", "manual", "", "0", NULL };
            int got;
            rc = fmpl_env_choice(name, choice, -1, "fuzz", &got);
            int set = *val && (sel & 0x80);
            int want = !set ? -1 : !strcmp(val, "auto") ? 0 : !strcmp(val, "manual") ? 1
                     : !strcmp(val, "0") ? 3 : -2;
            if (want == -2 ? (rc != FMPL_ERR_ARG || got != -1) : (rc != FMPL_SUCCESS || got != want))
                abort();
        }
        break;
    }
    case 6: {                      /* the SR8000's crossbar and partition */
        setenv(names[sel % 4], val, 1);
        if (*val2)
            setenv(names[(sel >> 2) % 4], val2, 1);
        tcw_xbar_t x;
        int size = 1 + (int)((uint64_t)a % 600);
        if (fmpl_tcw_xbar_init(&x, size) == FMPL_SUCCESS) {
            if (x.X < 1 || x.X > 8 || x.Y < 1 || x.Y > 64 || x.Z < 1 || x.Z > 64 ||
                x.X * x.Y * x.Z > 4096 || x.ppn < 1 || x.ppn > 8 || x.nodes < 1 ||
                x.nodes > x.X * x.Y * x.Z)
                abort();
        }
        break;
    }
    case 7: {                      /* the SR8000's timing model */
        setenv(names[3 + sel % 4], val, 1);
        if (*val2)
            setenv(names[3 + (sel >> 2) % 4], val2, 1);
        tcw_model_t m;
        if (fmpl_tcw_model_read(&m) == FMPL_SUCCESS) {
            if (m.on != 0 && m.on != 1)
                abort();
            const double v[] = { m.nia_send_ns, m.xbar_ns, m.nia_recv_ns, m.link_mbps,
                                 m.ack_ns };
            check_values(v, sizeof v / sizeof v[0]);
        }
        break;
    }
    case 8: {                      /* PEACH2's and InfiniBand's models */
        setenv(names[7 + sel % 5], val, 1);
        if (*val2)
            setenv(names[7 + (sel >> 3) % 5], val2, 1);
        p2_model_t p;
        ib_model_t ib;
        if (fmpl_peach2_model_read(&p) == FMPL_SUCCESS) {
            const double v[] = { p.hop_ns, p.pio_max_bytes, p.link_mbps };
            if (p.on != 0 && p.on != 1)
                abort();
            check_values(v, sizeof v / sizeof v[0]);
        }
        if (fmpl_ib_model_read(&ib, 1, "FMPL_TCA_IB_") == FMPL_SUCCESS && ib.on != 1)
            abort();
        break;
    }
    }
    return 0;
}
