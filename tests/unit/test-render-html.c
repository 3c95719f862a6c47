/* Unit tests for lib/report/render-html: report data from hand-built analyses, and pages. */
#include <config.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/analysis/analysis.h"
#include "lib/report/html-tree.h"
#include "lib/report/render-html.h"
#include "lib/util/strbuf.h"

#include "tests/unit/analysis-fixture.h"

static struct strbuf data, err;

static int reset(void **state)
{
	(void)state;
	strbuf_reset(&data);
	strbuf_reset(&err);
	return 0;
}

static int done(void **state)
{
	end(state);
	strbuf_release(&data);
	strbuf_release(&err);
	return 0;
}

#define assert_has(text) \
	do { \
		if (!strstr(data.buf, (text))) \
			fail_msg("the data lacks %s\n%s", (text), data.buf); \
	} while (0)

/*
 * main (app.c:10) calls work (app.c:20) and "</script>" (no file): 100 bytes
 * from work, 50 from the hostile one (freed after the peak), 7 from main.
 */
static void program(unsigned flags)
{
	uint64_t s_main, s_app, s_work, s_evil;
	begin(flags, 1);
	thread_rec(0, 100, "main");
	module(1, 0x400000, "/bin/app", 0, 0x10000);
	s_main = string("main");
	s_app = string("app.c");
	s_work = string("work");
	s_evil = string("</script>");
	symbol(0x401000, 1, 0x1000, 1, &(struct mp_frame){ s_main, s_app, 10, 0 });
	symbol(0x402000, 1, 0x2000, 1, &(struct mp_frame){ s_work, s_app, 20, 0 });
	symbol(0x403000, 1, 0x3000, 1, &(struct mp_frame){ s_evil, 0, 0, 0 });
	trace(0, 0x401000);   /* 1: main */
	trace(1, 0x402000);   /* 2: main -> work */
	trace(1, 0x403000);   /* 3: main -> </script> */
	ev_alloc(0, MALLOC, 0x10, 100, 2);
	ev_alloc(0, MALLOC, 0x20, 50, 3);
	ev_alloc(0, MALLOC, 0x30, 7, 1);   /* 157: the peak */
	ev_free(0, FREE, 0x20);
}

static void build(enum mp_html_report report, enum mp_view view, bool inverted, bool temporal)
{
	struct mp_html_opts o = MP_HTML_OPTS_INIT;
	o.report = report;
	o.view = view;
	o.inverted = inverted;
	o.temporal = temporal;
	o.capture = "out.bin";
	if (mp_html_data(&A, &o, &data, &err) < 0)
		fail_msg("mp_html_data: %s", err.buf);
}

static void test_flamegraph_peak(void **state)
{
	(void)state;
	program(0);
	mp_analysis_finish(&A);
	build(MP_HTML_FLAMEGRAPH, MP_VIEW_PEAK, false, false);
	assert_true(!strncmp(data.buf, "{\"version\":1,\"report\":\"flamegraph\",\"mode\":\"peak\","
				       "\"temporary_threshold\":0,\"inverted\":false,"
				       "\"split_threads\":false,\"temporal\":false,", 128));
	/* Siblings by inclusive bytes; self values only where stacks end. */
	assert_has("\"tree\":{\"depth\":[0,1,2,2],\"location\":[-1,0,1,2],"
		   "\"self_bytes\":[0,7,100,50],\"self_count\":[0,1,1,1]}");
	assert_has("\"threads\":{\"tid\":[100],\"name\":[1]}");
	assert_has("\"locations\":{\"function\":[1,2,3],\"file\":[4,4,0],\"line\":[10,20,0],"
		   "\"module\":[5,5,5]}");
	assert_has("\"strings\":[\"\",\"main\",\"work\",\"</script>\",\"app.c\",\"/bin/app\"]}");
	assert_has("\"peak_bytes\":157,");
	assert_has("\"leaked_bytes\":107,\"leaked_blocks\":2,\"unknown_frees\":0,");
	assert_has("\"capture\":\"out.bin\",\"tool\":\"memprof " PACKAGE_VERSION "\"}");
	assert_has("\"since_attach\":false,");
	assert_null(strstr(data.buf, "\"timeline\""));
	assert_null(strstr(data.buf, "\"thread\""));
}

static void test_flamegraph_inverted(void **state)
{
	(void)state;
	program(0);
	mp_analysis_finish(&A);
	build(MP_HTML_FLAMEGRAPH, MP_VIEW_PEAK, true, false);
	assert_has("\"inverted\":true,");
	/* work <- main, </script> <- main, main. */
	assert_has("\"tree\":{\"depth\":[0,1,2,1,2,1],\"location\":[-1,0,1,2,1,1],"
		   "\"self_bytes\":[0,0,100,0,50,7],\"self_count\":[0,0,1,0,1,1]}");
}

static void test_flamegraph_leaks(void **state)
{
	(void)state;
	program(0);
	mp_analysis_finish(&A);
	build(MP_HTML_FLAMEGRAPH, MP_VIEW_LEAKS, false, false);
	assert_has("\"mode\":\"leaks\"");
	assert_has("\"tree\":{\"depth\":[0,1,2],\"location\":[-1,0,1],"
		   "\"self_bytes\":[0,7,100],\"self_count\":[0,1,1]}");
}

static void test_flamegraph_temporal(void **state)
{
	(void)state;
	program(MP_ANALYSIS_TEMPORAL);
	mp_analysis_finish(&A);
	build(MP_HTML_FLAMEGRAPH, MP_VIEW_LEAKS, false, true);
	assert_has("\"temporal\":true,");
	/* Nodes any interval refers to are listed, with nothing leaked in </script>. */
	assert_has("\"tree\":{\"depth\":[0,1,2,2],\"location\":[-1,0,1,2],"
		   "\"self_bytes\":[0,7,100,0],\"self_count\":[0,1,1,0]}");
	assert_has("\"timeline\":{\"bucket_us\":[0,0],\"hwm_us\":[0],\"hwm_bytes\":[157],"
		   "\"intervals\":{\"node\":[1,2,3],\"alloc\":[0,0,0],\"free\":[-1,-1,1],"
		   "\"count\":[1,1,1],\"bytes\":[7,100,50]}}");
}

static void test_temporal_buckets(void **state)
{
	struct mp_record r = { .type = MP_REC_TRAILER };
	struct mp_trailer t = { 0 };
	(void)state;
	begin(MP_ANALYSIS_TEMPORAL, 1);
	trace(0, 0x1000);
	trace(0, 0x2000);
	ev_alloc(0, MALLOC, 0x10, 10, 1);
	tick(1000, 4096);
	ev_alloc(0, MALLOC, 0x20, 20, 2);
	ev_free(0, FREE, 0x10);
	tick(2000, 8192);
	t.present = true;
	t.has_exit_code = true;
	t.exit_code = 3;
	t.duration_us = 2500;
	r.u.trailer = &t;
	feed(&r);
	mp_analysis_finish(&A);
	build(MP_HTML_FLAMEGRAPH, MP_VIEW_PEAK, false, true);
	/* The last boundary is the end of tracking. */
	assert_has("\"bucket_us\":[0,1000,2500],\"hwm_us\":[0,1000],\"hwm_bytes\":[10,30],");
	assert_has("\"memory\":{\"time_us\":[1000,2000],\"rss\":[4096,8192],\"heap\":[10,20],"
		   "\"heap_max\":[10,30]}");
	assert_has("\"exit\":\"exited with status 3\",");
	assert_has("\"duration_us\":2500,");
	/* Stacks of unsymbolized ips: the address stands for the function. */
	assert_has("\"strings\":[\"\",\"0x2000\",\"0x1000\"]");
}

static void test_table(void **state)
{
	(void)state;
	program(MP_ANALYSIS_SPLIT_THREADS);
	thread_rec(1, 101, "worker");
	ev_alloc(1, MALLOC, 0x40, 1000, 2);
	ev_alloc(1, MMAP, 0x100000, 4096, 2);
	mp_analysis_finish(&A);
	build(MP_HTML_TABLE, MP_VIEW_LEAKS, false, false);
	assert_has("\"report\":\"table\",\"mode\":\"leaks\",");
	assert_has("\"split_threads\":true,");
	assert_has("\"kinds\":[\"mmap\",\"malloc\"],\"rows\":{\"thread\":[1,1,0,0],\"kind\":[0,1,1,1],"
		   "\"location\":[0,0,0,1],\"bytes\":[4096,1000,100,7],\"count\":[1,1,1,1]}");
	assert_has("\"threads\":{\"tid\":[100,101],\"name\":[1,2]}");
	assert_has("\"strings\":[\"\",\"main\",\"worker\",\"work\",\"app.c\",\"/bin/app\"]");
	assert_null(strstr(data.buf, "\"tree\""));
}

static void test_bad_options(void **state)
{
	struct mp_html_opts o = MP_HTML_OPTS_INIT;
	(void)state;
	program(0);
	mp_analysis_finish(&A);
	o.temporal = true;
	assert_int_equal(mp_html_data(&A, &o, &data, &err), -1);
	assert_string_equal(err.buf, "a temporal report needs an analysis with intervals");
	strbuf_reset(&err);
	o.view = MP_VIEW_TEMPORARY;
	assert_int_equal(mp_html_data(&A, &o, &data, &err), -1);
	assert_string_equal(err.buf,
			    "a temporal report shows the peak or the leaks, not temporary allocations");
	strbuf_reset(&err);
	o.report = MP_HTML_TABLE;
	assert_int_equal(mp_html_data(&A, &o, &data, &err), -1);
	assert_string_equal(err.buf, "a table report cannot be temporal");
	assert_int_equal(data.len, 0);
}

/* The pages: the shipped templates with the data, hostile text escaped. */
static void test_render(void **state)
{
	struct mp_html_opts o = MP_HTML_OPTS_INIT;
	struct strbuf page = STRBUF_INIT;
	const char *start;
	(void)state;
	program(0);
	mp_analysis_finish(&A);
	assert_int_equal(mp_html_render(&A, &o, MP_SRCDIR "/share/templates", &page, &err), 0);
	assert_null(strstr(page.buf, "<!--memprof:"));
	start = strstr(page.buf, "<script type=\"application/json\" id=\"memprof-data\">{\"version\":1,");
	assert_non_null(start);
	assert_non_null(strstr(start, "\\u003c/script\\u003e"));
	assert_null(strstr(start, "\"</script>\""));
	strbuf_reset(&page);
	o.report = MP_HTML_TABLE;
	assert_int_equal(mp_html_render(&A, &o, MP_SRCDIR "/share/templates", &page, &err), 0);
	assert_non_null(strstr(page.buf, "\"report\":\"table\""));
	strbuf_reset(&page);
	assert_int_equal(mp_html_render(&A, &o, "/nonexistent/templates", &page, &err), -1);
	assert_string_equal(err.buf, "cannot read template '/nonexistent/templates/table.html': "
				     "No such file or directory");
	assert_int_equal(page.len, 0);
	strbuf_release(&page);
}

/*
 * The bounded tree (lib/report/html-tree.h) of the program above with room
 * for 3 nodes: main's children merge into one node of merged frames with
 * their totals; with the timeline, its intervals go to that node too, and
 * each window's total stays what it was.
 */
static void test_bounded_tree(void **state)
{
	struct mp_html_limits lim = { 3, 100 }, room = { 100, 100 };
	struct mp_html_tree t, all;
	(void)state;
	program(MP_ANALYSIS_TEMPORAL);
	mp_analysis_finish(&A);
	mp_html_tree_build(&all, &A, MP_VIEW_PEAK, false, false, true, &room);
	assert_int_equal(all.n, 4);
	assert_int_equal(all.merged, 0);
	mp_html_tree_build(&t, &A, MP_VIEW_PEAK, false, false, true, &lim);
	assert_int_equal(t.n, 3);
	assert_int_equal(t.merged, 1);
	assert_int_equal(t.frames_merged, 2);
	assert_int_equal(t.nodes[1].self.bytes, 7);          /* main */
	assert_int_equal(t.nodes[2].location, MP_HTML_MERGED_LOC);
	assert_int_equal(t.nodes[2].depth, 2);
	assert_int_equal(t.nodes[2].self.bytes, 150);        /* work and </script> at the peak */
	assert_int_equal(t.nodes[2].self.count, 2);
	/* The intervals of both merged nodes are on node 2 now; the bytes are the same. */
	{
		uint64_t sum_all = 0, sum = 0;
		for (size_t i = 0; i < all.niv; i++)
			sum_all += all.iv[i].c.bytes;
		for (size_t i = 0; i < t.niv; i++) {
			assert_true(t.iv[i].node == 1 || t.iv[i].node == 2);
			sum += t.iv[i].c.bytes;
		}
		assert_int_equal(sum, sum_all);
	}
	mp_html_tree_release(&t);
	mp_html_tree_release(&all);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_flamegraph_peak, reset, done),
		cmocka_unit_test_setup_teardown(test_flamegraph_inverted, reset, done),
		cmocka_unit_test_setup_teardown(test_flamegraph_leaks, reset, done),
		cmocka_unit_test_setup_teardown(test_flamegraph_temporal, reset, done),
		cmocka_unit_test_setup_teardown(test_temporal_buckets, reset, done),
		cmocka_unit_test_setup_teardown(test_table, reset, done),
		cmocka_unit_test_setup_teardown(test_bad_options, reset, done),
		cmocka_unit_test_setup_teardown(test_render, reset, done),
		cmocka_unit_test_setup_teardown(test_bounded_tree, reset, done),
	};
	return cmocka_run_group_tests(tests, NULL, NULL) ? 1 : 0;
}
