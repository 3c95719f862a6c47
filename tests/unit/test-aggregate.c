/*
 * Aggregated captures: the AGG records' encoding (lib/format/aggregate.c), and
 * an analysis written as records (lib/analysis/aggregate.c) and read back
 * into another, which must give the same slots, totals and series.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "tests/unit/analysis-fixture.h"
#include "lib/format/aggregate.h"
#include "lib/format/encode.h"

static void test_encode_decode(void **state)
{
	struct mp_agg a = { .tag = MP_TAG_AGG_SLOT }, b;
	uint8_t buf[MP_AGG_RECORD_MAX];
	size_t n;
	uint64_t len;
	unsigned hl;
	char line[512];
	(void)state;
	a.u.slot = (struct mp_agg_slot){ 7, 2, MP_KIND_CALLOC, 1ull << 40, 3, 0, 0, 300, 1 };
	n = mp_agg_encode(buf, &a);
	assert_int_equal(buf[0], MP_TAG_AGG_SLOT);
	hl = 1 + mp_uvarint8_len(buf + 1, &len);
	(void)hl;
	/* tag, length, then the payload: the zeros left out. */
	assert_int_equal(mp_agg_decode(buf[0], buf + 2, n - 2, &b), 0);
	assert_memory_equal(&a.u.slot, &b.u.slot, sizeof(a.u.slot));
	mp_agg_format(&b, line, sizeof(line));
	assert_string_equal(line, "AGG_SLOT stack=7 thread=2 kind=1 alloc_bytes=1099511627776 allocs=3 "
				  "peak_bytes=0 peak_blocks=0 leaked_bytes=300 leaked_blocks=1");

	memset(&a, 0, sizeof(a));
	a.tag = MP_TAG_AGG_HIST;
	a.u.hist.count[0] = 1;
	a.u.hist.count[64] = 5;
	n = mp_agg_encode(buf, &a);
	assert_int_equal(mp_agg_decode(buf[0], buf + 2, n - 2, &b), 0);
	assert_int_equal(b.u.hist.count[0], 1);
	assert_int_equal(b.u.hist.count[64], 5);
	assert_int_equal(b.u.hist.count[3], 0);
	mp_agg_format(&b, line, sizeof(line));
	assert_string_equal(line, "AGG_HIST b0=1 b64=5");
}

static void test_decode_edges(void **state)
{
	struct mp_agg b;
	/* id 1 = 9, an unknown id 30 (uint), an unknown bytes field, id 2 = 4 */
	const uint8_t ok[] = { 1 << 3, 9, 30 << 3, 0x80, 0x01, (31 << 3) | 2, 2, 'x', 'y', 2 << 3, 4 };
	const uint8_t cut[] = { 1 << 3, 0x80 };          /* a varint that runs out */
	const uint8_t badtype[] = { (1 << 3) | 5, 1 };    /* an unknown field type */
	const uint8_t longbytes[] = { (1 << 3) | 2, 9, 1 }; /* bytes past the end */
	(void)state;
	assert_int_equal(mp_agg_decode(MP_TAG_AGG_KIND, ok, sizeof(ok), &b), 0);
	assert_int_equal(b.u.kind.kind, 9);
	assert_int_equal(b.u.kind.n_allocs, 4);
	assert_int_equal(mp_agg_decode(MP_TAG_AGG_KIND, cut, sizeof(cut), &b), -1);
	assert_int_equal(mp_agg_decode(MP_TAG_AGG_KIND, badtype, sizeof(badtype), &b), -1);
	assert_int_equal(mp_agg_decode(MP_TAG_AGG_KIND, longbytes, sizeof(longbytes), &b), -1);
	assert_int_equal(mp_agg_decode(MP_TAG_SYMBOL, ok, sizeof(ok), &b), 1);
	assert_int_equal(mp_agg_decode(MP_TAG_AGG_TOTALS, NULL, 0, &b), 0);
	assert_int_equal(b.u.totals.n_allocs, 0);
}

/* The emitted records, kept for reading back. */
static struct strbuf emitted = STRBUF_INIT;
static void collect(void *ctx, const uint8_t *rec, size_t len)
{
	(void)ctx;
	strbuf_add(&emitted, rec, len);
}

/* Feed the records in buf to the analysis A (begun with the aggregated flag). */
static void read_back(const uint8_t *p, size_t len)
{
	const uint8_t *end = p + len;
	while (p < end) {
		unsigned tag = *p++;
		uint64_t plen = 0, v;
		unsigned shift = 0;
		struct mp_record r = { .type = MP_REC_UNKNOWN };
		do {
			v = *p++;
			plen |= (v & 0x7f) << shift;
			shift += 7;
		} while (v & 0x80);
		if (tag == MP_TAG_THREAD) {
			const uint8_t *q = p;
			uint64_t idx = 0, tid = 0, nl = 0;
			shift = 0;
			do { v = *q++; idx |= (v & 0x7f) << shift; shift += 7; } while (v & 0x80);
			shift = 0;
			do { v = *q++; tid |= (v & 0x7f) << shift; shift += 7; } while (v & 0x80);
			shift = 0;
			do { v = *q++; nl |= (v & 0x7f) << shift; shift += 7; } while (v & 0x80);
			r.type = MP_REC_THREAD;
			r.u.thread.index = (uint32_t)idx;
			r.u.thread.tid = tid;
			r.u.thread.name = (const char *)q;
			r.u.thread.name_len = nl;
		} else {
			r.u.unknown.tag = tag;
			r.u.unknown.len = plen;
			r.u.unknown.data = p;
		}
		feed(&r);
		p += plen;
	}
}

/* A program of two threads (the second's index reused), a peak, leaks and a mapping. */
static void program(void)
{
	thread_rec(0, 100, "main");
	trace(0, 0x1000);
	trace(1, 0x2000);
	tick(10, 4096);
	ev_alloc(0, MALLOC, 0x10, 10, 1);
	thread_rec(1, 101, "worker");
	ev_alloc(1, MALLOC, 0x20, 20, 2);
	ev_alloc(0, MP_KIND_CALLOC, 0x30, 30, 2);
	ev_alloc(0, MMAP, 0x100000, 8192, 1);
	tick(20, 8192);
	ev_free(1, FREE, 0x10);
	ev_range(0, MUNMAP, 0x100000, 4096);
	thread_rec(1, 102, "worker2");
	ev_alloc(1, MALLOC, 0x40, 5, 2);
	ev_free(1, FREE, 0x999);            /* unknown */
	ev_free(1, FREE, 0);                /* free(NULL) */
	tick(30, 8192);
}

struct snapshot {
	struct mp_totals totals;
	size_t nslots, nthreads, nkinds, nsamples;
	struct mp_slot slots[16];
	struct mp_thread threads[8];
	struct mp_kind_totals kinds[16];
	struct mp_sample samples[16];
	uint64_t n_events, n_ticks;
};

static void take(struct snapshot *s)
{
	memset(s, 0, sizeof(*s));
	s->totals = A.totals;
	s->nslots = A.nslots;
	assert_true(A.nslots <= 16 && A.nthreads <= 8 && A.nkinds <= 16 && A.nsamples <= 16);
	for (size_t i = 0; i < A.nslots; i++) {
		s->slots[i] = A.slots[i];
		memset(&s->slots[i].at_peak_, 0, sizeof(s->slots[i].at_peak_));
		s->slots[i].epoch_ = 0;
	}
	s->nthreads = A.nthreads;
	for (size_t i = 0; i < A.nthreads; i++) {
		s->threads[i] = A.threads[i];
		s->threads[i].name = 0;     /* string ids are each analysis's own */
		s->threads[i].index = 0;    /* renumbered in an aggregated capture */
	}
	s->nkinds = A.nkinds;
	memcpy(s->kinds, A.kinds, A.nkinds * sizeof(*A.kinds));
	s->nsamples = A.nsamples;
	memcpy(s->samples, A.samples, A.nsamples * sizeof(*A.samples));
	s->n_events = A.n_events;
	s->n_ticks = A.n_ticks;
}

static void begin_aggregated_points(unsigned flags, size_t max_points)
{
	struct mp_analysis_opts o = MP_ANALYSIS_OPTS_INIT;
	o.flags = flags;
	o.max_memory_records = max_points;
	begin_header(&o, MP_HF_AGGREGATED, 0);
	assert_true(A.aggregated);
	trace(0, 0x1000);
	trace(1, 0x2000);
}

static void begin_aggregated(unsigned flags)
{
	begin_aggregated_points(flags, 0);
}

static void round_trip(bool mid_pass)
{
	struct snapshot full, back;
	begin(MP_ANALYSIS_SPLIT_THREADS, 1);
	program();
	strbuf_reset(&emitted);
	if (mid_pass)
		mp_aggregate_emit(&A, collect, NULL); /* the state so far: as it will be */
	mp_analysis_finish(&A);
	take(&full);
	if (!mid_pass)
		mp_aggregate_emit(&A, collect, NULL);
	end(NULL);

	begin_aggregated(MP_ANALYSIS_SPLIT_THREADS);
	read_back((const uint8_t *)emitted.buf, emitted.len);
	mp_analysis_finish(&A);
	take(&back);
	/* (The program ends with a tick: the end adds no point to the series a snapshot lacks.) */
	assert_int_equal(back.nsamples, full.nsamples);
	assert_memory_equal(&full.totals, &back.totals, sizeof(full.totals));
	assert_int_equal(full.nslots, back.nslots);
	for (size_t i = 0; i < full.nslots; i++) {
		const struct mp_slot *x = &full.slots[i], *y = &back.slots[i];
		assert_int_equal(x->stack, y->stack);
		assert_int_equal(x->thread, y->thread);
		assert_int_equal(x->kind, y->kind);
		assert_memory_equal(&x->allocated, &y->allocated, sizeof(x->allocated));
		assert_memory_equal(&x->peak, &y->peak, sizeof(x->peak));
		assert_memory_equal(&x->leaked, &y->leaked, sizeof(x->leaked));
	}
	assert_int_equal(full.nthreads, back.nthreads);
	assert_memory_equal(full.threads, back.threads, full.nthreads * sizeof(*full.threads));
	assert_int_equal(full.nkinds, back.nkinds);
	assert_memory_equal(full.kinds, back.kinds, full.nkinds * sizeof(*full.kinds));
	assert_memory_equal(full.samples, back.samples, full.nsamples * sizeof(*full.samples));
	assert_int_equal(full.n_events, back.n_events);
	assert_int_equal(full.n_ticks, back.n_ticks);
	assert_string_equal(mp_analysis_string(&A, A.threads[2].name), "worker2");
	end(NULL);
}

static void test_round_trip(void **state)
{
	(void)state;
	round_trip(false);
}

static void test_round_trip_mid_pass(void **state)
{
	(void)state;
	round_trip(true);
}

/* Read without splitting threads, the slots merge as the full capture's would. */
static void test_merged_threads(void **state)
{
	struct mp_counts peak1, leak2;
	(void)state;
	begin(MP_ANALYSIS_SPLIT_THREADS, 1);
	program();
	mp_analysis_finish(&A);
	strbuf_reset(&emitted);
	mp_aggregate_emit(&A, collect, NULL);
	end(NULL);
	begin(0, 1);
	program();
	mp_analysis_finish(&A);
	peak1 = slot_of(1, M, MALLOC)->peak;
	leak2 = slot_of(2, M, MALLOC)->leaked;
	end(NULL);
	begin_aggregated(0);
	read_back((const uint8_t *)emitted.buf, emitted.len);
	mp_analysis_finish(&A);
	assert_memory_equal(&slot_of(1, M, MALLOC)->peak, &peak1, sizeof(peak1));
	assert_memory_equal(&slot_of(2, M, MALLOC)->leaked, &leak2, sizeof(leak2));
	assert_counts(slot_of(2, M, MALLOC)->allocated, 25, 2);
	end(NULL);
	strbuf_release(&emitted);
}

/*
 * Read with fewer points asked for than the capture has (--max-memory-records, an HTML
 * report's bound), the series is merged as the full capture's would be: it once kept every
 * AGG_SAMPLE (found by tests/fuzz/analysis.fuzz, whose invariant checks the bound).
 */
static void test_fewer_points(void **state)
{
	struct mp_analysis_opts o = MP_ANALYSIS_OPTS_INIT;
	struct snapshot full, back;
	(void)state;
	begin(MP_ANALYSIS_SPLIT_THREADS, 1);
	program();
	mp_analysis_finish(&A);
	assert_int_equal(A.nsamples, 3);
	strbuf_reset(&emitted);
	mp_aggregate_emit(&A, collect, NULL);
	end(NULL);
	o.flags = MP_ANALYSIS_SPLIT_THREADS;
	o.max_memory_records = 2;
	begin_opts(&o);
	program();
	mp_analysis_finish(&A);
	take(&full);
	assert_int_equal(full.nsamples, 1); /* 3 ticks, merged twice */
	end(NULL);

	begin_aggregated_points(MP_ANALYSIS_SPLIT_THREADS, 2);
	read_back((const uint8_t *)emitted.buf, emitted.len);
	mp_analysis_finish(&A);
	take(&back);
	assert_int_equal(back.nsamples, full.nsamples);
	assert_memory_equal(full.samples, back.samples, full.nsamples * sizeof(*full.samples));
	assert_int_equal(A.ticks_per_sample, 4);
	end(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_encode_decode),
		cmocka_unit_test(test_decode_edges),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_round_trip_mid_pass),
		cmocka_unit_test(test_fewer_points),
		cmocka_unit_test(test_merged_threads),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
