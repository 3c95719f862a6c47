/* Unit tests for lib/render-text and lib/json: sizes, widths, escaping, tables, JSON. */
#include <config.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "lib/report/json.h"
#include "lib/report/render-text.h"
#include "lib/util/strbuf.h"

static struct strbuf sb = STRBUF_INIT;

static const char *size(uint64_t n)
{
	strbuf_reset(&sb);
	mp_format_size(&sb, n);
	return sb.buf;
}

static const char *duration(uint64_t us)
{
	strbuf_reset(&sb);
	mp_format_duration(&sb, us);
	return sb.buf;
}

static void test_format(void **state)
{
	(void)state;
	assert_string_equal(size(0), "0 B");
	assert_string_equal(size(1023), "1023 B");
	assert_string_equal(size(1024), "1.000 KiB");
	assert_string_equal(size(1536), "1.500 KiB");
	assert_string_equal(size(1048575), "1023.999 KiB");
	assert_string_equal(size(1073741823), "1.000 GiB"); /* not "1024.000 MiB" */
	assert_string_equal(size(3 << 20), "3.000 MiB");
	assert_string_equal(size((uint64_t)5 << 40), "5.000 TiB");
	assert_string_equal(size(UINT64_MAX), "16.000 EiB");
	assert_string_equal(duration(950), "950 us");
	assert_string_equal(duration(20102), "20.102 ms");
	assert_string_equal(duration(1234567), "1.235 s");
	assert_string_equal(duration(123456789), "2 min 3.457 s");
	assert_string_equal(duration(3723000000ULL), "1 h 2 min 3 s");
	strbuf_reset(&sb);
	mp_format_percent(&sb, 1, 3);
	assert_string_equal(sb.buf, "33.33 %");
	strbuf_reset(&sb);
	mp_format_percent(&sb, 1, 0);
	assert_string_equal(sb.buf, "0.00 %");
	strbuf_reset(&sb);
	mp_format_count(&sb, 1234567);
	assert_string_equal(sb.buf, "1,234,567");
	strbuf_reset(&sb);
	mp_format_count(&sb, 999);
	assert_string_equal(sb.buf, "999");
	assert_int_equal(mp_share_color(61, 100), MP_COLOR_RED);
	assert_int_equal(mp_share_color(60, 100), MP_COLOR_YELLOW);
	assert_int_equal(mp_share_color(21, 100), MP_COLOR_YELLOW);
	assert_int_equal(mp_share_color(6, 100), MP_COLOR_GREEN);
	assert_int_equal(mp_share_color(5, 100), MP_COLOR_BRIGHT_GREEN);
}

static void test_text(void **state)
{
	const char *s = "\u251c\u2500 \033[31mred\033[0m";
	(void)state;
	assert_int_equal(mp_text_width(s, strlen(s)), 6);
	strbuf_reset(&sb);
	mp_text_fit(&sb, "main at /src/file.c", 10);
	assert_string_equal(sb.buf, "main at /\u2026");
	strbuf_reset(&sb);
	mp_text_fit(&sb, "\u00e9t\u00e9 d\u00e9j\u00e0", 5);
	assert_string_equal(sb.buf, "\u00e9t\u00e9 \u2026");
	strbuf_reset(&sb);
	mp_text_fit(&sb, "short", 0);
	assert_string_equal(sb.buf, "short");
	strbuf_reset(&sb);
	mp_text_add_safe(&sb, "a\033[2Jb\x07\n\xff\xc2\x9b\u00e9", 13);
	assert_string_equal(sb.buf, "a\\x1b[2Jb\\x07\\x0a\\xff\\xc2\\x9b\u00e9");
}

static void test_term(void **state)
{
	struct mp_term t;
	(void)state;
	/* Standard input of a test is not a terminal. */
	mp_term_detect(&t, -1);
	assert_false(t.tty);
	assert_false(t.color);
	assert_int_equal(t.width, 80);
	assert_int_equal(t.height, 24);
	assert_string_equal(mp_color(&t, MP_COLOR_RED), "");
	t.color = true;
	assert_string_equal(mp_color(&t, MP_COLOR_RED), "\033[31m");
}

static void test_table(void **state)
{
	static const char *const headers[] = { "Name", "<Size>" };
	static const enum mp_align align[] = { MP_ALIGN_LEFT, MP_ALIGN_RIGHT };
	static const enum mp_color colors[] = { MP_COLOR_MAGENTA, MP_COLOR_RESET, MP_COLOR_CYAN };
	const char *segs[] = { "fn", " at ", "/a/long/file.c" };
	struct mp_table t;
	struct mp_term term = { true, true, 80, 24, 0, false };
	(void)state;
	mp_table_init(&t, 2, headers, align, 0);
	mp_table_row(&t);
	mp_table_cell_segs(&t, 0, 3, segs, colors);
	mp_table_cell(&t, 1, "1 B", MP_COLOR_RESET);
	mp_table_row(&t);
	mp_table_cell(&t, 0, "x", MP_COLOR_RESET);
	mp_table_cell(&t, 1, "1.500 KiB", MP_COLOR_RED);
	strbuf_reset(&sb);
	mp_table_render(&t, NULL, 0, &sb);
	assert_string_equal(sb.buf,
			    "┏━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━┓\n"
			    "┃ Name                 ┃    <Size> ┃\n"
			    "┡━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━┩\n"
			    "│ fn at /a/long/file.c │       1 B │\n"
			    "│ x                    │ 1.500 KiB │\n"
			    "└──────────────────────┴───────────┘\n");
	/* Cut to 30 columns, coloured: the location shrinks, the colours survive. */
	strbuf_reset(&sb);
	mp_table_render(&t, &term, 30, &sb);
	assert_non_null(strstr(sb.buf, "│ \033[35mfn\033[0m at \033[36m/a/long…\033[0m │       1 B │\n"));
	assert_non_null(strstr(sb.buf, "\033[1mName\033[0m"));
	assert_non_null(strstr(sb.buf, "\033[31m1.500 KiB\033[0m"));
	for (char *line = sb.buf; *line;) {
		char *nl = strchr(line, '\n');
		assert_int_equal(mp_text_width(line, (size_t)(nl - line)), 30);
		line = nl + 1;
	}
	mp_table_release(&t);
}

static void test_json(void **state)
{
	struct mp_json j;
	(void)state;
	strbuf_reset(&sb);
	mp_json_init(&j, &sb, MP_JSON_PRETTY);
	mp_json_begin_object(&j);
	mp_json_key(&j, "a");
	mp_json_uint(&j, 1);
	mp_json_key(&j, "list");
	mp_json_begin_array(&j);
	mp_json_int(&j, -2);
	mp_json_bool(&j, true);
	mp_json_null(&j);
	mp_json_end_array(&j);
	mp_json_key(&j, "empty");
	mp_json_begin_object(&j);
	mp_json_end_object(&j);
	mp_json_key(&j, "s");
	mp_json_string(&j, "x");
	mp_json_end_object(&j);
	assert_string_equal(sb.buf, "{\n  \"a\": 1,\n  \"list\": [\n    -2,\n    true,\n    null\n  ],\n"
				    "  \"empty\": {},\n  \"s\": \"x\"\n}\n");
	strbuf_reset(&sb);
	mp_json_init(&j, &sb, 0);
	mp_json_begin_array(&j);
	mp_json_uint(&j, 0);
	mp_json_uint(&j, UINT64_MAX);
	mp_json_int(&j, INT64_MIN);
	mp_json_int(&j, INT64_MAX);
	mp_json_int(&j, -10);
	mp_json_end_array(&j);
	assert_string_equal(sb.buf, "[0,18446744073709551615,-9223372036854775808,9223372036854775807,-10]");
	strbuf_reset(&sb);
	mp_json_init(&j, &sb, 0);
	mp_json_begin_array(&j);
	mp_json_string(&j, "q\"b\\n\n\t\x01\x7f");
	mp_json_string_len(&j, "\xff\xe2\x82\u00e9\xed\xa0\x80", 8);
	mp_json_string(&j, "</script>&\u2028");
	mp_json_end_array(&j);
	assert_string_equal(sb.buf, "[\"q\\\"b\\\\n\\n\\t\\u0001\\u007f\",\"\\ufffd\\ufffd\\ufffd\u00e9\\ufffd\\ufffd\\ufffd\","
				    "\"</script>&\u2028\"]");
	strbuf_reset(&sb);
	mp_json_quote(&sb, "</script>&\u2028", strlen("</script>&\u2028"), MP_JSON_HTML_SAFE);
	assert_string_equal(sb.buf, "\"\\u003c/script\\u003e\\u0026\\u2028\"");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_format),
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_term),
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_json),
	};
	int ret = cmocka_run_group_tests(tests, NULL, NULL) ? 1 : 0;
	strbuf_release(&sb);
	return ret;
}
