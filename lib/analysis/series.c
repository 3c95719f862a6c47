/* The memory time series: a sample per bucket of ticks, buckets merged in pairs when full. */
#include <config.h>
#include "lib/analysis/analysis-private.h"

#include <stdlib.h>

#include "lib/analysis/blocks.h"
#include "lib/analysis/rangemap.h"
#include "lib/util/xalloc.h"

/*
 * Each bucket's high-water mark and the temporal intervals change with every
 * event, so the pass keeps them (analysis.c); here are the ticks that end
 * buckets, and the end of the pass.
 */

/* ---- ticks -------------------------------------------------------------- */

uint32_t mp_analysis_merged_half(uint32_t h, const bool *x_wins)
{
	uint32_t old = h / 2, i = old / 2;
	if (h == MP_NONE)
		return h;
	if (!(old & 1))
		return x_wins[i] ? 2 * i + (h & 1) : 2 * i;
	return x_wins[i] ? 2 * i + 1 : 2 * i + (h & 1);
}

/* After the buckets were merged in pairs: renumber every interval's halves and merge equal ones. */
static void merged_halves(void *ctx, struct mp_interval *iv)
{
	const bool *x_wins = ctx;
	iv->alloc = mp_analysis_merged_half(iv->alloc, x_wins);
	iv->free = mp_analysis_merged_half(iv->free, x_wins);
}

static void rebucket_intervals(struct mp_analysis *a, const bool *x_wins)
{
	mp_analysis_remap_intervals(a, merged_halves, (void *)x_wins);
}

/*
 * The temporal intervals kept before the buckets merge in pairs anyway,
 * with at least MIN_BUCKETS of them: with their index some 50 MB, however
 * long the capture (a 50M-event capture of alloc-heavy needed 300 MB at
 * 2048 buckets: its 4000 stacks each had blocks across most buckets).
 * Merging does not always make fewer intervals (blocks that live about a
 * bucket keep one per bucket until buckets are longer than they live), so
 * after a merge they may grow by MAX_INTERVALS / 2 again before the next:
 * at most five such merges (2048 buckets to 64), so at most 3.5 times as
 * many intervals in the worst case, instead of merging down to 64 buckets.
 */
#define MAX_INTERVALS (1u << 20)
#define MIN_BUCKETS 64

void mp_series_push(struct mp_analysis *a, const struct mp_sample *s)
{
	struct mp_analysis_private *p = a->p;
	size_t cap = a->opts.max_memory_records;
	bool *x_wins, by_intervals;
	ALLOC_GROW(a->samples, a->nsamples + 1, a->samples_alloc);
	if (p->ev_alloc < a->samples_alloc) {
		p->ev_start = xreallocarray(p->ev_start, a->samples_alloc, sizeof(*p->ev_start));
		p->ev_hwm = xreallocarray(p->ev_hwm, a->samples_alloc, sizeof(*p->ev_hwm));
		p->ev_alloc = a->samples_alloc;
	}
	p->ev_start[a->nsamples] = p->cur_start;
	p->ev_hwm[a->nsamples] = p->cur_hwm;
	a->samples[a->nsamples++] = *s;
	by_intervals = a->nintervals > (p->interval_limit ? p->interval_limit : MAX_INTERVALS) &&
		       a->nsamples >= MIN_BUCKETS && !(a->nsamples % 2);
	if (a->nsamples < cap && !by_intervals)
		return;
	/* Full (an even count): merge neighbours, keeping the maxima, and double the stride. */
	x_wins = xcalloc(a->nsamples / 2, sizeof(*x_wins));
	for (size_t i = 0; i < a->nsamples / 2; i++) {
		const struct mp_sample *x = &a->samples[2 * i], *y = &a->samples[2 * i + 1];
		struct mp_sample m = *y;
		x_wins[i] = x->heap_max >= y->heap_max;
		m.rss = x->rss > y->rss ? x->rss : y->rss;
		m.heap_max = x_wins[i] ? x->heap_max : y->heap_max;
		m.hwm_time_us = x_wins[i] ? x->hwm_time_us : y->hwm_time_us;
		p->ev_start[i] = p->ev_start[2 * i];
		p->ev_hwm[i] = x_wins[i] ? p->ev_hwm[2 * i] : p->ev_hwm[2 * i + 1];
		a->samples[i] = m;
	}
	a->nsamples /= 2;
	a->ticks_per_sample *= 2;
	if (a->opts.flags & MP_ANALYSIS_TEMPORAL)
		rebucket_intervals(a, x_wins);
	if (by_intervals)
		p->interval_limit = (a->nintervals > MAX_INTERVALS / 2 ? a->nintervals : MAX_INTERVALS / 2) +
				    MAX_INTERVALS / 2;
	free(x_wins);
}

/* The current bucket is complete as sample s: push it and start the next one. */
static void end_bucket(struct mp_analysis *a, struct mp_sample *s)
{
	struct mp_analysis_private *p = a->p;
	mp_analysis_flush_pending(a, 2 * (uint32_t)a->nsamples + 1);
	s->hwm_time_us = p->cur_hwm_time;
	mp_series_push(a, s);
	p->cur_start = p->cur_hwm = a->n_events;
	p->cur_max = p->heap;
	p->cur_hwm_time = p->last_time_us;
}

static void merge_pending(struct mp_analysis *a, uint64_t time_us, uint64_t rss)
{
	struct mp_analysis_private *p = a->p;
	struct mp_sample *s = &p->pending;
	if (!p->pending_ticks) {
		s->rss = rss;
		s->heap_max = p->tick_max;
	} else {
		if (rss > s->rss)
			s->rss = rss;
		if (p->tick_max > s->heap_max)
			s->heap_max = p->tick_max;
	}
	s->time_us = time_us;
	s->heap = p->heap;
}

void mp_series_on_tick(struct mp_analysis *a, const struct mp_record *rec)
{
	struct mp_analysis_private *p = a->p;
	merge_pending(a, rec->u.tick.time_us, rec->u.tick.rss);
	p->pending_ticks++;
	p->last_time_us = rec->u.tick.time_us;
	p->last_rss = rec->u.tick.rss;
	p->tick_max = p->heap;
	p->events_since_tick = false;
	a->n_ticks++;
	if (p->pending_ticks == a->ticks_per_sample) {
		struct mp_sample s = p->pending;
		p->pending_ticks = 0;
		end_bucket(a, &s);
	}
}

/* ---- the end of the pass ------------------------------------------------ */

void mp_series_finish(struct mp_analysis *a)
{
	struct mp_analysis_private *p = a->p;
	/* The last point: the end of the capture, when events followed the last tick. */
	if (p->pending_ticks || p->events_since_tick) {
		uint64_t end = a->duration_us > p->last_time_us ? a->duration_us : p->last_time_us;
		merge_pending(a, p->events_since_tick ? end : p->last_time_us,
			      p->pending_ticks ? p->pending.rss : p->last_rss);
		end_bucket(a, &p->pending);
	}
}

static void live_block_interval(struct mp_analysis *a, uint32_t slot, uint64_t event,
				uint64_t size, uint64_t count)
{
	mp_analysis_add_interval(a, slot, mp_analysis_half_of(a, event), MP_NONE, size, count);
}

static void live_block(void *ctx, const struct mp_block *b)
{
	struct mp_analysis *a = ctx;
	live_block_interval(a, b->slot1 - 1, b->event, b->size, 1);
}

static void live_mapping_interval(void *ctx, uint64_t start, uint64_t end, uint64_t value)
{
	struct mp_analysis *a = ctx;
	struct origin *o = &a->p->origins[value];
	/* The bytes of every piece left; the mapping counted once (pieces 0 once counted). */
	live_block_interval(a, o->slot, o->event, end - start, o->pieces ? 1 : 0);
	o->pieces = 0;
}

void mp_series_live_intervals(struct mp_analysis *a)
{
	mp_blocks_each(&a->p->blocks, live_block, a);
	mp_rangemap_each(&a->p->maps, live_mapping_interval, a);
}
