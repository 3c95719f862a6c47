/*
 * Unit tests for how reports show stacks (lib/analysis/present.c) and for
 * C++ names (lib/symbols/cxxname.c): the classes of frames, a Python
 * program's folded stacks, allocation sites past allocator plumbing, and
 * template arguments elided, on hand-built captures and real demangled names.
 */
#include <config.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "lib/analysis/analysis.h"
#include "lib/analysis/calltree.h"
#include "lib/format/pyframe.h"
#include "lib/symbols/cxxname.h"
#include "lib/util/strbuf.h"

#include "tests/unit/analysis-fixture.h"

/* ---- C++ names ---------------------------------------------------------- */

static const char *short_name(const char *name)
{
	static struct strbuf sb = STRBUF_INIT;
	strbuf_reset(&sb);
	mp_cxx_shorten(name, &sb);
	return sb.buf;
}

static void test_cxx_shorten(void **state)
{
	static const char *const cases[][2] = {
		{ "void std::vector<int, std::allocator<int> >::_M_realloc_insert<int const&>(__gnu_cxx::"
		  "__normal_iterator<int*, std::vector<int, std::allocator<int> > >, int const&)",
		  "std::vector<\u2026>::_M_realloc_insert<\u2026>(__gnu_cxx::__normal_iterator<\u2026>, int const&)" },
		{ "std::map<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >, int, "
		  "std::less<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > >, "
		  "std::allocator<std::pair<std::__cxx11::basic_string<char, std::char_traits<char>, "
		  "std::allocator<char> > const, int> > >::operator[](std::__cxx11::basic_string<char, "
		  "std::char_traits<char>, std::allocator<char> > const&)",
		  "std::map<\u2026>::operator[](std::__cxx11::basic_string<\u2026> const&)" },
		{ "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >::_M_create"
		  "(unsigned long&, unsigned long)",
		  "std::__cxx11::basic_string<\u2026>::_M_create(unsigned long&, unsigned long)" },
		{ "fill(int, char const*)", "fill(int, char const*)" },
		{ "unsigned long count<int>(int)", "count<\u2026>(int)" },
		{ "bool std::operator< <char, std::char_traits<char> >(std::basic_string<char> const&, char const*)",
		  "std::operator< <\u2026>(std::basic_string<\u2026> const&, char const*)" },
		{ "std::ostream::operator<<(int)", "std::ostream::operator<<(int)" },
		{ "std::unique_ptr<Foo, std::default_delete<Foo> >::operator->() const",
		  "std::unique_ptr<\u2026>::operator->() const" },
		{ "std::strong_ordering operator<=>(A const&, A const&)", "operator<=>(A const&, A const&)" },
		{ "Cmp<int>::operator>(int) const", "Cmp<\u2026>::operator>(int) const" },
		{ "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > "
		  "std::operator+<char, std::char_traits<char>, std::allocator<char> >(char const*, "
		  "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >&&)",
		  "std::operator+<\u2026>(char const*, std::__cxx11::basic_string<\u2026>&&)" },
		{ "std::ostream& std::operator<< <std::char_traits<char> >(std::ostream&, char const*)",
		  "std::operator<< <\u2026>(std::ostream&, char const*)" },
		{ "operator new(unsigned long)", "operator new(unsigned long)" },
		{ "operator delete[](void*, unsigned long)", "operator delete[](void*, unsigned long)" },
		{ "(anonymous namespace)::worker(void*)", "(anonymous namespace)::worker(void*)" },
		{ "main::{lambda(int)#1}::operator()(int) const", "main::{lambda(int)#1}::operator()(int) const" },
		{ "alloc::raw_vec::RawVec<T,A>::grow_one", "alloc::raw_vec::RawVec<\u2026>::grow_one" },
		/* Not C++ or not shortened: kept as they are. */
		{ "<alloc::vec::Vec<T,A> as core::ops::drop::Drop>::drop",
		  "<alloc::vec::Vec<T,A> as core::ops::drop::Drop>::drop" },
		{ "<module>", "<module>" },
		{ "Foo.bar.<locals>.baz", "Foo.bar.<locals>.baz" },
		{ "[smaller frames]", "[smaller frames]" },
		{ "main", "main" },
		{ "broken<int(int)", "broken<int(int)" },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_string_equal(short_name(cases[i][0]), cases[i][1]);
}

static void test_cxx_name_start(void **state)
{
	const char *tmpl = "void std::vector<int>::push_back(int const&)";
	const char *conv = "std::strong_ordering operator<=>(A const&, A const&)";
	(void)state;
	assert_int_equal(mp_cxx_name_start(tmpl), strlen("void "));
	assert_int_equal(mp_cxx_name_start(conv), strlen("std::strong_ordering "));
	assert_int_equal(mp_cxx_name_start("operator new(unsigned long)"), 0);
	assert_int_equal(mp_cxx_name_start("std::vector<std::pair<int, int> >::size() const"), 0);
	assert_int_equal(mp_cxx_name_start("(anonymous namespace)::f(int)"), 0);
	assert_int_equal(mp_cxx_name_start("main"), 0);
	assert_int_equal(mp_cxx_name_start("<module>"), 0);
	assert_int_equal(mp_cxx_name_start("char const* std::get<0ul>(std::tuple<char const*>&)"),
			 strlen("char const* "));
}

/* ---- a Python program --------------------------------------------------- */

enum { PY = 1, LIBC, LIBZ, BLAS };

/*
 * Python 3.11 as Debian ships it (the executable is the interpreter), with
 * libc, zlib and a native thread's library; three Python functions.
 */
static void python_program(void)
{
	uint64_t s_start = string("_start"), s_lscm = string("__libc_start_call_main");
	uint64_t s_lscm_file = string("../sysdeps/nptl/libc_start_call_main.h");
	uint64_t s_bytes = string("Py_BytesMain"), s_call = string("_PyObject_MakeTpCall");
	uint64_t s_init = string("Py_InitializeFromConfig"), s_setlocale = string("setlocale");
	uint64_t s_deflate = string("deflateInit2_"), s_thread = string("start_thread");
	uint64_t s_clone = string("clone3"), s_blas = string("blas_worker");
	uint64_t s_leak = string("/t/leak.py"), s_mod = string("<module>"), s_main = string("main");
	uint64_t s_mk = string("make_compressor");
	struct mp_frame f[][1] = {
		{ { s_start, 0, 0, 0 } }, { { s_lscm, s_lscm_file, 58, 0 } }, { { s_bytes, 0, 0, 0 } },
		{ { s_call, 0, 0, 0 } }, { { s_init, 0, 0, 0 } }, { { s_setlocale, 0, 0, 0 } },
		{ { s_deflate, 0, 0, 0 } }, { { s_thread, 0, 0, 0 } }, { { s_clone, 0, 0, 0 } },
		{ { s_blas, 0, 0, 0 } }, { { s_mod, s_leak, 17, 1 } }, { { s_main, s_leak, 11, 5 } },
		{ { s_mk, s_leak, 16, 5 } },
	};
	module(PY, 0, "/usr/bin/python3.11", 0x400000, 0x300000);
	module(LIBC, 0x7f0000000000, "/lib/x86_64-linux-gnu/libc.so.6", 0, 0x100000);
	module(LIBZ, 0x7f1000000000, "/lib/x86_64-linux-gnu/libz.so.1", 0, 0x100000);
	module(BLAS, 0x7f2000000000, "/usr/lib/libopenblas.so.0", 0, 0x100000);
	symbol(0x400100, PY, 0x400100, 1, f[0]);
	symbol(0x7f0000001000, LIBC, 0x1000, 1, f[1]);
	symbol(0x400200, PY, 0x400200, 1, f[2]);
	symbol(0x400300, PY, 0x400300, 1, f[3]);
	symbol(0x400400, PY, 0x400400, 0, NULL); /* python3.11+0x400400: stripped */
	symbol(0x400500, PY, 0x400500, 1, f[4]);
	symbol(0x7f0000002000, LIBC, 0x2000, 1, f[5]);
	symbol(0x7f1000001000, LIBZ, 0x1000, 1, f[6]);
	symbol(0x7f0000003000, LIBC, 0x3000, 1, f[7]);
	symbol(0x7f0000004000, LIBC, 0x4000, 1, f[8]);
	symbol(0x7f2000001000, BLAS, 0x1000, 1, f[9]);
	symbol(mp_pyip(1, 2), 0, 0, 1, f[10]);
	symbol(mp_pyip(2, 4), 0, 0, 1, f[11]);
	symbol(mp_pyip(3, 6), 0, 0, 1, f[12]);
}

/* Trace nodes of python_program()'s stacks, and the allocations at their ends. */
enum { N_BYTEARRAY = 7, N_DEFLATE = 10, N_STARTUP = 12, N_SETLOCALE = 13, N_BLAS = 16 };

static void python_stacks(unsigned flags)
{
	fixture_exe = "/usr/bin/python3.11";
	begin(flags, 1);
	fixture_exe = NULL;
	python_program();
	trace(0, 0x400100);               /* 1 _start */
	trace(1, 0x7f0000001000);         /* 2 __libc_start_call_main */
	trace(2, 0x400200);               /* 3 Py_BytesMain */
	trace(3, mp_pyip(1, 2));          /* 4 <module> */
	trace(4, mp_pyip(2, 4));          /* 5 main */
	trace(5, 0x400300);               /* 6 _PyObject_MakeTpCall */
	trace(6, 0x400400);               /* 7 python3.11+0x400400: bytearray(100) */
	trace(5, mp_pyip(3, 6));          /* 8 make_compressor */
	trace(8, 0x400400);               /* 9 python3.11+0x400400 */
	trace(9, 0x7f1000001000);         /* 10 deflateInit2_ */
	trace(3, 0x400500);               /* 11 Py_InitializeFromConfig */
	trace(11, 0x400400);              /* 12 python3.11+0x400400: start-up */
	trace(11, 0x7f0000002000);        /* 13 setlocale */
	trace(0, 0x7f0000004000);         /* 14 clone3 */
	trace(14, 0x7f0000003000);        /* 15 start_thread */
	trace(15, 0x7f2000001000);        /* 16 blas_worker: a native thread */
	ev_alloc(0, MALLOC, 0x10, 100, N_BYTEARRAY);
	ev_alloc(0, MALLOC, 0x20, 200, N_DEFLATE);
	ev_alloc(0, MALLOC, 0x30, 300, N_STARTUP);
	ev_alloc(0, MALLOC, 0x40, 400, N_SETLOCALE);
	ev_alloc(0, MALLOC, 0x50, 500, N_BLAS);
	mp_analysis_finish(&A);
}

/* A stack as shown, innermost first: "f1 < f2 < f3" (function names). */
static const char *shown(uint32_t stack)
{
	static struct strbuf sb = STRBUF_INIT;
	uint32_t *buf = NULL;
	size_t alloc = 0, n = mp_analysis_view_stack(&A, stack, &buf, &alloc);
	strbuf_reset(&sb);
	for (size_t i = 0; i < n; i++)
		strbuf_addf(&sb, "%s%s", i ? " < " : "",
			    mp_analysis_string(&A, A.locs[buf[i]].function));
	free(buf);
	return sb.buf;
}

static const char *fname(uint32_t loc)
{
	return loc == MP_NONE ? "(none)" : mp_analysis_string(&A, A.locs[loc].function);
}

static const struct mp_slot *slot_at(uint32_t stack)
{
	return slot_of(stack, M, MALLOC);
}

static uint32_t loc_named(const char *fn)
{
	for (size_t i = 0; i < A.nlocs; i++)
		if (!strcmp(mp_analysis_string(&A, A.locs[i].function), fn))
			return (uint32_t)i;
	fail_msg("no location %s", fn);
	return MP_NONE;
}

static void test_python_classes(void **state)
{
	(void)state;
	python_stacks(0);
	assert_int_equal(A.locs[loc_named("<module>")].flags, MP_LOC_PYTHON);
	assert_int_equal(A.locs[loc_named("make_compressor")].flags, MP_LOC_PYTHON);
	assert_int_equal(A.locs[loc_named("_start")].flags,
			 MP_LOC_RUNTIME | MP_LOC_INTERPRETER | MP_LOC_PROGRAM | MP_LOC_STARTUP);
	assert_int_equal(A.locs[loc_named("__libc_start_call_main")].flags,
			 MP_LOC_RUNTIME | MP_LOC_STARTUP);
	assert_int_equal(A.locs[loc_named("_PyObject_MakeTpCall")].flags,
			 MP_LOC_RUNTIME | MP_LOC_INTERPRETER | MP_LOC_PROGRAM);
	assert_int_equal(A.locs[loc_named("python3.11+0x400400")].flags,
			 MP_LOC_RUNTIME | MP_LOC_UNSYMBOLIZED | MP_LOC_INTERPRETER | MP_LOC_PROGRAM);
	assert_int_equal(A.locs[loc_named("deflateInit2_")].flags, 0);
	assert_int_equal(A.locs[loc_named("setlocale")].flags, MP_LOC_RUNTIME);
	assert_int_equal(A.locs[loc_named("start_thread")].flags, MP_LOC_RUNTIME | MP_LOC_STARTUP);
	assert_int_equal(A.locs[loc_named("blas_worker")].flags, 0);
	assert_int_equal(A.interpreter_loc, loc_named("[python interpreter]"));
	assert_int_equal(A.locs[A.interpreter_loc].flags, MP_LOC_GROUP);
	assert_true(mp_analysis_folds(&A));
}

static void test_python_folded(void **state)
{
	(void)state;
	python_stacks(0);
	/* The interpreter's frames go; the Python ones and the libraries they call stay. */
	assert_string_equal(shown(N_BYTEARRAY), "main < <module>");
	assert_string_equal(shown(N_DEFLATE), "deflateInit2_ < make_compressor < main < <module>");
	/* No Python frame: under [python interpreter], with the libraries called. */
	assert_string_equal(shown(N_STARTUP), "[python interpreter]");
	assert_string_equal(shown(N_SETLOCALE), "setlocale < [python interpreter]");
	/* A native thread of the interpreter's process: no interpreter frame, start-up folded. */
	assert_string_equal(shown(N_BLAS), "blas_worker");
	assert_string_equal(shown(0), "<unknown stack>");

	assert_string_equal(fname(slot_at(N_BYTEARRAY)->site), "main");
	assert_int_equal(slot_at(N_BYTEARRAY)->caller, MP_NONE);
	/* A library called from Python: named with its Python caller. */
	assert_string_equal(fname(slot_at(N_DEFLATE)->site), "deflateInit2_");
	assert_string_equal(fname(slot_at(N_DEFLATE)->caller), "make_compressor");
	assert_string_equal(fname(slot_at(N_STARTUP)->site), "[python interpreter]");
	assert_string_equal(fname(slot_at(N_SETLOCALE)->site), "[python interpreter]");
	assert_int_equal(slot_at(N_SETLOCALE)->caller, MP_NONE);
	assert_string_equal(fname(slot_at(N_BLAS)->site), "blas_worker");

	/* The call tree, as every reporter sees it: one node for start-up. */
	{
		struct mp_calltree t;
		uint32_t kids = 0, c;
		mp_calltree_init(&t, &A, 0);
		mp_calltree_add_view(&t, MP_VIEW_LEAKS);
		mp_calltree_finish(&t);
		for (c = t.nodes[0].first_child; c != MP_NONE; c = t.nodes[c].next_sibling)
			kids++;
		assert_int_equal(kids, 3); /* <module>, [python interpreter], blas_worker */
		c = t.nodes[0].first_child;
		assert_string_equal(fname(t.nodes[c].location), "[python interpreter]");
		assert_counts(t.nodes[c].total, 700, 2);
		assert_counts(t.nodes[c].self, 300, 1);
		mp_calltree_release(&t);
	}
}

static void test_python_all_frames(void **state)
{
	(void)state;
	python_stacks(MP_ANALYSIS_ALL_FRAMES);
	assert_false(mp_analysis_folds(&A));
	assert_string_equal(shown(N_BYTEARRAY), "python3.11+0x400400 < _PyObject_MakeTpCall < main < "
				     "<module> < Py_BytesMain < __libc_start_call_main < _start");
	assert_string_equal(shown(N_BLAS), "blas_worker < start_thread < clone3");
	/* The sites of today: the Python line, the innermost frame when all are the runtime's. */
	assert_string_equal(fname(slot_at(N_BYTEARRAY)->site), "main");
	assert_string_equal(fname(slot_at(N_STARTUP)->site), "python3.11+0x400400");
	assert_string_equal(fname(slot_at(N_DEFLATE)->site), "deflateInit2_");
	assert_string_equal(fname(slot_at(N_DEFLATE)->caller), "make_compressor");
}

static void test_python_raw_leaf(void **state)
{
	(void)state;
	python_stacks(MP_ANALYSIS_RAW_LEAF);
	assert_string_equal(fname(slot_at(N_BYTEARRAY)->site), "main");
	assert_string_equal(fname(slot_at(N_SETLOCALE)->site), "setlocale");
	assert_string_equal(fname(slot_at(N_SETLOCALE)->caller), "(none)");
	assert_string_equal(fname(slot_at(N_STARTUP)->site), "[python interpreter]");
	mp_analysis_release(&A);
	python_stacks(MP_ANALYSIS_RAW_LEAF | MP_ANALYSIS_ALL_FRAMES);
	assert_string_equal(fname(slot_at(N_BYTEARRAY)->site), "python3.11+0x400400");
	assert_string_equal(fname(slot_at(N_BYTEARRAY)->caller), "main");
	assert_string_equal(fname(slot_at(N_BLAS)->site), "blas_worker");
}

/* ---- C++ plumbing ------------------------------------------------------- */

static void test_cxx_sites(void **state)
{
	struct mp_group_row *rows;
	size_t n;
	(void)state;
	cxx_program(0);
	assert_int_equal(A.interpreter_loc, MP_NONE);
	assert_false(mp_analysis_folds(&A));
	assert_int_equal(A.locs[loc_named("fill(int, char const*)")].flags, MP_LOC_PROGRAM);
	assert_int_equal(A.locs[loc_named("operator new(unsigned long)")].flags,
			 MP_LOC_RUNTIME | MP_LOC_PLUMBING);
	assert_int_equal(A.locs[loc_named("std::__new_allocator<int>::allocate(unsigned long, void const*)")].flags,
			 MP_LOC_PROGRAM | MP_LOC_PLUMBING);
	assert_int_equal(A.locs[loc_named("main")].flags, MP_LOC_PROGRAM);
	/* A template's return type does not hide std::. */
	assert_int_equal(A.locs[loc_named("void std::vector<int, std::allocator<int> >::_M_realloc_insert"
					  "<int const&>(__gnu_cxx::__normal_iterator<int*, std::vector<int, "
					  "std::allocator<int> > >, int const&)")].flags,
			 MP_LOC_PROGRAM | MP_LOC_PLUMBING);
	/* Nothing is folded; the plumbing stays in the stack. */
	assert_string_equal(shown(3), "operator new(unsigned long) < std::__new_allocator<int>::allocate"
				      "(unsigned long, void const*) < void std::vector<int, std::allocator<int> >"
				      "::_M_realloc_insert<int const&>(__gnu_cxx::__normal_iterator<int*, "
				      "std::vector<int, std::allocator<int> > >, int const&) < fill(int, char "
				      "const*) < main");
	/* The site is the user's fill(), not the allocator's or the vector's. */
	assert_string_equal(locname(slot_at(3)->site), "fill(int, char const*) at /src/maps.cpp:8");
	assert_string_equal(locname(slot_at(6)->site), "fill(int, char const*) at /src/maps.cpp:8");
	assert_int_equal(slot_at(3)->caller, MP_NONE);
	n = mp_analysis_group(&A, MP_VIEW_PEAK, MP_BY_SITE, MP_SORT_BYTES, &rows);
	assert_int_equal(n, 1);
	assert_counts(rows[0].c, 192, 2);
	assert_int_equal(rows[0].caller, MP_NONE);
	free(rows);
}

static void test_cxx_raw_leaf(void **state)
{
	(void)state;
	cxx_program(MP_ANALYSIS_RAW_LEAF);
	assert_string_equal(locname(slot_at(3)->site), "operator new(unsigned long)");
}

/* Grouped by site, a library called from two Python functions gives two rows. */
static void test_group_by_caller(void **state)
{
	struct mp_group_row *rows;
	size_t n;
	(void)state;
	python_stacks(0);
	n = mp_analysis_group(&A, MP_VIEW_LEAKS, MP_BY_SITE, MP_SORT_BYTES, &rows);
	assert_int_equal(n, 4);
	assert_string_equal(fname(rows[0].site), "[python interpreter]");
	assert_counts(rows[0].c, 700, 2);
	assert_string_equal(fname(rows[1].site), "blas_worker");
	assert_string_equal(fname(rows[2].site), "deflateInit2_");
	assert_string_equal(fname(rows[2].caller), "make_compressor");
	assert_string_equal(fname(rows[3].site), "main");
	assert_int_equal(rows[3].caller, MP_NONE);
	free(rows);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cxx_shorten),
		cmocka_unit_test(test_cxx_name_start),
		cmocka_unit_test_teardown(test_python_classes, end),
		cmocka_unit_test_teardown(test_python_folded, end),
		cmocka_unit_test_teardown(test_python_all_frames, end),
		cmocka_unit_test_teardown(test_python_raw_leaf, end),
		cmocka_unit_test_teardown(test_cxx_sites, end),
		cmocka_unit_test_teardown(test_cxx_raw_leaf, end),
		cmocka_unit_test_teardown(test_group_by_caller, end),
	};
	return cmocka_run_group_tests(tests, NULL, NULL) ? 1 : 0;
}
