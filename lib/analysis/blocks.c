/* The live heap blocks of the analysis: a ring by serial number and a table by address. */
#include <config.h>
#include "lib/analysis/blocks.h"

#include <stdlib.h>

#include "lib/util/xalloc.h"

void mp_blocks_init(struct mp_blocks *bs)
{
	*bs = (struct mp_blocks){ 0 };
}

void mp_blocks_release(struct mp_blocks *bs)
{
	free(bs->ring);
	free(bs->tab);
	mp_blocks_init(bs);
}

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

struct mp_block *mp_blocks_find(struct mp_blocks *bs, uint64_t key)
{
	if (mp_blocks_serial(key)) {
		if (bs->ring) {
			struct mp_block *b = &bs->ring[mp_blocks_ring_pos(key)];
			if (b->slot1 && b->key == key)
				return b;
		}
		/* Most lookups of new numbers end here, without touching the table. */
		if (key > bs->tab_serial_max)
			return NULL;
	}
	return tab_find(bs, key);
}

struct mp_block *mp_blocks_insert(struct mp_blocks *bs, uint64_t key)
{
	struct mp_block *b;
	if (!mp_blocks_serial(key))
		return tab_insert(bs, key);
	if (!bs->ring)
		bs->ring = xcalloc(MP_BLOCKS_RING, sizeof(*bs->ring));
	b = &bs->ring[mp_blocks_ring_pos(key)];
	if (b->slot1)
		*tab_insert(bs, b->key) = *b; /* live a whole round of the ring: it moves to the table */
	b->key = key;
	return b;
}

void mp_blocks_delete(struct mp_blocks *bs, struct mp_block *b)
{
	if (bs->ring && b >= bs->ring && b < bs->ring + MP_BLOCKS_RING)
		b->slot1 = 0;
	else
		tab_delete(bs, b);
}

size_t mp_blocks_count(const struct mp_blocks *bs)
{
	size_t n = bs->n;
	if (bs->ring)
		for (size_t i = 0; i < MP_BLOCKS_RING; i++)
			n += bs->ring[i].slot1 != 0;
	return n;
}

void mp_blocks_each(const struct mp_blocks *bs, void (*fn)(void *ctx, const struct mp_block *b),
		    void *ctx)
{
	if (bs->ring)
		for (size_t i = 0; i < MP_BLOCKS_RING; i++)
			if (bs->ring[i].slot1)
				fn(ctx, &bs->ring[i]);
	for (size_t i = 0; i < bs->cap; i++)
		if (bs->tab[i].slot1)
			fn(ctx, &bs->tab[i]);
}
