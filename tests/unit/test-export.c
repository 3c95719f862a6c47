/*
 * Unit tests for lib/export on hand-built analyses: the pprof file decoded
 * again with protobuf-c (one Profile, however many messages were written),
 * folded stacks, CSV quoting, speedscope, and the sink (gzip, errors, what
 * it leaves behind).
 */
#include <config.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "lib/export/export.h"
#include "lib/export/profile.pb-c.h"
#include "lib/export/sink.h"

#include "tests/unit/analysis-fixture.h"

static char path[256];
static struct strbuf sb = STRBUF_INIT;

static int setup(void **state)
{
	(void)state;
	snprintf(path, sizeof(path), "%s/memprof-test-export-%d.out",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
	unlink(path);
	return 0;
}

static int teardown(void **state)
{
	unlink(path);
	return end(state);
}

/*
 * A program: main (module /bin/p, build-id 0xab 0xcd) calls load (lines
 * 10, then 11 in a second ip) which calls xmalloc, inlined into load at the
 * second ip; thread 0 "main" and thread 1 "worker, \"2\"" (a comma and
 * quotes). Thread 0: 100 B at main>load:10, kept; 3 x 8 B at
 * main>load:11>xmalloc, 2 freed. Thread 1: 1000 B at main>load:10, freed.
 * Peak: 100 + 24 + 1000 = 1124 B in 5 blocks; leaks: 108 B in 2.
 */
static void program(unsigned flags)
{
	uint64_t s_main, s_load, s_xmalloc, s_file;
	uint32_t n_main, n_load10, n_load11;
	struct mp_record r = { .type = MP_REC_MODULE };
	struct mp_segment seg = { 0x1000, 0x2000, 5 };
	static const uint8_t build_id[] = { 0xab, 0xcd };
	begin(flags, 1);
	thread_rec(0, 100, "main");
	thread_rec(1, 101, "worker, \"2\"");
	s_main = string("main");
	s_load = string("load;it|all");
	s_xmalloc = string("xmalloc");
	s_file = string("/src/p.c");
	r.u.module.id = 1;
	r.u.module.base = 0x400000;
	r.u.module.path = "/bin/p";
	r.u.module.path_len = 6;
	r.u.module.build_id = build_id;
	r.u.module.build_id_len = sizeof(build_id);
	r.u.module.nseg = 1;
	r.u.module.seg = &seg;
	feed(&r);
	symbol(0x401000, 1, 0x1000, 1, (struct mp_frame[]){ { s_main, s_file, 5, 0 } });
	symbol(0x401100, 1, 0x1100, 1, (struct mp_frame[]){ { s_load, s_file, 10, 0 } });
	symbol(0x401200, 1, 0x1200, 2,
	       (struct mp_frame[]){ { s_xmalloc, s_file, 30, 0 }, { s_load, s_file, 11, 0 } });
	n_main = trace(0, 0x401000);
	n_load10 = trace(n_main, 0x401100);
	n_load11 = trace(n_main, 0x401200);
	ev_alloc(0, MALLOC, 0x1000, 100, n_load10);
	for (int i = 0; i < 3; i++)
		ev_alloc(0, MALLOC, 0x2000 + 0x10 * (uint64_t)i, 8, n_load11);
	ev_alloc(1, MALLOC, 0x3000, 1000, n_load10);
	ev_free(1, FREE, 0x3000);
	ev_free(0, FREE, 0x2000);
	ev_free(0, FREE, 0x2010);
	mp_analysis_finish(&A);
}

/* Export A as format/view into path; returns what was written. */
static void export(enum mp_export_format f, enum mp_view view)
{
	struct mp_export_opts o = { f, view };
	struct mp_sink s;
	struct strbuf err = STRBUF_INIT;
	unlink(path);
	assert_int_equal(mp_sink_open(&s, path, false, mp_export_format_gzip(f), &err), 0);
	assert_int_equal(mp_export_write(&A, &o, &s), 0);
	assert_int_equal(mp_sink_close(&s, true, &err), 0);
	strbuf_reset(&sb);
	assert_int_equal(strbuf_read_file(&sb, path, 0), 0);
	strbuf_release(&err);
}

static void gunzip(struct strbuf *out)
{
	z_stream z = { 0 };
	unsigned char buf[4096];
	int r;
	assert_int_equal(inflateInit2(&z, 15 + 16), Z_OK);
	z.next_in = (unsigned char *)sb.buf;
	z.avail_in = (uInt)sb.len;
	do {
		z.next_out = buf;
		z.avail_out = sizeof(buf);
		r = inflate(&z, Z_NO_FLUSH);
		assert_true(r == Z_OK || r == Z_STREAM_END);
		strbuf_add(out, buf, sizeof(buf) - z.avail_out);
	} while (r != Z_STREAM_END);
	assert_int_equal(z.avail_in, 0);
	inflateEnd(&z);
}

typedef Perftools__Profiles__Profile Profile;

static const char *str(const Profile *p, int64_t i)
{
	assert_true(i >= 0 && (size_t)i < p->n_string_table);
	return p->string_table[i];
}

static const Perftools__Profiles__Function *function(const Profile *p, uint64_t id)
{
	for (size_t i = 0; i < p->n_function; i++)
		if (p->function[i]->id == id)
			return p->function[i];
	fail_msg("no function %llu", (unsigned long long)id);
	return NULL;
}

static const Perftools__Profiles__Location *location(const Profile *p, uint64_t id)
{
	for (size_t i = 0; i < p->n_location; i++)
		if (p->location[i]->id == id)
			return p->location[i];
	fail_msg("no location %llu", (unsigned long long)id);
	return NULL;
}

/* "fn:line fn:line|fn:line ..." for a sample's locations, innermost first. */
static void describe(const Profile *p, const Perftools__Profiles__Sample *s, struct strbuf *out)
{
	for (size_t i = 0; i < s->n_location_id; i++) {
		const Perftools__Profiles__Location *l = location(p, s->location_id[i]);
		if (i)
			strbuf_addch(out, '|');
		for (size_t k = 0; k < l->n_line; k++)
			strbuf_addf(out, "%s%s:%lld", k ? " " : "",
				    str(p, function(p, l->line[k]->function_id)->name),
				    (long long)l->line[k]->line);
	}
}

static void test_pprof(void **state)
{
	struct strbuf raw = STRBUF_INIT, d = STRBUF_INIT;
	Profile *p;
	int64_t sums[4] = { 0 };
	(void)state;
	program(MP_ANALYSIS_SPLIT_THREADS);
	export(MP_EXPORT_PPROF, MP_VIEW_PEAK);
	assert_int_equal((unsigned char)sb.buf[0], 0x1f); /* gzip */
	gunzip(&raw);
	p = perftools__profiles__profile__unpack(NULL, raw.len, (const uint8_t *)raw.buf);
	assert_non_null(p);
	assert_string_equal(p->string_table[0], "");
	assert_int_equal(p->n_sample_type, 4);
	assert_string_equal(str(p, p->sample_type[0]->type), "alloc_objects");
	assert_string_equal(str(p, p->sample_type[1]->unit), "bytes");
	assert_string_equal(str(p, p->sample_type[3]->type), "inuse_space");
	assert_string_equal(str(p, p->default_sample_type), "inuse_space");
	assert_int_equal(p->period, 1);
	/* Every string once: the stream added each when first used. */
	for (size_t i = 0; i < p->n_string_table; i++)
		for (size_t k = i + 1; k < p->n_string_table; k++)
			assert_true(strcmp(p->string_table[i], p->string_table[k]) || !*p->string_table[i]);
	assert_int_equal(p->n_mapping, 1);
	assert_int_equal(p->mapping[0]->id, 1);
	assert_int_equal(p->mapping[0]->memory_start, 0x401000);
	assert_int_equal(p->mapping[0]->memory_limit, 0x403000);
	assert_string_equal(str(p, p->mapping[0]->filename), "/bin/p");
	assert_string_equal(str(p, p->mapping[0]->build_id), "abcd");
	/* Three ips, three locations; the second holds the inlined xmalloc. */
	assert_int_equal(p->n_location, 3);
	assert_int_equal(p->n_function, 3);
	assert_int_equal(p->n_sample, 3); /* a slot per (stack, thread) */
	for (size_t i = 0; i < p->n_sample; i++) {
		const Perftools__Profiles__Sample *s = p->sample[i];
		assert_int_equal(s->n_value, 4);
		for (int v = 0; v < 4; v++)
			sums[v] += s->value[v];
		assert_int_equal(s->n_label, 2);
		assert_string_equal(str(p, s->label[0]->key), "allocator");
		assert_string_equal(str(p, s->label[0]->str), "malloc");
		assert_string_equal(str(p, s->label[1]->key), "thread");
		strbuf_reset(&d);
		describe(p, s, &d);
		if (s->value[1] == 24) {
			assert_string_equal(d.buf, "xmalloc:30 load;it|all:11|main:5");
			assert_string_equal(str(p, s->label[1]->str), "100 (main)");
			assert_int_equal(location(p, s->location_id[0])->address, 0x4011ff);
			assert_int_equal(location(p, s->location_id[0])->mapping_id, 1);
		} else {
			assert_string_equal(d.buf, "load;it|all:10|main:5");
		}
	}
	/* 5 allocations of 1124 B; the peak, 1124 B in 5 blocks. */
	assert_int_equal(sums[0], 5);
	assert_int_equal(sums[1], 1124);
	assert_int_equal(sums[2], 5);
	assert_int_equal(sums[3], 1124);
	assert_string_equal(str(p, function(p, 1)->filename), "/src/p.c");
	perftools__profiles__profile__free_unpacked(p, NULL);

	/* Leaks: 108 B in 2; merged threads carry no thread label. */
	mp_analysis_release(&A);
	program(0);
	export(MP_EXPORT_PPROF, MP_VIEW_LEAKS);
	strbuf_reset(&raw);
	gunzip(&raw);
	p = perftools__profiles__profile__unpack(NULL, raw.len, (const uint8_t *)raw.buf);
	assert_non_null(p);
	memset(sums, 0, sizeof(sums));
	for (size_t i = 0; i < p->n_sample; i++) {
		sums[2] += p->sample[i]->value[2];
		sums[3] += p->sample[i]->value[3];
		assert_int_equal(p->sample[i]->n_label, 1);
	}
	assert_int_equal(sums[2], 2);
	assert_int_equal(sums[3], 108);
	perftools__profiles__profile__free_unpacked(p, NULL);
	strbuf_release(&raw);
	strbuf_release(&d);
}

static void test_folded(void **state)
{
	(void)state;
	program(0);
	export(MP_EXPORT_FOLDED, MP_VIEW_PEAK);
	/* Names merge lines of one function: load;10 and load:11 are one frame. */
	assert_string_equal(sb.buf, "main;load\\x3bit|all 1100\n"
				    "main;load\\x3bit|all;xmalloc 24\n");
	mp_analysis_release(&A);
	program(MP_ANALYSIS_SPLIT_THREADS);
	export(MP_EXPORT_FOLDED, MP_VIEW_LEAKS);
	assert_string_equal(sb.buf, "100 (main);main;load\\x3bit|all 100\n"
				    "100 (main);main;load\\x3bit|all;xmalloc 8\n");
}

static void test_csv(void **state)
{
	(void)state;
	program(MP_ANALYSIS_SPLIT_THREADS);
	export(MP_EXPORT_CSV, MP_VIEW_PEAK);
	assert_string_equal(sb.buf,
		"allocator,num_allocations,size,tid,thread_name,stack_trace\n"
		"MALLOC,1,100,100,100 (main),load\\x3bit\\x7call;/src/p.c;10|main;/src/p.c;5\n"
		"MALLOC,3,24,100,100 (main),xmalloc;/src/p.c;30|load\\x3bit\\x7call;/src/p.c;11|main;/src/p.c;5\n"
		"MALLOC,1,1000,101,\"101 (worker, \"\"2\"\")\",load\\x3bit\\x7call;/src/p.c;10|main;/src/p.c;5\n");
}

static void test_speedscope(void **state)
{
	(void)state;
	program(0);
	export(MP_EXPORT_SPEEDSCOPE, MP_VIEW_LEAKS);
	assert_non_null(strstr(sb.buf, "\"$schema\":\"https://www.speedscope.app/file-format-schema.json\""));
	/* One frame per location; inlined xmalloc is a frame of its own. */
	assert_non_null(strstr(sb.buf, "\"frames\":[{\"name\":\"main\",\"file\":\"/src/p.c\",\"line\":5},"
				       "{\"name\":\"load;it|all\",\"file\":\"/src/p.c\",\"line\":10},"
				       "{\"name\":\"load;it|all\",\"file\":\"/src/p.c\",\"line\":11},"
				       "{\"name\":\"xmalloc\",\"file\":\"/src/p.c\",\"line\":30}]"));
	assert_non_null(strstr(sb.buf, "{\"type\":\"sampled\",\"name\":\"Memory\",\"unit\":\"bytes\","
				       "\"samples\":[[0,1],[0,2,3]],\"weights\":[100,8],"
				       "\"startValue\":0,\"endValue\":108}"));
	assert_non_null(strstr(sb.buf, "\"name\":\"Allocations\",\"unit\":\"none\","
				       "\"samples\":[[0,1],[0,2,3]],\"weights\":[1,1]"));
	assert_int_equal(sb.buf[sb.len - 1], '\n');
}

static void test_formats(void **state)
{
	(void)state;
	assert_int_equal(mp_export_format_parse("pprof"), MP_EXPORT_PPROF);
	assert_int_equal(mp_export_format_parse("csv"), MP_EXPORT_CSV);
	assert_int_equal(mp_export_format_parse("CSV"), -1);
	assert_int_equal(mp_export_format_parse(""), -1);
	assert_string_equal(mp_export_format_suffix(MP_EXPORT_SPEEDSCOPE), ".speedscope.json");
	assert_string_equal(mp_export_format_suffix(MP_EXPORT_PPROF), ".pb.gz");
	strbuf_reset(&sb);
	mp_export_format_list(&sb);
	assert_string_equal(sb.buf, "pprof, speedscope, folded, csv");
	begin(0, 1); /* for teardown */
}

static void test_sink(void **state)
{
	struct mp_sink s;
	struct strbuf err = STRBUF_INIT, raw = STRBUF_INIT;
	struct stat st;
	char big[3 * MP_SINK_CHUNK];
	(void)state;
	begin(0, 1);
	/* Larger than a chunk, through gzip and back. */
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (char)('a' + i % 7);
	assert_int_equal(mp_sink_open(&s, path, false, true, &err), 0);
	mp_sink_write(&s, big, sizeof(big));
	assert_int_equal(mp_sink_close(&s, true, &err), 0);
	strbuf_reset(&sb);
	assert_int_equal(strbuf_read_file(&sb, path, 0), 0);
	gunzip(&raw);
	assert_int_equal(raw.len, sizeof(big));
	assert_memory_equal(raw.buf, big, sizeof(big));
	/* No replacing without force. */
	assert_int_equal(mp_sink_open(&s, path, false, false, &err), -1);
	assert_string_equal(strstr(err.buf, "already exists (use -f to overwrite it)"),
			    "already exists (use -f to overwrite it)");
	/* A failed export removes the file it created, not one it wrote over. */
	unlink(path);
	assert_int_equal(mp_sink_open(&s, path, false, false, &err), 0);
	mp_sink_write(&s, "x", 1);
	assert_int_equal(mp_sink_close(&s, false, &err), -1);
	assert_int_equal(stat(path, &st), -1);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(mp_sink_open(&s, path, false, false, &err), 0);
	assert_int_equal(mp_sink_close(&s, true, &err), 0);
	assert_int_equal(mp_sink_open(&s, path, true, false, &err), 0);
	assert_int_equal(mp_sink_close(&s, false, &err), -1);
	assert_int_equal(stat(path, &st), 0);
	if (access("/dev/full", W_OK) == 0) {
		strbuf_reset(&err);
		assert_int_equal(mp_sink_open(&s, "/dev/full", true, false, &err), 0);
		mp_sink_write(&s, big, sizeof(big));
		assert_true(mp_sink_failed(&s));
		assert_int_equal(mp_sink_close(&s, true, &err), -1);
		assert_string_equal(err.buf, "cannot write '/dev/full': No space left on device");
	}
	strbuf_release(&err);
	strbuf_release(&raw);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_pprof, setup, teardown),
		cmocka_unit_test_setup_teardown(test_folded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_csv, setup, teardown),
		cmocka_unit_test_setup_teardown(test_speedscope, setup, teardown),
		cmocka_unit_test_setup_teardown(test_formats, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sink, setup, teardown),
	};
	int failed = cmocka_run_group_tests(tests, NULL, NULL);
	strbuf_release(&sb);
	return failed ? 1 : 0;
}
