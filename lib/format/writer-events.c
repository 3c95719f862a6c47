/*
 * The writer's events (lib/format/writer.h): allocations and frees encoded
 * straight into the field streams of the block being built, by serial
 * number, allocation class and near number where they can be (format 3.0
 * and up), else by address; and mp_writer_events(), which turns a tracker's
 * event records into the capture's without decoding them into records
 * first: the collector's hot path.
 */
#include <config.h>
#include "lib/format/writer.h"

#include <endian.h>
#include <stdbool.h>
#include <string.h>

#include "lib/format/decode-private.h"
#include "lib/format/encode.h"
#include "lib/format/fields.h"
#include "lib/format/format.h"
#include "lib/format/writer-private.h"
#include "lib/util/hash.h"
#include "lib/util/xalloc.h"

/* Heap blocks are named by serial number when the writer was asked to (not mappings). */
static inline bool by_serial(const struct mp_writer *w, unsigned kind)
{
	return (w->flags & MP_WRITER_SERIALS) && kind < 16 && !mp_kind_is_mapping(kind);
}

/*
 * Events are encoded straight into the field streams, the layout
 * lib/format/fields.c splits records into: the hot ones (ALLOC_SEQ, FREE_SEQ and
 * thread switches) field by field, those with addresses as whole records
 * that are split.
 */
static inline void put_tag(struct mp_fields *f, unsigned tag)
{
	*mp_fields_room(f, MP_FS_TAGS, 1) = (uint8_t)tag;
	f->len[MP_FS_TAGS]++;
}

static inline void put_uvarint(struct mp_fields *f, int stream, uint64_t v)
{
	uint8_t *o = mp_fields_room(f, stream, MP_VARINT_MAX);
	f->len[stream] += (size_t)(mp_put_uvarint8(o, v) - o);
}

/* The most a hot event and the switch before it add to a block. */
#define HOT_EVENT_MAX (MP_ENC_MAX_EVENT + 1 + MP_VARINT_MAX)

/* Whether the block may be full: summed again (and written when it is). */
static __attribute__((noinline)) void check_block(struct mp_writer *w)
{
	size_t have;
	mp_writer_block_room(w, HOT_EVENT_MAX);
	have = mp_fields_total(&w->fields);
	w->hot_check = w->fields.len[MP_FS_TAGS] + (MP_WRITER_BLOCK_RAW - have) / HOT_EVENT_MAX / 2;
}

/* The switch to the event's thread, when needed; the thread's delta state. */
static inline __attribute__((always_inline)) struct mp_enc_thread *stream_switch(struct mp_writer *w,
										 uint32_t thread)
{
	/*
	 * Summing the streams for every event costs more than the event: after
	 * a sum, the block has room for at least (BLOCK_RAW - sum) / HOT_EVENT_MAX
	 * more hot events, counted on the tag stream.
	 */
	if (__builtin_expect(w->fields.len[MP_FS_TAGS] >= w->hot_check, 0))
		check_block(w);
	if (__builtin_expect(thread != w->cur_thread, 0)) {
		if (thread >= w->nthreads)
			mp_writer_grow_threads(w, thread);
		put_tag(&w->fields, MP_TAG_THREAD_SWITCH);
		put_uvarint(&w->fields, MP_FS_OTHER, thread);
		w->cur_thread = thread;
		w->n_records++;
	}
	return &w->threads[thread];
}

/* Allocation classes (format 3.0): the first ALLOC_SEQ of each defines it, ALLOC_REF names it. */
static inline uint64_t class_hash(uint64_t size, uint64_t stack, unsigned kind)
{
	return mp_hash_combine(mp_hash_u64(size ^ ((uint64_t)kind << 58)), stack);
}

/* The number of the class, or UINT32_MAX. */
static inline uint32_t class_find(const struct mp_writer *w, uint64_t h, uint64_t size, uint64_t stack,
				  unsigned kind)
{
	size_t mask, i;
	if (!w->class_cap)
		return UINT32_MAX;
	mask = w->class_cap - 1;
	for (i = h & mask; w->class_slots[i].idx1; i = (i + 1) & mask) {
		const struct mp_class_slot *c = &w->class_slots[i];
		if (c->size == size && c->stack == stack && c->kind == kind)
			return c->idx1 - 1;
	}
	return UINT32_MAX;
}

static void class_insert(struct mp_writer *w, uint64_t h, const struct mp_class_slot *c)
{
	size_t mask = w->class_cap - 1, i;
	for (i = h & mask; w->class_slots[i].idx1; i = (i + 1) & mask)
		;
	w->class_slots[i] = *c;
}

/* Class number w->nclasses (not defined yet) defined; at most half full. */
static __attribute__((noinline)) void class_add(struct mp_writer *w, uint64_t h, uint64_t size,
						uint64_t stack, unsigned kind)
{
	struct mp_class_slot c = { size, stack, kind, (uint32_t)w->nclasses + 1 };
	if ((w->nclasses + 1) * 2 > w->class_cap) {
		struct mp_class_slot *old = w->class_slots;
		size_t oldcap = w->class_cap;
		w->class_cap = oldcap ? oldcap * 2 : 64;
		w->class_slots = xcalloc_table(w->class_cap, sizeof(*w->class_slots));
		for (size_t i = 0; i < oldcap; i++)
			if (old[i].idx1)
				class_insert(w, class_hash(old[i].size, old[i].stack, old[i].kind), &old[i]);
		free(old);
	}
	class_insert(w, h, &c);
	w->nclasses++;
}

/*
 * Once every class is defined, a program whose allocations are mostly of
 * other classes (random sizes, as alloc-heavy's) would pay a lookup, most
 * often a cache miss, for nothing: after a window of CLASS_WINDOW lookups
 * with fewer than a quarter found, only one allocation in CLASS_STRIDE is
 * looked up, until a window finds them again.
 */
#define CLASS_WINDOW 4096
#define CLASS_STRIDE 16

static inline bool class_lookup_due(struct mp_writer *w)
{
	if (w->nclasses < MP_MAX_CLASSES)
		return true;
	if (w->class_skipped + 1 < w->class_stride) {
		w->class_skipped++;
		return false;
	}
	w->class_skipped = 0;
	if (++w->class_lookups == CLASS_WINDOW) {
		w->class_stride = w->class_hits * 4 < w->class_lookups ? CLASS_STRIDE : 1;
		w->class_lookups = w->class_hits = 0;
	}
	return true;
}

/* (have_h: the caller has the class's hash, h.) */
static inline __attribute__((always_inline)) uint64_t alloc_seq(struct mp_writer *w, uint32_t thread,
								 unsigned kind, uint64_t size, uint64_t stack,
								 uint64_t h, bool have_h)
{
	struct mp_enc_thread *t = stream_switch(w, thread);
	uint32_t k = UINT32_MAX;
	bool looked = class_lookup_due(w);
	if (looked) {
		if (!have_h)
			h = class_hash(size, stack, kind);
		k = class_find(w, h, size, stack, kind);
		w->class_hits += k != UINT32_MAX && w->nclasses == MP_MAX_CLASSES;
	}
	if (k != UINT32_MAX) {
		if (k < MP_REF_IN_TAG) {
			put_tag(&w->fields, MP_TAG_ALLOC_REF + k);
		} else {
			put_tag(&w->fields, MP_TAG_ALLOC_REF_N);
			put_uvarint(&w->fields, MP_FS_TAGS, k - MP_REF_IN_TAG);
		}
	} else {
		uint64_t delta = mp_zigzag((int64_t)(stack - t->last_stack));
		put_tag(&w->fields, MP_TAG_ALLOC_SEQ + kind);
		if (w->fields.vplanes) {
			mp_fields_put_vplanes(&w->fields, MP_FS_SIZES, size);
			mp_fields_put_vplanes(&w->fields, MP_FS_STACKS, delta);
		} else {
			put_uvarint(&w->fields, MP_FS_SIZES, size);
			put_uvarint(&w->fields, MP_FS_STACKS, delta);
		}
		/* (Looked up: every allocation is while classes are left.) */
		if (w->nclasses < MP_MAX_CLASSES)
			class_add(w, h, size, stack, kind);
	}
	t->last_stack = stack;
	w->n_records++;
	w->n_allocs++;
	w->bytes_allocated += size;
	return w->n_seq++;
}

uint64_t mp_writer_alloc_seq(struct mp_writer *w, uint32_t thread, unsigned kind, uint64_t size,
			     uint64_t stack)
{
	return alloc_seq(w, thread, kind, size, stack, 0, false);
}

/*
 * v's bytes, little-endian, into the byte planes from stream base (byte 0,
 * byte 1, bytes 2 and up); returns how many (at least 1). With no branch on
 * how many, which varies at random (as mp_fields_put_vplanes()).
 */
static inline unsigned put_planes(struct mp_fields *f, int base, uint64_t v)
{
	unsigned n = (unsigned)(63 - __builtin_clzll(v | 1)) / 8 + 1;
	uint8_t *o = mp_fields_room(f, base, 1);
	uint8_t *o1 = mp_fields_room(f, base + 1, 1), *o2 = mp_fields_room(f, base + 2, 8);
	uint64_t x = htole64(v >> 16);
	*o = (uint8_t)v;
	*o1 = (uint8_t)(v >> 8);
	memcpy(o2, &x, sizeof(x)); /* (bytes 2 to 7 stored whatever n is, counted when they are v's) */
	f->len[base]++;
	f->len[base + 1] += n > 1;
	f->len[base + 2] += n > 2 ? n - 2 : 0;
	return n;
}

static inline __attribute__((always_inline)) void free_seq(struct mp_writer *w, uint32_t thread,
							   unsigned kind, uint64_t serial)
{
	uint64_t age = w->n_seq - 1 - serial, q, v;
	int64_t delta = (int64_t)(serial - w->last_freed);
	bool near;
	stream_switch(w, thread);
	w->last_freed = serial;
	w->n_records++;
	w->n_frees++;
	if (kind != MP_KIND_FREE && kind != MP_KIND_REALLOC) {
		put_tag(&w->fields, MP_TAG_FREE_SEQ + kind);
		put_uvarint(&w->fields, MP_FS_AGES, age);
		return;
	}
	/*
	 * By the smaller number: the age, or how far it is from the block
	 * freed last (q = zigzag(delta) - 1: delta is never 0), which is small
	 * when blocks allocated together are freed together.
	 */
	q = delta ? mp_zigzag(delta) - 1 : UINT64_MAX;
	near = q < age;
	v = near ? q : age;
	if (kind == MP_KIND_FREE && v < 4) {
		put_tag(&w->fields, (near ? MP_TAG_FREE_NEAR_LIT : MP_TAG_FREE_AGE_LIT) + (unsigned)v);
	} else {
		unsigned tag = kind == MP_KIND_FREE ? (near ? MP_TAG_FREE_NEAR_N : MP_TAG_FREE_AGE_N)
						  : (near ? MP_TAG_REALLOC_NEAR_N : MP_TAG_REALLOC_AGE_N);
		size_t at = w->fields.len[MP_FS_TAGS];
		unsigned n;
		put_tag(&w->fields, tag);
		n = put_planes(&w->fields, near ? MP_FS_NEAR0 : MP_FS_AGE0, v);
		if (n < 4) {
			w->fields.p[MP_FS_TAGS][at] = (uint8_t)(tag + n - 1);
		} else {
			w->fields.p[MP_FS_TAGS][at] = (uint8_t)(tag + 3);
			put_tag(&w->fields, n); /* the count: a one-byte varint */
		}
	}
}

void mp_writer_free_seq(struct mp_writer *w, uint32_t thread, unsigned kind, uint64_t serial)
{
	free_seq(w, thread, kind, serial);
}

void mp_writer_alloc(struct mp_writer *w, uint32_t thread, unsigned kind, uint64_t addr,
		     uint64_t size, uint64_t stack)
{
	uint8_t *p;
	struct mp_enc_thread *t;
	if (by_serial(w, kind)) {
		/*
		 * A block at an address still live lost its free (events were lost):
		 * it stays live in the capture, as in one that kept addresses and
		 * saw no free, and the address now names the new block.
		 */
		mp_intmap_put(&w->serials, addr, alloc_seq(w, thread, kind, size, stack, 0, false));
		return;
	}
	t = stream_switch(w, thread);
	p = mp_writer_reserve(w, 2 * MP_ENC_MAX_EVENT); /* room for the extended form, a sized record */
	mp_writer_commit(w, mp_enc_alloc(p, t, kind, addr, size, stack));
	w->n_allocs++;
	w->bytes_allocated += size;
}

/* The free of a block by its address (not numbered by this writer: allocated before tracking began). */
static __attribute__((noinline)) void free_by_address(struct mp_writer *w, uint32_t thread, unsigned kind,
						      uint64_t addr)
{
	struct mp_enc_thread *t = stream_switch(w, thread);
	uint8_t *p = mp_writer_reserve(w, 2 * MP_ENC_MAX_EVENT);
	mp_writer_commit(w, mp_enc_free(p, t, kind, addr, 0, 0));
	w->n_frees++;
}

void mp_writer_free(struct mp_writer *w, uint32_t thread, unsigned kind, uint64_t addr)
{
	uint64_t serial;
	/* A block this writer did not number (allocated before tracking began) keeps its address. */
	if (by_serial(w, kind) && mp_intmap_take(&w->serials, addr, &serial))
		free_seq(w, thread, kind, serial);
	else
		free_by_address(w, thread, kind, addr);
}

void mp_writer_free_range(struct mp_writer *w, uint32_t thread, unsigned kind, uint64_t addr,
			  uint64_t size)
{
	struct mp_enc_thread *t = stream_switch(w, thread);
	uint8_t *p = mp_writer_reserve(w, 2 * MP_ENC_MAX_EVENT);
	mp_writer_commit(w, mp_enc_free(p, t, kind, addr, 1, size));
	w->n_frees++;
}

/* ---- a tracker's events into the capture's ------------------------------- */

/*
 * mp_writer_events() decodes a record only with this much of the buffer
 * left, so that its numbers can be read 8 bytes at a time without a check
 * per byte: the longest event (an ALLOC of kind below 16: 1 + 4 varints,
 * of which the fast path takes none longer than 8 bytes) and the 8 bytes
 * the last number's read may cover.
 */
#define EVENTS_TAIL (1 + 3 * 8 + 8 + 8)

/* The varint at *q when it has at most 8 bytes (8 readable there): true, *q past it. */
static inline __attribute__((always_inline)) bool next_u(const uint8_t **q, uint64_t *v)
{
	unsigned n = mp_get_uvarint8(*q, v);
	*q += n;
	return n != 0;
}

/*
 * An event decoded, waiting to be written: mp_writer_events() decodes events
 * EVENTS_AHEAD before it writes them, fetching ahead the entries of the
 * block map (and of the class table) each will look up, which are mostly not
 * in the cache: by the time it is written, they are.
 */
struct pending {
	uint64_t addr, size, stack, h;
	uint32_t thread;
	uint8_t kind;
	bool alloc, have_h;
};
#define EVENTS_AHEAD 8
#define EVENTS_RING 16 /* (a power of two, above EVENTS_AHEAD) */

static inline __attribute__((always_inline)) void fetch_ahead(const void *p)
{
	__builtin_prefetch(p, 1, 3);
}

/* The event written, as mp_writer_alloc() or mp_writer_free() would. */
static inline __attribute__((always_inline)) void write_pending(struct mp_writer *w,
								const struct pending *e)
{
	uint64_t serial;
	if (e->alloc)
		mp_intmap_put(&w->serials, e->addr,
			      alloc_seq(w, e->thread, e->kind, e->size, e->stack, e->h, e->have_h));
	else if (mp_intmap_take(&w->serials, e->addr, &serial))
		free_seq(w, e->thread, e->kind, serial);
	else
		free_by_address(w, e->thread, e->kind, e->addr);
}

size_t mp_writer_events(struct mp_writer *w, struct mp_decoder *d, const uint8_t *buf, size_t len,
			struct mp_writer_fed *fed)
{
	const uint8_t *p = buf, *end = buf + len;
	struct mp_writer_fed n = { 0 };
	struct pending ev[EVENTS_RING];
	unsigned head = 0, tail = 0; /* decoded, written */
	/*
	 * Classes are looked up for every allocation, or one in class_stride
	 * (class_lookup_due()): which, guessed (the writer's state is a few
	 * events behind), has its class's entry fetched ahead.
	 */
	unsigned skipped = w->class_skipped, stride = w->class_stride;

	if (!(w->flags & MP_WRITER_SERIALS) || !d->seen_header)
		return 0;
	while (end - p >= EVENTS_TAIL) {
		const uint8_t *q = p + 1;
		unsigned tag = p[0], kind = tag & 15;
		struct mp_enc_thread *t = &d->threads[d->cur_thread];
		struct pending *e = &ev[head % EVENTS_RING];
		uint64_t v, addr, size, sd, stack;
		if (tag >> 4 == MP_TAG_ALLOC >> 4 || tag >> 4 == MP_TAG_FREE >> 4) {
			if (mp_kind_is_mapping(kind) || !next_u(&q, &v))
				break;
			/* The address (lib/format/encode.h): one varint when aligned, else two. */
			if (!(v & 1)) {
				addr = t->last_addr + ((uint64_t)mp_unzigzag(v >> 1) << 4);
			} else {
				uint64_t high;
				if ((v >> 1) > 15 || !next_u(&q, &high))
					break;
				addr = t->last_addr + (((uint64_t)mp_unzigzag(high) << 4) | (v >> 1));
			}
			e->alloc = tag < MP_TAG_FREE;
			e->have_h = false;
			if (e->alloc) {
				if (!next_u(&q, &size) || !next_u(&q, &sd))
					break;
				stack = t->last_stack + (uint64_t)mp_unzigzag(sd);
				if (stack > d->n_traces)
					break; /* (mp_decode() says why) */
				t->last_stack = stack;
				e->size = size;
				e->stack = stack;
				n.allocs++;
				n.bytes += size;
				if (stride != w->class_stride) {
					stride = w->class_stride;
					skipped = w->class_skipped;
				}
				if (w->nclasses == MP_MAX_CLASSES && skipped + 1 < stride) {
					skipped++;
				} else if (w->class_cap) {
					const struct mp_class_slot *c;
					skipped = 0;
					e->h = class_hash(size, stack, kind);
					e->have_h = true;
					c = &w->class_slots[e->h & (w->class_cap - 1)];
					fetch_ahead(c);
					fetch_ahead((const uint8_t *)(c + 1) - 1); /* (a slot may cross a line) */
				}
			} else {
				n.frees++;
			}
			t->last_addr = addr;
			e->addr = addr;
			e->kind = (uint8_t)kind;
			e->thread = d->cur_thread;
			if (w->serials.cap) {
				size_t i = mp_intmap_home(&w->serials, addr);
				fetch_ahead(&w->serials.e[i]);
				if (!e->alloc) /* (a free moves the entries after it up) */
					fetch_ahead(&w->serials.e[(i + 2) & (w->serials.cap - 1)]);
			}
			n.records++;
			p = q;
			if (++head - tail > EVENTS_AHEAD)
				write_pending(w, &ev[tail++ % EVENTS_RING]);
		} else if (tag == MP_TAG_THREAD_SWITCH && p[1] < 0x80 && p[1] < d->nthreads) {
			d->cur_thread = p[1];
			n.records++;
			p += 2;
		} else {
			break;
		}
	}
	while (tail != head)
		write_pending(w, &ev[tail++ % EVENTS_RING]);
	fed->records += n.records;
	fed->allocs += n.allocs;
	fed->frees += n.frees;
	fed->bytes += n.bytes;
	return (size_t)(p - buf);
}
