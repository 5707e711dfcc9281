/*
 * fuzz_blacs - libFuzzer harness for the BLACS entry points' arguments
 * (blacs/): contexts, dimensions, leading dimensions, scopes, topologies,
 * UPLO and DIAG, sources and destinations, grids and user maps, settings.
 *
 * One process is a 1 x 1 grid of a one-rank FMPL job (the library's real
 * code over shared memory).  Each input is a list of calls, their
 * arguments from the input; every array is a heap block of exactly the
 * elements the call's arguments say it may touch (the BLACS's reading of
 * them: an LDA below M taken as M), so AddressSanitizer catches a read
 * or write past it.  A call the BLACS refuses ends in blacs_fatal ->
 * fmpl_abort, which the harness turns into a longjmp back here (linked
 * with -Wl,--wrap=fmpl_abort); nothing else may end a call.
 * What must hold besides:
 *   - a matrix sent to oneself arrives whole: every element of the M x N
 *     block equal to what was sent, the rows between M and LDA untouched;
 *   - a sum, maximum or minimum over one process leaves A as it was and
 *     puts this process's coordinates, {0,0}, in RA/CA;
 *   - a broadcast leaves the sender's A as it was.
 * A call is made only where its refusal happens before any message, so
 * a refused call leaves no state behind (in a real job, the refusal
 * kills the job).
 */
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmpl.h"
#include "fmpl_blacs.h"

#include "fuzz_input.h"

/* A refused call leaves what it had allocated (gridinit's map, gridmap's
 * table of processes seen): in a job the refusal ends the process, here
 * the longjmp skips the free.  So no leak report, at exit either (with
 * libFuzzer's -detect_leaks=0, fuzz_test.sh). */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "detect_leaks=0"; }

static jmp_buf fatal_jmp;
static int in_call;
static int valid;                  /* the call's arguments are all correct */

/* blacs_fatal's fmpl_abort (and Cblacs_abort's): a refusal of a correct
 * call is a defect too */
void __wrap_fmpl_abort(int code) __attribute__((noreturn));
void __wrap_fmpl_abort(int code)
{
    (void)code;
    if (!in_call || valid)
        abort();
    longjmp(fatal_jmp, 1);
}

static char up(char c) { return c >= 'a' && c <= 'z' ? (char)(c - 'a' + 'A') : c; }
static int scope_ok(char s) { return up(s) == 'R' || up(s) == 'C' || up(s) == 'A'; }
static int top_ok(char t) { return t != 0 && strchr(" IDSMHFT123456789", up(t)) != NULL; }

static int ctx = -1;               /* the 1 x 1 grid */

static int small(int lo, int span) { return lo + (int)(byte() % (unsigned)span); }

/* a character argument: usually one the BLACS knows, sometimes any byte */
static char pick(const char *known)
{
    unsigned b = byte();
    size_t k = strlen(known);
    return b & 0x80 ? (char)(b & 0x7f) : known[b % k];
}

/* elements an M x N matrix with leading dimension LD occupies, as the BLACS
 * reads it (LD below M taken as M); 0 when it is empty */
static size_t span(int m, int n, int ld)
{
    if (m <= 0 || n <= 0)
        return 0;
    size_t l = ld > m ? (size_t)ld : (size_t)m;
    return l * (size_t)(n - 1) + (size_t)m;
}

/* The call's arrays, freed after it whether it returned or was refused
 * (a refusal longjmps past the frees of its op_). */
static void *blocks[4];
static int nblocks;

static void *block(size_t elems, size_t es, uint8_t fill)
{
    void *p = malloc(elems ? elems * es : 1);
    if (!p || nblocks == 4)
        abort();
    memset(p, fill, elems ? elems * es : 1);
    blocks[nblocks++] = p;
    return p;
}

static void release(void)
{
    while (nblocks > 0)
        free(blocks[--nblocks]);
}

/* element (i, j) inside the M x N block of leading dimension LD */
static int inside(size_t k, int m, int ld)
{
    size_t l = ld > m ? (size_t)ld : (size_t)m;
    return k % l < (size_t)m;
}

/* the types: i (4 bytes), d (8), z (16) */
static size_t esize(int t) { return t == 0 ? 4 : t == 1 ? 8 : 16; }

static void send2d(int t, int c, const char *uplo, const char *diag, int m, int n, void *a,
                   int lda, int r, int col)
{
    char u = uplo ? *uplo : 0, d = diag ? *diag : 0;
    if (!uplo) {
        if (t == 0) Cigesd2d(c, m, n, a, lda, r, col);
        else if (t == 1) Cdgesd2d(c, m, n, a, lda, r, col);
        else Czgesd2d(c, m, n, a, lda, r, col);
    } else {
        if (t == 0) Citrsd2d(c, &u, &d, m, n, a, lda, r, col);
        else if (t == 1) Cdtrsd2d(c, &u, &d, m, n, a, lda, r, col);
        else Cztrsd2d(c, &u, &d, m, n, a, lda, r, col);
    }
}

static void recv2d(int t, int c, const char *uplo, const char *diag, int m, int n, void *a,
                   int lda, int r, int col)
{
    char u = uplo ? *uplo : 0, d = diag ? *diag : 0;
    if (!uplo) {
        if (t == 0) Cigerv2d(c, m, n, a, lda, r, col);
        else if (t == 1) Cdgerv2d(c, m, n, a, lda, r, col);
        else Czgerv2d(c, m, n, a, lda, r, col);
    } else {
        if (t == 0) Citrrv2d(c, &u, &d, m, n, a, lda, r, col);
        else if (t == 1) Cdtrrv2d(c, &u, &d, m, n, a, lda, r, col);
        else Cztrrv2d(c, &u, &d, m, n, a, lda, r, col);
    }
}

/* A send to oneself and its receive; only the send's arguments vary
 * beyond a valid call, so a refused send leaves nothing queued. */
static void op_p2p(void)
{
    int t = small(0, 3), tr = byte() & 1;
    int m = small(-2, 40), n = small(-2, 40), lda = small(-2, 50);
    char uplo = pick("ULul"), diag = pick("UNun");
    int r = byte() & 0x40 ? small(-3, 6) : 0, c = byte() & 0x40 ? small(-3, 6) : 0;
    int cx = byte() == 0xff ? small(-4, 12) : ctx;
    size_t es = esize(t), e = span(m, n, lda);
    uint8_t *a = block(e, es, 0), *b = block(e, es, 0xee);
    for (size_t k = 0; k < e * es; k++)
        a[k] = (uint8_t)(k * 7 + 1);
    valid = cx == ctx && r == 0 && c == 0;
    send2d(t, cx, tr ? &uplo : NULL, &diag, m, n, a, lda, r, c);
    /* sent: the same call receives it */
    valid = 1;
    recv2d(t, ctx, tr ? &uplo : NULL, &diag, m, n, b, lda, 0, 0);
    for (size_t k = 0; k < e; k++) {
        int in = inside(k, m, lda);
        if (!tr && in && memcmp(a + k * es, b + k * es, es) != 0)
            abort();               /* a general matrix arrived wrong */
        if (!in)
            for (size_t i = 0; i < es; i++)
                if (b[k * es + i] != 0xee)
                    abort();       /* a row past M, before LDA, was written */
    }
}

static void op_bcast(void)
{
    int t = small(0, 3), tr = byte() & 1, recv = byte() & 1;
    char scope = pick("RCAa"), top = pick(" IDSMHFT12349x"), uplo = pick("UL"),
         diag = pick("UN");
    int m = small(-2, 40), n = small(-2, 40), lda = small(-2, 50);
    int r = small(-2, 5), c = small(-2, 5);
    size_t es = esize(t), e = span(m, n, lda);
    uint8_t *a = block(e, es, 0x5a), *keep = block(e, es, 0x5a);
    if (!recv) {
        valid = scope_ok(scope) && top_ok(top);
        if (!tr) {
            if (t == 0) Cigebs2d(ctx, &scope, &top, m, n, (int *)a, lda);
            else if (t == 1) Cdgebs2d(ctx, &scope, &top, m, n, (double *)a, lda);
            else Czgebs2d(ctx, &scope, &top, m, n, (double *)a, lda);
        } else {
            if (t == 0) Citrbs2d(ctx, &scope, &top, &uplo, &diag, m, n, (int *)a, lda);
            else if (t == 1) Cdtrbs2d(ctx, &scope, &top, &uplo, &diag, m, n, (double *)a, lda);
            else Cztrbs2d(ctx, &scope, &top, &uplo, &diag, m, n, (double *)a, lda);
        }
        if (e && memcmp(a, keep, e * es) != 0)
            abort();
    } else {
        /* in a 1 x 1 grid every source is refused (out of the grid, or
         * this process itself): the receive must say so, not wait */
        if (!tr) {
            if (t == 0) Cigebr2d(ctx, &scope, &top, m, n, (int *)a, lda, r, c);
            else if (t == 1) Cdgebr2d(ctx, &scope, &top, m, n, (double *)a, lda, r, c);
            else Czgebr2d(ctx, &scope, &top, m, n, (double *)a, lda, r, c);
        } else {
            if (t == 0) Citrbr2d(ctx, &scope, &top, &uplo, &diag, m, n, (int *)a, lda, r, c);
            else if (t == 1)
                Cdtrbr2d(ctx, &scope, &top, &uplo, &diag, m, n, (double *)a, lda, r, c);
            else Cztrbr2d(ctx, &scope, &top, &uplo, &diag, m, n, (double *)a, lda, r, c);
        }
        abort();                   /* returned from a receive nobody can answer */
    }
}

static void op_comb(void)
{
    int t = small(0, 3), op = small(0, 3);
    char scope = pick("RCAa"), top = pick(" IDSMHFT12349x");
    int m = small(-2, 30), n = small(-2, 30), lda = small(-2, 40), ldia = small(-2, 40);
    if (byte() & 1)
        ldia = -1;                 /* no locations */
    int r = byte() & 1 ? -1 : small(-2, 5), c = small(-2, 5);
    size_t es = esize(t), e = span(m, n, lda);
    uint8_t *a = block(e, es, 0), *keep;
    for (size_t k = 0; k < e * es; k++)
        a[k] = (uint8_t)(k * 13 + 5);
    if (t == 2)                    /* no NaN: each element compares with itself */
        for (size_t k = 0; k < e * 2; k++)
            ((double *)a)[k] = (double)(k % 97) - 48;
    if (t == 1)
        for (size_t k = 0; k < e; k++)
            ((double *)a)[k] = (double)(k % 89) * 0.5 - 20;
    keep = block(e, es, 0);
    memcpy(keep, a, e * es);
    size_t ie = op != 0 && ldia != -1 ? span(m, n, ldia) : 0;
    int *ra = block(ie, sizeof(int), 0x11), *ca = block(ie, sizeof(int), 0x11);
    valid = scope_ok(scope) && top_ok(top) &&
            (r == -1 || c == -1 || ((up(scope) == 'R' || r == 0) && (up(scope) == 'C' || c == 0)));
    if (op == 0) {
        if (t == 0) Cigsum2d(ctx, &scope, &top, m, n, (int *)a, lda, r, c);
        else if (t == 1) Cdgsum2d(ctx, &scope, &top, m, n, (double *)a, lda, r, c);
        else Czgsum2d(ctx, &scope, &top, m, n, (double *)a, lda, r, c);
    } else if (op == 1) {
        if (t == 0) Cigamx2d(ctx, &scope, &top, m, n, (int *)a, lda, ra, ca, ldia, r, c);
        else if (t == 1) Cdgamx2d(ctx, &scope, &top, m, n, (double *)a, lda, ra, ca, ldia, r, c);
        else Czgamx2d(ctx, &scope, &top, m, n, (double *)a, lda, ra, ca, ldia, r, c);
    } else {
        if (t == 0) Cigamn2d(ctx, &scope, &top, m, n, (int *)a, lda, ra, ca, ldia, r, c);
        else if (t == 1) Cdgamn2d(ctx, &scope, &top, m, n, (double *)a, lda, ra, ca, ldia, r, c);
        else Czgamn2d(ctx, &scope, &top, m, n, (double *)a, lda, ra, ca, ldia, r, c);
    }
    /* over one process the answer is A itself, and we hold every element */
    for (size_t k = 0; k < e; k++)
        if (memcmp(a + k * es, keep + k * es, es) != 0)
            abort();
    for (size_t k = 0; k < ie; k++)
        if (inside(k, m, ldia) ? ra[k] != 0 || ca[k] != 0 : ra[k] != 0x11111111 ||
                                                             ca[k] != 0x11111111)
            abort();
}

/* grids from the system handle: the job has one process */
static void op_grid(void)
{
    int nprow = small(-1, 4), npcol = small(-1, 4), ld = small(-1, 4);
    int h = byte() & 0x80 ? small(-2, 8) : 0;
    int g = h, map = byte() & 1;
    char order[2] = { pick("RCrc"), 0 };
    int *umap = NULL;
    if (map) {
        size_t e = nprow > 0 && npcol > 0 && ld >= nprow ? span(nprow, npcol, ld) : 0;
        umap = block(e, sizeof(int), 0);
        for (size_t k = 0; k < e; k++)
            umap[k] = (int)(int8_t)byte() % 3;
        valid = h == 0 && nprow == 1 && npcol == 1 && ld >= 1 && umap[0] == 0;
        Cblacs_gridmap(&g, umap, ld, nprow, npcol);
    } else {
        valid = h == 0 && nprow == 1 && npcol == 1;
        Cblacs_gridinit(&g, order, nprow, npcol);
    }
    /* made: a 1 x 1 grid of this process */
    int pr, pc, mr, mc;
    Cblacs_gridinfo(g, &pr, &pc, &mr, &mc);
    if (pr != 1 || pc != 1 || mr != 0 || mc != 0)
        abort();
    Cblacs_gridexit(g);
}

static void op_aux(void)
{
    /* WHAT 1 (the message-id range) is two ints */
    int what = small(-2, 22), val[2] = { small(-3, 12), small(-3, 12) }, v[2] = { 0, 0 };
    int cx = byte() & 1 ? ctx : small(-3, 10);
    char scope = pick("RCAa");
    switch (byte() % 5) {
    case 0: Cblacs_get(cx, what, v); break;
    case 1: Cblacs_set(cx, what, val); break;
    case 2: Cblacs_barrier(cx, &scope); break;
    case 3: (void)Cblacs_pnum(cx, small(-2, 5), small(-2, 5)); break;
    default: {
        int r = 7, c = 7;
        Cblacs_pcoord(cx, small(-2, 5), &r, &c);
        break;
    }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
    if (ctx < 0) {
        int me, np;
        Cblacs_pinfo(&me, &np);
        Cblacs_get(-1, 0, &ctx);
        Cblacs_gridinit(&ctx, "Row", 1, 1);
    }
    fuzz_start(data, n);
    for (int k = 0; k < 8 && !spent(); k++) {
        unsigned op = byte() % 5;
        in_call = 1;
        valid = 0;
        if (setjmp(fatal_jmp) == 0) {
            switch (op) {
            case 0: op_p2p(); break;
            case 1: op_bcast(); break;
            case 2: op_comb(); break;
            case 3: op_grid(); break;
            default: op_aux(); break;
            }
        }
        in_call = 0;
        release();
    }
    return 0;
}
