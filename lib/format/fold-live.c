/*
 * The fold's live memory (fold-private.h): heap blocks by address in a
 * table of open addressing, and the pieces of live mappings, disjoint
 * ranges by address, each of its mapping (origin) that says what it stands
 * for.
 */
#include <config.h>
#include "lib/format/fold-private.h"

#include <string.h>

/* ---- live blocks: open addressing, linear probing, backward-shift deletion ---- */

struct block *mp_fold_block_find(struct mp_fold *f, uint64_t addr)
{
	size_t mask = f->blocks_cap - 1;
	if (!f->blocks_cap)
		return NULL;
	for (size_t i = mp_fold_mix(addr) & mask; f->blocks[i].slot1; i = (i + 1) & mask)
		if (f->blocks[i].addr == addr)
			return &f->blocks[i];
	return NULL;
}

/* A new entry for addr (not in the table), its slot1 still 0; NULL when memory ran out. */
struct block *mp_fold_block_add(struct mp_fold *f, uint64_t addr)
{
	size_t mask, i;
	if ((f->nblocks + 1) * 2 > f->blocks_cap) {
		struct block *old = f->blocks, *p;
		size_t ocap = f->blocks_cap, n = ocap ? 2 * ocap : 4096;
		if (!(p = f->o.get(f->o.mem_ctx, n * sizeof(*p)))) {
			f->failed = 1;
			return NULL;
		}
		for (size_t k = 0; k < ocap; k++) {
			if (!old[k].slot1)
				continue;
			for (i = mp_fold_mix(old[k].addr) & (n - 1); p[i].slot1; i = (i + 1) & (n - 1))
				;
			p[i] = old[k];
		}
		f->blocks = p;
		f->blocks_cap = n;
		mp_fold_put(f, old, ocap * sizeof(*old));
	}
	mask = f->blocks_cap - 1;
	for (i = mp_fold_mix(addr) & mask; f->blocks[i].slot1; i = (i + 1) & mask)
		;
	f->nblocks++;
	f->blocks[i].addr = addr;
	return &f->blocks[i];
}

void mp_fold_block_delete(struct mp_fold *f, struct block *b)
{
	size_t mask = f->blocks_cap - 1, i = (size_t)(b - f->blocks), j = i, k;
	for (;;) {
		j = (j + 1) & mask;
		if (!f->blocks[j].slot1)
			break;
		/* j's entry moves to the hole unless its home lies cyclically in (i, j]. */
		k = mp_fold_mix(f->blocks[j].addr) & mask;
		if (i <= j ? (k <= i || k > j) : (k <= i && k > j)) {
			f->blocks[i] = f->blocks[j];
			i = j;
		}
	}
	f->blocks[i].slot1 = 0;
	f->nblocks--;
}

/* ---- live mappings: disjoint ranges by address ---- */

/* bytes of origin o's mapping are gone (its pieces changed by dpieces). */
static void piece_gone(struct mp_fold *f, uint32_t o, uint64_t bytes, int dpieces)
{
	struct origin *g = &f->origins[o];
	uint64_t est = bytes >= g->size ? g->bytes
		       : (uint64_t)((unsigned __int128)g->bytes * bytes / g->size);
	g->pieces = (uint32_t)((int64_t)g->pieces + dpieces);
	g->size -= bytes;
	g->bytes -= est;
	mp_fold_release(f, g->slot, g->thread, est, g->pieces ? 0 : g->count);
	if (!g->pieces) {
		g->next_free = f->free_origin;
		f->free_origin = o;
	}
}

/* The first range that starts at or after addr. */
size_t mp_fold_range_at(const struct mp_fold *f, uint64_t addr)
{
	size_t lo = 0, hi = f->nranges;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (f->ranges[mid].start < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

void mp_fold_range_insert(struct mp_fold *f, size_t i, uint64_t start, uint64_t end, uint32_t origin)
{
	memmove(&f->ranges[i + 1], &f->ranges[i], (f->nranges - i) * sizeof(*f->ranges));
	f->ranges[i] = (struct range){ start, end, origin };
	f->nranges++;
}

/*
 * Unmap [start, end): each range it touches, in address order, loses its
 * bytes there (cut at its head or tail, split by a hole, or gone). Room for
 * one more range must be there. Returns the bytes removed.
 */
uint64_t mp_fold_unmap(struct mp_fold *f, uint64_t start, uint64_t end)
{
	size_t i = mp_fold_range_at(f, start), j;
	uint64_t removed = 0;
	if (start >= end)
		return 0;
	/* The last range that starts before start may reach into it. */
	if (i > 0 && f->ranges[i - 1].end > start) {
		struct range *x = &f->ranges[i - 1];
		uint64_t cut = x->end < end ? x->end : end, tail_end = x->end;
		uint32_t o = x->origin;
		removed += cut - start;
		x->end = start;
		if (tail_end > end) {
			/* A hole in the middle: nothing else can be in it. */
			mp_fold_range_insert(f, i, end, tail_end, o);
			piece_gone(f, o, cut - start, 1);
			return removed;
		}
		piece_gone(f, o, cut - start, 0);
	}
	for (j = i; j < f->nranges && f->ranges[j].start < end; j++) {
		struct range *r = &f->ranges[j];
		if (r->end > end) {
			/* Only its head was inside. */
			uint64_t bytes = end - r->start;
			removed += bytes;
			r->start = end;
			piece_gone(f, r->origin, bytes, 0);
			break;
		}
		removed += r->end - r->start;
		piece_gone(f, r->origin, r->end - r->start, -1);
	}
	memmove(&f->ranges[i], &f->ranges[j], (f->nranges - j) * sizeof(*f->ranges));
	f->nranges -= j - i;
	return removed;
}

