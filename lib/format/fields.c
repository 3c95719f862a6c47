/*
 * Splitting a block's records into field streams and joining them back.
 * Both move each record with move_record(), in opposite directions, so
 * they cannot disagree on where a field goes.
 */
#include <config.h>
#include "lib/format/fields.h"

#include <stdlib.h>
#include <string.h>

#include "lib/format/encode.h"
#include "lib/format/format.h"
#include "lib/util/hash.h"
#include "lib/util/xalloc.h"

/*
 * What follows a tag below 0x80: up to three fields. A field is a varint
 * going to one stream, an address (one or two varints, to MP_FS_ADDRS), or
 * a number in byte planes: n bytes, little-endian, byte i going to stream
 * base + min(i, 2), where n is fixed by the tag or is a count byte (1..8)
 * going to MP_FS_TAGS first. A size or a stack delta is a varint that in
 * codec 4 goes in varint planes (mp_fields_put_vplanes()).
 */
enum { H_END, H_VARINT, H_ADDR, H_PLANES, H_COUNTED, H_VPLANES };
struct field {
	unsigned char how, stream, n;
};
struct layout {
	struct field f[3];
};
#define VARINT(st) { H_VARINT, (st), 0 }
#define VPLANES(st) { H_VPLANES, (st), 0 }
#define ADDR { H_ADDR, MP_FS_ADDRS, 0 }
#define END { H_END, 0, 0 }

/* The frees of format 3.0 with a number in byte planes: 0x0c (near), 0x74 (age), 0x78, 0x7c. */
static int planes_layout(unsigned tag, struct layout *l)
{
	unsigned base, k = tag & 3;
	if (tag >= MP_TAG_FREE_NEAR_N && tag < MP_TAG_FREE_NEAR_N + 4)
		base = MP_FS_NEAR0;
	else if (tag >= MP_TAG_FREE_AGE_N && tag < MP_TAG_FREE_AGE_N + 4)
		base = MP_FS_AGE0;
	else if (tag >= MP_TAG_REALLOC_NEAR_N && tag < MP_TAG_REALLOC_NEAR_N + 4)
		base = MP_FS_NEAR0;
	else if (tag >= MP_TAG_REALLOC_AGE_N && tag < MP_TAG_REALLOC_AGE_N + 4)
		base = MP_FS_AGE0;
	else
		return 0;
	*l = (struct layout){ { END, END, END } };
	l->f[0] = k == 3 ? (struct field){ H_COUNTED, (unsigned char)base, 0 }
			 : (struct field){ H_PLANES, (unsigned char)base, (unsigned char)(k + 1) };
	return 1;
}

/* The layout of an event record's tag; false for tags that are not defined. */
static int layout_of(unsigned tag, struct layout *l)
{
	static const struct layout by_class[5] = {
		{ { ADDR, VPLANES(MP_FS_SIZES), VPLANES(MP_FS_STACKS) } },  /* 0x10 ALLOC */
		{ { ADDR, END, END } },                                    /* 0x20 FREE */
		{ { ADDR, VPLANES(MP_FS_SIZES), END } },                   /* 0x30 FREE_RANGE */
		{ { VPLANES(MP_FS_SIZES), VPLANES(MP_FS_STACKS), END } },  /* 0x40 ALLOC_SEQ */
		{ { VARINT(MP_FS_AGES), END, END } },                      /* 0x50 FREE_SEQ */
	};
	switch (tag) {
	case MP_TAG_THREAD_SWITCH:
		*l = (struct layout){ { VARINT(MP_FS_OTHER), END, END } };
		return 1;
	case MP_TAG_TRACE:
	case MP_TAG_TICK:
	case MP_TAG_TICK_DELTA:
		*l = (struct layout){ { VARINT(MP_FS_OTHER), VARINT(MP_FS_OTHER), END } };
		return 1;
	case MP_TAG_ALLOC_REF_N:
		*l = (struct layout){ { VARINT(MP_FS_TAGS), END, END } };
		return 1;
	default:
		if (tag >= MP_TAG_ALLOC && tag < MP_TAG_FREE_SEQ + 16) {
			*l = by_class[(tag >> 4) - 1];
			return 1;
		}
		if ((tag >= MP_TAG_ALLOC_REF && tag < MP_TAG_ALLOC_REF + MP_REF_IN_TAG) ||
		    (tag >= MP_TAG_FREE_NEAR_LIT && tag < MP_TAG_FREE_AGE_LIT + 4)) {
			*l = (struct layout){ { END, END, END } };
			return 1;
		}
		return planes_layout(tag, l);
	}
}

/* What move_record() and the copies under it return for a number longer than a varint can be. */
#define MOVE_LONG (-3)

/* A cursor over one stream. */
struct src {
	const uint8_t *p, *end;
};

/*
 * Copy one varint from s to *out (at most MP_VARINT_MAX bytes, within
 * out_end); its value in *v. Returns 0, -1 when s ends inside it or out has
 * no room, or MOVE_LONG when it is longer than a varint can be.
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
	return MOVE_LONG;
}

/* n raw bytes, byte i from/to stream base + min(i, 2). */
struct route;
static int copy_planes(const struct route *r, unsigned base, unsigned n);

/*
 * Where the fields of one record come from and go to, by stream: splitting
 * reads them all from the records and writes each to its stream; joining
 * reads each from its stream and writes them all to the records.
 */
struct route {
	struct src *from[MP_FS_COUNT];
	uint8_t **to[MP_FS_COUNT];
	const uint8_t *to_end[MP_FS_COUNT];
	bool vplanes; /* codec 4 */
};

/* A varint in planes: byte i from/to stream base, then hi, then hi + 1 (lib/format/fields.h). */
static int copy_vplanes(const struct route *r, unsigned base)
{
	unsigned hi = (unsigned)mp_fields_hi_plane((int)base);
	for (unsigned i = 0; i < MP_VARINT_MAX; i++) {
		unsigned st = i == 0 ? base : hi + (i > 1);
		struct src *x = r->from[st];
		uint8_t **o = r->to[st];
		uint8_t b;
		if (x->p >= x->end || *o >= r->to_end[st])
			return -1;
		b = *x->p++;
		*(*o)++ = b;
		if (!(b & 0x80))
			return 0;
	}
	return MOVE_LONG;
}

/*
 * Move what follows a record's tag (the caller moves the tag): a sized
 * record's length and payload, or an event record's fields. Returns 0, 1
 * for a tag that is no record type, -2 when a sized record's payload does
 * not fit its destination, MOVE_LONG for a number longer than a varint can
 * be, or -1 when a source ends inside the record or a destination has no
 * room for a number.
 */
static int move_record(const struct route *r, unsigned tag)
{
	struct layout l;
	int rc;
	if (tag >= MP_TAG_FIRST_SIZED) {
		struct src *x = r->from[MP_FS_OTHER];
		uint8_t **o = r->to[MP_FS_OTHER];
		uint64_t plen;
		if ((rc = copy_varint(x, o, r->to_end[MP_FS_OTHER], &plen)) < 0)
			return rc;
		if (plen > (uint64_t)(x->end - x->p))
			return -1;
		if (plen > (uint64_t)(r->to_end[MP_FS_OTHER] - *o))
			return -2;
		memcpy(*o, x->p, (size_t)plen);
		x->p += plen;
		*o += plen;
		return 0;
	}
	if (!layout_of(tag, &l))
		return 1;
	for (int k = 0; k < 3 && l.f[k].how != H_END; k++) {
		const struct field *f = &l.f[k];
		unsigned st = f->stream;
		uint64_t v;
		switch (f->how) {
		case H_PLANES:
			if (copy_planes(r, st, f->n) < 0)
				return -1;
			break;
		case H_COUNTED:
			/* The count goes with the tags: a one-byte varint of 1 to 8. */
			if ((rc = copy_varint(r->from[MP_FS_TAGS], r->to[MP_FS_TAGS], r->to_end[MP_FS_TAGS], &v)) < 0)
				return rc;
			if (v < 1 || v > 8 || copy_planes(r, st, (unsigned)v) < 0)
				return -1;
			break;
		case H_VPLANES:
			if (r->vplanes) {
				if ((rc = copy_vplanes(r, st)) < 0)
					return rc;
				break;
			}
			/* codecs 2 and 3 keep the varint whole */
			__attribute__((fallthrough));
		default:
			if ((rc = copy_varint(r->from[st], r->to[st], r->to_end[st], &v)) < 0)
				return rc;
			/* An address is one varint, or two when the first has its low bit set. */
			if (f->how == H_ADDR && (v & 1) &&
			    (rc = copy_varint(r->from[st], r->to[st], r->to_end[st], &v)) < 0)
				return rc;
			break;
		}
	}
	return 0;
}

static int copy_planes(const struct route *r, unsigned base, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		unsigned st = base + (i < 2 ? i : 2);
		struct src *x = r->from[st];
		uint8_t **o = r->to[st];
		if (x->p >= x->end || *o >= r->to_end[st])
			return -1;
		*(*o)++ = *x->p++;
	}
	return 0;
}

/* ---- the length of a record ---------------------------------------------- */

/* A varint at s: 1 (its value in *v), 0 when s ends inside it, -1 when it is longer than 10 bytes. */
static int skip_varint(struct src *s, uint64_t *v)
{
	uint64_t val = 0;
	for (unsigned i = 0; i < MP_VARINT_MAX; i++) {
		uint8_t b;
		if (s->p >= s->end)
			return 0;
		b = *s->p++;
		if (i < 10)
			val |= (uint64_t)(b & 0x7f) << (7 * i);
		if (!(b & 0x80)) {
			*v = val;
			return 1;
		}
	}
	return -1;
}

ssize_t mp_record_length(const uint8_t *buf, size_t len)
{
	struct src in = { buf + 1, buf + len };
	struct layout l;
	uint64_t v;
	int r;
	if (!len)
		return 0;
	if (buf[0] >= MP_TAG_FIRST_SIZED) {
		if ((r = skip_varint(&in, &v)) <= 0)
			return r;
		if (v > MP_MAX_RECORD_LEN)
			return -1;
		if (v > (uint64_t)(in.end - in.p))
			return 0;
		return (in.p - buf) + (ssize_t)v;
	}
	if (!layout_of(buf[0], &l))
		return -1;
	for (int k = 0; k < 3 && l.f[k].how != H_END; k++) {
		unsigned n = l.f[k].n;
		switch (l.f[k].how) {
		case H_COUNTED:
			if ((r = skip_varint(&in, &v)) <= 0)
				return r;
			if (v < 1 || v > 8)
				return -1;
			n = (unsigned)v;
			/* fall through */
		case H_PLANES:
			if ((size_t)(in.end - in.p) < n)
				return 0;
			in.p += n;
			break;
		default:
			if ((r = skip_varint(&in, &v)) <= 0)
				return r;
			if (l.f[k].how == H_ADDR && (v & 1) && (r = skip_varint(&in, &v)) <= 0)
				return r;
			break;
		}
	}
	return in.p - buf;
}

/* ---- splitting ---------------------------------------------------------- */

void mp_fields_init(struct mp_fields *f)
{
	memset(f, 0, sizeof(*f));
	mp_intmap_init(&f->module_base);
}

void mp_fields_release(struct mp_fields *f)
{
	for (int i = 0; i < MP_FS_COUNT; i++)
		free(f->p[i]);
	mp_intmap_release(&f->module_base);
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

/*
 * A TICK (its tag already in the tag stream, at tag) as a TICK_DELTA when
 * the last tick's RSS is known, the change is whole pages and its number is
 * no longer than the RSS's. Returns 0, or -1 when the record is cut short.
 */
static int tick_delta(const struct route *r, uint8_t *tag, bool *known, uint64_t *last)
{
	struct src *in = r->from[MP_FS_OTHER];
	uint8_t **o = r->to[MP_FS_OTHER], scratch[2 * MP_VARINT_MAX], *s = scratch;
	const uint8_t *s_end = scratch + sizeof(scratch);
	uint64_t dt, rss, change = 0;
	bool delta;
	if (copy_varint(in, &s, s_end, &dt) < 0 || copy_varint(in, &s, s_end, &rss) < 0)
		return -1;
	delta = *known && !((rss - *last) % MP_TICK_RSS_UNIT);
	if (delta) {
		change = mp_zigzag((int64_t)(rss - *last) / MP_TICK_RSS_UNIT);
		delta = mp_uvarint_len(change) <= mp_uvarint_len(rss);
	}
	*known = true;
	*last = rss;
	if (!delta) {
		memcpy(*o, scratch, (size_t)(s - scratch));
		*o += s - scratch;
		return 0;
	}
	*tag = MP_TAG_TICK_DELTA;
	*o = mp_put_uvarint(mp_put_uvarint(*o, dt), change);
	return 0;
}

/* A varint of a record just moved into a stream; false when it does not end before end. */
static bool moved_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	*v = 0;
	for (unsigned shift = 0; *p < end; shift += 7) {
		uint8_t b = *(*p)++;
		if (shift < 64)
			*v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return true;
	}
	return false;
}

/*
 * What a 3.0 writer's SYMBOL records need of a TRACE or MODULE just moved
 * to stream 5 (from p to end): the TRACE's ip, the MODULE's id and base.
 */
static void follow(struct mp_fields *f, unsigned tag, const uint8_t *p, const uint8_t *end)
{
	uint64_t a, b, c;
	if (tag == MP_TAG_TRACE) {
		if (moved_varint(&p, end, &a) && moved_varint(&p, end, &b))
			f->trace_ip += (uint64_t)mp_unzigzag(b);
		return;
	}
	/* The payload's length, the id, the base (a short payload is no module for readers either). */
	if (moved_varint(&p, end, &a) && moved_varint(&p, end, &b) && moved_varint(&p, end, &c) &&
	    c != UINT64_MAX) /* the map's own marker */
		mp_intmap_put(&f->module_base, b, c);
}

int mp_fields_append(struct mp_fields *f, const uint8_t *raw, size_t len)
{
	struct src in = { raw, raw + len };
	uint8_t *end[MP_FS_COUNT];
	struct route r;
	bool known = f->tick_known;
	uint64_t last = f->tick_rss;

	/* No stream grows by more than the records' length: make that room once. */
	for (int i = 0; i < MP_FS_COUNT; i++) {
		end[i] = mp_fields_room(f, i, len);
		r.from[i] = &in;
		r.to[i] = &end[i];
		r.to_end[i] = f->p[i] + f->alloc[i];
	}
	r.vplanes = f->vplanes;
	while (in.p < in.end) {
		unsigned tag = *in.p++;
		uint8_t *at = end[MP_FS_TAGS]++;
		*at = (uint8_t)tag;
		if (tag == MP_TAG_TICK && f->tick_deltas) {
			if (tick_delta(&r, at, &known, &last) < 0)
				return -1;
			continue;
		}
		if (tag == MP_TAG_TRACE || tag == MP_TAG_MODULE) {
			const uint8_t *moved = end[MP_FS_OTHER];
			if (move_record(&r, tag))
				return -1;
			follow(f, tag, moved, end[MP_FS_OTHER]);
			continue;
		}
		if (move_record(&r, tag))
			return -1; /* the lengths are set only for whole records: f is unchanged */
	}
	for (int i = 0; i < MP_FS_COUNT; i++)
		f->len[i] = (size_t)(end[i] - f->p[i]);
	f->tick_known = known;
	f->tick_rss = last;
	return 0;
}

int mp_fields_split(struct mp_fields *f, const uint8_t *raw, size_t len)
{
	mp_fields_reset(f);
	return mp_fields_append(f, raw, len);
}

uint32_t mp_block_checksum(uint8_t *const s[MP_FS_COUNT], const size_t n[MP_FS_COUNT], size_t raw_len)
{
	uint64_t h = raw_len;
	for (int i = 0; i < MP_FS_COUNT; i++)
		if (n[i])
			h = mp_hash_words(h, s[i], n[i]);
	return (uint32_t)(h ^ (h >> 32));
}

/* ---- joining ------------------------------------------------------------ */

/*
 * Copy one varint from a stream that has at least MP_VARINT_MAX bytes left
 * to o, which has room for MP_VARINT_MAX bytes: its length found without a
 * branch per byte (lengths vary at random, and such a branch mispredicted on
 * most numbers). NULL when it is longer than the longest varint.
 */
static inline __attribute__((always_inline)) uint8_t *fast_varint(struct src *s, uint8_t *o)
{
	const uint8_t *p = s->p;
	uint64_t x;
	size_t n = mp_uvarint8_len(p, &x);
	if (__builtin_expect(!n, 0)) {
		for (n = 8; n < MP_VARINT_MAX; n++)
			if (!(p[n] & 0x80))
				break;
		if (n == MP_VARINT_MAX)
			return NULL;
		memcpy(o, p, ++n);
		s->p = p + n;
		return o + n;
	}
	/* All 8 bytes: those past the varint are overwritten by what comes next. */
	memcpy(o, p, sizeof(x));
	s->p = p + n;
	return o + n;
}

static inline int has(const struct src *s, size_t n)
{
	return (size_t)(s->end - s->p) >= n;
}

/*
 * Whether the varint in planes from stream base (lib/format/fields.h) is
 * whole in its streams and no longer than a varint can be, without
 * consuming it.
 */
static inline __attribute__((always_inline)) bool vplanes_ready(const struct src *in, unsigned base)
{
	const struct src *lo = &in[base], *hi = &in[mp_fields_hi_plane((int)base)];
	size_t room;
	if (!has(lo, 1))
		return false;
	if (!(lo->p[0] & 0x80))
		return true;
	if (!has(hi, 1))
		return false;
	if (!(hi->p[0] & 0x80))
		return true;
	room = (size_t)(hi[1].end - hi[1].p);
	if (room > MP_VARINT_MAX - 2)
		room = MP_VARINT_MAX - 2;
	for (size_t i = 0; i < room; i++)
		if (!(hi[1].p[i] & 0x80))
			return true;
	return false;
}

/* Copy the varint in planes from stream base to e, once vplanes_ready() said it is whole. */
static inline __attribute__((always_inline)) uint8_t *fast_vplanes(struct src *in, unsigned base,
								  uint8_t *e)
{
	struct src *hi = &in[mp_fields_hi_plane((int)base)];
	uint8_t b = *in[base].p++;
	*e++ = b;
	if (!(b & 0x80))
		return e;
	b = *hi->p++;
	*e++ = b;
	if (!(b & 0x80))
		return e;
	do {
		b = *hi[1].p++;
		*e++ = b;
	} while (b & 0x80);
	return e;
}

/*
 * The hot records (ALLOC_SEQ, FREE_SEQ, THREAD_SWITCH; 3.0's ALLOC_REF
 * and frees but those with a counted number) when every stream they read
 * has room for the longest varints and the output for the longest record. Returns 1 when done (*o advanced), 0 to take the careful path
 * (nothing consumed), -1 for a number longer than a varint can be.
 */
static inline __attribute__((always_inline)) int fast_record(struct src *in, unsigned tag,
							    bool vplanes, uint8_t **o)
{
	uint8_t *e = *o + 1;
	switch (tag >> 4) {
	case MP_TAG_ALLOC_SEQ >> 4:
		if (vplanes) {
			if (!vplanes_ready(in, MP_FS_SIZES) || !vplanes_ready(in, MP_FS_STACKS))
				return 0;
			e = fast_vplanes(in, MP_FS_STACKS, fast_vplanes(in, MP_FS_SIZES, e));
			break;
		}
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
		if (tag >= MP_TAG_FREE_NEAR_LIT && tag < MP_TAG_FREE_AGE_LIT + 4)
			break; /* 3.0 frees with the number in the tag */
		if (tag >= MP_TAG_FREE_NEAR_N && tag < MP_TAG_FREE_NEAR_N + 3)
			goto planes;
		if (tag != MP_TAG_THREAD_SWITCH || !has(&in[MP_FS_OTHER], MP_VARINT_MAX))
			return 0;
		e = fast_varint(&in[MP_FS_OTHER], e);
		break;
	case MP_TAG_ALLOC_REF >> 4:
	case (MP_TAG_ALLOC_REF >> 4) + 1:
		if (tag < MP_TAG_ALLOC_REF + MP_REF_IN_TAG)
			break; /* 3.0 allocations of a class in the tag */
		if (tag == MP_TAG_ALLOC_REF_N) {
			if (!has(&in[MP_FS_TAGS], MP_VARINT_MAX))
				return 0;
			e = fast_varint(&in[MP_FS_TAGS], e);
			break;
		}
		if (tag != MP_TAG_TICK_DELTA && (tag & 3) != 3)
			goto planes; /* 0x74..0x7f but counted ones */
		return 0;
	default:
		return 0;
	}
	if (0) {
		/* 3.0 frees of kinds free and realloc in one to three bytes of planes. */
		struct src *pl;
		unsigned n;
planes:
		n = (tag & 3) + 1;
		pl = &in[tag < MP_TAG_FREE_AGE_N || (tag >= MP_TAG_REALLOC_NEAR_N && tag < MP_TAG_REALLOC_AGE_N)
				 ? MP_FS_NEAR0 : MP_FS_AGE0];
		for (unsigned i = 0; i < n; i++)
			if (pl[i].p >= pl[i].end)
				return 0;
		for (unsigned i = 0; i < n; i++)
			*e++ = *pl[i].p++;
	}
	if (!e)
		return -1;
	**o = (uint8_t)tag;
	*o = e;
	return 1;
}

int mp_fields_join(const uint8_t *const s[MP_FS_COUNT], const size_t n[MP_FS_COUNT], uint8_t *out,
		   size_t raw_len, bool vplanes, const char **why)
{
	struct src in[MP_FS_COUNT];
	uint8_t *o = out, *out_end = out + raw_len;
	struct route r;

	for (int i = 0; i < MP_FS_COUNT; i++) {
		in[i] = (struct src){ s[i], s[i] + n[i] };
		r.from[i] = &in[i];
		r.to[i] = &o;
		r.to_end[i] = out_end;
	}
	r.vplanes = vplanes;
	while (in[MP_FS_TAGS].p < in[MP_FS_TAGS].end) {
		unsigned tag = *in[MP_FS_TAGS].p++;
		if (out_end - o >= 1 + 2 * MP_VARINT_MAX) {
			int done = fast_record(in, tag, vplanes, &o);
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
		switch (move_record(&r, tag)) {
		case 0:
			continue;
		case 1:
			*why = "an unknown record type in the tag stream";
			return -1;
		case -2:
			goto overrun;
		case MOVE_LONG:
			*why = "a number in a field stream is longer than 10 bytes";
			return -1;
		default:
			/* A stream ran out, unless the records did first. */
			if (o >= out_end)
				goto overrun;
			*why = "a field stream ends inside a record";
			return -1;
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
overrun:
	*why = "the field streams make more bytes than the block's length";
	return -1;
}
