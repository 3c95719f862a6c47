/*
 * The live heap blocks of the analysis, by key: a heap address, or a serial
 * number as MP_SERIAL_ADDR(n) (capture formats 2.0 and 3.0 number blocks).
 *
 * Serial keys go to pages of MP_BLOCKS_PAGE entries indexed by the number,
 * where allocations land in order and a free is one direct load, whatever
 * the number of live blocks. A page that is not the newest and holds at
 * most a sixteenth of its entries live moves them to the table and is
 * freed; and when the pages hold more than eight entries per live block,
 * every page at an eighth or less goes the same way: pages cost at most
 * about eight entries per live block, against two in the table. Address
 * keys, and the blocks of freed pages, live in an open-addressing table
 * (linear probing, backward-shift deletion), at most half full. Pages freed
 * are kept for the next ones, as many as are in use: allocating and
 * clearing 64 KiB cost more than the blocks they hold.
 */
#ifndef MEMPROF_LIB_ANALYSIS_BLOCKS_H
#define MEMPROF_LIB_ANALYSIS_BLOCKS_H

#include <stddef.h>
#include <stdint.h>

#include "lib/format/format.h"

/* 40 bytes, since there may be tens of millions. */
struct mp_block {
	uint64_t key, size;
	uint64_t serial;        /* allocations its thread made before it (estimated, when sampled) */
	uint64_t event;         /* temporal analyses: the event that allocated it */
	uint32_t slot1;         /* slot + 1; 0 marks an empty entry */
	uint32_t thread;        /* the allocating thread */
};

/* 80 KiB pages: allocated from the heap, not mapped and unmapped one by one. */
#define MP_BLOCKS_PAGE_BITS 11
#define MP_BLOCKS_PAGE (1u << MP_BLOCKS_PAGE_BITS)  /* entries of a page */

struct mp_blocks_page {
	uint32_t live;
	struct mp_blocks_page *next;   /* in the list of spare pages */
	struct mp_block e[MP_BLOCKS_PAGE];
};

struct mp_blocks {
	struct mp_blocks_page **pages; /* by number >> MP_BLOCKS_PAGE_BITS; NULL: none or freed */
	size_t npages;                 /* pages[] entries in use: one past the newest page */
	size_t pages_alloc;
	size_t pages_live;             /* pages allocated */
	uint64_t paged;                /* live blocks in pages */
	size_t made_since_scan;        /* pages made since the pages were last scanned */
	struct mp_blocks_page *spare;  /* freed pages kept for the next ones, a list */
	size_t nspare;
	struct mp_block *tab;
	size_t cap, n;          /* the table's entries and how many are used */
	uint64_t tab_serial_max; /* no serial key above it was ever in the table */
};

static inline int mp_blocks_serial(uint64_t key)
{
	return (key & MP_SERIAL_ADDR_BASE) != 0;
}

/* The serial number of a serial key. */
static inline uint64_t mp_blocks_number(uint64_t key)
{
	return (key & ~MP_SERIAL_ADDR_BASE) >> 4;
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
		uint64_t s = mp_blocks_number(key), p = s >> MP_BLOCKS_PAGE_BITS;
		if (p < bs->npages && bs->pages[p]) {
			const struct mp_block *b = &bs->pages[p]->e[s & (MP_BLOCKS_PAGE - 1)];
			/* An entry of 40 bytes may straddle two lines: its key and slot1 are read. */
			__builtin_prefetch(&b->key);
			__builtin_prefetch(&b->slot1);
			return;
		}
		/* Its page was freed: the block, if live, moved to the table. */
		if (key > bs->tab_serial_max)
			return;
	}
	if (bs->cap) {
		const struct mp_block *b = &bs->tab[mp_blocks_home(key, bs->cap - 1)];
		__builtin_prefetch(&b->key);
		__builtin_prefetch(&b->slot1);
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
/* How many blocks are live (a scan of the pages: for checks, not the analysis). */
size_t mp_blocks_count(const struct mp_blocks *bs);
/* Each live block: the pages' by number, then the table's. */
void mp_blocks_each(const struct mp_blocks *bs, void (*fn)(void *ctx, const struct mp_block *b),
		    void *ctx);

#endif
