/* The rings of a tracked process merged in key order into the tracker's stream format. */
#include <config.h>
#include "lib/transport/merge.h"

#include <limits.h>
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "lib/format/format.h"

bool mp_merge_can_fence(void)
{
	long cmds = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
	return cmds > 0 && (cmds & MEMBARRIER_CMD_GLOBAL_EXPEDITED);
}

int mp_merge_check(const void *base, uint64_t size, const char **why)
{
	const struct mp_shm_header *h = base;
	uint64_t ctl, data, total;
	if (size < 4096) {
		*why = "it is smaller than a page";
		return -1;
	}
	if (h->magic != MP_SHM_MAGIC) {
		*why = "it is not a memprof ring mapping";
		return -1;
	}
	if (h->version != MP_SHM_VERSION) {
		*why = "its version is not this collector's (a different memprof loaded the tracker)";
		return -1;
	}
	if ((h->clock != MP_CLOCK_TSC && h->clock != MP_CLOCK_COUNTER) ||
	    h->ring_size < 4096 || h->ring_size > (1u << 26) || (h->ring_size & (h->ring_size - 1)) ||
	    h->max_rings == 0 || h->max_rings > (1u << 20)) {
		*why = "its header is invalid";
		return -1;
	}
	mp_shm_layout(h->ring_size, h->max_rings, &ctl, &data, &total);
	if (h->ctl_offset != ctl || h->data_offset != data || h->size != total) {
		*why = "its layout is invalid";
		return -1;
	}
	return 0;
}

void mp_merge_init(struct mp_merge *m, void *base, uint64_t mapped, struct mp_rring *r,
		   uint32_t *heap)
{
	memset(m, 0, sizeof(*m));
	m->base = base;
	m->h = base;
	m->mapped = mapped;
	m->r = r;
	m->heap = heap;
	m->cur = UINT32_MAX;
}

uint32_t mp_merge_rings(const struct mp_merge *m)
{
	uint32_t n = __atomic_load_n(&m->h->n_rings, __ATOMIC_ACQUIRE);
	return n < m->h->max_rings ? n : m->h->max_rings;
}

/* A varint of at most 10 bytes at p, before end; 0 when it does not fit or is too long. */
static unsigned get_varint(const uint8_t *p, const uint8_t *end, uint64_t *v)
{
	uint64_t x = 0;
	for (unsigned i = 0, shift = 0; i < 10 && p + i < end; i++, shift += 7) {
		x |= (uint64_t)(p[i] & 0x7f) << shift;
		if (!(p[i] & 0x80)) {
			*v = x;
			return i + 1;
		}
	}
	return 0;
}

/* What the record at a position holds. */
struct peeked {
	uint64_t key, size;     /* its key, and its whole size in the ring */
	uint32_t off, len;      /* where its bytes start in the ring, and how many */
};

/* peek_at() past a lap's end or for a length or key of more than one byte (out of line: rare). */
static __attribute__((noinline)) int peek_slow(const struct mp_merge *m, const uint8_t *data,
					       uint64_t *pos, uint64_t head, uint64_t base,
					       struct peeked *pk)
{
	uint64_t mask = m->h->ring_size - 1, len, delta, lap_end;
	const uint8_t *p, *end;
	unsigned a, b;
	if (*pos < head && data[*pos & mask] == 0)
		*pos = (*pos | mask) + 1;
	if (*pos >= head)
		return *pos == head ? 0 : -1;
	/* A record never wraps: it ends by the lap's end, and by head. */
	lap_end = (*pos | mask) + 1;
	p = data + (*pos & mask);
	end = p + ((lap_end < head ? lap_end : head) - *pos);
	a = get_varint(p, end, &len);
	if (!a || len == 0 || len > (uint64_t)(end - p - a))
		return -1;
	b = get_varint(p + a, p + a + len, &delta);
	if (!b || b == len)
		return -1;
	pk->key = base + delta;
	pk->off = (uint32_t)(*pos & mask) + a + b;
	pk->len = (uint32_t)(len - b);
	pk->size = a + len;
	return 1;
}

/*
 * The record at *pos (before head) whose key is base plus its delta: skips
 * a lap's end first (moving *pos). Returns 1 with *pk set, 0 when *pos reached
 * head, -1 when the ring is corrupt (the program may have written over it).
 * Inline for most records, whose length and key delta take a byte each.
 */
static inline __attribute__((always_inline)) int peek_at(const struct mp_merge *m, const uint8_t *data,
							 uint64_t *pos, uint64_t head, uint64_t base,
							 struct peeked *pk)
{
	uint64_t mask = m->h->ring_size - 1, at = *pos, avail;
	const uint8_t *p = data + (at & mask);
	if (__builtin_expect(at >= head, 0))
		return at == head ? 0 : -1;
	/* Up to the lap's end or head, whichever comes first (a record never wraps). */
	avail = mask + 1 - (at & mask);
	if (head - at < avail)
		avail = head - at;
	if (__builtin_expect(avail >= 3 && p[0] >= 2 && p[0] < 0x80 && p[1] < 0x80 && p[0] < avail, 1)) {
		pk->key = base + p[1];
		pk->off = (uint32_t)(at & mask) + 2;
		pk->len = (uint32_t)p[0] - 1;
		pk->size = 1 + (uint64_t)p[0];
		return 1;
	}
	return peek_slow(m, data, pos, head, base, pk);
}

/* Peek the ring's next record to merge into its next_* fields. */
static inline __attribute__((always_inline)) int peek(struct mp_merge *m, struct mp_rring *rr, const uint8_t *data)
{
	struct peeked pk;
	int r = peek_at(m, data, &rr->pos, rr->head, rr->pos_key, &pk);
	if (r > 0) {
		rr->next_key = pk.key;
		rr->next_size = pk.size;
		rr->next_off = pk.off;
		rr->next_len = pk.len;
	}
	return r;
}

static bool heap_less(const struct mp_merge *m, uint32_t a, uint32_t b)
{
	const struct mp_rring *x = &m->r[a], *y = &m->r[b];
	return x->next_key < y->next_key || (x->next_key == y->next_key && a < b);
}

static void heap_set(struct mp_merge *m, uint32_t i, uint32_t ring)
{
	m->heap[i] = ring;
	m->r[ring].heap_pos = i + 1;
}

static void sift_up(struct mp_merge *m, uint32_t i)
{
	uint32_t ring = m->heap[i];
	while (i > 0) {
		uint32_t parent = (i - 1) / 2;
		if (!heap_less(m, ring, m->heap[parent]))
			break;
		heap_set(m, i, m->heap[parent]);
		i = parent;
	}
	heap_set(m, i, ring);
}

static void sift_down(struct mp_merge *m, uint32_t i)
{
	uint32_t ring = m->heap[i];
	for (;;) {
		uint32_t c = 2 * i + 1;
		if (c >= m->nheap)
			break;
		if (c + 1 < m->nheap && heap_less(m, m->heap[c + 1], m->heap[c]))
			c++;
		if (!heap_less(m, m->heap[c], ring))
			break;
		heap_set(m, i, m->heap[c]);
		i = c;
	}
	heap_set(m, i, ring);
}

static void heap_pop(struct mp_merge *m)
{
	m->r[m->heap[0]].heap_pos = 0;
	if (--m->nheap) {
		m->heap[0] = m->heap[m->nheap];
		sift_down(m, 0);
	}
}

/* Hand consumed room back to the ring's writer, waking it if it waits. */
static void release(struct mp_merge *m, uint32_t i)
{
	struct mp_rring *rr = &m->r[i];
	struct mp_ring_ctl *c = mp_shm_ctl(m->base, m->h, i);
	if (rr->tail == rr->pos)
		return;
	rr->tail = rr->pos;
	__atomic_store_n(&c->tail, rr->tail, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&c->waiting, __ATOMIC_RELAXED)) {
		__atomic_store_n(&c->waiting, 0, __ATOMIC_RELAXED);
		/* Not a private futex: the writer is in another process. */
		syscall(SYS_futex, (uint32_t *)&c->tail, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
	}
}

/* Events belong to their thread: the stream's decoder needs a THREAD_SWITCH first. */
static bool is_event(uint8_t tag)
{
	return (tag >= MP_TAG_ALLOC && tag < MP_TAG_ALLOC_SEQ) || tag == MP_TAG_ALLOC_X ||
	       tag == MP_TAG_FREE_X || tag == MP_TAG_FREE_RANGE_X;
}

static int emit(struct mp_merge *m, uint32_t ring, const uint8_t *p, size_t n, mp_merge_out_fn out,
		void *ctx)
{
	if (is_event(p[0]) && ring != m->cur) {
		uint8_t sw[1 + 10], *q = sw;
		uint64_t v = ring;
		*q++ = MP_TAG_THREAD_SWITCH;
		while (v >= 0x80) {
			*q++ = (uint8_t)(v | 0x80);
			v >>= 7;
		}
		*q++ = (uint8_t)v;
		if (out(ctx, sw, (size_t)(q - sw)))
			return -1;
		m->cur = ring;
	}
	return out(ctx, p, n) ? -1 : 0;
}

/*
 * A busy ring's bound: its record in flight is newer than its last
 * published one, so read the keys up to head (remembering how far, for the
 * next round). 0 with the last key in *last, -1 when the ring is corrupt.
 */
static int scan_to_head(struct mp_merge *m, struct mp_rring *rr, const uint8_t *data, uint64_t *last)
{
	uint64_t pos = rr->pos, key = rr->pos_key;
	struct peeked pk;
	int r;
	if (rr->scan > pos) {
		pos = rr->scan;
		key = rr->scan_key;
	}
	while ((r = peek_at(m, data, &pos, rr->head, key, &pk)) > 0) {
		key = pk.key;
		pos += pk.size;
	}
	if (r < 0)
		return -1;
	rr->scan = pos;
	rr->scan_key = key;
	*last = key;
	return 0;
}

static void broken(struct mp_merge *m, struct mp_rring *rr)
{
	if (!rr->broken) {
		rr->broken = true;
		m->broken++;
	}
	if (rr->heap_pos) {
		uint32_t i = rr->heap_pos - 1;
		rr->heap_pos = 0;
		if (i != --m->nheap) {
			m->heap[i] = m->heap[m->nheap];
			sift_down(m, i);
			sift_up(m, m->r[m->heap[i]].heap_pos - 1);
		}
	}
}

/* Whether a busy ring (its head now head) was left by its writer (mp_ring_writer_left()). */
static bool stale(struct mp_merge *m, struct mp_rring *rr, uint64_t head, uint32_t tid)
{
	uint64_t now = mp_mono_ns();
	if (!rr->busy_since || rr->busy_head != head) {
		rr->busy_since = now;
		rr->busy_head = head;
		rr->stale = false;
		return false;
	}
	if (m->tid_here && !rr->stale && now - rr->busy_since >= MP_RING_ASLEEP_NS) {
		/* (Once per writer: its id here cannot change while it lives.) */
		if (rr->tid_there != tid) {
			rr->tid_there = tid;
			rr->tid_here = m->tid_here(m->tid_ctx, tid);
		}
		tid = rr->tid_here;
	}
	/* (Without its id here, only the longer wait tells.) */
	if (!rr->stale && mp_ring_writer_left(now - rr->busy_since, tid)) {
		rr->stale = true;
		m->stale++;
	}
	return rr->stale;
}

/* How a run of one ring's records into a buffer ended (run_to_buf()). */
enum run_end { RUN_FULL, RUN_RIVAL, RUN_BOUND, RUN_EMPTY, RUN_BROKEN };

/*
 * The collector's merge (mp_merge_round_buf()): the records of ring i, the
 * oldest, copied into b for as long as they come before the rival's next
 * record (the oldest of the other rings': UINT32_MAX when there is none)
 * and before bound. The ring's state is kept in locals meanwhile: every
 * store into b could change it, as far as the compiler knows, and
 * reloading it for each record cost more than the rest.
 */
static __attribute__((noinline)) enum run_end run_to_buf(struct mp_merge *m, uint32_t i, uint64_t bound,
							  uint32_t rival, struct mp_merge_buf *b,
							  long *merged)
{
	struct mp_rring *rr = &m->r[i];
	const uint8_t *data = mp_shm_data(m->base, m->h, i);
	const uint64_t mask = m->h->ring_size - 1, head = rr->head;
	uint64_t pos = rr->pos, key = rr->next_key, prev = rr->pos_key, size = rr->next_size;
	uint64_t until = bound, release_at = rr->tail + (mask + 1) / 4, first = UINT64_MAX;
	/* Keys come out in order, round after round, unless a clock or a thread lied: those that do not are late. */
	const uint64_t last = m->last_key;
	uint32_t off = rr->next_off, len = rr->next_len;
	uint8_t *o = b->p, *const end = b->end;
	enum run_end how;
	long n = 0, late = 0;
	/* Ring i comes first while its key is below the rival's (or equal, and i the lower ring). */
	if (rival != UINT32_MAX)
		first = m->r[rival].next_key + (i < rival);
	if (first < until)
		until = first;
	for (;;) {
		const uint8_t *p = data + off, *q;
		unsigned rl;
		if (__builtin_expect((size_t)(end - o) < (size_t)len + 1 + 10 + MP_MERGE_SLACK, 0)) {
			how = RUN_FULL;
			break;
		}
		if (__builtin_expect(i != m->cur, 0) && is_event(p[0])) {
			uint64_t v = i;
			*o++ = MP_TAG_THREAD_SWITCH;
			while (v >= 0x80) {
				*o++ = (uint8_t)(v | 0x80);
				v >>= 7;
			}
			*o++ = (uint8_t)v;
			m->cur = i;
		}
		/* Most records are short: one copy of 16 bytes, the slack taking what lies past the record. */
		if (__builtin_expect(len <= 16 && off + 16 <= mask + 1, 1))
			memcpy(o, p, 16);
		else
			memcpy(o, p, len);
		o += len;
		n++;
		late += key < last;
		prev = key;
		pos += size;
		if (pos >= release_at) {
			rr->pos = pos;
			release(m, i);
			release_at = rr->tail + (mask + 1) / 4;
		}
		/* The next record: peek_at()'s fast path on the locals. */
		if (pos >= head) {
			how = pos == head ? RUN_EMPTY : RUN_BROKEN;
			break;
		}
		q = data + (pos & mask);
		rl = q[0];
		/* (The bounds before q[1]: a corrupt length could put it past the ring.) */
		if (__builtin_expect(rl >= 2 && rl < 0x80 && (pos & mask) + 1 + rl <= mask + 1 &&
				     pos + 1 + rl <= head && q[1] < 0x80, 1)) {
			key = prev + q[1];
			off = (uint32_t)(pos & mask) + 2;
			len = rl - 1;
			size = 1 + rl;
		} else {
			struct peeked pk;
			int r = peek_slow(m, data, &pos, head, prev, &pk);
			if (r <= 0) {
				how = r == 0 ? RUN_EMPTY : RUN_BROKEN;
				break;
			}
			key = pk.key;
			off = pk.off;
			len = pk.len;
			size = pk.size;
		}
		if (__builtin_expect(key >= until, 0)) {
			how = key >= first ? RUN_RIVAL : RUN_BOUND;
			break;
		}
	}
	rr->pos = pos;
	rr->pos_key = prev;
	rr->next_key = key;
	rr->next_size = size;
	rr->next_off = off;
	rr->next_len = len;
	if (n && prev > last)
		m->last_key = prev;
	m->late += (uint64_t)late;
	b->p = o;
	*merged += n;
	return how;
}

/*
 * A round (mp_merge_round()), its records handed to out one by one, or,
 * when b is not NULL, copied into b: inline, so that each is compiled for
 * one of the two.
 */
static inline __attribute__((always_inline)) long round_core(struct mp_merge *m, bool final,
							    mp_merge_out_fn out, void *ctx,
							    struct mp_merge_buf *b)
{
	const struct mp_shm_header *h = m->h;
	uint64_t bound = UINT64_MAX, mask = h->ring_size - 1;
	long merged = 0;
	uint32_t n;

	if (!final) {
		if (h->clock == MP_CLOCK_TSC) {
			bound = mp_tsc();
			/*
			 * Every thread of the process passes a barrier: see
			 * lib/transport/merge.h. The collector said the system
			 * allows it before the tracker chose this clock; should it
			 * fail anyway, records published within a moment of their
			 * key are still merged in order, and the failure counted.
			 */
			if (syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL_EXPEDITED, 0, 0) != 0)
				m->unfenced++;
		} else {
			bound = __atomic_load_n(&m->h->counter, __ATOMIC_SEQ_CST) + 1;
		}
	}
	n = mp_merge_rings(m);
	if (mp_shm_needed(h, n) > m->mapped)
		return -2; /* a ring the caller cannot read yet: it must not be left out */
	if (n > m->nrings)
		m->nrings = n;
	m->nheap = 0;
	for (uint32_t i = 0; i < m->nrings; i++) {
		struct mp_rring *rr = &m->r[i];
		struct mp_ring_ctl *c = mp_shm_ctl(m->base, h, i);
		const uint8_t *data = mp_shm_data(m->base, h, i);
		uint32_t busy;
		uint64_t head;
		int r;
		rr->heap_pos = 0;
		if (rr->broken)
			continue;
		busy = __atomic_load_n(&c->busy, __ATOMIC_ACQUIRE);
		head = __atomic_load_n(&c->head, __ATOMIC_ACQUIRE);
		if (!busy)
			rr->busy_since = 0;
		if (head < rr->head || head - rr->tail > h->ring_size) {
			broken(m, rr);
			continue;
		}
		rr->head = head;
		if (busy && !final && !stale(m, rr, head, __atomic_load_n(&c->tid, __ATOMIC_RELAXED))) {
			uint64_t last;
			if (scan_to_head(m, rr, data, &last) < 0) {
				broken(m, rr);
				continue;
			}
			if (last + 1 < bound)
				bound = last + 1;
		}
		r = peek(m, rr, data);
		if (r < 0) {
			broken(m, rr);
			continue;
		}
		if (r > 0) {
			heap_set(m, m->nheap++, i);
			sift_up(m, m->nheap - 1);
		}
	}
	m->bound = bound;
	/*
	 * Merge, oldest first, what is older than every bound: from the oldest
	 * ring, a run of records up to the first that another ring's oldest
	 * precedes (mostly, one thread allocates at a time: long runs).
	 */
	while (m->nheap) {
		uint32_t i = m->heap[0], rival = UINT32_MAX;
		struct mp_rring *rr = &m->r[i];
		const uint8_t *data = mp_shm_data(m->base, h, i);
		uint64_t key = rr->next_key;
		int r;
		if (key >= bound)
			break;
		if (m->nheap > 1) {
			rival = m->heap[1];
			if (m->nheap > 2 && heap_less(m, m->heap[2], rival))
				rival = m->heap[2];
		}
		if (b) {
			enum run_end how = run_to_buf(m, i, bound, rival, b, &merged);
			switch (how) {
			case RUN_FULL:
				release(m, i);
				m->records += (uint64_t)merged;
				return -1;
			case RUN_RIVAL:
				sift_down(m, 0);
				continue;
			case RUN_BOUND:
				goto done;
			case RUN_EMPTY:
			case RUN_BROKEN:
				heap_pop(m);
				release(m, i);
				if (how == RUN_BROKEN)
					broken(m, rr);
				continue;
			}
		}
		for (;;) {
			if (emit(m, i, data + rr->next_off, rr->next_len, out, ctx) < 0) {
				release(m, i);
				m->records += (uint64_t)merged;
				return -1;
			}
			merged++;
			/* Keys come out in order, round after round, unless a clock or a thread lied. */
			if (key < m->last_key)
				m->late++;
			else
				m->last_key = key;
			rr->pos += rr->next_size;
			rr->pos_key = key;
			r = peek(m, rr, data);
			if (r <= 0) {
				heap_pop(m);
				release(m, i);
				if (r < 0)
					broken(m, rr);
				break;
			}
			if (rr->pos - rr->tail >= (mask + 1) / 4)
				release(m, i);
			key = rr->next_key;
			if (rival != UINT32_MAX && !heap_less(m, i, rival)) {
				sift_down(m, 0);
				break;
			}
			/* Still the oldest: when too new, so is every other ring's. */
			if (key >= bound)
				goto done;
		}
	}
done:
	m->records += (uint64_t)merged;
	for (uint32_t i = 0; i < m->nrings; i++)
		release(m, i);
	return merged;
}

long mp_merge_round(struct mp_merge *m, bool final, mp_merge_out_fn out, void *ctx)
{
	return round_core(m, final, out, ctx, NULL);
}

long mp_merge_round_buf(struct mp_merge *m, bool final, struct mp_merge_buf *b)
{
	return round_core(m, final, NULL, NULL, b);
}

uint64_t mp_merge_clock(const struct mp_merge *m)
{
	if (m->h->clock == MP_CLOCK_TSC)
		return mp_tsc();
	return __atomic_load_n(&m->h->counter, __ATOMIC_SEQ_CST) + 1;
}

bool mp_merge_pending(const struct mp_merge *m)
{
	for (uint32_t i = 0; i < m->nrings; i++) {
		const struct mp_rring *rr = &m->r[i];
		const struct mp_ring_ctl *c = mp_shm_ctl(m->base, m->h, i);
		if (!rr->broken && __atomic_load_n(&c->head, __ATOMIC_ACQUIRE) > rr->pos)
			return true;
	}
	return false;
}
