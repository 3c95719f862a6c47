/*
 * Unit tests for lib/live: the model (records in, rows out, sorted and by
 * thread) and the screen (its lines for a terminal size), on hand-built
 * streams whose figures are computed by hand in the comments.
 */
#include <config.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "lib/live/model.h"
#include "lib/live/screen.h"
#include "lib/format/format.h"
#include "lib/report/render-text.h"
#include "lib/util/hash.h"
#include "tests/unit/records.h"

static struct mp_live L;
static uint64_t ntraces;

/* ---- records -------------------------------------------------------------- */

static void feed(const struct mp_record *r)
{
	mp_live_record(&L, r);
}

static uint64_t sampling_interval; /* of the next stream (0: exact) */

static bool open_stream(pid_t pid, const char *const *argv, size_t argc)
{
	struct mp_header h = { 0 };
	h.sampling_interval = sampling_interval;
	struct mp_record r = { .type = MP_REC_HEADER };
	h.major = 1;
	h.pid = (uint64_t)pid;
	h.main_tid = (uint64_t)pid;
	h.mode = MP_MODE_PRELOAD;
	h.argv = (char **)argv;
	h.argc = argc;
	r.u.header = &h;
	ntraces = 0;
	return mp_live_open(&L, pid, &r);
}

static void string(uint64_t id, const char *s)
{
	struct mp_record r = rec_string(id, s);
	feed(&r);
}

static void module(uint64_t id, uint64_t base, const char *path)
{
	struct mp_segment seg = { 0, 0x100000, 5 };
	struct mp_record r = rec_module(id, base, path, &seg);
	feed(&r);
}

/* A SYMBOL record: ip is function (string id) at file:line, in module. */
static void symbol(uint64_t ip, uint64_t mod, uint64_t base, uint64_t function, uint64_t file,
		   uint32_t line)
{
	struct mp_frame f = { function, file, line, 0 };
	struct mp_record r = rec_symbol(ip, mod, ip - base, 1, &f);
	feed(&r);
}

static uint64_t trace(uint64_t parent, uint64_t ip)
{
	struct mp_record r = rec_trace(++ntraces, parent, ip);
	feed(&r);
	return ntraces;
}

static void thread(uint32_t index, uint64_t tid, const char *name)
{
	struct mp_record r = rec_thread(index, tid, name);
	feed(&r);
}

static void alloc(uint32_t th, uint64_t addr, uint64_t size, uint64_t stack)
{
	struct mp_record r = rec_alloc(th, MP_KIND_MALLOC, addr, size, stack);
	feed(&r);
}

static void release(uint32_t th, uint64_t addr)
{
	struct mp_record r = rec_free(th, MP_KIND_FREE, addr);
	feed(&r);
}

static void tick(uint64_t time_us, uint64_t rss)
{
	struct mp_record r = rec_tick(time_us, rss);
	feed(&r);
}

static void marker(enum mp_rec_type type, uint64_t time_us, bool has_status, int64_t status)
{
	struct mp_record r = { .type = type };
	r.u.marker.has = MP_HAS_TIME | (has_status ? MP_HAS_STATUS : 0);
	r.u.marker.time_us = time_us;
	r.u.marker.status = status;
	feed(&r);
}

/*
 * The program of every test: main (app.c:10) calls work (app.c:20), which
 * calls helper (app.c:30) and xmalloc (libc.c:5, in the C library, so no
 * allocation site); helper calls work again. Stacks, innermost first:
 *   3: helper <- work <- main
 *   4: xmalloc <- work <- main        (site: work)
 *   5: work <- helper <- work <- main (work twice: counted once in total)
 *   2: work <- main
 * Thread 0 (tid 100, "main"): 100 B at stack 3 and 200 B at stack 4, live;
 * 50 B at stack 2, freed. Thread 1 (tid 101, "worker"): 400 B at stack 5,
 * live; 800 B at stack 3, freed. The heap goes 100, 300, 700, 1500, 1550
 * (the peak), 750, 700.
 */
static const char *const app_argv[] = { "/bin/app", "--flag" };

static void program(void)
{
	uint64_t s1, s2, s3, s4, s5;
	assert_true(open_stream(100, app_argv, 2));
	module(1, 0x7000000, "/lib/x86_64-linux-gnu/libc.so.6");
	module(2, 0x400000, "/bin/app");
	string(1, "main");
	string(2, "/src/app.c");
	string(3, "work");
	string(4, "helper");
	string(5, "xmalloc");
	string(6, "libc.c");
	symbol(0x401000, 2, 0x400000, 1, 2, 10);
	symbol(0x402000, 2, 0x400000, 3, 2, 20);
	symbol(0x403000, 2, 0x400000, 4, 2, 30);
	symbol(0x7001000, 1, 0x7000000, 5, 6, 5);
	s1 = trace(0, 0x401000);
	s2 = trace(s1, 0x402000);
	s3 = trace(s2, 0x403000);
	s4 = trace(s2, 0x7001000);
	s5 = trace(s3, 0x402000);
	thread(0, 100, "main");
	thread(1, 101, "worker");
	alloc(0, 0x1000, 100, s3);
	alloc(0, 0x2000, 200, s4);
	alloc(1, 0x3000, 400, s5);
	alloc(1, 0x4000, 800, s3);
	alloc(0, 0x5000, 50, s2);
	release(1, 0x4000);
	release(0, 0x5000);
	tick(2500000, 10 << 20);
}

static int setup(void **state)
{
	(void)state;
	mp_live_init(&L, 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	mp_live_release(&L);
	return 0;
}

static const char *fn(const struct mp_live_row *r)
{
	return mp_analysis_string(&L.a, r->function);
}

static void assert_row(size_t i, const char *function, uint64_t own, uint64_t total,
		       uint64_t allocs, uint64_t blocks)
{
	const struct mp_live_row *r;
	assert_true(i < L.nrows);
	r = &L.rows[i];
	assert_string_equal(fn(r), function);
	assert_int_equal(r->own, own);
	assert_int_equal(r->total, total);
	assert_int_equal(r->allocs, allocs);
	assert_int_equal(r->blocks, blocks);
}

/* ---- the model -------------------------------------------------------------- */

static void test_figures(void **state)
{
	struct mp_counts heap;
	(void)state;
	assert_int_equal(L.state, MP_LIVE_WAITING);
	program();
	assert_int_equal(L.state, MP_LIVE_RUNNING);
	assert_int_equal(L.pid, 100);
	heap = mp_live_heap(&L);
	assert_int_equal(heap.bytes, 700);
	assert_int_equal(heap.count, 3);
	assert_int_equal(mp_live_peak(&L), 1550);
	assert_int_equal(L.rss, 10 << 20);
	assert_int_equal(L.time_us, 2500000);
}

static void test_rows_by_own(void **state)
{
	(void)state;
	program();
	mp_live_update(&L);
	assert_int_equal(L.shown.bytes, 700);
	assert_int_equal(L.shown.count, 3);
	assert_int_equal(L.nrows, 4);
	/* work: its own 200 (stack 4), 400 (stack 5); allocations at stacks 2, 4, 5. */
	assert_row(0, "work", 600, 700, 3, 2);
	assert_row(1, "helper", 100, 500, 2, 1);
	/* No own memory: by total, then. */
	assert_row(2, "main", 0, 700, 0, 0);
	assert_row(3, "xmalloc", 0, 200, 0, 0);
	assert_string_equal(mp_analysis_string(&L.a, L.rows[3].file), "libc.c");
}

static void test_rows_sorted(void **state)
{
	(void)state;
	program();
	mp_live_update(&L);
	L.sort = MP_LIVE_BY_TOTAL;
	mp_live_sort_rows(&L);
	/* work and main tie at 700: work has more of its own. */
	assert_row(0, "work", 600, 700, 3, 2);
	assert_row(1, "main", 0, 700, 0, 0);
	assert_row(2, "helper", 100, 500, 2, 1);
	assert_row(3, "xmalloc", 0, 200, 0, 0);
	L.sort = MP_LIVE_BY_ALLOCS;
	mp_live_sort_rows(&L);
	assert_row(0, "work", 600, 700, 3, 2);
	assert_row(1, "helper", 100, 500, 2, 1);
	assert_row(2, "main", 0, 700, 0, 0);
	L.sort = MP_LIVE_BY_BLOCKS;
	mp_live_update(&L); /* the same sort from a fresh update */
	assert_row(0, "work", 600, 700, 3, 2);
	assert_row(1, "helper", 100, 500, 2, 1);
}

static void test_rows_by_thread(void **state)
{
	(void)state;
	program();
	mp_live_next_thread(&L, 1);
	assert_int_equal(L.thread, 0);
	mp_live_next_thread(&L, 1);
	assert_int_equal(L.thread, 1);
	mp_live_update(&L);
	/* The worker: 400 B live at stack 5; its 800 B at stack 3 were freed. */
	assert_int_equal(L.shown.bytes, 400);
	assert_int_equal(L.shown.count, 1);
	assert_int_equal(L.nrows, 3);
	assert_row(0, "work", 400, 400, 1, 1);
	assert_row(1, "helper", 0, 400, 1, 0);
	assert_row(2, "main", 0, 400, 0, 0);
	mp_live_next_thread(&L, 1);
	assert_int_equal(L.thread, MP_THREAD_MERGED);
	mp_live_next_thread(&L, -1);
	assert_int_equal(L.thread, 1);
	mp_live_next_thread(&L, -1);
	mp_live_next_thread(&L, -1);
	assert_int_equal(L.thread, MP_THREAD_MERGED);
}

static void test_rows_follow_the_stream(void **state)
{
	(void)state;
	program();
	mp_live_update(&L);
	/* helper's 100 B go: helper keeps its allocations, work loses 100 B of total. */
	release(0, 0x1000);
	mp_live_update(&L);
	assert_row(0, "work", 600, 600, 3, 2);
	assert_row(1, "main", 0, 600, 0, 0);
	assert_row(2, "helper", 0, 400, 2, 0);
	assert_int_equal(mp_live_peak(&L), 1550);
}

static void test_streams(void **state)
{
	struct mp_live m;
	struct mp_collect_observer o;
	struct mp_header h = { 0 };
	struct mp_record r = { .type = MP_REC_HEADER };
	(void)state;
	h.pid = 7;
	r.u.header = &h;
	mp_live_init(&m, 7);
	o = mp_live_observer(&m);
	assert_null(o.open(o.ctx, 8, NULL, &r)); /* another process */
	assert_ptr_equal(o.open(o.ctx, 7, NULL, &r), &m);
	assert_null(o.open(o.ctx, 7, NULL, &r)); /* one at a time */
	o.ended(&m);
	assert_int_equal(m.state, MP_LIVE_ENDED);
	o.close(&m, NULL);
	assert_int_equal(m.state, MP_LIVE_ENDED);
	/* The program it executed (--follow-fork) is not shown: the first one's figures stay. */
	assert_null(o.open(o.ctx, 7, NULL, &r));
	assert_int_equal(m.streams, 1);
	mp_live_release(&m);
}

/* ---- the screen -------------------------------------------------------------- */

static struct mp_live_screen S;

/* A line of width columns: left at the left, right at the right. */
static const char *sides(const char *left, const char *right, int width)
{
	static char buf[256];
	snprintf(buf, sizeof(buf), "%-*s%s", width - (int)strlen(right), left, right);
	return buf;
}

static void render(int width, int height, const struct mp_live_view *v)
{
	mp_live_render(&L, v, width, height, &S);
	assert_int_equal(S.height, height);
	for (int i = 0; i < height; i++)
		assert_true(mp_text_width(S.text[i].buf, S.text[i].len) <= (size_t)width);
}

static void test_screen(void **state)
{
	struct mp_live_view v = { 0 };
	(void)state;
	mp_live_screen_init(&S);
	program();
	mp_live_update(&L);
	render(80, 10, &v);
	assert_string_equal(S.text[0].buf, sides("memprof live  pid 100  /bin/app --flag",
						 "running 2.5 s", 80));
	assert_int_equal(S.style[0], MP_LIVE_BOLD);
	assert_string_equal(S.text[1].buf, "heap 700 B in 3 blocks   peak 1.51 KiB   RSS 10.0 MiB   "
					   "5 allocations, 2 frees");
	assert_string_equal(S.text[2].buf, sides("threads: all 2", "sorted by own", 80));
	/* 80 columns: no percentages. */
	assert_string_equal(S.text[3].buf, "   <Own>    Total      Allocs    Blocks  Location");
	assert_int_equal(S.style[3], MP_LIVE_REVERSE);
	assert_string_equal(S.text[4].buf, "   600 B    700 B           3         2  work at app.c");
	assert_string_equal(S.text[5].buf, "   100 B    500 B           2         1  helper at app.c");
	assert_string_equal(S.text[6].buf, "     0 B    700 B           0         0  main at app.c");
	assert_string_equal(S.text[7].buf, "     0 B    200 B           0         0  xmalloc at libc.c");
	assert_string_equal(S.text[8].buf, "");
	assert_int_equal(S.style[9], MP_LIVE_REVERSE);
	assert_string_equal(S.text[9].buf, sides("q quit  o/t/a/b sort  </> thread  up/down PgUp/PgDn  "
						 "space pause", "1-4 of 4", 80));
	/* 100 columns: percentages of the 700 B shown; the sorted column marked. */
	L.sort = MP_LIVE_BY_TOTAL;
	mp_live_sort_rows(&L);
	render(100, 10, &v);
	assert_string_equal(S.text[3].buf, "     Own   Own%  <Total> Total%      Allocs    Blocks  Location");
	assert_string_equal(S.text[4].buf, "   600 B  85.7%    700 B 100.0%           3         2  work at app.c");
	assert_string_equal(S.text[6].buf, "   100 B  14.3%    500 B  71.4%           2         1  helper at app.c");
	mp_live_screen_release(&S);
}

/*
 * A sampled stream: the figures are estimates, and the line says so. At the
 * interval 1000 the 5000 B block is itself; the 100 B one weighs
 * w = 1/(1 - e^-0.101): round(100 w) bytes and floor(w) blocks, plus one
 * when the hash of its key (its thread's allocations before it: 1, thread
 * index 0) falls below w's fraction (estimate.c).
 */
static void test_screen_sampled(void **state)
{
	static const char *const argv[] = { "/bin/svc" };
	struct mp_live_view v = { 0 };
	double w = -1 / expm1(-0.101);
	uint64_t bytes = 5000 + (uint64_t)llround(100 * w);
	uint64_t blocks = 1 + (uint64_t)floor(w) +
			  ((double)(mp_hash_u64(1 ^ 0x5851f42d4c957f2dull) >> 11) * 0x1p-53 < w - floor(w));
	struct strbuf want = STRBUF_INIT, size = STRBUF_INIT;
	(void)state;
	mp_live_screen_init(&S);
	sampling_interval = 1000;
	assert_true(open_stream(100, argv, 1));
	sampling_interval = 0;
	alloc(0, 0x1000, 5000, 0);
	alloc(0, 0x3000, 100, 0);
	tick(1000000, 10 << 20);
	mp_live_update(&L);
	render(150, 10, &v);
	mp_live_format_size(&size, bytes);
	strbuf_addf(&want, "estimated heap %s in %llu blocks   peak %s   RSS 10.0 MiB   %llu allocations, "
			   "0 frees   sampled, one per 0.98 KiB", size.buf, (unsigned long long)blocks,
		    size.buf, (unsigned long long)blocks);
	assert_string_equal(S.text[1].buf, want.buf);
	strbuf_release(&want);
	strbuf_release(&size);
	mp_live_screen_release(&S);
}

static void test_screen_scrolled_and_small(void **state)
{
	struct mp_live_view v = { .top = 2, .paused = true, .note = "stopping" };
	(void)state;
	mp_live_screen_init(&S);
	program();
	mp_live_update(&L);
	render(80, 7, &v);
	/* Two rows fit; the third and fourth are shown. */
	assert_string_equal(S.text[4].buf, "     0 B    700 B           0         0  main at app.c");
	assert_string_equal(S.text[5].buf, "     0 B    200 B           0         0  xmalloc at libc.c");
	assert_string_equal(S.text[6].buf, sides("stopping", "3-4 of 4", 80));
	assert_non_null(strstr(S.text[2].buf, "table paused, sorted by own"));
	/* Narrow and short screens: cut, never wider, never a crash. */
	for (int w = 0; w < 60; w += 7)
		for (int h = 0; h < 8; h++)
			render(w, h, &v);
	/* The state keeps its place; the title gives way. */
	render(20, 6, &v);
	assert_string_equal(S.text[0].buf, "memp~  running 2.5 s");
	mp_live_screen_release(&S);
}

static void test_screen_states(void **state)
{
	struct mp_live_view v = { 0 };
	(void)state;
	mp_live_screen_init(&S);
	render(60, 6, &v);
	assert_string_equal(S.text[0].buf, sides("memprof live", "waiting for the tracker", 60));
	assert_string_equal(S.text[4].buf, "  (waiting for the process's first records)");
	program();
	marker(MP_REC_EXIT, 3000000, true, 3);
	mp_live_close(&L);
	render(60, 6, &v);
	assert_non_null(strstr(S.text[0].buf, "  exited with status 3 after 3.0 s"));
	/* What memprof run saw wins over the EXIT record. */
	mp_live_exited(&L, 9);
	render(60, 6, &v);
	assert_non_null(strstr(S.text[0].buf, "  killed by SIGKILL after 3.0 s"));
	mp_live_release(&L);
	mp_live_init(&L, 0);
	program();
	marker(MP_REC_DETACH, 61000000, false, 0);
	mp_live_close(&L);
	render(60, 6, &v);
	assert_non_null(strstr(S.text[0].buf, "  tracking stopped after 1 min 01 s"));
	mp_live_screen_release(&S);
}

static void test_screen_hostile_names(void **state)
{
	static const char *const argv[] = { "caf\xc3\xa9", "\x1b[31mred" };
	struct mp_live_view v = { 0 };
	(void)state;
	mp_live_screen_init(&S);
	assert_true(open_stream(5, argv, 2));
	thread(0, 5, "t\x1b]0;x\x07");
	mp_live_next_thread(&L, 1);
	render(100, 6, &v);
	for (int i = 0; i < S.height; i++) {
		assert_null(strchr(S.text[i].buf, '\x1b'));
		assert_null(strchr(S.text[i].buf, '\x07'));
	}
	/* Without UTF-8, a character that is not ASCII is one '?'. */
	assert_non_null(strstr(S.text[0].buf, "caf? \\x1b[31mred"));
	v.utf8 = true;
	render(100, 6, &v);
	assert_non_null(strstr(S.text[0].buf, "caf\xc3\xa9 \\x1b[31mred"));
	assert_non_null(strstr(S.text[2].buf, "thread 1 of 1: tid 5 't\\x1b]0;x\\x07'"));
	mp_live_screen_release(&S);
}

static void test_format_size(void **state)
{
	static const struct { uint64_t n; const char *s; } cases[] = {
		{ 0, "0 B" }, { 999, "999 B" }, { 1000, "0.98 KiB" }, { 1024, "1.00 KiB" },
		{ 4096000, "3.91 MiB" }, { 10 << 20, "10.0 MiB" }, { 500ull << 20, "500 MiB" },
		{ 1023ull << 20, "1.00 GiB" }, { UINT64_MAX, "16.0 EiB" },
	};
	struct strbuf sb = STRBUF_INIT;
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		strbuf_reset(&sb);
		mp_live_format_size(&sb, cases[i].n);
		assert_string_equal(sb.buf, cases[i].s);
	}
	strbuf_release(&sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_figures, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rows_by_own, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rows_sorted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rows_by_thread, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rows_follow_the_stream, setup, teardown),
		cmocka_unit_test(test_streams),
		cmocka_unit_test_setup_teardown(test_screen, setup, teardown),
		cmocka_unit_test_setup_teardown(test_screen_sampled, setup, teardown),
		cmocka_unit_test_setup_teardown(test_screen_scrolled_and_small, setup, teardown),
		cmocka_unit_test_setup_teardown(test_screen_states, setup, teardown),
		cmocka_unit_test_setup_teardown(test_screen_hostile_names, setup, teardown),
		cmocka_unit_test(test_format_size),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
