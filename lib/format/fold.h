/*
 * The fold: a tracker's stream (its records as lib/format/encode.h writes
 * them) folded, record by record, into what an aggregated capture holds
 * (aggregate.h): per stack, thread and allocator kind what was allocated,
 * what was live at the peak and what is live now; the totals, the size
 * histogram, each kind's and each thread's totals and the memory time
 * series. It gives the records lib/analysis's mp_aggregate_emit() gives
 * for the same stream (memprof run --aggregate, whose collector analyses
 * the events): the same analysis, of the same records, in the same order.
 *
 * For the captures the tracker writes itself (direct mode): allocation-free
 * and stdio-free, its memory from the caller (pages), in proportion to the
 * distinct stacks, threads and live blocks and mappings, never to the
 * number of events (the time series is at most max_samples points).
 */
#ifndef MEMPROF_LIB_FORMAT_FOLD_H
#define MEMPROF_LIB_FORMAT_FOLD_H

#include <stddef.h>
#include <stdint.h>

/* The analysis's default: at most this many points in the time series (even). */
#define MP_FOLD_MAX_SAMPLES 10000

struct mp_fold;

struct mp_fold_opts {
	uint64_t main_tid;        /* the header's: the thread of index 0 until it is declared */
	size_t max_samples;       /* 0: MP_FOLD_MAX_SAMPLES; odd: one less; at least 2 */
	/* Zeroed memory of bytes bytes, or NULL; and its return. */
	void *(*get)(void *ctx, size_t bytes);
	void (*put)(void *ctx, void *p, size_t bytes);
	void *mem_ctx;
	/*
	 * What an allocation of size bytes, the event-th event, stands for: NULL,
	 * itself (size bytes, one block); else *bytes and *count as weigh says
	 * (an estimate, in a sampled capture). Decided once per allocation, and
	 * the same taken off the heap when it is freed (a mapping in pieces: in
	 * proportion, the last piece the rest).
	 */
	void (*weigh)(void *ctx, uint64_t size, uint64_t event, uint64_t *bytes, uint64_t *count);
	void *weigh_ctx;
};

/* A new fold (NULL when get fails). */
struct mp_fold *mp_fold_new(const struct mp_fold_opts *o);
void mp_fold_free(struct mp_fold *f);

/*
 * Fold one whole record of the stream after its header (rec[0..len)):
 * 1 when the aggregated capture leaves it out (an event, a tick, a thread's
 * switch or declaration: folded), 0 when it goes into the capture as it
 * is (stacks, modules, markers...), -1 when it is malformed (left out of the
 * fold) or memory ran out (mp_fold_failed(): the fold is no longer whole).
 */
int mp_fold_record(struct mp_fold *f, const uint8_t *rec, size_t len);
/* Whether memory ran out: the fold lacks events from then on. */
int mp_fold_failed(const struct mp_fold *f);
/* Events folded so far (allocations and frees). */
uint64_t mp_fold_events(const struct mp_fold *f);

/*
 * The aggregated capture's records as of now, each whole to emit: a THREAD
 * record per thread (numbered anew), an AGG_SLOT per slot, the totals, the
 * histogram, the kinds, the threads' totals and the time series. final: as
 * at the end of the capture (the last point of the series, the kinds in
 * order), which folding more later does not spoil; else as a snapshot of
 * it, as the collector writes one.
 */
void mp_fold_emit(const struct mp_fold *f, int final,
		  void (*emit)(void *ctx, const uint8_t *rec, size_t len), void *ctx);

#endif
