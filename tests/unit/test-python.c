/*
 * Python frames: the tracker's reading of CPython's locations tables and
 * str data (lib/tracker/pyline.h), against tables CPython 3.11 made, and the
 * PYFRAME record (lib/format/pyframe.h) round trip.
 */
#include <config.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "lib/format/pyframe.h"
#include "lib/tracker/pyline.h"

static size_t unhex(const char *hex, uint8_t *out)
{
	size_t n = 0;
	for (; hex[0] && hex[1]; hex += 2) {
		unsigned v;
		sscanf(hex, "%2x", &v);
		out[n++] = (uint8_t)v;
	}
	return n;
}

/* want[i]: line and column of unit i as co_positions() gives them (0 and -1 for None). */
static void check_table(const char *hex, int32_t first, const int (*want)[2], size_t n)
{
	uint8_t table[256];
	size_t len = unhex(hex, table);
	for (size_t i = 0; i < n; i++) {
		uint32_t line, col;
		assert_int_equal(mp_pyline_find(table, len, first, (uint32_t)i, &line, &col), 0);
		/* A unit without a location is given the function's first line. */
		assert_int_equal(line, want[i][0] ? (uint32_t)want[i][0] : (uint32_t)first);
		assert_int_equal(col, want[i][1] < 0 ? 0 : (uint32_t)want[i][1] + 1);
	}
	/* Past the table: not found, the first line. */
	{
		uint32_t line, col;
		assert_int_equal(mp_pyline_find(table, len, first, (uint32_t)n, &line, &col), -1);
		assert_int_equal(line, (uint32_t)first);
	}
}

/*
 * def f(a, b):             x = [a,\n b]; y = {"k": (a +\n b)}; z = a if a else \\\n b;
 * return x, y, z: short, one-line and long forms (Python 3.11.2's compile()).
 */
static void test_linetable_forms(void **state)
{
	static const int want[][2] = {
		{ 1, 0 }, { 2, 9 }, { 3, 9 }, { 2, 8 }, { 2, 4 }, { 4, 9 }, { 4, 15 }, { 5, 15 },
		{ 4, 15 }, { 4, 15 }, { 4, 8 }, { 4, 4 }, { 6, 13 }, { 6, 8 }, { 6, 8 }, { 6, 8 },
		{ 7, 8 }, { 6, 4 }, { 8, 11 }, { 8, 14 }, { 8, 17 }, { 8, 11 }, { 8, 4 },
	};
	(void)state;
	check_table("8000d8090ad8090af00301090c8041e0090c8871d80f10f103011011f0000109138041e00d0ef000"
		    "01090a88018801d80809f003000506e00b0c886190118837804e",
		    1, want, sizeof(want) / sizeof(want[0]));
}

/* A closure's prologue has no location (code 15); multi-line jumps use the long form. */
static void test_linetable_no_location(void **state)
{
	static const int want[][2] = {
		{ 0, -1 }, { 1, 0 }, { 2, 4 }, { 2, 4 }, { 2, 4 }, { 2, 4 }, { 2, 4 }, { 4, 11 }, { 4, 4 },
	};
	(void)state;
	check_table("f88000f002010511f000010511f000010511f000010511f000010511e00b0c8048", 1, want,
		    sizeof(want) / sizeof(want[0]));
}

/* python3 -X no_debug_ranges: lines without columns (code 13). */
static void test_linetable_no_columns(void **state)
{
	static const int want[][2] = {
		{ 1, -1 }, { 2, -1 }, { 2, -1 }, { 2, -1 }, { 2, -1 }, { 2, -1 }, { 4, -1 }, { 4, -1 },
	};
	(void)state;
	check_table("e800e802e800e900e800e804e800", 1, want, sizeof(want) / sizeof(want[0]));
}

/* Negative line deltas, multi-byte varints, and a table cut short or without entry bytes. */
static void test_linetable_edges(void **state)
{
	/* Long form (code 14), 1 unit: line delta -3 (svarint 7), end 0, column 200+1 (two groups). */
	uint8_t t[] = { 0x80 | (14 << 3), 7, 0, 0x49, 0x03, 0x02 };
	uint32_t line, col;
	(void)state;
	assert_int_equal(mp_pyline_find(t, sizeof(t), 10, 0, &line, &col), 0);
	assert_int_equal(line, 7);
	assert_int_equal(col, 201);
	/* Cut inside the entry: malformed. */
	assert_int_equal(mp_pyline_find(t, 3, 10, 0, &line, &col), -1);
	/* A first byte without its top bit: malformed. */
	t[0] = 0x10;
	assert_int_equal(mp_pyline_find(t, sizeof(t), 10, 0, &line, &col), -1);
	assert_int_equal(line, 10);
	assert_int_equal(col, 0);
	/* Empty table: the first line. */
	assert_int_equal(mp_pyline_find(t, 0, 10, 0, &line, &col), -1);
	assert_int_equal(line, 10);
	/* A line that would be 0 or less stays the first line. */
	{
		uint8_t neg[] = { 0x80 | (13 << 3), 41 }; /* delta -20 */
		assert_int_equal(mp_pyline_find(neg, sizeof(neg), 5, 0, &line, &col), 0);
		assert_int_equal(line, 5);
	}
}

static void test_utf8(void **state)
{
	char out[16];
	const uint8_t latin1[] = { 'c', 0xe9 };          /* "cé" */
	const uint16_t ucs2[] = { 0x3b1, 0x20ac };       /* "α€" */
	const uint32_t ucs4[] = { 0x1f600, 0xd800, 'x' }; /* emoji, lone surrogate, x */
	(void)state;
	assert_int_equal(mp_pyline_utf8(latin1, 2, 1, out, sizeof(out)), 3);
	assert_memory_equal(out, "c\xc3\xa9", 3);
	assert_int_equal(mp_pyline_utf8((const uint8_t *)ucs2, 2, 2, out, sizeof(out)), 5);
	assert_memory_equal(out, "\xce\xb1\xe2\x82\xac", 5);
	assert_int_equal(mp_pyline_utf8((const uint8_t *)ucs4, 3, 4, out, sizeof(out)), 8);
	assert_memory_equal(out, "\xf0\x9f\x98\x80\xef\xbf\xbdx", 8);
	/* Cut at a character, never inside one. */
	assert_int_equal(mp_pyline_utf8((const uint8_t *)ucs2, 2, 2, out, 4), 2);
}

static void test_pyframe_record(void **state)
{
	uint8_t buf[MP_PYFRAME_MAX], *end;
	char longname[MP_PYFRAME_TEXT_MAX + 100];
	struct mp_pyframe f = { .ip = mp_pyip(7, 12), .function = "Foo.bar", .function_len = 7,
				.file = "/srv/job.py", .file_len = 11, .line = 42, .column = 9 }, g;
	(void)state;
	assert_true(mp_pyip_is(f.ip));
	assert_int_equal(mp_pyip_code(f.ip), 7);
	assert_int_equal(mp_pyip_offset(f.ip), 12);
	assert_false(mp_pyip_is(0x7fffdeadbeefull));
	assert_false(mp_pyip_is(0xffffffffff600000ull)); /* the vsyscall page */
	assert_int_equal(mp_pyip_offset(mp_pyip(1, 1u << 30)), MP_PYIP_OFFSET_MAX);
	end = mp_enc_pyframe(buf, &f);
	assert_int_equal(buf[0], MP_TAG_PYFRAME);
	assert_int_equal(buf[1], (size_t)(end - buf) - 2); /* a one-byte length here */
	assert_int_equal(mp_dec_pyframe(buf + 2, (size_t)(end - buf) - 2, &g), 0);
	assert_int_equal(g.ip, f.ip);
	assert_int_equal(g.function_len, 7);
	assert_memory_equal(g.function, "Foo.bar", 7);
	assert_int_equal(g.file_len, 11);
	assert_memory_equal(g.file, "/srv/job.py", 11);
	assert_int_equal(g.line, 42);
	assert_int_equal(g.column, 9);
	/* Every cut is refused, never read past. */
	for (size_t n = 0; n < (size_t)(end - buf) - 2; n++)
		assert_int_equal(mp_dec_pyframe(buf + 2, n, &g), -1);
	/* A later version's trailing fields are ignored. */
	buf[(size_t)(end - buf)] = 5;
	assert_int_equal(mp_dec_pyframe(buf + 2, (size_t)(end - buf) - 1, &g), 0);
	/* Names are cut to MP_PYFRAME_TEXT_MAX bytes; the record fits MP_PYFRAME_MAX. */
	memset(longname, 'n', sizeof(longname));
	f.function = f.file = longname;
	f.function_len = f.file_len = sizeof(longname);
	f.ip = UINT64_MAX >> 8 | MP_PYIP_BASE;
	end = mp_enc_pyframe(buf, &f);
	assert_true((size_t)(end - buf) <= MP_PYFRAME_MAX);
	{
		const uint8_t *p = buf + 1;
		uint64_t len;
		assert_int_equal(mp_pyframe_uvarint(&p, end, &len), 0);
		assert_int_equal(mp_dec_pyframe(p, (size_t)len, &g), 0);
	}
	assert_int_equal(g.function_len, MP_PYFRAME_TEXT_MAX);
	assert_int_equal(g.file_len, MP_PYFRAME_TEXT_MAX);
	/* An ip outside the range is no Python frame. */
	f.ip = 0x401000;
	f.function_len = f.file_len = 1;
	end = mp_enc_pyframe(buf, &f);
	assert_int_equal(mp_dec_pyframe(buf + 2, (size_t)(end - buf) - 2, &g), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_linetable_forms),
		cmocka_unit_test(test_linetable_no_location),
		cmocka_unit_test(test_linetable_no_columns),
		cmocka_unit_test(test_linetable_edges),
		cmocka_unit_test(test_utf8),
		cmocka_unit_test(test_pyframe_record),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
