/*
 * Unit tests of format 3.0's additions (man/memprof-capture.5): allocation
 * classes (ALLOC_REF), frees by number near the last one or by age in the
 * tag or in byte planes, TICK_DELTA, STRING and SYMBOL of 3.0, and blocks of
 * field streams continued from block to block (codec 3) with the
 * dictionary of stream 5: round trips through the writer and the reader,
 * every record form decoded by hand, splitting and joining, truncation and
 * corruption.
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

#include "lib/format/decode-private.h"
#include "lib/format/decode.h"
#include "lib/format/encode.h"
#include "lib/format/fields.h"
#include "lib/format/format.h"
#include "lib/format/reader.h"
#include "lib/format/writer.h"
#include "lib/util/xalloc.h"
#include "tests/unit/files.h"

/* ---- the decoder on hand-made records ---- */

/* A decoder past a 3.0 header, as if n_seq blocks had been numbered. */
static void decoder_at(struct mp_decoder *d, uint64_t n_seq)
{
	mp_decoder_init(d);
	d->header.major = 3;
	d->seen_header = true;
	d->n_seq = n_seq;
}

/* Decode one record of len bytes; it must take them all. */
static void decode_one(struct mp_decoder *d, const uint8_t *buf, size_t len, struct mp_record *rec)
{
	ssize_t n = mp_decode(d, buf, len, rec);
	if (n != (ssize_t)len)
		fail_msg("decoded %zd of %zu bytes: %s", n, len, d->err.buf);
}

static uint64_t serial_of(const struct mp_record *rec)
{
	assert_true(rec->u.ev.serial);
	return (rec->u.ev.addr & ~MP_SERIAL_ADDR_BASE) >> 4;
}

/* Every form of free: literal, one to three bytes in planes, counted; near and by age; free and realloc. */
/* Ends the block being built: the intervals it may wait, flushed. */
static void end_block(struct mp_writer *w)
{
	size_t before = w->bytes_written;
	for (int i = 0; i < 100 && w->bytes_written == before; i++)
		mp_writer_flush(w);
	assert_true(w->bytes_written > before);
}

static void test_free_forms(void **state)
{
	const uint64_t N = 1ull << 40;
	struct mp_decoder d;
	struct mp_record rec;
	uint8_t buf[16];
	(void)state;
	decoder_at(&d, N);
	/* By age in the tag: the latest block, then the one before. */
	buf[0] = MP_TAG_FREE_AGE_LIT + 0;
	decode_one(&d, buf, 1, &rec);
	assert_int_equal(rec.type, MP_REC_FREE);
	assert_int_equal(rec.u.ev.kind, MP_KIND_FREE);
	assert_int_equal(serial_of(&rec), N - 1);
	buf[0] = MP_TAG_FREE_AGE_LIT + 3;
	decode_one(&d, buf, 1, &rec);
	assert_int_equal(serial_of(&rec), N - 4);
	/* Near in the tag: q = zigzag(delta) - 1, so q 0..3 are -1, +1, -2, +2. */
	buf[0] = MP_TAG_FREE_NEAR_LIT + 0;
	decode_one(&d, buf, 1, &rec);
	assert_int_equal(serial_of(&rec), N - 5);
	buf[0] = MP_TAG_FREE_NEAR_LIT + 3;
	decode_one(&d, buf, 1, &rec);
	assert_int_equal(serial_of(&rec), N - 3);
	/* Age in one, two and three bytes of planes, little-endian. */
	buf[0] = MP_TAG_FREE_AGE_N + 0;
	buf[1] = 200;
	decode_one(&d, buf, 2, &rec);
	assert_int_equal(serial_of(&rec), N - 201);
	buf[0] = MP_TAG_FREE_AGE_N + 1;
	buf[1] = 0x34;
	buf[2] = 0x12;
	decode_one(&d, buf, 3, &rec);
	assert_int_equal(serial_of(&rec), N - 1 - 0x1234);
	buf[0] = MP_TAG_REALLOC_AGE_N + 2;
	buf[1] = 0x56;
	buf[2] = 0x34;
	buf[3] = 0x12;
	decode_one(&d, buf, 4, &rec);
	assert_int_equal(rec.u.ev.kind, MP_KIND_REALLOC);
	assert_int_equal(serial_of(&rec), N - 1 - 0x123456);
	/* Counted: five bytes of age. */
	buf[0] = MP_TAG_FREE_AGE_N + 3;
	buf[1] = 5;
	memcpy(buf + 2, "\x01\x02\x03\x04\x05", 5);
	decode_one(&d, buf, 7, &rec);
	assert_int_equal(serial_of(&rec), N - 1 - 0x0504030201ull);
	/* Near in planes, from the block just freed: q 9 is delta +5; counted, q 2^24 is -(2^23 + 1). */
	buf[0] = MP_TAG_REALLOC_NEAR_N + 0;
	buf[1] = 9;
	decode_one(&d, buf, 2, &rec);
	assert_int_equal(rec.u.ev.kind, MP_KIND_REALLOC);
	assert_int_equal(serial_of(&rec), N - 1 - 0x0504030201ull + 5);
	buf[0] = MP_TAG_FREE_NEAR_N + 3;
	buf[1] = 4;
	memcpy(buf + 2, "\x00\x00\x00\x01", 4);
	decode_one(&d, buf, 6, &rec);
	assert_int_equal(serial_of(&rec), N - 1 - 0x0504030201ull + 5 - (1u << 23) - 1);
	mp_decoder_release(&d);
}

static void expect_bad(const uint8_t *buf, size_t len, uint64_t n_seq, const char *why)
{
	struct mp_decoder d;
	struct mp_record rec;
	ssize_t n;
	decoder_at(&d, n_seq);
	n = mp_decode(&d, buf, len, &rec);
	assert_int_equal(n, -1);
	if (!strstr(d.err.buf, why))
		fail_msg("expected '%s' in '%s'", why, d.err.buf);
	mp_decoder_release(&d);
}

static void expect_short(const uint8_t *buf, size_t len)
{
	struct mp_decoder d;
	struct mp_record rec;
	decoder_at(&d, 1000);
	assert_int_equal(mp_decode(&d, buf, len, &rec), 0);
	assert_int_equal(d.n_seq, 1000);
	mp_decoder_release(&d);
}

static void test_bad_records(void **state)
{
	(void)state;
	/* A class never defined, in the tag and after it. */
	expect_bad((const uint8_t *)"\x60", 1, 10, "an allocation of class 0, but only 0 are defined");
	expect_bad((const uint8_t *)"\x72\x05", 2, 10, "an allocation of class 23");
	/* Ages and near numbers beyond the blocks numbered. */
	expect_bad((const uint8_t *)"\x08", 1, 0, "only 0 blocks were allocated by number");
	expect_bad((const uint8_t *)"\x74\x0a", 2, 10, "age 10, but only 10 blocks");
	expect_bad((const uint8_t *)"\x05", 1, 1, "a deallocation of block 1 by number"); /* +1 */
	expect_bad((const uint8_t *)"\x04", 1, 10, "a deallocation of block -1 by number"); /* -1 */
	/* A count of plane bytes out of 1..8. */
	expect_bad((const uint8_t *)"\x77\x09\x01\x01\x01\x01\x01\x01\x01\x01\x01", 11, 10, "malformed");
	expect_bad((const uint8_t *)"\x77\x00", 2, 10, "malformed");
	/* A change of RSS before any tick. */
	expect_bad((const uint8_t *)"\x73\x01\x02", 3, 10, "a change of RSS before any tick");
	/* Cut short: the decoder waits for more and changes nothing. */
	expect_short((const uint8_t *)"\x75\x01", 2);
	expect_short((const uint8_t *)"\x77\x05\x01\x02", 4);
	expect_short((const uint8_t *)"\x72", 1);
	expect_short((const uint8_t *)"\x73\x01", 2);
}

/* ---- splitting and joining 3.0 records ---- */

static void test_split_join_v3(void **state)
{
	static const uint8_t raw[] = {
		MP_TAG_ALLOC_REF + 3,
		MP_TAG_ALLOC_REF_N, 0x81, 0x01,
		MP_TAG_FREE_NEAR_LIT + 2,
		MP_TAG_FREE_AGE_LIT + 1,
		MP_TAG_FREE_NEAR_N + 0, 7,
		MP_TAG_FREE_AGE_N + 1, 1, 2,
		MP_TAG_REALLOC_NEAR_N + 2, 1, 2, 3,
		MP_TAG_REALLOC_AGE_N + 3, 6, 1, 2, 3, 4, 5, 6,
		MP_TAG_TICK_DELTA, 0x90, 0x4e, 0x03,
	};
	uint8_t out[sizeof(raw)];
	struct mp_fields f;
	const uint8_t *s[MP_FS_COUNT];
	const char *why = NULL;
	(void)state;
	mp_fields_init(&f);
	assert_int_equal(mp_fields_split(&f, raw, sizeof(raw)), 0);
	assert_int_equal(mp_fields_total(&f), sizeof(raw));
	/* Tags, the class beyond the tag's and the count stay in stream 0. */
	assert_int_equal(f.len[MP_FS_TAGS], 9 + 2 + 1);
	assert_int_equal(f.len[MP_FS_NEAR0], 2);
	assert_int_equal(f.len[MP_FS_NEAR1], 1);
	assert_int_equal(f.len[MP_FS_NEAR2], 1);
	assert_int_equal(f.len[MP_FS_AGE0], 2);
	assert_int_equal(f.len[MP_FS_AGE1], 2);
	assert_int_equal(f.len[MP_FS_AGE2], 4);
	assert_int_equal(f.len[MP_FS_OTHER], 3);
	for (int i = 0; i < MP_FS_COUNT; i++)
		s[i] = f.p[i];
	assert_int_equal(mp_fields_join(s, f.len, out, sizeof(raw), false, &why), 0);
	assert_memory_equal(out, raw, sizeof(raw));
	/* A plane short of a byte. */
	f.len[MP_FS_AGE2]--;
	assert_int_equal(mp_fields_join(s, f.len, out, sizeof(raw) - 1, false, &why), -1);
	assert_string_equal(why, "a field stream ends inside a record");
	mp_fields_release(&f);
}

/* ---- through the writer and the reader ---- */

struct ev {
	enum mp_rec_type type;
	unsigned kind, thread;
	uint64_t serial, size, stack;
};

/*
 * Allocations of 70,000 classes (more than the 65,536 a capture defines),
 * each allocated again later, freed in every pattern (at once, in order, in
 * reverse, far back), across three threads and many blocks: every record
 * reads back as written, in each kind of block.
 */
static void test_classes_and_frees(void **state)
{
	const unsigned flags[4] = { MP_WRITER_SERIALS, MP_WRITER_SERIALS | MP_WRITER_ONE_FRAME,
				    MP_WRITER_SERIALS | MP_WRITER_NO_COMPRESS,
				    MP_WRITER_SERIALS | MP_WRITER_FORMAT3 };
	const size_t NC = 70000;
	(void)state;
	for (int c = 0; c < 4; c++) {
		char *path = tmp_path();
		struct mp_writer w;
		struct mp_header h = { .pid = 1 };
		struct mp_reader r;
		struct mp_record rec;
		struct ev *want = xcalloc(8 * NC, sizeof(*want)), *got = want;
		uint64_t serial = 0, *live = xcalloc(2 * NC, sizeof(*live)), nlive = 0;
		size_t n = 0, m = 0;
		assert_int_equal(mp_writer_open(&w, path, flags[c]), 0);
		mp_writer_header(&w, &h);
		for (uint64_t i = 1; i <= 300; i++)
			mp_writer_trace(&w, i - 1, 0x400000 + 16 * i);
		for (int round = 0; round < 2; round++) {
			for (size_t k = 0; k < NC; k++) {
				uint32_t th = (uint32_t)(k % 3);
				unsigned kind = k % 7 ? MP_KIND_MALLOC : MP_KIND_CALLOC;
				uint64_t size = 8 + k / 300, stack = 1 + k % 300;
				mp_writer_alloc(&w, th, kind, 0x100000 + 16 * serial, size, stack);
				want[n++] = (struct ev){ MP_REC_ALLOC, kind, th, serial, size, stack };
				live[nlive++] = serial++;
				if (k % 5 == 0) { /* freed at once */
					nlive--;
					mp_writer_free(&w, th, k % 10 ? MP_KIND_FREE : MP_KIND_REALLOC,
						       0x100000 + 16 * live[nlive]);
					want[n++] = (struct ev){ MP_REC_FREE, k % 10 ? MP_KIND_FREE : MP_KIND_REALLOC,
								 th, live[nlive], 0, 0 };
				}
				if (k % 1000 == 999)
					end_block(&w);
			}
			/* Half the live blocks, in order then in reverse, from far back. */
			for (uint64_t i = 0; i < nlive / 2; i++) {
				uint64_t s = i % 2 ? live[i] : live[nlive / 2 - i];
				unsigned kind = i % 3 ? MP_KIND_FREE : i % 2 ? MP_KIND_REALLOC : MP_KIND_FREE_SIZED;
				if (s == UINT64_MAX)
					continue;
				mp_writer_free(&w, 0, kind, 0x100000 + 16 * s);
				want[n++] = (struct ev){ MP_REC_FREE, kind, 0, s, 0, 0 };
				if (i % 2)
					live[i] = UINT64_MAX;
				else
					live[nlive / 2 - i] = UINT64_MAX;
			}
			m = 0;
			for (uint64_t i = 0; i < nlive; i++)
				if (live[i] != UINT64_MAX)
					live[m++] = live[i];
			nlive = m;
		}
		assert_int_equal(mp_writer_close(&w), 0);
		assert_int_equal(mp_reader_open(&r, path), 0);
		while (mp_reader_next(&r, &rec)) {
			if (rec.type != MP_REC_ALLOC && rec.type != MP_REC_FREE)
				continue;
			assert_true(got < want + n);
			assert_int_equal(rec.type, got->type);
			assert_int_equal(rec.u.ev.kind, got->kind);
			assert_int_equal(rec.thread, got->thread);
			assert_int_equal(serial_of(&rec), got->serial);
			if (rec.type == MP_REC_ALLOC) {
				assert_int_equal(rec.u.ev.size, got->size);
				assert_int_equal(rec.u.ev.stack, got->stack);
			}
			got++;
		}
		if (r.status != MP_READ_OK)
			fail_msg("%s", r.err.buf);
		assert_true(got == want + n);
		mp_reader_release(&r);
		free(want);
		free(live);
		unlink(path);
		free(path);
	}
}

/* Ticks: whole pages of change become TICK_DELTA, anything else a TICK; both read back the same. */
static void test_ticks(void **state)
{
	static const uint64_t rss[] = { 1 << 20, (1 << 20) + 4096, (1 << 20) + 4096, 4096, 5000, 0,
					UINT64_MAX, 0, 1ull << 40, (1ull << 40) - 40960 };
	char *path = tmp_path();
	struct mp_writer w;
	struct mp_header h = { .pid = 1 };
	struct mp_reader r;
	struct mp_record rec;
	size_t n = 0;
	uint64_t t = 0;
	(void)state;
	assert_int_equal(mp_writer_open(&w, path, MP_WRITER_NO_COMPRESS), 0);
	mp_writer_header(&w, &h);
	for (size_t i = 0; i < sizeof(rss) / sizeof(rss[0]); i++)
		mp_writer_tick(&w, 10000 * (i + 1), rss[i]);
	assert_int_equal(mp_writer_close(&w), 0);
	assert_int_equal(mp_reader_open(&r, path), 0);
	while (mp_reader_next(&r, &rec)) {
		if (rec.type != MP_REC_TICK)
			continue;
		t += 10000;
		assert_int_equal(rec.u.tick.time_us, t);
		assert_int_equal(rec.u.tick.rss, rss[n]);
		n++;
	}
	assert_int_equal(r.status, MP_READ_OK);
	assert_int_equal(n, sizeof(rss) / sizeof(rss[0]));
	mp_reader_release(&r);
	unlink(path);
	free(path);
}

/*
 * At the end of an interval, fewer than 16 KiB of records wait for more, up
 * to 100 intervals; more go out at once; closing writes what waits.
 */
static void test_ticks_wait(void **state)
{
	char *path = tmp_path();
	struct mp_writer w;
	struct mp_header h = { .pid = 1 };
	size_t after_header, len;
	uint8_t *data;
	(void)state;
	assert_int_equal(mp_writer_open(&w, path, 0), 0);
	mp_writer_header(&w, &h);
	after_header = w.bytes_written;
	for (int i = 1; i < 100; i++) {
		mp_writer_tick(&w, 10000u * i, 1 << 20);
		if (i == 50)
			mp_writer_alloc_seq(&w, 0, MP_KIND_MALLOC, 8, 0);
		mp_writer_flush(&w);
	}
	assert_int_equal(w.bytes_written, after_header);
	mp_writer_flush(&w);
	assert_true(w.bytes_written > after_header);
	after_header = w.bytes_written;
	for (uint64_t i = 0; i < 5000; i++)
		mp_writer_alloc_seq(&w, 0, MP_KIND_MALLOC, (1u << 20) + i, i % 100);
	mp_writer_flush(&w);
	assert_true(w.bytes_written > after_header);
	after_header = w.bytes_written;
	mp_writer_tick(&w, 2000000, 1 << 20);
	mp_writer_flush(&w);
	assert_int_equal(w.bytes_written, after_header);
	assert_int_equal(mp_writer_close(&w), 0);
	data = read_file(path, &len);
	assert_true(len > after_header);
	free(data);
	unlink(path);
	free(path);
}

/* Strings numbered by their place, symbols of several modules and of none, as written. */
static void test_strings_and_symbols(void **state)
{
	char *path = tmp_path();
	struct mp_writer w;
	struct mp_header h = { .pid = 1 };
	struct mp_reader r;
	struct mp_record rec;
	struct mp_frame fr[2];
	static const struct { uint64_t ip, module, offset; } syms[] = {
		{ 0x555555555136, 1, 0x1136 }, { 0x555555555200, 1, 0x1200 },
		{ 0x7ffff7c29d90, 2, 0x29d90 }, { 0x1234, 0, 0x1234 },
		{ 0x555555655000, 1, 0x101000 }, /* module 1 elsewhere: reloaded */
		{ UINT64_MAX, 3, 0 },
	};
	size_t ns = 0, nstr = 0;
	(void)state;
	assert_int_equal(mp_writer_open(&w, path, 0), 0);
	mp_writer_header(&w, &h);
	assert_int_equal(mp_writer_string(&w, "main", 4), 1);
	assert_int_equal(mp_writer_string(&w, "", 0), 2);
	assert_int_equal(mp_writer_string(&w, "/src/a.c", 8), 3);
	fr[0] = (struct mp_frame){ 1, 3, 40, 5 };
	fr[1] = (struct mp_frame){ 0, 2, 0, 0 };
	for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++)
		mp_writer_symbol(&w, syms[i].ip, syms[i].module, syms[i].offset, fr, i % 3);
	assert_int_equal(mp_writer_close(&w), 0);
	assert_int_equal(mp_reader_open(&r, path), 0);
	while (mp_reader_next(&r, &rec)) {
		if (rec.type == MP_REC_STRING) {
			assert_int_equal(rec.u.string.id, ++nstr);
		} else if (rec.type == MP_REC_SYMBOL) {
			assert_int_equal(rec.u.symbol.ip, syms[ns].ip);
			assert_int_equal(rec.u.symbol.module, syms[ns].module);
			assert_int_equal(rec.u.symbol.offset, syms[ns].offset);
			assert_int_equal(rec.u.symbol.nframes, ns % 3);
			for (size_t k = 0; k < ns % 3; k++) {
				assert_int_equal(rec.u.symbol.frames[k].function, fr[k].function);
				assert_int_equal(rec.u.symbol.frames[k].file, fr[k].file);
				assert_int_equal(rec.u.symbol.frames[k].line, fr[k].line);
				assert_int_equal(rec.u.symbol.frames[k].column, fr[k].column);
			}
			ns++;
		}
	}
	assert_int_equal(r.status, MP_READ_OK);
	assert_int_equal(nstr, 3);
	assert_int_equal(ns, sizeof(syms) / sizeof(syms[0]));
	assert_string_equal(mp_reader_string(&r, 3), "/src/a.c");
	mp_reader_release(&r);
	unlink(path);
	free(path);
}

/*
 * A 3.0 SYMBOL gives its ip against the latest TRACE's and its offset
 * against its MODULE's base, whether those came through the writer's
 * functions or as a tracker's records: written right after its TRACE, a
 * symbol of a known module spells out neither; one written later, of a
 * module reloaded elsewhere or of none, still reads back exactly.
 */
/* A tracker's TRACE record, as the collector passes it on. */
static void raw_trace(struct mp_writer *w, uint64_t *n, uint64_t parent, uint64_t ip, uint64_t *last_ip)
{
	uint8_t buf[3 * MP_VARINT_MAX];
	uint8_t *e = mp_enc_trace(buf, ++*n, parent, ip, last_ip);
	mp_writer_raw(w, buf, (size_t)(e - buf));
}

static void test_symbols_follow_traces(void **state)
{
	char *path = tmp_path();
	struct mp_writer w;
	struct mp_header h = { .pid = 1 };
	struct mp_reader r;
	struct mp_record rec;
	struct mp_segment seg = { 0, 0x10000, 5 };
	struct mp_frame fr = { 1, 0, 7, 0 };
	static const struct { uint64_t ip, module, offset; } syms[] = {
		{ 0x555555555136, 1, 0x1136 },   /* after its TRACE */
		{ 0x7ffff7c29d90, 2, 0x29d90 },  /* of a tracker's MODULE record */
		{ 0x555555555200, 1, 0x1200 },   /* after another TRACE */
		{ 0x7ffff7c29d90, 2, 0x29d90 },  /* module 2 reloaded elsewhere: offset given */
		{ 0x1234, 0, 0x1234 },           /* no module */
	};
	uint8_t raw[32], *p = raw;
	uint64_t last_ip = 0, n = 0;
	size_t ns = 0, before;
	(void)state;
	assert_int_equal(mp_writer_open(&w, path, 0), 0);
	mp_writer_header(&w, &h);
	mp_writer_module(&w, 1, 0x555555554000, "/bin/a", NULL, 0, &seg, 1);
	assert_int_equal(mp_writer_string(&w, "f", 1), 1);
	raw_trace(&w, &n, 0, syms[0].ip, &last_ip);
	before = mp_fields_total(&w.fields);
	mp_writer_symbol(&w, syms[0].ip, 1, syms[0].offset, &fr, 1);
	/* Tag, length, module, two zeros, one frame of four bytes. */
	assert_int_equal(mp_fields_total(&w.fields) - before, 10);
	*p++ = MP_TAG_MODULE;
	*p++ = 0; /* the payload's length, set below */
	p = mp_put_uvarint(p, 2);
	p = mp_put_uvarint(p, 0x7ffff7c00000);
	*p++ = 0; /* no path */
	*p++ = 0; /* no build-id */
	*p++ = 0; /* no segments */
	raw[1] = (uint8_t)(p - raw - 2);
	mp_writer_raw(&w, raw, (size_t)(p - raw));
	raw_trace(&w, &n, 1, syms[1].ip, &last_ip);
	before = mp_fields_total(&w.fields);
	mp_writer_symbol(&w, syms[1].ip, 2, syms[1].offset, &fr, 1);
	assert_int_equal(mp_fields_total(&w.fields) - before, 10);
	raw_trace(&w, &n, 2, syms[2].ip, &last_ip);
	raw_trace(&w, &n, 3, 0x401000, &last_ip);
	mp_writer_symbol(&w, syms[2].ip, 1, syms[2].offset, &fr, 1);
	mp_writer_module(&w, 2, 0x7fffe0000000, "/lib/b.so", NULL, 0, &seg, 1);
	mp_writer_symbol(&w, syms[3].ip, 2, syms[3].offset, &fr, 1);
	mp_writer_symbol(&w, syms[4].ip, 0, syms[4].offset, &fr, 1);
	assert_int_equal(mp_writer_close(&w), 0);
	assert_int_equal(mp_reader_open(&r, path), 0);
	while (mp_reader_next(&r, &rec)) {
		if (rec.type != MP_REC_SYMBOL)
			continue;
		assert_true(ns < sizeof(syms) / sizeof(syms[0]));
		assert_int_equal(rec.u.symbol.ip, syms[ns].ip);
		assert_int_equal(rec.u.symbol.module, syms[ns].module);
		assert_int_equal(rec.u.symbol.offset, syms[ns].offset);
		assert_int_equal(rec.u.symbol.nframes, 1);
		assert_int_equal(rec.u.symbol.frames[0].line, 7);
		ns++;
	}
	assert_int_equal(r.status, MP_READ_OK);
	assert_int_equal(ns, sizeof(syms) / sizeof(syms[0]));
	mp_reader_release(&r);
	unlink(path);
	free(path);
}

/* A symbol naming a string before the first is corruption. */
static void test_symbol_bad_string(void **state)
{
	struct mp_decoder d;
	struct mp_record rec;
	/* SYMBOL: module 1, ip delta 8, offset delta 0, one frame naming ref 3, the string before the only one. */
	static const uint8_t sym[] = { MP_TAG_SYMBOL, 8, 1, 16, 0, 1, 3, 0, 0, 0 };
	static const uint8_t str[] = { MP_TAG_STRING, 1, 'x' };
	(void)state;
	decoder_at(&d, 0);
	assert_int_equal(mp_decode(&d, str, sizeof(str), &rec), (ssize_t)sizeof(str));
	assert_int_equal(rec.u.string.id, 1);
	assert_int_equal(mp_decode(&d, sym, sizeof(sym), &rec), -1);
	assert_non_null(strstr(d.err.buf, "symbol record is malformed"));
	mp_decoder_release(&d);
}

/*
 * Codec 3 blocks depend on the blocks before them: a block missing, or a
 * block whose stream bytes were changed (each block has a checksum), makes
 * the rest unreadable, and the reader says so instead of reading wrong
 * records.
 */
static void test_streams_continue(void **state)
{
	char *path = tmp_path();
	struct mp_writer w;
	struct mp_header h = { .pid = 1 };
	struct mp_reader r;
	struct mp_record rec;
	uint8_t *data;
	size_t len, first_block = 0, second_block = 0;
	FILE *f;
	(void)state;
	assert_int_equal(mp_writer_open(&w, path, MP_WRITER_SERIALS), 0);
	mp_writer_header(&w, &h);
	mp_writer_trace(&w, 0, 0x401000);
	for (int b = 0; b < 3; b++) {
		for (int i = 0; i < 200; i++) {
			mp_writer_alloc(&w, 0, MP_KIND_MALLOC, 0x1000 + 16 * (uint64_t)(b * 200 + i),
					24 + (uint64_t)(b * 8 + i % 7), 1);
			mp_writer_free(&w, 0, MP_KIND_FREE, 0x1000 + 16 * (uint64_t)(b * 200 + i));
		}
		end_block(&w);
		if (b == 0)
			first_block = w.bytes_written;
		if (b == 1)
			second_block = w.bytes_written;
	}
	assert_int_equal(mp_writer_close(&w), 0);
	data = read_file(path, &len);
	/* Without the second block, the third does not decode. */
	f = fopen(path, "wb");
	assert_non_null(f);
	fwrite(data, 1, first_block, f);
	fwrite(data + second_block, 1, len - second_block, f);
	fclose(f);
	assert_int_equal(mp_reader_open(&r, path), 0);
	while (mp_reader_next(&r, &rec))
		;
	assert_int_equal(r.status, MP_READ_CORRUPT);
	mp_reader_release(&r);
	/* A byte changed in the second block's streams: its checksum finds it. */
	data[second_block - 6] ^= 0x5a;
	f = fopen(path, "wb");
	assert_non_null(f);
	fwrite(data, 1, len, f);
	fclose(f);
	assert_int_equal(mp_reader_open(&r, path), 0);
	while (mp_reader_next(&r, &rec))
		;
	assert_int_equal(r.status, MP_READ_CORRUPT);
	if (!strstr(r.err.buf, "does not decompress") && !strstr(r.err.buf, "does not match its checksum"))
		fail_msg("%s", r.err.buf);
	mp_reader_release(&r);
	free(data);
	unlink(path);
	free(path);
}

/*
 * The reader's inline decoding of the common records (mp_decode_hot()) means
 * exactly what mp_decode() does: a capture of many classes (30,000: their
 * numbers take one to three bytes), 200 threads (switches of one and two
 * bytes), frees of every form, decoded both ways.
 */
static void test_hot_path_agrees(void **state)
{
	char *path = tmp_path();
	struct mp_writer w;
	struct mp_header h = { .pid = 1 };
	struct mp_decoder d1, d2;
	struct mp_record r1, r2;
	uint8_t *data;
	size_t len, pos1, pos2, hot = 0;
	uint64_t rng = 5, live[512] = { 0 };
	(void)state;
	assert_int_equal(mp_writer_open(&w, path, MP_WRITER_SERIALS | MP_WRITER_NO_COMPRESS), 0);
	mp_writer_header(&w, &h);
	for (uint64_t i = 1; i <= 100; i++)
		mp_writer_trace(&w, i - 1, 0x400000 + 16 * i);
	for (uint64_t i = 0; i < 200000; i++) {
		uint32_t th = (uint32_t)(rng >> 40) % 200;
		size_t k;
		rng = rng * 6364136223846793005ull + 1442695040888963407ull;
		k = (rng >> 33) % 512;
		if (live[k])
			mp_writer_free(&w, th, (rng >> 20) % 4 ? MP_KIND_FREE : MP_KIND_REALLOC, live[k]);
		live[k] = 0x100000 + 16 * i;
		mp_writer_alloc(&w, th, MP_KIND_MALLOC, live[k], 8 + (rng >> 50) % 300, 1 + i % 100);
	}
	assert_int_equal(mp_writer_close(&w), 0);
	data = read_file(path, &len);
	decoder_at(&d1, 0);
	decoder_at(&d2, 0);
	/* The preamble and the header, by both. */
	pos1 = (size_t)mp_decode_preamble(&d1, data, len);
	assert_int_equal(mp_decode_preamble(&d2, data, len), (ssize_t)pos1);
	d1.seen_header = d2.seen_header = false;
	pos2 = pos1;
	while (pos1 < len) {
		ssize_t n1 = mp_decode(&d1, data + pos1, len - pos1, &r1);
		size_t n2 = mp_decode_hot(&d2, data + pos2, len - pos2, &r2);
		assert_true(n1 > 0);
		if (n2)
			hot++;
		else
			n2 = (size_t)mp_decode(&d2, data + pos2, len - pos2, &r2);
		assert_int_equal(n2, (size_t)n1);
		assert_int_equal(r1.type, r2.type);
		if (r1.type == MP_REC_ALLOC || r1.type == MP_REC_FREE || r1.type == MP_REC_SWITCH) {
			assert_int_equal(r1.thread, r2.thread);
			if (r1.type != MP_REC_SWITCH) {
				assert_int_equal(r1.u.ev.kind, r2.u.ev.kind);
				assert_int_equal(r1.u.ev.addr, r2.u.ev.addr);
				assert_int_equal(r1.u.ev.size, r2.u.ev.size);
				assert_int_equal(r1.u.ev.stack, r2.u.ev.stack);
				assert_int_equal(r1.u.ev.serial, r2.u.ev.serial);
				assert_int_equal(r1.u.ev.ranged, r2.u.ev.ranged);
			}
		}
		pos1 += (size_t)n1;
		pos2 += n2;
	}
	assert_true(hot > 300000); /* the inline path did most of them */
	mp_decoder_release(&d1);
	mp_decoder_release(&d2);
	free(data);
	unlink(path);
	free(path);
}

/* A tracker's event record, and what the writer is told of it as the collector would (path one). */
static void write_record(struct mp_writer *w, const struct mp_record *r, const uint8_t *raw, size_t n)
{
	if (r->type == MP_REC_ALLOC)
		mp_writer_alloc(w, r->thread, r->u.ev.kind, r->u.ev.addr, r->u.ev.size, r->u.ev.stack);
	else if (r->type == MP_REC_FREE)
		mp_writer_free(w, r->thread, r->u.ev.kind, r->u.ev.addr);
	else if (r->type == MP_REC_TRACE)
		mp_writer_raw(w, raw, n);
}

/*
 * mp_writer_events() writes a tracker's events into the capture exactly as
 * decoding each (mp_decode()) and passing it to mp_writer_alloc() or
 * mp_writer_free() does, byte for byte: 20 threads, heap kinds and mappings
 * (which it leaves to mp_decode()), unaligned addresses, sizes of 1 to 9
 * bytes, frees of blocks never allocated, its input cut at random places.
 */
static void test_events_path_agrees(void **state)
{
	char *path[2] = { tmp_path(), tmp_path() };
	struct mp_header h = { .pid = 1 };
	struct mp_enc_thread th[20] = { { 0 } };
	size_t cap = 64u << 20, len = 0, flen[2], pos = 0;
	uint8_t *in = malloc(cap), *file[2];
	uint64_t rng = 7, last_ip = 0, live[1024] = { 0 }, events = 0;
	uint32_t cur = 0;
	struct mp_writer_fed fed = { 0 };
	(void)state;
	for (uint64_t i = 1; i <= 300; i++)
		len = (size_t)(mp_enc_trace(in + len, i, i / 2, 0x400000 + 16 * i, &last_ip) - in);
	for (uint64_t i = 0; i < 400000; i++) {
		uint32_t t = (uint32_t)((rng >> 40) % 20);
		unsigned kinds[] = { MP_KIND_MALLOC, MP_KIND_CALLOC, MP_KIND_MMAP, MP_KIND_POSIX_MEMALIGN };
		size_t k;
		uint64_t size;
		rng = rng * 6364136223846793005ull + 1442695040888963407ull;
		if (t != cur && (rng >> 20) % 8 == 0) {
			len = (size_t)(mp_enc_thread_switch(in + len, t) - in);
			cur = t;
		}
		k = (rng >> 33) % 1024;
		if (live[k] || (rng >> 12) % 64 == 0) /* (or a block this capture never saw) */
			len = (size_t)(mp_enc_free(in + len, &th[cur], (rng >> 24) % 4 ? MP_KIND_FREE : MP_KIND_REALLOC,
						   live[k] ? live[k] : 0x7000000 + 16 * i, 0, 0) - in);
		live[k] = 0x100000 + 16 * i + ((rng >> 50) % 8 == 0 ? (rng >> 44) % 16 : 0);
		size = (rng >> 56) == 0 ? ~0ull >> (rng >> 10) % 8 : 1 + (rng >> 45) % 70000;
		len = (size_t)(mp_enc_alloc(in + len, &th[cur], kinds[(rng >> 30) % 64 == 0 ? 2 : (rng >> 28) % 2 * 3],
					    live[k], size, 1 + (rng >> 14) % 300) - in);
		assert_true(len + 256 < cap);
	}
	for (int way = 0; way < 2; way++) {
		struct mp_writer w;
		struct mp_decoder d;
		struct mp_record r;
		decoder_at(&d, 0);
		assert_int_equal(mp_writer_open(&w, path[way], MP_WRITER_SERIALS), 0);
		mp_writer_header(&w, &h);
		for (pos = 0; pos < len;) {
			ssize_t n;
			if (way == 1 && mp_writer_events_tag(in[pos])) {
				/* (Cut where the collector's budget would.) */
				size_t room = len - pos, cut = 1 + (size_t)((rng = rng * 6364136223846793005ull + 1) >> 40) % 5000;
				size_t took = mp_writer_events(&w, &d, in + pos, cut < room ? cut : room, &fed);
				pos += took;
				if (took)
					continue;
			}
			n = mp_decode(&d, in + pos, len - pos, &r);
			if (n <= 0)
				fail_msg("decoding the events: %zd, %s", n, d.err.buf);
			events += way == 0 && r.type != MP_REC_TRACE;
			write_record(&w, &r, in + pos, (size_t)n);
			pos += (size_t)n;
		}
		assert_int_equal(mp_writer_close(&w), 0);
		mp_decoder_release(&d);
		file[way] = read_file(path[way], &flen[way]);
	}
	assert_int_equal(flen[0], flen[1]);
	assert_memory_equal(file[0], file[1], flen[0]);
	/* Most of them the fast way (events: the event records of the first way). */
	assert_true(fed.records > events * 9 / 10);
	assert_true(fed.allocs > 350000 && fed.frees > 300000);
	for (int way = 0; way < 2; way++) {
		free(file[way]);
		unlink(path[way]);
		free(path[way]);
	}
	free(in);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_free_forms),
		cmocka_unit_test(test_bad_records),
		cmocka_unit_test(test_split_join_v3),
		cmocka_unit_test(test_classes_and_frees),
		cmocka_unit_test(test_ticks),
		cmocka_unit_test(test_ticks_wait),
		cmocka_unit_test(test_strings_and_symbols),
		cmocka_unit_test(test_symbols_follow_traces),
		cmocka_unit_test(test_symbol_bad_string),
		cmocka_unit_test(test_streams_continue),
		cmocka_unit_test(test_hot_path_agrees),
		cmocka_unit_test(test_events_path_agrees),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
