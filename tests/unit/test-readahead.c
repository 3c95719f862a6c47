/*
 * Unit tests of lib/format/readahead.c: with a thread reading the file and
 * opening its blocks ahead (mp_reader_read_ahead()), the reader must give
 * exactly the records, and the data they point to, that reading the capture
 * directly gives, in the same order, and end the same way (whole, cut or
 * damaged, with the same message), whatever the capture's blocks.
 */
#include <config.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/format/decode.h"
#include "lib/format/format.h"
#include "lib/format/reader.h"
#include "lib/format/writer.h"
#include "lib/util/xalloc.h"
#include "tests/unit/files.h"

/* Every field of a record, with the bytes its pointers lead to, as text. */
static void describe(struct strbuf *sb, const struct mp_record *rec)
{
	strbuf_addf(sb, "%d ", rec->type);
	switch (rec->type) {
	case MP_REC_SWITCH:
		strbuf_addf(sb, "t%u", rec->thread);
		break;
	case MP_REC_ALLOC: case MP_REC_FREE:
		strbuf_addf(sb, "t%u k%u r%d %llx %llu %llu", rec->thread, rec->u.ev.kind, rec->u.ev.ranged,
			    (unsigned long long)rec->u.ev.addr, (unsigned long long)rec->u.ev.size,
			    (unsigned long long)rec->u.ev.stack);
		break;
	case MP_REC_TRACE:
		strbuf_addf(sb, "%llu %llu %llx", (unsigned long long)rec->u.trace.index,
			    (unsigned long long)rec->u.trace.parent,
			    (unsigned long long)rec->u.trace.ip);
		break;
	case MP_REC_THREAD:
		strbuf_addf(sb, "%u %llu ", rec->u.thread.index, (unsigned long long)rec->u.thread.tid);
		strbuf_add_cquoted(sb, rec->u.thread.name, rec->u.thread.name_len);
		break;
	case MP_REC_MODULE:
		strbuf_addf(sb, "%llu %llx ", (unsigned long long)rec->u.module.id,
			    (unsigned long long)rec->u.module.base);
		strbuf_add_cquoted(sb, rec->u.module.path, rec->u.module.path_len);
		for (size_t i = 0; i < rec->u.module.build_id_len; i++)
			strbuf_addf(sb, "%02x", rec->u.module.build_id[i]);
		for (size_t i = 0; i < rec->u.module.nseg; i++)
			strbuf_addf(sb, " %llx+%llx:%u", (unsigned long long)rec->u.module.seg[i].vaddr,
				    (unsigned long long)rec->u.module.seg[i].memsz,
				    rec->u.module.seg[i].flags);
		break;
	case MP_REC_STRING:
		strbuf_addf(sb, "%llu ", (unsigned long long)rec->u.string.id);
		strbuf_add_cquoted(sb, rec->u.string.text, rec->u.string.len);
		break;
	case MP_REC_SYMBOL:
		strbuf_addf(sb, "%llx %llu %llx", (unsigned long long)rec->u.symbol.ip,
			    (unsigned long long)rec->u.symbol.module,
			    (unsigned long long)rec->u.symbol.offset);
		for (size_t i = 0; i < rec->u.symbol.nframes; i++)
			strbuf_addf(sb, " %llu/%llu:%u:%u",
				    (unsigned long long)rec->u.symbol.frames[i].function,
				    (unsigned long long)rec->u.symbol.frames[i].file,
				    rec->u.symbol.frames[i].line, rec->u.symbol.frames[i].column);
		break;
	case MP_REC_TICK:
		strbuf_addf(sb, "%llu %llu", (unsigned long long)rec->u.tick.time_us,
			    (unsigned long long)rec->u.tick.rss);
		break;
	case MP_REC_EXIT: case MP_REC_MESSAGE:
		strbuf_addf(sb, "%x %lld ", rec->u.marker.has, (long long)rec->u.marker.status);
		if (rec->u.marker.text)
			strbuf_add_cquoted(sb, rec->u.marker.text, rec->u.marker.text_len);
		break;
	case MP_REC_TRAILER:
		strbuf_addf(sb, "%d %llu", rec->u.trailer->exit_code,
			    (unsigned long long)rec->u.trailer->n_allocs);
		break;
	default:
		break;
	}
	strbuf_addch(sb, '\n');
}

/*
 * A capture with every kind of record that points to data, spread through
 * many blocks and batches, some bigger than a batch's arena.
 */
static char *write_capture(uint64_t nev, size_t big)
{
	char *path = tmp_path();
	struct mp_writer w;
	struct mp_header h = { .pid = 7 };
	struct mp_trailer t = { .exit_code = 3, .n_allocs = nev };
	struct mp_segment seg[3] = { { 0, 0x1000, 4 }, { 0x1000, 0x2000, 5 }, { 0x4000, 8, 6 } };
	struct mp_frame fr[4] = { { 1, 2, 10, 3 }, { 0, 0, 0, 0 }, { 3, 2, 7, 1 }, { 2, 1, 1, 1 } };
	size_t fill = big > 400 ? big : 400; /* strings below take up to 350 bytes */
	char *name = xmalloc(fill + 1);
	uint8_t bid[20];
	uint64_t strings = 0;
	for (size_t i = 0; i < fill; i++)
		name[i] = (char)('a' + i % 26);
	name[fill] = 0;
	for (int i = 0; i < 20; i++)
		bid[i] = (uint8_t)(i * 7);
	assert_int_equal(mp_writer_open(&w, path, MP_WRITER_FORCE), 0);
	mp_writer_header(&w, &h);
	for (uint64_t i = 1; i <= 40; i++)
		mp_writer_trace(&w, i - 1, 0x400000 + i);
	for (uint64_t i = 0; i < nev; i++) {
		uint32_t th = (uint32_t)(i % 5);
		mp_writer_alloc(&w, th, MP_KIND_MALLOC, 0x10000 + i * 48, 1 + i % 777, 1 + i % 40);
		if (i % 3)
			mp_writer_free(&w, th, MP_KIND_FREE, 0x10000 + (i - 1) * 48);
		if (i % 997 == 0) {
			char label[32];
			int n = snprintf(label, sizeof(label), "thread-%llu", (unsigned long long)i);
			struct mp_marker m = { .has = MP_HAS_TEXT | MP_HAS_STATUS, .status = -(int64_t)i,
					       .text = label, .text_len = (size_t)n };
			mp_writer_thread(&w, th, 1000 + i, label);
			mp_writer_string(&w, name + i % 50, 1 + i % 300);
			strings++;
			mp_writer_symbol(&w, 0x400000 + i, 1, i, fr, 1 + i % 4);
			mp_writer_module(&w, i, 0x7f0000000000 + i * 4096, label, bid, sizeof(bid),
					 seg, 1 + i % 3);
			mp_writer_marker(&w, MP_TAG_MESSAGE, &m);
			mp_writer_tick(&w, i, i * 4096);
		}
		if (i == nev / 2) {
			/* Records larger than an arena, one right after the other. */
			mp_writer_string(&w, name, big);
			name[big] = 0;
			mp_writer_module(&w, 99999, 0x1000, name, bid, sizeof(bid), seg, 3);
			name[big] = (char)('a' + big % 26);
			strings++;
		}
	}
	mp_writer_trailer(&w, &t);
	assert_int_equal(mp_writer_close(&w), 0);
	free(name);
	(void)strings;
	return path;
}

/* Every record of a capture as text, and how the reading ended. */
struct readout {
	struct strbuf text;
	uint64_t n;
	enum mp_read_status status;
	char err[512];
};

static void read_all(const char *path, bool ahead, struct readout *o)
{
	struct mp_reader r;
	struct mp_record rec;
	strbuf_init(&o->text, 0);
	o->n = 0;
	assert_int_equal(mp_reader_open(&r, path), 0);
	if (ahead) {
		assert_int_equal(mp_reader_read_ahead(&r), 0);
		assert_non_null(r.ra);
	}
	while (mp_reader_next(&r, &rec)) {
		describe(&o->text, &rec);
		o->n++;
	}
	o->status = r.status;
	snprintf(o->err, sizeof(o->err), "%s", r.err.buf);
	mp_reader_release(&r);
}

static void expect_same(const char *path)
{
	struct readout direct, ahead;
	read_all(path, false, &direct);
	read_all(path, true, &ahead);
	assert_int_equal(ahead.status, direct.status);
	assert_string_equal(ahead.err, direct.err);
	assert_int_equal(ahead.n, direct.n);
	assert_int_equal(ahead.text.len, direct.text.len);
	assert_memory_equal(ahead.text.buf, direct.text.buf, direct.text.len);
	strbuf_release(&direct.text);
	strbuf_release(&ahead.text);
}

static void test_same_records(void **state)
{
	char *path = write_capture(200000, 200000);
	struct readout o;
	(void)state;
	expect_same(path);
	read_all(path, true, &o);
	assert_int_equal(o.status, MP_READ_OK);
	assert_true(o.n > 400000);
	strbuf_release(&o.text);
	unlink(path);
	free(path);
}

/* The golden captures: every record type, blocks of every codec, records outside blocks. */
static void test_goldens(void **state)
{
	const char *names[] = { "basic.mprof", "raw.mprof", "basic-v3.mprof", "raw-v3.mprof",
				"basic-v2.mprof", "raw-v2.mprof", "basic-v1.mprof" };
	(void)state;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/tests/data/%s", MP_SRCDIR, names[i]);
		expect_same(path);
	}
}

/* The caller may stop early: the reading thread must stop too, not hang. */
static void test_stop_early(void **state)
{
	char *path = write_capture(300000, 100);
	struct mp_reader r;
	struct mp_record rec;
	(void)state;
	assert_int_equal(mp_reader_open(&r, path), 0);
	assert_int_equal(mp_reader_read_ahead(&r), 0);
	assert_int_equal(mp_reader_next(&r, &rec), 1);
	mp_reader_release(&r);
	/* Nothing at all taken: the same. */
	assert_int_equal(mp_reader_open(&r, path), 0);
	assert_int_equal(mp_reader_read_ahead(&r), 0);
	mp_reader_release(&r);
	unlink(path);
	free(path);
}

/* Cut anywhere, or with a byte changed: every record before arrives, then the same reason. */
static void test_cut_and_damaged(void **state)
{
	char *path = write_capture(50000, 100), *bad = tmp_path();
	size_t size;
	uint8_t *buf;
	(void)state;
	buf = read_file(path, &size);
	for (int k = 0; k < 12; k++) {
		FILE *out = fopen(bad, "wb");
		size_t at = size / 13 * (size_t)(k + 1);
		if (k % 2) {
			assert_int_equal(fwrite(buf, 1, at, out), at);
		} else {
			buf[at] ^= 0x40;
			assert_int_equal(fwrite(buf, 1, size, out), size);
			buf[at] ^= 0x40;
		}
		fclose(out);
		expect_same(bad);
	}
	free(buf);
	unlink(path);
	unlink(bad);
	free(path);
	free(bad);
}

/* A capture written without compression: records outside blocks, in segments of their own. */
static void test_uncompressed(void **state)
{
	char *path = tmp_path();
	struct mp_writer w;
	struct mp_header h = { .pid = 7 };
	(void)state;
	assert_int_equal(mp_writer_open(&w, path, MP_WRITER_NO_COMPRESS | MP_WRITER_SERIALS), 0);
	mp_writer_header(&w, &h);
	mp_writer_trace(&w, 0, 0x400000);
	for (uint64_t i = 0; i < 300000; i++) {
		mp_writer_alloc(&w, (uint32_t)(i % 3), MP_KIND_MALLOC, 0x10000 + i * 16, 1 + i % 99, 1);
		if (i % 2)
			mp_writer_free(&w, 0, MP_KIND_FREE, 0x10000 + (i - 1) * 16);
	}
	assert_int_equal(mp_writer_close(&w), 0);
	expect_same(path);
	unlink(path);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_records),
		cmocka_unit_test(test_goldens),
		cmocka_unit_test(test_stop_early),
		cmocka_unit_test(test_cut_and_damaged),
		cmocka_unit_test(test_uncompressed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
