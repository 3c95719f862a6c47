/*
 * Splitting a block's records into field streams and joining them back.
 * Both walk the records with the same table of fields per tag, so they
 * cannot disagree on where a field goes.
 */
#include <config.h>
#include "lib/fields.h"

#include <stdlib.h>
#include <string.h>

#include "lib/encode.h"
#include "lib/format.h"
#include "lib/xalloc.h"

/* What follows a tag below 0x80: up to three fields, each a stream (an address is one field). */
enum { F_END = -1, F_ADDR = -2 };
struct layout {
	signed char f[3];
};

/* The layout of an event record's tag; false for tags that are not defined. */
static int layout_of(unsigned tag, struct layout *l)
{
	static const struct layout by_class[6] = {
		{ { F_ADDR, MP_FS_SIZES, MP_FS_STACKS } },  /* 0x10 ALLOC */
		{ { F_ADDR, F_END, F_END } },                /* 0x20 FREE */
		{ { F_ADDR, MP_FS_SIZES, F_END } },          /* 0x30 FREE_RANGE */
		{ { MP_FS_SIZES, MP_FS_STACKS, F_END } },    /* 0x40 ALLOC_SEQ */
		{ { MP_FS_AGES, F_END, F_END } },            /* 0x50 FREE_SEQ */
	};
	switch (tag) {
	case MP_TAG_THREAD_SWITCH:
		*l = (struct layout){ { MP_FS_OTHER, F_END, F_END } };
		return 1;
	case MP_TAG_TRACE:
	case MP_TAG_TICK:
		*l = (struct layout){ { MP_FS_OTHER, MP_FS_OTHER, F_END } };
		return 1;
	default:
		if (tag >= MP_TAG_ALLOC && tag < MP_TAG_FREE_SEQ + 16) {
			*l = by_class[(tag >> 4) - 1];
			return 1;
		}
		return 0;
	}
}

/* A cursor over one stream. */
struct src {
	const uint8_t *p, *end;
};

/*
 * Copy one varint from s to *out (at most MP_VARINT_MAX bytes, within
 * out_end); its value in *v. Returns 0, or -1 when s ends inside it or it is
 * too long, or out has no room.
 */
static inline __attribute__((always_inline)) int copy_varint(struct src *s, uint8_t **out,
							     const uint8_t *out_end, uint64_t *v)
{
	uint64_t val = 0;
	unsigned shift = 0;
	/* Most numbers are a byte or two. */
	if (s->p < s->end && *out < out_end && *s->p < 0x80) {
		*v = *s->p;
		*(*out)++ = *s->p++;
		return 0;
	}
	for (size_t i = 0; i < MP_VARINT_MAX; i++) {
		uint8_t b;
		if (s->p >= s->end || *out >= out_end)
			return -1;
		b = *s->p++;
		*(*out)++ = b;
		if (shift < 64)
			val |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80)) {
			*v = val;
			return 0;
		}
	}
	return -1;
}

/* A field: an address is one varint, or two when the first has its low bit set. */
static inline __attribute__((always_inline)) int copy_field(struct src *s, int field, uint8_t **out,
							    const uint8_t *out_end)
{
	uint64_t v;
	if (copy_varint(s, out, out_end, &v) < 0)
		return -1;
	if (field == F_ADDR && (v & 1))
		return copy_varint(s, out, out_end, &v);
	return 0;
}

/* ---- splitting ---------------------------------------------------------- */

void mp_fields_init(struct mp_fields *f)
{
	memset(f, 0, sizeof(*f));
}

void mp_fields_release(struct mp_fields *f)
{
	for (int i = 0; i < MP_FS_COUNT; i++)
		free(f->p[i]);
	mp_fields_init(f);
}

void mp_fields_reset(struct mp_fields *f)
{
	for (int i = 0; i < MP_FS_COUNT; i++)
		f->len[i] = 0;
}

size_t mp_fields_total(const struct mp_fields *f)
{
	size_t n = 0;
	for (int i = 0; i < MP_FS_COUNT; i++)
		n += f->len[i];
	return n;
}

void mp_fields_grow(struct mp_fields *f, int stream, size_t n)
{
	size_t a = f->alloc[stream] ? f->alloc[stream] : 16 * 1024;
	while (a - f->len[stream] < n)
		a *= 2;
	f->p[stream] = xrealloc(f->p[stream], a);
	f->alloc[stream] = a;
}

int mp_fields_append(struct mp_fields *f, const uint8_t *raw, size_t len)
{
	const uint8_t *end = raw + len;
	struct src in = { raw, end };
	size_t was[MP_FS_COUNT];

	/* No stream grows by more than the records' length: make that room once. */
	for (int i = 0; i < MP_FS_COUNT; i++) {
		mp_fields_room(f, i, len);
		was[i] = f->len[i];
	}
	while (in.p < end) {
		unsigned tag = *in.p++;
		struct layout l;
		f->p[MP_FS_TAGS][f->len[MP_FS_TAGS]++] = (uint8_t)tag;
		if (tag >= MP_TAG_FIRST_SIZED) {
			uint8_t *o = f->p[MP_FS_OTHER] + f->len[MP_FS_OTHER];
			uint64_t plen;
			if (copy_varint(&in, &o, f->p[MP_FS_OTHER] + f->alloc[MP_FS_OTHER], &plen) < 0 ||
			    plen > (uint64_t)(end - in.p))
				goto undo;
			memcpy(o, in.p, (size_t)plen);
			in.p += plen;
			f->len[MP_FS_OTHER] = (size_t)(o + plen - f->p[MP_FS_OTHER]);
			continue;
		}
		if (!layout_of(tag, &l))
			goto undo;
		for (int k = 0; k < 3 && l.f[k] != F_END; k++) {
			int to = l.f[k] == F_ADDR ? MP_FS_ADDRS : l.f[k];
			uint8_t *o = f->p[to] + f->len[to];
			if (copy_field(&in, l.f[k], &o, f->p[to] + f->alloc[to]) < 0)
				goto undo;
			f->len[to] = (size_t)(o - f->p[to]);
		}
	}
	return 0;
undo:
	for (int i = 0; i < MP_FS_COUNT; i++)
		f->len[i] = was[i];
	return -1;
}

int mp_fields_split(struct mp_fields *f, const uint8_t *raw, size_t len)
{
	mp_fields_reset(f);
	return mp_fields_append(f, raw, len);
}

/* ---- joining ------------------------------------------------------------ */

/*
 * The common case without bounds checks per byte: a varint from a stream
 * with at least MP_VARINT_MAX bytes left, to an output with room for it.
 * Returns the output's new end, or NULL for a varint longer than that.
 */
static inline __attribute__((always_inline)) uint8_t *fast_varint(struct src *s, uint8_t *o)
{
	const uint8_t *p = s->p;
	for (int i = 0; i < MP_VARINT_MAX; i++) {
		uint8_t b = p[i];
		o[i] = b;
		if (!(b & 0x80)) {
			s->p = p + i + 1;
			return o + i + 1;
		}
	}
	return NULL;
}

static inline int has(const struct src *s, size_t n)
{
	return (size_t)(s->end - s->p) >= n;
}

/*
 * The hot records (ALLOC_SEQ, FREE_SEQ, THREAD_SWITCH) when every stream
 * they read has room for the longest varints and the output for the longest
 * record. Returns 1 when done (*o advanced), 0 to take the careful path
 * (nothing consumed), -1 for a number longer than a varint can be.
 */
static inline __attribute__((always_inline)) int fast_record(struct src *in, unsigned tag,
							    uint8_t **o)
{
	uint8_t *e = *o + 1;
	switch (tag >> 4) {
	case MP_TAG_ALLOC_SEQ >> 4:
		if (!has(&in[MP_FS_SIZES], MP_VARINT_MAX) || !has(&in[MP_FS_STACKS], MP_VARINT_MAX))
			return 0;
		e = fast_varint(&in[MP_FS_SIZES], e);
		if (e)
			e = fast_varint(&in[MP_FS_STACKS], e);
		break;
	case MP_TAG_FREE_SEQ >> 4:
		if (!has(&in[MP_FS_AGES], MP_VARINT_MAX))
			return 0;
		e = fast_varint(&in[MP_FS_AGES], e);
		break;
	case 0:
		if (tag != MP_TAG_THREAD_SWITCH || !has(&in[MP_FS_OTHER], MP_VARINT_MAX))
			return 0;
		e = fast_varint(&in[MP_FS_OTHER], e);
		break;
	default:
		return 0;
	}
	if (!e)
		return -1;
	**o = (uint8_t)tag;
	*o = e;
	return 1;
}

int mp_fields_join(const uint8_t *const s[MP_FS_COUNT], const size_t n[MP_FS_COUNT], uint8_t *out,
		   size_t raw_len, const char **why)
{
	struct src in[MP_FS_COUNT];
	uint8_t *o = out, *out_end = out + raw_len;

	for (int i = 0; i < MP_FS_COUNT; i++)
		in[i] = (struct src){ s[i], s[i] + n[i] };
	while (in[MP_FS_TAGS].p < in[MP_FS_TAGS].end) {
		unsigned tag = *in[MP_FS_TAGS].p++;
		struct layout l;
		if (out_end - o >= 1 + 2 * MP_VARINT_MAX) {
			int done = fast_record(in, tag, &o);
			if (done > 0)
				continue;
			if (done < 0) {
				*why = "a number in a field stream is longer than 10 bytes";
				return -1;
			}
		}
		if (o >= out_end)
			goto overrun;
		*o++ = (uint8_t)tag;
		if (tag >= MP_TAG_FIRST_SIZED) {
			uint64_t plen;
			struct src *x = &in[MP_FS_OTHER];
			if (copy_varint(x, &o, out_end, &plen) < 0)
				goto short_stream;
			if (plen > (uint64_t)(x->end - x->p))
				goto short_stream;
			if (plen > (uint64_t)(out_end - o))
				goto overrun;
			memcpy(o, x->p, (size_t)plen);
			x->p += plen;
			o += plen;
			continue;
		}
		if (!layout_of(tag, &l)) {
			*why = "an unknown record type in the tag stream";
			return -1;
		}
		for (int k = 0; k < 3 && l.f[k] != F_END; k++) {
			int from = l.f[k] == F_ADDR ? MP_FS_ADDRS : l.f[k];
			if (copy_field(&in[from], l.f[k], &o, out_end) < 0)
				goto short_stream;
		}
	}
	if (o != out_end) {
		*why = "the field streams make fewer bytes than the block's length";
		return -1;
	}
	for (int i = 0; i < MP_FS_COUNT; i++)
		if (in[i].p != in[i].end) {
			*why = "a field stream has bytes left over";
			return -1;
		}
	return 0;
short_stream:
	if (o >= out_end)
		goto overrun;
	*why = "a field stream ends inside a record";
	return -1;
overrun:
	*why = "the field streams make more bytes than the block's length";
	return -1;
}
