/*
 * Unit tests of format 2.0's additions: the field streams of codec 2 blocks
 * (lib/fields), with 4.0's varint planes (codec 4), and heap blocks named
 * by serial number (ALLOC_SEQ, FREE_SEQ) as the writer produces them with
 * MP_WRITER_SERIALS.
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
#include "lib/format/encode.h"
#include "lib/format/fields.h"
#include "lib/format/format.h"
#include "lib/format/reader.h"
#include "lib/format/writer.h"
#include "lib/util/xalloc.h"
#include "tests/unit/files.h"

/* ---- helpers ---- */

/* Records of every type below 0x80 and a sized one, with long and short numbers. */
static size_t sample_records(uint8_t *buf)
{
	struct mp_enc_thread t = { 0 }, t2 = { 0 };
	uint64_t last_ip = 0;
	uint8_t *p = buf, *rec;
	p = mp_enc_trace(p, 1, 0, 0x401000, &last_ip);
	p = mp_enc_trace(p, 2, 1, 0x7fffffff1234ull, &last_ip);
	p = mp_enc_alloc(p, &t, MP_KIND_MALLOC, 0x55550000ull, 24, 2);
	p = mp_enc_alloc(p, &t, MP_KIND_CALLOC, 0x55550013ull, UINT64_MAX, 1); /* unaligned: two varints */
	p = mp_enc_free(p, &t, MP_KIND_FREE, 0x55550000ull, 0, 0);
	p = mp_enc_free(p, &t, MP_KIND_MUNMAP, 0x7f0000001000ull, 1, 4096);
	p = mp_enc_alloc_seq(p, &t, MP_KIND_REALLOC, 300, 2);
	p = mp_enc_free_seq(p, MP_KIND_FREE, 0);
	p = mp_enc_free_seq(p, MP_KIND_FREE, 1u << 20);
	p = mp_enc_thread_switch(p, 3);
	p = mp_enc_alloc(p, &t2, MP_KIND_MALLOC, 16, 1, 0);
	p = mp_enc_tick(p, 10000, 123456789);
	rec = p;
	p = mp_enc_sized_begin(p, MP_TAG_MESSAGE);
	p = mp_enc_field_bytes(p, MP_M_TEXT, "hello", 5);
	p = mp_enc_sized_end(rec, p);
	rec = p;
	p = mp_enc_sized_begin(p, 0xf3); /* a type from the future: kept whole */
	p = mp_put_uvarint(p, 7);
	p = mp_enc_sized_end(rec, p);
	return (size_t)(p - buf);
}

static int join(struct mp_fields *f, uint8_t *out, size_t raw_len, const char **why)
{
	const uint8_t *s[MP_FS_COUNT];
	size_t n[MP_FS_COUNT];
	for (int i = 0; i < MP_FS_COUNT; i++) {
		s[i] = f->p[i];
		n[i] = f->len[i];
	}
	return mp_fields_join(s, n, out, raw_len, f->vplanes, why);
}

/* ---- field streams ---- */

static void test_split_join_exact(void **state)
{
	uint8_t raw[512], out[512];
	size_t len = sample_records(raw), total = 0;
	struct mp_fields f;
	const char *why = NULL;
	(void)state;
	mp_fields_init(&f);
	assert_int_equal(mp_fields_split(&f, raw, len), 0);
	for (int i = 0; i < MP_FS_COUNT; i++)
		total += f.len[i];
	assert_int_equal(total, len);
	/* 14 records; sizes of 3 ALLOCs, the munmap and the ALLOC_SEQ; 2 ages. */
	assert_int_equal(f.len[MP_FS_TAGS], 14);
	assert_int_equal(f.len[MP_FS_AGES], 1 + 3);
	assert_int_equal(f.p[MP_FS_SIZES][0], 24);
	assert_int_equal(f.len[MP_FS_SIZES], 1 + 10 + 2 + 2 + 1);
	assert_int_equal(join(&f, out, len, &why), 0);
	assert_memory_equal(out, raw, len);
	mp_fields_release(&f);
}

static void test_split_refuses_partial_and_unknown(void **state)
{
	uint8_t raw[512];
	size_t len = sample_records(raw);
	struct mp_fields f;
	(void)state;
	mp_fields_init(&f);
	/* Cut anywhere inside the last record: not whole records. */
	assert_int_equal(mp_fields_split(&f, raw, len - 1), -1);
	raw[0] = 0x00; /* an undefined event type */
	assert_int_equal(mp_fields_split(&f, raw, len), -1);
	assert_int_equal(mp_fields_split(&f, raw, 0), 0);
	mp_fields_release(&f);
}

static void test_join_detects_damage(void **state)
{
	uint8_t raw[512], out[600];
	size_t len = sample_records(raw);
	struct mp_fields f;
	const char *why;
	(void)state;
	mp_fields_init(&f);
	assert_int_equal(mp_fields_split(&f, raw, len), 0);

	why = NULL; /* the block claims more than the streams make */
	assert_int_equal(join(&f, out, len + 1, &why), -1);
	assert_string_equal(why, "the field streams make fewer bytes than the block's length");
	why = NULL; /* ...or less */
	assert_int_equal(join(&f, out, len - 1, &why), -1);
	assert_non_null(why);
	why = NULL; /* a stream cut short */
	f.len[MP_FS_STACKS]--;
	assert_int_equal(join(&f, out, len - 1, &why), -1);
	assert_string_equal(why, "a field stream ends inside a record");
	f.len[MP_FS_STACKS]++;
	why = NULL; /* a byte too many in a stream */
	f.p[MP_FS_AGES][f.len[MP_FS_AGES]++] = 5;
	assert_int_equal(join(&f, out, len, &why), -1);
	assert_string_equal(why, "a field stream has bytes left over");
	f.len[MP_FS_AGES]--;
	why = NULL; /* a number longer than 10 bytes: the size UINT64_MAX's last byte says more follow */
	assert_int_equal(f.p[MP_FS_SIZES][10], 0x01);
	f.p[MP_FS_SIZES][10] = 0x81;
	assert_int_equal(join(&f, out, len, &why), -1);
	assert_string_equal(why, "a number in a field stream is longer than 10 bytes");
	f.p[MP_FS_SIZES][10] = 0x01;
	why = NULL; /* a tag that is no record type */
	f.p[MP_FS_TAGS][0] = 0x00;
	assert_int_equal(join(&f, out, len, &why), -1);
	assert_string_equal(why, "an unknown record type in the tag stream");
	mp_fields_release(&f);
}

/* Codec 4: a size's or a stack delta's varint goes byte 0, byte 1, bytes 2 and up to three streams. */
static void test_vplanes_split_join_exact(void **state)
{
	uint8_t raw[512], out[512];
	size_t len = sample_records(raw);
	struct mp_fields f;
	const char *why = NULL;
	(void)state;
	mp_fields_init(&f);
	f.vplanes = true;
	assert_int_equal(mp_fields_split(&f, raw, len), 0);
	assert_int_equal(mp_fields_total(&f), len);
	/* Sizes 24, UINT64_MAX (10 bytes), 4096 and 300 (2 bytes each), 1. */
	assert_int_equal(f.len[MP_FS_SIZES], 5);
	assert_int_equal(f.len[MP_FS_SIZES1], 3);
	assert_int_equal(f.len[MP_FS_SIZES2], 8);
	assert_int_equal(f.p[MP_FS_SIZES][1], 0xff);
	assert_int_equal(f.p[MP_FS_SIZES1][0], 0xff);
	assert_int_equal(f.p[MP_FS_SIZES2][7], 0x01);
	assert_int_equal(f.p[MP_FS_SIZES1][1], 4096 >> 7);
	assert_int_equal(f.len[MP_FS_STACKS], 4); /* small deltas: a byte each */
	assert_int_equal(f.len[MP_FS_STACKS1] + f.len[MP_FS_STACKS2], 0);
	assert_int_equal(join(&f, out, len, &why), 0);
	assert_memory_equal(out, raw, len);
	/* Read as a codec 3 block, the streams are not these records. */
	why = NULL;
	f.vplanes = false;
	assert_int_equal(join(&f, out, len, &why), -1);
	assert_non_null(why);
	f.vplanes = true;
	/* A high plane short of a byte, or with one too many. */
	why = NULL;
	f.len[MP_FS_SIZES2]--;
	assert_int_equal(join(&f, out, len - 1, &why), -1);
	assert_string_equal(why, "a field stream ends inside a record");
	f.len[MP_FS_SIZES2]++;
	why = NULL;
	f.p[MP_FS_SIZES1][f.len[MP_FS_SIZES1]++] = 3;
	assert_int_equal(join(&f, out, len, &why), -1);
	assert_string_equal(why, "a field stream has bytes left over");
	f.len[MP_FS_SIZES1]--;
	/* A varint in planes longer than 10 bytes. */
	why = NULL;
	f.p[MP_FS_SIZES2][7] = 0x81;
	assert_int_equal(join(&f, out, len, &why), -1);
	assert_string_equal(why, "a number in a field stream is longer than 10 bytes");
	mp_fields_release(&f);
}

/*
 * Many allocations of random sizes and stack deltas of every length, in
 * each record type with a size: split into planes and joined back exactly,
 * through the join's fast path and, near the streams' ends, its careful one.
 */
static void test_vplanes_random(void **state)
{
	enum { N = 20000 };
	uint8_t *raw = xmalloc(N * MP_ENC_MAX_EVENT), *out = xmalloc(N * MP_ENC_MAX_EVENT), *p = raw;
	struct mp_enc_thread t = { 0 };
	uint64_t x = 0x9e3779b97f4a7c15ull;
	struct mp_fields f;
	const char *why = NULL;
	size_t len;
	(void)state;
	for (int i = 0; i < N; i++) {
		uint64_t size, stack;
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		size = x >> (x % 64);
		stack = 1 + ((x >> 20) >> ((x >> 8) % 44));
		switch (i % 7) {
		case 0:
			p = mp_enc_alloc(p, &t, MP_KIND_MALLOC, 0x10000 + 16 * (uint64_t)i, size, stack);
			break;
		case 1:
			p = mp_enc_free(p, &t, MP_KIND_MUNMAP, 0x7f0000000000ull, 1, size);
			break;
		default:
			p = mp_enc_alloc_seq(p, &t, MP_KIND_MALLOC, size, stack);
			break;
		}
	}
	len = (size_t)(p - raw);
	mp_fields_init(&f);
	f.vplanes = true;
	assert_int_equal(mp_fields_split(&f, raw, len), 0);
	assert_true(f.len[MP_FS_SIZES2] > 0 && f.len[MP_FS_STACKS2] > 0);
	assert_int_equal(join(&f, out, len, &why), 0);
	assert_memory_equal(out, raw, len);
	mp_fields_release(&f);
	free(raw);
	free(out);
}

/* ---- serial numbers through the writer and the reader ---- */

struct ev {
	enum mp_rec_type type;
	unsigned kind;
	bool serial;
	uint64_t addr, size;
};

static size_t read_events(const char *path, struct ev *evs, size_t max, struct mp_trailer *tr)
{
	struct mp_reader r;
	struct mp_record rec;
	size_t n = 0;
	assert_int_equal(mp_reader_open(&r, path), 0);
	while (mp_reader_next(&r, &rec))
		if (rec.type == MP_REC_ALLOC || rec.type == MP_REC_FREE) {
			assert_true(n < max);
			evs[n++] = (struct ev){ rec.type, rec.u.ev.kind, rec.u.ev.serial, rec.u.ev.addr,
						rec.u.ev.size };
		}
	assert_int_equal(r.status, MP_READ_OK);
	*tr = *mp_reader_trailer(&r);
	mp_reader_release(&r);
	return n;
}

static void test_serial_blocks(void **state)
{
	char *path = tmp_path();
	struct mp_writer w;
	struct mp_header h = { .pid = 1 };
	struct mp_trailer t = { .present = true };
	struct ev e[16];
	size_t n;
	(void)state;
	assert_int_equal(mp_writer_open(&w, path, MP_WRITER_SERIALS), 0);
	mp_writer_header(&w, &h);
	mp_writer_trace(&w, 0, 0x401000);
	mp_writer_alloc(&w, 0, MP_KIND_MALLOC, 0x1000, 10, 1);     /* block 0 */
	mp_writer_alloc(&w, 1, MP_KIND_CALLOC, 0x2000, 20, 1);     /* block 1, another thread */
	mp_writer_free(&w, 0, MP_KIND_FREE, 0x2000);               /* block 1 (age 0) */
	mp_writer_free(&w, 0, MP_KIND_REALLOC, 0x1000);            /* realloc in place: */
	mp_writer_alloc(&w, 0, MP_KIND_REALLOC, 0x1000, 30, 1);    /* block 2 */
	mp_writer_free(&w, 1, MP_KIND_FREE, 0x9990);               /* never allocated: an address */
	mp_writer_free(&w, 1, MP_KIND_FREE, 0);                    /* free(NULL) */
	mp_writer_alloc(&w, 0, MP_KIND_MMAP, 0x7f0000000000ull, 8192, 1); /* mappings keep addresses */
	mp_writer_free_range(&w, 0, MP_KIND_MUNMAP, 0x7f0000001000ull, 4096);
	mp_writer_alloc(&w, 0, MP_KIND_MALLOC, 0x1000, 40, 1);     /* block 3: block 2's free was lost */
	mp_writer_free(&w, 0, MP_KIND_FREE, 0x1000);               /* block 3 */
	mp_writer_free(&w, 0, MP_KIND_FREE, 0x1000);               /* a double free: an address */
	mp_writer_trailer(&w, &t);
	assert_int_equal(w.n_allocs, 5);
	assert_int_equal(w.n_frees, 7);
	assert_int_equal(mp_writer_close(&w), 0);

	n = read_events(path, e, 16, &t);
	assert_int_equal(n, 12);
	assert_true(e[0].serial && e[0].addr == MP_SERIAL_ADDR(0) && e[0].size == 10);
	assert_true(e[1].serial && e[1].addr == MP_SERIAL_ADDR(1) && e[1].kind == MP_KIND_CALLOC);
	assert_true(e[2].type == MP_REC_FREE && e[2].serial && e[2].addr == MP_SERIAL_ADDR(1));
	assert_true(e[3].type == MP_REC_FREE && e[3].serial && e[3].addr == MP_SERIAL_ADDR(0) &&
		    e[3].kind == MP_KIND_REALLOC);
	assert_true(e[4].type == MP_REC_ALLOC && e[4].addr == MP_SERIAL_ADDR(2) && e[4].size == 30);
	assert_true(e[5].type == MP_REC_FREE && !e[5].serial && e[5].addr == 0x9990);
	assert_true(e[6].type == MP_REC_FREE && !e[6].serial && e[6].addr == 0);
	assert_true(!e[7].serial && e[7].addr == 0x7f0000000000ull && e[7].size == 8192);
	assert_true(!e[8].serial && e[8].addr == 0x7f0000001000ull && e[8].size == 4096);
	assert_true(e[9].serial && e[9].addr == MP_SERIAL_ADDR(3));
	assert_true(e[10].serial && e[10].addr == MP_SERIAL_ADDR(3));
	assert_true(!e[11].serial && e[11].addr == 0x1000);
	unlink(path);
	free(path);
}

/* A FREE_SEQ older than every block numbered so far is corruption, with the reason. */
static void test_free_seq_out_of_range(void **state)
{
	char *path = tmp_path();
	struct mp_writer w;
	struct mp_header h = { .pid = 1 };
	struct mp_reader r;
	struct mp_record rec;
	(void)state;
	assert_int_equal(mp_writer_open(&w, path, MP_WRITER_NO_COMPRESS), 0);
	mp_writer_header(&w, &h);
	assert_int_equal(mp_writer_alloc_seq(&w, 0, MP_KIND_MALLOC, 8, 0), 0);
	mp_writer_free_seq(&w, 0, MP_KIND_FREE, 0);
	/* Serial 0 again as if two blocks had numbers: age 1 (the writer trusts its caller). */
	w.n_seq = 2;
	mp_writer_free_seq(&w, 0, MP_KIND_FREE, 0);
	assert_int_equal(mp_writer_close(&w), 0);
	assert_int_equal(mp_reader_open(&r, path), 0);
	assert_int_equal(mp_reader_next(&r, &rec), 1); /* the ALLOC_SEQ */
	assert_int_equal(mp_reader_next(&r, &rec), 1); /* its FREE_SEQ */
	assert_int_equal(mp_reader_next(&r, &rec), 0);
	assert_int_equal(r.status, MP_READ_CORRUPT);
	assert_non_null(strstr(r.err.buf, "a deallocation of block age 1, but only 1 blocks were allocated by number"));
	mp_reader_release(&r);
	unlink(path);
	free(path);
}

/* Many blocks of both codecs, written by serial number, read back the same. */
static void test_serial_stream_codecs(void **state)
{
	const unsigned flags[2] = { MP_WRITER_SERIALS, MP_WRITER_SERIALS | MP_WRITER_ONE_FRAME };
	(void)state;
	for (int c = 0; c < 2; c++) {
		char *path = tmp_path();
		struct mp_writer w;
		struct mp_header h = { .pid = 1 };
		struct mp_reader r;
		struct mp_record rec;
		uint64_t live[64] = { 0 }, n_alloc = 0, n_free = 0, rng = 7;
		const uint64_t N = 300000;
		assert_int_equal(mp_writer_open(&w, path, flags[c]), 0);
		mp_writer_header(&w, &h);
		for (uint64_t i = 1; i <= 40; i++)
			mp_writer_trace(&w, i - 1, 0x400000 + i);
		for (uint64_t i = 0; i < N; i++) {
			uint64_t slot;
			rng = rng * 6364136223846793005ull + 1442695040888963407ull;
			slot = (rng >> 33) % 64;
			if (live[slot])
				mp_writer_free(&w, (uint32_t)(slot % 3), MP_KIND_FREE, live[slot]);
			live[slot] = 0x10000 + 16 * i;
			mp_writer_alloc(&w, (uint32_t)(slot % 3), MP_KIND_MALLOC, live[slot], rng >> 50,
					1 + i % 40);
		}
		assert_int_equal(mp_writer_close(&w), 0);
		/* Every free names a block allocated before and not yet freed. */
		uint8_t *freed = xcalloc(N, 1);
		assert_int_equal(mp_reader_open(&r, path), 0);
		while (mp_reader_next(&r, &rec)) {
			uint64_t s = (rec.u.ev.addr & ~MP_SERIAL_ADDR_BASE) >> 4;
			if (rec.type == MP_REC_ALLOC) {
				assert_true(rec.u.ev.serial);
				assert_int_equal(s, n_alloc);
				assert_int_equal(rec.u.ev.stack, 1 + n_alloc % 40);
				n_alloc++;
			} else if (rec.type == MP_REC_FREE) {
				assert_true(rec.u.ev.serial);
				assert_true(s < n_alloc);
				assert_int_equal(freed[s], 0);
				freed[s] = 1;
				n_free++;
			}
		}
		assert_int_equal(r.status, MP_READ_OK);
		assert_int_equal(n_alloc, N);
		assert_int_equal(n_free, N - 64);
		mp_reader_release(&r);
		free(freed);
		unlink(path);
		free(path);
	}
}

/*
 * Numbers of every varint length, 1 to 10 bytes, and the values either side
 * of each length, as sizes and addresses, through the writer and back
 * through the reader in each kind of block: the varints are copied and
 * decoded 8 bytes at a time, and the longest ones the slow way.
 */
static void test_numbers_of_every_length(void **state)
{
	const unsigned flags[5] = { MP_WRITER_SERIALS, MP_WRITER_SERIALS | MP_WRITER_ONE_FRAME, 0,
				    MP_WRITER_NO_COMPRESS, MP_WRITER_SERIALS | MP_WRITER_FORMAT3 };
	uint64_t vals[3 * 10 + 2];
	size_t nv = 0;
	(void)state;
	for (unsigned k = 1; k <= 9; k++) {
		uint64_t edge = 1ull << (7 * k); /* the smallest number of k + 1 bytes */
		vals[nv++] = edge - 1;
		vals[nv++] = edge;
		vals[nv++] = edge + 12345;
	}
	vals[nv++] = 0;
	vals[nv++] = UINT64_MAX;
	for (int c = 0; c < 5; c++) {
		char *path = tmp_path();
		struct mp_writer w;
		struct mp_header h = { .pid = 1 };
		struct mp_reader r;
		struct mp_record rec;
		size_t n_alloc = 0, n_free = 0;
		assert_int_equal(mp_writer_open(&w, path, flags[c]), 0);
		mp_writer_header(&w, &h);
		mp_writer_trace(&w, 0, 0x401000);
		for (size_t i = 0; i < nv; i++) {
			/* 16-aligned addresses are numbered; odd ones keep their address. */
			uint64_t addr = (flags[c] & MP_WRITER_SERIALS) ? 0x10000 + 16 * i : vals[i];
			mp_writer_alloc(&w, 0, MP_KIND_MALLOC, addr, vals[i], 1);
			mp_writer_free(&w, 0, MP_KIND_FREE, addr);
		}
		assert_int_equal(mp_writer_close(&w), 0);
		assert_int_equal(mp_reader_open(&r, path), 0);
		while (mp_reader_next(&r, &rec)) {
			if (rec.type == MP_REC_ALLOC) {
				assert_true(n_alloc < nv);
				assert_true(rec.u.ev.size == vals[n_alloc]);
				if (!(flags[c] & MP_WRITER_SERIALS))
					assert_true(rec.u.ev.addr == vals[n_alloc]);
				n_alloc++;
			} else if (rec.type == MP_REC_FREE) {
				n_free++;
			}
		}
		assert_int_equal(r.status, MP_READ_OK);
		assert_int_equal(n_alloc, nv);
		assert_int_equal(n_free, nv);
		mp_reader_release(&r);
		unlink(path);
		free(path);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_split_join_exact),
		cmocka_unit_test(test_numbers_of_every_length),
		cmocka_unit_test(test_split_refuses_partial_and_unknown),
		cmocka_unit_test(test_join_detects_damage),
		cmocka_unit_test(test_vplanes_split_join_exact),
		cmocka_unit_test(test_vplanes_random),
		cmocka_unit_test(test_serial_blocks),
		cmocka_unit_test(test_free_seq_out_of_range),
		cmocka_unit_test(test_serial_stream_codecs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
