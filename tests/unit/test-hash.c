/* Unit tests for lib/hash and lib/strtab: maps, index sets, interned strings. */
#include <config.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "lib/util/hash.h"
#include "lib/util/strtab.h"

static void test_intmap(void **state)
{
	struct mp_intmap m;
	uint64_t v;
	(void)state;
	mp_intmap_init(&m);
	assert_false(mp_intmap_get(&m, 1, &v));
	assert_false(mp_intmap_del(&m, 1));
	/* Keys that share low bits, as aligned addresses do. */
	for (uint64_t i = 0; i < 20000; i++)
		mp_intmap_put(&m, i << 12, i * 3);
	assert_int_equal(m.n, 20000);
	mp_intmap_put(&m, 5 << 12, 7);            /* replace */
	assert_int_equal(m.n, 20000);
	assert_true(mp_intmap_get(&m, 5 << 12, &v));
	assert_int_equal(v, 7);
	/* Delete every odd key: the even ones must stay reachable (backward shift). */
	for (uint64_t i = 1; i < 20000; i += 2)
		assert_true(mp_intmap_del(&m, i << 12));
	assert_int_equal(m.n, 10000);
	for (uint64_t i = 0; i < 20000; i++) {
		bool found = mp_intmap_get(&m, i << 12, &v);
		assert_int_equal(found, i % 2 == 0);
		if (found && i != 5)
			assert_int_equal(v, i * 3);
	}
	mp_intmap_put(&m, 0, UINT64_MAX - 1);
	assert_true(mp_intmap_get(&m, 0, &v));
	assert_int_equal(v, UINT64_MAX - 1);
	/* take: the value, and the key is gone. */
	v = 0;
	assert_true(mp_intmap_take(&m, 4 << 12, &v));
	assert_int_equal(v, 12);
	assert_false(mp_intmap_get(&m, 4 << 12, &v));
	assert_false(mp_intmap_take(&m, 4 << 12, &v));
	mp_intmap_release(&m);
}

/* A map used as the collector uses it: blocks come and go at random, a few stay. */
static void test_intmap_churn(void **state)
{
	struct mp_intmap m;
	uint64_t live[512] = { 0 }, rng = 1, v, stayed = 0;
	(void)state;
	mp_intmap_init(&m);
	for (uint64_t i = 1; i <= 200000; i++) {
		uint64_t s;
		rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
		s = (rng >> 33) % 512;
		if (live[s]) {
			if ((rng >> 20) % 100 == 0) {
				stayed++; /* leaked: stays in the map */
			} else {
				assert_true(mp_intmap_take(&m, live[s] * 16, &v));
				assert_int_equal(v, live[s]);
			}
		}
		live[s] = i;
		mp_intmap_put(&m, i * 16, i);
	}
	for (int s = 0; s < 512; s++)
		if (live[s])
			stayed++;
	assert_int_equal(m.n, stayed);
	/* Never more than half full. */
	assert_true(m.n * 2 <= m.cap);
	mp_intmap_release(&m);
}

static const char *const words[] = { "alpha", "beta", "gamma", "alpha2" };

static bool word_eq(const void *ctx, uint32_t idx)
{
	return !strcmp(ctx, words[idx]);
}

static void test_idxset(void **state)
{
	struct mp_idxset s;
	(void)state;
	mp_idxset_init(&s);
	assert_int_equal(mp_idxset_find(&s, 1, word_eq, "alpha"), UINT32_MAX);
	for (uint32_t i = 0; i < 4; i++)
		mp_idxset_add(&s, i == 3 ? mp_hash_bytes("alpha", 5) : mp_hash_bytes(words[i], strlen(words[i])), i);
	/* alpha2 was added under alpha's hash: equality decides. */
	assert_int_equal(mp_idxset_find(&s, mp_hash_bytes("alpha", 5), word_eq, "alpha"), 0);
	assert_int_equal(mp_idxset_find(&s, mp_hash_bytes("alpha", 5), word_eq, "alpha2"), 3);
	assert_int_equal(mp_idxset_find(&s, mp_hash_bytes("gamma", 5), word_eq, "gamma"), 2);
	assert_int_equal(mp_idxset_find(&s, mp_hash_bytes("delta", 5), word_eq, "delta"), UINT32_MAX);
	mp_idxset_release(&s);
}

static void test_strtab(void **state)
{
	struct mp_strtab t;
	uint32_t a, b, c, n;
	(void)state;
	mp_strtab_init(&t);
	assert_string_equal(mp_strtab_get(&t, 0), "");
	assert_int_equal(mp_strtab_intern(&t, "", 0), 0);
	a = mp_strtab_intern_str(&t, "main");
	b = mp_strtab_intern_str(&t, "malloc");
	assert_int_not_equal(a, b);
	assert_int_equal(mp_strtab_intern(&t, "main", 4), a);
	assert_int_equal(mp_strtab_intern(&t, "mainly", 4), a); /* only len bytes count */
	c = mp_strtab_intern(&t, "a\0b", 3);
	n = mp_strtab_intern(&t, "a\0c", 3);
	assert_int_not_equal(c, n);
	assert_int_equal(mp_strtab_len(&t, c), 3);
	assert_memory_equal(mp_strtab_get(&t, c), "a\0b", 4);
	assert_string_equal(mp_strtab_get(&t, 9999), "");
	for (int i = 0; i < 5000; i++) {
		char buf[16];
		snprintf(buf, sizeof(buf), "s%d", i);
		assert_int_equal(mp_strtab_intern_str(&t, buf), mp_strtab_intern_str(&t, buf));
	}
	assert_int_equal(t.n, 5 + 5000);
	assert_string_equal(mp_strtab_get(&t, a), "main");
	mp_strtab_release(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_intmap),
		cmocka_unit_test(test_intmap_churn),
		cmocka_unit_test(test_idxset),
		cmocka_unit_test(test_strtab),
	};
	return cmocka_run_group_tests(tests, NULL, NULL) ? 1 : 0;
}
