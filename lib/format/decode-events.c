/*
 * The decoder's hot path (lib/format/decode.h): mp_decode(), and the event
 * records of every version, ALLOC, FREE and their numbered forms, the
 * thread switch, traces and ticks. Sized records are decode.c's.
 */
#include <config.h>
#include "lib/format/decode.h"

#include <stdbool.h>
#include <string.h>

#include "lib/format/decode-private.h"
#include "lib/format/encode.h"
#include "lib/format/format.h"
#include "lib/util/xalloc.h"

static uint64_t get_addr(struct cur *c, uint64_t last)
{
	uint64_t v = get_u(c);
	if (!(v & 1))
		return last + ((uint64_t)mp_unzigzag(v >> 1) << 4);
	if ((v >> 1) > 15) {
		c->err = CUR_BAD;
		return 0;
	}
	return last + (((uint64_t)get_s(c) << 4) | (v >> 1));
}

/* Decode an event's fields (after tag and, for extended forms, kind). */
void mp_decode_event(struct mp_decoder *d, struct cur *c, int cls, struct mp_record *rec,
		     uint64_t *new_addr, uint64_t *new_stack)
{
	struct mp_enc_thread *t = &d->threads[d->cur_thread];
	rec->thread = d->cur_thread;
	rec->u.ev.addr = get_addr(c, t->last_addr);
	*new_addr = rec->u.ev.addr;
	*new_stack = t->last_stack;
	rec->u.ev.size = 0;
	rec->u.ev.stack = 0;
	rec->u.ev.ranged = false;
	rec->u.ev.serial = false;
	if (cls == 1) {
		rec->type = MP_REC_ALLOC;
		rec->u.ev.size = get_u(c);
		rec->u.ev.stack = t->last_stack + (uint64_t)get_s(c);
		*new_stack = rec->u.ev.stack;
	} else {
		rec->type = MP_REC_FREE;
		if (cls == 3) {
			rec->u.ev.ranged = true;
			rec->u.ev.size = get_u(c);
		}
	}
}

ssize_t mp_decode_check_stack(struct mp_decoder *d, const struct mp_record *rec)
{
	if (rec->type == MP_REC_ALLOC && rec->u.ev.stack > d->n_traces)
		return mp_decode_fail(d, "allocation refers to trace node %llu, but only %llu are defined",
			    (unsigned long long)rec->u.ev.stack, (unsigned long long)d->n_traces);
	return 0;
}

/*
 * ALLOC_SEQ and FREE_SEQ: blocks named by serial number, shown as the
 * addresses MP_SERIAL_ADDR(serial). The state changes only for a whole record.
 */
static ssize_t decode_seq(struct mp_decoder *d, struct cur *c, unsigned tag,
			  struct mp_record *rec)
{
	struct mp_enc_thread *t = &d->threads[d->cur_thread];
	rec->thread = d->cur_thread;
	rec->u.ev.kind = tag & 15;
	rec->u.ev.ranged = false;
	rec->u.ev.serial = true;
	if (tag < MP_TAG_FREE_SEQ) {
		rec->type = MP_REC_ALLOC;
		rec->u.ev.size = get_u(c);
		rec->u.ev.stack = t->last_stack + (uint64_t)get_s(c);
		if (c->err)
			return 0;
		if (mp_decode_check_stack(d, rec))
			return -1;
		rec->u.ev.addr = MP_SERIAL_ADDR(d->n_seq);
		d->n_seq++;
		t->last_stack = rec->u.ev.stack;
		/* 3.0: the first ALLOC_SEQ records define the classes ALLOC_REF names. */
		if (d->header.major >= 3 && d->nclasses < MP_MAX_CLASSES) {
			ALLOC_GROW(d->classes, d->nclasses + 1, d->classes_alloc);
			d->classes[d->nclasses++] = (struct mp_class){ rec->u.ev.size, rec->u.ev.stack,
								       rec->u.ev.kind };
		}
	} else {
		uint64_t age = get_u(c);
		rec->type = MP_REC_FREE;
		rec->u.ev.size = 0;
		rec->u.ev.stack = 0;
		if (c->err)
			return 0;
		if (age >= d->n_seq)
			return mp_decode_fail(d, "a deallocation of block age %llu, but only %llu blocks were allocated by number",
				    (unsigned long long)age, (unsigned long long)d->n_seq);
		rec->u.ev.addr = MP_SERIAL_ADDR(d->n_seq - 1 - age);
		d->last_freed = d->n_seq - 1 - age;
	}
	return 0;
}

/* A number in byte planes after a 3.0 free's tag: n bytes (n in the tag, or counted), little-endian. */
static uint64_t get_planes(struct cur *c, unsigned tag)
{
	unsigned n = (tag & 3) + 1;
	uint64_t v = 0;
	if (n == 4) {
		n = (unsigned)get_u(c);
		if (!c->err && (n < 1 || n > 8))
			c->err = CUR_BAD;
		if (c->err)
			return 0;
	}
	if ((size_t)(c->end - c->p) < n) {
		c->err = CUR_SHORT;
		return 0;
	}
	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)c->p[i] << (8 * i);
	c->p += n;
	return v;
}

/*
 * The records of format 3.0: ALLOC_REF (an allocation of a class), and frees
 * of kinds free and realloc by number, with a near number (the block freed
 * by number last, plus unzigzag(q + 1)) or an age, in the tag or in byte
 * planes. Returns 0, or -1 (message in d->err); c->err set when the record
 * is cut or malformed. The state changes only for a whole, valid record.
 */
static ssize_t decode_v3(struct mp_decoder *d, struct cur *c, unsigned tag, struct mp_record *rec)
{
	struct mp_enc_thread *t = &d->threads[d->cur_thread];
	uint64_t serial, v;
	bool near;
	rec->thread = d->cur_thread;
	rec->u.ev.ranged = false;
	rec->u.ev.serial = true;
	if (tag >= MP_TAG_ALLOC_REF && tag <= MP_TAG_ALLOC_REF_N) {
		uint64_t k = tag - MP_TAG_ALLOC_REF;
		const struct mp_class *cl;
		if (tag == MP_TAG_ALLOC_REF_N) {
			k = get_u(c) + MP_REF_IN_TAG;
			if (c->err)
				return 0;
		}
		if (k >= d->nclasses)
			return mp_decode_fail(d, "an allocation of class %llu, but only %llu are defined",
				    (unsigned long long)k, (unsigned long long)d->nclasses);
		cl = &d->classes[k];
		rec->type = MP_REC_ALLOC;
		rec->u.ev.kind = cl->kind;
		rec->u.ev.size = cl->size;
		rec->u.ev.stack = cl->stack;
		rec->u.ev.addr = MP_SERIAL_ADDR(d->n_seq);
		d->n_seq++;
		t->last_stack = cl->stack;
		return 0;
	}
	rec->type = MP_REC_FREE;
	rec->u.ev.size = 0;
	rec->u.ev.stack = 0;
	if (tag < MP_TAG_FREE_NEAR_N) {
		rec->u.ev.kind = MP_KIND_FREE;
		near = tag < MP_TAG_FREE_AGE_LIT;
		v = tag & 3;
	} else {
		rec->u.ev.kind = tag < MP_TAG_REALLOC_NEAR_N ? MP_KIND_FREE : MP_KIND_REALLOC;
		near = tag < MP_TAG_FREE_AGE_N || (tag >= MP_TAG_REALLOC_NEAR_N && tag < MP_TAG_REALLOC_AGE_N);
		v = get_planes(c, tag);
		if (c->err)
			return 0;
	}
	if (near) {
		serial = d->last_freed + (uint64_t)mp_unzigzag(v + 1);
		if (v == UINT64_MAX || serial >= d->n_seq)
			return mp_decode_fail(d, "a deallocation of block %lld by number, but only %llu blocks were allocated by number",
				    (long long)serial, (unsigned long long)d->n_seq);
	} else {
		if (v >= d->n_seq)
			return mp_decode_fail(d, "a deallocation of block age %llu, but only %llu blocks were allocated by number",
				    (unsigned long long)v, (unsigned long long)d->n_seq);
		serial = d->n_seq - 1 - v;
	}
	rec->u.ev.addr = MP_SERIAL_ADDR(serial);
	d->last_freed = serial;
	return 0;
}

ssize_t mp_decode(struct mp_decoder *d, const uint8_t *buf, size_t len, struct mp_record *rec)
{
	struct cur c = { buf + 1, buf + len, CUR_OK };
	unsigned tag;

	if (!len)
		return 0;
	tag = buf[0];
	if (tag < MP_TAG_FIRST_SIZED) {
		if (!d->seen_header)
			return mp_decode_fail(d, "the stream does not start with a header record");
		if (tag >= MP_TAG_ALLOC && tag < MP_TAG_FREE_RANGE + 16) {
			uint64_t na, ns;
			rec->u.ev.kind = tag & 15;
			mp_decode_event(d, &c, tag >> 4, rec, &na, &ns);
			if (c.err)
				goto bad;
			if (mp_decode_check_stack(d, rec))
				return -1;
			d->threads[d->cur_thread].last_addr = na;
			d->threads[d->cur_thread].last_stack = ns;
			return c.p - buf;
		}
		if (tag >= MP_TAG_ALLOC_SEQ && tag < MP_TAG_FREE_SEQ + 16) {
			if (decode_seq(d, &c, tag, rec) < 0)
				return -1;
			if (c.err)
				goto bad;
			return c.p - buf;
		}
		if (((tag >= MP_TAG_ALLOC_REF && tag != MP_TAG_TICK_DELTA) ||
		     (tag >= MP_TAG_FREE_NEAR_LIT && tag < MP_TAG_ALLOC)) && d->header.major >= 3) {
			if (decode_v3(d, &c, tag, rec) < 0)
				return -1;
			if (c.err)
				goto bad;
			return c.p - buf;
		}
		switch (tag) {
		case MP_TAG_THREAD_SWITCH: {
			uint64_t index = get_u(&c);
			if (c.err)
				goto bad;
			if (mp_decode_grow_threads(d, index))
				return mp_decode_fail(d, "thread index %llu is out of range",
					    (unsigned long long)index);
			d->cur_thread = (uint32_t)index;
			rec->type = MP_REC_SWITCH;
			rec->thread = (uint32_t)index;
			return c.p - buf;
		}
		case MP_TAG_TRACE: {
			uint64_t back = get_u(&c), index = d->n_traces + 1;
			int64_t delta = get_s(&c);
			if (c.err)
				goto bad;
			if (back == 0 || back > index)
				return mp_decode_fail(d, "trace node %llu has an invalid parent",
					    (unsigned long long)index);
			rec->type = MP_REC_TRACE;
			rec->u.trace.index = index;
			rec->u.trace.parent = index - back;
			rec->u.trace.ip = d->last_ip + (uint64_t)delta;
			d->last_ip = rec->u.trace.ip;
			d->n_traces = index;
			return c.p - buf;
		}
		case MP_TAG_TICK_DELTA:
			if (d->header.major < 3)
				return mp_decode_fail(d, "unknown record type 0x%02x", tag);
			/* fall through */
		case MP_TAG_TICK: {
			uint64_t delta = get_u(&c), rss = get_u(&c);
			if (c.err)
				goto bad;
			if (tag == MP_TAG_TICK_DELTA) {
				if (!d->rss_known)
					return mp_decode_fail(d, "a change of RSS before any tick");
				rss = d->last_rss + (uint64_t)mp_unzigzag(rss) * MP_TICK_RSS_UNIT;
			}
			mp_decode_tick(d, rec, delta, rss, false);
			return c.p - buf;
		}
		default:
			return mp_decode_fail(d, "unknown record type 0x%02x", tag);
		}
	} else {
		uint64_t plen = get_u(&c);
		size_t hdr;
		if (c.err)
			goto bad;
		if (plen > MP_MAX_RECORD_LEN)
			return mp_decode_fail(d, "%s record length %llu exceeds the limit", mp_decode_tag_name(tag),
				    (unsigned long long)plen);
		hdr = (size_t)(c.p - buf);
		if (plen > len - hdr)
			return 0;
		if (!d->seen_header && tag != MP_TAG_HEADER)
			return mp_decode_fail(d, "the stream does not start with a header record");
		c.end = c.p + plen;
		if (tag == MP_TAG_BLOCK) {
			rec->type = MP_REC_UNKNOWN;
			rec->u.unknown.tag = tag;
			rec->u.unknown.len = (size_t)plen;
			rec->u.unknown.data = c.p;
			return (ssize_t)(hdr + plen);
		}
		if (mp_decode_sized(d, tag, &c, rec))
			return -1;
		return (ssize_t)(hdr + plen);
	}
bad:
	if (c.err == CUR_SHORT)
		return 0;
	return mp_decode_fail(d, "malformed number in a record of type 0x%02x", tag);
}
