/* Unit tests of procmaps: parsing maps text, finding modules, resolving symbols. */
#include <config.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/process/procmaps.h"

static const char sample[] =
	"55d0c0a00000-55d0c0a02000 r--p 00000000 08:01 1311 /usr/bin/cat\n"
	"55d0c0a02000-55d0c0a07000 r-xp 00002000 08:01 1311 /usr/bin/cat\n"
	"7f1000000000-7f1000026000 r--p 00000000 fe:02 7340 /usr/lib/x86_64-linux-gnu/libc.so.6\n"
	"7f1000026000-7f100017b000 r-xp 00026000 fe:02 7340 /usr/lib/x86_64-linux-gnu/libc.so.6\n"
	"7f1000200000-7f1000201000 rw-p 00000000 00:00 0 \n"
	"7f1000300000-7f1000301000 r--p 00000000 08:01 99 /tmp/with space.so\n"
	"7ffd00000000-7ffd00002000 r-xp 00000000 00:00 0                          [vdso]\n";

static void test_parse(void **state)
{
	struct mp_procmaps m = MP_PROCMAPS_INIT;
	struct strbuf err = STRBUF_INIT;
	static const char *const libc[] = { "libc.so", NULL };
	static const char *const space[] = { "with", NULL };
	static const char *const none[] = { "libfoo", NULL };
	const struct mp_procmaps_entry *e;
	(void)state;

	assert_int_equal(mp_procmaps_parse(&m, 7, sample, &err), 0);
	assert_int_equal(m.nr, 7);
	assert_int_equal(m.v[1].start, 0x55d0c0a02000ull);
	assert_int_equal(m.v[1].end, 0x55d0c0a07000ull);
	assert_int_equal(m.v[1].offset, 0x2000);
	assert_string_equal(m.v[1].perms, "r-xp");
	assert_int_equal(m.v[2].dev_major, 0xfe);
	assert_int_equal(m.v[2].dev_minor, 2);
	assert_int_equal(m.v[2].inode, 7340);
	assert_null(m.v[4].path);
	assert_string_equal(mp_procmaps_basename(&m.v[4]), "");
	assert_string_equal(m.v[5].path, "/tmp/with space.so");
	assert_string_equal(mp_procmaps_basename(&m.v[6]), "[vdso]");

	e = mp_procmaps_find(&m, libc);
	assert_ptr_equal(e, &m.v[2]);
	assert_ptr_equal(mp_procmaps_find(&m, space), &m.v[5]);
	assert_null(mp_procmaps_find(&m, none));
	assert_ptr_equal(mp_procmaps_lookup(&m, 0x7f1000026000ull), &m.v[3]);
	assert_null(mp_procmaps_lookup(&m, 0x7f1000201000ull));
	assert_true(mp_procmaps_same_file(&m.v[2], &m.v[3]));
	assert_false(mp_procmaps_same_file(&m.v[0], &m.v[3]));
	assert_false(mp_procmaps_same_file(&m.v[4], &m.v[4]));
	mp_procmaps_release(&m);
	strbuf_release(&err);
}

static void test_parse_error(void **state)
{
	struct mp_procmaps m = MP_PROCMAPS_INIT;
	struct strbuf err = STRBUF_INIT;
	(void)state;

	assert_int_equal(mp_procmaps_parse(&m, 7, "55d0-55d1 r--p zz\n", &err), -1);
	assert_string_equal(err.buf, "cannot parse line 1 of the maps of process 7: '55d0-55d1 r--p zz'");
	mp_procmaps_release(&m);
	strbuf_release(&err);
}

/* Our own libc: the addresses must be those the dynamic linker gives. */
static void test_symbols_self(void **state)
{
	struct mp_procmaps m = MP_PROCMAPS_INIT;
	struct strbuf err = STRBUF_INIT;
	static const char *const libc[] = { "libc.so", "libc-2.", NULL };
	static const char *const names[] = { "dlopen", "malloc", "no_such_function_here", "memcpy" };
	uint64_t a[4];
	const struct mp_procmaps_entry *e;
	void *handle;
	(void)state;

	assert_int_equal(mp_procmaps_read(&m, getpid(), &err), 0);
	e = mp_procmaps_find(&m, libc);
	assert_non_null(e);
	assert_int_equal(mp_procmaps_symbols(&m, e, names, 4, a, &err), 0);
	handle = dlopen(e->path, RTLD_NOW | RTLD_NOLOAD);
	assert_non_null(handle);
	assert_int_equal(a[0], (uint64_t)(uintptr_t)dlsym(handle, "dlopen"));
	assert_int_equal(a[1], (uint64_t)(uintptr_t)dlsym(handle, "malloc"));
	dlclose(handle);
	assert_int_equal(a[2], 0);
	assert_int_equal(a[3], 0); /* an indirect function: its resolver is not callable as memcpy */
	assert_string_equal(mp_procmaps_lookup(&m, a[1])->path, e->path);
	assert_true(mp_procmaps_same_file(mp_procmaps_lookup(&m, a[1]), e));
	mp_procmaps_release(&m);
	strbuf_release(&err);
}

static void test_read_missing(void **state)
{
	struct mp_procmaps m = MP_PROCMAPS_INIT;
	struct strbuf err = STRBUF_INIT;
	(void)state;

	assert_int_equal(mp_procmaps_read(&m, 999999999, &err), -1);
	assert_string_equal(err.buf, "cannot read '/proc/999999999/maps': No such file or directory");
	strbuf_release(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_parse_error),
		cmocka_unit_test(test_symbols_self),
		cmocka_unit_test(test_read_missing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL) ? 1 : 0;
}
