/* The live heap blocks of the analysis: pages by serial number and a table by address. */
#include <config.h>
#include "lib/analysis/blocks.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util/xalloc.h"

/* Pages only for numbers up to here, and at most this far beyond the newest page. */
#define MAX_PAGE (1u << 28)
#define MAX_SKIP 16

void mp_blocks_init(struct mp_blocks *bs)
{
	*bs = (struct mp_blocks){ 0 };
}

void mp_blocks_release(struct mp_blocks *bs)
{
	for (size_t i = 0; i < bs->npages; i++)
		free(bs->pages[i]);
	while (bs->spare) {
		struct mp_blocks_page *next = bs->spare->next;
		free(bs->spare);
		bs->spare = next;
	}
	free(bs->pages);
	free(bs->tab);
	mp_blocks_init(bs);
}

/* ---- the table ---------------------------------------------------------- */

static struct mp_block *tab_find(const struct mp_blocks *bs, uint64_t key)
{
	size_t mask, i;
	if (!bs->cap)
		return NULL;
	mask = bs->cap - 1;
	for (i = mp_blocks_home(key, mask); bs->tab[i].slot1; i = (i + 1) & mask)
		if (bs->tab[i].key == key)
			return &bs->tab[i];
	return NULL;
}

static struct mp_block *tab_free_entry(struct mp_blocks *bs, uint64_t key)
{
	size_t mask = bs->cap - 1, i;
	for (i = mp_blocks_home(key, mask); bs->tab[i].slot1; i = (i + 1) & mask)
		;
	return &bs->tab[i];
}

static struct mp_block *tab_insert(struct mp_blocks *bs, uint64_t key)
{
	struct mp_block *b;
	if ((bs->n + 1) * 2 > bs->cap) {
		struct mp_block *old = bs->tab;
		size_t oldcap = bs->cap;
		bs->cap = oldcap ? oldcap * 2 : 1024;
		bs->tab = xcalloc(bs->cap, sizeof(*bs->tab));
		for (size_t i = 0; i < oldcap; i++)
			if (old[i].slot1)
				*tab_free_entry(bs, old[i].key) = old[i];
		free(old);
	}
	b = tab_free_entry(bs, key);
	b->key = key;
	bs->n++;
	if (mp_blocks_serial(key) && key > bs->tab_serial_max)
		bs->tab_serial_max = key;
	return b;
}

static void tab_delete(struct mp_blocks *bs, struct mp_block *b)
{
	size_t mask = bs->cap - 1, i = (size_t)(b - bs->tab), j;
	/* Backward-shift deletion, as in lib/util/hash.c. */
	for (j = (i + 1) & mask; bs->tab[j].slot1; j = (j + 1) & mask) {
		size_t home = mp_blocks_home(bs->tab[j].key, mask);
		if (((j - home) & mask) >= ((j - i) & mask)) {
			bs->tab[i] = bs->tab[j];
			i = j;
		}
	}
	bs->tab[i].slot1 = 0;
	bs->n--;
}

/* ---- the pages ---------------------------------------------------------- */

/* A page no longer worth its memory: its live blocks move to the table, and it goes. */
static void evict(struct mp_blocks *bs, size_t p)
{
	struct mp_blocks_page *pg = bs->pages[p];
	for (size_t i = 0; i < MP_BLOCKS_PAGE && pg->live; i++)
		if (pg->e[i].slot1) {
			*tab_insert(bs, pg->e[i].key) = pg->e[i];
			pg->e[i].slot1 = 0;
			pg->live--;
			bs->paged--;
		}
	if (bs->nspare < bs->pages_live || bs->nspare < 32) {
		pg->next = bs->spare; /* empty again: slot1 0 everywhere */
		bs->spare = pg;
		bs->nspare++;
	} else {
		free(pg);
	}
	bs->pages[p] = NULL;
	bs->pages_live--;
}

/* A page other than the newest with at most live_max entries live. */
static inline bool sparse(const struct mp_blocks *bs, size_t p, uint32_t live_max)
{
	return p + 1 < bs->npages && bs->pages[p]->live <= live_max;
}

/* When the pages hold more than eight entries per live block, those at an eighth or less go. */
static void trim(struct mp_blocks *bs)
{
	if (bs->pages_live < 64 || bs->pages_live * MP_BLOCKS_PAGE <= 8 * bs->paged ||
	    bs->made_since_scan < bs->pages_live / 4)
		return;
	bs->made_since_scan = 0;
	for (size_t p = 0; p + 1 < bs->npages; p++)
		if (bs->pages[p] && sparse(bs, p, MP_BLOCKS_PAGE / 8))
			evict(bs, p);
}

/* The page of number s, made when it is the newest or a new one; NULL when s goes to the table. */
static struct mp_blocks_page *page_for_insert(struct mp_blocks *bs, uint64_t s)
{
	uint64_t p = s >> MP_BLOCKS_PAGE_BITS;
	size_t newest = bs->npages;
	if (p < bs->npages)
		return bs->pages[p]; /* NULL when it was evicted: its number goes to the table */
	if (p >= MAX_PAGE || p > bs->npages + MAX_SKIP)
		return NULL;
	ALLOC_GROW(bs->pages, p + 1, bs->pages_alloc);
	memset(bs->pages + bs->npages, 0, (p + 1 - bs->npages) * sizeof(*bs->pages));
	bs->npages = (size_t)p + 1;
	if (bs->spare) {
		bs->pages[p] = bs->spare;
		bs->spare = bs->spare->next;
		bs->nspare--;
	} else {
		bs->pages[p] = xcalloc(1, sizeof(struct mp_blocks_page));
	}
	bs->pages_live++;
	/* The page that was the newest may be sparse already (temporary blocks). */
	if (newest && bs->pages[newest - 1] && sparse(bs, newest - 1, MP_BLOCKS_PAGE / 16))
		evict(bs, newest - 1);
	bs->made_since_scan++;
	trim(bs);
	return bs->pages[p];
}

struct mp_block *mp_blocks_find(struct mp_blocks *bs, uint64_t key)
{
	if (mp_blocks_serial(key)) {
		uint64_t s = mp_blocks_number(key), p = s >> MP_BLOCKS_PAGE_BITS;
		if (p < bs->npages && bs->pages[p]) {
			struct mp_block *b = &bs->pages[p]->e[s & (MP_BLOCKS_PAGE - 1)];
			if (b->slot1 && b->key == key)
				return b;
		}
		/* Most lookups of numbers never moved end here, without touching the table. */
		if (key > bs->tab_serial_max)
			return NULL;
	}
	return tab_find(bs, key);
}

struct mp_block *mp_blocks_insert(struct mp_blocks *bs, uint64_t key)
{
	struct mp_blocks_page *pg;
	struct mp_block *b;
	if (!mp_blocks_serial(key) || !(pg = page_for_insert(bs, mp_blocks_number(key))))
		return tab_insert(bs, key);
	b = &pg->e[mp_blocks_number(key) & (MP_BLOCKS_PAGE - 1)];
	b->key = key;
	pg->live++;
	bs->paged++;
	return b;
}

void mp_blocks_delete(struct mp_blocks *bs, struct mp_block *b)
{
	uint64_t p;
	if (bs->tab && b >= bs->tab && b < bs->tab + bs->cap) {
		tab_delete(bs, b);
		return;
	}
	p = mp_blocks_number(b->key) >> MP_BLOCKS_PAGE_BITS;
	b->slot1 = 0;
	bs->pages[p]->live--;
	bs->paged--;
	if (sparse(bs, p, MP_BLOCKS_PAGE / 16))
		evict(bs, p);
}

size_t mp_blocks_count(const struct mp_blocks *bs)
{
	size_t n = bs->n;
	for (size_t p = 0; p < bs->npages; p++)
		if (bs->pages[p])
			n += bs->pages[p]->live;
	return n;
}

void mp_blocks_each(const struct mp_blocks *bs, void (*fn)(void *ctx, const struct mp_block *b),
		    void *ctx)
{
	for (size_t p = 0; p < bs->npages; p++) {
		const struct mp_blocks_page *pg = bs->pages[p];
		for (size_t i = 0; pg && i < MP_BLOCKS_PAGE; i++)
			if (pg->e[i].slot1)
				fn(ctx, &pg->e[i]);
	}
	for (size_t i = 0; i < bs->cap; i++)
		if (bs->tab[i].slot1)
			fn(ctx, &bs->tab[i]);
}
