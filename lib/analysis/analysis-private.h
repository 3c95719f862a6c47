/* The state of an analysis pass and the functions its files share: internal to lib/analysis. */
#ifndef MEMPROF_LIB_ANALYSIS_ANALYSIS_PRIVATE_H
#define MEMPROF_LIB_ANALYSIS_ANALYSIS_PRIVATE_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/analysis/analysis.h"
#include "lib/analysis/blocks.h"
#include "lib/analysis/rangemap.h"
#include "lib/format/decode.h"
#include "lib/format/reader.h"
#include "lib/util/hash.h"

/* One mapping allocation; munmap may cut it into several pieces in the range map. */
struct origin {
	uint64_t size, serial;  /* serial: as a block's (blocks.h) */
	uint64_t event;         /* of the allocation (temporal intervals) */
	uint64_t released;      /* bytes of it unmapped so far (a sampled capture's estimates) */
	uint32_t slot, thread;
	uint32_t pieces;        /* 0: free (next free origin in serial) */
};

/* What an instruction pointer stands for: its module and its frames' locations. */
struct ipinfo {
	uint64_t ip, offset;
	uint32_t module;        /* index into a->modules, or MP_NONE */
	uint32_t frames, nframes; /* into p->frames */
	uint32_t gen;           /* module generation it was resolved in; MP_NONE for SYMBOL records */
};

struct trace {
	uint32_t parent, ipinfo;
};

struct segref {
	uint64_t start, end;
	uint32_t module;
};

struct mp_analysis_private {
	struct mp_blocks blocks;         /* live heap blocks (any non-mapping kind) */
	struct mp_rangemap maps;
	struct origin *origins;
	size_t norigins, origins_alloc;
	uint32_t free_origin;           /* head of the free list, MP_NONE when empty */
	struct mp_idxset slotset;       /* (stack, thread, kind) -> slot */
	uint32_t *stack_slot;           /* by stack: the slot it used last, + 1 */
	size_t stack_slot_alloc;
	struct trace *traces;           /* by node; [0] is the root */
	size_t traces_alloc;
	struct ipinfo *ips;
	size_t nips, ips_alloc;
	uint32_t *orphans;              /* ipinfos outside every module so far (a MODULE record may come after) */
	size_t norphans, orphans_alloc;
	struct mp_intmap ipmap;         /* ip -> latest ipinfo */
	uint32_t *frames;               /* location ids of the ipinfos */
	size_t nframes, frames_alloc;
	struct mp_idxset locset;
	uint32_t *sidmap;               /* the capture's string ids -> ours */
	size_t nsid, sid_alloc;
	struct mp_intmap modmap;        /* loaded module id -> index */
	struct mp_intmap srcmods;       /* a Python source file's string id -> its module's index */
	struct mp_intmap modbypath;     /* a module's path (string id) -> the first module of that path */
	struct segref *segs;
	size_t nsegs, segs_alloc;
	bool segs_dirty;
	uint32_t modgen;
	uint32_t *thread_of;            /* capture thread index -> a->threads, MP_NONE */
	size_t thread_of_alloc;
	uint32_t kind_index[32];        /* kind -> a->kinds + 1, for kinds below 32 */
	/* The heap and its peak; in a sampled capture the variance of its estimate. */
	uint64_t heap, live_count, epoch;
	double heap_var;
	/* The time series. */
	uint64_t last_time_us, last_rss;
	uint64_t tick_max;              /* highest heap since the last tick */
	bool events_since_tick;
	struct mp_sample pending;       /* ticks merged into the next point */
	uint64_t pending_ticks;
	/*
	 * Time buckets, one per sample: the event count at each one's start and
	 * at its high-water mark (its start when the heap only fell in it).
	 */
	uint64_t *ev_start, *ev_hwm;
	size_t ev_alloc;
	/* The current bucket, the future sample a->nsamples: the same so far. */
	uint64_t cur_start, cur_hwm, cur_max, cur_hwm_time;
	/* Temporal intervals; past this many (0: series.c's default) buckets merge early. */
	struct mp_idxset ivset;
	size_t intervals_alloc, interval_limit;
	/*
	 * Blocks freed in the current bucket after its high-water mark so far,
	 * by (slot, alloc half): their free half is 2b if the heap rises higher
	 * later in the bucket, else 2b + 1.
	 */
	struct mp_interval *pend;
	size_t npend, pend_alloc;
	struct mp_idxset pendset;
	/* Allocation sites and their Python callers, by node (present.c). */
	uint32_t *site_memo, *caller_memo;
	struct mp_sym_frame *symbuf;
	/*
	 * Several captures read as one (family.c): the captures' state, and by
	 * slot what the blocks of processes that ended left (their leaks,
	 * which left the heap then); NULL for one capture.
	 */
	struct mp_family *family;
	struct mp_counts *exited;
	size_t exited_alloc;
	/* The sampling interval of the first capture read (mp_analysis_note_sampling()). */
	bool sampling_noted;
	uint64_t sampling_first;
};

/*
 * analysis.c, the per-event pass: the temporal intervals it keeps, which the
 * time series (series.c) renumbers and completes.
 */
void mp_analysis_add_interval(struct mp_analysis *a, uint32_t slot, uint32_t ah, uint32_t fh,
			      uint64_t bytes, uint64_t count);
void mp_analysis_flush_pending(struct mp_analysis *a, uint32_t fh);
/* Every interval changed by map (its slot or halves), those made equal merged. */
void mp_analysis_remap_intervals(struct mp_analysis *a,
				 void (*map)(void *ctx, struct mp_interval *iv), void *ctx);
uint32_t mp_analysis_half_of(const struct mp_analysis *a, uint64_t event);

/*
 * analysis.c, for family.c: take a block (or bytes of a mapping, count
 * 0) of a process that ended off the heap, as its leak
 * (p->exited[slot], grown by the caller); bytes and count as estimated
 * (mp_estimate_block()).
 */
void mp_analysis_drop(struct mp_analysis *a, uint32_t slot, uint32_t thread, uint64_t bytes,
		      uint64_t count, uint64_t event);

/*
 * estimate.c: what a block recorded in a sampled capture stands for (the
 * capture swapped in: a->header.sampling_interval), in bytes and blocks;
 * at the interval 0, itself.
 */
void mp_estimate_block(const struct mp_analysis *a, uint64_t size, uint64_t key, uint64_t *bytes,
		       uint64_t *count);
/*
 * What names a block for its estimate (its count's dither): its number
 * among its thread's allocations (a thread's n_allocs before it) and the
 * capture's index of that thread, so that a capture's estimates are the
 * same read alone or with others.
 */
static inline uint64_t mp_estimate_key(const struct mp_analysis *a, uint32_t thread, uint64_t serial)
{
	return serial ^ ((uint64_t)a->threads[thread].index << 44);
}
/* The variance a sampled block of size bytes adds to an estimate (0 when exact). */
double mp_estimate_var(const struct mp_analysis *a, uint64_t size);
/* The same for bytes of a mapping's piece unmapped now (o->released grows by them). */
uint64_t mp_estimate_piece(const struct mp_analysis *a, struct origin *o, uint64_t bytes);
/* A capture's interval, read: a->sampling_interval and a->sampling_mixed. */
void mp_analysis_note_sampling(struct mp_analysis *a, uint64_t interval);

/* family.c: the captures' state, released with the analysis. */
void mp_family_free(struct mp_family *f);
/*
 * family.c, in mp_analysis_finish() after the peak: stacks of the same
 * frames made one (slots and intervals merged), and each process's root
 * frame with MP_ANALYSIS_SPLIT_PROCESSES.
 */
void mp_family_finish(struct mp_analysis *a);
/* family.c: the process of each of the analysis's trace nodes. */
const uint32_t *mp_family_node_process(const struct mp_family *f);

/* analysis.c's lookups, for aggregate.c. */
uint32_t mp_analysis_thread_of(struct mp_analysis *a, uint32_t index);
uint32_t mp_analysis_get_slot(struct mp_analysis *a, uint32_t stack, uint32_t thread, uint32_t kind);
struct mp_kind_totals *mp_analysis_kind_totals(struct mp_analysis *a, uint32_t kind);

/* aggregate.c: the records of an aggregated capture (a->aggregated), as they are read. */
void mp_aggregate_on_record(struct mp_analysis *a, const struct mp_record *rec);

/*
 * frames.c: strings, modules, symbols and traces into locations. Location 0
 * (MP_LOCATION_NO_STACK) is the single frame of allocations without a stack.
 */
void mp_frames_add_no_stack(struct mp_analysis *a);
void mp_frames_on_module(struct mp_analysis *a, const struct mp_record *rec);
void mp_frames_on_module_unload(struct mp_analysis *a, uint64_t id);
void mp_frames_on_string(struct mp_analysis *a, const struct mp_record *rec);
void mp_frames_on_symbol(struct mp_analysis *a, const struct mp_record *rec);
void mp_frames_on_trace(struct mp_analysis *a, const struct mp_record *rec);
/* A location of these fields (found or made), and an ipinfo whose one frame is loc. */
uint32_t mp_frames_location(struct mp_analysis *a, uint32_t function, uint32_t file, uint32_t line,
			    uint32_t module, uint32_t flags);
uint32_t mp_frames_pseudo_ip(struct mp_analysis *a, uint32_t loc);
/* At the end of the pass: each trace node's allocation site. */

/*
 * present.c: how reports show stacks. The classes of a new location (the
 * MP_LOC_PYTHON to MP_LOC_PROGRAM flags), from its fields; at the end of
 * the pass, each trace node's allocation site and Python caller.
 */
uint32_t mp_frames_classify(const struct mp_analysis *a, const struct mp_location *l);
void mp_frames_compute_sites(struct mp_analysis *a);

/* series.c: the time series, by tick and at the end of the pass. */
void mp_series_on_tick(struct mp_analysis *a, const struct mp_record *rec);
/*
 * Append a finished point to the series (an aggregated capture's AGG_SAMPLE),
 * merging neighbours in pairs when full, as ticks do: the series keeps at
 * most opts.max_memory_records points, whatever the capture holds.
 */
void mp_series_push(struct mp_analysis *a, const struct mp_sample *s);
/* The last point, when events followed the last tick. */
void mp_series_finish(struct mp_analysis *a);
/* MP_ANALYSIS_TEMPORAL: the intervals of the blocks and mappings still live at the end. */
void mp_series_live_intervals(struct mp_analysis *a);

#endif
