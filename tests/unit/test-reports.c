/*
 * Unit tests for the report modules: lib/report (names, files, wording),
 * lib/progress, lib/summary, lib/tree and lib/stats on hand-built analyses.
 */
#include <config.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/report/progress.h"
#include "lib/report/render-text.h"
#include "lib/report/report.h"
#include "lib/report/stats.h"
#include "lib/report/summary.h"
#include "lib/report/tree.h"

#include "tests/unit/analysis-fixture.h"

static struct strbuf sb = STRBUF_INIT;

static void test_output_paths(void **state)
{
	static const char *const cases[][2] = {
		{ "memprof-app.1234.bin", "memprof-flamegraph-app.1234.html" },
		{ "dir/result.bin", "dir/memprof-flamegraph-result.html" },
		{ "/a/b/out", "/a/b/memprof-flamegraph-out.html" },
		{ "memprof-", "memprof-flamegraph-memprof-.html" },
		{ ".hidden", "memprof-flamegraph-.hidden.html" },
		/* Read from standard input or another descriptor: here, never in /dev. */
		{ "-", "memprof-flamegraph-stdin.html" },
		{ "/dev/stdin", "memprof-flamegraph-stdin.html" },
		{ "/proc/self/fd/0", "memprof-flamegraph-stdin.html" },
		{ "/dev/fd/63", "memprof-flamegraph-63.html" },
	};
	static const char *const stats[][2] = {
		{ "dir/out.bin", "dir/memprof-stats-out.bin.json" },
		{ "memprof-x.bin", "memprof-stats-memprof-x.bin.json" },
		{ "/dev/stdin", "memprof-stats-stdin.json" },
		{ "-", "memprof-stats-stdin.json" },
	};
	char *p;
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		p = mp_report_output_path(cases[i][0], "flamegraph", ".html");
		assert_string_equal(p, cases[i][1]);
		free(p);
	}
	for (size_t i = 0; i < sizeof(stats) / sizeof(stats[0]); i++) {
		p = mp_report_stats_path(stats[i][0]);
		assert_string_equal(p, stats[i][1]);
		free(p);
	}
}

static void test_write_file(void **state)
{
	char path[256], buf[16];
	int fd;
	(void)state;
	snprintf(path, sizeof(path), "%s/memprof-test-reports-%d.json",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
	unlink(path);
	strbuf_reset(&sb);
	assert_int_equal(mp_report_write_file(path, "one", 3, false, &sb), 0);
	assert_int_equal(mp_report_write_file(path, "two", 3, false, &sb), -1);
	assert_non_null(strstr(sb.buf, "already exists (use -f to overwrite it)"));
	assert_int_equal(mp_report_write_file(path, "2", 1, true, &sb), 0);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(read(fd, buf, sizeof(buf)), 1);
	assert_int_equal(buf[0], '2');
	close(fd);
	unlink(path);
}

static void test_wording(void **state)
{
	struct mp_record r = { .type = MP_REC_TRAILER };
	struct mp_trailer t = { 0 };
	(void)state;
	begin(0, 1);
	A.header.argv = calloc(4, sizeof(char *));
	A.header.argv[0] = strdup("/bin/prog");
	A.header.argv[1] = strdup("two words");
	A.header.argv[2] = strdup("it's");
	A.header.argc = 3;
	strbuf_reset(&sb);
	mp_report_command_line(&A, true, &sb);
	assert_string_equal(sb.buf, "/bin/prog 'two words' 'it'\\''s'");
	strbuf_reset(&sb);
	mp_report_command_line(&A, false, &sb);
	assert_string_equal(sb.buf, "/bin/prog two words it's");
	strbuf_reset(&sb);
	mp_report_exit_status(&A, &sb);
	assert_string_equal(sb.buf, "unknown: the capture has no trailer (it was cut short)");
	t.present = true;
	t.has_exit_signal = true;
	t.exit_signal = 11;
	t.core_dumped = 1;
	r.u.trailer = &t;
	feed(&r);
	strbuf_reset(&sb);
	mp_report_exit_status(&A, &sb);
	assert_string_equal(sb.buf, "killed by signal 11 (SIGSEGV), core dumped");
	assert_string_equal(mp_signal_name(9), "SIGKILL");
	assert_string_equal(mp_signal_name(40), "signal 40");
}

/* main -> f -> f (recursion) allocating 100, and main -> f allocating 50. */
static void recursive_program(void)
{
	uint64_t s_main, s_f, s_file;
	begin(0, 1);
	s_main = string("main");
	s_f = string("f");
	s_file = string("/src/r.c");
	module(1, 0x400000, "/bin/r", 0x1000, 0x1000);
	symbol(0x401000, 1, 0x1000, 1, (struct mp_frame[]){ { s_main, s_file, 5, 0 } });
	symbol(0x401100, 1, 0x1100, 1, (struct mp_frame[]){ { s_f, s_file, 10, 0 } });
	symbol(0x401200, 1, 0x1200, 1, (struct mp_frame[]){ { s_f, s_file, 12, 0 } });
	trace(0, 0x401000);
	trace(1, 0x401100);
	trace(2, 0x401200);
	ev_alloc(0, MALLOC, 0x10, 100, 3);
	ev_alloc(0, MALLOC, 0x20, 50, 2);
	mp_analysis_finish(&A);
}

static void test_summary(void **state)
{
	struct mp_summary s;
	struct mp_term term = { false, false, 80, 24, 0, false };
	(void)state;
	recursive_program();
	mp_summary_build(&s, &A, MP_VIEW_PEAK);
	mp_summary_sort(&s, &A, 1);
	assert_int_equal(s.n, 2);
	/* f recurses in one stack: counted once there; both lines are one row. */
	assert_string_equal(mp_analysis_string(&A, s.rows[0].function), "f");
	assert_counts(s.rows[0].total, 150, 2);
	assert_counts(s.rows[0].own, 150, 2);
	assert_string_equal(mp_analysis_string(&A, s.rows[1].function), "main");
	assert_counts(s.rows[1].total, 150, 2);
	assert_counts(s.rows[1].own, 0, 0);
	assert_counts(s.view_total, 150, 2);
	strbuf_reset(&sb);
	mp_summary_render(&s, &A, 3, 1, &term, &sb);
	assert_non_null(strstr(sb.buf, "\u2503 Location      \u2503 Total Memory \u2503 Total Memory % \u2503 <Own Memory> \u2503"));
	assert_non_null(strstr(sb.buf, "\u2502 f at /src/r.c \u2502        150 B \u2502       100.00 % \u2502        150 B \u2502     100.00 % \u2502                2 \u2502\n"));
	assert_null(strstr(sb.buf, "main at"));
	mp_summary_release(&s);
}

static void test_tree(void **state)
{
	struct mp_term term = { false, false, 80, 24, 0, false };
	struct mp_tree_opts o = { false };
	(void)state;
	recursive_program();
	strbuf_reset(&sb);
	mp_tree_render(&A, MP_VIEW_PEAK, 10, &o, &term, &sb);
	assert_string_equal(sb.buf, "150 B (100.00 %) <ROOT>\n"
				    "\u2514\u2500\u2500 150 B (100.00 %) main \u2192 f  /src/r.c:10\n"
				    "    \u2514\u2500\u2500 100 B (66.67 %) f  /src/r.c:12\n");
	strbuf_reset(&sb);
	mp_tree_render(&A, MP_VIEW_PEAK, 1, &o, &term, &sb);
	assert_string_equal(sb.buf, "150 B (100.00 %) <ROOT>\n"
				    "\u251c\u2500\u2500 100 B (66.67 %) main \u2192 f \u2192 f  /src/r.c:12\n"
				    "\u2514\u2500\u2500 50 B (33.33 %) 1 allocation from 1 location below the threshold\n");
	strbuf_reset(&sb);
	mp_tree_render(&A, MP_VIEW_TEMPORARY, 10, &o, &term, &sb);
	assert_string_equal(sb.buf, "0 B (0.00 %) <ROOT>\n");
}

/* Every line of sb at most width columns. */
static void assert_fits(const char *text, size_t width)
{
	for (const char *line = text; *line;) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		if (mp_text_width(line, len) > width)
			fail_msg("%zu columns: %.*s", mp_text_width(line, len), (int)len, line);
		line += len + (nl != NULL);
	}
}

static void test_tree_siblings(void **state)
{
	struct mp_term term = { false, false, 80, 24, 0, false };
	struct mp_tree_opts o = { false };
	(void)state;
	cxx_program(0);
	/*
	 * Two calls of fill() from main: the line of each call tells them
	 * apart; fill, the program's own code, is never folded, nor is a lone
	 * frame; C++ names are shortened.
	 */
	strbuf_reset(&sb);
	mp_tree_render(&A, MP_VIEW_PEAK, 10, &o, &term, &sb);
	assert_string_equal(sb.buf, "192 B (100.00 %) <ROOT>\n"
		"\u251c\u2500\u2500 128 B (66.67 %) main:17 \u2192 fill(int, char const*):8 \u2192 "
		"std::vector<\u2026>::_M_realloc_insert<\u2026>(__gnu_cxx::__normal_iterator<\u2026>, int const&):440 "
		"\u2192 std::__new_allocator<\u2026>::allocate(unsigned long, void const*):137 \u2192 "
		"operator new(unsigned long)  (libstdc++.so.6)\n"
		"\u2514\u2500\u2500 64 B (33.33 %) main:15 \u2192 fill(int, char const*):8 \u2192 "
		"std::vector<\u2026>::_M_realloc_insert<\u2026>(__gnu_cxx::__normal_iterator<\u2026>, int const&):440 "
		"\u2192 std::__new_allocator<\u2026>::allocate(unsigned long, void const*):137 \u2192 "
		"operator new(unsigned long)  (libstdc++.so.6)\n");
	/* Fitted to 120 columns: the plumbing folded first, the program's fill kept. */
	term.limit = 120;
	strbuf_reset(&sb);
	mp_tree_render(&A, MP_VIEW_PEAK, 10, &o, &term, &sb);
	assert_fits(sb.buf, 120);
	assert_non_null(strstr(sb.buf, "\u2500\u2500 128 B (66.67 %) main:17 \u2192 fill(int, char const*):8 \u2192 "
				     "\u2026 2 more \u2026 \u2192 operator new(unsigned long)  (libstdc++.so.6)\n"));
	/* Narrower: what cannot be folded is cut. */
	term.limit = 100;
	strbuf_reset(&sb);
	mp_tree_render(&A, MP_VIEW_PEAK, 10, &o, &term, &sb);
	assert_fits(sb.buf, 100);
	assert_non_null(strstr(sb.buf, "\u2192 operator new(unsigned long)  \u2026\n"));
	/* Whole names and paths: nothing elided, nothing cut. */
	term.limit = 0;
	term.full_names = true;
	o.whole_paths = true;
	strbuf_reset(&sb);
	mp_tree_render(&A, MP_VIEW_PEAK, 1, &o, &term, &sb);
	assert_non_null(strstr(sb.buf, "main \u2192 fill(int, char const*) \u2192 void std::vector<int, "
				     "std::allocator<int> >::_M_realloc_insert<int const&>"));
	assert_null(strstr(sb.buf, "\u2026"));
}

static void test_stats_signal(void **state)
{
	struct mp_record r = { .type = MP_REC_TRAILER };
	struct mp_trailer t = { 0 };
	struct mp_stats_opts o = { 3, "x.bin" };
	struct mp_term term = { false, false, 80, 24, 0, false };
	(void)state;
	begin(0, 1);
	trace(0, 0x401000);
	ev_alloc(0, MALLOC, 0x10, 0, 1);
	ev_alloc(0, MALLOC, 0x20, 4096, 1);
	t.present = true;
	t.has_exit_signal = true;
	t.exit_signal = 6;
	r.u.trailer = &t;
	feed(&r);
	mp_analysis_finish(&A);
	strbuf_reset(&sb);
	mp_stats_json(&A, &o, &sb);
	assert_non_null(strstr(sb.buf, "\n  \"exit_signal\": 6,\n  \"core_dumped\": false,\n"));
	assert_null(strstr(sb.buf, "exit_status"));
	assert_non_null(strstr(sb.buf, "\"peak_time_us\": null"));
	assert_non_null(strstr(sb.buf, "\"location\": \"0x401000\""));
	strbuf_reset(&sb);
	mp_stats_text(&A, &o, &term, &sb);
	assert_non_null(strstr(sb.buf, "Exit status: killed by signal 6 (SIGABRT)\n"));
	/* 0 B, then eleven empty buckets folded, then 4 KiB. */
	assert_non_null(strstr(sb.buf, "\t      = 0 B : 1 \u2587\u2587\u2587\u2587\u2587\u2587\u2587\u2587\u2587\u2587\u2587\u2587\u2587\u2587\u2587\u2587\u2587\u2587\u2587\u2587\u2587\u2587\u2587\u2587\u2587\n"
				       "\t          \u2026 : 0\n"
				       "\t< 8.000 KiB : 1 "));
	assert_non_null(strstr(sb.buf, "Top 3 largest allocating locations (by size):\n\t- 0x401000 -> 4.000 KiB\n"));
}

static void test_progress(void **state)
{
	struct mp_progress p;
	int fds[2];
	char buf[512];
	ssize_t n;
	(void)state;
	strbuf_reset(&sb);
	mp_progress_format(&sb, "Analysing", 512 << 10, 1 << 20, 1234567, 2.0, 100);
	assert_string_equal(sb.buf, "Analysing [###############----------------]  50%  512.000 KiB/1.000 MiB  1,234,567 records  0.6 M/s");
	strbuf_reset(&sb);
	mp_progress_format(&sb, "Analysing", 3000, 0, 10, 0, 100);
	assert_string_equal(sb.buf, "Analysing  2.930 KiB  10 records");
	strbuf_reset(&sb);
	mp_progress_format(&sb, "Analysing", 512 << 10, 1 << 20, 1234567, 2.0, 30);
	assert_int_equal(mp_text_width(sb.buf, sb.len), 29);

	assert_int_equal(pipe(fds), 0);
	fcntl(fds[0], F_SETFL, O_NONBLOCK);
	mp_progress_init(&p, fds[1], "Analysing");
	assert_false(p.enabled); /* a pipe is not a terminal */
	mp_progress_start(&p, 100);
	p.start -= 10;           /* as if the pass had run for ten seconds */
	mp_progress_update(&p, 50, 1000);
	mp_progress_done(&p);
	assert_int_equal(read(fds[0], buf, sizeof(buf)), -1);
	/* Forced on: one line, not redrawn within a tenth of a second, then erased. */
	p.enabled = true;
	p.width = 100;
	mp_progress_update(&p, 50, 1000);
	mp_progress_update(&p, 60, 2000);
	mp_progress_done(&p);
	n = read(fds[0], buf, sizeof(buf) - 1);
	assert_true(n > 0);
	buf[n] = '\0';
	assert_non_null(strstr(buf, "\rAnalysing ["));
	assert_non_null(strstr(buf, "  50%  50 B/100 B  1,000 records"));
	assert_null(strstr(buf, "2,000 records"));
	assert_non_null(strstr(buf, "\033[K\r\033[K"));
	close(fds[0]);
	close(fds[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_output_paths),
		cmocka_unit_test(test_write_file),
		cmocka_unit_test_teardown(test_wording, end),
		cmocka_unit_test_teardown(test_summary, end),
		cmocka_unit_test_teardown(test_tree, end),
		cmocka_unit_test_teardown(test_tree_siblings, end),
		cmocka_unit_test_teardown(test_stats_signal, end),
		cmocka_unit_test(test_progress),
	};
	int ret = cmocka_run_group_tests(tests, NULL, NULL) ? 1 : 0;
	strbuf_release(&sb);
	return ret;
}
