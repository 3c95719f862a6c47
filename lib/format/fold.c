/*
 * The fold (fold.h): a tracker's stream into an aggregated capture's
 * records, allocation-free. Each step is the one lib/analysis takes for the
 * same record (analysis.c's events, series.c's ticks, lifecycle.c's end of
 * the pass), with the options the collector's aggregation uses (threads
 * apart, every kind, the default time series), so that the records it emits
 * are the ones mp_aggregate_emit() emits; tests/unit/test-fold.c holds the
 * two to that on random streams. This file: the records, threads, slots
 * and events (fold-private.h says where the rest is).
 */
#include <config.h>
#include "lib/format/fold-private.h"

#include <string.h>

#include "lib/format/encode.h"
#include "lib/format/format.h"

int mp_fold_grow(struct mp_fold *f, void *arr, size_t *cap, size_t need, size_t elem, size_t first)
{
	void **a = arr, *p;
	size_t n = *cap ? *cap : first;
	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	p = f->failed ? NULL : f->o.get(f->o.mem_ctx, n * elem);
	if (!p) {
		f->failed = 1;
		return -1;
	}
	if (*a) {
		memcpy(p, *a, *cap * elem);
		f->o.put(f->o.mem_ctx, *a, *cap * elem);
	}
	*a = p;
	*cap = n;
	return 0;
}

void mp_fold_put(struct mp_fold *f, void *p, size_t bytes)
{
	if (p)
		f->o.put(f->o.mem_ctx, p, bytes);
}

struct mp_fold *mp_fold_new(const struct mp_fold_opts *o)
{
	struct mp_fold *f = o->get(o->mem_ctx, sizeof(*f));
	if (!f)
		return NULL;
	memset(f, 0, sizeof(*f));
	f->o = *o;
	if (!f->o.max_samples)
		f->o.max_samples = MP_FOLD_MAX_SAMPLES;
	if (f->o.max_samples < 2)
		f->o.max_samples = 2;
	f->o.max_samples &= ~(size_t)1;
	f->t.ticks_per_sample = 1;
	f->free_origin = UINT32_MAX;
	/* Events before any switch are index 0's. */
	if (mp_fold_grow(f, &f->idx, &f->idx_cap, 1, sizeof(*f->idx), 64)) {
		mp_fold_free(f);
		return NULL;
	}
	return f;
}

void mp_fold_free(struct mp_fold *f)
{
	if (!f)
		return;
	mp_fold_put(f, f->samples, f->samples_cap * sizeof(*f->samples));
	mp_fold_put(f, f->idx, f->idx_cap * sizeof(*f->idx));
	mp_fold_put(f, f->threads, f->threads_cap * sizeof(*f->threads));
	mp_fold_put(f, f->kinds, f->kinds_cap * sizeof(*f->kinds));
	mp_fold_put(f, f->slots, f->slots_cap * sizeof(*f->slots));
	mp_fold_put(f, f->slot_index, f->slot_index_cap * sizeof(*f->slot_index));
	mp_fold_put(f, f->blocks, f->blocks_cap * sizeof(*f->blocks));
	mp_fold_put(f, f->ranges, f->ranges_cap * sizeof(*f->ranges));
	mp_fold_put(f, f->origins, f->origins_cap * sizeof(*f->origins));
	f->o.put(f->o.mem_ctx, f, sizeof(*f));
}

int mp_fold_failed(const struct mp_fold *f)
{
	return f->failed;
}

uint64_t mp_fold_events(const struct mp_fold *f)
{
	return f->t.n_events;
}

/* ---- threads, kinds and slots ---- */

/* The state of thread index i of the stream (made when new), or NULL. */
static struct index *index_at(struct mp_fold *f, uint64_t i)
{
	/* (New entries come zeroed.) */
	if (i >= MP_MAX_THREADS || mp_fold_grow(f, &f->idx, &f->idx_cap, (size_t)i + 1, sizeof(*f->idx), 64))
		return NULL;
	return &f->idx[i];
}

static uint32_t new_thread(struct mp_fold *f, uint64_t tid)
{
	struct thread *t;
	if (mp_fold_grow(f, &f->threads, &f->threads_cap, f->nthreads + 1, sizeof(*f->threads), 16))
		return UINT32_MAX;
	t = &f->threads[f->nthreads];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	return (uint32_t)f->nthreads++;
}

/* The thread of the current index, made when events come before its declaration. */
static uint32_t thread_now(struct mp_fold *f)
{
	struct index *x = &f->idx[f->cur];
	uint32_t t;
	if (x->thread1)
		return x->thread1 - 1;
	t = new_thread(f, f->cur == 0 ? f->o.main_tid : 0);
	if (t != UINT32_MAX)
		x->thread1 = t + 1;
	return t;
}

/* A THREAD record: the same tid (or one known only by its events) renames, another is a new thread. */
static void on_thread(struct mp_fold *f, uint64_t i, uint64_t tid, const uint8_t *name, size_t len)
{
	struct index *x = index_at(f, i);
	struct thread *t;
	uint32_t k;
	if (!x)
		return;
	k = x->thread1 ? x->thread1 - 1 : UINT32_MAX;
	if (k == UINT32_MAX || (f->threads[k].tid && f->threads[k].tid != tid)) {
		if ((k = new_thread(f, tid)) == UINT32_MAX)
			return;
		x->thread1 = k + 1;
	}
	t = &f->threads[k];
	t->tid = tid;
	t->name_len = len < NAME_MAX_LEN ? len : NAME_MAX_LEN;
	memcpy(t->name, name, t->name_len);
	/* A (re)declared index starts its deltas anew. */
	x->last_addr = x->last_stack = 0;
}

static struct mp_agg_kind *kind_of(struct mp_fold *f, uint64_t kind)
{
	struct mp_agg_kind *k;
	for (size_t i = 0; i < f->nkinds; i++)
		if (f->kinds[i].kind == kind)
			return &f->kinds[i];
	if (mp_fold_grow(f, &f->kinds, &f->kinds_cap, f->nkinds + 1, sizeof(*f->kinds), 32))
		return NULL;
	k = &f->kinds[f->nkinds++];
	memset(k, 0, sizeof(*k));
	k->kind = kind;
	return k;
}

static uint64_t slot_hash(uint32_t stack, uint32_t thread, uint64_t kind)
{
	return mp_fold_mix(((uint64_t)thread << 32 | stack) ^ (kind << 56));
}

static int slot_index_grow(struct mp_fold *f)
{
	uint32_t *old = f->slot_index;
	size_t ocap = f->slot_index_cap, n = ocap ? 2 * ocap : 1024, mask = n - 1;
	uint32_t *p = f->o.get(f->o.mem_ctx, n * sizeof(*p));
	if (!p) {
		f->failed = 1;
		return -1;
	}
	for (size_t s = 0; s < f->nslots; s++) {
		const struct slot *x = &f->slots[s];
		size_t i = slot_hash(x->stack, x->thread, x->kind) & mask;
		while (p[i])
			i = (i + 1) & mask;
		p[i] = (uint32_t)s + 1;
	}
	f->slot_index = p;
	f->slot_index_cap = n;
	mp_fold_put(f, old, ocap * sizeof(*old));
	return 0;
}

/* The slot of (stack, thread, kind), made when new; UINT32_MAX when memory ran out. */
static uint32_t get_slot(struct mp_fold *f, uint32_t stack, uint32_t thread, uint32_t kind)
{
	size_t mask, i;
	struct slot *s;
	if ((f->nslots + 1) * 2 > f->slot_index_cap && slot_index_grow(f))
		return UINT32_MAX;
	mask = f->slot_index_cap - 1;
	for (i = slot_hash(stack, thread, kind) & mask; f->slot_index[i]; i = (i + 1) & mask) {
		s = &f->slots[f->slot_index[i] - 1];
		if (s->stack == stack && s->thread == thread && s->kind == kind)
			return f->slot_index[i] - 1;
	}
	if (mp_fold_grow(f, &f->slots, &f->slots_cap, f->nslots + 1, sizeof(*f->slots), 256))
		return UINT32_MAX;
	s = &f->slots[f->nslots];
	memset(s, 0, sizeof(*s));
	s->stack = stack;
	s->thread = thread;
	s->kind = kind;
	/* It did not exist at the last peak: its value there was zero. */
	s->epoch = f->epoch;
	f->slot_index[i] = (uint32_t)f->nslots + 1;
	return (uint32_t)f->nslots++;
}

/*
 * Change a slot's live counts; the first change after a new peak saves the
 * value it had at that peak (a slot unchanged since holds it still).
 */
static void slot_change(struct mp_fold *f, uint32_t slot, uint64_t bytes, uint64_t count, int add)
{
	struct slot *s = &f->slots[slot];
	if (s->epoch != f->epoch) {
		s->at_peak = s->live;
		s->epoch = f->epoch;
	}
	if (add) {
		s->live.bytes += bytes;
		s->live.count += count;
	} else {
		s->live.bytes -= bytes;
		s->live.count -= count;
	}
}

/* Take bytes (count blocks) allocated in slot by thread off the heap. */
void mp_fold_release(struct mp_fold *f, uint32_t slot, uint32_t thread, uint64_t bytes, uint64_t count)
{
	slot_change(f, slot, bytes, count, 0);
	f->heap -= bytes;
	f->live_count -= count;
	f->threads[thread].live.bytes -= bytes;
	f->threads[thread].live.count -= count;
}

/* ---- events ---- */

static uint64_t range_end(uint64_t addr, uint64_t size)
{
	return addr + size < addr ? UINT64_MAX : addr + size;
}

static unsigned hist_bucket(uint64_t size)
{
	return size ? 64 - (unsigned)__builtin_clzll(size) : 0;
}

static void on_alloc(struct mp_fold *f, uint32_t kind, uint64_t addr, uint64_t size, uint64_t stack)
{
	uint32_t th = thread_now(f), slot;
	uint64_t bytes = size, count = 1;
	struct mp_agg_kind *k;
	struct thread *t;
	struct slot *s;
	if (th == UINT32_MAX ||
	    (slot = get_slot(f, stack <= f->ntraces ? (uint32_t)stack : 0, th, kind)) == UINT32_MAX ||
	    !(k = kind_of(f, kind)) ||
	    mp_fold_grow(f, &f->ranges, &f->ranges_cap, f->nranges + 2, sizeof(*f->ranges), 256) ||
	    mp_fold_grow(f, &f->origins, &f->origins_cap, f->norigins + 1, sizeof(*f->origins), 256))
		return;
	if (f->o.weigh)
		f->o.weigh(f->o.weigh_ctx, size, f->t.n_events, &bytes, &count);
	if (!f->t.n_allocs || size < f->t.min_size)
		f->t.min_size = size;
	if (size > f->t.max_size)
		f->t.max_size = size;
	f->t.n_allocs += count;
	f->t.bytes_allocated += bytes;
	f->hist.count[hist_bucket(size)] += count;
	k->n_allocs += count;
	k->bytes_allocated += bytes;
	t = &f->threads[th];
	t->n_allocs += count;
	t->bytes_allocated += bytes;
	s = &f->slots[slot];
	s->allocated.bytes += bytes;
	s->allocated.count += count;
	if (mp_kind_is_mapping(kind)) {
		uint64_t end = range_end(addr, size), mapped = end - addr;
		uint32_t o;
		if (!size)
			return; /* nothing mapped, nothing live */
		/* A mapping replaces whatever was mapped there (MAP_FIXED, mremap). */
		mp_fold_unmap(f, addr, end);
		if (f->free_origin != UINT32_MAX) {
			o = f->free_origin;
			f->free_origin = f->origins[o].next_free;
		} else {
			o = (uint32_t)f->norigins++;
		}
		/* (What the map holds of it; weighed, what it stands for.) */
		f->origins[o] = (struct origin){ mapped, f->o.weigh ? bytes : mapped, count, slot, th, 1,
						 UINT32_MAX };
		mp_fold_range_insert(f, mp_fold_range_at(f, addr), addr, end, o);
	} else {
		struct block *b = mp_fold_block_find(f, addr);
		if (b) {
			/* A second allocation at a live address: the free was not seen. */
			mp_fold_release(f, b->slot1 - 1, b->thread, b->bytes, b->count);
			mp_fold_block_delete(f, b);
		}
		if (!(b = mp_fold_block_add(f, addr)))
			return;
		b->bytes = bytes;
		b->count = count;
		b->slot1 = slot + 1;
		b->thread = th;
	}
	slot_change(f, slot, bytes, count, 1);
	f->heap += bytes;
	f->live_count += count;
	t->live.bytes += bytes;
	t->live.count += count;
	if (f->heap > f->t.peak_bytes) {
		/* A new peak: every slot's value now is its value at the peak. */
		f->epoch++;
		f->t.peak_bytes = f->heap;
		f->t.peak_count = f->live_count;
		f->t.peak_time_us = f->last_time_us;
		f->t.peak_ticks = f->t.n_ticks;
		f->t.peak_event = f->t.n_events;
	}
	if (f->heap > f->tick_max)
		f->tick_max = f->heap;
	if (f->heap > f->cur_max) {
		f->cur_max = f->heap;
		f->cur_hwm_time = f->last_time_us;
	}
}

static void on_free(struct mp_fold *f, uint32_t kind, uint64_t addr, int ranged, uint64_t size)
{
	uint32_t th;
	uint64_t count = 1;
	struct mp_agg_kind *k;
	if (!ranged && !addr) {
		f->t.n_null_frees++;
		return;
	}
	if ((th = thread_now(f)) == UINT32_MAX ||
	    mp_fold_grow(f, &f->ranges, &f->ranges_cap, f->nranges + 1, sizeof(*f->ranges), 256))
		return;
	if (ranged) {
		if (!mp_fold_unmap(f, addr, range_end(addr, size))) {
			f->t.n_unknown_frees++;
			return;
		}
	} else {
		struct block *b = mp_fold_block_find(f, addr);
		if (!b) {
			f->t.n_unknown_frees++;
			return;
		}
		count = b->count;
		mp_fold_release(f, b->slot1 - 1, b->thread, b->bytes, b->count);
		mp_fold_block_delete(f, b);
	}
	f->t.n_frees += count;
	if ((k = kind_of(f, kind)))
		k->n_frees += count;
	f->threads[th].n_frees += count;
}

/* ---- records ---- */

struct cur {
	const uint8_t *p, *end;
	int bad;
};

static uint64_t get_u(struct cur *c)
{
	uint64_t v = 0;
	for (unsigned shift = 0; shift < 64; shift += 7) {
		if (c->p >= c->end)
			break;
		v |= (uint64_t)(*c->p & 0x7f) << shift;
		if (!(*c->p++ & 0x80))
			return v;
	}
	c->bad = 1;
	return 0;
}

/* An event's fields after its tag (and kind): cls 1 an allocation, 2 a free, 3 a range's. */
static int event(struct mp_fold *f, struct cur *c, uint32_t kind, int cls)
{
	struct index *x = &f->idx[f->cur];
	uint64_t v = get_u(c), addr, size = 0, stack = x->last_stack;
	if (!(v & 1))
		addr = x->last_addr + ((uint64_t)mp_unzigzag(v >> 1) << 4);
	else if ((v >> 1) > 15)
		return -1;
	else
		addr = x->last_addr + (((uint64_t)mp_unzigzag(get_u(c)) << 4) | (v >> 1));
	if (cls != 2)
		size = get_u(c);
	if (cls == 1)
		stack += (uint64_t)mp_unzigzag(get_u(c));
	if (c->bad)
		return -1;
	x->last_addr = addr;
	x->last_stack = stack;
	f->t.n_events++;
	f->events_since_tick = 1;
	if (cls == 1)
		on_alloc(f, kind, addr, size, stack);
	else
		on_free(f, kind, addr, cls == 3, size);
	return 1;
}

/* A marker's fields: its time, and a LOST record's count. */
static void marker(struct mp_fold *f, struct cur *c, unsigned tag)
{
	while (c->p < c->end && !c->bad) {
		uint64_t key = get_u(c), v = get_u(c);
		if ((key & 7) == MP_FIELD_BYTES) {
			if (v > (uint64_t)(c->end - c->p))
				return;
			c->p += v;
		} else if ((key & 7) > MP_FIELD_BYTES) {
			return;
		} else if (c->bad) {
			return;
		} else if (key >> 3 == MP_M_TIME && v > f->duration_us) {
			f->duration_us = v;
		} else if (key >> 3 == MP_M_COUNT && tag == MP_TAG_LOST) {
			f->t.n_lost += v;
		}
	}
}

int mp_fold_record(struct mp_fold *f, const uint8_t *rec, size_t len)
{
	struct cur c = { rec + 1, rec + len, 0 };
	unsigned tag;
	if (!len || f->failed)
		return -1;
	tag = rec[0];
	f->t.n_records++;
	if (tag >= MP_TAG_ALLOC && tag < MP_TAG_FREE_RANGE + 16)
		return event(f, &c, tag & 15, tag >> 4);
	switch (tag) {
	case MP_TAG_THREAD_SWITCH: {
		uint64_t i = get_u(&c);
		if (c.bad || !index_at(f, i))
			return -1;
		f->cur = (uint32_t)i;
		return 1;
	}
	case MP_TAG_TRACE:
		f->ntraces++;
		return 0;
	case MP_TAG_TICK: {
		uint64_t delta = get_u(&c), rss = get_u(&c);
		if (c.bad)
			return -1;
		f->time_us += delta;
		mp_fold_tick(f, f->time_us, rss);
		return 1;
	}
	default:
		break;
	}
	if (tag < MP_TAG_FIRST_SIZED)
		return -1;
	/* A sized record: its payload. */
	{
		uint64_t plen = get_u(&c);
		if (c.bad || plen > (uint64_t)(c.end - c.p))
			return -1;
		c.end = c.p + plen;
	}
	switch (tag) {
	case MP_TAG_THREAD: {
		uint64_t i = get_u(&c), tid = get_u(&c), nlen = get_u(&c);
		if (c.bad || nlen > (uint64_t)(c.end - c.p))
			return -1;
		on_thread(f, i, tid, c.p, (size_t)nlen);
		return 1;
	}
	case MP_TAG_ALLOC_X: case MP_TAG_FREE_X: case MP_TAG_FREE_RANGE_X: {
		uint64_t kind = get_u(&c);
		if (c.bad || kind > UINT32_MAX)
			return -1;
		return event(f, &c, (uint32_t)kind, tag == MP_TAG_ALLOC_X ? 1 : tag == MP_TAG_FREE_X ? 2 : 3);
	}
	case MP_TAG_ATTACH: case MP_TAG_DETACH: case MP_TAG_FORK: case MP_TAG_LOST:
	case MP_TAG_EXIT: case MP_TAG_MESSAGE: case MP_TAG_SNAPSHOT: case MP_TAG_UNWIND:
		marker(f, &c, tag);
		return 0;
	default:
		return 0;
	}
}

