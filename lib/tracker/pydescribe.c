/*
 * Describing Python frames: the PYFRAME record of each synthetic ip (its
 * function, file, line and column, read from the live code object the first
 * time a trace node uses the ip), and, when the tracker writes the capture
 * itself, the STRING and SYMBOL records that stand for it.
 */
#include <config.h>

#include <string.h>

#include "lib/format/pyframe.h"
#include "lib/tracker/python-private.h"
#include "lib/tracker/pyline.h"
#include "lib/tracker/stream.h"

/* ---- the ips this stream has described (under the trace tree's lock) ---- */

static uint64_t *described;
static size_t described_mask, described_count;

static size_t ip_slot(uint64_t ip)
{
	uint64_t h = ip * 0x9e3779b97f4a7c15ull;
	return (size_t)(h ^ (h >> 32));
}

/* 1 when ip is new (now remembered), 0 when known, -1 when out of memory. */
static int described_add(uint64_t ip)
{
	size_t i;
	if ((described_count + 1) * 2 > described_mask + 1 || !described) {
		size_t n = described ? (described_mask + 1) * 2 : 1u << 10;
		uint64_t *t = mp_pages(n * sizeof(*t));
		if (!t)
			return -1;
		for (size_t k = 0; described && k <= described_mask; k++) {
			if (!described[k])
				continue;
			for (i = ip_slot(described[k]) & (n - 1); t[i]; i = (i + 1) & (n - 1))
				;
			t[i] = described[k];
		}
		if (described)
			mp_pages_free(described, (described_mask + 1) * sizeof(*described));
		described = t;
		described_mask = n - 1;
	}
	for (i = ip_slot(ip) & described_mask; described[i]; i = (i + 1) & described_mask)
		if (described[i] == ip)
			return 0;
	described[i] = ip;
	described_count++;
	return 1;
}

void mp_py_stream_reset(void)
{
	if (described)
		memset(described, 0, (described_mask + 1) * sizeof(*described));
	described_count = 0;
}

/* ---- reading a code object ---- */

size_t mp_py_str_text(const char *s, char *out, size_t cap)
{
	uint32_t state;
	uint64_t len;
	unsigned kind;
	if (!mp_py_is(s, mp_pyl.str_type))
		goto unknown;
	state = mp_py_u32(s, mp_pyl.str_state);
	len = mp_py_word(s, mp_pyl.str_length);
	kind = (state >> 2) & 7;
	if (!((state >> 5) & 1) || (kind != 1 && kind != 2 && kind != 4))
		goto unknown; /* not compact: a kind of str a code object does not hold */
	if (len > cap)
		len = cap;
	if ((state >> 6) & 1) {
		memcpy(out, s + mp_pyl.str_ascii, (size_t)len);
		return (size_t)len;
	}
	return mp_pyline_utf8((const uint8_t *)s + mp_pyl.str_compact, (size_t)len, kind, out, cap);
unknown:
	out[0] = '?';
	return 1;
}

int mp_py_describe(struct mp_wring *w, uint64_t ip)
{
	static char function[MP_PYFRAME_TEXT_MAX], file[MP_PYFRAME_TEXT_MAX]; /* under the tree's lock */
	uint8_t rec[MP_PYFRAME_MAX];
	struct mp_pyframe f = { .ip = ip };
	const char *code, *table;
	if (described_add(ip) <= 0)
		return 0; /* described already (or no memory to remember it: shown as the bare address) */
	mp_py_codes_lock();
	code = mp_py_code(mp_pyip_code(ip));
	mp_py_codes_unlock();
	if (!code)
		return 0; /* no number like it: shown as the bare address */
	/*
	 * The code object is alive: a frame of the allocation being recorded
	 * runs it (numbers are given to the code objects of live frames, and a
	 * number is never given again).
	 */
	f.function = function;
	f.function_len = mp_py_str_text((const char *)(uintptr_t)mp_py_word(code, mp_pyl.co_qualname),
				  function, sizeof(function));
	f.file = file;
	f.file_len = mp_py_str_text((const char *)(uintptr_t)mp_py_word(code, mp_pyl.co_filename), file,
			      sizeof(file));
	table = (const char *)(uintptr_t)mp_py_word(code, mp_pyl.co_linetable);
	if (mp_py_is(table, mp_pyl.bytes_type)) {
		uint64_t len = mp_py_word(table, mp_pyl.bytes_size);
		mp_pyline_find((const uint8_t *)table + mp_pyl.bytes_data,
			       len > (1u << 24) ? 1u << 24 : (size_t)len,
			       (int32_t)mp_py_u32(code, mp_pyl.co_firstlineno), mp_pyip_offset(ip),
			       &f.line, &f.column);
	}
	return mp_stream_put(w, rec, (size_t)(mp_enc_pyframe(rec, &f) - rec));
}

/* ---- direct mode: STRING and SYMBOL records ---- */

/*
 * The strings written so far into the capture, by a 64-bit hash of their
 * text and length (a clash would give a frame another's name; at 2^-64 per
 * pair, not a worry): their ids. Under the direct writer's lock.
 */
struct dstr {
	uint64_t h;
	uint32_t len, id;
};
static struct dstr *dstrs;
static size_t dstr_mask, dstr_count;
static uint64_t dstr_next;

void mp_py_direct_reset(void)
{
	if (dstrs)
		memset(dstrs, 0, (dstr_mask + 1) * sizeof(*dstrs));
	dstr_count = 0;
	dstr_next = 0;
}

static uint64_t text_hash(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)s[i]) * 0x100000001b3ull;
	return (h ^ n) | 1;
}

/* The id of a string, its STRING record passed to out if it is new; 0 on failure. */
static uint64_t direct_string(const char *s, size_t n, int (*out)(void *, const uint8_t *, size_t),
			      void *ctx)
{
	uint8_t rec[MP_ENC_MAX_PREFIX + 2 * MP_VARINT_MAX + MP_PYFRAME_TEXT_MAX], *p;
	uint64_t h = text_hash(s, n);
	size_t i;
	if (!dstrs || (dstr_count + 1) * 2 > dstr_mask + 1) {
		size_t cap = dstrs ? (dstr_mask + 1) * 2 : 1u << 9;
		struct dstr *t = mp_pages(cap * sizeof(*t));
		if (!t)
			return 0;
		for (size_t k = 0; dstrs && k <= dstr_mask; k++) {
			if (!dstrs[k].h)
				continue;
			for (i = dstrs[k].h & (cap - 1); t[i].h; i = (i + 1) & (cap - 1))
				;
			t[i] = dstrs[k];
		}
		if (dstrs)
			mp_pages_free(dstrs, (dstr_mask + 1) * sizeof(*dstrs));
		dstrs = t;
		dstr_mask = cap - 1;
	}
	for (i = h & dstr_mask; dstrs[i].h; i = (i + 1) & dstr_mask)
		if (dstrs[i].h == h && dstrs[i].len == n)
			return dstrs[i].id;
	p = mp_enc_sized_begin(rec, MP_TAG_STRING);
	p = mp_put_uvarint(p, ++dstr_next);
	p = mp_enc_bytes(p, s, n);
	p = mp_enc_sized_end(rec, p);
	if (out(ctx, rec, (size_t)(p - rec)))
		return 0;
	dstrs[i].h = h;
	dstrs[i].len = (uint32_t)n;
	dstrs[i].id = (uint32_t)dstr_next;
	dstr_count++;
	return dstr_next;
}

void mp_py_direct_symbols(const uint8_t *data, size_t len,
			  int (*out)(void *ctx, const uint8_t *p, size_t n), void *ctx)
{
	uint8_t rec[MP_ENC_MAX_PREFIX + 8 * MP_VARINT_MAX], *p;
	struct mp_pyframe f;
	uint64_t fn, file;
	if (mp_dec_pyframe(data, len, &f) || f.function_len > MP_PYFRAME_TEXT_MAX ||
	    f.file_len > MP_PYFRAME_TEXT_MAX)
		return;
	fn = direct_string(f.function, f.function_len, out, ctx);
	file = direct_string(f.file, f.file_len, out, ctx);
	/* SYMBOL: ip, no module, offset 0, one frame. */
	p = mp_enc_sized_begin(rec, MP_TAG_SYMBOL);
	p = mp_put_uvarint(p, f.ip);
	p = mp_put_uvarint(p, 0);
	p = mp_put_uvarint(p, 0);
	p = mp_put_uvarint(p, 1);
	p = mp_put_uvarint(p, fn);
	p = mp_put_uvarint(p, file);
	p = mp_put_uvarint(p, f.line);
	p = mp_put_uvarint(p, f.column);
	p = mp_enc_sized_end(rec, p);
	out(ctx, rec, (size_t)(p - rec));
}
