/*
 * Record encoders that never allocate, lock or call libc beyond memcpy, so the
 * tracker can use them inside malloc hooks. Each writes one record at p and
 * returns the end; the caller provides room for MP_ENC_MAX_EVENT bytes (or
 * the sized record's length plus MP_ENC_MAX_PREFIX). The varint and zigzag
 * primitives here are the readers' too (lib/format/decode.c and its
 * decode-private.h, lib/format/fields.c).
 */
#ifndef MEMPROF_LIB_FORMAT_ENCODE_H
#define MEMPROF_LIB_FORMAT_ENCODE_H

#include <endian.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "lib/format/format.h"

#define MP_VARINT_MAX 10
#define MP_ENC_MAX_EVENT (1 + 2 * MP_VARINT_MAX + 2 * MP_VARINT_MAX + MP_VARINT_MAX)
#define MP_ENC_MAX_PREFIX (1 + MP_VARINT_MAX)

/* Per-thread delta state: both encoder and decoder keep one per thread index. */
struct mp_enc_thread {
	uint64_t last_addr;
	uint64_t last_stack;
};

static inline uint8_t *mp_put_uvarint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

/*
 * The varint of v < 2^56 as a little-endian number of *n bytes (byte i its
 * i-th byte), with no branch on its length.
 */
static inline uint64_t mp_uvarint8_spread(uint64_t v, unsigned *n)
{
	uint64_t x;
	*n = (unsigned)(63 - __builtin_clzll(v | 1)) / 7 + 1;
	/* The 7-bit groups spread to one per byte, then the continuation bits of all but the last. */
	x = (v & 0x000000000fffffffull) | ((v & 0x00fffffff0000000ull) << 4);
	x = (x & 0x00003fff00003fffull) | ((x & 0x0fffc0000fffc000ull) << 2);
	x = (x & 0x007f007f007f007full) | ((x & 0x3f803f803f803f80ull) << 1);
	return x | (0x8080808080808080ull & ((1ull << (8 * (*n - 1))) - 1));
}

/*
 * As mp_put_uvarint(), with one 8-byte store for numbers below 2^56 and no
 * branch on their length (event fields vary in length at random, and the
 * loop mispredicts). The caller must have room for MP_VARINT_MAX bytes at
 * p, as for mp_put_uvarint(); up to 8 are written, past the varint too,
 * and those past it are left undefined.
 */
static inline uint8_t *mp_put_uvarint8(uint8_t *p, uint64_t v)
{
	uint64_t x;
	unsigned n;
	if (__builtin_expect(v >> 56 != 0, 0))
		return mp_put_uvarint(p, v);
	x = htole64(mp_uvarint8_spread(v, &n));
	memcpy(p, &x, sizeof(x));
	return p + n;
}

/*
 * The length of the varint in the 8 bytes at p (read as one load, so p must
 * have 8 readable bytes), from the first byte without its top bit, with no
 * branch per byte; 0 when it is longer than 8 bytes. *x gets the 8 bytes
 * as a little-endian number.
 */
static inline unsigned mp_uvarint8_len(const uint8_t *p, uint64_t *x)
{
	uint64_t stop;
	memcpy(x, p, sizeof(*x));
	*x = le64toh(*x);
	stop = ~*x & 0x8080808080808080ull;
	return stop ? ((unsigned)__builtin_ctzll(stop) >> 3) + 1 : 0;
}

/*
 * The varint at p, when it takes at most 8 bytes (p has 8 readable bytes):
 * its length, the 7-bit groups packed pairwise into *v. 0 when longer.
 */
static inline unsigned mp_get_uvarint8(const uint8_t *p, uint64_t *v)
{
	uint64_t x;
	unsigned n = mp_uvarint8_len(p, &x);
	if (__builtin_expect(!n, 0))
		return 0;
	x &= ~0ull >> (64 - 8 * n);
	x = (x & 0x007f007f007f007full) | ((x & 0x7f007f007f007f00ull) >> 1);
	x = (x & 0x00003fff00003fffull) | ((x & 0x3fff00003fff0000ull) >> 2);
	x = (x & 0x000000000fffffffull) | ((x & 0x0fffffff00000000ull) >> 4);
	*v = x;
	return n;
}

static inline uint64_t mp_zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t mp_unzigzag(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

static inline uint8_t *mp_put_svarint(uint8_t *p, int64_t v)
{
	return mp_put_uvarint(p, mp_zigzag(v));
}

static inline size_t mp_uvarint_len(uint64_t v)
{
	size_t n = 1;
	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

/*
 * Addresses are coded as the difference to the thread's previous address.
 * Allocators return 16-byte aligned blocks, so an aligned difference is
 * stored divided by 16 with a low 0 bit; otherwise the low bit is 1, the
 * remaining bits hold the low four bits of the difference, and a second
 * varint holds the rest.
 */
static inline __attribute__((always_inline)) uint8_t *put_addr(uint8_t *p, struct mp_enc_thread *t,
								 uint64_t addr, int one_store)
{
	uint64_t delta = addr - t->last_addr;
	int64_t high = (int64_t)delta >> 4;
	uint8_t *(*put)(uint8_t *, uint64_t) = one_store ? mp_put_uvarint8 : mp_put_uvarint;
	t->last_addr = addr;
	if ((delta & 15) == 0)
		return put(p, mp_zigzag(high) << 1);
	p = put(p, ((delta & 15) << 1) | 1);
	return put(p, mp_zigzag(high));
}

static inline uint8_t *mp_put_addr(uint8_t *p, struct mp_enc_thread *t, uint64_t addr)
{
	return put_addr(p, t, addr, 0);
}

/* As mp_put_addr() with mp_put_uvarint8(): for events of kinds below 16, whose room has slack. */
static inline uint8_t *mp_put_addr8(uint8_t *p, struct mp_enc_thread *t, uint64_t addr)
{
	return put_addr(p, t, addr, 1);
}

static inline uint8_t *mp_enc_thread_switch(uint8_t *p, uint32_t index)
{
	*p++ = MP_TAG_THREAD_SWITCH;
	return mp_put_uvarint(p, index);
}

/* A trace-tree node: index is implicit (one more than the previous node). */
static inline uint8_t *mp_enc_trace(uint8_t *p, uint64_t index, uint64_t parent, uint64_t ip,
				    uint64_t *last_ip)
{
	*p++ = MP_TAG_TRACE;
	p = mp_put_uvarint(p, index - parent);
	p = mp_put_svarint(p, (int64_t)(ip - *last_ip));
	*last_ip = ip;
	return p;
}

static inline uint8_t *mp_enc_tick(uint8_t *p, uint64_t delta_us, uint64_t rss)
{
	*p++ = MP_TAG_TICK;
	p = mp_put_uvarint(p, delta_us);
	return mp_put_uvarint(p, rss);
}

static inline uint8_t *mp_enc_alloc(uint8_t *p, struct mp_enc_thread *t, unsigned kind,
				    uint64_t addr, uint64_t size, uint64_t stack)
{
	if (kind < 16) {
		*p++ = (uint8_t)(MP_TAG_ALLOC + kind);
	} else {
		/* Extended form: a sized record, so its length must be known first. */
		uint8_t body[MP_ENC_MAX_EVENT], *q = body;
		q = mp_put_uvarint(q, kind);
		q = mp_put_addr(q, t, addr);
		q = mp_put_uvarint(q, size);
		q = mp_put_svarint(q, (int64_t)(stack - t->last_stack));
		t->last_stack = stack;
		*p++ = MP_TAG_ALLOC_X;
		p = mp_put_uvarint(p, (uint64_t)(q - body));
		memcpy(p, body, (size_t)(q - body));
		return p + (q - body);
	}
	/* At most 41 bytes, and 7 more written past them: within MP_ENC_MAX_EVENT. */
	p = mp_put_addr8(p, t, addr);
	p = mp_put_uvarint8(p, size);
	p = mp_put_uvarint8(p, mp_zigzag((int64_t)(stack - t->last_stack)));
	t->last_stack = stack;
	return p;
}

/*
 * A heap allocation named by its serial number, the count of ALLOC_SEQ records
 * before it, instead of its address (kind < 16; format 2.0).
 */
static inline uint8_t *mp_enc_alloc_seq(uint8_t *p, struct mp_enc_thread *t, unsigned kind,
					uint64_t size, uint64_t stack)
{
	*p++ = (uint8_t)(MP_TAG_ALLOC_SEQ + kind);
	p = mp_put_uvarint8(p, size);
	p = mp_put_uvarint8(p, mp_zigzag((int64_t)(stack - t->last_stack)));
	t->last_stack = stack;
	return p;
}

/* The deallocation of the block with serial (n_seq - 1 - age), n_seq ALLOC_SEQ records on. */
static inline uint8_t *mp_enc_free_seq(uint8_t *p, unsigned kind, uint64_t age)
{
	*p++ = (uint8_t)(MP_TAG_FREE_SEQ + kind);
	return mp_put_uvarint8(p, age);
}

/* A deallocation; size is the range length for range kinds (munmap), else unused. */
static inline uint8_t *mp_enc_free(uint8_t *p, struct mp_enc_thread *t, unsigned kind,
				   uint64_t addr, int ranged, uint64_t size)
{
	if (kind < 16) {
		*p++ = (uint8_t)((ranged ? MP_TAG_FREE_RANGE : MP_TAG_FREE) + kind);
		p = mp_put_addr8(p, t, addr);
		return ranged ? mp_put_uvarint8(p, size) : p;
	} else {
		uint8_t body[MP_ENC_MAX_EVENT], *q = body;
		q = mp_put_uvarint(q, kind);
		q = mp_put_addr(q, t, addr);
		if (ranged)
			q = mp_put_uvarint(q, size);
		*p++ = ranged ? MP_TAG_FREE_RANGE_X : MP_TAG_FREE_X;
		p = mp_put_uvarint(p, (uint64_t)(q - body));
		memcpy(p, body, (size_t)(q - body));
		return p + (q - body);
	}
}

/*
 * Sized records: write the tag, reserve room for the length, fill the
 * payload, then call mp_enc_sized_end() to move the payload into place.
 * The reservation is MP_VARINT_MAX bytes; the end call shifts the payload
 * down so the length takes only the bytes it needs.
 */
static inline uint8_t *mp_enc_sized_begin(uint8_t *p, unsigned tag)
{
	*p++ = (uint8_t)tag;
	return p + MP_VARINT_MAX;
}

static inline uint8_t *mp_enc_sized_end(uint8_t *record, uint8_t *end)
{
	uint8_t *payload = record + 1 + MP_VARINT_MAX;
	uint64_t len = (uint64_t)(end - payload);
	uint8_t *q = mp_put_uvarint(record + 1, len);
	memmove(q, payload, (size_t)len);
	return q + len;
}

static inline uint8_t *mp_enc_field_uint(uint8_t *p, unsigned id, uint64_t v)
{
	p = mp_put_uvarint(p, MP_FIELD_KEY((uint64_t)id, MP_FIELD_UINT));
	return mp_put_uvarint(p, v);
}

static inline uint8_t *mp_enc_field_sint(uint8_t *p, unsigned id, int64_t v)
{
	p = mp_put_uvarint(p, MP_FIELD_KEY((uint64_t)id, MP_FIELD_SINT));
	return mp_put_svarint(p, v);
}

static inline uint8_t *mp_enc_bytes(uint8_t *p, const void *data, size_t len)
{
	p = mp_put_uvarint(p, len);
	if (len)
		memcpy(p, data, len);
	return p + len;
}

static inline uint8_t *mp_enc_field_bytes(uint8_t *p, unsigned id, const void *data, size_t len)
{
	p = mp_put_uvarint(p, MP_FIELD_KEY((uint64_t)id, MP_FIELD_BYTES));
	return mp_enc_bytes(p, data, len);
}

/* A TICK_AT (format.h): a sample time_us after the stream's start, of rss bytes. */
static inline uint8_t *mp_enc_tick_at(uint8_t *p, uint64_t time_us, uint64_t rss)
{
	uint8_t *rec = p;
	p = mp_enc_sized_begin(p, MP_TAG_TICK_AT);
	p = mp_enc_field_uint(p, MP_M_TIME, time_us);
	p = mp_enc_field_uint(p, MP_M_RSS, rss);
	return mp_enc_sized_end(rec, p);
}

#endif
