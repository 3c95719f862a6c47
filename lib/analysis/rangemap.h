/*
 * An ordered map of disjoint address ranges [start, end), each carrying a
 * value: the live memory mappings of the analysis. Removing a range cuts the
 * ranges it overlaps (a head, a tail, a hole in the middle, several at once)
 * and reports what each lost. A treap: O(log n) expected per operation.
 */
#ifndef MEMPROF_LIB_ANALYSIS_RANGEMAP_H
#define MEMPROF_LIB_ANALYSIS_RANGEMAP_H

#include <stddef.h>
#include <stdint.h>

struct mp_range_node;

struct mp_rangemap {
	struct mp_range_node *root;
	size_t n;       /* ranges (pieces) in the map */
	uint64_t seed;  /* priorities */
};

/*
 * Called once per range a removal touches: value is the range's value,
 * bytes how many of its bytes were removed, and pieces the change in the
 * number of ranges carrying that value: -1 when the range disappeared, +1
 * when a hole split it in two, 0 when only its head or tail was cut.
 */
typedef void (*mp_range_fn)(void *ctx, uint64_t value, uint64_t bytes, int pieces);

void mp_rangemap_init(struct mp_rangemap *m);
void mp_rangemap_release(struct mp_rangemap *m);
/*
 * Add [start, end) with value. The map must hold nothing in that range
 * (remove it first). Empty ranges are ignored.
 */
void mp_rangemap_insert(struct mp_rangemap *m, uint64_t start, uint64_t end, uint64_t value);
/*
 * Remove every byte of [start, end) from the map, calling fn (may be NULL)
 * for each range touched, in address order. Returns the bytes removed.
 */
uint64_t mp_rangemap_remove(struct mp_rangemap *m, uint64_t start, uint64_t end, mp_range_fn fn,
			    void *ctx);
/* Call fn(ctx, start, end, value) for every range, in address order. */
void mp_rangemap_each(const struct mp_rangemap *m,
		      void (*fn)(void *ctx, uint64_t start, uint64_t end, uint64_t value),
		      void *ctx);

#endif
