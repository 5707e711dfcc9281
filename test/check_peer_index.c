/*
 * check_peer_index - the number -> peer index (src/transport/peer_index.h)
 * that tells dcfa's ranks and host agent which peer a completion's queue
 * pair belongs to: every key added is found with its peer through the
 * index's growth, keys never added are not, keys that all hash to one
 * slot are told apart, and an index freed is empty again.  The ranks and
 * the agent use it on real verbs in test/dcfa_test.sh.
 */
#include <stdlib.h>

#include <check.h>

#include "transport/peer_index.h"

/* queue pair numbers are 24 bits: distinct ones, scattered */
static uint32_t key_of(int i) { return ((uint32_t)i * 40503u + 17u) & 0xffffffu; }

START_TEST(test_empty)
{
    fmpl_peer_index_t x = { 0 };
    ck_assert_int_eq(fmpl_peer_index_find(&x, 0), -1);
    ck_assert_int_eq(fmpl_peer_index_find(&x, 12345), -1);
    fmpl_peer_index_free(&x);
    ck_assert_ptr_null(x.slot);
}
END_TEST

START_TEST(test_growth)
{
    enum { N = 5000 };
    fmpl_peer_index_t x = { 0 };
    for (int i = 0; i < N; i++) {
        ck_assert_int_eq(fmpl_peer_index_add(&x, key_of(i), i), 0);
        /* every key so far, after each growth */
        if ((i & (i + 1)) == 0 || i == N - 1)
            for (int j = 0; j <= i; j++)
                ck_assert_int_eq(fmpl_peer_index_find(&x, key_of(j)), j);
    }
    ck_assert_int_eq(x.n, N);
    ck_assert_uint_ge(x.mask + 1, 2u * N);   /* at most half full */
    for (int i = N; i < 2 * N; i++)
        ck_assert_int_eq(fmpl_peer_index_find(&x, key_of(i)), -1);
    fmpl_peer_index_free(&x);
    ck_assert_int_eq(fmpl_peer_index_find(&x, key_of(0)), -1);
}
END_TEST

START_TEST(test_collisions)
{
    /* multiples of 2^26 hash to slot 0 of any table under 2^26 slots */
    fmpl_peer_index_t x = { 0 };
    for (int i = 0; i < 64; i++)
        ck_assert_int_eq(fmpl_peer_index_add(&x, (uint32_t)i << 26, 63 - i), 0);
    for (int i = 0; i < 64; i++)
        ck_assert_int_eq(fmpl_peer_index_find(&x, (uint32_t)i << 26), 63 - i);
    ck_assert_int_eq(fmpl_peer_index_find(&x, 1u << 25), -1);
    fmpl_peer_index_free(&x);
}
END_TEST

static Suite *peer_index_suite(void)
{
    Suite *s = suite_create("peer_index");
    TCase *tc = tcase_create("peer_index");
    tcase_add_test(tc, test_empty);
    tcase_add_test(tc, test_growth);
    tcase_add_test(tc, test_collisions);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(peer_index_suite());
    srunner_run_all(sr, CK_NORMAL);
    int nfail = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nfail == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
