/*
 * Between the files of the fold (fold.h): its state, and the steps one
 * file takes for another. fold.c folds the records (threads, slots, events),
 * fold-live.c keeps what is live (heap blocks, pieces of mappings),
 * fold-emit.c the time series and the aggregated capture's records.
 * Internal to lib/format.
 */
#ifndef MEMPROF_LIB_FORMAT_FOLD_PRIVATE_H
#define MEMPROF_LIB_FORMAT_FOLD_PRIVATE_H

#include <stddef.h>
#include <stdint.h>

#include "lib/format/aggregate.h"
#include "lib/format/fold.h"

/* Thread names kept, in bytes: the tracker's are shorter (MP_THREAD_NAME_MAX). */
#define NAME_MAX_LEN 64

struct counts {
	uint64_t bytes, count;
};

/* One stack, thread and kind; live is what it has live now, at_peak at the last peak (epoch). */
struct slot {
	uint32_t stack, thread, kind;
	struct counts allocated, live, at_peak;
	uint64_t epoch;
};

/* A live heap block (slot1 0: an empty entry of the table). */
struct block {
	uint64_t addr, bytes, count;
	uint32_t slot1, thread;
};

/* A piece of a live mapping, [start, end), of origin's. */
struct range {
	uint64_t start, end;
	uint32_t origin;
};

/* A mapping: the bytes of it still mapped, what they stand for, its pieces. */
struct origin {
	uint64_t size, bytes, count;
	uint32_t slot, thread, pieces, next_free;
};

struct thread {
	uint64_t tid, n_allocs, bytes_allocated, n_frees;
	struct counts live;
	size_t name_len;
	char name[NAME_MAX_LEN];
};

/* A thread index of the stream: its deltas, and the thread it is (+ 1; 0 none yet). */
struct index {
	uint64_t last_addr, last_stack;
	uint32_t thread1;
};

struct mp_fold {
	struct mp_fold_opts o;
	int failed;
	/* The stream: the current index, the clock. */
	uint32_t cur;
	uint64_t time_us, ntraces, duration_us;
	/* The figures AGG_TOTALS and AGG_HIST give (peak, events, ticks, records...). */
	struct mp_agg_totals t;
	struct mp_agg_hist hist;
	/* The heap now, and the number of its peaks so far. */
	uint64_t heap, live_count, epoch;
	/* The time series (series.c). */
	uint64_t last_time_us, last_rss, tick_max, pending_ticks, cur_max, cur_hwm_time;
	int events_since_tick;
	struct mp_agg_sample pending;
	struct mp_agg_sample *samples;
	size_t nsamples, samples_cap;
	/* Tables. */
	struct index *idx;
	size_t idx_cap;
	struct thread *threads;
	size_t nthreads, threads_cap;
	struct mp_agg_kind *kinds;
	size_t nkinds, kinds_cap;
	struct slot *slots;
	size_t nslots, slots_cap;
	uint32_t *slot_index;            /* slot + 1 by hash, half full at most */
	size_t slot_index_cap;
	struct block *blocks;            /* by hash of the address, half full at most */
	size_t nblocks, blocks_cap;
	struct range *ranges;            /* by address */
	size_t nranges, ranges_cap;
	struct origin *origins;
	size_t norigins, origins_cap;
	uint32_t free_origin;            /* UINT32_MAX: none */
};

static inline uint64_t mp_fold_mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	return x ^ (x >> 33);
}

/* Room for need elements of elem bytes in *arr (doubling from first): 0, or -1 (failed). */
int mp_fold_grow(struct mp_fold *f, void *arr, size_t *cap, size_t need, size_t elem, size_t first);
/* Give memory of the fold's back (p may be NULL). */
void mp_fold_put(struct mp_fold *f, void *p, size_t bytes);
/* Take bytes (count blocks) allocated in slot by thread off the heap. */
void mp_fold_release(struct mp_fold *f, uint32_t slot, uint32_t thread, uint64_t bytes, uint64_t count);

/* fold-live.c: the live heap blocks (by address) and the pieces of live mappings. */
struct block *mp_fold_block_find(struct mp_fold *f, uint64_t addr);
/* A new entry for addr (not in the table), its slot1 still 0; NULL when memory ran out. */
struct block *mp_fold_block_add(struct mp_fold *f, uint64_t addr);
void mp_fold_block_delete(struct mp_fold *f, struct block *b);
/* The first range that starts at or after addr. */
size_t mp_fold_range_at(const struct mp_fold *f, uint64_t addr);
/* A range inserted at i (room for it there already). */
void mp_fold_range_insert(struct mp_fold *f, size_t i, uint64_t start, uint64_t end, uint32_t origin);
/* Unmap [start, end) (room for one more range there already): the bytes it removed. */
uint64_t mp_fold_unmap(struct mp_fold *f, uint64_t start, uint64_t end);

/* fold-emit.c: a tick of the time series, at time_us with rss. */
void mp_fold_tick(struct mp_fold *f, uint64_t time_us, uint64_t rss);

#endif
