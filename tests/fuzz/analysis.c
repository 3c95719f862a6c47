/*
 * Fuzz target: the analysis (peak, leaks, temporary allocations, the
 * temporal intervals, mappings left out, threads split, the series
 * downsampled) and what the reporters ask of it: flat groupings, stacks,
 * sites, labels and call trees, each checked against the totals.
 */
#include <config.h>

#include <stdlib.h>

#include "lib/analysis/analysis.h"
#include "lib/analysis/calltree.h"
#include "lib/util/strbuf.h"
#include "tests/fuzz/fuzz.h"

static const struct mp_analysis_opts runs[] = {
	/* flags, temporary threshold, max memory records: as the commands ask */
	{ 0, 1, 0, NULL, NULL, NULL },
	{ MP_ANALYSIS_TEMPORAL, 1, 2048, NULL, NULL, NULL },
	{ MP_ANALYSIS_SPLIT_THREADS | MP_ANALYSIS_NO_MMAP | MP_ANALYSIS_ALL_FRAMES, 0, 0, NULL, NULL, NULL },
	/* and what they allow at the edges: few points (merged often), a long threshold */
	{ MP_ANALYSIS_TEMPORAL | MP_ANALYSIS_SPLIT_THREADS | MP_ANALYSIS_SPLIT_PROCESSES | MP_ANALYSIS_NO_MMAP |
		  MP_ANALYSIS_RAW_LEAF, 1000, 2, NULL, NULL, NULL },
};

/* The views reports show, and every allocation. */
static const enum mp_view views[] = { MP_VIEW_PEAK, MP_VIEW_LEAKS, MP_VIEW_TEMPORARY,
				      MP_VIEW_ALLOCATED };

/* Groupings and call trees of a view, each adding up to the view's total. */
static void view_queries(const struct mp_analysis *a, enum mp_view view)
{
	static const unsigned groupings[] = { MP_BY_STACK, MP_BY_SITE | MP_BY_KIND | MP_BY_THREAD,
					      MP_BY_MODULE };
	static const unsigned trees[] = { 0, MP_CALLTREE_INVERTED | MP_CALLTREE_SPLIT_THREADS };
	struct mp_counts total = mp_analysis_view_total(a, view);
	for (size_t g = 0; g < FUZZ_N(groupings); g++) {
		struct mp_group_row *rows = NULL;
		size_t n = mp_analysis_group(a, view, groupings[g], MP_SORT_BYTES, &rows);
		struct mp_counts sum = { 0, 0 };
		for (size_t i = 0; i < n; i++) {
			sum.bytes += rows[i].c.bytes;
			sum.count += rows[i].c.count;
		}
		/* Every slot with a count is in one row: the rows add up to the view. */
		FUZZ_CHECK(sum.bytes == total.bytes && sum.count == total.count);
		mp_group_sort(rows, n, MP_SORT_COUNT);
		free(rows);
	}
	for (size_t k = 0; k < FUZZ_N(trees); k++) {
		struct mp_calltree t;
		mp_calltree_init(&t, a, trees[k]);
		mp_calltree_add_view(&t, view);
		mp_calltree_finish(&t);
		FUZZ_CHECK(t.nodes[0].total.bytes == total.bytes &&
			   t.nodes[0].total.count == total.count);
		mp_calltree_release(&t);
	}
}

/* Each slot's stack, site and thread, as reports name them. */
static void slot_queries(const struct mp_analysis *a)
{
	struct strbuf sb = STRBUF_INIT;
	uint32_t *stack = NULL;
	size_t alloc = 0;
	for (size_t i = 0; i < a->nslots; i++) {
		const struct mp_slot *s = &a->slots[i];
		size_t n = mp_analysis_stack(a, s->stack, &stack, &alloc);
		FUZZ_CHECK(n >= 1);
		for (size_t k = 0; k < n; k++) {
			FUZZ_CHECK(stack[k] < a->nlocs);
			strbuf_reset(&sb);
			mp_location_format(a, stack[k], (enum mp_location_style)(k % 3), &sb);
			mp_location_module(a, stack[k]);
		}
		FUZZ_CHECK(mp_analysis_site(a, s->stack) == s->site);
		strbuf_reset(&sb);
		mp_analysis_thread_label(a, s->thread, &sb);
	}
	free(stack);
	strbuf_release(&sb);
}

static void queries(const struct mp_analysis *a, size_t run, void *ctx)
{
	(void)run;
	(void)ctx;
	slot_queries(a);
	for (size_t v = 0; v < FUZZ_N(views); v++)
		view_queries(a, views[v]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_each_analysis(data, size, runs, FUZZ_N(runs), queries, NULL);
	return 0;
}
