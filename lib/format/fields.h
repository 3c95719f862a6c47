/*
 * The field streams of a BLOCK of codec 2 or 3 (man/memprof-capture.5): the
 * records of a block split by field, so that each stream holds numbers of
 * one kind (all the sizes, all the stack deltas...) and compresses as such.
 * Every byte of the records goes to exactly one stream, in record order, so
 * the streams' lengths add up to the block's and joining them is exact.
 * Codec 2 has the first six streams; codec 3 the first twelve; codec 4
 * (format 4.0) all sixteen, with the sizes' and stack deltas' varints in
 * planes: byte 0 in stream 1 (2), byte 1 in stream 12 (14), bytes 2 and up
 * in stream 13 (15). A varint's bytes differ in kind (byte 0 is the value's
 * low bits, and nearly random; the next ones hold its magnitude), and each
 * compresses better among its own (bench/README.md, format 4.0).
 */
#ifndef MEMPROF_LIB_FORMAT_FIELDS_H
#define MEMPROF_LIB_FORMAT_FIELDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/format/encode.h"
#include "lib/util/hash.h"

enum mp_field_stream {
	MP_FS_TAGS,    /* every record's tag byte; the class of ALLOC_REF_N, plane counts */
	MP_FS_SIZES,   /* the sizes of ALLOC, ALLOC_SEQ and FREE_RANGE */
	MP_FS_STACKS,  /* the stack deltas of ALLOC and ALLOC_SEQ */
	MP_FS_AGES,    /* the ages of FREE_SEQ */
	MP_FS_ADDRS,   /* the addresses of ALLOC, FREE and FREE_RANGE */
	MP_FS_OTHER,   /* everything else: other records' fields, sized records whole */
	MP_FS_NEAR0,   /* 3.0: byte 0 of the near numbers of frees, then bytes 1 and 2 and up */
	MP_FS_NEAR1,
	MP_FS_NEAR2,
	MP_FS_AGE0,    /* 3.0: byte 0 of the ages of frees in byte planes, then bytes 1 and 2 and up */
	MP_FS_AGE1,
	MP_FS_AGE2,
	MP_FS_SIZES1,  /* 4.0: byte 1 of the sizes' varints, then bytes 2 and up */
	MP_FS_SIZES2,
	MP_FS_STACKS1, /* 4.0: byte 1 of the stack deltas' varints, then bytes 2 and up */
	MP_FS_STACKS2,
	MP_FS_COUNT
};
/* The streams of a codec 2 block, and of a codec 3 block. */
#define MP_FS_COUNT_V2 6
#define MP_FS_COUNT_V3 12

struct mp_fields {
	uint8_t *p[MP_FS_COUNT];
	size_t len[MP_FS_COUNT], alloc[MP_FS_COUNT];
	/*
	 * Set by a writer of format 3.0: a TICK appended becomes a TICK_DELTA
	 * when the RSS of the TICK before it is known (tick_known) and the
	 * change is whole pages; tick_rss is the last tick's RSS. Clear
	 * tick_known when ticks reach the capture by another way.
	 */
	bool tick_deltas, tick_known;
	uint64_t tick_rss;
	/* Set by a writer of format 4.0: sizes and stack deltas go in varint planes (codec 4). */
	bool vplanes;
	/*
	 * For a 3.0 writer's SYMBOL records, which give their ip against the
	 * latest TRACE's and their offset against their module's base: the ip
	 * of the latest TRACE appended, and the base of each MODULE by id.
	 */
	uint64_t trace_ip;
	struct mp_intmap module_base;
};

/*
 * The length of the record at buf (len bytes there), found from its tag and
 * fields alone, without a decoder's state: 0 when buf ends inside it, -1
 * when it is no record (an undefined tag, a malformed number, a sized
 * record longer than MP_MAX_RECORD_LEN). Tags of every version are known.
 */
ssize_t mp_record_length(const uint8_t *buf, size_t len);

void mp_fields_init(struct mp_fields *f);
void mp_fields_release(struct mp_fields *f);
/* Empty every stream (keeping the memory). */
void mp_fields_reset(struct mp_fields *f);
/* The bytes of the records held: the sum of the streams' lengths. */
size_t mp_fields_total(const struct mp_fields *f);
/*
 * Append len bytes of whole records to f's streams (TICKs as TICK_DELTAs
 * when f->tick_deltas), following TRACE and MODULE records. Returns 0, or
 * -1 when the bytes are not whole records of known types; f's streams are
 * then unchanged.
 */
int mp_fields_append(struct mp_fields *f, const uint8_t *raw, size_t len);
/* As mp_fields_append() into emptied streams. */
int mp_fields_split(struct mp_fields *f, const uint8_t *raw, size_t len);

void mp_fields_grow(struct mp_fields *f, int stream, size_t n);
/*
 * Room for n more bytes at the end of a stream, for writers that encode
 * fields in place (then add what they wrote to f->len[stream]).
 */
static inline uint8_t *mp_fields_room(struct mp_fields *f, int stream, size_t n)
{
	if (f->alloc[stream] - f->len[stream] < n)
		mp_fields_grow(f, stream, n);
	return f->p[stream] + f->len[stream];
}
/*
 * A varint of stream MP_FS_SIZES or MP_FS_STACKS in planes: byte 0 there,
 * byte 1 in the first of its two streams of high bytes, the rest in the
 * second.
 */
static inline int mp_fields_hi_plane(int stream)
{
	return stream == MP_FS_SIZES ? MP_FS_SIZES1 : MP_FS_STACKS1;
}

/* With no branch on the varint's length, which varies at random (as mp_put_uvarint8()). */
static inline __attribute__((always_inline)) void mp_fields_put_vplanes(struct mp_fields *f, int stream,
								      uint64_t v)
{
	int hi = mp_fields_hi_plane(stream);
	uint8_t *o = mp_fields_room(f, stream, 1);
	uint8_t *o1 = mp_fields_room(f, hi, 1), *o2 = mp_fields_room(f, hi + 1, MP_VARINT_MAX);
	uint64_t x;
	unsigned n;
	f->len[stream]++;
	if (__builtin_expect(v >> 56 != 0, 0)) {
		/* 9 or 10 bytes: the rare long number, spelled out first. */
		uint8_t b[MP_VARINT_MAX];
		n = (unsigned)(mp_put_uvarint(b, v) - b);
		*o = b[0];
		*o1 = b[1];
		memcpy(o2, b + 2, n - 2);
		f->len[hi]++;
		f->len[hi + 1] += n - 2;
		return;
	}
	/* Bytes 2 to 7 are stored whatever n is, and counted when they are the varint's. */
	x = mp_uvarint8_spread(v, &n);
	*o = (uint8_t)x;
	*o1 = (uint8_t)(x >> 8);
	x = htole64(x >> 16);
	memcpy(o2, &x, sizeof(x));
	f->len[hi] += n > 1;
	f->len[hi + 1] += n > 2 ? n - 2 : 0;
}

/*
 * The checksum of a codec 3 block: mp_hash_words() from raw_len over each
 * non-empty stream in order, the low 32 bits of h ^ (h >> 32).
 */
uint32_t mp_block_checksum(uint8_t *const s[MP_FS_COUNT], const size_t n[MP_FS_COUNT], size_t raw_len);
/*
 * Join streams (stream i: s[i], n[i] bytes) back into exactly raw_len bytes
 * at out, with sizes and stack deltas in varint planes when vplanes (codec
 * 4). Returns 0, or -1 with *why set when the streams do not make exactly
 * raw_len bytes of records, each stream used up.
 */
int mp_fields_join(const uint8_t *const s[MP_FS_COUNT], const size_t n[MP_FS_COUNT], uint8_t *out,
		   size_t raw_len, bool vplanes, const char **why);

#endif
