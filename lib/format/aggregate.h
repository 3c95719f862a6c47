/*
 * The records of aggregated captures (memprof run --aggregate): instead of
 * every event, what the collector's analysis found per stack, thread and
 * allocator kind, the totals, the size histogram, each kind's and thread's
 * totals and the memory time series. Every record is keyed (man
 * memprof-capture(5)): readers skip ids they do not know, writers may add ids.
 * The decoder hands these records over as MP_REC_UNKNOWN; mp_agg_decode()
 * reads them.
 */
#ifndef MEMPROF_LIB_FORMAT_AGGREGATE_H
#define MEMPROF_LIB_FORMAT_AGGREGATE_H

#include <stddef.h>
#include <stdint.h>

/* Allocation sizes by powers of two: bucket 0 holds size 0, bucket k >= 1 [2^(k-1), 2^k). */
#define MP_AGG_HIST_BUCKETS 65

struct mp_agg_slot {
	uint64_t stack;            /* trace node, 0 for no stack */
	uint64_t thread;           /* index of a THREAD record of the capture */
	uint64_t kind;
	uint64_t alloc_bytes, alloc_count;  /* every allocation */
	uint64_t peak_bytes, peak_count;    /* live at the peak */
	uint64_t leak_bytes, leak_count;    /* live at the end */
};

struct mp_agg_totals {
	uint64_t n_allocs, bytes_allocated, n_frees, n_unknown_frees, n_null_frees, n_lost;
	uint64_t peak_bytes, peak_count, peak_time_us, peak_ticks, peak_event;
	uint64_t min_size, max_size;
	uint64_t n_events, n_ticks, n_records, ticks_per_sample;
	/* A sampled capture: one standard error of the estimates of bytes allocated, peak, leaked. */
	uint64_t sd_allocated, sd_peak, sd_leaked;
};

struct mp_agg_hist {
	uint64_t count[MP_AGG_HIST_BUCKETS];
};

struct mp_agg_kind {
	uint64_t kind, n_allocs, bytes_allocated, n_frees;
};

struct mp_agg_thread {
	uint64_t thread;           /* index of a THREAD record of the capture */
	uint64_t n_allocs, bytes_allocated, n_frees, live_bytes, live_count;
};

struct mp_agg_sample {
	uint64_t time_us, rss, heap, heap_max, hwm_time_us;
};

struct mp_agg {
	unsigned tag;              /* MP_TAG_AGG_* */
	union {
		struct mp_agg_slot slot;
		struct mp_agg_totals totals;
		struct mp_agg_hist hist;
		struct mp_agg_kind kind;
		struct mp_agg_thread thread;
		struct mp_agg_sample sample;
	} u;
};

/* The longest record the encoders below write. */
#define MP_AGG_RECORD_MAX (1 + 10 + 2 * 10 * (2 * MP_AGG_HIST_BUCKETS + 2))

/* Encode the record a (its tag says which) into buf (MP_AGG_RECORD_MAX bytes); its length. */
size_t mp_agg_encode(uint8_t *buf, const struct mp_agg *a);
/*
 * Read the payload of a sized record of tag tag (data, len: as MP_REC_UNKNOWN
 * gives them) into *a. 0, 1 when tag is not an aggregate record, -1 when the
 * record is malformed.
 */
int mp_agg_decode(unsigned tag, const uint8_t *data, size_t len, struct mp_agg *a);
/* Print the record as `memprof parse` does, one line without the newline, into buf. */
void mp_agg_format(const struct mp_agg *a, char *buf, size_t cap);

#endif
