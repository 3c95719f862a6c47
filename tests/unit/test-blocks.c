/* Unit tests for lib/blocks: the pages by serial number, the table by address, and moves between them. */
#include <config.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "lib/analysis/blocks.h"

static struct mp_block *add(struct mp_blocks *bs, uint64_t key, uint64_t size)
{
	struct mp_block *b = mp_blocks_insert(bs, key);
	assert_int_equal(b->key, key);
	b->size = size;
	b->serial = key ^ 0x5a5a;
	b->slot1 = (uint32_t)(size % 1000) + 1;
	b->thread = (uint32_t)(size % 7);
	return b;
}

static void expect_block(struct mp_blocks *bs, uint64_t key, uint64_t size)
{
	struct mp_block *b = mp_blocks_find(bs, key);
	assert_non_null(b);
	assert_int_equal(b->key, key);
	assert_int_equal(b->size, size);
	assert_int_equal(b->serial, key ^ 0x5a5a);
	assert_int_equal(b->slot1, (uint32_t)(size % 1000) + 1);
	assert_int_equal(b->thread, (uint32_t)(size % 7));
}

/*
 * A block that outlives the blocks around it moves to the table, whole,
 * when its page, no longer the newest, falls to a sixteenth live; pages go
 * as they empty, so memory follows the live blocks.
 */
static void test_long_lived_serial(void **state)
{
	struct mp_blocks bs;
	(void)state;
	mp_blocks_init(&bs);
	add(&bs, MP_SERIAL_ADDR(0), 100);
	for (uint64_t s = 1; s < 3 * MP_BLOCKS_PAGE; s++) {
		add(&bs, MP_SERIAL_ADDR(s), 200 + s);
		mp_blocks_delete(&bs, mp_blocks_find(&bs, MP_SERIAL_ADDR(s)));
	}
	assert_int_equal(mp_blocks_count(&bs), 1);
	assert_int_equal(bs.n, 1); /* in the table */
	assert_int_equal(bs.pages_live, 1); /* the newest page only */
	expect_block(&bs, MP_SERIAL_ADDR(0), 100);
	assert_null(mp_blocks_find(&bs, MP_SERIAL_ADDR(MP_BLOCKS_PAGE)));
	assert_null(mp_blocks_find(&bs, MP_SERIAL_ADDR(2 * MP_BLOCKS_PAGE)));
	mp_blocks_delete(&bs, mp_blocks_find(&bs, MP_SERIAL_ADDR(0)));
	assert_int_equal(mp_blocks_count(&bs), 0);
	assert_null(mp_blocks_find(&bs, MP_SERIAL_ADDR(0)));
	/* A page of blocks kept half live stays a page. */
	for (uint64_t s = 3 * MP_BLOCKS_PAGE; s < 6 * MP_BLOCKS_PAGE; s++) {
		add(&bs, MP_SERIAL_ADDR(s), s);
		if (s % 2)
			mp_blocks_delete(&bs, mp_blocks_find(&bs, MP_SERIAL_ADDR(s)));
	}
	assert_int_equal(bs.n, 0);
	assert_int_equal(bs.pages_live, 3);
	for (uint64_t s = 3 * MP_BLOCKS_PAGE; s < 6 * MP_BLOCKS_PAGE; s += 2)
		expect_block(&bs, MP_SERIAL_ADDR(s), s);
	mp_blocks_release(&bs);
}

/* Heap addresses use the table only, and never meet the serial numbers. */
static void test_addresses(void **state)
{
	struct mp_blocks bs;
	(void)state;
	mp_blocks_init(&bs);
	for (uint64_t i = 0; i < 5000; i++)
		add(&bs, 0x7f0000001000ull + i * 48, i);
	add(&bs, MP_SERIAL_ADDR(0x7f0000001000ull >> 4), 77);
	assert_int_equal(bs.n, 5001); /* a number far beyond any page: in the table too */
	assert_int_equal(bs.pages_live, 0);
	assert_int_equal(mp_blocks_count(&bs), 5001);
	for (uint64_t i = 0; i < 5000; i += 3)
		mp_blocks_delete(&bs, mp_blocks_find(&bs, 0x7f0000001000ull + i * 48));
	for (uint64_t i = 0; i < 5000; i++) {
		if (i % 3)
			expect_block(&bs, 0x7f0000001000ull + i * 48, i);
		else
			assert_null(mp_blocks_find(&bs, 0x7f0000001000ull + i * 48));
	}
	expect_block(&bs, MP_SERIAL_ADDR(0x7f0000001000ull >> 4), 77);
	mp_blocks_release(&bs);
}

/* The reference: what is live, by key, in a plain array. */
struct model {
	uint64_t *keys, *sizes;
	size_t n;
};

static size_t model_find(const struct model *m, uint64_t key)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->keys[i] == key)
			return i;
	return SIZE_MAX;
}

static void count_each(void *ctx, const struct mp_block *b)
{
	struct model *m = ctx;
	size_t i = model_find(m, b->key);
	assert_true(i != SIZE_MAX);
	/* Each live block once: mark it seen. */
	assert_true(m->sizes[i] != UINT64_MAX);
	m->sizes[i] = UINT64_MAX;
}

static uint64_t rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/*
 * Random work against the model: numbered blocks mostly freed young, some
 * kept for several pages, some numbers out of order and far ahead (as a
 * corrupt capture could give), and heap addresses mixed in.
 */
static void test_against_model(void **state)
{
	enum { OPS = 200000, CAP = 20000 };
	struct mp_blocks bs;
	struct model m = { calloc(CAP, sizeof(uint64_t)), calloc(CAP, sizeof(uint64_t)), 0 };
	uint64_t x = 88172645463325252ull, next = 0;
	(void)state;
	mp_blocks_init(&bs);
	for (size_t op = 0; op < OPS; op++) {
		uint64_t r = rnd(&x) % 100, key;
		if (m.n && (r < 45 || m.n == CAP)) {
			/* Free: most often one of the last added (roughly the youngest), sometimes any. */
			size_t i = r < 35 && m.n > 64 ? m.n - 1 - rnd(&x) % 64 : rnd(&x) % m.n;
			uint64_t gone = m.keys[i];
			struct mp_block *b = mp_blocks_find(&bs, gone);
			assert_non_null(b);
			assert_int_equal(b->size, m.sizes[i]);
			mp_blocks_delete(&bs, b);
			m.keys[i] = m.keys[m.n - 1];
			m.sizes[i] = m.sizes[m.n - 1];
			m.n--;
			assert_null(mp_blocks_find(&bs, gone));
			continue;
		}
		if (r < 90)
			key = MP_SERIAL_ADDR(next++);
		else if (r < 93 && next > 10)
			key = MP_SERIAL_ADDR(next - 1 - rnd(&x) % (next < 3 * MP_BLOCKS_PAGE ? next : 3 * MP_BLOCKS_PAGE));
		else if (r < 94)
			key = MP_SERIAL_ADDR(next + 20 * MP_BLOCKS_PAGE + rnd(&x) % 1000);
		else
			key = 0x5500000000ull + (rnd(&x) % 100000) * 16;
		if (model_find(&m, key) != SIZE_MAX)
			continue; /* live already: the analysis frees it first */
		assert_null(mp_blocks_find(&bs, key));
		add(&bs, key, op);
		m.keys[m.n] = key;
		m.sizes[m.n++] = op;
		assert_int_equal(mp_blocks_count(&bs), m.n);
	}
	for (size_t i = 0; i < m.n; i++)
		expect_block(&bs, m.keys[i], m.sizes[i]);
	assert_true(bs.n > 0 && mp_blocks_count(&bs) > bs.n); /* both the table and the pages used */
	mp_blocks_each(&bs, count_each, &m);
	for (size_t i = 0; i < m.n; i++)
		assert_true(m.sizes[i] == UINT64_MAX);
	mp_blocks_release(&bs);
	free(m.keys);
	free(m.sizes);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_long_lived_serial),
		cmocka_unit_test(test_addresses),
		cmocka_unit_test(test_against_model),
	};
	return cmocka_run_group_tests(tests, NULL, NULL) ? 1 : 0;
}
