/*
 * Sampled tracking (sample.c; memprof-run(1) --sampling-interval): which
 * allocations and frees the hooks record, decided before anything else
 * they do (the stack walk above all).
 *
 * Each byte allocated is sampled with probability 1/N (N the interval), so
 * the bytes from one sample to the next are exponential with mean N (a
 * Poisson process): each thread counts down the bytes to its next sample,
 * drawn from its own seeded generator, and an allocation of s bytes takes
 * s + 1 off (so that one of 0 bytes can be hit too). The allocation in
 * which the count runs out is recorded, at its real size, and a new count
 * drawn; by the exponential's lack of memory a block of s bytes is recorded
 * with probability 1 - e^(-(s+1)/N) whatever came before it, which is how
 * the reporters weigh it. A block of N bytes or more is always recorded.
 * No state is shared on that path: a load of the interval, the thread's
 * count, a subtraction and a branch.
 *
 * A free is recorded only when its block was: the addresses of the blocks
 * recorded and live are in a set of the process's (a table of buckets of
 * eight addresses, one cache line each, read without a lock; written, and
 * a hit taken out, under one), and the mappings recorded in a sorted list
 * of ranges (munmap, mremap and MAP_FIXED are system calls: a lock and a
 * search cost nothing beside them). With the interval 0 (exact tracking)
 * every event is recorded and none of this is consulted.
 */
#ifndef MEMPROF_LIB_TRACKER_SAMPLE_H
#define MEMPROF_LIB_TRACKER_SAMPLE_H

#include <stddef.h>
#include <stdint.h>

#include "lib/tracker/base.h"

/* The process's: the interval (0: exact), and its key (the interval and the session it began with). */
struct mp_sample_conf {
	uint64_t interval;
	uint64_t key;
};
extern struct mp_sample_conf mp_sample MP_HIDDEN;

/* A thread's: bytes left to its next sample, the key they were drawn for, its generator. */
struct mp_sample_thread {
	int64_t left;
	uint64_t key;
	uint64_t rng;
};
extern __thread struct mp_sample_thread mp_sample_tls MP_IE_TLS MP_HIDDEN;

/* The set of the blocks recorded: 8 addresses a bucket, 0 an empty cell. */
#define MP_SAMPLE_CELLS 8
struct mp_sample_table {
	uint64_t *cells;
	unsigned shift;              /* 64 - log2(buckets) */
	uint32_t overflow;           /* addresses kept outside the buckets (all full): look there too */
};
extern struct mp_sample_table *mp_sample_table MP_HIDDEN;

/* The slow path of mp_sample_alloc(): a thread's first count, or the count ran out. */
int mp_sample_hit(size_t size) MP_HIDDEN;
/* The slow path of mp_sample_free(): a recorded block's free (1, taken out of the set), or 0. */
int mp_sample_take(uint64_t addr) MP_HIDDEN;
/* A block just recorded, sampled: its free will be recorded too. */
void mp_sample_add(uint64_t addr) MP_HIDDEN;
/* The same for a mapping of len bytes (page-rounded) at addr. */
void mp_sample_add_range(uint64_t addr, uint64_t len) MP_HIDDEN;
/* Whether pages [addr, addr + len) held a mapping recorded (1: taken out of the list), else 0. */
int mp_sample_take_range(uint64_t addr, uint64_t len) MP_HIDDEN;

/*
 * A new stream: sampling every interval bytes (0: every event), each
 * thread's generator seeded anew from seed (0: from the clock and the
 * process), the set emptied.
 */
void mp_sample_begin(unsigned interval, unsigned seed) MP_HIDDEN;
/* Around fork: the set's lock taken in the parent, and made anew in the child. */
void mp_sample_lock(void) MP_HIDDEN;
void mp_sample_unlock(void) MP_HIDDEN;
void mp_sample_forked(void) MP_HIDDEN;

/* The bucket of addr in t. */
static inline const uint64_t *mp_sample_bucket(const struct mp_sample_table *t, uint64_t addr)
{
	return t->cells + ((((addr >> 4) * 0x9e3779b97f4a7c15ull) >> t->shift) * MP_SAMPLE_CELLS);
}

/* Whether an allocation of size bytes is recorded. */
static inline __attribute__((always_inline)) int mp_sample_alloc(size_t size)
{
	uint64_t t = mp_sample.interval;
	struct mp_sample_thread *s;
	if (likely(!t) || size >= t)
		return 1;
	s = &mp_sample_tls;
	if (unlikely(s->key != mp_sample.key))
		return mp_sample_hit(size);
	s->left -= (int64_t)size + 1;
	if (likely(s->left > 0))
		return 0;
	return mp_sample_hit(size);
}

/* Whether the free of the block at p is recorded (before the real free: it is then out of the set). */
static inline __attribute__((always_inline)) int mp_sample_free(const void *p)
{
	const struct mp_sample_table *t;
	const uint64_t *c;
	uint64_t a = (uint64_t)(uintptr_t)p, hit = 0;
	if (likely(!mp_sample.interval))
		return 1;
	t = __atomic_load_n(&mp_sample_table, __ATOMIC_ACQUIRE);
	c = mp_sample_bucket(t, a);
	for (int i = 0; i < MP_SAMPLE_CELLS; i++)
		hit |= __atomic_load_n(&c[i], __ATOMIC_RELAXED) == a;
	if (likely(!hit) && likely(!t->overflow))
		return 0;
	return mp_sample_take(a);
}

/* After a recorded allocation at p (sampled tracking only): its free is to be recorded too. */
static inline __attribute__((always_inline)) void mp_sample_keep(const void *p)
{
	if (unlikely(mp_sample.interval))
		mp_sample_add((uint64_t)(uintptr_t)p);
}

/* Whether the pages [addr, addr + len) are to be recorded freed (munmap, mremap, MAP_FIXED). */
static inline int mp_sample_unmap(const void *addr, size_t len)
{
	if (likely(!mp_sample.interval))
		return 1;
	return mp_sample_take_range((uint64_t)(uintptr_t)addr, len);
}

/* After a recorded mapping of len (page-rounded) bytes at p. */
static inline void mp_sample_keep_map(const void *p, size_t len)
{
	if (unlikely(mp_sample.interval))
		mp_sample_add_range((uint64_t)(uintptr_t)p, len);
}

#endif
