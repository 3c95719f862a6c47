/*
 * Unit tests for lib/analysis/estimate.c: what a sampled capture's blocks
 * stand for. Each block of s bytes recorded at the interval N weighs
 * w = 1/(1 - e^(-(s+1)/N)) (computed here on its own, with libm), blocks of
 * N bytes and up weigh 1; bytes are rounded per block, counts dithered, and
 * whatever is freed takes off exactly what it added, mappings in pieces
 * too; the variances are the sums of s^2 (w^2 - w); an exact capture is
 * untouched.
 */
#include <config.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>

#include "tests/unit/analysis-fixture.h"

/* The weight of a block, independently of lib/analysis. */
static double weight(uint64_t size, uint64_t interval)
{
	return size >= interval ? 1.0 : 1.0 / (1.0 - exp(-(double)(size + 1) / (double)interval));
}

static void begin_sampled(uint64_t interval)
{
	struct mp_analysis_opts o = MP_ANALYSIS_OPTS_INIT;
	begin_header(&o, 0, interval);
}

static void test_weights(void **state)
{
	(void)state;
	assert_true(fabs(mp_sampling_weight(100, 1000) - weight(100, 1000)) < 1e-12);
	assert_true(fabs(mp_sampling_weight(0, 1000) - weight(0, 1000)) < 1e-9);
	assert_true(mp_sampling_weight(999, 1000) > 1.5);
	assert_true(mp_sampling_weight(1000, 1000) == 1.0);
	assert_true(mp_sampling_weight(1 << 20, 1000) == 1.0);
	assert_true(mp_sampling_weight(100, 0) == 1.0);
	assert_true(fabs(mp_sampling_error(512 * 1024, 100 << 20) - sqrt(0.005)) < 1e-12);
	assert_true(mp_sampling_error(0, 100) == 0.0);
}

/*
 * 10000 blocks of 100 bytes at N = 1000 (w = 10.41): each adds round(100 w)
 * bytes and 10 or 11 blocks; their mean is w within 4 standard errors of the
 * dither (sqrt(f (1 - f) / n), f the fraction); freed, every one takes off
 * what it added: nothing is left, and the frees count as many as the
 * allocations.
 */
static void test_small_blocks(void **state)
{
	const uint64_t n = 10000, s = 100, interval = 1000;
	double w = weight(s, interval), f = w - floor(w);
	uint64_t each = (uint64_t)llround((double)s * w);
	(void)state;
	begin_sampled(interval);
	for (uint64_t i = 0; i < n; i++)
		ev_alloc(0, MALLOC, 0x100000 + 16 * i, s, 0);
	assert_int_equal(A.totals.bytes_allocated, n * each);
	assert_true(A.totals.n_allocs >= n * (uint64_t)floor(w) && A.totals.n_allocs <= n * (uint64_t)ceil(w));
	assert_true(fabs((double)A.totals.n_allocs / n - w) < 4 * sqrt(f * (1 - f) / n));
	assert_int_equal(A.totals.peak_bytes, n * each);
	assert_int_equal(A.totals.peak_count, A.totals.n_allocs);
	for (uint64_t i = 0; i < n; i += 2)
		ev_free(0, FREE, 0x100000 + 16 * i);
	for (uint64_t i = 1; i < n; i += 2)
		ev_free(0, FREE, 0x100000 + 16 * i);
	mp_analysis_finish(&A);
	assert_int_equal(A.totals.n_frees, A.totals.n_allocs);
	assert_counts(A.slots[0].leaked, 0, 0);
	assert_int_equal(A.totals.leaked_bytes, 0);
	assert_int_equal(A.totals.leaked_count, 0);
	assert_true(mp_analysis_estimated(&A));
	assert_int_equal(A.sampling_interval, interval);
	assert_false(A.sampling_mixed);
}

/* Blocks of the interval and up are recorded all: themselves, exactly. */
static void test_large_exact(void **state)
{
	(void)state;
	begin_sampled(4096);
	ev_alloc(0, MALLOC, 0x1000, 4096, 0);
	ev_alloc(0, MALLOC, 0x9000, 1 << 20, 0);
	ev_free(0, FREE, 0x1000);
	mp_analysis_finish(&A);
	assert_int_equal(A.totals.n_allocs, 2);
	assert_int_equal(A.totals.bytes_allocated, 4096 + (1 << 20));
	assert_int_equal(A.totals.leaked_bytes, 1 << 20);
	assert_int_equal(A.totals.leaked_count, 1);
	assert_true(A.totals.var_allocated == 0 && A.totals.var_leaked == 0);
}

/*
 * A mapping of 3 pages at N = 64 KiB, unmapped a page at a time (the middle
 * first): the pieces take off their shares, rounded so that they add up to
 * the mapping's estimate: nothing is left.
 */
static void test_mapping_pieces(void **state)
{
	const uint64_t interval = 65536, base = 0x7f0000000000;
	uint64_t est = (uint64_t)llround(12288 * weight(12288, interval));
	(void)state;
	begin_sampled(interval);
	ev_alloc(0, MMAP, base, 12288, 0);
	assert_int_equal(A.totals.bytes_allocated, est);
	ev_range(0, MUNMAP, base + 4096, 4096);
	assert_true(A.totals.peak_bytes == est);
	ev_range(0, MUNMAP, base, 4096);
	ev_range(0, MUNMAP, base + 8192, 4096);
	mp_analysis_finish(&A);
	assert_int_equal(A.totals.leaked_bytes, 0);
	assert_int_equal(A.totals.leaked_count, 0);
	assert_counts(A.slots[0].leaked, 0, 0);
}

/* The variances: sum of s^2 (w^2 - w) over what each estimate counts. */
static void test_variances(void **state)
{
	const uint64_t interval = 1000;
	double w1 = weight(10, interval), w2 = weight(500, interval);
	double v1 = 100.0 * (w1 * w1 - w1), v2 = 250000.0 * (w2 * w2 - w2);
	(void)state;
	begin_sampled(interval);
	ev_alloc(0, MALLOC, 0x1000, 10, 0);
	ev_alloc(0, MALLOC, 0x2000, 500, 0);
	ev_alloc(0, MALLOC, 0x3000, 5000, 0);
	ev_free(0, FREE, 0x2000);
	mp_analysis_finish(&A);
	assert_true(fabs(A.totals.var_allocated - (v1 + v2)) < 1e-6 * (v1 + v2));
	assert_true(fabs(A.totals.var_peak - (v1 + v2)) < 1e-6 * (v1 + v2));
	assert_true(fabs(A.totals.var_leaked - v1) < 1e-6 * v1);
}

/* An exact capture: each block is itself, no variance, nothing says "estimated". */
static void test_exact(void **state)
{
	(void)state;
	begin(0, 1);
	ev_alloc(0, MALLOC, 0x1000, 100, 0);
	ev_alloc(0, MALLOC, 0x2000, 7, 0);
	mp_analysis_finish(&A);
	assert_int_equal(A.totals.n_allocs, 2);
	assert_int_equal(A.totals.bytes_allocated, 107);
	assert_true(A.totals.var_allocated == 0);
	assert_false(mp_analysis_estimated(&A));
	assert_int_equal(A.sampling_interval, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_weights),
		cmocka_unit_test_teardown(test_small_blocks, end),
		cmocka_unit_test_teardown(test_large_exact, end),
		cmocka_unit_test_teardown(test_mapping_pieces, end),
		cmocka_unit_test_teardown(test_variances, end),
		cmocka_unit_test_teardown(test_exact, end),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
