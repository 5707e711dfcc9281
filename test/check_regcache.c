/*
 * check_regcache - the transports' registration cache
 * (src/transport/regcache.h) under the policies of the transports that
 * use it, over a fake device that counts its live registrations, with
 * the real memory monitor (which check_memmon tests).
 *
 * dcfa's policy (kept with a monitor, whole pages, a bound in bytes):
 * a use on a page already registered finds it; memory unmapped while a
 * registration is kept closes it, and while it is in use hides it and
 * closes it with its last user; the unused bytes stay in the bound,
 * least recently used out; nothing in use is evicted; a registration
 * refused for want of memory is tried again once the unused ones are
 * closed; without a monitor, the bytes asked, closed by the last user.
 * ofi's (kept without a monitor, a bound in entries, keys by value).
 * Both: fmpl_alloc_mem's memory is found first and never evicted.
 * The transports themselves run it in their suites (ofi) and in
 * test/dcfa_test.sh (verbs).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <check.h>

#include "fmpl.h"
#include "transport/regcache.h"

#define PAGE ((size_t)sysconf(_SC_PAGESIZE))

/* The fake device: live registrations, how many were made, refused. */
typedef struct fake {
    int live, made, refused;
    int limit;                     /* refuse (ENOMEM) at this many live, 0: never */
    uint64_t next_key;
} fake_t;

static int fake_reg(void *ctx, void *addr, size_t len, void **mr, uint64_t *key)
{
    fake_t *f = ctx;
    (void)addr;
    ck_assert_uint_gt(len, 0);
    if (f->limit && f->live >= f->limit) {
        f->refused++;
        return ENOMEM;
    }
    f->live++;
    f->made++;
    *key = ++f->next_key;
    *mr = malloc(1);
    return 0;
}
static void fake_dereg(void *ctx, void *mr)
{
    ((fake_t *)ctx)->live--;
    free(mr);
}
static int fake_fail(void *ctx, int err, int alloc)
{
    (void)ctx, (void)alloc;
    return err == ENOMEM ? FMPL_ERR_NOMEM : FMPL_ERR_SYSTEM;
}
static const fmpl_rcache_ops_t fake_ops = { fake_reg, fake_dereg, fake_fail };

static fake_t dev;
static fmpl_memmon_t *mon;
static unsigned char *mem;         /* 16 pages */

static void setup(void)
{
    dev = (fake_t){ 0 };
    mem = mmap(NULL, 16 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ck_assert_ptr_ne(mem, MAP_FAILED);
    memset(mem, 1, 16 * PAGE);
    const char *why = NULL;
    mon = fmpl_memmon_open(&why);
    ck_assert_msg(mon != NULL, "no memory monitor: %s", why ? why : "?");
}

static void teardown(void)
{
    fmpl_memmon_close(mon);
    munmap(mem, 16 * PAGE);
}

/* dcfa's policy, `pages` unused pages at most */
static fmpl_rcache_t dcfa_cache(size_t pages)
{
    return (fmpl_rcache_t){ .ops = &fake_ops, .ctx = &dev, .keep_idle = 1, .round = PAGE,
                            .max_idle_bytes = pages * PAGE, .max_kept = 1024, .mon = mon };
}

/* fresh pages at the same addresses (what free() and malloc() do) */
static void remap(unsigned char *p, size_t len)
{
    ck_assert_int_eq(munmap(p, len), 0);
    ck_assert_ptr_eq(mmap(p, len, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0), p);
}

START_TEST(test_kept_pages)
{
    fmpl_rcache_t c = dcfa_cache(4);
    int i, j;
    ck_assert_int_eq(fmpl_rcache_take(&c, mem + 100, 200, &i), FMPL_SUCCESS);
    const fmpl_rcache_reg_t *r = fmpl_rcache_get(&c, i);
    ck_assert(r->base == (uintptr_t)mem && r->len == PAGE && r->kept);
    ck_assert_int_eq(fmpl_rcache_take(&c, mem + 1000, 200, &j), FMPL_SUCCESS);
    ck_assert_int_eq(j, i);
    ck_assert_int_eq(dev.made, 1);
    fmpl_rcache_put(&c, i);
    fmpl_rcache_put(&c, j);
    ck_assert_int_eq(dev.live, 1);         /* kept unused */
    ck_assert_uint_eq(c.idle_bytes, PAGE);
    ck_assert_int_eq(fmpl_rcache_take(&c, mem + 8, 8, &i), FMPL_SUCCESS);
    ck_assert_int_eq(dev.made, 1);
    ck_assert_uint_eq(c.idle_bytes, 0);
    ck_assert_uint_eq(c.stat.hits, 2);
    fmpl_rcache_put(&c, i);
    fmpl_rcache_close(&c);
    ck_assert_int_eq(dev.live, 0);
}
END_TEST

START_TEST(test_gone_unused)
{
    fmpl_rcache_t c = dcfa_cache(4);
    int i;
    ck_assert_int_eq(fmpl_rcache_take(&c, mem + 8, 8, &i), FMPL_SUCCESS);
    fmpl_rcache_put(&c, i);
    remap(mem, PAGE);
    ck_assert_int_eq(fmpl_rcache_take(&c, mem + 8, 8, &i), FMPL_SUCCESS);
    ck_assert_int_eq(dev.made, 2);
    ck_assert_int_eq(dev.live, 1);         /* the old one closed */
    ck_assert_uint_eq(c.stat.invalidated, 1);
    fmpl_rcache_put(&c, i);
    fmpl_rcache_close(&c);
}
END_TEST

START_TEST(test_gone_in_use)
{
    fmpl_rcache_t c = dcfa_cache(4);
    int i, j;
    ck_assert_int_eq(fmpl_rcache_take(&c, mem + 8, 8, &i), FMPL_SUCCESS);
    remap(mem, PAGE);
    ck_assert_int_eq(fmpl_rcache_take(&c, mem + 8, 8, &j), FMPL_SUCCESS);
    ck_assert_int_ne(j, i);                /* not found: registered anew */
    ck_assert(fmpl_rcache_get(&c, i)->stale);
    ck_assert_int_eq(dev.live, 2);
    fmpl_rcache_put(&c, i);                /* its last user: closed */
    ck_assert_int_eq(dev.live, 1);
    ck_assert_uint_eq(c.idle_bytes, 0);
    fmpl_rcache_put(&c, j);
    ck_assert_uint_eq(c.idle_bytes, PAGE);
    fmpl_rcache_close(&c);
}
END_TEST

START_TEST(test_bytes_bound)
{
    fmpl_rcache_t c = dcfa_cache(3);
    int k[6];
    for (int p = 1; p <= 5; p++) {
        ck_assert_int_eq(fmpl_rcache_take(&c, mem + p * PAGE, 10, &k[p]), FMPL_SUCCESS);
        fmpl_rcache_put(&c, k[p]);
    }
    ck_assert_uint_eq(c.idle_bytes, 3 * PAGE);
    ck_assert_int_eq(dev.live, 3);
    ck_assert_uint_eq(c.stat.evicted, 2);
    int made = dev.made, i;
    ck_assert_int_eq(fmpl_rcache_take(&c, mem + 3 * PAGE, 10, &i), FMPL_SUCCESS);
    ck_assert_int_eq(dev.made, made);      /* pages 3-5 kept */
    fmpl_rcache_put(&c, i);
    ck_assert_int_eq(fmpl_rcache_take(&c, mem + 2 * PAGE, 10, &i), FMPL_SUCCESS);
    ck_assert_int_eq(dev.made, made + 1);  /* page 2 went, the least recently used */
    fmpl_rcache_put(&c, i);
    ck_assert_uint_eq(c.idle_bytes, 3 * PAGE);
    fmpl_rcache_close(&c);
}
END_TEST

START_TEST(test_in_use_kept)
{
    fmpl_rcache_t c = dcfa_cache(1);
    int u[10];
    for (int p = 0; p < 10; p++)
        ck_assert_int_eq(fmpl_rcache_take(&c, mem + (p + 2) * PAGE, 10, &u[p]), FMPL_SUCCESS);
    int i;                                 /* a put that evicts */
    ck_assert_int_eq(fmpl_rcache_take(&c, mem, 10, &i), FMPL_SUCCESS);
    fmpl_rcache_put(&c, i);
    ck_assert_int_eq(fmpl_rcache_take(&c, mem + PAGE, 10, &i), FMPL_SUCCESS);
    fmpl_rcache_put(&c, i);
    for (int p = 0; p < 10; p++) {
        const fmpl_rcache_reg_t *r = fmpl_rcache_get(&c, u[p]);
        ck_assert(r->mr != NULL && r->refs == 1);
    }
    ck_assert_int_eq(fmpl_rcache_held(&c), 10);
    for (int p = 0; p < 10; p++)
        fmpl_rcache_put(&c, u[p]);
    ck_assert_int_eq(fmpl_rcache_held(&c), 0);
    ck_assert_uint_eq(c.idle_bytes, PAGE);
    fmpl_rcache_close(&c);
}
END_TEST

START_TEST(test_nomem_retry)
{
    fmpl_rcache_t c = dcfa_cache(4);
    int i, j;
    for (int p = 0; p < 3; p++) {
        ck_assert_int_eq(fmpl_rcache_take(&c, mem + p * PAGE, 10, &i), FMPL_SUCCESS);
        fmpl_rcache_put(&c, i);
    }
    dev.limit = dev.live;                  /* the locked-memory limit, reached */
    ck_assert_int_eq(fmpl_rcache_take(&c, mem + 5 * PAGE, 10, &i), FMPL_SUCCESS);
    ck_assert_int_eq(dev.refused, 1);
    ck_assert_int_eq(dev.live, 1);         /* the unused ones went */
    dev.limit = 1;
    ck_assert_int_eq(fmpl_rcache_take(&c, mem + 6 * PAGE, 10, &j), FMPL_ERR_NOMEM);
    dev.limit = 0;
    fmpl_rcache_put(&c, i);
    fmpl_rcache_close(&c);
}
END_TEST

START_TEST(test_allocated)
{
    fmpl_rcache_t c = dcfa_cache(0);
    c.max_idle_bytes = 1;                  /* evict all it can */
    void *a = NULL;
    ck_assert_int_eq(posix_memalign(&a, PAGE, 2 * PAGE), 0);
    ck_assert_int_eq(fmpl_rcache_add(&c, a, 2 * PAGE), FMPL_SUCCESS);
    int i, j;
    ck_assert_int_eq(fmpl_rcache_take(&c, (unsigned char *)a + 5, 100, &i), FMPL_SUCCESS);
    ck_assert(fmpl_rcache_get(&c, i)->allocated);
    ck_assert_int_eq(fmpl_rcache_by_key(&c, fmpl_rcache_get(&c, i)->key), i);
    ck_assert_int_eq(fmpl_rcache_take(&c, mem, 10, &j), FMPL_SUCCESS);
    fmpl_rcache_put(&c, j);                /* evicts */
    fmpl_rcache_put(&c, i);
    ck_assert(fmpl_rcache_get(&c, i)->mr != NULL);
    ck_assert_int_eq(fmpl_rcache_held(&c), 0);
    ck_assert_int_eq(fmpl_rcache_free(&c, (unsigned char *)a + 1), FMPL_ERR_ARG);
    ck_assert_int_eq(fmpl_rcache_free(&c, a), FMPL_SUCCESS);   /* frees the memory */
    ck_assert_int_eq(dev.live, 0);
    fmpl_rcache_close(&c);
}
END_TEST

START_TEST(test_no_monitor)
{
    fmpl_rcache_t c = { .ops = &fake_ops, .ctx = &dev, .max_idle_bytes = PAGE,
                        .max_kept = 1024 };
    int i, j, k;
    ck_assert_int_eq(fmpl_rcache_take(&c, mem + 100, 200, &i), FMPL_SUCCESS);
    const fmpl_rcache_reg_t *r = fmpl_rcache_get(&c, i);
    ck_assert(r->base == (uintptr_t)mem + 100 && r->len == 200 && !r->kept);
    ck_assert_int_eq(fmpl_rcache_take(&c, mem + 150, 100, &j), FMPL_SUCCESS);
    ck_assert_int_eq(j, i);                /* in use, covering: shared */
    ck_assert_int_eq(fmpl_rcache_take(&c, mem + 150, 200, &k), FMPL_SUCCESS);
    ck_assert_int_ne(k, i);
    fmpl_rcache_put(&c, i);
    fmpl_rcache_put(&c, j);
    fmpl_rcache_put(&c, k);
    ck_assert_int_eq(dev.live, 0);         /* closed by their last users */
    ck_assert_uint_eq(c.stat.misses + c.stat.hits, 0);
    fmpl_rcache_close(&c);
}
END_TEST

START_TEST(test_ofi_policy)
{
    fmpl_rcache_t c = { .ops = &fake_ops, .ctx = &dev, .keep_idle = 1, .round = 4096,
                        .max_idle = 2 };
    int q[4];
    for (int p = 0; p < 4; p++)
        ck_assert_int_eq(fmpl_rcache_take(&c, mem + p * PAGE, 10, &q[p]), FMPL_SUCCESS);
    for (int p = 0; p < 4; p++) {
        int x = fmpl_rcache_by_key(&c, fmpl_rcache_get(&c, q[p])->key);
        ck_assert_int_eq(x, q[p]);
        fmpl_rcache_put(&c, x);
    }
    ck_assert_int_eq(dev.live, 2);         /* the two used last */
    ck_assert(fmpl_rcache_get(&c, q[3])->mr != NULL && fmpl_rcache_get(&c, q[0])->mr == NULL);
    ck_assert_int_eq(fmpl_rcache_by_key(&c, fmpl_rcache_get(&c, q[3])->key), -1);   /* unused */
    c.keep_idle = 0;                       /* FMPL_OFI_MR_CACHE=0 */
    int i;
    ck_assert_int_eq(fmpl_rcache_take(&c, mem + 9 * PAGE, 10, &i), FMPL_SUCCESS);
    fmpl_rcache_put(&c, i);
    ck_assert_int_eq(dev.live, 2);
    fmpl_rcache_close(&c);
    ck_assert_int_eq(dev.live, 0);
}
END_TEST

static Suite *regcache_suite(void)
{
    Suite *s = suite_create("regcache");
    TCase *tc = tcase_create("regcache");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_kept_pages);
    tcase_add_test(tc, test_gone_unused);
    tcase_add_test(tc, test_gone_in_use);
    tcase_add_test(tc, test_bytes_bound);
    tcase_add_test(tc, test_in_use_kept);
    tcase_add_test(tc, test_nomem_retry);
    tcase_add_test(tc, test_allocated);
    tcase_add_test(tc, test_no_monitor);
    tcase_add_test(tc, test_ofi_policy);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(regcache_suite());
    srunner_run_all(sr, CK_NORMAL);
    int nfail = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nfail == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
