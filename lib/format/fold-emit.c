/*
 * The fold's time series (series.c's steps) and the records of the
 * aggregated capture it gives (mp_fold_emit(): mp_aggregate_emit()'s, in
 * its order).
 */
#include <config.h>
#include "lib/format/fold-private.h"

#include <string.h>

#include "lib/format/encode.h"
#include "lib/format/format.h"

/* ---- the time series ---- */

/*
 * Point s, of the ticks merged into the next point so far, with one more at
 * time_us (rss): the heap now, and its highest since the last tick.
 */
static void merge_pending(const struct mp_fold *f, struct mp_agg_sample *s, uint64_t time_us,
			  uint64_t rss)
{
	if (!f->pending_ticks) {
		s->rss = rss;
		s->heap_max = f->tick_max;
	} else {
		if (rss > s->rss)
			s->rss = rss;
		if (f->tick_max > s->heap_max)
			s->heap_max = f->tick_max;
	}
	s->time_us = time_us;
	s->heap = f->heap;
}

/* Buckets x and y merged into one: the later one's, with the higher of their maxima. */
static struct mp_agg_sample merged(const struct mp_agg_sample *x, const struct mp_agg_sample *y)
{
	struct mp_agg_sample m = *y;
	int x_wins = x->heap_max >= y->heap_max;
	m.rss = x->rss > y->rss ? x->rss : y->rss;
	m.heap_max = x_wins ? x->heap_max : y->heap_max;
	m.hwm_time_us = x_wins ? x->hwm_time_us : y->hwm_time_us;
	return m;
}

void mp_fold_tick(struct mp_fold *f, uint64_t time_us, uint64_t rss)
{
	merge_pending(f, &f->pending, time_us, rss);
	f->pending_ticks++;
	f->last_time_us = time_us;
	f->last_rss = rss;
	f->tick_max = f->heap;
	f->events_since_tick = 0;
	f->t.n_ticks++;
	if (f->pending_ticks != f->t.ticks_per_sample)
		return;
	/* The bucket is complete: its point, and the next bucket begins. */
	f->pending_ticks = 0;
	if (mp_fold_grow(f, &f->samples, &f->samples_cap, f->nsamples + 1, sizeof(*f->samples), 256))
		return;
	f->pending.hwm_time_us = f->cur_hwm_time;
	f->samples[f->nsamples++] = f->pending;
	if (f->nsamples >= f->o.max_samples) {
		/* Full: neighbours merged, the stride doubled. */
		for (size_t i = 0; i < f->nsamples / 2; i++)
			f->samples[i] = merged(&f->samples[2 * i], &f->samples[2 * i + 1]);
		f->nsamples /= 2;
		f->t.ticks_per_sample *= 2;
	}
	f->cur_max = f->heap;
	f->cur_hwm_time = f->last_time_us;
}

/* ---- the records of the aggregated capture ---- */

typedef void (*emit_fn)(void *ctx, const uint8_t *rec, size_t len);

static void emit_agg(const struct mp_agg *g, emit_fn emit, void *ctx)
{
	uint8_t buf[MP_AGG_RECORD_MAX];
	emit(ctx, buf, mp_agg_encode(buf, g));
}

static void emit_sample(const struct mp_agg_sample *s, emit_fn emit, void *ctx)
{
	struct mp_agg g = { .tag = MP_TAG_AGG_SAMPLE };
	g.u.sample = *s;
	emit_agg(&g, emit, ctx);
}

static void emit_kind(const struct mp_agg_kind *k, emit_fn emit, void *ctx)
{
	struct mp_agg g = { .tag = MP_TAG_AGG_KIND };
	g.u.kind = *k;
	emit_agg(&g, emit, ctx);
}

/* The kinds by number, as the end of the pass sorts them. */
static void emit_kinds_sorted(const struct mp_fold *f, emit_fn emit, void *ctx)
{
	uint64_t last = 0;
	for (size_t n = 0; n < f->nkinds; n++) {
		const struct mp_agg_kind *next = NULL;
		for (size_t i = 0; i < f->nkinds; i++)
			if ((!n || f->kinds[i].kind > last) && (!next || f->kinds[i].kind < next->kind))
				next = &f->kinds[i];
		emit_kind(next, emit, ctx);
		last = next->kind;
	}
}

void mp_fold_emit(const struct mp_fold *f, int final, emit_fn emit, void *ctx)
{
	uint8_t buf[MP_ENC_MAX_PREFIX + 3 * MP_VARINT_MAX + NAME_MAX_LEN], *p;
	struct mp_agg g;
	struct mp_agg_sample last = f->pending;
	/* The end of the pass: the events after the last tick (or ticks not yet a point) are one. */
	int extra = final && (f->pending_ticks || f->events_since_tick);
	int halve = extra && f->nsamples + 1 >= f->o.max_samples;
	if (extra) {
		uint64_t end = f->duration_us > f->last_time_us ? f->duration_us : f->last_time_us;
		merge_pending(f, &last, f->events_since_tick ? end : f->last_time_us,
			      f->pending_ticks ? f->pending.rss : f->last_rss);
		last.hwm_time_us = f->cur_hwm_time;
	}
	for (size_t k = 0; k < f->nthreads; k++) {
		const struct thread *t = &f->threads[k];
		p = mp_enc_sized_begin(buf, MP_TAG_THREAD);
		p = mp_put_uvarint(p, k);
		p = mp_put_uvarint(p, t->tid);
		p = mp_enc_bytes(p, t->name, t->name_len);
		p = mp_enc_sized_end(buf, p);
		emit(ctx, buf, (size_t)(p - buf));
	}
	for (size_t i = 0; i < f->nslots; i++) {
		const struct slot *s = &f->slots[i];
		struct counts peak = s->epoch == f->epoch ? s->at_peak : s->live;
		if (!s->allocated.count && !s->live.count && !peak.count)
			continue;
		memset(&g, 0, sizeof(g));
		g.tag = MP_TAG_AGG_SLOT;
		g.u.slot = (struct mp_agg_slot){ s->stack, s->thread, s->kind, s->allocated.bytes,
						 s->allocated.count, peak.bytes, peak.count,
						 s->live.bytes, s->live.count };
		emit_agg(&g, emit, ctx);
	}
	memset(&g, 0, sizeof(g));
	g.tag = MP_TAG_AGG_TOTALS;
	g.u.totals = f->t;
	if (halve)
		g.u.totals.ticks_per_sample *= 2;
	emit_agg(&g, emit, ctx);
	memset(&g, 0, sizeof(g));
	g.tag = MP_TAG_AGG_HIST;
	g.u.hist = f->hist;
	emit_agg(&g, emit, ctx);
	if (final)
		emit_kinds_sorted(f, emit, ctx);
	else
		for (size_t i = 0; i < f->nkinds; i++)
			emit_kind(&f->kinds[i], emit, ctx);
	for (size_t k = 0; k < f->nthreads; k++) {
		const struct thread *t = &f->threads[k];
		memset(&g, 0, sizeof(g));
		g.tag = MP_TAG_AGG_THREAD;
		g.u.thread = (struct mp_agg_thread){ k, t->n_allocs, t->bytes_allocated, t->n_frees,
						     t->live.bytes, t->live.count };
		emit_agg(&g, emit, ctx);
	}
	if (!halve) {
		for (size_t i = 0; i < f->nsamples; i++)
			emit_sample(&f->samples[i], emit, ctx);
		if (extra)
			emit_sample(&last, emit, ctx);
		return;
	}
	/* The last point fills the series: it and the others merged in pairs. */
	for (size_t i = 0; i < (f->nsamples + 1) / 2; i++) {
		const struct mp_agg_sample *x = &f->samples[2 * i];
		const struct mp_agg_sample *y = 2 * i + 1 < f->nsamples ? &f->samples[2 * i + 1] : &last;
		struct mp_agg_sample m = merged(x, y);
		emit_sample(&m, emit, ctx);
	}
}

