/*
 * Test fixture for lib/analysis and the reports built on it: feed records
 * to a global analysis A by hand. Include after cmocka.h, in one file per
 * test binary (everything here is static).
 */
#ifndef MEMPROF_TESTS_ANALYSIS_FIXTURE_H
#define MEMPROF_TESTS_ANALYSIS_FIXTURE_H

#include <string.h>

#include "lib/analysis/analysis.h"
#include "lib/format/decode.h"
#include "lib/format/format.h"
#include "lib/util/strbuf.h"
#include "tests/unit/records.h"

#define MALLOC MP_KIND_MALLOC
#define FREE MP_KIND_FREE
#define MMAP MP_KIND_MMAP
#define MUNMAP MP_KIND_MUNMAP

/* Helpers a binary does not use are fine. */
#define FIXTURE static __attribute__((unused))

FIXTURE struct mp_analysis A;
FIXTURE uint64_t nstrings; /* STRING ids given so far */
/* The header's executable path in the next begin(); NULL: none. */
FIXTURE const char *fixture_exe;

/* A capture of pid 100, run, with these header flags and sampling interval (0: exact). */
FIXTURE void begin_header(const struct mp_analysis_opts *o, uint64_t flags, uint64_t sampling_interval)
{
	struct mp_header h = { 0 };
	h.exe = (char *)fixture_exe;
	h.major = 1;
	h.pid = 100;
	h.main_tid = 100;
	h.mode = MP_MODE_RUN;
	h.flags = flags;
	h.sampling_interval = sampling_interval;
	nstrings = 0;
	mp_analysis_init(&A, o);
	mp_analysis_header(&A, &h);
}

FIXTURE void begin_opts(const struct mp_analysis_opts *o)
{
	begin_header(o, 0, 0);
}

FIXTURE void begin(unsigned flags, uint64_t threshold)
{
	struct mp_analysis_opts o = MP_ANALYSIS_OPTS_INIT;
	o.flags = flags;
	o.temporary_threshold = threshold;
	begin_opts(&o);
}

FIXTURE int end(void **state)
{
	(void)state;
	mp_analysis_release(&A);
	return 0;
}

FIXTURE void feed(const struct mp_record *r)
{
	mp_analysis_record(&A, r);
}

FIXTURE void ev_alloc(uint32_t th, unsigned kind, uint64_t addr, uint64_t size, uint64_t stack)
{
	struct mp_record r = rec_alloc(th, kind, addr, size, stack);
	feed(&r);
}

FIXTURE void ev_free(uint32_t th, unsigned kind, uint64_t addr)
{
	struct mp_record r = rec_free(th, kind, addr);
	feed(&r);
}

FIXTURE void ev_range(uint32_t th, unsigned kind, uint64_t addr, uint64_t size)
{
	struct mp_record r = rec_free_range(th, kind, addr, size);
	feed(&r);
}

FIXTURE uint32_t trace(uint64_t parent, uint64_t ip)
{
	struct mp_record r = rec_trace(A.ntraces + 1, parent, ip);
	feed(&r);
	return (uint32_t)A.ntraces;
}

FIXTURE void tick(uint64_t time_us, uint64_t rss)
{
	struct mp_record r = rec_tick(time_us, rss);
	feed(&r);
}

FIXTURE void thread_rec(uint32_t index, uint64_t tid, const char *name)
{
	struct mp_record r = rec_thread(index, tid, name);
	feed(&r);
}

FIXTURE uint64_t string(const char *s)
{
	struct mp_record r = rec_string(++nstrings, s);
	feed(&r);
	return nstrings;
}

FIXTURE void module(uint64_t id, uint64_t base, const char *path, uint64_t vaddr, uint64_t memsz)
{
	struct mp_segment seg = { vaddr, memsz, 5 };
	struct mp_record r = rec_module(id, base, path, &seg);
	feed(&r);
}

FIXTURE void symbol(uint64_t ip, uint64_t mod, uint64_t offset, size_t n, const struct mp_frame *f)
{
	struct mp_record r = rec_symbol(ip, mod, offset, n, f);
	feed(&r);
}

FIXTURE const struct mp_slot *slot_of(uint32_t stack, uint32_t thread, uint32_t kind)
{
	for (size_t i = 0; i < A.nslots; i++)
		if (A.slots[i].stack == stack && A.slots[i].thread == thread &&
		    A.slots[i].kind == kind)
			return &A.slots[i];
	fail_msg("no slot for stack %u thread %u kind %u", stack, thread, kind);
	return NULL;
}

#define M MP_THREAD_MERGED

FIXTURE void assert_counts(struct mp_counts c, uint64_t bytes, uint64_t count)
{
	assert_int_equal(c.bytes, bytes);
	assert_int_equal(c.count, count);
}

/* The name of a location, "function at file:line". */
FIXTURE const char *locname(uint32_t loc)
{
	static struct strbuf sb = STRBUF_INIT;
	strbuf_reset(&sb);
	mp_location_format(&A, loc, MP_LOC_STYLE_AT, &sb);
	return sb.buf;
}

enum { CXX_MAPS = 1, CXX_STDCXX };

/*
 * A C++ program (executable /src/maps) in which main:15 and main:17 call
 * fill(), whose vector grows through inlined std:: code and operator new:
 * stacks 3 (64 B) and 6 (128 B), each 5 frames, fill's 3 from one ip.
 */
FIXTURE void cxx_program(unsigned flags)
{
	uint64_t s_main, s_src, s_fill, s_alloc, s_alloc_h, s_grow, s_tcc, s_new;
	fixture_exe = "/src/maps";
	begin(flags, 1);
	fixture_exe = NULL;
	s_main = string("main");
	s_src = string("/src/maps.cpp");
	s_fill = string("fill(int, char const*)");
	s_alloc = string("std::__new_allocator<int>::allocate(unsigned long, void const*)");
	s_alloc_h = string("/usr/include/c++/12/bits/new_allocator.h");
	s_grow = string("void std::vector<int, std::allocator<int> >::_M_realloc_insert<int const&>"
			"(__gnu_cxx::__normal_iterator<int*, std::vector<int, std::allocator<int> > >, "
			"int const&)");
	s_tcc = string("/usr/include/c++/12/bits/vector.tcc");
	s_new = string("operator new(unsigned long)");
	{
		struct mp_frame f15[] = { { s_main, s_src, 15, 1 } }, f17[] = { { s_main, s_src, 17, 1 } };
		struct mp_frame f_fill[] = { { s_alloc, s_alloc_h, 137, 3 }, { s_grow, s_tcc, 440, 5 },
					     { s_fill, s_src, 8, 7 } };
		struct mp_frame f_new[] = { { s_new, 0, 0, 0 } };
		module(CXX_MAPS, 0x400000, "/src/maps", 0x1000, 0x10000);
		module(CXX_STDCXX, 0x7f0000000000, "/usr/lib/x86_64-linux-gnu/libstdc++.so.6", 0, 0x100000);
		symbol(0x401000, CXX_MAPS, 0x1000, 1, f15);
		symbol(0x401010, CXX_MAPS, 0x1010, 1, f17);
		symbol(0x401100, CXX_MAPS, 0x1100, 3, f_fill);
		symbol(0x7f0000001000, CXX_STDCXX, 0x1000, 1, f_new);
	}
	trace(0, 0x401000);               /* 1 main:15 */
	trace(1, 0x401100);               /* 2 fill */
	trace(2, 0x7f0000001000);         /* 3 operator new */
	trace(0, 0x401010);               /* 4 main:17 */
	trace(4, 0x401100);               /* 5 fill */
	trace(5, 0x7f0000001000);         /* 6 operator new */
	ev_alloc(0, MALLOC, 0x10, 64, 3);
	ev_alloc(0, MALLOC, 0x20, 128, 6);
	mp_analysis_finish(&A);
}

#endif
