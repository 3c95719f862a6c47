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

#include "lib/format/decode.h"
#include "lib/format/encode.h"
#include "lib/format/format.h"
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
 * The records most 3.0 captures are made of, decoded inline by the reader
 * before it calls mp_decode(): an allocation of a class named in the tag,
 * a free of kind free or realloc with its number in the tag or in one to
 * three bytes, a thread switch to a known thread. Returns the record's
 * length, or 0 (nothing changed) for mp_decode() to decode it, as it does
 * any record, with every check and message. The same meaning as
 * mp_decode() (decode-events.c).
 */
static inline __attribute__((always_inline)) size_t mp_decode_hot(struct mp_decoder *d,
								   const uint8_t *p, size_t left,
								   struct mp_record *rec)
{
	unsigned tag = p[0], n = 1;
	uint64_t v, serial, k;
	const struct mp_class *cl;
	if (d->header.major < 3)
		return 0;
	if (tag - MP_TAG_ALLOC_REF < MP_REF_IN_TAG) {
		k = tag - MP_TAG_ALLOC_REF;
		goto alloc;
	}
	if (tag == MP_TAG_ALLOC_REF_N && left >= 4 && (p[1] < 0x80 || p[2] < 0x80 || p[3] < 0x80)) {
		/*
		 * A class beyond the tag's, in a varint of one to three bytes
		 * (of the 65536 classes, those from 16402 on take three).
		 */
		k = MP_REF_IN_TAG + (p[1] & 0x7f);
		n = 2;
		if (p[1] >= 0x80) {
			k += (uint64_t)(p[2] & 0x7f) << 7;
			n = 3;
			if (p[2] >= 0x80) {
				k += (uint64_t)p[3] << 14;
				n = 4;
			}
		}
		goto alloc;
	}
	if (tag - MP_TAG_FREE_NEAR_LIT < 8) {
		v = tag & 3;
		rec->u.ev.kind = MP_KIND_FREE;
		if (tag < MP_TAG_FREE_AGE_LIT)
			goto near;
		goto age;
	}
	if (tag == MP_TAG_THREAD_SWITCH) {
		if (left < 2 || p[1] >= 0x80 || p[1] >= d->nthreads)
			return 0;
		d->cur_thread = p[1];
		rec->type = MP_REC_SWITCH;
		rec->thread = p[1];
		return 2;
	}
	/* Frees in planes of one to three bytes: 0x0c, 0x74, 0x78, 0x7c + (n - 1). */
	if ((tag & 3) == 3 || !(tag - MP_TAG_FREE_NEAR_N < 4 || tag - MP_TAG_FREE_AGE_N < 12))
		return 0;
	n = (tag & 3) + 1;
	if (left < 1 + n)
		return 0;
	v = p[1];
	if (n > 1)
		v |= (uint64_t)p[2] << 8;
	if (n > 2)
		v |= (uint64_t)p[3] << 16;
	n++;
	rec->u.ev.kind = tag < MP_TAG_REALLOC_NEAR_N ? MP_KIND_FREE : MP_KIND_REALLOC;
	if (tag < MP_TAG_FREE_AGE_N || (tag >= MP_TAG_REALLOC_NEAR_N && tag < MP_TAG_REALLOC_AGE_N))
		goto near;
age:
	if (v >= d->n_seq)
		return 0;
	serial = d->n_seq - 1 - v;
	goto free;
near:
	serial = d->last_freed + (uint64_t)mp_unzigzag(v + 1);
	if (serial >= d->n_seq)
		return 0;
free:
	rec->type = MP_REC_FREE;
	rec->thread = d->cur_thread;
	rec->u.ev.ranged = false;
	rec->u.ev.serial = true;
	rec->u.ev.size = 0;
	rec->u.ev.stack = 0;
	rec->u.ev.addr = MP_SERIAL_ADDR(serial);
	d->last_freed = serial;
	return n;
alloc:
	if (k >= d->nclasses)
		return 0;
	cl = &d->classes[k];
	rec->type = MP_REC_ALLOC;
	rec->thread = d->cur_thread;
	rec->u.ev.kind = cl->kind;
	rec->u.ev.ranged = false;
	rec->u.ev.serial = true;
	rec->u.ev.size = cl->size;
	rec->u.ev.stack = cl->stack;
	rec->u.ev.addr = MP_SERIAL_ADDR(d->n_seq);
	d->n_seq++;
	d->threads[d->cur_thread].last_stack = cl->stack;
	return n;
}

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

/* A TICK or a TICK_AT decoded into rec: delta_us after the last one, of rss bytes. */
static inline void mp_decode_tick(struct mp_decoder *d, struct mp_record *rec, uint64_t delta_us,
				  uint64_t rss, bool at)
{
	d->last_rss = rss;
	d->rss_known = true;
	d->time_us += delta_us;
	rec->type = MP_REC_TICK;
	rec->u.tick.time_us = d->time_us;
	rec->u.tick.delta_us = delta_us;
	rec->u.tick.rss = rss;
	rec->u.tick.at = at;
}

#endif
