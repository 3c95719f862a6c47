/*
 * The fold (lib/format/fold.c), which a tracker that writes its own capture
 * aggregates with, against the collector's aggregation (lib/analysis, then
 * mp_aggregate_emit()): random tracker streams of several threads (declared,
 * renamed, their indexes reused), heap blocks (freed, freed twice, reused
 * without a free, free(NULL)), mappings (cut at their heads and tails, holed,
 * replaced, unmapped across several), markers and ticks enough to merge the
 * time series, must give the same records byte for byte, at the end and as
 * snapshots; and its memory stays bounded by what is live.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lib/analysis/analysis.h"
#include "lib/format/aggregate.h"
#include "lib/format/decode.h"
#include "lib/format/encode.h"
#include "lib/format/fold.h"
#include "lib/util/strbuf.h"

/* ---- the fold's memory, counted ---- */

static size_t mem_out, mem_peak, mem_limit = SIZE_MAX;

static void *get(void *ctx, size_t n)
{
	(void)ctx;
	if (mem_out + n > mem_limit)
		return NULL;
	mem_out += n;
	if (mem_out > mem_peak)
		mem_peak = mem_out;
	return calloc(1, n);
}

static void put(void *ctx, void *p, size_t n)
{
	(void)ctx;
	assert_true(mem_out >= n);
	mem_out -= n;
	free(p);
}

static struct mp_fold *new_fold(size_t max_samples,
				void (*weigh)(void *, uint64_t, uint64_t, uint64_t *, uint64_t *))
{
	struct mp_fold_opts o = { .main_tid = 100, .max_samples = max_samples, .get = get, .put = put,
				  .weigh = weigh };
	struct mp_fold *f = mp_fold_new(&o);
	assert_non_null(f);
	return f;
}

/* ---- random tracker streams ---- */

static uint64_t rng;
static uint64_t rnd(uint64_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return n ? rng % n : 0;
}

#define NIDX 6
#define POOL 64

struct gen {
	struct strbuf out;
	struct mp_enc_thread enc[NIDX];
	uint64_t tids[NIDX], next_tid;
	uint32_t cur;
	uint64_t ntraces, last_ip;
	uint64_t live[POOL];          /* heap addresses handed out (0: none) */
	bool mappings;
};

static void put_rec(struct gen *g, const uint8_t *p, const uint8_t *end)
{
	strbuf_add(&g->out, p, (size_t)(end - p));
}

static void gen_begin(struct gen *g, bool mappings)
{
	uint8_t buf[256], *p = buf, *rec;
	memset(g, 0, sizeof(*g));
	strbuf_init(&g->out, 0);
	g->mappings = mappings;
	g->next_tid = 200;
	memcpy(p, MP_MAGIC, MP_MAGIC_LEN);
	p[MP_MAGIC_LEN] = MP_STREAM_MAJOR;
	p[MP_MAGIC_LEN + 1] = 0;
	p += MP_MAGIC_LEN + 2;
	rec = p;
	p = mp_enc_sized_begin(p, MP_TAG_HEADER);
	p = mp_enc_field_uint(p, MP_H_PID, 100);
	p = mp_enc_field_uint(p, MP_H_MAIN_TID, 100);
	p = mp_enc_field_uint(p, MP_H_MODE, MP_MODE_PRELOAD);
	p = mp_enc_sized_end(rec, p);
	put_rec(g, buf, p);
}

static void gen_thread(struct gen *g, uint32_t i)
{
	static const char *const names[] = { "", "main", "worker", "a-longer-thread-name" };
	uint8_t buf[128], *p;
	const char *name = names[rnd(4)];
	/* The same tid (a rename), or another (the index reused). */
	if (!g->tids[i] || rnd(2))
		g->tids[i] = i == 0 && !g->tids[i] ? 100 : g->next_tid++;
	p = mp_enc_sized_begin(buf, MP_TAG_THREAD);
	p = mp_put_uvarint(p, i);
	p = mp_put_uvarint(p, g->tids[i]);
	p = mp_enc_bytes(p, name, strlen(name));
	p = mp_enc_sized_end(buf, p);
	memset(&g->enc[i], 0, sizeof(g->enc[i]));
	put_rec(g, buf, p);
}

static void gen_marker(struct gen *g, unsigned tag, uint64_t time_us, uint64_t count)
{
	uint8_t buf[64], *p = mp_enc_sized_begin(buf, tag);
	p = mp_enc_field_uint(p, MP_M_TIME, time_us);
	if (count)
		p = mp_enc_field_uint(p, MP_M_COUNT, count);
	p = mp_enc_field_bytes(p, MP_M_TEXT, "x", 1);
	p = mp_enc_sized_end(buf, p);
	put_rec(g, buf, p);
}

static uint64_t heap_addr(void)
{
	return 0x10000 + 16 * rnd(512) + (rnd(8) ? 0 : rnd(16));
}

static uint64_t page(uint64_t n)
{
	return 0x7f0000000000ull + 4096 * n;
}

static void gen_step(struct gen *g)
{
	uint8_t buf[256], *p = buf;
	struct mp_enc_thread *t = &g->enc[g->cur];
	uint64_t r = rnd(100), k;
	static const unsigned heap_kinds[] = { MP_KIND_MALLOC, MP_KIND_CALLOC, MP_KIND_REALLOC,
					       MP_KIND_POSIX_MEMALIGN, 20 /* an extended kind */ };
	if (r < 4) {
		g->cur = (uint32_t)rnd(NIDX);
		p = mp_enc_thread_switch(p, g->cur);
	} else if (r < 6) {
		gen_thread(g, g->cur);
		return;
	} else if (r < 12) {
		g->ntraces++;
		p = mp_enc_trace(p, g->ntraces, rnd(g->ntraces), 0x400000 + 16 * rnd(1000), &g->last_ip);
	} else if (r < 16) {
		p = mp_enc_tick(p, rnd(3000), 4096 * (1000 + rnd(1000)));
	} else if (r < 18) {
		static const unsigned tags[] = { MP_TAG_LOST, MP_TAG_EXIT, MP_TAG_MESSAGE, MP_TAG_UNWIND,
						 MP_TAG_ATTACH, MP_TAG_FORK };
		gen_marker(g, tags[rnd(6)], rnd(2000000), rnd(3));
		return;
	} else if (r < 55) {
		/* An allocation: at an address handed out before now and then (its free unseen). */
		uint64_t addr = rnd(10) ? heap_addr() : g->live[rnd(POOL)];
		p = mp_enc_alloc(p, t, heap_kinds[rnd(5)], addr, rnd(5) ? rnd(300) : rnd(1u << 20),
				 rnd(g->ntraces + 1));
		g->live[rnd(POOL)] = addr;
	} else if (r < 85) {
		/* A free: of a block handed out, of nothing known, of NULL. */
		k = rnd(POOL);
		p = mp_enc_free(p, t, rnd(4) ? MP_KIND_FREE : MP_KIND_REALLOC,
				rnd(12) ? g->live[k] : rnd(6) ? heap_addr() : 0, 0, 0);
		if (rnd(3))
			g->live[k] = 0; /* (else it may be freed twice) */
	} else if (g->mappings && r < 93) {
		/* A mapping over a small region: it replaces what was there. */
		p = mp_enc_alloc(p, t, rnd(4) ? MP_KIND_MMAP : MP_KIND_MREMAP, page(rnd(64)),
				 rnd(20) ? 4096 * (1 + rnd(8)) : 0, rnd(g->ntraces + 1));
	} else if (g->mappings) {
		/* Unmapped: a piece, a hole, several, or nothing mapped. */
		p = mp_enc_free(p, t, MP_KIND_MUNMAP, page(rnd(64)) + (rnd(4) ? 0 : 100), 1,
				4096 * (1 + rnd(12)));
	} else {
		return;
	}
	put_rec(g, buf, p);
}

/* ---- the two aggregations of one stream ---- */

static struct strbuf ours = STRBUF_INIT, theirs = STRBUF_INIT;

static void collect(void *ctx, const uint8_t *rec, size_t len)
{
	strbuf_add(ctx, rec, len);
}

/* Where the two outputs first differ: the record there, in memprof parse's words. */
static void assert_same_records(const struct strbuf *a, const struct strbuf *b, const char *what)
{
	size_t n = a->len < b->len ? a->len : b->len, i = 0;
	if (a->len == b->len && !memcmp(a->buf, b->buf, a->len))
		return;
	while (i < n && a->buf[i] == b->buf[i])
		i++;
	print_error("%s: the fold's records differ from the analysis's at byte %zu of %zu/%zu\n", what,
		    i, a->len, b->len);
	fail();
}

/*
 * Feed the stream g made to a fold and to the collector's analysis; compare
 * snapshots at snap_at records and the end. Returns the fold, for more checks.
 */
static struct mp_fold *fold_both(struct gen *g, size_t max_samples, size_t snap_at)
{
	struct mp_analysis a;
	struct mp_analysis_opts ao = MP_ANALYSIS_OPTS_INIT;
	struct mp_decoder d;
	struct mp_record rec;
	struct mp_fold *f = new_fold(max_samples, NULL);
	const uint8_t *p = (const uint8_t *)g->out.buf, *end = p + g->out.len;
	size_t nrec = 0;
	ssize_t n;
	ao.flags = MP_ANALYSIS_SPLIT_THREADS;
	ao.max_memory_records = max_samples;
	mp_analysis_init(&a, &ao);
	mp_decoder_init(&d);
	n = mp_decode_preamble(&d, p, (size_t)(end - p));
	assert_true(n > 0);
	p += n;
	n = mp_decode(&d, p, (size_t)(end - p), &rec);
	assert_true(n > 0 && rec.type == MP_REC_HEADER);
	mp_analysis_header(&a, rec.u.header);
	p += n;
	while (p < end) {
		n = mp_decode(&d, p, (size_t)(end - p), &rec);
		if (n <= 0)
			print_error("decode: %s\n", d.err.buf);
		assert_true(n > 0);
		mp_analysis_record(&a, &rec);
		assert_int_not_equal(mp_fold_record(f, p, (size_t)n), -1);
		p += n;
		if (++nrec == snap_at) {
			strbuf_reset(&ours);
			strbuf_reset(&theirs);
			mp_fold_emit(f, 0, collect, &ours);
			mp_aggregate_emit(&a, collect, &theirs);
			assert_same_records(&ours, &theirs, "snapshot");
			/* What the end would be now, which must change nothing. */
			mp_fold_emit(f, 1, collect, &ours);
		}
	}
	strbuf_reset(&ours);
	strbuf_reset(&theirs);
	mp_fold_emit(f, 1, collect, &ours);
	mp_analysis_finish(&a);
	mp_aggregate_emit(&a, collect, &theirs);
	assert_same_records(&ours, &theirs, "end");
	assert_false(mp_fold_failed(f));
	assert_int_equal(mp_fold_events(f), a.n_events);
	mp_analysis_release(&a);
	mp_decoder_release(&d);
	return f;
}

static void test_random_streams(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= 300; seed++) {
		struct gen g;
		size_t steps = 50 + (size_t)(seed * 37 % 3000);
		rng = seed * 0x9e3779b97f4a7c15ull;
		gen_begin(&g, seed % 5 != 0);
		for (size_t i = 0; i < steps; i++)
			gen_step(&g);
		mp_fold_free(fold_both(&g, seed % 3 ? 2 + 2 * (seed % 7) : 0, rnd(steps)));
		assert_int_equal(mem_out, 0);
		strbuf_release(&g.out);
	}
}

struct decoded {
	struct mp_agg slots[4096], totals, hist, threads[64], samples[4096];
	size_t nslots, nthreads, nsamples;
};

static struct decoded plain, heavy;

static void decode_all(const struct strbuf *sb, struct decoded *o)
{
	const uint8_t *p = (const uint8_t *)sb->buf, *end = p + sb->len;
	memset(o, 0, sizeof(*o));
	while (p < end) {
		unsigned tag = *p++;
		uint64_t len = 0;
		unsigned shift = 0;
		struct mp_agg g;
		do
			len |= (uint64_t)(*p & 0x7f) << shift, shift += 7;
		while (*p++ & 0x80);
		if (mp_agg_decode(tag, p, (size_t)len, &g) == 0) {
			if (tag == MP_TAG_AGG_SLOT && o->nslots < 4096)
				o->slots[o->nslots++] = g;
			else if (tag == MP_TAG_AGG_TOTALS)
				o->totals = g;
			else if (tag == MP_TAG_AGG_HIST)
				o->hist = g;
			else if (tag == MP_TAG_AGG_THREAD && o->nthreads < 64)
				o->threads[o->nthreads++] = g;
			else if (tag == MP_TAG_AGG_SAMPLE && o->nsamples < 4096)
				o->samples[o->nsamples++] = g;
		}
		p += len;
	}
}

/*
 * The series one point short of full when the capture ends after events:
 * the last point fills it, and the end merges it in pairs (twice the stride).
 */
static void test_last_point_fills_the_series(void **state)
{
	struct gen g;
	uint8_t buf[64], *p;
	struct mp_fold *f;
	(void)state;
	rng = 42;
	gen_begin(&g, false);
	for (int i = 0; i < 7; i++) {
		p = mp_enc_alloc(buf, &g.enc[0], MP_KIND_MALLOC, 0x1000 + 16 * (uint64_t)i, 10 + (uint64_t)i, 0);
		put_rec(&g, buf, p);
		p = mp_enc_tick(buf, 10, 4096);
		put_rec(&g, buf, p);
	}
	p = mp_enc_free(buf, &g.enc[0], MP_KIND_FREE, 0x1000, 0, 0);
	put_rec(&g, buf, p);
	f = fold_both(&g, 8, 0);
	strbuf_reset(&ours);
	mp_fold_emit(f, 1, collect, &ours);
	decode_all(&ours, &plain);
	assert_int_equal(plain.totals.u.totals.ticks_per_sample, 2);
	assert_int_equal(plain.nsamples, 4);
	mp_fold_free(f);
	strbuf_release(&g.out);
}

/* ---- weights ---- */

static void triple(void *ctx, uint64_t size, uint64_t event, uint64_t *bytes, uint64_t *count)
{
	(void)ctx;
	(void)event;
	*bytes = 3 * size;
	*count = 2;
}

/* Each allocation weighed 3 times its bytes and 2 blocks: every figure scales so, peaks where they were. */
static void test_weights(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= 40; seed++) {
		struct gen g;
		struct mp_fold *f1, *f3;
		const uint8_t *p, *end;
		struct mp_decoder d;
		rng = seed * 0x2545f4914f6cdd1dull;
		gen_begin(&g, false);
		for (int i = 0; i < 2000; i++)
			gen_step(&g);
		f1 = new_fold(0, NULL);
		f3 = new_fold(0, triple);
		/* Past the preamble and header. */
		mp_decoder_init(&d);
		p = (const uint8_t *)g.out.buf;
		end = p + g.out.len;
		{
			struct mp_record rec;
			p += mp_decode_preamble(&d, p, (size_t)(end - p));
			p += mp_decode(&d, p, (size_t)(end - p), &rec);
			while (p < end) {
				ssize_t n = mp_decode(&d, p, (size_t)(end - p), &rec);
				assert_true(n > 0);
				mp_fold_record(f1, p, (size_t)n);
				mp_fold_record(f3, p, (size_t)n);
				p += n;
			}
		}
		strbuf_reset(&ours);
		strbuf_reset(&theirs);
		mp_fold_emit(f1, 1, collect, &ours);
		mp_fold_emit(f3, 1, collect, &theirs);
		decode_all(&ours, &plain);
		decode_all(&theirs, &heavy);
		assert_int_equal(plain.nslots, heavy.nslots);
		for (size_t i = 0; i < plain.nslots; i++) {
			const struct mp_agg_slot *x = &plain.slots[i].u.slot, *y = &heavy.slots[i].u.slot;
			assert_int_equal(3 * x->alloc_bytes, y->alloc_bytes);
			assert_int_equal(2 * x->alloc_count, y->alloc_count);
			assert_int_equal(3 * x->peak_bytes, y->peak_bytes);
			assert_int_equal(2 * x->peak_count, y->peak_count);
			assert_int_equal(3 * x->leak_bytes, y->leak_bytes);
			assert_int_equal(2 * x->leak_count, y->leak_count);
		}
		assert_int_equal(2 * plain.totals.u.totals.n_allocs, heavy.totals.u.totals.n_allocs);
		assert_int_equal(3 * plain.totals.u.totals.bytes_allocated, heavy.totals.u.totals.bytes_allocated);
		assert_int_equal(2 * plain.totals.u.totals.n_frees, heavy.totals.u.totals.n_frees);
		assert_int_equal(3 * plain.totals.u.totals.peak_bytes, heavy.totals.u.totals.peak_bytes);
		assert_int_equal(plain.totals.u.totals.peak_event, heavy.totals.u.totals.peak_event);
		assert_int_equal(plain.totals.u.totals.min_size, heavy.totals.u.totals.min_size);
		for (unsigned k = 0; k < MP_AGG_HIST_BUCKETS; k++)
			assert_int_equal(2 * plain.hist.u.hist.count[k], heavy.hist.u.hist.count[k]);
		assert_int_equal(plain.nthreads, heavy.nthreads);
		for (size_t i = 0; i < plain.nthreads; i++)
			assert_int_equal(3 * plain.threads[i].u.thread.live_bytes,
					 heavy.threads[i].u.thread.live_bytes);
		assert_int_equal(plain.nsamples, heavy.nsamples);
		for (size_t i = 0; i < plain.nsamples; i++)
			assert_int_equal(3 * plain.samples[i].u.sample.heap_max, heavy.samples[i].u.sample.heap_max);
		mp_decoder_release(&d);
		mp_fold_free(f1);
		mp_fold_free(f3);
		strbuf_release(&g.out);
	}
}

/* ---- memory ---- */

/*
 * A long run that allocates and frees from a few stacks with few blocks
 * live: the fold's memory is what the live blocks, stacks and the series
 * take, whatever the number of events.
 */
static void test_bounded_memory(void **state)
{
	struct mp_fold *f = new_fold(0, NULL);
	struct mp_enc_thread enc = { 0 };
	uint8_t buf[128], *p;
	uint64_t last_ip = 0;
	size_t after_warmup = 0;
	(void)state;
	mem_peak = mem_out;
	for (uint64_t n = 1; n <= 8; n++) {
		p = mp_enc_trace(buf, n, n - 1, 0x400000 + n, &last_ip);
		mp_fold_record(f, buf, (size_t)(p - buf));
	}
	rng = 7;
	for (uint64_t i = 0; i < 3000000; i++) {
		uint64_t addr = 0x100000 + 16 * (i % 100);
		if (i >= 100) {
			p = mp_enc_free(buf, &enc, MP_KIND_FREE, addr, 0, 0);
			assert_int_equal(mp_fold_record(f, buf, (size_t)(p - buf)), 1);
		}
		p = mp_enc_alloc(buf, &enc, MP_KIND_MALLOC, addr, 16 + rnd(100), 1 + rnd(8));
		assert_int_equal(mp_fold_record(f, buf, (size_t)(p - buf)), 1);
		if (i % 50 == 0) {
			p = mp_enc_tick(buf, 1000, 1 << 20);
			assert_int_equal(mp_fold_record(f, buf, (size_t)(p - buf)), 1);
		}
		if (i == 1000000)
			after_warmup = mem_peak;
	}
	assert_int_equal(mp_fold_events(f), 2 * 3000000 - 100);
	/* The series took its most (10000 points) by then; nothing grew after. */
	assert_int_equal(mem_peak, after_warmup);
	assert_true(mem_peak < (2u << 20));
	mp_fold_free(f);
	assert_int_equal(mem_out, 0);
}

/* Memory that runs out: said, the fold left as it was, nothing read past its records. */
static void test_out_of_memory(void **state)
{
	struct gen g;
	struct mp_decoder d;
	struct mp_record rec;
	struct mp_fold *f;
	const uint8_t *p, *end;
	int failed = 0;
	(void)state;
	rng = 99;
	gen_begin(&g, true);
	for (int i = 0; i < 5000; i++)
		gen_step(&g);
	mem_limit = mem_out + 32 * 1024;
	f = new_fold(0, NULL);
	mp_decoder_init(&d);
	p = (const uint8_t *)g.out.buf;
	end = p + g.out.len;
	p += mp_decode_preamble(&d, p, (size_t)(end - p));
	p += mp_decode(&d, p, (size_t)(end - p), &rec);
	while (p < end) {
		ssize_t n = mp_decode(&d, p, (size_t)(end - p), &rec);
		assert_true(n > 0);
		failed |= mp_fold_record(f, p, (size_t)n) == -1;
		p += n;
	}
	assert_true(failed);
	assert_true(mp_fold_failed(f));
	strbuf_reset(&ours);
	mp_fold_emit(f, 1, collect, &ours);
	mem_limit = SIZE_MAX;
	mp_fold_free(f);
	assert_int_equal(mem_out, 0);
	mp_decoder_release(&d);
	strbuf_release(&g.out);
}

/* Malformed records are refused whole; records it does not fold go into the capture. */
static void test_records(void **state)
{
	struct mp_fold *f = new_fold(0, NULL);
	const uint8_t cut_alloc[] = { MP_TAG_ALLOC, 0x80 };
	const uint8_t bad_addr[] = { MP_TAG_FREE, 0x41 };       /* low bit set, low bits > 15 */
	const uint8_t unknown_tag[] = { 0x7f, 0 };
	const uint8_t long_sized[] = { MP_TAG_THREAD, 9, 1 };
	const uint8_t far_index[] = { MP_TAG_THREAD_SWITCH, 0xff, 0xff, 0xff, 0x7f };
	const uint8_t module[] = { MP_TAG_MODULE, 1, 0 };
	const uint8_t pyframe[] = { MP_TAG_PYFRAME, 0 };
	const uint8_t trace[] = { MP_TAG_TRACE, 1, 2 };
	(void)state;
	assert_int_equal(mp_fold_record(f, cut_alloc, sizeof(cut_alloc)), -1);
	assert_int_equal(mp_fold_record(f, bad_addr, sizeof(bad_addr)), -1);
	assert_int_equal(mp_fold_record(f, unknown_tag, sizeof(unknown_tag)), -1);
	assert_int_equal(mp_fold_record(f, long_sized, sizeof(long_sized)), -1);
	assert_int_equal(mp_fold_record(f, far_index, sizeof(far_index)), -1);
	assert_int_equal(mp_fold_events(f), 0);
	assert_int_equal(mp_fold_record(f, module, sizeof(module)), 0);
	assert_int_equal(mp_fold_record(f, pyframe, sizeof(pyframe)), 0);
	assert_int_equal(mp_fold_record(f, trace, sizeof(trace)), 0);
	assert_false(mp_fold_failed(f));
	mp_fold_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_streams),
		cmocka_unit_test(test_last_point_fills_the_series),
		cmocka_unit_test(test_weights),
		cmocka_unit_test(test_bounded_memory),
		cmocka_unit_test(test_out_of_memory),
		cmocka_unit_test(test_records),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
