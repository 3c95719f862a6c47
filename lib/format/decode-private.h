/*
 * Internal to lib/format, not for other folders: the bounds-checked varint
 * cursor that the decoder (decode.c) and the reader (reader.c, which reads
 * BLOCK headers with it) share, and the scratch buffers of the reader and the
 * writer. They are static, in this header, so that each file keeps them
 * inlined as when they shared one file: get_u() is on the decoder's hot path.
 */
#ifndef MEMPROF_LIB_FORMAT_DECODE_PRIVATE_H
#define MEMPROF_LIB_FORMAT_DECODE_PRIVATE_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/types.h>

#include "lib/format/encode.h"
#include "lib/util/usage.h"
#include "lib/util/xalloc.h"

/* A bounds-checked cursor: err is set to SHORT on overrun, BAD on an invalid varint. */
enum { CUR_OK, CUR_SHORT, CUR_BAD };
struct cur {
	const uint8_t *p, *end;
	int err;
};

/*
 * The rare path of get_u(), near the end of a record: kept out of line so
 * that the inlined get_u() stays small (marked unused: writer.c includes this
 * header for scratch() alone).
 */
static __attribute__((noinline, unused)) uint64_t get_u_slow(struct cur *c)
{
	uint64_t v = 0;
	unsigned shift = 0;
	while (c->p < c->end) {
		uint8_t b = *c->p++;
		if (shift == 63 && b > 1) {
			c->err = CUR_BAD;
			return 0;
		}
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
		shift += 7;
	}
	if (!c->err)
		c->err = CUR_SHORT;
	return 0;
}

/*
 * Numbers are decoded inline without a bounds check per byte when the
 * record has room for the longest varint, and without a branch on their
 * length (the lengths of sizes, stack deltas and ages vary at random, and
 * a branch per byte mispredicted on most numbers).
 */
static inline __attribute__((always_inline)) uint64_t get_u(struct cur *c)
{
	const uint8_t *p = c->p;
	uint64_t v;
	if (__builtin_expect(c->end - p >= MP_VARINT_MAX, 1)) {
		unsigned n = mp_get_uvarint8(p, &v);
		if (__builtin_expect(n != 0, 1)) {
			c->p = p + n;
			return v;
		}
	} else if (p < c->end && *p < 0x80) {
		c->p = p + 1;
		return *p;
	}
	return get_u_slow(c);
}

static inline int64_t get_s(struct cur *c)
{
	return mp_unzigzag(get_u(c));
}

/*
 * Between decode.c (sized records) and decode-events.c (mp_decode(), the
 * event records): a failure with its message in d->err (returns -1); the
 * per-thread table grown for an index (-1 when out of range); a sized
 * record's name; a sized record's payload at c; an event's fields.
 */
struct mp_decoder;
struct mp_record;
ssize_t mp_decode_fail(struct mp_decoder *d, const char *fmt, ...) MP_PRINTF(2, 3);
int mp_decode_grow_threads(struct mp_decoder *d, uint64_t index);
const char *mp_decode_tag_name(unsigned tag);
ssize_t mp_decode_sized(struct mp_decoder *d, unsigned tag, struct cur *c, struct mp_record *rec);
void mp_decode_event(struct mp_decoder *d, struct cur *c, int cls, struct mp_record *rec,
		     uint64_t *new_addr, uint64_t *new_stack);
ssize_t mp_decode_check_stack(struct mp_decoder *d, const struct mp_record *rec);

/*
 * A scratch buffer of at least n bytes whose old contents do not matter
 * (decompression targets, compressed output): freed and allocated anew.
 */
static inline void scratch(uint8_t **buf, size_t *alloc, size_t n)
{
	if (n > *alloc) {
		free(*buf);
		*buf = xmalloc(n);
		*alloc = n;
	}
}

#endif
