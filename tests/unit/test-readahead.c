/*
 * Unit tests of lib/readahead: the batches a reading thread hands over must
 * hold exactly the records, and the data they point to, that reading the
 * capture directly gives, in the same order, whatever the batch boundaries.
 */
#include <config.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/format/decode.h"
#include "lib/format/format.h"
#include "lib/format/readahead.h"
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

static void read_direct(const char *path, struct strbuf *sb, uint64_t *nrec)
{
	struct mp_reader r;
	struct mp_record rec;
	assert_int_equal(mp_reader_open(&r, path), 0);
	*nrec = 0;
	while (mp_reader_next(&r, &rec)) {
		describe(sb, &rec);
		(*nrec)++;
	}
	assert_int_equal(r.status, MP_READ_OK);
	mp_reader_release(&r);
}

static void test_same_records(void **state)
{
	char *path = write_capture(200000, 200000);
	struct strbuf direct, ahead;
	struct mp_reader r;
	struct mp_readahead *ra;
	struct mp_batch_view v;
	uint64_t nrec, seen = 0, batches = 0, last_n = 0, base;
	(void)state;
	strbuf_init(&direct, 0);
	strbuf_init(&ahead, 0);
	read_direct(path, &direct, &nrec);
	assert_int_equal(mp_reader_open(&r, path), 0);
	base = r.n_records; /* the header, read by mp_reader_open() */
	ra = mp_readahead_start(&r);
	assert_non_null(ra);
	while (mp_readahead_next(ra, &v)) {
		assert_true(v.n > 0);
		for (size_t i = 0; i < v.n; i++)
			describe(&ahead, &v.recs[i]);
		seen += v.n;
		batches++;
		/* The progress figures grow with the batches and count what was handed over. */
		assert_true(v.n_records >= last_n);
		assert_int_equal(v.n_records, base + seen);
		last_n = v.n_records;
	}
	mp_readahead_finish(ra);
	assert_int_equal(r.status, MP_READ_OK);
	assert_int_equal(seen, nrec);
	assert_true(batches > 10);
	assert_int_equal(ahead.len, direct.len);
	assert_memory_equal(ahead.buf, direct.buf, direct.len);
	mp_reader_release(&r);
	strbuf_release(&direct);
	strbuf_release(&ahead);
	unlink(path);
	free(path);
}

/* The caller may stop early: the reading thread must stop too, not hang. */
static void test_stop_early(void **state)
{
	char *path = write_capture(300000, 100);
	struct mp_reader r;
	struct mp_readahead *ra;
	struct mp_batch_view v;
	(void)state;
	assert_int_equal(mp_reader_open(&r, path), 0);
	ra = mp_readahead_start(&r);
	assert_non_null(ra);
	assert_int_equal(mp_readahead_next(ra, &v), 1);
	mp_readahead_finish(ra);
	/* Nothing at all taken: the same. */
	ra = mp_readahead_start(&r);
	assert_non_null(ra);
	mp_readahead_finish(ra);
	mp_reader_release(&r);
	unlink(path);
	free(path);
}

/* A truncated capture: every whole record arrives, then the reader's status says why it ended. */
static void test_truncated(void **state)
{
	char *path = write_capture(50000, 100), *cut = tmp_path();
	struct strbuf direct, ahead;
	struct mp_reader r;
	struct mp_record rec;
	struct mp_readahead *ra;
	struct mp_batch_view v;
	FILE *out;
	enum mp_read_status status;
	char err[512];
	size_t size;
	uint8_t *buf;
	(void)state;
	buf = read_file(path, &size);
	out = fopen(cut, "wb");
	assert_int_equal(fwrite(buf, 1, size * 2 / 3, out), size * 2 / 3);
	fclose(out);
	free(buf);

	strbuf_init(&direct, 0);
	strbuf_init(&ahead, 0);
	assert_int_equal(mp_reader_open(&r, cut), 0);
	while (mp_reader_next(&r, &rec))
		describe(&direct, &rec);
	assert_int_not_equal(r.status, MP_READ_OK);
	status = r.status;
	snprintf(err, sizeof(err), "%s", r.err.buf);
	mp_reader_release(&r);

	assert_int_equal(mp_reader_open(&r, cut), 0);
	ra = mp_readahead_start(&r);
	assert_non_null(ra);
	while (mp_readahead_next(ra, &v))
		for (size_t i = 0; i < v.n; i++)
			describe(&ahead, &v.recs[i]);
	mp_readahead_finish(ra);
	assert_int_equal(r.status, status);
	assert_string_equal(r.err.buf, err);
	assert_int_equal(ahead.len, direct.len);
	assert_memory_equal(ahead.buf, direct.buf, direct.len);
	mp_reader_release(&r);
	strbuf_release(&direct);
	strbuf_release(&ahead);
	unlink(path);
	unlink(cut);
	free(path);
	free(cut);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_records),
		cmocka_unit_test(test_stop_early),
		cmocka_unit_test(test_truncated),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
