/*
 * Unit tests of lib/symbols, on the fixtures of tests/fixtures: the symfix
 * programs print the return addresses of calls made from marked source
 * lines (LINE-MARK comments, looked up here so that editing a fixture does
 * not silently change an expectation), some function addresses and their
 * module map; the tests feed that map to mp_symbols and check the frames.
 */
#include <config.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <gelf.h>

#include "lib/symbols/debugcache.h"
#include "lib/symbols/symbols.h"
#include "lib/util/xalloc.h"

#define FIXDIR MP_BUILDDIR "/tests/fixtures"
#define FIXSRC MP_SRCDIR "/tests/fixtures"
#define LIBSO FIXDIR "/.libs/libsymfix.so"
#define OTHERID_SO FIXDIR "/.libs/libsymfix-otherid.so"
#define OTHER_BUILD_ID "0123456789abcdef0123456789abcdef01234567"

/* ---- the fixture's output ---- */

struct fx_module {
	char path[PATH_MAX];
	uint64_t base;
	uint8_t build_id[64];
	size_t build_id_len;
	struct mp_segment seg[16];
	size_t nseg;
};

struct fx_addr {
	char name[64];
	uint64_t addr;
};

struct fx {
	bool loaded;
	struct fx_module mod[64];
	size_t nmod;
	struct fx_addr probe[16], func[16];
	size_t nprobe, nfunc;
};

static struct fx fx_pie, fx_nopie;

static void parse_module(struct fx *fx, char *line)
{
	struct fx_module *m = &fx->mod[fx->nmod++];
	char *field[32];
	size_t n = 0, i;
	for (char *tok = strtok(line, "\t\n"); tok && n < 32; tok = strtok(NULL, "\t\n"))
		field[n++] = tok;
	assert_true(n >= 5);
	snprintf(m->path, sizeof(m->path), "%s", field[1]);
	m->base = strtoull(field[2], NULL, 16);
	if (strcmp(field[3], "-"))
		for (i = 0; field[3][2 * i] && i < sizeof(m->build_id); i++) {
			unsigned byte;
			assert_int_equal(sscanf(field[3] + 2 * i, "%2x", &byte), 1);
			m->build_id[i] = byte;
			m->build_id_len = i + 1;
		}
	m->nseg = strtoul(field[4], NULL, 10);
	assert_int_equal(n, 5 + m->nseg);
	for (i = 0; i < m->nseg; i++) {
		unsigned long long vaddr, memsz;
		unsigned flags;
		assert_int_equal(sscanf(field[5 + i], "%llx:%llx:%u", &vaddr, &memsz, &flags), 3);
		m->seg[i].vaddr = vaddr;
		m->seg[i].memsz = memsz;
		m->seg[i].flags = flags;
	}
}

/* Run a symfix program (once) with the library, and parse what it prints. */
static struct fx *fixture(const char *prog)
{
	struct fx *fx = strcmp(prog, "symfix") ? &fx_nopie : &fx_pie;
	char cmd[2 * PATH_MAX], line[8192];
	FILE *p;
	if (fx->loaded)
		return fx;
	snprintf(cmd, sizeof(cmd), "'%s/%s' '%s'", FIXDIR, prog, LIBSO);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p)) {
		struct fx_addr *a = NULL;
		char name[64];
		unsigned long long addr;
		if (!strncmp(line, "module\t", 7)) {
			assert_true(fx->nmod < 64);
			parse_module(fx, line);
			continue;
		}
		assert_int_equal(sscanf(line, "%*s %63s %llx", name, &addr), 2);
		if (!strncmp(line, "probe\t", 6) && fx->nprobe < 16)
			a = &fx->probe[fx->nprobe++];
		else if (!strncmp(line, "func\t", 5) && fx->nfunc < 16)
			a = &fx->func[fx->nfunc++];
		if (!a) {
			fail_msg("unexpected line from %s: %s", prog, line);
			continue;
		}
		snprintf(a->name, sizeof(a->name), "%s", name);
		a->addr = addr;
	}
	assert_int_equal(pclose(p), 0);
	assert_int_equal(fx->nprobe, 5);
	fx->loaded = true;
	return fx;
}

static uint64_t addr_of(const struct fx_addr *a, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(a[i].name, name))
			return a[i].addr;
	fail_msg("the fixture printed no address for '%s'", name);
	return 0;
}

static uint64_t probe(struct fx *fx, const char *name)
{
	return addr_of(fx->probe, fx->nprobe, name);
}

static uint64_t func(struct fx *fx, const char *name)
{
	return addr_of(fx->func, fx->nfunc, name);
}

/* The module of the fixture's map that contains addr, and its index. */
static struct fx_module *module_at(struct fx *fx, uint64_t addr, size_t *index)
{
	for (size_t i = 0; i < fx->nmod; i++)
		for (size_t j = 0; j < fx->mod[i].nseg; j++) {
			uint64_t lo = fx->mod[i].base + fx->mod[i].seg[j].vaddr;
			if (addr >= lo && addr < lo + fx->mod[i].seg[j].memsz) {
				if (index)
					*index = i;
				return &fx->mod[i];
			}
		}
	fail_msg("no module of the fixture contains %#llx", (unsigned long long)addr);
	return NULL;
}

/* Every module of the map, with ids 1, 2, ... in the order printed. */
static void add_all(struct mp_symbols *s, struct fx *fx)
{
	for (size_t i = 0; i < fx->nmod; i++) {
		struct fx_module *m = &fx->mod[i];
		assert_int_equal(mp_symbols_add_module(s, i + 1, m->base, m->path, m->build_id,
						       m->build_id_len, m->seg, m->nseg), 0);
	}
}

/* Module m of the map, under another path and maybe another base or without its build-id. */
static void add_as(struct mp_symbols *s, uint64_t id, const struct fx_module *m, const char *path,
		   uint64_t base_delta, bool with_build_id)
{
	assert_int_equal(mp_symbols_add_module(s, id, m->base + base_delta, path, m->build_id,
					       with_build_id ? m->build_id_len : 0, m->seg, m->nseg),
			 0);
}

static struct mp_symbols *new_symbols(const char *root, bool demangle)
{
	struct mp_symbols_opts opts = { .root = root, .demangle = demangle };
	return mp_symbols_new(&opts);
}

/* ---- the fixture's source: marked lines ---- */

static char *mark_text(const char *file, const char *mark, unsigned *lineno)
{
	char path[PATH_MAX], line[1024], want[128];
	FILE *f;
	unsigned n = 0;
	snprintf(path, sizeof(path), "%s/%s", FIXSRC, file);
	snprintf(want, sizeof(want), "LINE-MARK: %s */", mark);
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		n++;
		if (strstr(line, want)) {
			fclose(f);
			*lineno = n;
			return xstrdup(line);
		}
	}
	fclose(f);
	fail_msg("no LINE-MARK '%s' in %s", mark, path);
	return NULL;
}

static unsigned mark_line(const char *file, const char *mark)
{
	unsigned n;
	free(mark_text(file, mark, &n));
	return n;
}

/*
 * The column of token on the marked line (1-based, a tab counting one).
 * gcc gives a call the column of the callee's name, g++ that of its '('.
 */
static unsigned mark_col(const char *file, const char *mark, const char *token)
{
	unsigned n;
	char *text = mark_text(file, mark, &n);
	const char *p = strstr(text, token);
	unsigned col;
	assert_non_null(p);
	col = p - text + 1;
	free(text);
	return col;
}

/* ---- checks ---- */

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

static void check_frame(const struct mp_sym_frame *f, const char *function, const char *file,
			unsigned line, unsigned column)
{
	if (function) {
		assert_non_null(f->function);
		assert_string_equal(f->function, function);
	} else {
		assert_null(f->function);
	}
	if (file) {
		assert_non_null(f->file);
		assert_string_equal(base_name(f->file), file);
	} else {
		assert_null(f->file);
	}
	assert_int_equal(f->line, line);
	assert_int_equal(f->column, column);
}

/* The warnings of s are exactly the n given lines. */
static void check_warnings(struct mp_symbols *s, size_t n, ...)
{
	const char **lines;
	size_t got = mp_symbols_warnings(s, &lines);
	va_list ap;
	for (size_t i = 0; i < got; i++)
		print_message("warning: %s\n", lines[i]);
	assert_int_equal(got, n);
	va_start(ap, n);
	for (size_t i = 0; i < n; i++)
		assert_string_equal(lines[i], va_arg(ap, const char *));
	va_end(ap);
}

/* mp_symbols_hint() of s is expect (NULL: there is none). */
static void check_hint(struct mp_symbols *s, const char *expect)
{
	char *hint = mp_symbols_hint(s);
	if (hint)
		print_message("hint: %s\n", hint);
	if (expect) {
		assert_non_null(hint);
		assert_string_equal(hint, expect);
	} else {
		assert_null(hint);
	}
	free(hint);
}

#define NAMES_ONLY "function names but no source lines"
#define UNNAMED "some frames show module+offset instead of a function, none has a source line"
#define HOW "; to get them, install their debug symbols (Debian's -dbgsym packages)"
#define HOW_OFFLINE HOW " or set DEBUGINFOD_URLS to a debuginfod server"

/* Look up a return address that a module contains. */
static void lookup_ret(struct mp_symbols *s, uint64_t ip, struct mp_sym *out)
{
	assert_int_equal(mp_symbols_lookup(s, ip, true, out), 0);
}

/* The probe "lib" and "lib-static" of the library, given with module id 1. */
static void check_lib_full(struct mp_symbols *s, struct fx *fx, uint64_t delta)
{
	struct mp_sym sym;
	const struct fx_module *m = module_at(fx, probe(fx, "lib"), NULL);

	lookup_ret(s, probe(fx, "lib") + delta, &sym);
	assert_int_equal(sym.offset, probe(fx, "lib") - m->base);
	assert_int_equal(sym.nframes, 1);
	check_frame(&sym.frames[0], "symfix_lib_call", "symfix-lib.c",
		    mark_line("symfix-lib.c", "lib-call"), mark_col("symfix-lib.c", "lib-call", "probe"));
	lookup_ret(s, probe(fx, "lib-static") + delta, &sym);
	assert_int_equal(sym.nframes, 1);
	check_frame(&sym.frames[0], "lib_helper", "symfix-lib.c",
		    mark_line("symfix-lib.c", "lib-static-call"),
		    mark_col("symfix-lib.c", "lib-static-call", "probe"));
}

/* ---- tests ---- */

static void check_program(struct fx *fx)
{
	struct mp_symbols *s = new_symbols(NULL, true);
	struct mp_sym sym;
	size_t idx;
	const struct fx_module *m = module_at(fx, probe(fx, "static"), &idx);
	const char *cxx_line = "template-call";

	add_all(s, fx);

	/* A static function: one frame at the line of the call. */
	lookup_ret(s, probe(fx, "static"), &sym);
	assert_int_equal(sym.module_id, idx + 1);
	assert_int_equal(sym.offset, probe(fx, "static") - m->base);
	assert_string_equal(sym.module_path, m->path);
	assert_int_equal(sym.nframes, 1);
	check_frame(&sym.frames[0], "fix_static", "symfix.c", mark_line("symfix.c", "static-call"),
		    mark_col("symfix.c", "static-call", "symfix_probe"));

	/* Two levels of inlining: innermost first, outer frames at their call sites. */
	lookup_ret(s, probe(fx, "inline"), &sym);
	assert_int_equal(sym.module_id, idx + 1);
	assert_int_equal(sym.nframes, 3);
	check_frame(&sym.frames[0], "fix_leaf", "symfix.c", mark_line("symfix.c", "leaf-call"),
		    mark_col("symfix.c", "leaf-call", "symfix_probe"));
	check_frame(&sym.frames[1], "fix_middle", "symfix.c", mark_line("symfix.c", "middle-call"),
		    mark_col("symfix.c", "middle-call", "fix_leaf"));
	check_frame(&sym.frames[2], "fix_outer", "symfix.c", mark_line("symfix.c", "outer-call"),
		    mark_col("symfix.c", "outer-call", "fix_middle"));

	/* C++: the demangled linkage name. */
	lookup_ret(s, probe(fx, "template"), &sym);
	assert_int_equal(sym.nframes, 1);
	check_frame(&sym.frames[0], "symfix::Box<int>::get(int) const", "symfix-cxx.cc",
		    mark_line("symfix-cxx.cc", cxx_line),
		    mark_col("symfix-cxx.cc", cxx_line, "symfix_probe(") + strlen("symfix_probe"));

	/* Not a return address: the entry of a function is the line of its '{'. */
	assert_int_equal(mp_symbols_lookup(s, func(fx, "fix_static"), false, &sym), 0);
	assert_int_equal(sym.nframes, 1);
	assert_string_equal(sym.frames[0].function, "fix_static");
	assert_int_equal(sym.frames[0].line, mark_line("symfix.c", "static-entry"));
	assert_int_equal(mp_symbols_lookup(s, func(fx, "fix_outer"), false, &sym), 0);
	assert_true(sym.nframes >= 1);
	assert_string_equal(sym.frames[sym.nframes - 1].function, "fix_outer");

	/* The dlopen'd library, in the same map. */
	lookup_ret(s, probe(fx, "lib"), &sym);
	assert_string_equal(sym.module_path, LIBSO);
	assert_int_equal(sym.frames[0].line, mark_line("symfix-lib.c", "lib-call"));
	assert_string_equal(sym.frames[0].function, "symfix_lib_call");

	/* Every file had its debug information; libc was never looked at. */
	check_warnings(s, 0);
	check_hint(s, NULL);
	mp_symbols_free(s);
}

static void test_pie_program(void **state)
{
	(void)state;
	check_program(fixture("symfix"));
}

static void test_non_pie_program(void **state)
{
	struct fx *fx = fixture("symfix-nopie");
	(void)state;
	assert_int_equal(module_at(fx, probe(fx, "static"), NULL)->base, 0);
	check_program(fx);
}

static void test_no_demangling(void **state)
{
	struct fx *fx = fixture("symfix");
	struct mp_symbols *s = new_symbols(NULL, false);
	struct mp_sym sym;
	(void)state;
	add_all(s, fx);
	lookup_ret(s, probe(fx, "template"), &sym);
	assert_int_equal(sym.nframes, 1);
	assert_string_equal(sym.frames[0].function, "_ZNK6symfix3BoxIiE3getEi");
	lookup_ret(s, probe(fx, "static"), &sym);
	assert_string_equal(sym.frames[0].function, "fix_static");
	assert_int_equal(mp_symbols_lookup(s, func(fx, "rust_v0"), false, &sym), 0);
	assert_string_equal(sym.frames[0].function, "_RNvCs1234_7mycrate4main");
	mp_symbols_free(s);
}

static void test_shared_library(void **state)
{
	struct fx *fx = fixture("symfix");
	const struct fx_module *m = module_at(fx, probe(fx, "lib"), NULL);
	struct mp_symbols *s = new_symbols(NULL, true);
	struct mp_sym sym;
	(void)state;
	add_as(s, 1, m, LIBSO, 0, true);
	check_lib_full(s, fx, 0);
	/* An assembly function with two names: the first subprogram of the two. */
	assert_int_equal(mp_symbols_lookup(s, func(fx, "symfix_asm_second"), false, &sym), 0);
	assert_int_equal(sym.nframes, 1);
	check_frame(&sym.frames[0], "symfix_asm_first", "symfix-asm.S",
		    mark_line("symfix-asm.S", "asm-entry"), 0);
	/* A return address at a function's start, padding before it (__restore_rt). */
	assert_int_equal(mp_symbols_lookup(s, func(fx, "symfix_asm_trampoline"), true, &sym), 0);
	assert_int_equal(sym.nframes, 1);
	assert_non_null(sym.frames[0].function);
	assert_string_equal(sym.frames[0].function, "symfix_asm_trampoline");
	/* Rust's names, both manglings: as rustfilt shows them, not as C++'s demangler would. */
	assert_int_equal(mp_symbols_lookup(s, func(fx, "rust_v0"), false, &sym), 0);
	assert_string_equal(sym.frames[0].function, "mycrate::main");
	assert_int_equal(mp_symbols_lookup(s, func(fx, "rust_legacy"), false, &sym), 0);
	assert_string_equal(sym.frames[0].function, "mycrate::legacy");
	check_warnings(s, 0);
	mp_symbols_free(s);
}

/* Stripped, with its debug information in a file named by .gnu_debuglink. */
static void test_debuglink(void **state)
{
	struct fx *fx = fixture("symfix");
	const struct fx_module *m = module_at(fx, probe(fx, "lib"), NULL);
	struct mp_symbols *s = new_symbols(NULL, true);
	(void)state;
	add_as(s, 1, m, FIXDIR "/libsymfix-split.so", 0, true);
	check_lib_full(s, fx, 0);
	check_warnings(s, 0);
	mp_symbols_free(s);
}

static void test_symtab_only(void **state)
{
	struct fx *fx = fixture("symfix");
	const struct fx_module *m = module_at(fx, probe(fx, "lib"), NULL);
	struct mp_symbols *s = new_symbols(NULL, true);
	struct mp_sym sym;
	(void)state;
	add_as(s, 1, m, FIXDIR "/libsymfix-symtab.so", 0, true);
	lookup_ret(s, probe(fx, "lib"), &sym);
	assert_int_equal(sym.nframes, 1);
	check_frame(&sym.frames[0], "symfix_lib_call", NULL, 0, 0);
	/* A static function is in .symtab only. */
	lookup_ret(s, probe(fx, "lib-static"), &sym);
	assert_int_equal(sym.nframes, 1);
	check_frame(&sym.frames[0], "lib_helper", NULL, 0, 0);
	/* No debug information is no problem: no warning, a hint. */
	check_warnings(s, 0);
	check_hint(s, "no debug information for 1 module (libsymfix-symtab.so): " NAMES_ONLY
		      HOW_OFFLINE);
	mp_symbols_free(s);
}

static void test_dynsym_only(void **state)
{
	struct fx *fx = fixture("symfix");
	const struct fx_module *m = module_at(fx, probe(fx, "lib"), NULL);
	struct mp_symbols *s = new_symbols(NULL, true);
	struct mp_sym sym;
	(void)state;
	add_as(s, 1, m, FIXDIR "/libsymfix-nodebug.so", 0, true);
	lookup_ret(s, probe(fx, "lib"), &sym);
	assert_int_equal(sym.nframes, 1);
	check_frame(&sym.frames[0], "symfix_lib_call", NULL, 0, 0);
	/* lib_helper is in no symbol table left: never another function's name. */
	lookup_ret(s, probe(fx, "lib-static"), &sym);
	assert_int_equal(sym.offset, probe(fx, "lib-static") - m->base);
	assert_int_equal(sym.nframes, 0);
	check_warnings(s, 0);
	check_hint(s, "no debug information for 1 module (libsymfix-nodebug.so): " UNNAMED
		      HOW_OFFLINE);
	mp_symbols_free(s);
}

static void test_build_id_mismatch(void **state)
{
	struct fx *fx = fixture("symfix");
	const struct fx_module *m = module_at(fx, probe(fx, "lib"), NULL);
	struct mp_symbols *s = new_symbols(NULL, true);
	struct mp_sym sym;
	char expect[1024], hex[129] = "";
	(void)state;
	for (size_t i = 0; i < m->build_id_len; i++)
		sprintf(hex + 2 * i, "%02x", m->build_id[i]);
	snprintf(expect, sizeof(expect),
		 "'%s' has build-id %s, the capture recorded build-id %s: not used", OTHERID_SO,
		 OTHER_BUILD_ID, hex);

	/* Same code, other build-id: not used, module + offset only, one warning. */
	add_as(s, 1, m, OTHERID_SO, 0, true);
	lookup_ret(s, probe(fx, "lib"), &sym);
	assert_int_equal(sym.module_id, 1);
	assert_int_equal(sym.offset, probe(fx, "lib") - m->base);
	assert_string_equal(sym.module_path, OTHERID_SO);
	assert_int_equal(sym.nframes, 0);
	lookup_ret(s, probe(fx, "lib-static"), &sym);
	assert_int_equal(sym.nframes, 0);
	check_warnings(s, 1, expect);

	/* No build-id recorded: the file is used. */
	add_as(s, 2, m, OTHERID_SO, 0x40000000, false);
	check_lib_full(s, fx, 0x40000000);
	check_warnings(s, 1, expect);
	mp_symbols_free(s);
}

static void test_missing_file(void **state)
{
	struct fx *fx = fixture("symfix");
	const struct fx_module *m = module_at(fx, probe(fx, "lib"), NULL);
	struct mp_symbols *s = new_symbols(NULL, true);
	struct mp_sym sym;
	(void)state;
	add_as(s, 3, m, "/nonexistent/libgone.so", 0, true);
	add_as(s, 4, m, "/nonexistent/libgone.so", 0x40000000, true);
	lookup_ret(s, probe(fx, "lib"), &sym);
	assert_int_equal(sym.module_id, 3);
	assert_int_equal(sym.offset, probe(fx, "lib") - m->base);
	assert_string_equal(sym.module_path, "/nonexistent/libgone.so");
	assert_int_equal(sym.nframes, 0);
	lookup_ret(s, probe(fx, "lib") + 0x40000000, &sym);
	assert_int_equal(sym.module_id, 4);
	assert_int_equal(sym.offset, probe(fx, "lib") - m->base);
	lookup_ret(s, probe(fx, "lib-static"), &sym);
	check_warnings(s, 1, "cannot find '/nonexistent/libgone.so': no symbols");
	mp_symbols_free(s);
}

/* A deleted file (" (deleted)" in /proc/PID/maps) is looked for without the suffix. */
static void test_deleted_suffix(void **state)
{
	struct fx *fx = fixture("symfix");
	const struct fx_module *m = module_at(fx, probe(fx, "lib"), NULL);
	struct mp_symbols *s = new_symbols(NULL, true);
	(void)state;
	add_as(s, 1, m, LIBSO " (deleted)", 0, true);
	check_lib_full(s, fx, 0);
	check_warnings(s, 0);
	mp_symbols_free(s);
}

/* ---- a temporary root, as /proc/PID/root of a container ---- */

static void mkdirs(const char *path)
{
	char buf[PATH_MAX];
	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) && errno != EEXIST)
			fail_msg("mkdir %s: %s", buf, strerror(errno));
		*p = '/';
	}
	if (mkdir(buf, 0755) && errno != EEXIST)
		fail_msg("mkdir %s: %s", buf, strerror(errno));
}

/* Copy the first len bytes of src (all with SIZE_MAX) to dst, creating its directory. */
static void copy_file(const char *src, const char *dst, size_t len)
{
	char dir[PATH_MAX], buf[65536];
	int in, out;
	ssize_t n;
	snprintf(dir, sizeof(dir), "%s", dst);
	*strrchr(dir, '/') = '\0';
	mkdirs(dir);
	in = open(src, O_RDONLY);
	out = open(dst, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(in >= 0 && out >= 0);
	while (len && (n = read(in, buf, len < sizeof(buf) ? len : sizeof(buf))) > 0) {
		assert_int_equal(write(out, buf, n), n);
		len -= n;
	}
	close(in);
	assert_int_equal(close(out), 0);
}

/* Copy src to root + rel. */
static void copy_into(const char *root, const char *rel, const char *src)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s%s", root, rel);
	copy_file(src, path, SIZE_MAX);
}

static char *make_tmpdir(void)
{
	char *dir = xstrdup("/tmp/memprof-test-symbols-XXXXXX");
	assert_non_null(mkdtemp(dir));
	return dir;
}

static void remove_tree(char *dir)
{
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	free(dir);
}

/* Where a debug directory (<root>/usr/lib/debug, say) keeps m's debug file. */
static void build_id_path(char *buf, size_t size, const char *root, const char *dir,
			  const struct fx_module *m)
{
	int n = snprintf(buf, size, "%s%s/.build-id/%02x/", root, dir, m->build_id[0]);
	for (size_t i = 1; i < m->build_id_len; i++)
		n += snprintf(buf + n, size - n, "%02x", m->build_id[i]);
	snprintf(buf + n, size - n, ".debug");
}

static void test_root(void **state)
{
	struct fx *fx = fixture("symfix");
	const struct fx_module *m = module_at(fx, probe(fx, "lib"), NULL);
	char *root = make_tmpdir(), path[PATH_MAX];
	struct mp_symbols *s;
	(void)state;

	/* Under the root: a stripped library, and its debug file in the build-id tree. */
	copy_into(root, "/opt/app/libsymfix.so", FIXDIR "/libsymfix-nodebug.so");
	build_id_path(path, sizeof(path), root, "/usr/lib/debug", m);
	copy_file(FIXDIR "/libsymfix-split.so.debug", path, SIZE_MAX);

	s = new_symbols(root, true);
	add_as(s, 1, m, "/opt/app/libsymfix.so", 0, true);
	/* A path outside the root is found as it is. */
	add_as(s, 2, m, LIBSO, 0x40000000, true);
	check_lib_full(s, fx, 0);
	check_lib_full(s, fx, 0x40000000);
	check_warnings(s, 0);
	mp_symbols_free(s);

	/* Without the root, the file is not there. */
	s = new_symbols(NULL, true);
	add_as(s, 1, m, "/opt/app/libsymfix.so", 0, true);
	lookup_ret(s, probe(fx, "lib"), &(struct mp_sym){ 0 });
	check_warnings(s, 1, "cannot find '/opt/app/libsymfix.so': no symbols");
	mp_symbols_free(s);
	remove_tree(root);
}

/* The file under the root is used, even when nothing else about it is. */
static void test_root_file_only(void **state)
{
	struct fx *fx = fixture("symfix");
	const struct fx_module *m = module_at(fx, probe(fx, "lib"), NULL);
	char *root = make_tmpdir();
	struct mp_symbols *s = new_symbols(root, true);
	struct mp_sym sym;
	(void)state;
	copy_into(root, "/opt/app/libsymfix.so", FIXDIR "/libsymfix-symtab.so");
	add_as(s, 1, m, "/opt/app/libsymfix.so", 0, true);
	lookup_ret(s, probe(fx, "lib-static"), &sym);
	assert_int_equal(sym.nframes, 1);
	check_frame(&sym.frames[0], "lib_helper", NULL, 0, 0);
	check_warnings(s, 0);
	check_hint(s, "no debug information for 1 module (libsymfix.so): " NAMES_ONLY HOW_OFFLINE);
	mp_symbols_free(s);
	remove_tree(root);
}

/* A debuglink found in the global debug directory under the root: <root>/usr/lib/debug/<dir>/. */
static void test_root_debuglink(void **state)
{
	struct fx *fx = fixture("symfix");
	const struct fx_module *m = module_at(fx, probe(fx, "lib"), NULL);
	char *root = make_tmpdir();
	struct mp_symbols *s = new_symbols(root, true);
	(void)state;
	copy_into(root, "/opt/app/libsymfix-split.so", FIXDIR "/libsymfix-split.so");
	copy_into(root, "/usr/lib/debug/opt/app/libsymfix-split.so.debug",
		  FIXDIR "/libsymfix-split.so.debug");
	add_as(s, 1, m, "/opt/app/libsymfix-split.so", 0, true);
	check_lib_full(s, fx, 0);
	check_warnings(s, 0);
	mp_symbols_free(s);
	remove_tree(root);
}

/* No file at the path, but a debug file with the recorded build-id: it stands in. */
static void test_debug_file_stands_in(void **state)
{
	struct fx *fx = fixture("symfix");
	const struct fx_module *m = module_at(fx, probe(fx, "lib"), NULL);
	char *root = make_tmpdir(), path[PATH_MAX], expect[PATH_MAX * 2];
	struct mp_symbols *s;
	struct mp_sym sym;
	(void)state;
	build_id_path(path, sizeof(path), root, "/usr/lib/debug", m);
	copy_file(FIXDIR "/libsymfix-split.so.debug", path, SIZE_MAX);

	s = new_symbols(root, true);
	add_as(s, 1, m, "/gone/libsymfix.so", 0, true);
	check_lib_full(s, fx, 0);
	check_warnings(s, 0);
	/* Without a recorded build-id, nothing says which debug file it would be. */
	add_as(s, 2, m, "/gone/libsymfix.so", 0x40000000, false);
	lookup_ret(s, probe(fx, "lib") + 0x40000000, &sym);
	assert_int_equal(sym.nframes, 0);
	snprintf(expect, sizeof(expect),
		 "cannot find '/gone/libsymfix.so' (in '%s' or outside it): no symbols", root);
	check_warnings(s, 1, expect);
	mp_symbols_free(s);
	remove_tree(root);
}

/* $MEMPROF_DEBUGINFO_PATH: debug directories of the user's, searched by build-id. */
static void test_debuginfo_path(void **state)
{
	struct fx *fx = fixture("symfix");
	const struct fx_module *m = module_at(fx, probe(fx, "lib"), NULL);
	char *dir = make_tmpdir(), path[PATH_MAX], dirs[PATH_MAX + 32];
	struct mp_symbols *s;
	struct mp_sym sym;
	(void)state;
	build_id_path(path, sizeof(path), dir, "/debug", m);
	copy_file(FIXDIR "/libsymfix-split.so.debug", path, SIZE_MAX);

	/* The variable is read when the cache is made; other entries are skipped. */
	snprintf(dirs, sizeof(dirs), "/nonexistent:relative:%s/debug", dir);
	setenv("MEMPROF_DEBUGINFO_PATH", dirs, 1);
	s = new_symbols(NULL, true);
	unsetenv("MEMPROF_DEBUGINFO_PATH");
	/* A stripped file with no debuglink: its debug file by build-id. */
	add_as(s, 1, m, FIXDIR "/libsymfix-nodebug.so", 0, true);
	check_lib_full(s, fx, 0);
	/* No file at all: the debug file stands in for it. */
	add_as(s, 2, m, "/gone/libsymfix.so", 0x40000000, true);
	check_lib_full(s, fx, 0x40000000);
	check_warnings(s, 0);
	check_hint(s, NULL);
	mp_symbols_free(s);

	/* Without the variable, the same stripped file has no lines. */
	s = new_symbols(NULL, true);
	add_as(s, 1, m, FIXDIR "/libsymfix-nodebug.so", 0, true);
	lookup_ret(s, probe(fx, "lib"), &sym);
	assert_int_equal(sym.nframes, 1);
	check_frame(&sym.frames[0], "symfix_lib_call", NULL, 0, 0);
	mp_symbols_free(s);
	remove_tree(dir);
}

/*
 * debuginfod: the debug file of a file that is not here, by its recorded
 * build-id, from a server given as a file:// URL (the client reads
 * URL/buildid/ID/debuginfo as from a server, no network needed).
 */
static void test_debuginfod(void **state)
{
	struct fx *fx = fixture("symfix");
	const struct fx_module *m = module_at(fx, probe(fx, "lib"), NULL);
	char *dir = make_tmpdir(), path[PATH_MAX], url[PATH_MAX + 16];
	struct mp_symbols *s;
	struct mp_sym sym;
	int n;
	(void)state;
	n = snprintf(path, sizeof(path), "%s/server/buildid/", dir);
	for (size_t i = 0; i < m->build_id_len; i++)
		n += snprintf(path + n, sizeof(path) - n, "%02x", m->build_id[i]);
	snprintf(path + n, sizeof(path) - n, "/debuginfo");
	copy_file(FIXDIR "/libsymfix-split.so.debug", path, SIZE_MAX);
	snprintf(url, sizeof(url), "file://%s/server", dir);
	snprintf(path, sizeof(path), "%s/cache", dir);
	setenv("DEBUGINFOD_URLS", url, 1);
	setenv("DEBUGINFOD_CACHE_PATH", path, 1);

	s = new_symbols(NULL, true);
	add_as(s, 1, m, "/gone/libsymfix.so", 0, true);
	check_lib_full(s, fx, 0);
	/* Without a recorded build-id, nothing to ask for. */
	add_as(s, 2, m, "/gone/libsymfix.so", 0x40000000, false);
	lookup_ret(s, probe(fx, "lib") + 0x40000000, &sym);
	assert_int_equal(sym.nframes, 0);
	check_warnings(s, 1, "cannot find '/gone/libsymfix.so': no symbols");
	check_hint(s, NULL);
	mp_symbols_free(s);

	/*
	 * A server with nothing (and a new cache: the client keeps what it
	 * fetched): a stripped file keeps its hint, which says the servers had none.
	 */
	snprintf(url, sizeof(url), "file://%s/empty", dir);
	setenv("DEBUGINFOD_URLS", url, 1);
	snprintf(path, sizeof(path), "%s/cache2", dir);
	setenv("DEBUGINFOD_CACHE_PATH", path, 1);
	s = new_symbols(NULL, true);
	add_as(s, 1, m, FIXDIR "/libsymfix-nodebug.so", 0, true);
	add_as(s, 2, m, "/gone/libsymfix.so", 0x40000000, true);
	lookup_ret(s, probe(fx, "lib-static"), &sym);
	assert_int_equal(sym.nframes, 0);
	lookup_ret(s, probe(fx, "lib") + 0x40000000, &sym);
	assert_int_equal(sym.nframes, 0);
	check_warnings(s, 1, "cannot find '/gone/libsymfix.so': no symbols");
	check_hint(s, "no debug information for 1 module (libsymfix-nodebug.so): " UNNAMED HOW
		      ": the servers in DEBUGINFOD_URLS have none");
	mp_symbols_free(s);
	unsetenv("DEBUGINFOD_URLS");
	unsetenv("DEBUGINFOD_CACHE_PATH");
	remove_tree(dir);
}

/* The hint names four files, those with nameless frames first, and counts the others. */
static void test_hint_list(void **state)
{
	struct fx *fx = fixture("symfix");
	const struct fx_module *m = module_at(fx, probe(fx, "lib"), NULL);
	char *dir = make_tmpdir(), path[PATH_MAX];
	struct mp_symbols *s = new_symbols(NULL, true);
	struct mp_sym sym;
	(void)state;
	for (unsigned i = 0; i < 6; i++) {
		uint64_t delta = (uint64_t)i << 32;
		snprintf(path, sizeof(path), "%s/lib%u.so", dir, i);
		copy_file(i ? FIXDIR "/libsymfix-nodebug.so" : FIXDIR "/libsymfix-symtab.so", path,
			  SIZE_MAX);
		add_as(s, i + 1, m, path, delta, true);
		lookup_ret(s, probe(fx, "lib") + delta, &sym);
		assert_string_equal(sym.frames[0].function, "symfix_lib_call");
		if (!i) {
			check_hint(s, "no debug information for 1 module (lib0.so): " NAMES_ONLY
				      HOW_OFFLINE);
			continue;
		}
		/* Named until a frame has no name. */
		lookup_ret(s, probe(fx, "lib-static") + delta, &sym);
		assert_int_equal(sym.nframes, 0);
	}
	check_warnings(s, 0);
	check_hint(s, "no debug information for 6 modules (lib1.so, lib2.so, lib3.so, lib4.so and "
		      "2 more): " UNNAMED HOW_OFFLINE);
	mp_symbols_free(s);
	remove_tree(dir);
}

static void test_remove_and_readd(void **state)
{
	struct fx *fx = fixture("symfix");
	const struct fx_module *m = module_at(fx, probe(fx, "lib"), NULL);
	struct mp_symbols *s = new_symbols(NULL, true);
	struct mp_symbols_stats st;
	struct mp_sym sym;
	(void)state;

	add_as(s, 7, m, LIBSO, 0, true);
	assert_int_equal(mp_symbols_add_module(s, 7, 0, "/other", NULL, 0, m->seg, m->nseg), -1);
	check_lib_full(s, fx, 0);
	mp_symbols_stats(s, &st);
	assert_int_equal(st.files_opened, 1);

	/* dlclose: the ip is in no module any more. */
	mp_symbols_remove_module(s, 7);
	mp_symbols_remove_module(s, 7);
	mp_symbols_remove_module(s, 12345);
	assert_int_equal(mp_symbols_lookup(s, probe(fx, "lib"), true, &sym), -1);
	assert_int_equal(sym.module_id, 0);
	assert_null(sym.module_path);
	assert_int_equal(sym.nframes, 0);

	/* dlopen again at another base, under another id: same answers, same file. */
	add_as(s, 8, m, LIBSO, 0x10000000, true);
	assert_int_equal(mp_symbols_lookup(s, probe(fx, "lib"), true, &sym), -1);
	check_lib_full(s, fx, 0x10000000);
	lookup_ret(s, probe(fx, "lib") + 0x10000000, &sym);
	assert_int_equal(sym.module_id, 8);
	assert_int_equal(sym.offset, probe(fx, "lib") - m->base);
	/* The id of a removed module can be used again. */
	add_as(s, 7, m, LIBSO, 0x20000000, true);
	check_lib_full(s, fx, 0x20000000);
	mp_symbols_stats(s, &st);
	assert_int_equal(st.files_opened, 1);
	assert_int_equal(st.units_indexed, 1);
	mp_symbols_free(s);
}

/* Forked children: objects sharing one cache open each file once and return the same strings. */
static void test_shared_cache(void **state)
{
	struct fx *fx = fixture("symfix");
	const struct fx_module *m = module_at(fx, probe(fx, "lib"), NULL);
	struct mp_symbols *parent = new_symbols(NULL, true), *child;
	struct mp_symbols_opts opts = { .demangle = true, .share_with = parent };
	struct mp_symbols_stats st;
	struct mp_sym sym;
	const char *fn, *file;
	size_t opened;
	(void)state;

	add_all(parent, fx);
	add_as(parent, 100, m, "/nonexistent/libgone.so", 0x40000000, true);
	lookup_ret(parent, probe(fx, "template"), &sym);
	fn = sym.frames[0].function;
	file = sym.frames[0].file;
	check_lib_full(parent, fx, 0);
	lookup_ret(parent, probe(fx, "lib") + 0x40000000, &sym);
	mp_symbols_stats(parent, &st);
	opened = st.files_opened;
	assert_int_equal(opened, 3); /* the program, the library, the missing file */

	child = mp_symbols_new(&opts);
	add_all(child, fx);
	add_as(child, 100, m, "/nonexistent/libgone.so", 0x40000000, true);
	mp_symbols_free(parent);
	lookup_ret(child, probe(fx, "template"), &sym);
	assert_ptr_equal(sym.frames[0].function, fn);
	assert_ptr_equal(sym.frames[0].file, file);
	assert_string_equal(fn, "symfix::Box<int>::get(int) const");
	check_lib_full(child, fx, 0);
	lookup_ret(child, probe(fx, "lib") + 0x40000000, &sym);
	mp_symbols_stats(child, &st);
	assert_int_equal(st.files_opened, opened);
	assert_int_equal(st.lookups, 4);
	/* Each object reports the problems of its own modules. */
	check_warnings(child, 1, "cannot find '/nonexistent/libgone.so': no symbols");
	mp_symbols_free(child);
}

/* The vdso and other mappings without a file: module + offset, no warning. */
static void test_pseudo_modules(void **state)
{
	struct fx *fx = fixture("symfix");
	struct mp_symbols *s = new_symbols(NULL, true);
	struct mp_segment seg = { 0, 0x2000, 5 };
	struct mp_sym sym;
	size_t vdso = SIZE_MAX;
	(void)state;
	add_all(s, fx);
	for (size_t i = 0; i < fx->nmod; i++)
		if (!strncmp(fx->mod[i].path, "linux-vdso", 10))
			vdso = i;
	assert_true(vdso != SIZE_MAX);
	lookup_ret(s, fx->mod[vdso].base + fx->mod[vdso].seg[0].vaddr + 0x10, &sym);
	assert_int_equal(sym.module_id, vdso + 1);
	assert_int_equal(sym.offset, fx->mod[vdso].seg[0].vaddr + 0x10);
	assert_int_equal(sym.nframes, 0);

	assert_int_equal(mp_symbols_add_module(s, 200, 0x7e0000000000, "[vdso]", NULL, 0, &seg, 1), 0);
	assert_int_equal(mp_symbols_add_module(s, 201, 0x7e0000010000, "", NULL, 0, &seg, 1), 0);
	assert_int_equal(mp_symbols_add_module(s, 202, 0x7e0000020000, NULL, NULL, 0, &seg, 1), 0);
	lookup_ret(s, 0x7e0000000100, &sym);
	assert_int_equal(sym.module_id, 200);
	assert_string_equal(sym.module_path, "[vdso]");
	assert_int_equal(sym.offset, 0x100);
	assert_int_equal(sym.nframes, 0);
	lookup_ret(s, 0x7e0000010100, &sym);
	assert_int_equal(sym.module_id, 201);
	lookup_ret(s, 0x7e0000020100, &sym);
	assert_int_equal(sym.module_id, 202);
	assert_string_equal(sym.module_path, "");
	check_warnings(s, 0);
	mp_symbols_free(s);
}

/* Where ranges begin and end; the return address at the end of a segment. */
static void test_module_ranges(void **state)
{
	struct mp_symbols *s = new_symbols(NULL, true);
	struct mp_segment seg[] = { { 0x1000, 0x100, 5 }, { 0x3000, 0x10, 6 } };
	struct mp_segment wraps = { 0, 0x200, 5 }, below = { 0x201000, 0x100, 5 };
	struct mp_sym sym;
	(void)state;
	assert_int_equal(mp_symbols_add_module(s, 1, 0x500000, "[a]", NULL, 0, seg, 2), 0);
	assert_int_equal(mp_symbols_add_module(s, 2, 0x600000, "[b]", NULL, 0, NULL, 0), 0);
	assert_int_equal(mp_symbols_add_module(s, 3, UINT64_MAX - 0xff, "[c]", NULL, 0, &wraps, 1), 0);
	/* A prelinked library loaded below its link address has a "negative" bias. */
	assert_int_equal(mp_symbols_add_module(s, 4, (uint64_t)-0x1000, "[d]", NULL, 0, &below, 1), 0);
	assert_int_equal(mp_symbols_lookup(s, 0x501000, false, &sym), 0);
	assert_int_equal(sym.module_id, 1);
	assert_int_equal(sym.offset, 0x1000);
	assert_int_equal(mp_symbols_lookup(s, 0x5010ff, false, &sym), 0);
	assert_int_equal(mp_symbols_lookup(s, 0x501100, false, &sym), -1);
	assert_int_equal(sym.module_id, 0);
	/* A call as the last instruction: the return address is one past the segment. */
	assert_int_equal(mp_symbols_lookup(s, 0x501100, true, &sym), 0);
	assert_int_equal(sym.module_id, 1);
	assert_int_equal(sym.offset, 0x1100);
	assert_int_equal(mp_symbols_lookup(s, 0x501000, true, &sym), -1);
	assert_int_equal(mp_symbols_lookup(s, 0x503008, false, &sym), 0);
	assert_int_equal(sym.module_id, 1);
	assert_int_equal(mp_symbols_lookup(s, 0x502000, false, &sym), -1);
	assert_int_equal(mp_symbols_lookup(s, 0x200010, false, &sym), 0);
	assert_int_equal(sym.module_id, 4);
	assert_int_equal(sym.offset, 0x201010);
	/* No segments, or one that wraps around the address space: no ip. */
	assert_int_equal(mp_symbols_lookup(s, 0x600000, false, &sym), -1);
	assert_int_equal(mp_symbols_lookup(s, UINT64_MAX - 0x10, false, &sym), -1);
	assert_int_equal(mp_symbols_lookup(s, 0x10, false, &sym), -1);
	assert_int_equal(mp_symbols_lookup(s, 0, true, &sym), -1);
	assert_int_equal(mp_symbols_lookup(s, 0, false, &sym), -1);
	assert_int_equal(mp_symbols_lookup(s, UINT64_MAX, false, &sym), -1);
	assert_int_equal(mp_symbols_lookup(s, UINT64_MAX, true, &sym), -1);
	check_warnings(s, 0);
	mp_symbols_free(s);
}

/* Files that are not (whole) ELF files: warnings, module + offset, never a wrong name. */
static void test_broken_files(void **state)
{
	struct fx *fx = fixture("symfix");
	const struct fx_module *m = module_at(fx, probe(fx, "lib"), NULL);
	static const size_t cuts[] = { 0, 16, 63, 64, 500, 4096, 8192, 12000, 14000 };
	char *dir = make_tmpdir(), path[PATH_MAX], expect[PATH_MAX * 2];
	struct mp_symbols *s = new_symbols(NULL, true);
	struct stat st;
	struct mp_sym sym;
	uint64_t id = 1;
	(void)state;

	assert_int_equal(stat(LIBSO, &st), 0);
	for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
		for (int with_id = 0; with_id < 2; with_id++) {
			uint64_t delta = id << 32;
			assert_true(cuts[i] < (size_t)st.st_size);
			snprintf(path, sizeof(path), "%s/cut-%zu.so", dir, cuts[i]);
			copy_file(LIBSO, path, cuts[i]);
			add_as(s, id, m, path, delta, with_id);
			lookup_ret(s, probe(fx, "lib") + delta, &sym);
			assert_int_equal(sym.module_id, id);
			assert_int_equal(sym.offset, probe(fx, "lib") - m->base);
			if (sym.nframes) {
				const char *fn = sym.frames[sym.nframes - 1].function;
				assert_true(!fn || !strcmp(fn, "symfix_lib_call"));
			}
			id++;
		}
	}
	/* Too short to be ELF, a directory, a device. */
	add_as(s, id++, m, dir, (uint64_t)60 << 32, true);
	add_as(s, id++, m, "/dev/null", (uint64_t)61 << 32, true);
	lookup_ret(s, probe(fx, "lib") + ((uint64_t)60 << 32), &sym);
	assert_int_equal(sym.nframes, 0);
	lookup_ret(s, probe(fx, "lib") + ((uint64_t)61 << 32), &sym);
	assert_int_equal(sym.nframes, 0);
	{
		const char **lines;
		size_t n = mp_symbols_warnings(s, &lines);
		bool saw_cut0 = false, saw_dir = false, saw_dev = false;
		snprintf(expect, sizeof(expect), "'%s/cut-0.so' is not an ELF file: no symbols", dir);
		for (size_t i = 0; i < n; i++) {
			char dir_msg[PATH_MAX * 2];
			snprintf(dir_msg, sizeof(dir_msg), "'%s' is not a regular file: no symbols", dir);
			saw_cut0 |= !strcmp(lines[i], expect);
			saw_dir |= !strcmp(lines[i], dir_msg);
			saw_dev |= !strcmp(lines[i], "'/dev/null' is not a regular file: no symbols");
		}
		assert_true(saw_cut0 && saw_dir && saw_dev);
	}
	mp_symbols_free(s);
	remove_tree(dir);
}

/* ---- debug files kept decompressed (debugcache.h) ---- */

#define ZDEBUG_SO FIXDIR "/libsymfix-zdebug.so"

static struct mp_symbols *new_symbols_cached(const char *cache, const char *size)
{
	struct mp_symbols *s;
	setenv("MEMPROF_CACHE_DIR", cache, 1);
	if (size)
		setenv("MEMPROF_CACHE_SIZE", size, 1);
	s = new_symbols(NULL, true);
	unsetenv("MEMPROF_CACHE_SIZE");
	return s;
}

static void check_cache_stats(struct mp_symbols *s, size_t hits, size_t written)
{
	struct mp_symbols_stats st;
	mp_symbols_stats(s, &st);
	assert_int_equal(st.debug_cache_hits, hits);
	assert_int_equal(st.debug_cache_written, written);
}

/* The section of elf named name, or NULL. */
static Elf_Scn *section_named(Elf *elf, const char *name)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	assert_int_equal(elf_getshdrstrndx(elf, &shstrndx), 0);
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		assert_non_null(gelf_getshdr(scn, &sh));
		if (!strcmp(elf_strptr(elf, shstrndx, sh.sh_name), name))
			return scn;
	}
	return NULL;
}

/*
 * copy (the cache's) against plain (the same file never compressed): the
 * same sections, none compressed, each with the same bytes; the same
 * program headers. Returns how many sections zipped had compressed.
 */
static int check_same_elf(const char *copy, const char *plain, const char *zipped)
{
	int fc = open(copy, O_RDONLY), fp = open(plain, O_RDONLY), fz = open(zipped, O_RDONLY);
	Elf *c, *p, *z;
	Elf_Scn *scn = NULL;
	size_t nc, np, shstrndx;
	int compressed = 0;
	assert_true(fc >= 0 && fp >= 0 && fz >= 0);
	elf_version(EV_CURRENT);
	c = elf_begin(fc, ELF_C_READ, NULL);
	p = elf_begin(fp, ELF_C_READ, NULL);
	z = elf_begin(fz, ELF_C_READ, NULL);
	assert_true(c && p && z);
	assert_int_equal(elf_getshdrnum(c, &nc), 0);
	assert_int_equal(elf_getshdrnum(p, &np), 0);
	assert_int_equal(nc, np);
	assert_int_equal(elf_getphdrnum(c, &nc), 0);
	assert_int_equal(elf_getphdrnum(p, &np), 0);
	assert_int_equal(nc, np);
	for (size_t i = 0; i < nc; i++) {
		GElf_Phdr a, b;
		assert_non_null(gelf_getphdr(c, (int)i, &a));
		assert_non_null(gelf_getphdr(p, (int)i, &b));
		assert_memory_equal(&a, &b, sizeof(a));
	}
	assert_int_equal(elf_getshdrstrndx(p, &shstrndx), 0);
	while ((scn = elf_nextscn(p, scn))) {
		GElf_Shdr a, b, zh;
		const char *name;
		Elf_Scn *other;
		Elf_Data *da, *db;
		assert_non_null(gelf_getshdr(scn, &b));
		name = elf_strptr(p, shstrndx, b.sh_name);
		other = section_named(c, name);
		assert_non_null(other);
		assert_non_null(gelf_getshdr(other, &a));
		assert_false(a.sh_flags & SHF_COMPRESSED);
		assert_int_equal(a.sh_type, b.sh_type);
		assert_int_equal(a.sh_flags, b.sh_flags);
		assert_int_equal(a.sh_addr, b.sh_addr);
		assert_int_equal(a.sh_size, b.sh_size);
		assert_non_null(gelf_getshdr(section_named(z, name), &zh));
		compressed += !!(zh.sh_flags & SHF_COMPRESSED);
		if (b.sh_type == SHT_NOBITS)
			continue;
		da = elf_rawdata(other, NULL);
		db = elf_rawdata(scn, NULL);
		assert_true(da && db);
		assert_int_equal(da->d_size, db->d_size);
		assert_memory_equal(da->d_buf, db->d_buf, db->d_size);
	}
	elf_end(c);
	elf_end(p);
	elf_end(z);
	close(fc);
	close(fp);
	close(fz);
	return compressed;
}

/*
 * The fixture's stripped library symbolized through its debug file, with the
 * cache in cache bounded by size (NULL: unset): the frames as ever, and
 * hits copies read from the cache and written written.
 */
static void symbolize_cached(struct fx *fx, const struct fx_module *m, const char *cache, const char *size,
			     size_t hits, size_t written)
{
	struct mp_symbols *s = new_symbols_cached(cache, size);
	add_as(s, 1, m, FIXDIR "/libsymfix-nodebug.so", 0, true);
	check_lib_full(s, fx, 0);
	check_cache_stats(s, hits, written);
	mp_symbols_free(s);
}

/*
 * A debug file whose DWARF is compressed (distributions ship them so): the
 * first run writes its decompressed copy into the cache, a later one reads
 * the copy and inflates nothing; the frames are the same either way. A copy
 * that is not sound is written again; a cache that cannot be written, or is
 * off, changes nothing but the time.
 */
static void test_debug_cache(void **state)
{
	struct fx *fx = fixture("symfix");
	const struct fx_module *m = module_at(fx, probe(fx, "lib"), NULL);
	char *dir = make_tmpdir(), path[PATH_MAX], dbg[PATH_MAX + 8], cache[PATH_MAX + 8];
	char copy[PATH_MAX * 2], elfcopy[PATH_MAX * 2], other[PATH_MAX * 2], tmp[PATH_MAX * 2];
	char size[32];
	struct mp_symbols *s;
	struct stat st;
	int n;
	(void)state;
	build_id_path(path, sizeof(path), dir, "/debug", m);
	copy_file(ZDEBUG_SO ".debug", path, SIZE_MAX);
	snprintf(dbg, sizeof(dbg), "%s/debug", dir);
	snprintf(cache, sizeof(cache), "%s/cache", dir);
	n = snprintf(copy, sizeof(copy), "%s/debug/", cache);
	for (size_t i = 0; i < m->build_id_len; i++)
		n += snprintf(copy + n, sizeof(copy) - n, "%02x", m->build_id[i]);
	snprintf(elfcopy, sizeof(elfcopy), "%.*s.elf", n, copy);
	snprintf(copy + n, sizeof(copy) - n, ".debug");
	setenv("MEMPROF_DEBUGINFO_PATH", dbg, 1);

	/* First: found compressed, written decompressed, the frames as ever. */
	symbolize_cached(fx, m, cache, NULL, 0, 1);
	assert_true(check_same_elf(copy, FIXDIR "/libsymfix-split.so.debug", ZDEBUG_SO ".debug") >= 3);
	assert_int_equal(stat(copy, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);

	/* Then: read from the cache, nothing written. */
	symbolize_cached(fx, m, cache, NULL, 1, 0);

	/* A copy cut short is not used, and written again. */
	assert_int_equal(truncate(copy, st.st_size / 2), 0);
	symbolize_cached(fx, m, cache, NULL, 0, 1);
	assert_int_equal(stat(copy, &st), 0);

	/* A library with its own DWARF compressed: its copy, kept apart from the debug file's. */
	s = new_symbols_cached(cache, NULL);
	add_as(s, 2, m, ZDEBUG_SO, 0x40000000, true);
	check_lib_full(s, fx, 0x40000000);
	check_cache_stats(s, 0, 1);
	mp_symbols_free(s);
	assert_true(check_same_elf(elfcopy, LIBSO, ZDEBUG_SO) >= 3);

	/*
	 * Past its bound, the files used least recently go (a file left half
	 * written by a run that died, an hour ago, too); never the one just
	 * written. The bound: the library's copy and one and a half of the
	 * debug file's; with an old file of two and a half of them, and the new
	 * copy, the old file goes (it was used longest ago), and only it.
	 */
	assert_int_equal(unlink(copy), 0);
	snprintf(other, sizeof(other), "%s/debug/0123.debug", cache);
	snprintf(tmp, sizeof(tmp), "%s/debug/.0123.debug.1.1.tmp", cache);
	copy_file(LIBSO, other, SIZE_MAX);
	assert_int_equal(truncate(other, st.st_size * 5 / 2), 0);
	copy_file(LIBSO, tmp, 100);
	{
		struct timespec old[2] = { { time(NULL) - 7200, 0 }, { time(NULL) - 7200, 0 } };
		assert_int_equal(utimensat(AT_FDCWD, other, old, 0), 0);
		assert_int_equal(utimensat(AT_FDCWD, tmp, old, 0), 0);
		old[0].tv_sec = old[1].tv_sec = time(NULL) - 3600;
		assert_int_equal(utimensat(AT_FDCWD, elfcopy, old, 0), 0);
	}
	{
		struct stat est;
		assert_int_equal(stat(elfcopy, &est), 0);
		snprintf(size, sizeof(size), "%lld", (long long)(est.st_size + st.st_size * 3 / 2));
	}
	symbolize_cached(fx, m, cache, size, 0, 1);
	assert_int_equal(stat(copy, &st), 0);
	assert_int_equal(access(other, F_OK), -1);
	assert_int_equal(access(tmp, F_OK), -1);
	assert_int_equal(access(elfcopy, F_OK), 0);

	/* A bound too small for the file: read as it is, nothing kept. */
	assert_int_equal(unlink(copy), 0);
	symbolize_cached(fx, m, cache, "1k", 0, 0);
	assert_int_equal(access(copy, F_OK), -1);

	/* Off (an empty directory name, or a size of 0), or a directory that cannot be made. */
	for (int i = 0; i < 3; i++)
		symbolize_cached(fx, m, i == 0 ? "" : i == 1 ? cache : "/proc/memprof-no-such-dir",
				 i == 1 ? "0" : NULL, 0, 0);
	assert_int_equal(access(copy, F_OK), -1);

	/* A file with nothing compressed has no copy. */
	{
		int in = open(LIBSO, O_RDONLY), out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		uint64_t got = 0;
		assert_true(in >= 0 && out >= 0);
		assert_int_equal(mp_debugcache_decompress(in, out, &got), -1);
		close(in);
		close(out);
	}
	unsetenv("MEMPROF_DEBUGINFO_PATH");
	unsetenv("MEMPROF_CACHE_DIR");
	remove_tree(dir);
}

/* A library with bytes overwritten all over: no crash, no wrong name. */
static void test_corrupt_file(void **state)
{
	struct fx *fx = fixture("symfix");
	const struct fx_module *m = module_at(fx, probe(fx, "lib"), NULL);
	char *dir = make_tmpdir(), path[PATH_MAX];
	struct stat st;
	(void)state;
	assert_int_equal(stat(LIBSO, &st), 0);
	snprintf(path, sizeof(path), "%s/corrupt.so", dir);
	for (off_t start = 64; start < st.st_size; start += 509) {
		struct mp_symbols *s = new_symbols(NULL, true);
		const char *names[] = { "lib", "lib-static" };
		unsigned char junk[97];
		int fd;
		copy_file(LIBSO, path, SIZE_MAX);
		for (size_t i = 0; i < sizeof(junk); i++)
			junk[i] = (unsigned char)(start * 31 + i * 7);
		fd = open(path, O_WRONLY);
		assert_true(fd >= 0);
		assert_int_equal(pwrite(fd, junk, sizeof(junk), start), sizeof(junk));
		close(fd);
		add_as(s, 1, m, path, 0, false);
		for (size_t k = 0; k < 2; k++) {
			struct mp_sym sym;
			lookup_ret(s, probe(fx, names[k]), &sym);
			assert_int_equal(sym.module_id, 1);
			for (size_t i = 0; i < sym.nframes; i++)
				assert_true(sym.frames[i].line < 1000);
		}
		mp_symbols_free(s);
	}
	remove_tree(dir);
}

/* ---- eu-addr2line as an oracle ---- */

struct oracle {
	uint64_t addr;
	size_t n;
	struct mp_sym_frame f[16];
};

extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);
extern char *rust_demangle(const char *mangled, int options);

/* "??" is eu-addr2line's unknown. */
static const char *known(const char *s)
{
	return strcmp(s, "??") ? xstrdup(s) : NULL;
}

/*
 * A function's name as eu-addr2line gives it, demangled: it demangles C++'s
 * (-C, with the C++ runtime's demangler) but not Rust's, which memprof does
 * (libiberty's rust_demangle, both manglings); so its raw names are taken,
 * and demangled here as eu-addr2line -C and rustfilt would.
 */
static const char *known_function(const char *s)
{
	char *d;
	int status = -1;
	if (!strcmp(s, "??"))
		return NULL;
	if ((d = rust_demangle(s, 3)))
		return d;
	if (s[0] == '_' && s[1] == 'Z' && (d = __cxa_demangle(s, NULL, NULL, &status)) && status == 0)
		return d;
	free(d);
	return xstrdup(s);
}

/*
 * eu-addr2line -a -i -f ADDR...: per address "0xADDR", then for each frame a
 * function line ("FN", or "FN inlined at FILE:LINE:COL in CALLER" for the
 * first) and a "FILE:LINE[:COL]" line; "??" and "??:0" when unknown.
 */
static size_t addr2line(const char *file, uint64_t lo, uint64_t hi, struct oracle *o)
{
	size_t size = (hi - lo) * 24 + PATH_MAX + 64, len, n = 0, k = 0;
	char *cmd = xmalloc(size), line[2048];
	FILE *p;
	len = snprintf(cmd, size, "eu-addr2line -e '%s' -a -i -f", file);
	for (uint64_t a = lo; a < hi; a++)
		len += snprintf(cmd + len, size - len, " %#llx", (unsigned long long)a);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p)) {
		struct mp_sym_frame *f;
		char *nl = strchr(line, '\n'), *colon, *inl;
		if (nl)
			*nl = '\0';
		if (!strncmp(line, "0x", 2)) {
			assert_true(n < hi - lo);
			o[n].addr = strtoull(line, NULL, 16);
			o[n++].n = 0;
			k = 0;
			continue;
		}
		assert_true(n > 0 && o[n - 1].n < 16);
		f = &o[n - 1].f[o[n - 1].n];
		if (k++ % 2 == 0) {
			if ((inl = strstr(line, " inlined at ")))
				*inl = '\0';
			f->function = known_function(line);
			continue;
		}
		colon = strchr(line, ':');
		assert_non_null(colon);
		*colon = '\0';
		f->file = known(line);
		f->line = f->column = 0;
		sscanf(colon + 1, "%u:%u", &f->line, &f->column);
		o[n - 1].n++;
	}
	/* It exits with 1 when some address is in no compilation unit. */
	pclose(p);
	free(cmd);
	return n;
}

/* Every byte of the executable segments of the module that contains ip, against eu-addr2line. */
static void sweep_module(struct mp_symbols *s, struct fx *fx, uint64_t ip)
{
	const struct fx_module *m = module_at(fx, ip, NULL);
	size_t compared = 0, inlined = 0;
	for (size_t i = 0; i < m->nseg; i++) {
		uint64_t lo = m->seg[i].vaddr, hi = lo + m->seg[i].memsz;
		struct oracle *o;
		size_t n;
		if (!(m->seg[i].flags & 1))
			continue;
		o = xcalloc(hi - lo, sizeof(*o));
		n = addr2line(m->path, lo, hi, o);
		assert_int_equal(n, hi - lo);
		for (size_t j = 0; j < n; j++) {
			struct mp_sym sym;
			/* Both unknown: no frames here, "??" and "??:0" there. */
			size_t want = o[j].n == 1 && !o[j].f[0].function && !o[j].f[0].file ? 0 : o[j].n;
			assert_int_equal(o[j].addr, lo + j);
			assert_int_equal(mp_symbols_lookup(s, m->base + o[j].addr, false, &sym), 0);
			if (sym.nframes != want)
				fail_msg("%s+%#llx: %zu frames, eu-addr2line %zu", m->path,
					 (unsigned long long)o[j].addr, sym.nframes, want);
			for (size_t k = 0; k < want; k++) {
				const struct mp_sym_frame *w = &o[j].f[k];
				check_frame(&sym.frames[k], w->function,
					    w->file ? base_name(w->file) : NULL, w->line, w->column);
			}
			compared += want > 0;
			inlined += want > 1;
			for (size_t k = 0; k < o[j].n; k++) {
				free((char *)o[j].f[k].function);
				free((char *)o[j].f[k].file);
			}
		}
		free(o);
	}
	print_message("%s: %zu addresses with symbols (%zu in inlined code) agree with eu-addr2line\n",
		      m->path, compared, inlined);
	assert_true(compared > 100);
}

static void test_oracle_eu_addr2line(void **state)
{
	struct fx *fx = fixture("symfix");
	struct mp_symbols *s;
	(void)state;
	if (system("command -v eu-addr2line >/dev/null 2>&1")) {
		print_message("eu-addr2line not found (apt-get install elfutils): not compared\n");
		skip();
		return;
	}
	s = new_symbols(NULL, true);
	add_all(s, fx);
	sweep_module(s, fx, probe(fx, "inline"));
	sweep_module(s, fx, probe(fx, "lib"));
	mp_symbols_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pie_program),
		cmocka_unit_test(test_non_pie_program),
		cmocka_unit_test(test_no_demangling),
		cmocka_unit_test(test_shared_library),
		cmocka_unit_test(test_debuglink),
		cmocka_unit_test(test_symtab_only),
		cmocka_unit_test(test_dynsym_only),
		cmocka_unit_test(test_build_id_mismatch),
		cmocka_unit_test(test_missing_file),
		cmocka_unit_test(test_deleted_suffix),
		cmocka_unit_test(test_root),
		cmocka_unit_test(test_root_file_only),
		cmocka_unit_test(test_root_debuglink),
		cmocka_unit_test(test_debug_file_stands_in),
		cmocka_unit_test(test_debuginfo_path),
		cmocka_unit_test(test_debuginfod),
		cmocka_unit_test(test_hint_list),
		cmocka_unit_test(test_remove_and_readd),
		cmocka_unit_test(test_shared_cache),
		cmocka_unit_test(test_pseudo_modules),
		cmocka_unit_test(test_module_ranges),
		cmocka_unit_test(test_broken_files),
		cmocka_unit_test(test_corrupt_file),
		cmocka_unit_test(test_debug_cache),
		cmocka_unit_test(test_oracle_eu_addr2line),
	};
	/* Stay offline: no debuginfod look-ups for the fixtures' build-ids. */
	unsetenv("DEBUGINFOD_URLS");
	return cmocka_run_group_tests(tests, NULL, NULL) ? 1 : 0;
}
