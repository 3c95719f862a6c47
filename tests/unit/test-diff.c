/*
 * Unit tests for lib/report/diff and difftree on hand-built analyses: sites
 * matched by name across two captures, unchanged sites left out, the order
 * by the largest change, the text and the JSON; the merged call tree of the
 * differential flame graph.
 */
#include <config.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "lib/report/diff.h"
#include "lib/report/difftree.h"

#include "tests/unit/analysis-fixture.h"

static struct mp_analysis base;
static struct strbuf sb = STRBUF_INIT;

/*
 * A program whose sites are a (line 10 or, with moved, 12: an edit above it),
 * b and c, in /src/d.c; kept blocks stay live to the end (the peak is then
 * the end). Sizes: a_bytes at a, 200 at b (freed when b_freed), c_count x 10
 * at c, kept.
 */
static void program(uint64_t a_bytes, bool b_freed, int c_count, bool moved)
{
	uint64_t s_a, s_b, s_c, s_file;
	uint32_t na, nb, nc;
	begin(0, 1);
	s_a = string("a");
	s_b = string("b");
	s_c = string("c");
	s_file = string("/src/d.c");
	module(1, 0x400000, "/bin/d", 0x1000, 0x1000);
	symbol(0x401000, 1, 0x1000, 1, (struct mp_frame[]){ { s_a, s_file, moved ? 12 : 10, 0 } });
	symbol(0x401100, 1, 0x1100, 1, (struct mp_frame[]){ { s_b, s_file, 20, 0 } });
	symbol(0x401200, 1, 0x1200, 1, (struct mp_frame[]){ { s_c, s_file, 30, 0 } });
	na = trace(0, 0x401000);
	nb = trace(0, 0x401100);
	nc = trace(0, 0x401200);
	ev_alloc(0, MALLOC, 0x1000, a_bytes, na);
	ev_alloc(0, MALLOC, 0x2000, 200, nb);
	for (int i = 0; i < c_count; i++)
		ev_alloc(0, MALLOC, 0x3000 + 0x10 * (uint64_t)i, 10, nc);
	if (b_freed)
		ev_free(0, FREE, 0x2000);
	mp_analysis_finish(&A);
}

static int teardown(void **state)
{
	mp_analysis_release(&base);
	return end(state);
}

/* The base is program(...) as A, moved to base; then A is the new one. */
static void make_base(uint64_t a_bytes, bool b_freed, int c_count)
{
	program(a_bytes, b_freed, c_count, false);
	base = A;
	memset(&A, 0, sizeof(A));
}

static void test_same(void **state)
{
	struct mp_diff d;
	(void)state;
	make_base(100, false, 3);
	program(100, false, 3, true); /* only a line moved */
	mp_diff_build(&d, &base, &A);
	assert_int_equal(d.n, 0);
	assert_int_equal(d.total_base.peak.bytes, 330);
	assert_int_equal(d.total_new.peak.bytes, 330);
	mp_diff_release(&d);
}

static void test_changes(void **state)
{
	struct mp_diff d;
	struct mp_diff_names names = { "base.bin", "new.bin", &base, &A };
	struct mp_term term = { false, false, 80, 24, 0, false };
	(void)state;
	make_base(100, false, 3);
	/* a grows by 50, b's block is freed at the end (a leak fixed), c allocates 5 more. */
	program(150, true, 8, false);
	mp_diff_build(&d, &base, &A);
	assert_int_equal(d.n, 3);
	/* b: leaks -200; c: peak and leaks +50 and +5 allocations; a: +50 only. */
	assert_string_equal(d.rows[0].function, "b");
	assert_int_equal(d.rows[0].base.leaked.bytes, 200);
	assert_int_equal(d.rows[0].new.leaked.bytes, 0);
	assert_string_equal(d.rows[1].function, "c");
	assert_int_equal(d.rows[1].new.allocated.count, 8);
	assert_string_equal(d.rows[2].function, "a");
	assert_string_equal(d.rows[2].file, "/src/d.c");
	strbuf_reset(&sb);
	mp_diff_text(&d, &names, 2, &term, &sb);
	assert_string_equal(sb.buf,
		"Base: base.bin ()\n"
		"New:  new.bin ()\n"
		"Peak memory: 330 B in 5 allocations -> 430 B in 10 allocations (+100 B, +5)\n"
		"Leaked memory: 330 B in 5 allocations -> 230 B in 9 allocations (-100 B, +4)\n"
		"All allocations: 330 B in 5 allocations -> 430 B in 10 allocations (+100 B, +5)\n"
		"By allocation site (Δ: new - base; Peak, Leaked, Allocations: new):\n"
		"┏━━━━━━━━━━━━━━━┳━━━━━━━━┳━━━━━━━┳━━━━━━━━━━┳━━━━━━━━┳━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━┓\n"
		"┃ Location      ┃ Δ Peak ┃  Peak ┃ Δ Leaked ┃ Leaked ┃ Δ Allocations ┃ Allocations ┃\n"
		"┡━━━━━━━━━━━━━━━╇━━━━━━━━╇━━━━━━━╇━━━━━━━━━━╇━━━━━━━━╇━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━┩\n"
		"│ b at /src/d.c │    0 B │ 200 B │   -200 B │    0 B │             0 │           1 │\n"
		"│ c at /src/d.c │  +50 B │  80 B │    +50 B │   80 B │            +5 │           8 │\n"
		"└───────────────┴────────┴───────┴──────────┴────────┴───────────────┴─────────────┘\n"
		"1 more location (-r 3 shows them all)\n");
	strbuf_reset(&sb);
	mp_diff_json(&d, &names, &sb);
	assert_non_null(strstr(sb.buf, "\"function\": \"b\",\n      \"file\": \"/src/d.c\","));
	assert_non_null(strstr(sb.buf, "\"leaked\": {\n          \"bytes\": -200,\n"
				       "          \"count\": -1\n"));
	mp_diff_release(&d);
}

/* (function, line, new bytes, base bytes) of the merged tree's nodes, in order. */
static void test_difftree(void **state)
{
	struct mp_difftree t;
	static const struct {
		const char *fn;
		uint32_t line;
		uint64_t new_bytes, base_bytes;
		uint32_t side;
	} want[] = {
		{ "b", 20, 200, 200, MP_DIFF_NEW },
		{ "a", 12, 150, 0, MP_DIFF_NEW },
		{ "c", 30, 80, 30, MP_DIFF_NEW },
		{ "a", 10, 0, 100, MP_DIFF_BASE }, /* only in the base: its location is the base's */
	};
	(void)state;
	make_base(100, false, 3);
	program(150, true, 8, true); /* a moved to line 12: another location */
	mp_difftree_build(&t, &base, &A, MP_VIEW_PEAK, false);
	assert_int_equal(t.n, 5);
	assert_int_equal(t.nodes[0].depth, 0);
	assert_int_equal(t.nodes[0].loc, MP_NONE);
	assert_int_equal(t.nodes[0].total[MP_DIFF_NEW].bytes, 430);
	assert_int_equal(t.nodes[0].total[MP_DIFF_BASE].bytes, 330);
	for (size_t i = 0; i < 4; i++) {
		const struct mp_difftree_node *n = &t.nodes[i + 1];
		const struct mp_analysis *a = n->side == MP_DIFF_NEW ? &A : &base;
		const struct mp_location *l = mp_analysis_location(a, n->loc);
		assert_int_equal(n->depth, 1);
		assert_int_equal(n->side, want[i].side);
		assert_string_equal(mp_analysis_string(a, l->function), want[i].fn);
		assert_int_equal(l->line, want[i].line);
		assert_int_equal(n->self[MP_DIFF_NEW].bytes, want[i].new_bytes);
		assert_int_equal(n->self[MP_DIFF_BASE].bytes, want[i].base_bytes);
	}
	mp_difftree_release(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_same, teardown),
		cmocka_unit_test_teardown(test_changes, teardown),
		cmocka_unit_test_teardown(test_difftree, teardown),
	};
	int failed = cmocka_run_group_tests(tests, NULL, NULL);
	strbuf_release(&sb);
	return failed ? 1 : 0;
}
