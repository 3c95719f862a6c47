/*
 * Sampled tracking (sample.c; memprof-run(1) --sampling-interval): which
 * allocations and frees the hooks record, decided before anything else
 * they do (the stack walk above all).
 *
 * Each byte allocated is sampled with probability 1/N (N the interval), so
 * the bytes from one sample to the next are exponential with mean N (a
 * Poisson process): each thread counts down to its next sample, drawn from
 * its own seeded generator, and an allocation of s bytes takes s + 1 off
 * (so that one of 0 bytes can be hit too). The allocation in which the
 * count runs out is recorded, at its real size, and a new count drawn; by
 * the exponential's lack of memory a block of s bytes is recorded with
 * probability 1 - e^(-(s+1)/N) whatever came before it, which is how the
 * reporters weigh it. A block of N bytes or more is always recorded. The
 * count is kept in units of N / 2^48 (an exponential of mean 1, scaled), so
 * that a new interval needs no new count: (s + 1) * (2^48 / N) comes off.
 * No state is shared on that path: the interval and scale (read-mostly), the
 * thread's count, a multiplication, a subtraction and a branch.
 *
 * A free is recorded only when its block was. Every block sampled tracking
 * records is at one of two spots of a page: its start, or 16 bytes into it
 * (where glibc puts a block it maps by itself); the hooks allocate a
 * sampled block there (mp_sample_place()). So a free of any other address
 * is known at once not to be recorded, from its address alone, with no load
 * of shared memory: on four threads, the bitmap below, written by every
 * thread that samples, cost each free a cache miss. (Natively 0.6% of
 * bench/alloc-heavy's frees are at those spots; under sampling 10-14%, as
 * glibc hands a sampled block's chunk, once freed, to the next allocation
 * of its size.) The others: the addresses of the blocks
 * recorded and live are in a set of the process's, read without a lock and
 * written under one: a bitmap (128 bits a bucket: one set when an address of
 * the bucket hashes to it) says for most frees in one load that their block
 * is not there; the others look in their bucket of eight addresses (one
 * cache line), and a hit is taken out under the lock. The mappings recorded
 * are a sorted list of ranges (munmap, mremap and MAP_FIXED are system
 * calls: a lock and a search cost nothing beside them). With the interval 0
 * (exact tracking, or not tracking) every event goes the way it always did.
 */
#ifndef MEMPROF_LIB_TRACKER_SAMPLE_H
#define MEMPROF_LIB_TRACKER_SAMPLE_H

#include <stddef.h>
#include <stdint.h>

#include "lib/tracker/base.h"

/*
 * The process's, while a stream records: the interval (0: every event),
 * 2^48 / interval, and the set's bitmap (below) in one word, its address
 * (64-byte aligned) with its hash's shift in the low bits: what a free
 * needs, in one load of a line every hook reads anyway.
 */
struct mp_sample_conf {
	uint64_t interval;
	uint64_t scale;
	uint64_t bitmap;
};
extern struct mp_sample_conf mp_sample MP_HIDDEN;
#define MP_SAMPLE_UNIT_BITS 48

/* A thread's: what is left of its count (units of interval / 2^48), its generator. */
struct mp_sample_thread {
	int64_t left;
	uint64_t rng;
	int seeded;
};
extern __thread struct mp_sample_thread mp_sample_tls MP_IE_TLS MP_HIDDEN;

/*
 * The set of the blocks recorded: buckets of 8 addresses (0: an empty
 * cell), and 128 bits a bucket, bit b set when an address of the set has
 * the hash b (its bucket is b / 128). Addresses that found their bucket
 * full (and the table could not grow) are kept apart (overflow), their
 * bits set all the same.
 */
#define MP_SAMPLE_CELLS 8
#define MP_SAMPLE_BITS_LOG 7
struct mp_sample_table {
	uint64_t *bits;
	uint64_t *cells;
	unsigned shift;              /* 32 - log2(bits) */
	uint32_t overflow;           /* addresses kept apart */
};
extern struct mp_sample_table *mp_sample_table MP_HIDDEN;

/* An address's hash in a bitmap of 2^(32 - shift) bits (a multiplicative hash of its 16-byte unit). */
static inline uint32_t mp_sample_hash_at(unsigned shift, uint64_t addr)
{
	return ((uint32_t)(addr >> 4) * 0x9e3779b1u) >> shift;
}

static inline uint32_t mp_sample_hash(const struct mp_sample_table *t, uint64_t addr)
{
	return mp_sample_hash_at(t->shift, addr);
}

/* Where a block sampled tracking records may be: a page's start, or 16 bytes into it. */
#define MP_SAMPLE_PAGE 4096u
#define MP_SAMPLE_MAPPED_SPOT 16u
static inline int mp_sample_spot(uint64_t addr)
{
	uint64_t low = addr & (MP_SAMPLE_PAGE - 1);
	return low == 0 || low == MP_SAMPLE_MAPPED_SPOT;
}

/*
 * A block of size bytes just allocated for a sampled event (its first keep
 * bytes the program's, and all of them zero when zero says so), put at a
 * spot: *p as it is when it is at one, else a new block of the page's
 * alignment with those bytes, the old one freed. 1 when *p is at a spot, 0
 * when no memory was left to move it (*p as it was: the hook does not
 * record it). Exact tracking (the interval 0): 1, *p as it is.
 * (mp_sample_move(): the move itself, out of line.)
 */
int mp_sample_move(void **p, size_t size, size_t keep, int zero) MP_HIDDEN;
static inline __attribute__((always_inline)) int mp_sample_place(void **p, size_t size, size_t keep,
								  int zero)
{
	if (likely(!mp_sample.interval) || mp_sample_spot((uint64_t)(uintptr_t)*p))
		return 1;
	return mp_sample_move(p, size, keep, zero);
}

/* The allocation of a sampled malloc: at a page's start. */
void *mp_sample_malloc(size_t size) MP_HIDDEN;
/*
 * The alignment an aligned allocation that is sampled asks for: at least a
 * page's. (One that is not a power of two is left as it is, for the C
 * library to refuse or round as it does; mp_sample_place() then moves the
 * block when it must.)
 */
static inline size_t mp_sample_alignment(size_t alignment)
{
	if (mp_sample.interval && alignment < MP_SAMPLE_PAGE && alignment && !(alignment & (alignment - 1)))
		return MP_SAMPLE_PAGE;
	return alignment;
}

/* The slow path of mp_sample_alloc(): the thread's count ran out (or was never drawn). */
int mp_sample_hit(size_t size) MP_HIDDEN;
/* The slow path of mp_sample_free(): its bit is set: 1 when its block was recorded (taken out). */
int mp_sample_take(uint64_t addr) MP_HIDDEN;
/* A block just recorded, sampled: its free will be recorded too. */
void mp_sample_add(uint64_t addr) MP_HIDDEN;
/* The same for a mapping of len bytes (page-rounded) at addr. */
void mp_sample_add_range(uint64_t addr, uint64_t len) MP_HIDDEN;
/* Whether pages [addr, addr + len) held a mapping recorded (1: taken out of the list), else 0. */
int mp_sample_take_range(uint64_t addr, uint64_t len) MP_HIDDEN;

/*
 * A new stream: sampling every interval bytes (0: every event), the
 * generators seeded from seed (0: from the system) for the threads that
 * draw their first count from now on, the set emptied. Then
 * mp_sample_start() when the stream records, mp_sample_stop() when it no
 * longer does.
 */
void mp_sample_begin(unsigned interval, unsigned seed) MP_HIDDEN;
/* The interval of the stream begun last (its header's). */
unsigned mp_sample_begun(void) MP_HIDDEN;
void mp_sample_start(void) MP_HIDDEN;
void mp_sample_stop(void) MP_HIDDEN;
/* Around fork: the set's lock taken in the parent, and made anew in the child. */
void mp_sample_lock(void) MP_HIDDEN;
void mp_sample_unlock(void) MP_HIDDEN;
void mp_sample_forked(void) MP_HIDDEN;

/*
 * Whether an allocation of size bytes is recorded (the hook may then record
 * it; else it only calls the real function). With the interval 0, always.
 */
static inline __attribute__((always_inline)) int mp_sample_alloc(size_t size)
{
	uint64_t t = mp_sample.interval;
	if (likely(!t) || size >= t)
		return 1;
	mp_sample_tls.left -= (int64_t)(((uint64_t)size + 1) * mp_sample.scale);
	if (likely(mp_sample_tls.left > 0))
		return 0;
	return mp_sample_hit(size);
}

/*
 * The same in two halves, for the hooks most programs call most: first
 * thing, 1 when sampling leaves the allocation out for sure (the hook calls
 * the real function, and nothing else); 0 otherwise, and then, in a function
 * of its own, mp_sample_drawn() says whether it is recorded after all (the
 * thread's count ran out: 1, or it was never drawn: it is now, 0 or 1).
 */
static inline __attribute__((always_inline)) int mp_sample_pass(size_t size)
{
	if (likely(size < mp_sample.interval)) {
		mp_sample_tls.left -= (int64_t)(((uint64_t)size + 1) * mp_sample.scale);
		return likely(mp_sample_tls.left > 0);
	}
	return 0;
}

static inline int mp_sample_drawn(size_t size)
{
	uint64_t t = mp_sample.interval;
	if (!t || size >= t)
		return 1;
	return mp_sample_hit(size);
}

/*
 * The first half of mp_sample_free_skip(), first thing in a free hook, for
 * any p: 1 when its address, or else the bitmap, says at once the block was
 * not recorded.
 */
static inline __attribute__((always_inline)) int mp_sample_free_pass(const void *p)
{
	uint64_t a = (uint64_t)(uintptr_t)p, w;
	const uint64_t *bits;
	uint32_t h;
	if (likely(!mp_sample.interval) ||
	    unlikely(a - (uint64_t)(uintptr_t)mp_boot_arena < MP_BOOT_ARENA_SIZE))
		return 0;
	if (likely(!mp_sample_spot(a)))
		return 1;
	w = __atomic_load_n(&mp_sample.bitmap, __ATOMIC_ACQUIRE);
	bits = (const uint64_t *)(uintptr_t)(w & ~63ull);
	h = mp_sample_hash_at((unsigned)(w & 63), a);
	return likely(!((__atomic_load_n(&bits[h >> 6], __ATOMIC_ACQUIRE) >> (h & 63)) & 1));
}

/*
 * First thing in a free hook, p not NULL: 1 when sampled tracking leaves
 * the free out (its block was not recorded; nor is it the bootstrap
 * arena's), the hook then calls the real free and nothing else; 0 when the
 * hook goes on as ever (the block was recorded, and is out of the set now:
 * the hook records its free before the real free).
 */
static inline __attribute__((always_inline)) int mp_sample_free_skip(const void *p)
{
	if (likely(!mp_sample.interval) ||
	    unlikely((uint64_t)(uintptr_t)p - (uint64_t)(uintptr_t)mp_boot_arena < MP_BOOT_ARENA_SIZE))
		return 0;
	if (likely(mp_sample_free_pass(p)))
		return 1;
	return !mp_sample_take((uint64_t)(uintptr_t)p);
}

/* Whether the free of the block at p is recorded (p not NULL; out of the set if it was). */
static inline int mp_sample_free(const void *p)
{
	return !mp_sample_free_skip(p);
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
