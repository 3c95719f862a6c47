/* The analysis pass: live blocks, mappings and per-slot counters, one record at a time. */
#include <config.h>
#include "lib/analysis/analysis.h"

#include <stdlib.h>
#include <string.h>

#include "lib/analysis/analysis-private.h"
#include "lib/analysis/blocks.h"
#include "lib/analysis/rangemap.h"
#include "lib/util/hash.h"
#include "lib/util/xalloc.h"

/*
 * Everything an event calls is in this file, so that the compiler can inline
 * it into the loop over a batch (run_batch); the stacks (frames.c), the time
 * series at each tick (series.c), the start and end of the pass
 * (lifecycle.c) and the lookups after it (query.c) are elsewhere.
 */

/* ---- small helpers ------------------------------------------------------ */

static unsigned hist_bucket(uint64_t size)
{
	return size ? 64 - (unsigned)__builtin_clzll(size) : 0;
}

/* What a block stands for: itself, or in a sampled capture an estimate (estimate.c). */
static inline __attribute__((always_inline)) void block_est(const struct mp_analysis *a, uint64_t size,
							     uint64_t key, uint64_t *bytes,
							     uint64_t *count)
{
	if (__builtin_expect(!a->header.sampling_interval, 1)) {
		*bytes = size;
		*count = 1;
		return;
	}
	mp_estimate_block(a, size, key, bytes, count);
}

/* ---- threads and kinds -------------------------------------------------- */

static uint32_t new_thread(struct mp_analysis *a, uint32_t index, uint64_t tid)
{
	struct mp_thread *t;
	ALLOC_GROW(a->threads, a->nthreads + 1, a->threads_alloc);
	t = &a->threads[a->nthreads];
	memset(t, 0, sizeof(*t));
	t->index = index;
	t->tid = tid;
	return (uint32_t)a->nthreads++;
}

static void set_thread_of(struct mp_analysis *a, uint32_t index, uint32_t thread)
{
	struct mp_analysis_private *p = a->p;
	if (index >= p->thread_of_alloc) {
		size_t old = p->thread_of_alloc, n = old ? old : 8;
		while (n <= index)
			n *= 2;
		p->thread_of = xreallocarray(p->thread_of, n, sizeof(*p->thread_of));
		for (size_t i = old; i < n; i++)
			p->thread_of[i] = MP_NONE;
		p->thread_of_alloc = n;
	}
	p->thread_of[index] = thread;
}

/* The analysis thread of a capture thread index, declaring it when events come first. */
static inline uint32_t thread_of(struct mp_analysis *a, uint32_t index)
{
	struct mp_analysis_private *p = a->p;
	uint32_t t;
	if (index < p->thread_of_alloc && p->thread_of[index] != MP_NONE)
		return p->thread_of[index];
	t = new_thread(a, index, index == 0 ? a->header.main_tid : 0);
	set_thread_of(a, index, t);
	return t;
}

static void on_thread(struct mp_analysis *a, const struct mp_record *rec)
{
	struct mp_analysis_private *p = a->p;
	uint32_t index = rec->u.thread.index, t = MP_NONE;
	if (index < p->thread_of_alloc)
		t = p->thread_of[index];
	/*
	 * The same tid (or a thread only known from its events so far) is a
	 * rename; another tid is a new thread reusing the index.
	 */
	if (t == MP_NONE || (a->threads[t].tid && a->threads[t].tid != rec->u.thread.tid)) {
		t = new_thread(a, index, rec->u.thread.tid);
		set_thread_of(a, index, t);
	}
	a->threads[t].tid = rec->u.thread.tid;
	a->threads[t].name = mp_strtab_intern(&a->strings, rec->u.thread.name,
					      rec->u.thread.name_len);
}

static inline struct mp_kind_totals *kind_totals(struct mp_analysis *a, uint32_t kind)
{
	struct mp_analysis_private *p = a->p;
	struct mp_kind_totals *k;
	if (kind < 32 && p->kind_index[kind])
		return &a->kinds[p->kind_index[kind] - 1];
	if (kind >= 32)
		for (size_t i = 0; i < a->nkinds; i++)
			if (a->kinds[i].kind == kind)
				return &a->kinds[i];
	ALLOC_GROW(a->kinds, a->nkinds + 1, a->kinds_alloc);
	k = &a->kinds[a->nkinds++];
	memset(k, 0, sizeof(*k));
	k->kind = kind;
	if (kind < 32)
		p->kind_index[kind] = (uint32_t)a->nkinds;
	return k;
}

/* ---- slots and the peak ------------------------------------------------- */

struct slot_probe {
	const struct mp_analysis *a;
	uint32_t stack, thread, kind;
};

static bool slot_eq(const void *ctx, uint32_t idx)
{
	const struct slot_probe *p = ctx;
	const struct mp_slot *s = &p->a->slots[idx];
	return s->stack == p->stack && s->thread == p->thread && s->kind == p->kind;
}

static void remember_slot(struct mp_analysis_private *p, uint32_t stack, uint32_t idx)
{
	if (stack >= p->stack_slot_alloc) {
		size_t old = p->stack_slot_alloc, n = old ? old : 1024;
		while (n <= stack)
			n *= 2;
		p->stack_slot = xreallocarray(p->stack_slot, n, sizeof(*p->stack_slot));
		memset(p->stack_slot + old, 0, (n - old) * sizeof(*p->stack_slot));
		p->stack_slot_alloc = n;
	}
	p->stack_slot[stack] = idx + 1;
}

static uint32_t get_slot(struct mp_analysis *a, uint32_t stack, uint32_t thread, uint32_t kind)
{
	struct mp_analysis_private *p = a->p;
	struct slot_probe probe = { a, stack, thread, kind };
	uint64_t h;
	uint32_t idx;
	struct mp_slot *s;
	/* A stack mostly allocates with one function in one thread: try its last slot. */
	if (stack < p->stack_slot_alloc && p->stack_slot[stack]) {
		idx = p->stack_slot[stack] - 1;
		s = &a->slots[idx];
		if (s->thread == thread && s->kind == kind)
			return idx;
	}
	h = mp_hash_u64(((uint64_t)thread << 32 | stack) ^ ((uint64_t)kind << 56));
	idx = mp_idxset_find(&p->slotset, h, slot_eq, &probe);
	if (idx != MP_NONE) {
		remember_slot(p, stack, idx);
		return idx;
	}
	ALLOC_GROW(a->slots, a->nslots + 1, a->slots_alloc);
	idx = (uint32_t)a->nslots++;
	s = &a->slots[idx];
	memset(s, 0, sizeof(*s));
	s->stack = stack;
	s->thread = thread;
	s->kind = kind;
	s->site = MP_NONE;
	s->caller = MP_NONE;
	s->process = MP_NONE;
	/* It did not exist at the last peak: its value there was zero. */
	s->epoch_ = a->p->epoch;
	mp_idxset_add(&p->slotset, h, idx);
	remember_slot(p, stack, idx);
	return idx;
}

/*
 * Change a slot's live counts, up (an allocation) or down. The first change
 * after a new peak saves the value the slot had at that peak; a slot not
 * changed since the last peak still holds it. So the peak snapshot costs
 * O(1) per event. Sizes are any 64-bit value (2^63 bytes is a legal
 * allocation), so counts stay unsigned, modulo 2^64, as every count of the
 * analysis: exact whenever the live value fits in 64 bits, as a real heap's
 * does, and never a signed overflow.
 */
static void slot_change(struct mp_analysis *a, uint32_t slot, bool up, uint64_t bytes,
			uint64_t count)
{
	struct mp_slot *s = &a->slots[slot];
	if (s->epoch_ != a->p->epoch) {
		s->at_peak_ = s->leaked;
		s->epoch_ = a->p->epoch;
	}
	if (up) {
		s->leaked.bytes += bytes;
		s->leaked.count += count;
	} else {
		s->leaked.bytes -= bytes;
		s->leaked.count -= count;
	}
}

/* ---- temporal intervals ------------------------------------------------- */

struct iv_probe {
	const struct mp_interval *ivs;
	uint32_t slot, ah, fh;
};

static bool iv_eq(const void *ctx, uint32_t idx)
{
	const struct iv_probe *p = ctx;
	const struct mp_interval *iv = &p->ivs[idx];
	return iv->slot == p->slot && iv->alloc == p->ah && iv->free == p->fh;
}

static uint64_t iv_hash(uint32_t slot, uint32_t ah, uint32_t fh)
{
	return mp_hash_combine(mp_hash_u64((uint64_t)ah << 32 | fh), slot);
}

/* Add to the interval (slot, ah, fh) of a set; returns its index. */
static void iv_add(struct mp_interval **ivs, size_t *n, size_t *alloc, struct mp_idxset *set,
		   uint32_t slot, uint32_t ah, uint32_t fh, uint64_t bytes, uint64_t count)
{
	struct iv_probe probe = { *ivs, slot, ah, fh };
	uint64_t h = iv_hash(slot, ah, fh);
	uint32_t idx = mp_idxset_find(set, h, iv_eq, &probe);
	if (idx == MP_NONE) {
		ALLOC_GROW(*ivs, *n + 1, *alloc);
		idx = (uint32_t)(*n)++;
		(*ivs)[idx] = (struct mp_interval){ slot, ah, fh, { 0, 0 } };
		mp_idxset_add(set, h, idx);
	}
	(*ivs)[idx].c.bytes += bytes;
	(*ivs)[idx].c.count += count;
}

void mp_analysis_add_interval(struct mp_analysis *a, uint32_t slot, uint32_t ah, uint32_t fh,
			      uint64_t bytes, uint64_t count)
{
	if (ah == fh)
		return; /* never live at a high-water mark */
	iv_add(&a->intervals, &a->nintervals, &a->p->intervals_alloc, &a->p->ivset, slot, ah, fh,
	       bytes, count);
}

void mp_analysis_remap_intervals(struct mp_analysis *a,
				 void (*map)(void *ctx, struct mp_interval *iv), void *ctx)
{
	struct mp_interval *old = a->intervals;
	size_t n = a->nintervals;
	a->intervals = NULL;
	a->nintervals = 0;
	a->p->intervals_alloc = 0;
	mp_idxset_release(&a->p->ivset);
	for (size_t i = 0; i < n; i++) {
		map(ctx, &old[i]);
		mp_analysis_add_interval(a, old[i].slot, old[i].alloc, old[i].free, old[i].c.bytes,
					 old[i].c.count);
	}
	free(old);
}

/* The current bucket's pending frees all get the free half fh. */
void mp_analysis_flush_pending(struct mp_analysis *a, uint32_t fh)
{
	struct mp_analysis_private *p = a->p;
	if (!p->npend)
		return;
	for (size_t i = 0; i < p->npend; i++)
		mp_analysis_add_interval(a, p->pend[i].slot, p->pend[i].alloc, fh,
					 p->pend[i].c.bytes, p->pend[i].c.count);
	p->npend = 0;
	mp_idxset_release(&p->pendset);
}

/*
 * The half of an event (2b at or before bucket b's high-water mark, 2b + 1
 * after), or MP_NONE for an event of the current bucket after its
 * high-water mark so far, whose half is not known yet.
 */
uint32_t mp_analysis_half_of(const struct mp_analysis *a, uint64_t event)
{
	const struct mp_analysis_private *p = a->p;
	size_t lo = 0, hi = a->nsamples;
	if (event > p->cur_start)
		return event <= p->cur_hwm ? 2 * (uint32_t)a->nsamples : MP_NONE;
	/* The last completed bucket that started before the event. */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (p->ev_start[mid] < event)
			lo = mid + 1;
		else
			hi = mid;
	}
	lo = lo ? lo - 1 : 0;
	return 2 * (uint32_t)lo + (event > p->ev_hwm[lo]);
}

/* ---- allocations and frees ---------------------------------------------- */

/* What an allocation leaves behind when it is freed (in whole or, for mappings, in part). */
struct release {
	uint32_t slot, thread;
	uint64_t event, serial, size;   /* size: as estimated (block_est()) */
	uint64_t count;                 /* blocks it stands for */
};

/*
 * An allocation is gone: count it temporary when the thread that made it
 * frees it within the threshold. Implicit releases (an address reused
 * without a free) are not.
 */
static inline __attribute__((always_inline)) void allocation_gone(struct mp_analysis *a,
								   const struct release *r,
								   uint32_t freer, bool explicit)
{
	const struct mp_thread *t = &a->threads[r->thread];
	if (explicit && freer == r->thread &&
	    t->n_allocs - r->serial - r->count <= a->opts.temporary_threshold) {
		a->slots[r->slot].temporary.bytes += r->size;
		a->slots[r->slot].temporary.count += r->count;
		a->totals.temporary_bytes += r->size;
		a->totals.temporary_count += r->count;
	}
}

/*
 * Take bytes (and count blocks: 1, or an estimate, or 0 for a piece of a
 * mapping that is not its last) of an allocation made at event `event` off
 * the heap: all of a block, or a piece of a mapping.
 */
static inline __attribute__((always_inline)) void heap_release(struct mp_analysis *a, uint32_t slot,
								uint32_t thread, uint64_t bytes,
								uint64_t count, uint64_t event)
{
	struct mp_analysis_private *p = a->p;
	if (a->opts.flags & MP_ANALYSIS_TEMPORAL) {
		/*
		 * Freed now, so after the current bucket's high-water mark so far:
		 * pending until the bucket ends or the heap rises higher. Allocated
		 * in this bucket after that mark too, the bytes have both halves
		 * equal whatever comes: live at no mark.
		 */
		uint32_t ah = mp_analysis_half_of(a, event);
		if (ah != MP_NONE)
			iv_add(&p->pend, &p->npend, &p->pend_alloc, &p->pendset, slot, ah, MP_NONE,
			       bytes, count);
	}
	slot_change(a, slot, false, bytes, count);
	p->heap -= bytes;
	a->threads[thread].live.bytes -= bytes;
	p->live_count -= count;
	a->threads[thread].live.count -= count;
}

struct unmap_ctx {
	struct mp_analysis *a;
	uint32_t freer;
	bool explicit;
};

static void on_unmap_piece(void *ctx, uint64_t value, uint64_t bytes, int pieces)
{
	struct unmap_ctx *u = ctx;
	struct mp_analysis *a = u->a;
	struct origin *o = &a->p->origins[value];
	uint64_t est, count;
	block_est(a, o->size, mp_estimate_key(a, o->thread, o->serial), &est, &count);
	o->pieces += (uint32_t)pieces;
	if (__builtin_expect(a->header.sampling_interval != 0, 0) && o->size)
		a->p->heap_var -= mp_estimate_var(a, o->size) * (double)bytes / (double)o->size;
	heap_release(a, o->slot, o->thread, mp_estimate_piece(a, o, bytes), o->pieces == 0 ? count : 0,
		     o->event);
	if (!o->pieces) {
		struct release r = { o->slot, o->thread, o->event, o->serial, est, count };
		allocation_gone(a, &r, u->freer, u->explicit);
		o->serial = a->p->free_origin;
		a->p->free_origin = (uint32_t)value;
	}
}

static uint64_t range_end(uint64_t addr, uint64_t size)
{
	return addr + size < addr ? UINT64_MAX : addr + size;
}

static void on_alloc(struct mp_analysis *a, const struct mp_record *rec)
{
	struct mp_analysis_private *p = a->p;
	uint32_t kind = rec->u.ev.kind, th, slot, stack;
	uint64_t addr = rec->u.ev.addr, size = rec->u.ev.size, serial, est, count;
	bool mapping = mp_kind_is_mapping(kind);
	struct mp_kind_totals *k;
	struct mp_thread *t;

	if (mapping && (a->opts.flags & MP_ANALYSIS_NO_MMAP)) {
		a->totals.n_ignored++;
		return;
	}
	th = thread_of(a, rec->thread);
	stack = rec->u.ev.stack <= a->ntraces ? (uint32_t)rec->u.ev.stack : 0;
	slot = get_slot(a, stack, (a->opts.flags & MP_ANALYSIS_SPLIT_THREADS) ? th : MP_THREAD_MERGED,
			kind);
	t = &a->threads[th];
	/* The block's number among its thread's: what names it for its estimate too. */
	serial = t->n_allocs;
	block_est(a, size, mp_estimate_key(a, th, serial), &est, &count);
	if (__builtin_expect(a->header.sampling_interval != 0, 0) && (!mapping || size)) {
		double v = mp_estimate_var(a, size);
		a->totals.var_allocated += v;
		p->heap_var += v;
	}
	if (!a->totals.n_allocs || size < a->totals.min_size)
		a->totals.min_size = size;
	a->totals.n_allocs += count;
	a->totals.bytes_allocated += est;
	a->totals.hist[hist_bucket(size)] += count;
	if (size > a->totals.max_size)
		a->totals.max_size = size;
	k = kind_totals(a, kind);
	k->n_allocs += count;
	k->bytes_allocated += est;
	t->n_allocs += count;
	t->bytes_allocated += est;
	a->slots[slot].allocated.bytes += est;
	a->slots[slot].allocated.count += count;

	if (mapping) {
		struct unmap_ctx u = { a, th, false };
		uint64_t end = range_end(addr, size);
		uint32_t o;
		if (!size)
			return; /* nothing mapped, nothing live */
		/* A mapping replaces whatever was mapped there (MAP_FIXED, mremap). */
		mp_rangemap_remove(&p->maps, addr, end, on_unmap_piece, &u);
		if (p->free_origin != MP_NONE) {
			o = p->free_origin;
			p->free_origin = (uint32_t)p->origins[o].serial;
		} else {
			ALLOC_GROW(p->origins, p->norigins + 1, p->origins_alloc);
			o = (uint32_t)p->norigins++;
		}
		p->origins[o] = (struct origin){ size, serial, a->n_events, 0, slot, th, 1 };
		mp_rangemap_insert(&p->maps, addr, end, o);
	} else {
		/* A number is never allocated twice: only an address can be live already. */
		struct mp_block *b = rec->u.ev.serial ? NULL : mp_blocks_find(&p->blocks, addr);
		if (b) {
			/* A second allocation at a live address: the free was not seen. */
			struct release r = { b->slot1 - 1, b->thread, b->event, b->serial, 0, 0 };
			block_est(a, b->size, mp_estimate_key(a, b->thread, b->serial), &r.size, &r.count);
			if (__builtin_expect(a->header.sampling_interval != 0, 0))
				p->heap_var -= mp_estimate_var(a, b->size);
			heap_release(a, r.slot, r.thread, r.size, r.count, r.event);
			mp_blocks_delete(&p->blocks, b);
			allocation_gone(a, &r, th, false);
		}
		b = mp_blocks_insert(&p->blocks, addr);
		b->size = size;
		b->serial = serial;
		b->slot1 = slot + 1;
		b->thread = th;
		b->event = a->n_events;
	}
	slot_change(a, slot, true, est, count);
	p->heap += est;
	p->live_count += count;
	t = &a->threads[th];
	t->live.bytes += est;
	t->live.count += count;
	if (p->heap > a->totals.peak_bytes) {
		/* A new peak: every slot's current value is its value at the peak. */
		p->epoch++;
		a->totals.peak_bytes = p->heap;
		a->totals.peak_count = p->live_count;
		a->totals.peak_time_us = p->last_time_us;
		a->totals.peak_ticks = a->n_ticks;
		a->totals.peak_event = a->n_events;
		a->totals.var_peak = p->heap_var;
	}
	if (p->heap > p->tick_max)
		p->tick_max = p->heap;
	if (p->heap > p->cur_max) {
		/* A new high-water mark of the bucket: what was freed so far came before it. */
		p->cur_max = p->heap;
		p->cur_hwm = a->n_events;
		p->cur_hwm_time = p->last_time_us;
		if (a->opts.flags & MP_ANALYSIS_TEMPORAL)
			mp_analysis_flush_pending(a, 2 * (uint32_t)a->nsamples);
	}
}

static void on_free(struct mp_analysis *a, const struct mp_record *rec)
{
	struct mp_analysis_private *p = a->p;
	uint32_t kind = rec->u.ev.kind, th;
	uint64_t addr = rec->u.ev.addr, count = 1;

	if (mp_kind_is_mapping(kind) && (a->opts.flags & MP_ANALYSIS_NO_MMAP)) {
		a->totals.n_ignored++;
		return;
	}
	if (!rec->u.ev.ranged && !addr) {
		a->totals.n_null_frees++;
		return;
	}
	th = thread_of(a, rec->thread);
	if (rec->u.ev.ranged) {
		struct unmap_ctx u = { a, th, true };
		if (!mp_rangemap_remove(&p->maps, addr, range_end(addr, rec->u.ev.size),
					on_unmap_piece, &u)) {
			a->totals.n_unknown_frees++;
			return;
		}
	} else {
		struct mp_block *b = mp_blocks_find(&p->blocks, addr);
		struct release r;
		if (!b) {
			a->totals.n_unknown_frees++;
			return;
		}
		r = (struct release){ b->slot1 - 1, b->thread, b->event, b->serial, 0, 0 };
		block_est(a, b->size, mp_estimate_key(a, b->thread, b->serial), &r.size, &r.count);
		if (__builtin_expect(a->header.sampling_interval != 0, 0))
			p->heap_var -= mp_estimate_var(a, b->size);
		mp_blocks_delete(&p->blocks, b);
		heap_release(a, r.slot, r.thread, r.size, r.count, r.event);
		allocation_gone(a, &r, th, true);
		count = r.count;
	}
	a->totals.n_frees += count;
	kind_totals(a, kind)->n_frees += count;
	a->threads[th].n_frees += count;
}

/* ---- the pass ----------------------------------------------------------- */

static void seen_time(struct mp_analysis *a, const struct mp_marker *m)
{
	if ((m->has & MP_HAS_TIME) && m->time_us > a->duration_us)
		a->duration_us = m->time_us;
}

void mp_analysis_record(struct mp_analysis *a, const struct mp_record *rec)
{
	if (a->finished)
		return;
	a->n_records++;
	switch (rec->type) {
	case MP_REC_ALLOC:
		a->n_events++;
		a->p->events_since_tick = true;
		on_alloc(a, rec);
		break;
	case MP_REC_FREE:
		a->n_events++;
		a->p->events_since_tick = true;
		on_free(a, rec);
		break;
	case MP_REC_TRACE:
		mp_frames_on_trace(a, rec);
		break;
	case MP_REC_TICK:
		mp_series_on_tick(a, rec);
		break;
	case MP_REC_THREAD:
		on_thread(a, rec);
		break;
	case MP_REC_MODULE:
		mp_frames_on_module(a, rec);
		break;
	case MP_REC_MODULE_UNLOAD:
		mp_frames_on_module_unload(a, rec->u.unload.id);
		break;
	case MP_REC_STRING:
		mp_frames_on_string(a, rec);
		break;
	case MP_REC_SYMBOL:
		mp_frames_on_symbol(a, rec);
		break;
	case MP_REC_HEADER:
		mp_analysis_header(a, rec->u.header);
		break;
	case MP_REC_TRAILER:
		a->trailer = *rec->u.trailer;
		break;
	case MP_REC_ATTACH:
		a->attached = true;
		a->attach_time_us = rec->u.marker.time_us;
		seen_time(a, &rec->u.marker);
		break;
	case MP_REC_DETACH:
		a->detached = true;
		a->detach_time_us = rec->u.marker.time_us;
		seen_time(a, &rec->u.marker);
		break;
	case MP_REC_LOST:
		a->totals.n_lost += rec->u.marker.count;
		seen_time(a, &rec->u.marker);
		break;
	case MP_REC_UNWIND:
		a->totals.n_libunwind += rec->u.marker.count;
		seen_time(a, &rec->u.marker);
		break;
	case MP_REC_EXIT:
		if (rec->u.marker.has & MP_HAS_STATUS) {
			a->has_exit_marker = true;
			a->exit_marker_status = rec->u.marker.status;
		}
		seen_time(a, &rec->u.marker);
		break;
	case MP_REC_FORK:
		a->n_forks++;
		if (rec->u.marker.has & MP_HAS_CHILD_PID) {
			ALLOC_GROW(a->forks, a->nforks + 1, a->forks_alloc);
			a->forks[a->nforks++] = (struct mp_fork){
				0, rec->u.marker.child_pid, (a->header.flags & MP_HF_FOLLOW_FORK) != 0 };
		}
		seen_time(a, &rec->u.marker);
		break;
	case MP_REC_MESSAGE: case MP_REC_SNAPSHOT:
		seen_time(a, &rec->u.marker);
		break;
	case MP_REC_UNKNOWN:
		if (a->aggregated)
			mp_aggregate_on_record(a, rec);
		break;
	case MP_REC_SWITCH:
		break;
	}
}

/* For family.c: a block of a process that ended, taken off the heap but leaked. */
void mp_analysis_drop(struct mp_analysis *a, uint32_t slot, uint32_t thread, uint64_t bytes,
		      uint64_t count, uint64_t event)
{
	struct mp_thread *t = &a->threads[thread];
	heap_release(a, slot, thread, bytes, count, event);
	/* What a thread left live at its end is its leak. */
	t->live.bytes += bytes;
	t->live.count += count;
	a->p->exited[slot].bytes += bytes;
	a->p->exited[slot].count += count;
}

/* For aggregate.c: the pass's own lookups. */
uint32_t mp_analysis_thread_of(struct mp_analysis *a, uint32_t index)
{
	return thread_of(a, index);
}

uint32_t mp_analysis_get_slot(struct mp_analysis *a, uint32_t stack, uint32_t thread, uint32_t kind)
{
	return get_slot(a, stack, thread, kind);
}

struct mp_kind_totals *mp_analysis_kind_totals(struct mp_analysis *a, uint32_t kind)
{
	return kind_totals(a, kind);
}

/*
 * A thread reads the file and opens its blocks ahead (mp_reader_read_ahead()),
 * and this one decodes and analyses: records are decoded into a window of
 * WINDOW events that stays in the cache, and within it the table entries an
 * event will touch (its block, its stack's slot) are prefetched
 * PREFETCH_AHEAD events ahead, because on large captures those lookups miss
 * the cache (on the std::map benchmark, frees of blocks among 190,000 live
 * ones: 32 ahead took 4% off the CPU time of 8, which came too late). Records
 * other than events point into the decoder's buffers, which the next decode
 * reuses: a window ends with one of them (mp_reader_read()), analysed
 * before the next decode.
 *
 * prefetch_event must be inlined: as a function of its own, GCC finds it has
 * no side effects (a prefetch is none) and drops every call to it.
 */
#define PREFETCH_AHEAD 32
#define WINDOW 64

static inline __attribute__((always_inline)) void prefetch_event(const struct mp_analysis *a,
								  const struct mp_record *rec)
{
	const struct mp_analysis_private *p = a->p;
	if (rec->type != MP_REC_ALLOC && rec->type != MP_REC_FREE)
		return;
	mp_blocks_prefetch(&p->blocks, rec->u.ev.addr);
	if (rec->type == MP_REC_ALLOC && rec->u.ev.stack < p->stack_slot_alloc) {
		uint32_t s = p->stack_slot[rec->u.ev.stack];
		if (s)
			__builtin_prefetch(&a->slots[s - 1]);
	}
}

static void run_window(struct mp_analysis *a, const struct mp_record *recs, size_t n)
{
	for (size_t i = 0; i < n && i < PREFETCH_AHEAD; i++)
		prefetch_event(a, &recs[i]);
	for (size_t i = 0; i < n; i++) {
		if (i + PREFETCH_AHEAD < n)
			prefetch_event(a, &recs[i + PREFETCH_AHEAD]);
		mp_analysis_record(a, &recs[i]);
	}
}

int mp_analysis_read(struct mp_analysis *a, struct mp_reader *r, struct strbuf *warn)
{
	const struct mp_analysis_progress *prog = a->opts.progress;
	struct mp_record win[WINDOW];
	size_t n;
	uint64_t next_update = 0;
	int ret = 0;

	mp_analysis_header(a, mp_reader_header(r));
	mp_reader_read_ahead(r); /* without a thread, the same records come all the same */
	while ((n = mp_reader_read(r, win, WINDOW))) {
		run_window(a, win, n);
		if (prog && prog->update && r->n_records >= next_update) {
			prog->update(prog->ctx, mp_reader_offset(r), r->n_records);
			next_update = r->n_records + 65536;
		}
	}
	if (prog && prog->update)
		prog->update(prog->ctx, mp_reader_offset(r), r->n_records);
	if (prog && prog->done)
		prog->done(prog->ctx);
	if (r->status != MP_READ_OK) {
		if (warn) {
			strbuf_reset(warn);
			strbuf_addstr(warn, r->err.buf);
		}
		ret = 1;
	}
	mp_analysis_finish(a);
	return ret;
}

int mp_analysis_read_file(struct mp_analysis *a, const char *path, struct strbuf *err)
{
	struct mp_reader r;
	int ret;
	if (mp_reader_open(&r, path) < 0) {
		if (err) {
			strbuf_reset(err);
			strbuf_addstr(err, r.err.buf);
		}
		mp_reader_release(&r);
		return -1;
	}
	if (a->opts.progress && a->opts.progress->start)
		a->opts.progress->start(a->opts.progress->ctx, r.file_size);
	ret = mp_analysis_read(a, &r, err);
	mp_reader_release(&r);
	return ret;
}
