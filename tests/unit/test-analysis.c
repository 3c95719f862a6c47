/* Unit tests for lib/analysis: hand-built event streams with hand-computed answers. */
#include <config.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/analysis/analysis.h"
#include "lib/analysis/calltree.h"
#include "lib/format/decode.h"
#include "lib/format/format.h"
#include "lib/format/writer.h"
#include "lib/util/strbuf.h"

#include "tests/unit/analysis-fixture.h"

/* ---- peak and leaks ----------------------------------------------------- */

static void test_peak_and_leaks(void **state)
{
	(void)state;
	begin(0, 1);
	trace(0, 0x1000);       /* stack 1 */
	trace(1, 0x2000);       /* stack 2 */
	tick(10000, 4096);
	ev_alloc(0, MALLOC, 0x10, 100, 1);  /* heap 100 */
	ev_alloc(0, MALLOC, 0x20, 200, 2);  /* heap 300: the peak */
	tick(20000, 8192);
	ev_free(0, FREE, 0x10);             /* 200 */
	ev_alloc(0, MALLOC, 0x30, 50, 1);   /* 250 */
	ev_free(0, FREE, 0x20);             /* 50 */
	ev_alloc(0, MALLOC, 0x40, 240, 2);  /* 290: below the peak */
	mp_analysis_finish(&A);

	assert_int_equal(A.totals.peak_bytes, 300);
	assert_int_equal(A.totals.peak_count, 2);
	assert_int_equal(A.totals.peak_time_us, 10000);
	assert_int_equal(A.totals.peak_event, 2);
	assert_counts(slot_of(1, M, MALLOC)->peak, 100, 1);
	assert_counts(slot_of(2, M, MALLOC)->peak, 200, 1);
	assert_counts(slot_of(1, M, MALLOC)->leaked, 50, 1);
	assert_counts(slot_of(2, M, MALLOC)->leaked, 240, 1);
	assert_counts(slot_of(1, M, MALLOC)->allocated, 150, 2);
	assert_counts(slot_of(2, M, MALLOC)->allocated, 440, 2);
	assert_int_equal(A.totals.leaked_bytes, 290);
	assert_int_equal(A.totals.leaked_count, 2);
	assert_int_equal(A.totals.n_allocs, 4);
	assert_int_equal(A.totals.bytes_allocated, 590);
	assert_int_equal(A.totals.n_frees, 2);
	assert_int_equal(A.totals.n_unknown_frees, 0);
	assert_counts(mp_analysis_view_total(&A, MP_VIEW_PEAK), 300, 2);
	assert_counts(mp_analysis_view_total(&A, MP_VIEW_LEAKS), 290, 2);
}

/* The heap reaches the same maximum twice: the first moment is the peak. */
static void test_peak_reached_twice(void **state)
{
	(void)state;
	begin(0, 1);
	trace(0, 0x1000);
	trace(0, 0x2000);
	ev_alloc(0, MALLOC, 0x10, 300, 1);  /* 300: the peak */
	ev_free(0, FREE, 0x10);
	ev_alloc(0, MALLOC, 0x20, 100, 2);
	ev_alloc(0, MALLOC, 0x30, 200, 2);  /* 300 again */
	ev_free(0, FREE, 0x20);
	ev_free(0, FREE, 0x30);
	ev_alloc(0, MALLOC, 0x40, 299, 1);  /* below */
	mp_analysis_finish(&A);
	assert_int_equal(A.totals.peak_bytes, 300);
	assert_int_equal(A.totals.peak_event, 1);
	assert_counts(slot_of(1, M, MALLOC)->peak, 300, 1);
	assert_counts(slot_of(2, M, MALLOC)->peak, 0, 0);
	assert_counts(slot_of(1, M, MALLOC)->leaked, 299, 1);
}

/* A stack changed several times after the peak keeps its value at the peak. */
static void test_peak_saved_once(void **state)
{
	(void)state;
	begin(0, 1);
	trace(0, 0x1000);
	trace(0, 0x2000);
	ev_alloc(0, MALLOC, 0x10, 10, 1);
	ev_alloc(0, MALLOC, 0x20, 20, 1);
	ev_alloc(0, MALLOC, 0x30, 1000, 2); /* peak 1030 */
	ev_free(0, FREE, 0x10);
	ev_alloc(0, MALLOC, 0x50, 5, 1);
	ev_free(0, FREE, 0x20);
	ev_free(0, FREE, 0x30);
	ev_alloc(0, MALLOC, 0x60, 1, 2);
	ev_alloc(0, MALLOC, 0x70, 1, 1);
	mp_analysis_finish(&A);
	assert_int_equal(A.totals.peak_bytes, 1030);
	assert_counts(slot_of(1, M, MALLOC)->peak, 30, 2);
	assert_counts(slot_of(2, M, MALLOC)->peak, 1000, 1);
	assert_counts(slot_of(1, M, MALLOC)->leaked, 6, 2);
	assert_counts(slot_of(2, M, MALLOC)->leaked, 1, 1);
}

static void test_unknown_frees(void **state)
{
	(void)state;
	begin(0, 1);
	trace(0, 0x1000);
	ev_free(0, FREE, 0x999);            /* never allocated */
	ev_alloc(0, MALLOC, 0x10, 8, 1);
	ev_free(0, FREE, 0x10);
	ev_free(0, FREE, 0x10);             /* twice */
	ev_free(0, FREE, 0);                /* free(NULL) */
	ev_range(0, MUNMAP, 0x100000, 4096); /* nothing mapped there */
	mp_analysis_finish(&A);
	assert_int_equal(A.totals.n_frees, 1);
	assert_int_equal(A.totals.n_unknown_frees, 3);
	assert_int_equal(A.totals.n_null_frees, 1);
	assert_int_equal(A.totals.leaked_bytes, 0);
	assert_int_equal(A.totals.peak_bytes, 8);
}

/* Two threads interleaved; names and tids from THREAD records; split slots. */
static void test_threads(void **state)
{
	(void)state;
	begin(MP_ANALYSIS_SPLIT_THREADS, 1);
	thread_rec(0, 100, "main");
	trace(0, 0x1000);
	ev_alloc(0, MALLOC, 0x10, 10, 1);
	thread_rec(1, 101, "worker");
	ev_alloc(1, MALLOC, 0x20, 20, 1);
	ev_alloc(0, MALLOC, 0x30, 30, 1);
	ev_free(1, FREE, 0x10);             /* freed by another thread */
	ev_alloc(1, MP_KIND_CALLOC, 0x40, 40, 1);
	/* Index 1 is reused by a new thread; the old one's totals stay. */
	thread_rec(1, 102, "worker2");
	ev_alloc(1, MALLOC, 0x50, 50, 1);
	thread_rec(1, 102, "renamed");      /* same tid: a rename */
	mp_analysis_finish(&A);

	assert_int_equal(A.nthreads, 3);
	assert_int_equal(A.threads[0].tid, 100);
	assert_string_equal(mp_analysis_string(&A, A.threads[0].name), "main");
	assert_int_equal(A.threads[1].tid, 101);
	assert_int_equal(A.threads[2].tid, 102);
	assert_string_equal(mp_analysis_string(&A, A.threads[2].name), "renamed");
	assert_int_equal(A.threads[0].n_allocs, 2);
	assert_int_equal(A.threads[0].bytes_allocated, 40);
	assert_int_equal(A.threads[0].n_frees, 0);
	assert_int_equal(A.threads[1].n_allocs, 2);
	assert_int_equal(A.threads[1].n_frees, 1);
	assert_counts(A.threads[0].live, 30, 1);     /* 0x10 was freed by thread 1 */
	assert_counts(A.threads[1].live, 60, 2);
	assert_counts(A.threads[2].live, 50, 1);
	assert_counts(slot_of(1, 0, MALLOC)->allocated, 40, 2);
	assert_counts(slot_of(1, 1, MALLOC)->allocated, 20, 1);
	assert_counts(slot_of(1, 1, MP_KIND_CALLOC)->allocated, 40, 1);
	assert_counts(slot_of(1, 2, MALLOC)->leaked, 50, 1);
	assert_counts(slot_of(1, 0, MALLOC)->peak, 30, 1);
	{
		struct strbuf sb = STRBUF_INIT;
		mp_analysis_thread_label(&A, 1, &sb);
		assert_string_equal(sb.buf, "101 (worker)");
		strbuf_reset(&sb);
		mp_analysis_thread_label(&A, M, &sb);
		assert_string_equal(sb.buf, "merged thread");
		strbuf_release(&sb);
	}
}

/* realloc is a free plus an allocation, both of kind realloc. */
static void test_realloc_chain(void **state)
{
	(void)state;
	begin(0, 0);
	trace(0, 0x1000);
	ev_alloc(0, MALLOC, 0x10, 10, 1);
	ev_free(0, MP_KIND_REALLOC, 0x10);
	ev_alloc(0, MP_KIND_REALLOC, 0x20, 20, 1);
	ev_free(0, MP_KIND_REALLOC, 0x20);
	ev_alloc(0, MP_KIND_REALLOC, 0x30, 30, 1);
	mp_analysis_finish(&A);
	assert_int_equal(A.totals.n_allocs, 3);
	assert_int_equal(A.totals.bytes_allocated, 60);
	assert_int_equal(A.totals.n_frees, 2);
	assert_int_equal(A.totals.peak_bytes, 30);
	assert_counts(slot_of(1, M, MP_KIND_REALLOC)->leaked, 30, 1);
	assert_counts(slot_of(1, M, MALLOC)->leaked, 0, 0);
	/* Each block was reallocated before the thread's next allocation. */
	assert_int_equal(A.totals.temporary_count, 2);
	assert_int_equal(A.totals.temporary_bytes, 30);
	assert_counts(slot_of(1, M, MALLOC)->temporary, 10, 1);
	assert_counts(slot_of(1, M, MP_KIND_REALLOC)->temporary, 20, 1);
	assert_int_equal(A.nkinds, 2);
	assert_int_equal(A.kinds[0].kind, MALLOC);
	assert_int_equal(A.kinds[0].n_allocs, 1);
	assert_int_equal(A.kinds[1].kind, MP_KIND_REALLOC);
	assert_int_equal(A.kinds[1].n_allocs, 2);
	assert_int_equal(A.kinds[1].bytes_allocated, 50);
	assert_int_equal(A.kinds[1].n_frees, 2);
}

/* ---- mappings ----------------------------------------------------------- */

static void test_munmap_pieces(void **state)
{
	(void)state;
	begin(0, 1);
	trace(0, 0x1000);
	ev_alloc(0, MMAP, 0x100000, 0x10000, 1);       /* 64 KiB */
	ev_range(0, MUNMAP, 0x100000, 0x1000);        /* head: 60 KiB */
	assert_int_equal(A.slots[0].leaked.bytes, 0xf000);
	ev_range(0, MUNMAP, 0x10f000, 0x1000);        /* tail: 56 KiB */
	assert_int_equal(A.slots[0].leaked.bytes, 0xe000);
	ev_range(0, MUNMAP, 0x104000, 0x2000);        /* a hole: 48 KiB in two pieces */
	assert_int_equal(A.slots[0].leaked.bytes, 0xc000);
	assert_int_equal(A.slots[0].leaked.count, 1);
	ev_range(0, MUNMAP, 0x101000, 0xe000);        /* both pieces at once */
	assert_counts(A.slots[0].leaked, 0, 0);
	ev_range(0, MUNMAP, 0x101000, 0x1000);        /* nothing left there */
	mp_analysis_finish(&A);
	assert_int_equal(A.totals.n_frees, 4);
	assert_int_equal(A.totals.n_unknown_frees, 1);
	assert_int_equal(A.totals.peak_bytes, 0x10000);
	assert_counts(slot_of(1, M, MMAP)->peak, 0x10000, 1);
	assert_int_equal(A.totals.leaked_bytes, 0);
	/* Freed after no other allocation: temporary, with its whole size. */
	assert_counts(slot_of(1, M, MMAP)->temporary, 0x10000, 1);
}

static void test_munmap_two_mappings(void **state)
{
	(void)state;
	begin(0, 1);
	trace(0, 0x1000);
	trace(0, 0x2000);
	ev_alloc(0, MMAP, 0x200000, 0x2000, 1);
	ev_alloc(0, MMAP, 0x202000, 0x2000, 2);
	ev_range(0, MUNMAP, 0x201000, 0x2000);        /* the tail of one, the head of the other */
	mp_analysis_finish(&A);
	assert_int_equal(A.totals.n_frees, 1);
	assert_counts(slot_of(1, M, MMAP)->leaked, 0x1000, 1);
	assert_counts(slot_of(2, M, MMAP)->leaked, 0x1000, 1);
	assert_int_equal(A.totals.leaked_bytes, 0x2000);
	assert_int_equal(A.totals.leaked_count, 2);
	assert_int_equal(A.totals.peak_bytes, 0x4000);
}

static void test_mremap_and_fixed(void **state)
{
	(void)state;
	begin(0, 1);
	trace(0, 0x1000);
	trace(0, 0x2000);
	trace(0, 0x3000);
	ev_alloc(0, MMAP, 0x300000, 0x2000, 1);
	ev_range(0, MP_KIND_MREMAP, 0x300000, 0x2000);
	ev_alloc(0, MP_KIND_MREMAP, 0x400000, 0x4000, 2);
	/* MAP_FIXED over part of it: that part is replaced, not freed. */
	ev_alloc(0, MMAP, 0x401000, 0x1000, 3);
	mp_analysis_finish(&A);
	assert_counts(slot_of(1, M, MMAP)->leaked, 0, 0);
	assert_counts(slot_of(2, M, MP_KIND_MREMAP)->leaked, 0x3000, 1);
	assert_counts(slot_of(3, M, MMAP)->leaked, 0x1000, 1);
	assert_int_equal(A.totals.n_frees, 1);
	assert_int_equal(A.totals.peak_bytes, 0x4000);
	assert_int_equal(A.totals.leaked_bytes, 0x4000);
	assert_int_equal(mp_analysis_kind(&A, MP_KIND_MREMAP)->n_frees, 1);
}

static void test_no_mmap(void **state)
{
	(void)state;
	begin(MP_ANALYSIS_NO_MMAP, 1);
	trace(0, 0x1000);
	ev_alloc(0, MMAP, 0x100000, 0x10000, 1);
	ev_alloc(0, MALLOC, 0x10, 100, 1);
	ev_range(0, MUNMAP, 0x100000, 0x10000);
	mp_analysis_finish(&A);
	assert_int_equal(A.totals.n_allocs, 1);
	assert_int_equal(A.totals.bytes_allocated, 100);
	assert_int_equal(A.totals.peak_bytes, 100);
	assert_int_equal(A.totals.n_ignored, 2);
	assert_int_equal(A.totals.n_unknown_frees, 0);
	assert_int_equal(A.nkinds, 1);
}

/* A second allocation at a live address implies the free that was not seen. */
static void test_address_reuse(void **state)
{
	(void)state;
	begin(0, 1);
	trace(0, 0x1000);
	ev_alloc(0, MALLOC, 0x10, 100, 1);
	ev_alloc(0, MALLOC, 0x10, 30, 1);
	mp_analysis_finish(&A);
	assert_int_equal(A.totals.peak_bytes, 100);
	assert_counts(slot_of(1, M, MALLOC)->leaked, 30, 1);
	assert_int_equal(A.totals.n_frees, 0);
	assert_int_equal(A.totals.temporary_count, 0);
}

/* ---- temporary allocations ---------------------------------------------- */

static void run_temporary(uint64_t threshold)
{
	begin(0, threshold);
	thread_rec(0, 100, "main");
	thread_rec(1, 101, "other");
	trace(0, 0x1000);
	trace(0, 0x2000);
	trace(0, 0x3000);
	ev_alloc(0, MALLOC, 0x10, 1, 1);    /* a1 */
	ev_alloc(1, MALLOC, 0x80, 1000, 1); /* another thread's: does not count */
	ev_alloc(0, MALLOC, 0x20, 2, 2);    /* a2 */
	ev_alloc(0, MALLOC, 0x30, 4, 3);    /* a3 */
	ev_free(0, FREE, 0x30);             /* a3: 0 others in between */
	ev_free(0, FREE, 0x20);             /* a2: 1 (a3) */
	ev_free(0, FREE, 0x10);             /* a1: 2 (a2, a3) */
	ev_free(0, FREE, 0x80);             /* made by thread 1: never temporary here */
	mp_analysis_finish(&A);
}

static void test_temporary_thresholds(void **state)
{
	(void)state;
	run_temporary(0);
	assert_int_equal(A.totals.temporary_count, 1);
	assert_int_equal(A.totals.temporary_bytes, 4);
	assert_counts(slot_of(3, M, MALLOC)->temporary, 4, 1);
	mp_analysis_release(&A);

	run_temporary(1);
	assert_int_equal(A.totals.temporary_count, 2);
	assert_int_equal(A.totals.temporary_bytes, 6);
	assert_counts(slot_of(2, M, MALLOC)->temporary, 2, 1);
	assert_counts(slot_of(1, M, MALLOC)->temporary, 0, 0);
	mp_analysis_release(&A);

	run_temporary(2);
	assert_int_equal(A.totals.temporary_count, 3);
	assert_int_equal(A.totals.temporary_bytes, 7);
	assert_counts(slot_of(1, M, MALLOC)->temporary, 1, 1);
}

/* ---- totals ------------------------------------------------------------- */

static void test_histogram(void **state)
{
	static const uint64_t sizes[] = { 0, 1, 2, 3, 4, 1023, 1024, (uint64_t)1 << 63 };
	(void)state;
	begin(0, 1);
	trace(0, 0x1000);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		ev_alloc(0, MALLOC, 0x100 * (i + 1), sizes[i], 1);
		ev_free(0, FREE, 0x100 * (i + 1));
	}
	mp_analysis_finish(&A);
	assert_int_equal(A.totals.hist[0], 1);
	assert_int_equal(A.totals.hist[1], 1);
	assert_int_equal(A.totals.hist[2], 2);
	assert_int_equal(A.totals.hist[3], 1);
	assert_int_equal(A.totals.hist[10], 1);
	assert_int_equal(A.totals.hist[11], 1);
	assert_int_equal(A.totals.hist[64], 1);
	assert_int_equal(A.totals.hist[4], 0);
	assert_int_equal(A.totals.min_size, 0);
	assert_int_equal(A.totals.max_size, (uint64_t)1 << 63);
	assert_int_equal(mp_hist_bucket_min(0), 0);
	assert_int_equal(mp_hist_bucket_max(0), 0);
	assert_int_equal(mp_hist_bucket_min(2), 2);
	assert_int_equal(mp_hist_bucket_max(2), 3);
	assert_int_equal(mp_hist_bucket_min(11), 1024);
	assert_int_equal(mp_hist_bucket_max(11), 2047);
	assert_int_equal(mp_hist_bucket_max(64), UINT64_MAX);
}

static void test_empty(void **state)
{
	(void)state;
	begin(0, 1);
	mp_analysis_finish(&A);
	assert_int_equal(A.nslots, 0);
	assert_int_equal(A.totals.n_allocs, 0);
	assert_int_equal(A.totals.peak_bytes, 0);
	assert_int_equal(A.totals.peak_event, 0);
	assert_int_equal(A.nsamples, 0);
	assert_false(A.trailer.present);
	assert_int_equal(A.nlocs, 1);
	assert_string_equal(locname(0), "<unknown stack>");
}

/* ---- locations ---------------------------------------------------------- */

/*
 * A program and libc: main (a.c:10) -> helper (a.c:20, inlined into main at
 * a.c:11) -> strdup (libc) -> malloc (libc).
 */
static void symbolized_program(void)
{
	uint64_t s_main = string("main"), s_a = string("/src/a.c"), s_helper = string("helper");
	uint64_t s_strdup = string("strdup"), s_malloc = string("malloc");
	struct mp_frame f_main[] = { { s_main, s_a, 10, 1 } };
	struct mp_frame f_inl[] = { { s_helper, s_a, 20, 3 }, { s_main, s_a, 11, 5 } };
	struct mp_frame f_strdup[] = { { s_strdup, 0, 0, 0 } };
	struct mp_frame f_malloc[] = { { s_malloc, 0, 0, 0 } };
	module(1, 0x400000, "/usr/bin/prog", 0x1000, 0x1000);
	module(2, 0x7f0000000000, "/lib/x86_64-linux-gnu/libc.so.6", 0x28000, 0x100000);
	symbol(0x401010, 1, 0x1010, 1, f_main);
	symbol(0x401020, 1, 0x1020, 2, f_inl);
	symbol(0x7f0000030000, 2, 0x30000, 1, f_strdup);
	symbol(0x7f0000040000, 2, 0x40000, 1, f_malloc);
}

static void test_sites(void **state)
{
	uint32_t *buf = NULL;
	size_t alloc = 0, n;
	(void)state;
	begin(0, 1);
	symbolized_program();
	trace(0, 0x401010);                 /* 1: main */
	trace(1, 0x401020);                 /* 2: main -> helper (inlined) */
	trace(2, 0x7f0000030000);           /* 3: ... -> strdup */
	trace(0, 0x7f0000040000);           /* 4: malloc alone: only runtime frames */
	ev_alloc(0, MALLOC, 0x10, 8, 3);
	ev_alloc(0, MALLOC, 0x20, 16, 4);
	ev_alloc(0, MALLOC, 0x30, 32, 0);
	mp_analysis_finish(&A);

	n = mp_analysis_stack(&A, 3, &buf, &alloc);
	assert_int_equal(n, 4);
	assert_string_equal(locname(buf[0]), "strdup");
	assert_string_equal(locname(buf[1]), "helper at /src/a.c:20");
	assert_string_equal(locname(buf[2]), "main at /src/a.c:11");
	assert_string_equal(locname(buf[3]), "main at /src/a.c:10");
	assert_true(A.locs[buf[0]].flags & MP_LOC_RUNTIME);
	assert_false(A.locs[buf[1]].flags & MP_LOC_RUNTIME);
	free(buf);
	/* strdup is attributed to its caller, the inlined helper. */
	assert_string_equal(locname(slot_of(3, M, MALLOC)->site), "helper at /src/a.c:20");
	assert_string_equal(mp_location_module(&A, slot_of(3, M, MALLOC)->site), "/usr/bin/prog");
	/* Nothing but runtime frames: the innermost. */
	assert_string_equal(locname(slot_of(4, M, MALLOC)->site), "malloc");
	assert_string_equal(mp_location_module(&A, slot_of(4, M, MALLOC)->site),
			    "/lib/x86_64-linux-gnu/libc.so.6");
	assert_string_equal(locname(slot_of(0, M, MALLOC)->site), "<unknown stack>");
	{
		struct strbuf sb = STRBUF_INIT;
		mp_location_format(&A, slot_of(3, M, MALLOC)->site, MP_LOC_STYLE_COLON, &sb);
		assert_string_equal(sb.buf, "helper:/src/a.c:20");
		strbuf_reset(&sb);
		mp_location_format(&A, slot_of(3, M, MALLOC)->site, MP_LOC_STYLE_AT_FILE, &sb);
		assert_string_equal(sb.buf, "helper at /src/a.c");
		strbuf_release(&sb);
	}
}

static void test_unsymbolized(void **state)
{
	const uint32_t *locs;
	(void)state;
	begin(0, 1);
	module(7, 0x7f0000000000, "/usr/lib/libfoo.so.1", 0x1000, 0x2000);
	trace(0, 0x7f0000001234);           /* in libfoo */
	trace(1, 0x12345);                  /* in no module */
	trace(0, MP_IP_TRUNCATED);          /* the cut of a deep stack */
	trace(3, 0x7f0000005000);           /* past libfoo's segment */
	mp_analysis_finish(&A);
	assert_int_equal(mp_analysis_node_frames(&A, 1, &locs), 1);
	assert_string_equal(locname(locs[0]), "libfoo.so.1+0x1234");
	assert_true(A.locs[locs[0]].flags & MP_LOC_UNSYMBOLIZED);
	assert_string_equal(mp_location_module(&A, locs[0]), "/usr/lib/libfoo.so.1");
	mp_analysis_node_frames(&A, 2, &locs);
	assert_string_equal(locname(locs[0]), "0x12345");
	assert_string_equal(mp_location_module(&A, locs[0]), "<unknown>");
	mp_analysis_node_frames(&A, 3, &locs);
	assert_string_equal(locname(locs[0]), "<stack truncated>");
	assert_true(A.locs[locs[0]].flags & MP_LOC_TRUNCATED);
	mp_analysis_node_frames(&A, 4, &locs);
	assert_string_equal(locname(locs[0]), "0x7f0000005000");
}

/* A module unloaded and another loaded at its address: old stacks keep their names. */
static void test_module_reuse(void **state)
{
	const uint32_t *locs;
	struct mp_record r = { .type = MP_REC_MODULE_UNLOAD };
	(void)state;
	begin(0, 1);
	module(1, 0x7f0000000000, "/usr/lib/liba.so", 0, 0x10000);
	trace(0, 0x7f0000000100);
	r.u.unload.id = 1;
	feed(&r);
	module(2, 0x7f0000000000, "/usr/lib/libb.so", 0, 0x10000);
	trace(0, 0x7f0000000100);
	mp_analysis_finish(&A);
	mp_analysis_node_frames(&A, 1, &locs);
	assert_string_equal(locname(locs[0]), "liba.so+0x100");
	mp_analysis_node_frames(&A, 2, &locs);
	assert_string_equal(locname(locs[0]), "libb.so+0x100");
}

/* The format lets a SYMBOL record follow the TRACE records using its ip (memprof run does). */
static void test_symbol_after_trace(void **state)
{
	const uint32_t *locs;
	uint64_t s_fn, s_file;
	(void)state;
	begin(0, 1);
	module(1, 0x400000, "/usr/bin/prog", 0x1000, 0x1000);
	trace(0, 0x401010);                 /* 1: its symbol comes next */
	trace(1, 0x401020);                 /* 2: never symbolized */
	s_fn = string("late");
	s_file = string("/src/late.c");
	symbol(0x401010, 1, 0x1010, 1, (struct mp_frame[]){ { s_fn, s_file, 5, 0 } });
	trace(1, 0x401010);                 /* 3: the same ip again */
	mp_analysis_finish(&A);
	assert_int_equal(mp_analysis_node_frames(&A, 1, &locs), 1);
	assert_string_equal(locname(locs[0]), "late at /src/late.c:5");
	mp_analysis_node_frames(&A, 3, &locs);
	assert_string_equal(locname(locs[0]), "late at /src/late.c:5");
	mp_analysis_node_frames(&A, 2, &locs);
	assert_string_equal(locname(locs[0]), "prog+0x1020");
}

static int hook_calls;

static size_t fake_symbolizer(void *ctx, const struct mp_module *mod, uint64_t ip,
			      uint64_t offset, struct mp_sym_frame *out, size_t max)
{
	(void)ctx;
	(void)max;
	hook_calls++;
	if (ip != 0x7f0000001234)
		return 0;
	assert_non_null(mod);
	assert_int_equal(offset, 0x1234);
	out[0] = (struct mp_sym_frame){ "inlined_fn", "/src/foo.h", 7, 1 };
	out[1] = (struct mp_sym_frame){ "foo_alloc", "/src/foo.c", 42, 3 };
	return 2;
}

static void test_symbolize_hook(void **state)
{
	struct mp_analysis_opts o = MP_ANALYSIS_OPTS_INIT;
	const uint32_t *locs;
	(void)state;
	o.symbolize = fake_symbolizer;
	hook_calls = 0;
	begin_opts(&o);
	module(7, 0x7f0000000000, "/usr/lib/libfoo.so.1", 0x1000, 0x2000);
	trace(0, 0x7f0000001234);
	trace(1, 0x7f0000001234);           /* the same ip again: no second call */
	trace(0, 0x7f0000001300);
	mp_analysis_finish(&A);
	assert_int_equal(hook_calls, 2);
	assert_int_equal(mp_analysis_node_frames(&A, 2, &locs), 2);
	assert_string_equal(locname(locs[0]), "inlined_fn at /src/foo.h:7");
	assert_string_equal(locname(locs[1]), "foo_alloc at /src/foo.c:42");
	assert_int_equal(mp_analysis_node_frames(&A, 3, &locs), 1);
	assert_string_equal(locname(locs[0]), "libfoo.so.1+0x1300");
}

/* ---- aggregations and trees --------------------------------------------- */

/* main (a.c:10) -> f (a.c:20) -> g (a.c:30), and main -> g. */
static void tree_program(unsigned flags)
{
	uint64_t s_main, s_a, s_f, s_g;
	begin(flags, 1);
	s_main = string("main");
	s_a = string("/src/a.c");
	s_f = string("f");
	s_g = string("g");
	module(1, 0x400000, "/usr/bin/prog", 0x1000, 0x1000);
	symbol(0x401000, 1, 0x1000, 1, (struct mp_frame[]){ { s_main, s_a, 10, 0 } });
	symbol(0x401100, 1, 0x1100, 1, (struct mp_frame[]){ { s_f, s_a, 20, 0 } });
	symbol(0x401200, 1, 0x1200, 1, (struct mp_frame[]){ { s_g, s_a, 30, 0 } });
	trace(0, 0x401000);                 /* 1 main */
	trace(1, 0x401100);                 /* 2 main -> f */
	trace(1, 0x401200);                 /* 3 main -> g */
	trace(2, 0x401200);                 /* 4 main -> f -> g */
	thread_rec(0, 100, "main");
	thread_rec(1, 101, "worker");
	ev_alloc(0, MALLOC, 0x10, 100, 2);
	ev_alloc(0, MALLOC, 0x20, 200, 3);
	ev_alloc(1, MALLOC, 0x30, 50, 4);
	ev_alloc(1, MALLOC, 0x40, 7, 2);
	mp_analysis_finish(&A);
}

static uint32_t find_child(const struct mp_calltree *t, uint32_t parent, const char *name)
{
	for (uint32_t c = t->nodes[parent].first_child; c != MP_NONE; c = t->nodes[c].next_sibling)
		if (!strcmp(locname(t->nodes[c].location), name))
			return c;
	fail_msg("no child '%s'", name);
	return MP_NONE;
}

static void test_calltree(void **state)
{
	struct mp_calltree t;
	uint32_t main_, f, g, fg;
	(void)state;
	tree_program(0);
	mp_calltree_init(&t, &A, 0);
	mp_calltree_add_view(&t, MP_VIEW_LEAKS);
	mp_calltree_finish(&t);
	assert_counts(t.nodes[0].total, 357, 4);
	assert_int_equal(t.nodes[0].nchildren, 1);
	main_ = find_child(&t, 0, "main at /src/a.c:10");
	assert_counts(t.nodes[main_].total, 357, 4);
	assert_counts(t.nodes[main_].self, 0, 0);
	assert_int_equal(t.nodes[main_].nchildren, 2);
	/* Children sorted by size: g (200) before f (157). */
	g = t.nodes[main_].first_child;
	assert_string_equal(locname(t.nodes[g].location), "g at /src/a.c:30");
	assert_counts(t.nodes[g].total, 200, 1);
	assert_counts(t.nodes[g].self, 200, 1);
	f = t.nodes[g].next_sibling;
	assert_counts(t.nodes[f].total, 157, 3);
	assert_counts(t.nodes[f].self, 107, 2);
	fg = find_child(&t, f, "g at /src/a.c:30");
	assert_counts(t.nodes[fg].total, 50, 1);
	assert_int_equal(t.nodes[fg].depth, 3);
	assert_int_equal(t.nodes[fg].nchildren, 0);
	mp_calltree_release(&t);
}

static void test_calltree_inverted(void **state)
{
	struct mp_calltree t;
	uint32_t g, f, gm, gf, gfm;
	(void)state;
	tree_program(0);
	mp_calltree_init(&t, &A, MP_CALLTREE_INVERTED);
	mp_calltree_add_view(&t, MP_VIEW_LEAKS);
	mp_calltree_finish(&t);
	assert_int_equal(t.nodes[0].nchildren, 2);
	g = t.nodes[0].first_child;
	assert_string_equal(locname(t.nodes[g].location), "g at /src/a.c:30");
	assert_counts(t.nodes[g].total, 250, 2);
	gm = find_child(&t, g, "main at /src/a.c:10");
	assert_counts(t.nodes[gm].total, 200, 1);
	gf = find_child(&t, g, "f at /src/a.c:20");
	assert_counts(t.nodes[gf].total, 50, 1);
	gfm = find_child(&t, gf, "main at /src/a.c:10");
	assert_counts(t.nodes[gfm].self, 50, 1);
	f = t.nodes[g].next_sibling;
	assert_string_equal(locname(t.nodes[f].location), "f at /src/a.c:20");
	assert_counts(t.nodes[f].total, 107, 2);
	mp_calltree_release(&t);
}

static void test_calltree_split_threads(void **state)
{
	struct mp_calltree t;
	uint32_t m0, m1;
	(void)state;
	tree_program(MP_ANALYSIS_SPLIT_THREADS);
	mp_calltree_init(&t, &A, MP_CALLTREE_SPLIT_THREADS);
	mp_calltree_add_view(&t, MP_VIEW_LEAKS);
	mp_calltree_finish(&t);
	/* One "main" per thread under the root. */
	assert_int_equal(t.nodes[0].nchildren, 2);
	m0 = t.nodes[0].first_child;
	m1 = t.nodes[m0].next_sibling;
	assert_int_equal(t.nodes[m0].thread, 0);
	assert_counts(t.nodes[m0].total, 300, 2);
	assert_int_equal(t.nodes[m1].thread, 1);
	assert_counts(t.nodes[m1].total, 57, 2);
	assert_string_equal(locname(t.nodes[m1].location), "main at /src/a.c:10");
	mp_calltree_release(&t);
}

static void test_group(void **state)
{
	struct mp_group_row *rows;
	size_t n;
	(void)state;
	tree_program(MP_ANALYSIS_SPLIT_THREADS);
	n = mp_analysis_group(&A, MP_VIEW_ALLOCATED, MP_BY_SITE, MP_SORT_BYTES, &rows);
	assert_int_equal(n, 2);
	assert_string_equal(locname(rows[0].site), "g at /src/a.c:30");
	assert_counts(rows[0].c, 250, 2);
	assert_int_equal(rows[0].kind, MP_NONE);
	assert_string_equal(locname(rows[1].site), "f at /src/a.c:20");
	assert_counts(rows[1].c, 107, 2);
	free(rows);
	n = mp_analysis_group(&A, MP_VIEW_ALLOCATED, MP_BY_SITE | MP_BY_THREAD | MP_BY_KIND,
			      MP_SORT_COUNT, &rows);
	assert_int_equal(n, 4);
	/* Counts tie at 1: bytes decide. */
	assert_counts(rows[0].c, 200, 1);
	assert_int_equal(rows[0].thread, 0);
	assert_int_equal(rows[0].kind, MALLOC);
	assert_counts(rows[3].c, 7, 1);
	assert_int_equal(rows[3].thread, 1);
	free(rows);
	n = mp_analysis_group(&A, MP_VIEW_ALLOCATED, MP_BY_MODULE, MP_SORT_BYTES, &rows);
	assert_int_equal(n, 1);
	assert_string_equal(mp_analysis_string(&A, A.modules[rows[0].module].path), "/usr/bin/prog");
	assert_counts(rows[0].c, 357, 4);
	free(rows);
	n = mp_analysis_group(&A, MP_VIEW_ALLOCATED, MP_BY_STACK, MP_SORT_BYTES, &rows);
	assert_int_equal(n, 3);
	assert_int_equal(rows[0].stack, 3);
	assert_int_equal(rows[1].stack, 2);
	assert_counts(rows[1].c, 107, 2);
	free(rows);
}

/* ---- time series and temporal intervals --------------------------------- */

static void test_time_series(void **state)
{
	struct mp_analysis_opts o = MP_ANALYSIS_OPTS_INIT;
	(void)state;
	begin_opts(&o);
	trace(0, 0x1000);
	ev_alloc(0, MALLOC, 0x10, 100, 1);
	ev_free(0, FREE, 0x10);
	tick(10, 1000);                     /* heap 0, max 100 */
	ev_alloc(0, MALLOC, 0x20, 50, 1);
	tick(20, 2000);                     /* heap 50, max 50 */
	tick(30, 1500);                     /* heap 50, max 50 */
	ev_alloc(0, MALLOC, 0x30, 500, 1);
	ev_free(0, FREE, 0x30);             /* after the last tick: an end point */
	mp_analysis_finish(&A);
	assert_int_equal(A.nsamples, 4);
	assert_int_equal(A.samples[0].time_us, 10);
	assert_int_equal(A.samples[0].rss, 1000);
	assert_int_equal(A.samples[0].heap, 0);
	assert_int_equal(A.samples[0].heap_max, 100);
	assert_int_equal(A.samples[1].heap, 50);
	assert_int_equal(A.samples[2].rss, 1500);
	assert_int_equal(A.samples[3].time_us, 30);
	assert_int_equal(A.samples[3].rss, 1500);
	assert_int_equal(A.samples[3].heap, 50);
	assert_int_equal(A.samples[3].heap_max, 550);
	assert_int_equal(A.duration_us, 30);
	assert_int_equal(A.n_ticks, 3);
}

static void test_time_series_downsampled(void **state)
{
	struct mp_analysis_opts o = MP_ANALYSIS_OPTS_INIT;
	(void)state;
	o.max_memory_records = 4;
	begin_opts(&o);
	trace(0, 0x1000);
	/* Ten ticks; the heap is i * 10 at tick i, with a spike of 1000 before tick 5. */
	for (uint64_t i = 1; i <= 10; i++) {
		if (i == 5) {
			ev_alloc(0, MALLOC, 0x1000, 1000, 1);
			ev_free(0, FREE, 0x1000);
		}
		ev_alloc(0, MALLOC, 0x10 * i, 10, 1);
		tick(i * 100, i == 3 ? 99999 : i);
	}
	mp_analysis_finish(&A);
	/*
	 * Four points fill up at tick 4 and merge into two of two ticks; the
	 * next two points (ticks 5-6, 7-8) fill up again and merge into ones
	 * of four ticks: [1-4], [5-8]; ticks 9-10 are pending, then the end.
	 */
	assert_int_equal(A.ticks_per_sample, 4);
	assert_int_equal(A.nsamples, 3);
	assert_int_equal(A.samples[0].time_us, 400);
	assert_int_equal(A.samples[0].rss, 99999);
	assert_int_equal(A.samples[0].heap, 40);
	assert_int_equal(A.samples[0].heap_max, 40);
	assert_int_equal(A.samples[1].time_us, 800);
	assert_int_equal(A.samples[1].heap, 80);
	assert_int_equal(A.samples[1].heap_max, 1040);
	assert_int_equal(A.samples[2].time_us, 1000);
	assert_int_equal(A.samples[2].rss, 10);
	assert_int_equal(A.samples[2].heap, 100);
}

static const struct mp_interval *find_interval(uint32_t slot, uint32_t ah, uint32_t fh)
{
	for (size_t i = 0; i < A.nintervals; i++)
		if (A.intervals[i].slot == slot && A.intervals[i].alloc == ah &&
		    A.intervals[i].free == fh)
			return &A.intervals[i];
	fail_msg("no interval (%u, %u) for slot %u", ah, fh, slot);
	return NULL;
}

static uint32_t slot_index(uint64_t stack)
{
	return (uint32_t)(slot_of(stack, M, MALLOC) - A.slots);
}

/* What the intervals say was live at bucket b's high-water mark. */
static uint64_t live_at_hwm(uint32_t b)
{
	uint64_t bytes = 0;
	for (size_t i = 0; i < A.nintervals; i++)
		if (A.intervals[i].alloc <= 2 * b &&
		    (A.intervals[i].free == MP_NONE || A.intervals[i].free > 2 * b))
			bytes += A.intervals[i].c.bytes;
	return bytes;
}

static void test_temporal(void **state)
{
	uint32_t s1, s2;
	(void)state;
	begin(MP_ANALYSIS_TEMPORAL, 1);
	trace(0, 0x1000);
	trace(0, 0x2000);
	ev_alloc(0, MALLOC, 0x10, 10, 1);   /* event 1: half 0, freed in half 5 */
	ev_alloc(0, MALLOC, 0x20, 20, 1);   /* event 2, bucket 0's mark (30): half 0 */
	ev_free(0, FREE, 0x20);             /* after the mark: half 1 */
	tick(100, 1);
	ev_alloc(0, MALLOC, 0x30, 30, 2);   /* half 2, never freed */
	ev_alloc(0, MALLOC, 0x40, 40, 1);   /* bucket 1's mark (80): half 2, freed in 5 */
	tick(200, 1);
	ev_free(0, FREE, 0x10);             /* bucket 2 only falls: its mark is its start */
	ev_free(0, FREE, 0x40);
	ev_alloc(0, MALLOC, 0x50, 5, 1);    /* half 5, never freed */
	mp_analysis_finish(&A);
	s1 = slot_index(1);
	s2 = slot_index(2);
	assert_int_equal(A.nsamples, 3);
	assert_int_equal(A.samples[0].heap_max, 30);
	assert_int_equal(A.samples[1].heap_max, 80);
	assert_int_equal(A.samples[1].hwm_time_us, 100);
	assert_int_equal(A.samples[2].heap_max, 80);
	assert_int_equal(A.samples[2].hwm_time_us, 200);
	assert_int_equal(A.nintervals, 5);
	assert_counts(find_interval(s1, 0, 1)->c, 20, 1);
	assert_counts(find_interval(s1, 0, 5)->c, 10, 1);
	assert_counts(find_interval(s1, 2, 5)->c, 40, 1);
	assert_counts(find_interval(s2, 2, MP_NONE)->c, 30, 1);
	assert_counts(find_interval(s1, 5, MP_NONE)->c, 5, 1);
	for (uint32_t b = 0; b < 3; b++)
		assert_int_equal(live_at_hwm(b), A.samples[b].heap_max);
}

/* A free before a later, higher mark of its bucket is not live at that mark. */
static void test_temporal_mark_moves(void **state)
{
	(void)state;
	begin(MP_ANALYSIS_TEMPORAL, 1);
	trace(0, 0x1000);
	trace(0, 0x2000);
	trace(0, 0x3000);
	ev_alloc(0, MALLOC, 0x10, 100, 1);  /* the mark so far */
	ev_free(0, FREE, 0x10);             /* pending: after that mark */
	ev_alloc(0, MALLOC, 0x20, 50, 2);   /* pending alloc half */
	ev_alloc(0, MALLOC, 0x30, 200, 3);  /* 250: the mark; the free above came before it */
	ev_free(0, FREE, 0x20);             /* after it */
	mp_analysis_finish(&A);
	assert_int_equal(A.nsamples, 1);
	assert_int_equal(A.samples[0].heap_max, 250);
	assert_int_equal(A.nintervals, 2);
	assert_counts(find_interval(slot_index(2), 0, 1)->c, 50, 1);
	assert_counts(find_interval(slot_index(3), 0, MP_NONE)->c, 200, 1);
	assert_int_equal(live_at_hwm(0), 250);
}

/* A mapping unmapped piece by piece: each piece leaves the intervals when it goes. */
static void test_temporal_mapping_pieces(void **state)
{
	uint32_t sm;
	(void)state;
	begin(MP_ANALYSIS_TEMPORAL, 1);
	trace(0, 0x1000);
	trace(0, 0x2000);
	ev_alloc(0, MMAP, 0x10000, 3 * 4096, 1); /* 12288: bucket 0's mark */
	ev_range(0, MUNMAP, 0x11000, 4096);      /* the middle page */
	tick(10, 1);
	ev_alloc(0, MALLOC, 0x20, 100, 2);       /* 8292: bucket 1's mark */
	mp_analysis_finish(&A);
	sm = (uint32_t)(slot_of(1, M, MMAP) - A.slots);
	assert_int_equal(A.nsamples, 2);
	assert_int_equal(A.nintervals, 3);
	assert_counts(find_interval(sm, 0, 1)->c, 4096, 0);
	assert_counts(find_interval(sm, 0, MP_NONE)->c, 8192, 1);
	assert_counts(find_interval(slot_index(2), 2, MP_NONE)->c, 100, 1);
	assert_int_equal(live_at_hwm(0), 12288);
	assert_int_equal(live_at_hwm(1), 8292);
	assert_counts(slot_of(1, M, MMAP)->leaked, 8192, 1);
}

/* Downsampling merges buckets and renumbers the halves. */
static void test_temporal_merged(void **state)
{
	struct mp_analysis_opts o = MP_ANALYSIS_OPTS_INIT;
	(void)state;
	o.flags = MP_ANALYSIS_TEMPORAL;
	o.max_memory_records = 3;           /* rounded down to 2 */
	begin_opts(&o);
	trace(0, 0x1000);
	trace(0, 0x2000);
	ev_alloc(0, MALLOC, 0x10, 100, 1);  /* bucket 0 (mark 100): half 0 */
	tick(10, 1);
	ev_alloc(0, MALLOC, 0x20, 300, 2);  /* bucket 1's mark, 400, the higher one */
	ev_free(0, FREE, 0x10);             /* half 3, then 1 once merged */
	tick(20, 1);
	mp_analysis_finish(&A);
	assert_int_equal(A.ticks_per_sample, 2);
	assert_int_equal(A.nsamples, 1);
	assert_int_equal(A.samples[0].heap_max, 400);
	assert_int_equal(A.samples[0].hwm_time_us, 10);
	assert_int_equal(A.nintervals, 2);
	assert_counts(find_interval(slot_index(1), 0, 1)->c, 100, 1);
	assert_counts(find_interval(slot_index(2), 0, MP_NONE)->c, 300, 1);
	assert_int_equal(live_at_hwm(0), 400);
}

/* ---- whole captures through the reader ---------------------------------- */

static char *temp_path(const char *name)
{
	static char path[256];
	snprintf(path, sizeof(path), "%s/memprof-test-analysis-%d-%s",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid(), name);
	return path;
}

static void write_small_capture(const char *path, bool with_trailer)
{
	struct mp_writer w;
	struct mp_header h = { 0 };
	struct mp_trailer t = { 0 };
	h.pid = 42;
	h.main_tid = 42;
	h.mode = MP_MODE_RUN;
	assert_int_equal(mp_writer_open(&w, path, MP_WRITER_FORCE | MP_WRITER_NO_COMPRESS), 0);
	mp_writer_header(&w, &h);
	mp_writer_thread(&w, 0, 42, "main");
	mp_writer_trace(&w, 0, 0x401000);
	for (uint64_t i = 0; i < 100; i++)
		mp_writer_alloc(&w, 0, MALLOC, 0x1000 + 16 * i, 10, 1);
	for (uint64_t i = 0; i < 40; i++)
		mp_writer_free(&w, 0, FREE, 0x1000 + 16 * i);
	if (with_trailer) {
		t.has_exit_code = true;
		t.exit_code = 3;
		t.duration_us = 5000;
		mp_writer_trailer(&w, &t);
	}
	assert_int_equal(mp_writer_close(&w), 0);
}

/*
 * Past about a million intervals, the buckets merge in pairs before the
 * series is full: 1000 stacks each with a block living two buckets, for
 * 1200 buckets, make 1.2 million, and merging does not make fewer. Every
 * figure stays exact.
 */
static void test_temporal_intervals_bounded(void **state)
{
	struct mp_analysis_opts o = MP_ANALYSIS_OPTS_INIT;
	const uint64_t stacks = 1000, buckets = 1200;
	(void)state;
	o.flags = MP_ANALYSIS_TEMPORAL;
	o.max_memory_records = 4096;
	begin_opts(&o);
	for (uint64_t s = 0; s < stacks; s++)
		trace(0, 0x1000 + 16 * s);
	for (uint64_t b = 0; b < buckets; b++) {
		for (uint64_t s = 0; s < stacks; s++)
			ev_alloc(0, MALLOC, 0x100000 + 16 * (b * stacks + s), 16, 1 + s);
		if (b >= 2)
			for (uint64_t s = 0; s < stacks; s++)
				ev_free(0, FREE, 0x100000 + 16 * ((b - 2) * stacks + s));
		tick(1000 * (b + 1), 1 << 20);
	}
	mp_analysis_finish(&A);
	assert_int_equal(A.ticks_per_sample, 2);
	assert_int_equal(A.nsamples, buckets / 2);
	/* Merging did not make fewer here: no second merge for that. */
	assert_true(A.nintervals <= 1200000);
	assert_int_equal(A.totals.leaked_bytes, 2 * stacks * 16);
	for (uint32_t b = 0; b < A.nsamples; b += 75) {
		assert_int_equal(A.samples[b].heap_max, (b ? 3 : 2) * stacks * 16);
		assert_int_equal(live_at_hwm(b), A.samples[b].heap_max);
	}
}

static void test_read_file(void **state)
{
	struct strbuf err = STRBUF_INIT;
	char *path = temp_path("whole");
	(void)state;
	write_small_capture(path, true);
	mp_analysis_init(&A, NULL);
	assert_int_equal(mp_analysis_read_file(&A, path, &err), 0);
	assert_int_equal(A.header.pid, 42);
	assert_true(A.trailer.present);
	assert_int_equal(A.trailer.exit_code, 3);
	assert_int_equal(A.duration_us, 5000);
	assert_int_equal(A.totals.n_allocs, 100);
	assert_int_equal(A.totals.peak_bytes, 1000);
	assert_int_equal(A.totals.leaked_bytes, 600);
	assert_int_equal(A.totals.leaked_count, 60);
	unlink(path);
	strbuf_release(&err);
}

/* Cut inside the last record: what came before is analysed, with a warning. */
static void test_read_truncated(void **state)
{
	struct strbuf err = STRBUF_INIT;
	char *path = temp_path("cut");
	struct stat st;
	(void)state;
	write_small_capture(path, false);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(truncate(path, st.st_size - 1), 0);
	mp_analysis_init(&A, NULL);
	assert_int_equal(mp_analysis_read_file(&A, path, &err), 1);
	assert_non_null(strstr(err.buf, "is truncated"));
	assert_false(A.trailer.present);
	assert_int_equal(A.totals.n_allocs, 100);
	assert_int_equal(A.totals.n_frees, 39);
	assert_int_equal(A.totals.leaked_count, 61);
	unlink(path);
	mp_analysis_release(&A);

	mp_analysis_init(&A, NULL);
	assert_int_equal(mp_analysis_read_file(&A, temp_path("missing"), &err), -1);
	assert_non_null(strstr(err.buf, "No such file or directory"));
	strbuf_release(&err);
}

/*
 * Memory stays bounded by live blocks and stacks: four million events with
 * at most 64 blocks live must not grow the process by anything like the
 * 64 MB that even 16 bytes per event would take.
 */
static void test_memory_bound(void **state)
{
	struct strbuf err = STRBUF_INIT;
	char *path = temp_path("big");
	struct mp_writer w;
	struct mp_header h = { 0 };
	struct rusage before, after;
	const uint64_t pairs = 2000000;
	(void)state;
	h.pid = 1;
	h.mode = MP_MODE_RUN;
	assert_int_equal(mp_writer_open(&w, path, MP_WRITER_FORCE), 0);
	mp_writer_header(&w, &h);
	for (int s = 0; s < 16; s++)
		mp_writer_trace(&w, 0, 0x401000 + 16 * (uint64_t)s);
	for (uint64_t i = 0; i < pairs; i++) {
		uint64_t addr = 0x10000 + 64 * (i % 64);
		mp_writer_alloc(&w, (uint32_t)(i % 4), MALLOC, addr + (i % 4) * 0x100000, 32 + i % 100,
				1 + i % 16);
		if (i >= 63)
			mp_writer_free(&w, (uint32_t)((i - 63) % 4), FREE,
				       0x10000 + 64 * ((i - 63) % 64) + ((i - 63) % 4) * 0x100000);
		if (i % 100000 == 0)
			mp_writer_tick(&w, i, 1 << 20);
	}
	assert_int_equal(mp_writer_close(&w), 0);

	getrusage(RUSAGE_SELF, &before);
	mp_analysis_init(&A, NULL);
	assert_int_equal(mp_analysis_read_file(&A, path, &err), 0);
	getrusage(RUSAGE_SELF, &after);
	assert_int_equal(A.n_events, 2 * pairs - 63);
	assert_int_equal(A.totals.leaked_count, 63);
	assert_true(A.nslots <= 16);
	/* ru_maxrss is in KiB. */
	assert_true(after.ru_maxrss - before.ru_maxrss < 16 * 1024);
	unlink(path);
	strbuf_release(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_peak_and_leaks, end),
		cmocka_unit_test_teardown(test_peak_reached_twice, end),
		cmocka_unit_test_teardown(test_peak_saved_once, end),
		cmocka_unit_test_teardown(test_unknown_frees, end),
		cmocka_unit_test_teardown(test_threads, end),
		cmocka_unit_test_teardown(test_realloc_chain, end),
		cmocka_unit_test_teardown(test_munmap_pieces, end),
		cmocka_unit_test_teardown(test_munmap_two_mappings, end),
		cmocka_unit_test_teardown(test_mremap_and_fixed, end),
		cmocka_unit_test_teardown(test_no_mmap, end),
		cmocka_unit_test_teardown(test_address_reuse, end),
		cmocka_unit_test_teardown(test_temporary_thresholds, end),
		cmocka_unit_test_teardown(test_histogram, end),
		cmocka_unit_test_teardown(test_empty, end),
		cmocka_unit_test_teardown(test_sites, end),
		cmocka_unit_test_teardown(test_unsymbolized, end),
		cmocka_unit_test_teardown(test_module_reuse, end),
		cmocka_unit_test_teardown(test_symbol_after_trace, end),
		cmocka_unit_test_teardown(test_symbolize_hook, end),
		cmocka_unit_test_teardown(test_calltree, end),
		cmocka_unit_test_teardown(test_calltree_inverted, end),
		cmocka_unit_test_teardown(test_calltree_split_threads, end),
		cmocka_unit_test_teardown(test_group, end),
		cmocka_unit_test_teardown(test_time_series, end),
		cmocka_unit_test_teardown(test_time_series_downsampled, end),
		cmocka_unit_test_teardown(test_temporal, end),
		cmocka_unit_test_teardown(test_temporal_mark_moves, end),
		cmocka_unit_test_teardown(test_temporal_merged, end),
		cmocka_unit_test_teardown(test_temporal_intervals_bounded, end),
		cmocka_unit_test_teardown(test_temporal_mapping_pieces, end),
		cmocka_unit_test_teardown(test_read_file, end),
		cmocka_unit_test_teardown(test_read_truncated, end),
		cmocka_unit_test_teardown(test_memory_bound, end),
	};
	return cmocka_run_group_tests(tests, NULL, NULL) ? 1 : 0;
}
