/*
 * Aggregated captures: the analysis's slots, totals and time series written
 * as records (by the collector of memprof run --aggregate, from the analysis
 * it runs on the events), and read back into an analysis in their place.
 */
#include <config.h>
#include "lib/analysis/analysis.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lib/analysis/analysis-private.h"
#include "lib/format/aggregate.h"
#include "lib/format/encode.h"
#include "lib/format/format.h"
#include "lib/util/xalloc.h"

/* ---- writing ------------------------------------------------------------ */

/* A slot's live counts at the peak, whether or not the pass has finished. */
static struct mp_counts peak_of(const struct mp_analysis *a, const struct mp_slot *s)
{
	if (a->finished)
		return s->peak;
	return s->epoch_ == a->p->epoch ? s->at_peak_ : s->leaked;
}

static void emit_agg(const struct mp_agg *g, void (*emit)(void *, const uint8_t *, size_t), void *ctx)
{
	uint8_t buf[MP_AGG_RECORD_MAX];
	emit(ctx, buf, mp_agg_encode(buf, g));
}

static void emit_thread(const struct mp_analysis *a, uint32_t k,
			void (*emit)(void *, const uint8_t *, size_t), void *ctx)
{
	const struct mp_thread *t = &a->threads[k];
	const char *name = t->name ? mp_analysis_string(a, t->name) : "";
	size_t len = strlen(name);
	uint8_t *buf = xmalloc(1 + 3 * MP_VARINT_MAX + len), *p;
	p = mp_enc_sized_begin(buf, MP_TAG_THREAD);
	p = mp_put_uvarint(p, k);
	p = mp_put_uvarint(p, t->tid);
	p = mp_enc_bytes(p, name, len);
	p = mp_enc_sized_end(buf, p);
	emit(ctx, buf, (size_t)(p - buf));
	free(buf);
}

void mp_aggregate_emit(const struct mp_analysis *a,
		       void (*emit)(void *ctx, const uint8_t *rec, size_t len), void *ctx)
{
	struct mp_agg g;
	/* Threads by their place in a->threads: an index reused by a later thread stays apart. */
	for (uint32_t k = 0; k < a->nthreads; k++)
		emit_thread(a, k, emit, ctx);
	for (size_t i = 0; i < a->nslots; i++) {
		const struct mp_slot *s = &a->slots[i];
		struct mp_counts peak = peak_of(a, s);
		if (!s->allocated.count && !s->leaked.count && !peak.count)
			continue;
		memset(&g, 0, sizeof(g));
		g.tag = MP_TAG_AGG_SLOT;
		g.u.slot.stack = s->stack;
		g.u.slot.thread = s->thread == MP_THREAD_MERGED ? 0 : s->thread;
		g.u.slot.kind = s->kind;
		g.u.slot.alloc_bytes = s->allocated.bytes;
		g.u.slot.alloc_count = s->allocated.count;
		g.u.slot.peak_bytes = peak.bytes;
		g.u.slot.peak_count = peak.count;
		g.u.slot.leak_bytes = s->leaked.bytes;
		g.u.slot.leak_count = s->leaked.count;
		emit_agg(&g, emit, ctx);
	}
	memset(&g, 0, sizeof(g));
	g.tag = MP_TAG_AGG_TOTALS;
	g.u.totals = (struct mp_agg_totals){
		.n_allocs = a->totals.n_allocs, .bytes_allocated = a->totals.bytes_allocated,
		.n_frees = a->totals.n_frees, .n_unknown_frees = a->totals.n_unknown_frees,
		.n_null_frees = a->totals.n_null_frees, .n_lost = a->totals.n_lost,
		.peak_bytes = a->totals.peak_bytes, .peak_count = a->totals.peak_count,
		.peak_time_us = a->totals.peak_time_us, .peak_ticks = a->totals.peak_ticks,
		.peak_event = a->totals.peak_event, .min_size = a->totals.min_size,
		.max_size = a->totals.max_size, .n_events = a->n_events, .n_ticks = a->n_ticks,
		.n_records = a->n_records, .ticks_per_sample = a->ticks_per_sample,
		.sd_allocated = (uint64_t)llround(sqrt(a->totals.var_allocated)),
		.sd_peak = (uint64_t)llround(sqrt(a->totals.var_peak)),
		.sd_leaked = (uint64_t)llround(sqrt(a->totals.var_leaked)),
	};
	emit_agg(&g, emit, ctx);
	memset(&g, 0, sizeof(g));
	g.tag = MP_TAG_AGG_HIST;
	for (unsigned k = 0; k < MP_AGG_HIST_BUCKETS && k < MP_HIST_BUCKETS; k++)
		g.u.hist.count[k] = a->totals.hist[k];
	emit_agg(&g, emit, ctx);
	for (size_t i = 0; i < a->nkinds; i++) {
		memset(&g, 0, sizeof(g));
		g.tag = MP_TAG_AGG_KIND;
		g.u.kind = (struct mp_agg_kind){ a->kinds[i].kind, a->kinds[i].n_allocs,
						 a->kinds[i].bytes_allocated, a->kinds[i].n_frees };
		emit_agg(&g, emit, ctx);
	}
	for (uint32_t k = 0; k < a->nthreads; k++) {
		const struct mp_thread *t = &a->threads[k];
		memset(&g, 0, sizeof(g));
		g.tag = MP_TAG_AGG_THREAD;
		g.u.thread = (struct mp_agg_thread){ k, t->n_allocs, t->bytes_allocated, t->n_frees,
						     t->live.bytes, t->live.count };
		emit_agg(&g, emit, ctx);
	}
	for (size_t i = 0; i < a->nsamples; i++) {
		const struct mp_sample *s = &a->samples[i];
		memset(&g, 0, sizeof(g));
		g.tag = MP_TAG_AGG_SAMPLE;
		g.u.sample = (struct mp_agg_sample){ s->time_us, s->rss, s->heap, s->heap_max,
						     s->hwm_time_us };
		emit_agg(&g, emit, ctx);
	}
}

/* ---- reading ------------------------------------------------------------ */

void mp_aggregate_on_record(struct mp_analysis *a, const struct mp_record *rec)
{
	struct mp_agg g;
	bool split = a->opts.flags & MP_ANALYSIS_SPLIT_THREADS;
	if (mp_agg_decode(rec->u.unknown.tag, rec->u.unknown.data, rec->u.unknown.len, &g))
		return; /* not one of ours (a newer record type), or malformed: skipped */
	switch (g.tag) {
	case MP_TAG_AGG_SLOT: {
		uint32_t th = mp_analysis_thread_of(a, (uint32_t)g.u.slot.thread), slot;
		uint32_t stack = g.u.slot.stack <= a->ntraces ? (uint32_t)g.u.slot.stack : 0;
		struct mp_slot *s;
		if (mp_kind_is_mapping((unsigned)g.u.slot.kind) && (a->opts.flags & MP_ANALYSIS_NO_MMAP))
			return;
		slot = mp_analysis_get_slot(a, stack, split ? th : MP_THREAD_MERGED, (uint32_t)g.u.slot.kind);
		s = &a->slots[slot];
		s->allocated.bytes += g.u.slot.alloc_bytes;
		s->allocated.count += g.u.slot.alloc_count;
		s->leaked.bytes += g.u.slot.leak_bytes;
		s->leaked.count += g.u.slot.leak_count;
		/* No event moves the peak here: mp_analysis_finish() takes the value at the peak as is. */
		s->at_peak_.bytes += g.u.slot.peak_bytes;
		s->at_peak_.count += g.u.slot.peak_count;
		s->epoch_ = a->p->epoch;
		break;
	}
	case MP_TAG_AGG_TOTALS: {
		const struct mp_agg_totals *t = &g.u.totals;
		a->agg_totals = true;
		a->totals.n_allocs = t->n_allocs;
		a->totals.bytes_allocated = t->bytes_allocated;
		a->totals.n_frees = t->n_frees;
		a->totals.n_unknown_frees = t->n_unknown_frees;
		a->totals.n_null_frees = t->n_null_frees;
		a->totals.n_lost = t->n_lost;
		a->totals.peak_bytes = t->peak_bytes;
		a->totals.peak_count = t->peak_count;
		a->totals.peak_time_us = t->peak_time_us;
		a->totals.peak_ticks = t->peak_ticks;
		a->totals.peak_event = t->peak_event;
		a->totals.min_size = t->min_size;
		a->totals.max_size = t->max_size;
		a->n_events = t->n_events;
		a->n_ticks = t->n_ticks;
		a->ticks_per_sample = t->ticks_per_sample;
		a->totals.var_allocated = (double)t->sd_allocated * (double)t->sd_allocated;
		a->totals.var_peak = (double)t->sd_peak * (double)t->sd_peak;
		a->totals.var_leaked = (double)t->sd_leaked * (double)t->sd_leaked;
		break;
	}
	case MP_TAG_AGG_HIST:
		for (unsigned k = 0; k < MP_AGG_HIST_BUCKETS && k < MP_HIST_BUCKETS; k++)
			a->totals.hist[k] = g.u.hist.count[k];
		break;
	case MP_TAG_AGG_KIND: {
		struct mp_kind_totals *k = mp_analysis_kind_totals(a, (uint32_t)g.u.kind.kind);
		k->n_allocs = g.u.kind.n_allocs;
		k->bytes_allocated = g.u.kind.bytes_allocated;
		k->n_frees = g.u.kind.n_frees;
		break;
	}
	case MP_TAG_AGG_THREAD: {
		struct mp_thread *t = &a->threads[mp_analysis_thread_of(a, (uint32_t)g.u.thread.thread)];
		t->n_allocs = g.u.thread.n_allocs;
		t->bytes_allocated = g.u.thread.bytes_allocated;
		t->n_frees = g.u.thread.n_frees;
		t->live.bytes = g.u.thread.live_bytes;
		t->live.count = g.u.thread.live_count;
		break;
	}
	case MP_TAG_AGG_SAMPLE: {
		/* (Merged when there are more than asked for: --max-memory-records, HTML's bound.) */
		struct mp_sample s = { g.u.sample.time_us, g.u.sample.rss, g.u.sample.heap,
				       g.u.sample.heap_max, g.u.sample.hwm_time_us };
		mp_series_push(a, &s);
		break;
	}
	default:
		break;
	}
}
