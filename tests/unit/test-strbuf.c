/* Unit tests of strbuf. */
#include <config.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "lib/util/strbuf.h"

static void test_add_and_detach(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	char *p;
	size_t len;
	(void)state;
	assert_string_equal(sb.buf, "");
	strbuf_addstr(&sb, "abc");
	strbuf_addch(&sb, 'd');
	strbuf_addf(&sb, "%d-%s", 42, "x");
	assert_string_equal(sb.buf, "abcd42-x");
	for (int i = 0; i < 1000; i++)
		strbuf_addf(&sb, "%04d", i);
	assert_int_equal(sb.len, 8 + 4000);
	strbuf_setlen(&sb, 3);
	assert_string_equal(sb.buf, "abc");
	p = strbuf_detach(&sb, &len);
	assert_int_equal(len, 3);
	assert_string_equal(p, "abc");
	assert_string_equal(sb.buf, "");
	free(p);
	strbuf_release(&sb);
}

static void test_cquote(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	(void)state;
	strbuf_add_cquoted(&sb, "a\"b\\c\n\x01\x7f\xc3\xa9", 10);
	assert_string_equal(sb.buf, "a\\\"b\\\\c\\n\\x01\\x7f\xc3\xa9");
	strbuf_release(&sb);
}

static void test_long_format(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	char big[5000];
	(void)state;
	memset(big, 'z', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	strbuf_addf(&sb, "<%s>", big);
	assert_int_equal(sb.len, sizeof(big) + 1);
	assert_int_equal(sb.buf[0], '<');
	assert_int_equal(sb.buf[sb.len - 1], '>');
	strbuf_release(&sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_add_and_detach),
		cmocka_unit_test(test_cquote),
		cmocka_unit_test(test_long_format),
	};
	return cmocka_run_group_tests(tests, NULL, NULL) ? 1 : 0;
}
