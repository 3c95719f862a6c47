/* Unit tests of the capture format: encoders, decoder, reader and writer. */
#include <config.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/format/decode.h"
#include "lib/format/dump.h"
#include "lib/format/encode.h"
#include "lib/format/format.h"
#include "lib/format/reader.h"
#include "lib/format/writer.h"
#include "lib/util/xalloc.h"
#include "tests/unit/files.h"

/* ---- helpers ---- */

static int mem_fd(const void *data, size_t len)
{
	int fd = memfd_create("capture", MFD_CLOEXEC);
	assert_true(fd >= 0);
	if (len)
		assert_int_equal(write(fd, data, len), (ssize_t)len);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	return fd;
}

static uint8_t *slurp(const char *name, size_t *len)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/tests/data/%s", MP_SRCDIR, name);
	return read_file(path, len);
}

struct readout {
	int open_rc;
	size_t nrec;
	enum mp_read_status status;
	char err[512];
	struct strbuf text;
};

/* Read a capture from memory completely; the dump text is kept. */
static void read_all(const void *data, size_t len, struct readout *o)
{
	struct mp_reader r;
	struct mp_record rec;
	int fd = mem_fd(data, len);
	memset(o, 0, sizeof(*o));
	strbuf_init(&o->text, 0);
	o->open_rc = mp_reader_open_fd(&r, fd, "mem");
	if (o->open_rc == 0) {
		while (mp_reader_next(&r, &rec)) {
			o->nrec++;
			mp_dump_record(&o->text, &r, &rec);
		}
	}
	o->status = r.status;
	snprintf(o->err, sizeof(o->err), "%s", r.err.buf);
	mp_reader_release(&r);
	close(fd);
}

static const uint8_t preamble[] = { 0x89, 'M', 'E', 'M', 'P', 'R', 'O', 'F', 1, 0 };

/* A minimal valid stream: preamble + empty header record. */
static size_t minimal(uint8_t *buf)
{
	memcpy(buf, preamble, sizeof(preamble));
	buf[10] = MP_TAG_HEADER;
	buf[11] = 0;
	return 12;
}

/* ---- tests ---- */

static void test_varints(void **state)
{
	static const uint64_t vals[] = { 0, 1, 127, 128, 255, 16383, 16384, 1ull << 35,
					 (1ull << 63) - 1, 1ull << 63, UINT64_MAX };
	static const int64_t svals[] = { 0, 1, -1, 63, -64, 64, -65, INT64_MAX, INT64_MIN };
	(void)state;
	for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		uint8_t buf[MP_VARINT_MAX + 1];
		uint8_t *end = mp_put_uvarint(buf, vals[i]);
		assert_int_equal((size_t)(end - buf), mp_uvarint_len(vals[i]));
		assert_true(end - buf <= MP_VARINT_MAX);
	}
	for (size_t i = 0; i < sizeof(svals) / sizeof(svals[0]); i++)
		assert_true(mp_unzigzag(mp_zigzag(svals[i])) == svals[i]);
	/* The one-store encoder writes the same bytes, for numbers either side of every length. */
	for (unsigned k = 0; k <= 64; k++) {
		for (int d = -1; d <= 1; d++) {
			uint64_t v = (k == 64 ? 0 : 1ull << k) + (uint64_t)(int64_t)d;
			uint8_t a[MP_VARINT_MAX + 8], b[MP_VARINT_MAX + 8];
			uint8_t *ea = mp_put_uvarint(a, v), *eb = mp_put_uvarint8(b, v);
			assert_int_equal(ea - a, eb - b);
			assert_memory_equal(a, b, (size_t)(ea - a));
		}
	}
	assert_int_equal(mp_zigzag(-1), 1);
	assert_int_equal(mp_zigzag(1), 2);
	assert_int_equal(mp_uvarint_len(UINT64_MAX), 10);
}

/* Addresses and stacks through ALLOC/FREE records, with every kind of delta. */
static void test_event_deltas(void **state)
{
	static const uint64_t addrs[] = { 0, 0x10, 0x8, 0x7fffffffe000, 0x7fffffffe001, 0,
					  UINT64_MAX, 1, 0x8000000000000000ull, 0x7fffffffffffffffull,
					  0x555555559000, 0x555555558ff0, 15 };
	uint8_t buf[4096], *p;
	struct mp_enc_thread enc = { 0 };
	struct mp_decoder d;
	struct mp_record rec;
	size_t pos;
	uint64_t trace_ip = 0;
	(void)state;

	p = buf + minimal(buf) - sizeof(preamble);
	memmove(buf, buf + sizeof(preamble), 2);
	p = buf + 2;
	for (uint64_t i = 1; i <= 20; i++)
		p = mp_enc_trace(p, i, i - 1, 0x400000 + i * 3, &trace_ip);
	for (size_t i = 0; i < sizeof(addrs) / sizeof(addrs[0]); i++) {
		p = mp_enc_alloc(p, &enc, (unsigned)(i % 20), addrs[i], addrs[i] ^ 0x5555,
				 (i * 7) % 21);
		p = mp_enc_free(p, &enc, MP_KIND_FREE, addrs[(i + 3) % 13], i & 1, i);
	}
	mp_decoder_init(&d);
	pos = 0;
	assert_true(mp_decode(&d, buf, (size_t)(p - buf), &rec) == 2);
	assert_int_equal(rec.type, MP_REC_HEADER);
	pos = 2;
	for (uint64_t i = 1; i <= 20; i++) {
		ssize_t n = mp_decode(&d, buf + pos, (size_t)(p - buf) - pos, &rec);
		assert_true(n > 0);
		pos += (size_t)n;
		assert_int_equal(rec.type, MP_REC_TRACE);
		assert_int_equal(rec.u.trace.index, i);
		assert_int_equal(rec.u.trace.parent, i - 1);
		assert_int_equal(rec.u.trace.ip, 0x400000 + i * 3);
	}
	for (size_t i = 0; i < sizeof(addrs) / sizeof(addrs[0]); i++) {
		ssize_t n = mp_decode(&d, buf + pos, (size_t)(p - buf) - pos, &rec);
		assert_true(n > 0);
		pos += (size_t)n;
		assert_int_equal(rec.type, MP_REC_ALLOC);
		assert_int_equal(rec.u.ev.kind, i % 20);
		assert_true(rec.u.ev.addr == addrs[i]);
		assert_true(rec.u.ev.size == (addrs[i] ^ 0x5555));
		assert_int_equal(rec.u.ev.stack, (i * 7) % 21);
		n = mp_decode(&d, buf + pos, (size_t)(p - buf) - pos, &rec);
		assert_true(n > 0);
		pos += (size_t)n;
		assert_int_equal(rec.type, MP_REC_FREE);
		assert_true(rec.u.ev.addr == addrs[(i + 3) % 13]);
		assert_int_equal(rec.u.ev.ranged, i & 1);
		if (i & 1)
			assert_int_equal(rec.u.ev.size, i);
	}
	assert_int_equal(pos, (size_t)(p - buf));
	mp_decoder_release(&d);
}

/* A TICK_AT marker at a time rather than after a delta, a TICK to the decoder, never back in time. */
static void tick_at(uint8_t **p, int with_rss, uint64_t time_us, uint64_t rss)
{
	uint8_t *rec = *p;
	*p = mp_enc_sized_begin(*p, MP_TAG_TICK_AT);
	*p = mp_enc_field_uint(*p, MP_M_TIME, time_us);
	if (with_rss)
		*p = mp_enc_field_uint(*p, MP_M_RSS, rss);
	*p = mp_enc_sized_end(rec, *p);
}

static void test_tick_at(void **state)
{
	static const struct { uint64_t at, time, delta, rss; bool is_at; } want[] = {
		{ 0, 1000, 1000, 4096, false },  /* a TICK: 1000 us after the start */
		{ 500, 1000, 0, 8192, true },    /* at 500 us: not before the last one */
		{ 3000, 3000, 2000, 12288, true },
		{ 0, 3700, 700, 4096, false },   /* a TICK after it: 700 us later */
	};
	uint8_t buf[256], *p;
	struct mp_decoder d;
	struct mp_record rec;
	size_t pos = 2;
	(void)state;
	minimal(buf);
	memmove(buf, buf + sizeof(preamble), 2);
	p = buf + 2;
	p = mp_enc_tick(p, 1000, 4096);
	tick_at(&p, 1, 500, 8192);
	tick_at(&p, 1, 3000, 12288);
	p = mp_enc_tick(p, 700, 4096);
	mp_decoder_init(&d);
	assert_true(mp_decode(&d, buf, (size_t)(p - buf), &rec) == 2);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		ssize_t n = mp_decode(&d, buf + pos, (size_t)(p - buf) - pos, &rec);
		assert_true(n > 0);
		pos += (size_t)n;
		assert_int_equal(rec.type, MP_REC_TICK);
		assert_int_equal(rec.u.tick.time_us, want[i].time);
		assert_int_equal(rec.u.tick.delta_us, want[i].delta);
		assert_int_equal(rec.u.tick.rss, want[i].rss);
		assert_int_equal(rec.u.tick.at, want[i].is_at);
	}
	assert_int_equal(pos, (size_t)(p - buf));
	mp_decoder_release(&d);
	/* One without its RSS is refused. */
	mp_decoder_init(&d);
	p = buf + 2;
	tick_at(&p, 0, 10, 0);
	assert_true(mp_decode(&d, buf, (size_t)(p - buf), &rec) == 2);
	assert_true(mp_decode(&d, buf + 2, (size_t)(p - buf) - 2, &rec) < 0);
	assert_non_null(strstr(d.err.buf, "TICK_AT record without its time and RSS"));
	mp_decoder_release(&d);
}

/* An incomplete record consumes nothing and changes no state. */
static void test_incomplete_is_not_consumed(void **state)
{
	uint8_t buf[256], *p;
	struct mp_enc_thread enc = { 0 };
	struct mp_decoder d;
	struct mp_record rec;
	size_t n;
	uint64_t ip = 0;
	(void)state;
	buf[0] = MP_TAG_HEADER;
	buf[1] = 0;
	p = mp_enc_trace(buf + 2, 1, 0, 0x1234, &ip);
	p = mp_enc_alloc(p, &enc, MP_KIND_MALLOC, 0x7fff12345670, 300, 1);
	n = (size_t)(p - buf);
	for (size_t cut = 3; cut < n; cut++) {
		mp_decoder_init(&d);
		assert_true(mp_decode(&d, buf, cut, &rec) == 2);
		if (cut < 2 + 4) {
			assert_int_equal(mp_decode(&d, buf + 2, cut - 2, &rec), 0);
			mp_decoder_release(&d);
			continue;
		}
		assert_true(mp_decode(&d, buf + 2, cut - 2, &rec) > 0);
		assert_int_equal(mp_decode(&d, buf + 6, cut - 6, &rec), 0);
		/* Now with everything: the state must be as if nothing happened. */
		assert_int_equal(mp_decode(&d, buf + 6, n - 6, &rec), (ssize_t)(n - 6));
		assert_true(rec.u.ev.addr == 0x7fff12345670);
		assert_int_equal(rec.u.ev.stack, 1);
		mp_decoder_release(&d);
	}
}

static void roundtrip(unsigned flags)
{
	char *path = tmp_path();
	struct mp_writer w;
	struct mp_reader r;
	struct mp_record rec;
	struct mp_header h = { 0 };
	struct mp_trailer t = { 0 };
	struct mp_segment seg[2] = { { 0, 0x1000, 4 }, { 0x1000, 0x2000, 5 } };
	struct mp_frame fr[3] = { { 1, 2, 10, 3 }, { 0, 0, 0, 0 }, { 3, 2, UINT32_MAX, 1 } };
	struct mp_marker m = { .has = MP_HAS_TIME | MP_HAS_STATUS | MP_HAS_TEXT, .time_us = 5,
			       .status = -42, .text = "x\0y", .text_len = 3 };
	char *argv[] = { (char *)"prog", (char *)"", (char *)"arg with space", NULL };
	uint8_t bid[20];
	(void)argv;

	for (int i = 0; i < 20; i++)
		bid[i] = (uint8_t)(i * 13);
	h.pid = UINT32_MAX;
	h.ppid = 0;
	h.start_time_us = 1234567890123456;
	h.exe = (char *)"/bin/prog";
	h.hostname = (char *)"";
	h.argv = argv;
	h.argc = 3;
	h.mode = MP_MODE_ATTACH;
	h.flags = MP_HF_SYMBOLIZED | MP_HF_FOLLOW_FORK;
	h.max_depth = 64;
	assert_int_equal(mp_writer_open(&w, path, flags), 0);
	mp_writer_header(&w, &h);
	mp_writer_thread(&w, 0, 99, "main");
	mp_writer_thread(&w, 1000, UINT64_MAX, "");
	mp_writer_module(&w, 7, 0x400000, "/bin/prog", bid, sizeof(bid), seg, 2);
	mp_writer_module(&w, 8, 0, "", NULL, 0, NULL, 0);
	assert_int_equal(mp_writer_string(&w, "f", 1), 1);
	assert_int_equal(mp_writer_string(&w, "a.c", 3), 2);
	assert_int_equal(mp_writer_string(&w, "g\0h", 3), 3);
	mp_writer_symbol(&w, 0x401000, 7, 0x1000, fr, 3);
	mp_writer_symbol(&w, 0x401001, 0, 0, NULL, 0);
	assert_int_equal(mp_writer_trace(&w, 0, 0x401000), 1);
	assert_int_equal(mp_writer_trace(&w, 1, 0x401001), 2);
	assert_int_equal(mp_writer_trace(&w, 0, UINT64_MAX), 3);
	mp_writer_alloc(&w, 0, MP_KIND_MALLOC, 0x1000, 10, 2);
	mp_writer_alloc(&w, 1000, MP_KIND_MMAP, 0x7f0000000000, 1 << 20, 3);
	mp_writer_free_range(&w, 1000, MP_KIND_MUNMAP, 0x7f0000001000, 4096);
	mp_writer_free(&w, 0, MP_KIND_FREE, 0x1000);
	mp_writer_tick(&w, 10000, 1 << 20);
	mp_writer_marker(&w, MP_TAG_EXIT, &m);
	mp_writer_module_unload(&w, 8);
	t.end_time_us = 1234567890223456;
	t.has_exit_signal = true;
	t.exit_signal = 11;
	t.core_dumped = 1;
	t.n_allocs = 2;
	t.n_frees = 2;
	t.end_reason = MP_END_EXIT;
	mp_writer_trailer(&w, &t);
	assert_int_equal(mp_writer_close(&w), 0);

	assert_int_equal(mp_reader_open(&r, path), 0);
	{
		const struct mp_header *rh = mp_reader_header(&r);
		assert_int_equal(rh->major, MP_FORMAT_MAJOR);
		assert_int_equal(rh->pid, UINT32_MAX);
		assert_int_equal(rh->start_time_us, 1234567890123456);
		assert_string_equal(rh->exe, "/bin/prog");
		assert_string_equal(rh->hostname, "");
		assert_int_equal(rh->argc, 3);
		assert_string_equal(rh->argv[1], "");
		assert_string_equal(rh->argv[2], "arg with space");
		assert_null(rh->argv[3]);
		assert_int_equal(rh->mode, MP_MODE_ATTACH);
		assert_int_equal(rh->flags, MP_HF_SYMBOLIZED | MP_HF_FOLLOW_FORK);
		assert_int_equal(rh->max_depth, 64);
		assert_null(rh->cwd);
	}
#define NEXT(t) do { assert_int_equal(mp_reader_next(&r, &rec), 1); assert_int_equal(rec.type, t); } while (0)
	NEXT(MP_REC_THREAD);
	assert_int_equal(rec.u.thread.tid, 99);
	assert_int_equal(rec.u.thread.name_len, 4);
	NEXT(MP_REC_THREAD);
	assert_int_equal(rec.u.thread.index, 1000);
	assert_true(rec.u.thread.tid == UINT64_MAX);
	assert_int_equal(rec.u.thread.name_len, 0);
	NEXT(MP_REC_MODULE);
	assert_int_equal(rec.u.module.id, 7);
	assert_int_equal(rec.u.module.base, 0x400000);
	assert_int_equal(rec.u.module.build_id_len, 20);
	assert_memory_equal(rec.u.module.build_id, bid, 20);
	assert_int_equal(rec.u.module.nseg, 2);
	assert_int_equal(rec.u.module.seg[1].vaddr, 0x1000);
	assert_int_equal(rec.u.module.seg[1].memsz, 0x2000);
	assert_int_equal(rec.u.module.seg[1].flags, 5);
	NEXT(MP_REC_MODULE);
	assert_int_equal(rec.u.module.nseg, 0);
	assert_int_equal(rec.u.module.path_len, 0);
	NEXT(MP_REC_STRING);
	NEXT(MP_REC_STRING);
	NEXT(MP_REC_STRING);
	assert_int_equal(rec.u.string.len, 3);
	assert_memory_equal(rec.u.string.text, "g\0h", 3);
	assert_string_equal(mp_reader_string(&r, 2), "a.c");
	assert_null(mp_reader_string(&r, 0));
	assert_null(mp_reader_string(&r, 4));
	NEXT(MP_REC_SYMBOL);
	assert_int_equal(rec.u.symbol.nframes, 3);
	assert_int_equal(rec.u.symbol.frames[0].line, 10);
	assert_int_equal(rec.u.symbol.frames[0].column, 3);
	assert_int_equal(rec.u.symbol.frames[2].line, UINT32_MAX);
	assert_int_equal(rec.u.symbol.frames[2].function, 3);
	NEXT(MP_REC_SYMBOL);
	assert_int_equal(rec.u.symbol.nframes, 0);
	NEXT(MP_REC_TRACE);
	NEXT(MP_REC_TRACE);
	assert_int_equal(rec.u.trace.parent, 1);
	NEXT(MP_REC_TRACE);
	assert_true(rec.u.trace.ip == UINT64_MAX);
	assert_int_equal(rec.u.trace.parent, 0);
	NEXT(MP_REC_ALLOC);
	assert_int_equal(rec.thread, 0);
	assert_int_equal(rec.u.ev.stack, 2);
	NEXT(MP_REC_SWITCH);
	assert_int_equal(rec.thread, 1000);
	NEXT(MP_REC_ALLOC);
	assert_int_equal(rec.thread, 1000);
	assert_int_equal(rec.u.ev.kind, MP_KIND_MMAP);
	assert_int_equal(rec.u.ev.size, 1 << 20);
	NEXT(MP_REC_FREE);
	assert_true(rec.u.ev.ranged);
	assert_int_equal(rec.u.ev.addr, 0x7f0000001000);
	assert_int_equal(rec.u.ev.size, 4096);
	NEXT(MP_REC_SWITCH);
	NEXT(MP_REC_FREE);
	assert_false(rec.u.ev.ranged);
	assert_int_equal(rec.u.ev.addr, 0x1000);
	NEXT(MP_REC_TICK);
	assert_int_equal(rec.u.tick.time_us, 10000);
	assert_int_equal(rec.u.tick.rss, 1 << 20);
	NEXT(MP_REC_EXIT);
	assert_int_equal(rec.u.marker.has, MP_HAS_TIME | MP_HAS_STATUS | MP_HAS_TEXT);
	assert_int_equal(rec.u.marker.status, -42);
	assert_int_equal(rec.u.marker.text_len, 3);
	NEXT(MP_REC_MODULE_UNLOAD);
	assert_int_equal(rec.u.unload.id, 8);
	NEXT(MP_REC_TRAILER);
	assert_true(rec.u.trailer->present);
	assert_true(rec.u.trailer->has_exit_signal);
	assert_false(rec.u.trailer->has_exit_code);
	assert_int_equal(rec.u.trailer->exit_signal, 11);
	assert_int_equal(rec.u.trailer->core_dumped, 1);
	assert_int_equal(mp_reader_next(&r, &rec), 0);
	assert_int_equal(r.status, MP_READ_OK);
	mp_reader_release(&r);
	unlink(path);
	free(path);
}

static void test_roundtrip_compressed(void **state) { (void)state; roundtrip(0); }
static void test_roundtrip_raw(void **state) { (void)state; roundtrip(MP_WRITER_NO_COMPRESS); }

static void test_writer_refuses_overwrite(void **state)
{
	char *path = tmp_path();
	struct mp_writer w;
	(void)state;
	assert_int_equal(mp_writer_open(&w, path, 0), 0);
	assert_int_equal(mp_writer_close(&w), 0);
	assert_int_equal(mp_writer_open(&w, path, 0), -1);
	assert_int_equal(errno, EEXIST);
	assert_int_equal(mp_writer_open(&w, path, MP_WRITER_FORCE), 0);
	assert_int_equal(mp_writer_close(&w), 0);
	unlink(path);
	free(path);
}

/* Every prefix of a golden file reads without crashing, as a growing prefix of the records. */
static void truncate_everywhere(const char *name)
{
	size_t len, full_n, prev = 0;
	uint8_t *data = slurp(name, &len);
	struct readout full, o;

	read_all(data, len, &full);
	assert_int_equal(full.open_rc, 0);
	assert_int_equal(full.status, MP_READ_OK);
	full_n = full.nrec;
	assert_true(full_n > 40);
	for (size_t cut = 0; cut < len; cut++) {
		read_all(data, cut, &o);
		if (o.open_rc) {
			assert_true(o.err[0] != '\0');
			assert_int_equal(prev, 0);
		} else {
			assert_true(o.nrec >= prev);
			assert_true(o.nrec <= full_n);
			/* What was read is exactly the start of the whole. */
			assert_true(!strncmp(o.text.buf, full.text.buf, o.text.len));
			if (o.status != MP_READ_OK)
				assert_true(strstr(o.err, "truncated") != NULL);
			prev = o.nrec;
		}
		strbuf_release(&o.text);
	}
	assert_true(prev < full_n);
	strbuf_release(&full.text);
	free(data);
}

static void test_truncation_raw(void **state)
{
	(void)state;
	truncate_everywhere("raw.mprof");
	truncate_everywhere("raw-v3.mprof");
	truncate_everywhere("raw-v2.mprof");
}
static void test_truncation_compressed(void **state)
{
	(void)state;
	truncate_everywhere("basic.mprof");
	truncate_everywhere("basic-v3.mprof");
	truncate_everywhere("basic-v2.mprof");
	truncate_everywhere("basic-v1.mprof");
}

/* Thousands of mutated files: the reader never crashes, hangs or overreads. */
static void test_random_corruption(void **state)
{
	const char *names[] = { "raw.mprof", "basic.mprof", "raw-v3.mprof", "basic-v3.mprof",
				"raw-v2.mprof", "basic-v2.mprof", "basic-v1.mprof" };
	unsigned seed = 12345;
	(void)state;
	for (size_t f = 0; f < sizeof(names) / sizeof(names[0]); f++) {
		size_t len;
		uint8_t *data = slurp(names[f], &len);
		uint8_t *mut = xmalloc(len + 64);
		for (int iter = 0; iter < 3000; iter++) {
			size_t mlen = len;
			struct readout o;
			memcpy(mut, data, len);
			switch (rand_r(&seed) % 4) {
			case 0: /* flip a few bytes */
				for (int k = 1 + rand_r(&seed) % 4; k > 0; k--)
					mut[rand_r(&seed) % len] ^= (uint8_t)(1 + rand_r(&seed) % 255);
				break;
			case 1: /* random bytes over a span */
			{
				size_t at = (size_t)rand_r(&seed) % len, n = 1 + rand_r(&seed) % 16;
				for (size_t k = at; k < at + n && k < len; k++)
					mut[k] = (uint8_t)rand_r(&seed);
				break;
			}
			case 2: /* delete a span */
			{
				size_t at = (size_t)rand_r(&seed) % len, n = 1 + rand_r(&seed) % 8;
				if (at + n > len)
					n = len - at;
				memmove(mut + at, mut + at + n, len - at - n);
				mlen = len - n;
				break;
			}
			case 3: /* insert random bytes */
			{
				size_t at = (size_t)rand_r(&seed) % len, n = 1 + rand_r(&seed) % 8;
				memmove(mut + at + n, mut + at, len - at);
				for (size_t k = 0; k < n; k++)
					mut[at + k] = (uint8_t)rand_r(&seed);
				mlen = len + n;
				break;
			}
			}
			read_all(mut, mlen, &o);
			/* Each record takes at least one byte: bounded work. */
			assert_true(o.nrec <= mlen * 64);
			if (o.open_rc == 0 && o.status == MP_READ_CORRUPT)
				assert_true(o.err[0] != '\0');
			strbuf_release(&o.text);
		}
		free(mut);
		free(data);
	}
}

static void test_unknown_records_and_fields_skipped(void **state)
{
	uint8_t buf[256], *p, *rec_start;
	struct readout o;
	struct mp_enc_thread enc = { 0 };
	(void)state;
	memcpy(buf, preamble, sizeof(preamble));
	p = buf + sizeof(preamble);
	/* A header with two keys from the future. */
	rec_start = p;
	p = mp_enc_sized_begin(p, MP_TAG_HEADER);
	p = mp_enc_field_uint(p, MP_H_PID, 77);
	p = mp_enc_field_uint(p, 999, 5);
	p = mp_enc_field_bytes(p, 1000, "future", 6);
	p = mp_enc_field_sint(p, 1001, -3);
	p = mp_enc_field_bytes(p, MP_H_EXE, "/x", 2);
	p = mp_enc_sized_end(rec_start, p);
	/* An unknown record type. */
	*p++ = 0xf3;
	*p++ = 3;
	*p++ = 1;
	*p++ = 2;
	*p++ = 3;
	/* A THREAD record with a trailing field from the future. */
	rec_start = p;
	p = mp_enc_sized_begin(p, MP_TAG_THREAD);
	p = mp_put_uvarint(p, 0);
	p = mp_put_uvarint(p, 77);
	p = mp_enc_bytes(p, "t", 1);
	p = mp_put_uvarint(p, 12345);
	p = mp_enc_sized_end(rec_start, p);
	p = mp_enc_alloc(p, &enc, MP_KIND_MALLOC, 0x1000, 8, 0);
	read_all(buf, (size_t)(p - buf), &o);
	assert_int_equal(o.open_rc, 0);
	assert_int_equal(o.status, MP_READ_OK);
	assert_int_equal(o.nrec, 3);
	assert_non_null(strstr(o.text.buf, "UNKNOWN type=0xf3 length=3\n"));
	assert_non_null(strstr(o.text.buf, "THREAD index=0 tid=77 name=\"t\"\n"));
	assert_non_null(strstr(o.text.buf, "ALLOC thread=0 kind=malloc addr=0x1000 size=8 stack=0\n"));
	strbuf_release(&o.text);
}

static void test_versions(void **state)
{
	uint8_t buf[64];
	size_t n = minimal(buf);
	struct readout o;
	(void)state;
	buf[8] = MP_FORMAT_MAJOR + 1;
	read_all(buf, n, &o);
	assert_int_equal(o.open_rc, -1);
	assert_non_null(strstr(o.err, "capture format 5.0"));
	assert_non_null(strstr(o.err, "upgrade memprof"));
	strbuf_release(&o.text);
	buf[8] = 0;
	read_all(buf, n, &o);
	assert_int_equal(o.open_rc, -1);
	assert_non_null(strstr(o.err, "capture format 0.0"));
	assert_null(strstr(o.err, "upgrade"));
	strbuf_release(&o.text);
	buf[8] = 1;
	buf[9] = 200; /* a newer minor version is readable */
	read_all(buf, n, &o);
	assert_int_equal(o.open_rc, 0);
	assert_int_equal(o.status, MP_READ_OK);
	strbuf_release(&o.text);
}

static void expect_corrupt(const uint8_t *buf, size_t n, const char *why)
{
	struct readout o;
	read_all(buf, n, &o);
	assert_int_equal(o.open_rc, 0);
	assert_int_equal(o.status, MP_READ_CORRUPT);
	if (!strstr(o.err, why))
		fail_msg("expected '%s' in '%s'", why, o.err);
	strbuf_release(&o.text);
}

static void test_corrupt_records(void **state)
{
	uint8_t buf[128];
	size_t n;
	(void)state;
	/* An event tag that format 1.0 does not define (3.0 does). */
	n = minimal(buf);
	buf[n++] = 0x05;
	expect_corrupt(buf, n, "unknown record type 0x05");
	/* A zero byte. */
	n = minimal(buf);
	buf[n++] = 0x00;
	expect_corrupt(buf, n, "unknown record type 0x00");
	/* An allocation on a stack that was never defined. */
	n = minimal(buf);
	buf[n++] = MP_TAG_ALLOC;
	buf[n++] = 0;
	buf[n++] = 8;
	buf[n++] = mp_zigzag(3);
	expect_corrupt(buf, n, "trace node 3");
	/* A trace node whose parent is not earlier. */
	n = minimal(buf);
	buf[n++] = MP_TAG_TRACE;
	buf[n++] = 2;
	buf[n++] = 0;
	expect_corrupt(buf, n, "invalid parent");
	/* A varint longer than 64 bits. */
	n = minimal(buf);
	buf[n++] = MP_TAG_TICK;
	for (int i = 0; i < 10; i++)
		buf[n++] = 0xff;
	buf[n++] = 0x01;
	expect_corrupt(buf, n, "malformed number");
	/* An absurd record length is refused before any allocation. */
	n = minimal(buf);
	buf[n++] = MP_TAG_STRING;
	n = (size_t)(mp_put_uvarint(buf + n, 1ull << 40) - buf);
	expect_corrupt(buf, n, "exceeds the limit");
	/* A block with an unknown codec. */
	n = minimal(buf);
	buf[n++] = MP_TAG_BLOCK;
	buf[n++] = 3;
	buf[n++] = 9;
	buf[n++] = 1;
	buf[n++] = 0;
	expect_corrupt(buf, n, "unknown codec 9");
	/* A block claiming more than the limit. */
	n = minimal(buf);
	buf[n++] = MP_TAG_BLOCK;
	buf[n++] = 6;
	buf[n++] = MP_CODEC_ZSTD;
	n = (size_t)(mp_put_uvarint(buf + n, 1ull << 30) - buf);
	buf[n++] = 0;
	expect_corrupt(buf, n, "claims");
	/* A block that does not decompress. */
	n = minimal(buf);
	buf[n++] = MP_TAG_BLOCK;
	buf[n++] = 5;
	buf[n++] = MP_CODEC_ZSTD;
	buf[n++] = 10;
	buf[n++] = 1;
	buf[n++] = 2;
	buf[n++] = 3;
	expect_corrupt(buf, n, "does not decompress");
	/* A string out of sequence. */
	n = minimal(buf);
	buf[n++] = MP_TAG_STRING;
	buf[n++] = 2;
	buf[n++] = 5;
	buf[n++] = 0;
	expect_corrupt(buf, n, "out of sequence");
	/* A second header. */
	n = minimal(buf);
	buf[n++] = MP_TAG_HEADER;
	buf[n++] = 0;
	expect_corrupt(buf, n, "second header");
}

static void test_refused_files(void **state)
{
	uint8_t buf[64];
	struct readout o;
	size_t n;
	(void)state;
	read_all("", 0, &o);
	assert_int_equal(o.open_rc, -1);
	assert_non_null(strstr(o.err, "is empty"));
	strbuf_release(&o.text);
	read_all("hello world, not a capture", 26, &o);
	assert_int_equal(o.open_rc, -1);
	assert_non_null(strstr(o.err, "not a memprof capture"));
	strbuf_release(&o.text);
	read_all(preamble, 5, &o);
	assert_int_equal(o.open_rc, -1);
	assert_non_null(strstr(o.err, "truncated"));
	strbuf_release(&o.text);
	/* A stream whose first record is not a header. */
	memcpy(buf, preamble, sizeof(preamble));
	n = sizeof(preamble);
	buf[n++] = MP_TAG_TICK;
	buf[n++] = 1;
	buf[n++] = 1;
	read_all(buf, n, &o);
	assert_int_equal(o.open_rc, -1);
	assert_non_null(strstr(o.err, "corrupt header"));
	strbuf_release(&o.text);
}

/* Reading from a pipe fed one byte at a time gives the same records as the file. */
static void test_pipe(void **state)
{
	size_t len;
	uint8_t *data = slurp("basic.mprof", &len);
	struct readout whole;
	struct mp_reader r;
	struct mp_record rec;
	struct strbuf text = STRBUF_INIT;
	int fds[2], status;
	pid_t pid;
	(void)state;

	read_all(data, len, &whole);
	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(fds[0]);
		for (size_t i = 0; i < len; i++)
			if (write(fds[1], data + i, 1) != 1)
				_exit(1);
		_exit(0);
	}
	close(fds[1]);
	assert_int_equal(mp_reader_open_fd(&r, fds[0], "pipe"), 0);
	while (mp_reader_next(&r, &rec))
		mp_dump_record(&text, &r, &rec);
	assert_int_equal(r.status, MP_READ_OK);
	assert_string_equal(text.buf, whole.text.buf);
	mp_reader_release(&r);
	close(fds[0]);
	waitpid(pid, &status, 0);
	assert_int_equal(status, 0);
	strbuf_release(&text);
	strbuf_release(&whole.text);
	free(data);
}

/* A large stream spans many compressed blocks and reads back exactly. */
static void test_many_blocks(void **state)
{
	char *path = tmp_path();
	struct mp_writer w;
	struct mp_reader r;
	struct mp_record rec;
	struct mp_header h = { .pid = 1 };
	uint64_t n_alloc = 0, n_free = 0, sum = 0;
	const uint64_t N = 600000;
	(void)state;
	assert_int_equal(mp_writer_open(&w, path, 0), 0);
	mp_writer_header(&w, &h);
	for (uint64_t i = 1; i <= 50; i++)
		mp_writer_trace(&w, i - 1, 0x400000 + i);
	for (uint64_t i = 0; i < N; i++) {
		uint32_t t = (uint32_t)(i % 3);
		mp_writer_alloc(&w, t, MP_KIND_MALLOC, 0x10000 + i * 32 + t * 0x100000000ull,
				i % 1000, 1 + i % 50);
		if (i % 2)
			mp_writer_free(&w, t, MP_KIND_FREE, 0x10000 + i * 32 + t * 0x100000000ull);
	}
	assert_int_equal(mp_writer_close(&w), 0);
	assert_int_equal(mp_reader_open(&r, path), 0);
	while (mp_reader_next(&r, &rec)) {
		if (rec.type == MP_REC_ALLOC) {
			assert_true(rec.u.ev.addr ==
				    0x10000 + n_alloc * 32 + rec.thread * 0x100000000ull);
			assert_int_equal(rec.u.ev.stack, 1 + n_alloc % 50);
			sum += rec.u.ev.size;
			n_alloc++;
		} else if (rec.type == MP_REC_FREE) {
			n_free++;
		}
	}
	assert_int_equal(r.status, MP_READ_OK);
	assert_int_equal(n_alloc, N);
	assert_int_equal(n_free, N / 2);
	assert_int_equal(sum, (N / 1000) * (999 * 1000 / 2));
	mp_reader_release(&r);
	unlink(path);
	free(path);
}

/*
 * A snapshot is a capture of its own, published whole: written aside as
 * PATH.partial and renamed, so a failed one leaves PATH as it was and no
 * partial file behind.
 */
static void test_snapshot_published_whole(void **state)
{
	char *path = tmp_path(), *snap = xasprintf("%s.snap.1", path);
	char *partial = xasprintf("%s.partial", snap);
	struct mp_writer w;
	struct mp_reader r;
	struct mp_record rec;
	struct mp_header h = { .pid = 1 };
	struct mp_trailer t = { .n_allocs = 2000 };
	struct rlimit old, lim;
	struct stat st;
	uint64_t n_alloc = 0;
	FILE *f;
	char got[8] = { 0 };
	(void)state;
	assert_int_equal(mp_writer_open(&w, path, 0), 0);
	mp_writer_header(&w, &h);
	mp_writer_trace(&w, 0, 0x401000);
	for (uint64_t i = 0, x = 1; i < 2000; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull; /* sizes that do not compress away */
		mp_writer_alloc(&w, 0, MP_KIND_MALLOC, 0x10000 + i * 7919 * 16, 1 + (x >> 40), 1);
	}
	assert_int_equal(mp_writer_snapshot(&w, snap, NULL, 0, &t), 0);
	assert_int_equal(stat(partial, &st), -1);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(mp_reader_open(&r, snap), 0);
	while (mp_reader_next(&r, &rec))
		n_alloc += rec.type == MP_REC_ALLOC;
	assert_int_equal(r.status, MP_READ_OK);
	assert_int_equal(n_alloc, 2000);
	mp_reader_release(&r);

	/*
	 * A snapshot that cannot be written whole (a file size limit halfway)
	 * leaves the old file. The first snapshot wrote every block: this one
	 * writes nothing to the capture itself.
	 */
	f = fopen(snap, "w");
	assert_non_null(f);
	fputs("old", f);
	fclose(f);
	assert_true(w.bytes_written > 1000);
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	lim = old;
	lim.rlim_cur = (rlim_t)(w.bytes_written / 2);
	signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
	errno = 0;
	assert_int_equal(mp_writer_snapshot(&w, snap, NULL, 0, &t), -1);
	assert_int_equal(errno, EFBIG);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, SIG_DFL);
	assert_int_equal(stat(partial, &st), -1);
	f = fopen(snap, "r");
	assert_non_null(f);
	assert_non_null(fgets(got, sizeof(got), f));
	fclose(f);
	assert_string_equal(got, "old");

	assert_int_equal(mp_writer_close(&w), 0);
	unlink(snap);
	unlink(path);
	free(partial);
	free(snap);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_varints),
		cmocka_unit_test(test_event_deltas),
		cmocka_unit_test(test_tick_at),
		cmocka_unit_test(test_incomplete_is_not_consumed),
		cmocka_unit_test(test_roundtrip_compressed),
		cmocka_unit_test(test_roundtrip_raw),
		cmocka_unit_test(test_writer_refuses_overwrite),
		cmocka_unit_test(test_truncation_raw),
		cmocka_unit_test(test_truncation_compressed),
		cmocka_unit_test(test_random_corruption),
		cmocka_unit_test(test_unknown_records_and_fields_skipped),
		cmocka_unit_test(test_versions),
		cmocka_unit_test(test_corrupt_records),
		cmocka_unit_test(test_refused_files),
		cmocka_unit_test(test_pipe),
		cmocka_unit_test(test_many_blocks),
		cmocka_unit_test(test_snapshot_published_whole),
	};
	return cmocka_run_group_tests(tests, NULL, NULL) ? 1 : 0;
}
