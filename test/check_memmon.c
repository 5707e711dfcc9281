/*
 * check_memmon - the memory monitor the verbs transport's registration
 * cache relies on (src/transport/memmon.h), on this machine's kernel.
 *
 * Each test watches memory, changes it the way an application does, and
 * asserts that the very next fmpl_memmon_gone reports the range (the
 * guarantee the cache's correctness rests on - no waiting, no retry):
 * munmap, free() of a block glibc mapped, madvise(MADV_DONTNEED), mremap,
 * mmap MAP_FIXED over it; that a page discarded while watched can be
 * touched again (the fault comes to the monitor, which lets it go on)
 * and is reported; that unwatched or unrelated memory is not reported;
 * that a file mapping cannot be watched; that a queue overflow says so;
 * that a discarded huge page faulted on is let go too.
 * No userfaultfd here is a failure: the cache would be off.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <check.h>

#include "transport/memmon.h"

#define PAGE ((size_t)sysconf(_SC_PAGESIZE))

static fmpl_memmon_t *open_mon(void)
{
    const char *why = NULL;
    fmpl_memmon_t *m = fmpl_memmon_open(&why);
    ck_assert_msg(m != NULL, "no memory monitor: %s", why ? why : "?");
    return m;
}

static unsigned char *map(size_t len)
{
    unsigned char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                            -1, 0);
    ck_assert_ptr_ne(p, MAP_FAILED);
    memset(p, 0x5a, len);
    return p;
}

/* `len` bytes of fresh memory, written, and watched whole. */
static unsigned char *map_watched(fmpl_memmon_t *m, size_t len)
{
    unsigned char *p = map(len);
    ck_assert_int_eq(fmpl_memmon_watch(m, (uintptr_t)p, len), 0);
    return p;
}

/* Does the next fmpl_memmon_gone report a range overlapping [a, a+len)? */
static int reported(fmpl_memmon_t *m, uintptr_t s, size_t len)
{
    fmpl_memmon_range_t g[64];
    int n, hit = 0;
    uintptr_t e = s + len;
    while ((n = fmpl_memmon_gone(m, g, 64)) != 0) {
        ck_assert_int_gt(n, 0);
        for (int i = 0; i < n; i++)
            hit |= g[i].start < e && s < g[i].end;
    }
    return hit;
}

START_TEST(test_munmap)
{
    fmpl_memmon_t *m = open_mon();
    unsigned char *p = map(16 * PAGE);
    ck_assert_int_eq(fmpl_memmon_watch(m, (uintptr_t)p + 100, 10 * PAGE), 0);
    ck_assert(!reported(m, (uintptr_t)p, 16 * PAGE));
    ck_assert_int_eq(munmap(p + 4 * PAGE, PAGE), 0);          /* a part */
    ck_assert_msg(reported(m, (uintptr_t)(p + 4 * PAGE), PAGE),
                  "munmap of a watched page not reported");
    ck_assert_int_eq(munmap(p, 16 * PAGE), 0);
    ck_assert_msg(reported(m, (uintptr_t)p, 4 * PAGE), "munmap of the rest not reported");
    fmpl_memmon_close(m);
}
END_TEST

START_TEST(test_free)
{
    fmpl_memmon_t *m = open_mon();
    mallopt(M_MMAP_THRESHOLD, 128 * 1024);    /* glibc maps blocks above it */
    size_t len = 4 << 20;
    unsigned char *p = malloc(len);
    ck_assert_ptr_nonnull(p);
    memset(p, 1, len);
    uintptr_t was = (uintptr_t)p;
    ck_assert_int_eq(fmpl_memmon_watch(m, was, len), 0);
    free(p);
    ck_assert_msg(reported(m, was, len), "free() of a mapped block not reported");
    unsigned char *q = malloc(len);           /* mostly at the same address */
    ck_assert_ptr_nonnull(q);
    memset(q, 2, len);
    ck_assert(!reported(m, (uintptr_t)q, len));          /* not watched: new memory */
    free(q);
    fmpl_memmon_close(m);
}
END_TEST

START_TEST(test_discard)
{
    fmpl_memmon_t *m = open_mon();
    unsigned char *p = map_watched(m, 8 * PAGE);
    ck_assert_int_eq(madvise(p + PAGE, 2 * PAGE, MADV_DONTNEED), 0);
    ck_assert_msg(reported(m, (uintptr_t)(p + PAGE), 2 * PAGE), "MADV_DONTNEED not reported");
    /* the pages are missing and still watched: touching them must go on
     * (the monitor's thread takes the fault), read fresh zero pages, and
     * be reported as gone */
    ck_assert_int_eq(p[PAGE + 5], 0);
    p[2 * PAGE + 7] = 9;
    ck_assert_int_eq(p[2 * PAGE + 7], 9);
    ck_assert_msg(reported(m, (uintptr_t)(p + PAGE), 2 * PAGE),
                  "a fault on a watched page not reported");
    ck_assert_int_eq(p[0], 0x5a);             /* the others untouched */
    munmap(p, 8 * PAGE);
    fmpl_memmon_close(m);
}
END_TEST

START_TEST(test_mremap)
{
    fmpl_memmon_t *m = open_mon();
    unsigned char *p = map_watched(m, 4 * PAGE);
    unsigned char *q = mremap(p, 4 * PAGE, 64 * PAGE, MREMAP_MAYMOVE);
    ck_assert_ptr_ne(q, MAP_FAILED);
    ck_assert_msg(q == p || reported(m, (uintptr_t)p, 4 * PAGE), "mremap moving it not reported");
    ck_assert_int_eq(q[3 * PAGE], 0x5a);
    munmap(q, 64 * PAGE);
    fmpl_memmon_close(m);
}
END_TEST

START_TEST(test_map_over)
{
    fmpl_memmon_t *m = open_mon();
    unsigned char *p = map_watched(m, 4 * PAGE);
    void *q = mmap(p + PAGE, PAGE, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    ck_assert_ptr_eq(q, p + PAGE);
    ck_assert_msg(reported(m, (uintptr_t)(p + PAGE), PAGE), "mmap MAP_FIXED over it not reported");
    munmap(p, 4 * PAGE);
    fmpl_memmon_close(m);
}
END_TEST

START_TEST(test_unwatched)
{
    fmpl_memmon_t *m = open_mon();
    unsigned char *w = map(4 * PAGE), *u = map(4 * PAGE);
    ck_assert_int_eq(fmpl_memmon_watch(m, (uintptr_t)w, 4 * PAGE), 0);
    ck_assert_int_eq(munmap(u, 4 * PAGE), 0);
    ck_assert_msg(!reported(m, (uintptr_t)u, 4 * PAGE), "unwatched memory reported");
    fmpl_memmon_unwatch(m, (uintptr_t)w, 4 * PAGE);
    ck_assert_int_eq(munmap(w, 4 * PAGE), 0);
    ck_assert_msg(!reported(m, (uintptr_t)w, 4 * PAGE), "memory no longer watched reported");
    fmpl_memmon_close(m);
}
END_TEST

START_TEST(test_file)
{
    fmpl_memmon_t *m = open_mon();
    char name[] = "/tmp/check_memmon.XXXXXX";
    int fd = mkstemp(name);
    ck_assert_int_ge(fd, 0);
    unlink(name);
    ck_assert_int_eq(ftruncate(fd, (off_t)PAGE), 0);
    void *p = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    ck_assert_ptr_ne(p, MAP_FAILED);
    ck_assert_int_eq(fmpl_memmon_watch(m, (uintptr_t)p, PAGE), -1);
    munmap(p, PAGE);
    close(fd);
    fmpl_memmon_close(m);
}
END_TEST

START_TEST(test_overflow)
{
    fmpl_memmon_t *m = open_mon();
    const int n = 1500;                        /* more than the queue holds */
    unsigned char *p = map_watched(m, (size_t)n * PAGE);
    for (int i = 0; i < n; i++)
        ck_assert_int_eq(munmap(p + (size_t)i * PAGE, PAGE), 0);
    fmpl_memmon_range_t g[8];
    ck_assert_int_eq(fmpl_memmon_gone(m, g, 8), -1);
    ck_assert_int_eq(fmpl_memmon_gone(m, g, 8), 0);
    fmpl_memmon_close(m);
}
END_TEST

/* A huge page (hugetlbfs) discarded while watched: the fault must still be
 * let go (watches of huge pages go whole).  Reserves two huge pages for
 * the test when the system has none (root), and gives them back. */
START_TEST(test_huge_page)
{
    const char *nr = "/proc/sys/vm/nr_hugepages";
    long before = -1;
    FILE *f = fopen(nr, "r");
    ck_assert_msg(f && fscanf(f, "%ld", &before) == 1, "cannot read %s", nr);
    fclose(f);
    if (before < 2) {
        f = fopen(nr, "w");
        ck_assert_msg(f != NULL, "cannot reserve huge pages (%s): not root?", nr);
        fprintf(f, "%ld\n", before + 2);
        fclose(f);
    }
    size_t len = 2 << 20;
    unsigned char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
    int mapped = p != MAP_FAILED;
    int ok = 0, seen = 0, val = -1;
    if (mapped) {
        fmpl_memmon_t *m = open_mon();
        memset(p, 3, len);
        ok = fmpl_memmon_watch(m, (uintptr_t)p, len) == 0 &&
             madvise(p, len, MADV_DONTNEED) == 0 && reported(m, (uintptr_t)p, len);
        val = p[5 * PAGE];             /* missing and watched */
        seen = reported(m, (uintptr_t)p, len);
        fmpl_memmon_close(m);
        munmap(p, len);
    }
    if (before < 2 && (f = fopen(nr, "w"))) {
        fprintf(f, "%ld\n", before);
        fclose(f);
    }
    ck_assert_msg(mapped, "no huge page to map");
    ck_assert_msg(ok, "huge page: watch, discard or its report failed");
    ck_assert_int_eq(val, 0);
    ck_assert_msg(seen, "the fault on a huge page not reported");
}
END_TEST

static Suite *memmon_suite(void)
{
    Suite *s = suite_create("memmon");
    TCase *tc = tcase_create("memmon");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_munmap);
    tcase_add_test(tc, test_free);
    tcase_add_test(tc, test_discard);
    tcase_add_test(tc, test_mremap);
    tcase_add_test(tc, test_map_over);
    tcase_add_test(tc, test_unwatched);
    tcase_add_test(tc, test_file);
    tcase_add_test(tc, test_overflow);
    tcase_add_test(tc, test_huge_page);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(memmon_suite());
    srunner_run_all(sr, CK_NORMAL);
    int nfail = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nfail == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
