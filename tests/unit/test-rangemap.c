/* Unit tests for lib/rangemap: cutting mappings by head, tail, hole and span. */
#include <config.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "lib/analysis/rangemap.h"
#include "lib/util/strbuf.h"

static struct strbuf log_ = STRBUF_INIT;

static void record(void *ctx, uint64_t value, uint64_t bytes, int pieces)
{
	(void)ctx;
	strbuf_addf(&log_, "v%llu-%llu%+d ", (unsigned long long)value, (unsigned long long)bytes,
		    pieces);
}

static void dump_one(void *ctx, uint64_t start, uint64_t end, uint64_t value)
{
	strbuf_addf(ctx, "[%llx,%llx)=%llu ", (unsigned long long)start, (unsigned long long)end,
		    (unsigned long long)value);
}

static const char *dump(const struct mp_rangemap *m)
{
	static struct strbuf sb = STRBUF_INIT;
	strbuf_reset(&sb);
	mp_rangemap_each(m, dump_one, &sb);
	return sb.buf;
}

static uint64_t cut(struct mp_rangemap *m, uint64_t start, uint64_t end)
{
	strbuf_reset(&log_);
	return mp_rangemap_remove(m, start, end, record, NULL);
}

static void test_cuts(void **state)
{
	struct mp_rangemap m;
	(void)state;
	mp_rangemap_init(&m);
	mp_rangemap_insert(&m, 0x1000, 0x9000, 1);
	mp_rangemap_insert(&m, 0x9000, 0xa000, 2);
	mp_rangemap_insert(&m, 0x20000, 0x20000, 3); /* empty: ignored */
	assert_string_equal(dump(&m), "[1000,9000)=1 [9000,a000)=2 ");
	assert_int_equal(m.n, 2);

	assert_int_equal(cut(&m, 0x1000, 0x2000), 0x1000);     /* head */
	assert_string_equal(log_.buf, "v1-4096+0 ");
	assert_int_equal(cut(&m, 0x8000, 0x9000), 0x1000);     /* tail */
	assert_string_equal(log_.buf, "v1-4096+0 ");
	assert_int_equal(cut(&m, 0x4000, 0x5000), 0x1000);     /* a hole */
	assert_string_equal(log_.buf, "v1-4096+1 ");
	assert_string_equal(dump(&m), "[2000,4000)=1 [5000,8000)=1 [9000,a000)=2 ");
	assert_int_equal(m.n, 3);
	assert_int_equal(cut(&m, 0x0, 0x1000), 0);              /* nothing there */
	assert_string_equal(log_.buf, "");
	/* Across everything: the tail of one piece, a whole piece, the head of another. */
	assert_int_equal(cut(&m, 0x3000, 0x9800), 0x1000 + 0x3000 + 0x800);
	assert_string_equal(log_.buf, "v1-4096+0 v1-12288-1 v2-2048+0 ");
	assert_string_equal(dump(&m), "[2000,3000)=1 [9800,a000)=2 ");
	assert_int_equal(cut(&m, 0, UINT64_MAX), 0x1000 + 0x800);
	assert_string_equal(log_.buf, "v1-4096-1 v2-2048-1 ");
	assert_string_equal(dump(&m), "");
	assert_int_equal(m.n, 0);
	mp_rangemap_release(&m);
}

/* Many ranges in random order stay sorted and disjoint. */
static void test_many(void **state)
{
	struct mp_rangemap m;
	uint64_t x = 12345, total = 0;
	(void)state;
	mp_rangemap_init(&m);
	for (uint64_t i = 0; i < 4096; i++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		uint64_t slot = (x >> 33) % 100000;
		if (mp_rangemap_remove(&m, slot * 0x1000, slot * 0x1000 + 0x1000, NULL, NULL))
			total--; /* that slot was mapped already */
		mp_rangemap_insert(&m, slot * 0x1000, slot * 0x1000 + 0x1000, slot);
		total++;
	}
	assert_int_equal(m.n, total);
	/* Unmapping everything returns exactly the mapped bytes. */
	assert_int_equal(mp_rangemap_remove(&m, 0, UINT64_MAX, NULL, NULL), total * 0x1000);
	assert_int_equal(m.n, 0);
	mp_rangemap_release(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cuts),
		cmocka_unit_test(test_many),
	};
	int ret = cmocka_run_group_tests(tests, NULL, NULL) ? 1 : 0;
	strbuf_release(&log_);
	return ret;
}
