/*
 * Recording events: the stack of an allocation found (walked, hashed, looked
 * up or added to the trace tree) and the event encoded into the stream.
 */
#include <config.h>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include <errno.h>

#include "lib/tracker/config.h"
#include "lib/tracker/keys.h"
#include "lib/tracker/modules.h"
#include "lib/tracker/python.h"
#include "lib/tracker/record.h"
#include "lib/tracker/stacks.h"
#include "lib/tracker/stream.h"
#include "lib/tracker/threads.h"

/*
 * Start an event in ts's ring: room (waiting for the collector if the ring
 * is full), the busy flag and the key. Returns where the event's bytes go,
 * with the record's start in *start, or NULL when it must not be written:
 * also, with *stale set, when gens (if not NULL: the nodes' and the
 * stream's generations the event's node was found in) are not those of now.
 */
static inline __attribute__((always_inline)) uint8_t *event_begin_at(struct mp_tstate *ts,
								      uint8_t **start, const uint32_t *gens,
								      int *stale)
{
	struct mp_wring *w = &ts->ring;
	uint64_t key;
	uint8_t *p;
	if (unlikely(mp_thread_undeclared(ts, mp_st.gen)) && mp_thread_declare(ts))
		return NULL;
	if (unlikely(mp_wring_room(w, MP_RING_EVENT_ROOM)) && mp_stream_wait_room(w, MP_RING_EVENT_ROOM))
		return NULL;
	p = mp_wring_at(w, MP_RING_EVENT_ROOM);
	key = mp_wring_begin(w, mp_st.clock);
	if (unlikely(!key))
		key = mp_keys_slow(w);
	/* After the busy flag: a detach that saw it clear has made tracking stop here too. */
	if (unlikely(!*mp_live)) {
		mp_wring_abandon(w);
		return NULL;
	}
	/* (Before the key is framed: the ring's delta base stays the last record's.) */
	if (gens && unlikely(gens[0] != __atomic_load_n(&mp_nodes_gen, __ATOMIC_ACQUIRE) ||
			     gens[1] != __atomic_load_n(&mp_st.gen, __ATOMIC_ACQUIRE))) {
		mp_wring_abandon(w);
		*stale = 1;
		return NULL;
	}
	*start = p;
	return mp_wring_frame(w, p, key);
}

/* The same for an event that names no node. */
static inline __attribute__((always_inline)) uint8_t *event_begin(struct mp_tstate *ts,
								   uint8_t **start)
{
	return event_begin_at(ts, start, NULL, NULL);
}

void mp_record_nested_lost(struct mp_wring *w)
{
	/* (A handler running now adds to the counter only: never to the ring.) */
	unsigned long n = __atomic_exchange_n(&mp_nested_lost, 0, __ATOMIC_RELAXED);
	if (n && w)
		mp_stream_marker(w, MP_TAG_LOST, MP_M_COUNT, n, 0);
}

static inline __attribute__((always_inline)) void event_end(struct mp_tstate *ts, uint8_t *start, uint8_t *end)
{
	mp_wring_frame_end(start, end);
	mp_wring_publish(&ts->ring, end);
	if (unlikely(mp_nested_lost))
		mp_record_nested_lost(&ts->ring);
	if (unlikely(ts->ring.head >= ts->ring.half_mark))
		mp_stream_half_full(&ts->ring);
	if (unlikely(mp_st.final))
		mp_st.self_reader(1);
}

/*
 * A stack's hash is the sum of one term per frame, each mixing the return
 * address with the frame's position from the outermost: position makes the
 * order count, and the terms being independent lets the processor compute a
 * deep stack's in parallel instead of as one chain of multiplications. Two
 * lanes with different constants give 96 bits of fingerprint (smap_entry).
 */
#define POS_MUL 0xd6e8feb86659fd93ull

/* The term of ip at position pos; pos_mul is pos * POS_MUL, kept as a running sum by the caller. */
static inline uint64_t term(uint64_t ip, uint64_t pos_mul, uint64_t k)
{
	uint64_t x = (ip ^ pos_mul) * k;
	return x ^ (x >> 29);
}

/*
 * The fast path, first half (no lock): the walker's frames, innermost first,
 * of which the outermost `stable` still carry what was computed last time;
 * the newer ones get the hash of the stack up to them and their depth (all
 * of them, so that the next walk may reuse any). Returns -1 when the stack
 * is deeper than --max-depth (cut_stack_hash()), else 0 with the whole
 * stack's hash in h.
 */
static int fast_stack_hash(struct mp_tstate *ts, struct mp_uframe *f, int n, int stable, uint64_t h[2])
{
	uint64_t h0 = 0, h1 = 0, pos_mul;
	uint32_t depth = 0;
	if (unlikely(ts->walk_gen != mp_nodes_gen)) {
		stable = 0;
		ts->walk_gen = mp_nodes_gen;
	}
	if (stable) {
		h0 = f[n - stable].hash[0];
		h1 = f[n - stable].hash[1];
		depth = f[n - stable].depth;
	}
	pos_mul = depth * POS_MUL;
	for (int k = n - stable - 1; k >= 0; k--) {
		uint64_t ip = f[k].ra;
		/* The tracker's own frames are invisible: the caller's hash carries on. */
		if (likely(ip < mp_self_lo || ip >= mp_self_hi)) {
			depth++;
			pos_mul += POS_MUL;
			h0 += term(ip, pos_mul, 0x9e3779b97f4a7c15ull);
			h1 += term(ip, pos_mul, 0xbf58476d1ce4e5b9ull);
		}
		f[k].hash[0] = h0;
		f[k].hash[1] = h1;
		f[k].depth = depth;
		f[k].node = MP_UFRAME_NO_NODE;
	}
	if (unlikely(depth > mp_cfg.max_depth))
		return -1;
	/* 0 marks an empty slot of the stack map. */
	h[0] = (h0 ^ depth) ? (h0 ^ depth) : 1;
	h[1] = h1;
	return 0;
}

/* Marks a cut stack's hash: it is not that of the whole stack of the same frames. */
#define CUT_SALT 0x8cb92ba72f3d8dd7ull

/*
 * The hash of a stack that is recorded cut (deeper than --max-depth, or
 * walked only so far): its innermost --max-depth frames under a "truncated"
 * root, the stack mp_stack_from_ips() makes of it. From the frames' hashes
 * (fast_stack_hash()): the whole stack's less that of the frames outside
 * the cut, in two subtractions however deep the stack, where building it
 * would take a node per frame on every event (a shell's recursion). Those
 * frames' places from the outermost count in the sum: the same frames at
 * another depth make another key, of the same node. 0 with the hash in h;
 * -1 when the slow way must decide (more of the tracker's frames than
 * stack_cap() allows for).
 */
static int cut_stack_hash(const struct mp_uframe *f, int n, uint64_t h[2])
{
	uint32_t total = f[0].depth, max = mp_cfg.max_depth;
	uint64_t h0 = f[0].hash[0], h1 = f[0].hash[1];
	if (total > max) {
		uint32_t out = total - max;
		/* f[k].depth >= total - k, and it falls by 0 or 1 a frame outwards, to 0 or 1. */
		int k = (int)max;
		while (k < n && f[k].depth > out)
			k++;
		if (k == n)
			return -1;
		h0 -= f[k].hash[0];
		h1 -= f[k].hash[1];
	} else if (n > (int)max + MP_OWN_FRAMES + 1) {
		return -1;
	}
	h0 ^= CUT_SALT ^ (total > max ? max : total);
	h[0] = h0 ? h0 : 1;
	h[1] = h1;
	return 0;
}

/* How many of the cached stack's frames the stack in ts->scratch (depth frames) starts with. */
static int cached_prefix(const struct mp_tstate *ts, int depth)
{
	int k = 0;
	if (likely(ts->cache_gen == mp_nodes_gen)) {
		int m = depth < ts->depth ? depth : ts->depth;
		while (k < m && ts->ips[k] == ts->scratch[k])
			k++;
	}
	return k;
}

/* Return addresses a stack may need before it is cut to --max-depth (the tracker's own first). */
static inline int stack_cap(void)
{
	return (int)mp_cfg.max_depth + MP_OWN_FRAMES + 1;
}

uint64_t mp_libunwind_walks;

/* The walker's n frames into ts->scratch, cut (mp_stack_from_ips()); returns the depth. */
static int walked_stack(struct mp_tstate *ts, const struct mp_uframe *f, int n, int truncated)
{
	int cap = stack_cap(), m = 0;
	for (int i = 0; i < n && m < cap; i++)
		ts->raw[m++] = (void *)f[i].ra;
	return mp_stack_from_ips(ts, m, truncated);
}

/* The caller's stack from libunwind into ts->scratch; returns its depth. */
static int libunwind_stack(struct mp_tstate *ts)
{
	int n;
	__atomic_add_fetch(&mp_libunwind_walks, 1, __ATOMIC_RELAXED);
	/* libunwind takes locks of its own and the loader's (base.h, mp_cs). */
	mp_cs_enter();
	n = unw_backtrace(ts->raw, stack_cap());
	mp_cs_leave();
	return mp_stack_from_ips(ts, n, 0);
}

/*
 * A stack with Python frames (ts->py). From our walker, the Python frames
 * take their places among its frames and the whole stack is hashed: the
 * stack map knows it as any other, and on a miss mp_record_alloc_at() builds
 * it. From libunwind, or deeper than --max-depth, it is built here. Returns
 * 0 when no Python frame found its place: the stack is native only.
 */
static int py_site(struct mp_tstate *ts, struct mp_site *site, int stable, int truncated)
{
	struct mp_pybuf *b = ts->py;
	int cap = stack_cap(), m, depth;
	const size_t stride = sizeof(struct mp_uframe) / sizeof(uint64_t);
	site->truncated = (int8_t)truncated;
	if (site->n >= 0) {
		if (!mp_py_match(b, &site->frames[0].cfa, stride, site->n))
			return 0;
		if (likely(!truncated) &&
		    likely(fast_stack_hash(ts, site->frames, site->n, stable, site->h) == 0)) {
			mp_py_hash(b, site->n, site->h);
			site->hashed = 1;
			mp_smap_prefetch(site->h);
			return 1;
		}
		m = mp_py_splice(b, &site->frames[0].ra, stride, site->n, ts->raw, cap);
		mp_unwind_forget(ts->uw);
	} else {
		int n;
		__atomic_add_fetch(&mp_libunwind_walks, 1, __ATOMIC_RELAXED);
		mp_cs_enter();
		n = mp_py_unwind(b, cap);
		mp_cs_leave();
		if (!mp_py_match(b, b->sp, 1, n)) {
			for (m = 0; m < n; m++)
				ts->raw[m] = (void *)(uintptr_t)b->nip[m];
		} else {
			m = mp_py_splice(b, b->nip, 1, n, ts->raw, cap);
		}
		truncated = 0;
	}
	depth = mp_stack_from_ips(ts, m, truncated);
	site->n = -1;
	site->depth = depth;
	site->k = cached_prefix(ts, depth);
	return 1;
}

int mp_hook_abandoned(uintptr_t sp)
{
	struct mp_tstate *ts = mp_tls_ts;
	uint64_t lo, hi;
	if (mp_in_hook || !mp_hook_sp || !ts || !ts->uw || mp_unwind_stack(ts->uw, &lo, &hi) ||
	    sp < lo || sp >= hi || mp_hook_sp < lo || mp_hook_sp >= hi || sp < mp_hook_sp)
		return 0; /* nested, or not known to be on this thread's stack */
	/* Its record in flight is dropped; a THREAD record starts both sides' deltas afresh. */
	mp_wring_recover(&ts->ring);
	ts->name_dirty = 1;
	/* The cached stack and the walker's frames may have been half updated. */
	ts->cache_gen = ts->walk_gen = 0;
	mp_unwinder_recover(ts->uw);
	/* Last, in one store: left again before it, it is found again. */
	mp_hook_sp = 0;
	/* Signals deferred that a handler leaving by siglongjmp left behind: theirs now. */
	if (!mp_cs && mp_sig_deferred)
		mp_sig_replay();
	return 1;
}

int mp_record_known(struct mp_site *site)
{
	site->pending = 0;
	if (!mp_unwind_check(site->ts->uw, &site->node))
		return 0;
	site->n = MP_UNWIND_KNOWN;
	return 1;
}

void mp_record_site(struct mp_site *site, int mode)
{
	int saved = errno;
	struct mp_tstate *ts = mp_thread_get();
	int stable = 0, truncated = 0;
	uint64_t seed;

	site->ts = ts;
	site->pending = 0;
	site->n = -1;
	site->depth = site->k = 0;
	site->h[0] = site->h[1] = 0;
	site->frames = NULL;
	site->py = site->hashed = site->cut = 0;
	site->node = 0;
	site->gen = __atomic_load_n(&mp_nodes_gen, __ATOMIC_ACQUIRE);
	seed = mp_st.gen;
	if (unlikely(!ts))
		goto out;
	if (unlikely(mp_py_on)) {
		int np = mp_py_walk(ts);
		if (unlikely(np < 0)) {
			site->ts = NULL; /* the interpreter is finalizing: nothing is recorded */
			goto out;
		}
		site->py = np > 0;
		/* The native words and these Python frames, where they run, make the stack. */
		if (site->py)
			seed ^= mp_py_seed(ts->py);
	}
	if (likely(ts->uw != NULL)) {
		/*
		 * No deeper than a recorded stack can be (mp_stack_from_ips()): a
		 * recursion's frames past it cost every walk. (Python frames
		 * find their places among all the native ones.)
		 */
		mp_unwind_set_limit(ts->uw, unlikely(mp_py_on) ? 0 : stack_cap());
		/* A known stack's node is all it takes. */
		/* (Python frames are found by a walk of their own, not to be made twice.) */
		site->n = mp_unwind(ts->uw, seed, &site->frames, &stable, &truncated, &site->node,
				    site->py && mode == MP_SITE_DEFER ? MP_UNWIND_NOW : mode);
		if (likely(site->n == MP_UNWIND_KNOWN))
			goto out;
		if (likely(site->n == MP_UNWIND_PENDING)) {
			site->pending = 1;
			goto out;
		}
	}
	if (unlikely(site->py)) {
		if (py_site(ts, site, stable, truncated))
			goto out;
		site->py = 0;
	}
	if (likely(site->n >= 0) && likely(fast_stack_hash(ts, site->frames, site->n, stable, site->h) == 0 &&
					   !truncated)) {
		/* The allocation runs while the stack map's slot comes into the cache. */
		mp_smap_prefetch(site->h);
	} else if (site->n >= 0 && cut_stack_hash(site->frames, site->n, site->h) == 0) {
		/* Cut: known by its hash too, and built the slow way the first time. */
		site->cut = 1;
		site->truncated = (int8_t)truncated;
		mp_smap_prefetch(site->h);
	} else {
		/* libunwind (or a cut stack with more of the tracker's frames than stack_cap() allows). */
		int depth;
		if (site->n >= 0) {
			depth = walked_stack(ts, site->frames, site->n, truncated);
		} else {
			depth = libunwind_stack(ts);
		}
		if (ts->uw)
			mp_unwind_forget(ts->uw);
		site->n = -1;
		site->depth = depth;
		site->k = cached_prefix(ts, depth);
	}
out:
	errno = saved;
}

void mp_record_alloc_at(struct mp_site *site, unsigned kind, void *addr, size_t size)
{
	int saved = errno;
	struct mp_tstate *ts = site->ts;
	uint8_t *p, *start;
	uint32_t node, gen, sgen;

	if (unlikely(!ts))
		goto out;
	if (unlikely(mp_modules_dirty()))
		mp_modules_refresh();
	/* The thread's ring first: new stacks write their TRACE records into it. */
	sgen = __atomic_load_n(&mp_st.gen, __ATOMIC_ACQUIRE);
	if (unlikely(mp_thread_undeclared(ts, sgen)) && mp_thread_declare(ts))
		goto out;
	/* The stream and the nodes' generation the node is found in (see below). */
	gen = __atomic_load_n(&mp_nodes_gen, __ATOMIC_ACQUIRE);
	if (likely(site->node)) {
		if (likely(site->gen == gen)) {
			node = site->node; /* known to the walker, in this stream */
		} else {
			/*
			 * A new stream began while the allocator ran, or code was
			 * unloaded: nodes of now (native frames only).
			 */
			int depth = libunwind_stack(ts);
			node = mp_slow_stack_node(ts, depth, cached_prefix(ts, depth));
		}
	} else if (unlikely(site->py) && site->hashed) {
		/* With Python frames: a known stack, or built whole and then known. */
		node = mp_smap_get(site->h);
		if (!node) {
			int cap = stack_cap(), depth;
			int m = mp_py_splice(ts->py, &site->frames[0].ra,
					     sizeof(struct mp_uframe) / sizeof(uint64_t), site->n, ts->raw, cap);
			depth = mp_stack_from_ips(ts, m, site->truncated);
			node = mp_slow_stack_node(ts, depth, cached_prefix(ts, depth));
			if (node)
				mp_smap_learn(site->h, node);
		}
		mp_unwind_learn(ts->uw, node);
	} else if (unlikely(site->cut)) {
		/*
		 * A cut stack: known by its hash, or built from its frames and then
		 * known. (Its frames' nodes are not read: after unloaded code, the
		 * next walk's fast_stack_hash() computes them all again.)
		 */
		node = mp_smap_get(site->h);
		if (!node) {
			int depth = walked_stack(ts, site->frames, site->n, site->truncated);
			node = mp_slow_stack_node(ts, depth, cached_prefix(ts, depth));
			if (node)
				mp_smap_learn(site->h, node);
		}
	} else if (likely(site->n >= 0)) {
		/* (Nodes the walker's frames kept from before unloaded code are gone.) */
		if (unlikely(site->gen != gen))
			for (int k = 0; k < site->n; k++)
				site->frames[k].node = MP_UFRAME_NO_NODE;
		/* A known stack (no lock), or new frames for the tree (under its lock). */
		node = mp_smap_get(site->h);
		if (unlikely(!node))
			node = mp_fast_stack_node(ts, site->frames, site->n, site->h);
		mp_unwind_learn(ts->uw, node);
	} else {
		node = mp_slow_stack_node(ts, site->depth, site->k);
	}
	for (int tries = 0;; tries++) {
		uint32_t gens[2] = { gen, sgen };
		int stale = 0;
		if (unlikely(!node))
			goto out;
		/*
		 * Code outside every known module (a library just loaded): its MODULE
		 * record now, while it is there; a dlclose before the next event would
		 * leave its frames with no module.
		 */
		if (unlikely(mp_modules_dirty()))
			mp_modules_refresh();
		/*
		 * The stream we write into is the one whose nodes these are, and
		 * the one their TRACE records went to: a stop and a start
		 * (memprof_start() in a loop) may both have come since the node was
		 * found, this thread not yet in its event; the new stream numbers
		 * its nodes afresh, and the thread's ring was the old one's. Then
		 * the node is found again, in the new stream (event_begin_at() put
		 * the thread there).
		 */
		p = event_begin_at(ts, &start, gens, &stale);
		if (likely(p != NULL))
			break;
		if (!stale || tries == 3)
			goto out; /* (or streams that come and go faster than a stack is walked) */
		sgen = __atomic_load_n(&mp_st.gen, __ATOMIC_ACQUIRE);
		gen = __atomic_load_n(&mp_nodes_gen, __ATOMIC_ACQUIRE);
		{
			int depth = libunwind_stack(ts);
			node = mp_slow_stack_node(ts, depth, cached_prefix(ts, depth));
		}
	}
	event_end(ts, start, mp_enc_alloc(p, &ts->enc, kind, (uint64_t)addr, size, node));
out:
	errno = saved;
}

void mp_record_alloc(unsigned kind, void *addr, size_t size)
{
	struct mp_site site;
	mp_record_site(&site, MP_SITE_NOW);
	mp_record_alloc_at(&site, kind, addr, size);
}

static void record_free(unsigned kind, void *addr, int ranged, size_t size)
{
	int saved = errno;
	struct mp_tstate *ts;
	uint8_t *p, *start;
	if (unlikely(mp_py_quiet))
		return; /* the interpreter is finalizing: nothing is recorded */
	ts = mp_thread_get();
	if (unlikely(!ts))
		goto out;
	p = event_begin(ts, &start);
	if (likely(p != NULL))
		event_end(ts, start, mp_enc_free(p, &ts->enc, kind, (uint64_t)addr, ranged, size));
out:
	errno = saved;
}

void mp_record_free(unsigned kind, void *addr)
{
	record_free(kind, addr, 0, 0);
}

void mp_record_free_range(unsigned kind, void *addr, size_t size)
{
	record_free(kind, addr, 1, size);
}
