/*
 * The live heap blocks of the analysis, by key: a heap address, or a serial
 * number as MP_SERIAL_ADDR(n) (capture format 2.0's ALLOC_SEQ/FREE_SEQ).
 *
 * Serial keys go to a ring indexed by the number, where allocations land in
 * order and most frees hit the few recent kilobytes: a block still live when
 * the ring comes round to its entry again moves to the table. Address keys,
 * and those moved blocks, live in an open-addressing table (linear probing,
 * backward-shift deletion), at most half full.
 */
#ifndef MEMPROF_LIB_ANALYSIS_BLOCKS_H
#define MEMPROF_LIB_ANALYSIS_BLOCKS_H

#include <stddef.h>
#include <stdint.h>

#include "lib/format/format.h"

/* 32 bytes, since there may be tens of millions. */
struct mp_block {
	uint64_t key, size;
	uint64_t serial;        /* the allocating thread's allocation number */
	uint32_t slot1;         /* slot + 1; 0 marks an empty entry */
	uint32_t thread;        /* the allocating thread */
};

#define MP_BLOCKS_RING 4096     /* entries; a power of two */

struct mp_blocks {
	struct mp_block *ring;  /* MP_BLOCKS_RING entries, from the first serial key */
	struct mp_block *tab;
	size_t cap, n;          /* the table's entries and how many are used */
	uint64_t tab_serial_max; /* no serial key above it was ever in the table */
};

static inline int mp_blocks_serial(uint64_t key)
{
	return (key & MP_SERIAL_ADDR_BASE) != 0;
}

static inline size_t mp_blocks_ring_pos(uint64_t key)
{
	return (size_t)(key >> 4) & (MP_BLOCKS_RING - 1);
}

/*
 * Heap addresses are 16-byte aligned and spread over few bits: one
 * multiplication's high bits index the table well, for a fraction of a
 * full hash's cost.
 */
static inline size_t mp_blocks_home(uint64_t key, size_t mask)
{
	return (size_t)(((key >> 4) * 0x9e3779b97f4a7c15ull) >> 32) & mask;
}

/* Start loading the entry a lookup of key will read first. */
static inline __attribute__((always_inline)) void mp_blocks_prefetch(const struct mp_blocks *bs,
								      uint64_t key)
{
	if (mp_blocks_serial(key)) {
		if (bs->ring)
			__builtin_prefetch(&bs->ring[mp_blocks_ring_pos(key)]);
	} else if (bs->cap) {
		__builtin_prefetch(&bs->tab[mp_blocks_home(key, bs->cap - 1)]);
	}
}

void mp_blocks_init(struct mp_blocks *bs);
void mp_blocks_release(struct mp_blocks *bs);
/* The live block with this key, or NULL. */
struct mp_block *mp_blocks_find(struct mp_blocks *bs, uint64_t key);
/*
 * A new entry for key, which must not be live: its key is set, and the
 * caller sets the rest, slot1 not 0. Other entries may move.
 */
struct mp_block *mp_blocks_insert(struct mp_blocks *bs, uint64_t key);
/* Forget a live block (from find or insert). Other entries may move. */
void mp_blocks_delete(struct mp_blocks *bs, struct mp_block *b);
/* How many blocks are live (a scan of the ring: for checks, not the analysis). */
size_t mp_blocks_count(const struct mp_blocks *bs);
/* Each live block: the ring's by position, then the table's. */
void mp_blocks_each(const struct mp_blocks *bs, void (*fn)(void *ctx, const struct mp_block *b),
		    void *ctx);

#endif
