/*
 * Unit tests of lib/symbols/symindex: for addresses across real modules (the
 * fixtures, this program, the C library, gcc's cc1 when there), the index
 * names what dwfl_module_addrinfo() names, or says it cannot; and it can,
 * for nearly all of them.
 */
#include <config.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/symbols/symindex.h"

#define FIXDIR MP_BUILDDIR "/tests/fixtures"

static char *debuginfo_path;
static const Dwfl_Callbacks callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

static size_t answered, asked;

static void same(Dwfl_Module *mod, const struct mp_symindex *x, Dwarf_Addr addr)
{
	GElf_Off off;
	GElf_Sym sym;
	const char *want = dwfl_module_addrinfo(mod, addr, &off, &sym, NULL, NULL, NULL), *got;
	asked++;
	if (!mp_symindex_lookup(x, addr, &got))
		return;
	answered++;
	if (want && !*want)
		want = NULL;
	if (!want != !got || (want && strcmp(want, got)))
		fail_msg("%s+%#llx: the index says '%s', libdw '%s'", dwfl_module_info(mod, NULL, NULL, NULL,
			 NULL, NULL, NULL, NULL), (unsigned long long)addr, got ? got : "(none)",
			 want ? want : "(none)");
}

/* Every symbol's edges (a sample of them in a big table), and addresses spread over its range. */
static void sweep(const char *path)
{
	Dwfl *dwfl;
	Dwfl_Module *mod;
	struct mp_symindex *x;
	Dwarf_Addr lo = UINT64_MAX, hi = 0;
	int n, step;
	size_t before_asked = asked, before_answered = answered;
	if (access(path, R_OK) != 0) {
		print_message("%s: not here, not compared\n", path);
		return;
	}
	dwfl = dwfl_begin(&callbacks);
	assert_non_null(dwfl);
	mod = dwfl_report_offline(dwfl, path, path, -1);
	assert_non_null(mod);
	assert_int_equal(dwfl_report_end(dwfl, NULL, NULL), 0);
	x = mp_symindex_build(mod);
	assert_non_null(x);
	n = dwfl_module_getsymtab(mod);
	/* (libdw reads the whole table for each address: a sample of a big one.) */
	step = n > 600 ? n / 600 : 1;
	for (int i = 1; i < n; i += step) {
		GElf_Sym sym;
		GElf_Addr value;
		if (!dwfl_module_getsym_info(mod, i, &sym, &value, NULL, NULL, NULL) || sym.st_shndx == SHN_UNDEF)
			continue;
		if (value < lo)
			lo = value;
		if (value + sym.st_size > hi)
			hi = value + sym.st_size;
		same(mod, x, value);
		same(mod, x, value - 1);
		same(mod, x, value + 1);
		if (sym.st_size) {
			same(mod, x, value + sym.st_size - 1);
			same(mod, x, value + sym.st_size);
		}
	}
	for (Dwarf_Addr a = lo; hi > lo && a < hi + 64; a += (hi - lo) / 1500 + 1)
		same(mod, x, a);
	/* A small table: every byte of its text too. */
	if (n < 64) {
		size_t nsec = 0;
		GElf_Addr bias;
		Elf *elf = dwfl_module_getelf(mod, &bias);
		Elf_Scn *scn = NULL;
		while (elf && (scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;
			if (gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_EXECINSTR)) {
				for (GElf_Addr a = sh.sh_addr; a < sh.sh_addr + sh.sh_size; a++)
					same(mod, x, a + bias);
				nsec++;
			}
		}
		assert_true(nsec > 0);
	}
	print_message("%s: %zu of %zu addresses answered by the index, as libdw answers them\n", path,
		      answered - before_answered, asked - before_asked);
	mp_symindex_free(x);
	dwfl_end(dwfl);
}

static void test_fixtures(void **state)
{
	(void)state;
	sweep(FIXDIR "/symfix");
	sweep(FIXDIR "/.libs/libsymfix.so");
	sweep(FIXDIR "/libsymfix-symtab.so");
	sweep(FIXDIR "/.libs/libsymidx.so");
}

/*
 * The first bytes of libsymidx.so's idx_other section, which no symbol
 * holds, with labels of other sections (idx_tail, _fini) below them: libdw
 * names nothing, and the index says so itself rather than leave it to libdw
 * (which reads the whole table for each such address).
 */
static void test_other_section(void **state)
{
	const char *path = FIXDIR "/.libs/libsymidx.so";
	Dwfl *dwfl;
	Dwfl_Module *mod;
	struct mp_symindex *x;
	GElf_Addr bias, at = 0;
	size_t shstrndx;
	Elf *elf;
	Elf_Scn *scn = NULL;
	const char *name = "unset";
	(void)state;
	dwfl = dwfl_begin(&callbacks);
	assert_non_null(dwfl);
	mod = dwfl_report_offline(dwfl, path, path, -1);
	assert_non_null(mod);
	assert_int_equal(dwfl_report_end(dwfl, NULL, NULL), 0);
	assert_non_null(x = mp_symindex_build(mod));
	assert_non_null(elf = dwfl_module_getelf(mod, &bias));
	assert_int_equal(elf_getshdrstrndx(elf, &shstrndx), 0);
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *sname;
		if (gelf_getshdr(scn, &sh) && (sname = elf_strptr(elf, shstrndx, sh.sh_name)) &&
		    !strcmp(sname, "idx_other"))
			at = sh.sh_addr + bias;
	}
	assert_true(at != 0);
	for (GElf_Addr a = at; a < at + 2; a++) {
		GElf_Off off;
		GElf_Sym sym;
		assert_null(dwfl_module_addrinfo(mod, a, &off, &sym, NULL, NULL, NULL));
		assert_int_equal(mp_symindex_lookup(x, a, &name), 1);
		assert_null(name);
	}
	/* Its label, in its own section, is libdw's to weigh. */
	assert_int_equal(mp_symindex_lookup(x, at + 3, &name), 0);
	mp_symindex_free(x);
	dwfl_end(dwfl);
}

static void test_system(void **state)
{
	Dl_info info;
	char self[PATH_MAX], cc1[PATH_MAX] = "";
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	FILE *p;
	(void)state;
	assert_true(len > 0);
	self[len] = '\0';
	sweep(self);
	assert_true(dladdr((void *)printf, &info) && info.dli_fname);
	sweep(info.dli_fname);
	/* A big stripped C++ program: the case the index is for. */
	if ((p = popen("gcc -print-prog-name=cc1 2>/dev/null", "r"))) {
		if (fgets(cc1, sizeof(cc1), p))
			cc1[strcspn(cc1, "\n")] = '\0';
		pclose(p);
	}
	if (cc1[0] == '/')
		sweep(cc1);
}

static int check_share(void **state)
{
	(void)state;
	/* Not vacuous: the index answers nearly every address itself. */
	print_message("%zu of %zu addresses answered by the index\n", answered, asked);
	assert_true(asked > 1000);
	assert_true(answered * 100 >= asked * 75);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixtures),
		cmocka_unit_test(test_other_section),
		cmocka_unit_test(test_system),
	};
	/* Stay offline: no debuginfod look-ups. */
	unsetenv("DEBUGINFOD_URLS");
	return cmocka_run_group_tests(tests, NULL, check_share) ? 1 : 0;
}
