/*
 * The reader's side of the transport (lib/transport/ring.h): the rings of one
 * tracked process merged, in key order, into the tracker's stream format
 * (lib/format/encode.h), with a THREAD_SWITCH to ring i before ring i's
 * events. Allocation-free: the caller provides the state (mp_merge_init), so
 * the tracker uses it too, for the captures it writes itself.
 *
 * A round takes every record it can prove is older than any record still to
 * be published: it reads the clock (or the counter), makes every thread of
 * the process pass a memory barrier (membarrier(2), for the time-stamp
 * clock), then reads each ring's busy flag. A ring that is not busy will only
 * publish records newer than that reading; a busy ring's record in flight is
 * newer than the ring's last published one. Records older than every such
 * bound are merged; the rest wait for the next round. A final round, once the
 * process is gone, merges everything published.
 */
#ifndef MEMPROF_LIB_TRANSPORT_MERGE_H
#define MEMPROF_LIB_TRANSPORT_MERGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/transport/ring.h"

/* The reader's state of one ring. */
struct mp_rring {
	uint64_t tail;          /* consumed, as published to the writer */
	uint64_t pos;           /* the next record not yet merged */
	uint64_t pos_key;       /* the key of the record before pos (keys are deltas) */
	uint64_t scan, scan_key;/* a busy ring's records are read ahead to scan; the last one's key */
	uint64_t head;          /* the head last read */
	uint64_t next_key;      /* the record at pos, once peeked: its key, */
	uint64_t next_size;     /* its whole size in the ring, */
	uint32_t next_off;      /* where its bytes start and how many there are */
	uint32_t next_len;
	uint32_t heap_pos;      /* 1 + its place in the heap, 0 when not there */
	bool broken;            /* corrupt: no longer read */
	bool stale;             /* busy, unmoved past MP_RING_STALE_NS: bounds nothing */
	uint64_t busy_head;     /* the head when it was last seen busy, */
	uint64_t busy_since;    /* since when (CLOCK_MONOTONIC ns), 0: not busy */
	uint32_t tid_there;     /* the writer's id that tid_here was found for (mp_merge.tid_here) */
	uint32_t tid_here;
};


/* Where merged bytes go; returns nonzero to stop the round (no room). */
typedef int (*mp_merge_out_fn)(void *ctx, const uint8_t *p, size_t n);

struct mp_merge {
	void *base;             /* the mapping */
	struct mp_shm_header *h;
	uint64_t mapped;        /* bytes of the mapping safe to read (the file's size) */
	struct mp_rring *r;     /* max_rings entries, zeroed */
	uint32_t *heap;         /* max_rings entries: rings with a record to merge, by key */
	uint32_t nheap;
	uint32_t nrings;        /* rings known */
	uint32_t cur;           /* the ring of the last event merged, or UINT32_MAX */
	uint64_t records;       /* records merged so far */
	uint32_t broken;        /* rings found corrupt */
	uint32_t unfenced;      /* rounds whose memory barrier failed */
	uint64_t last_key;      /* the key of the last record merged */
	uint64_t late;          /* records merged after a newer one: their order was lost */
	uint64_t stale;         /* times a ring was merged past, busy and unmoved (MP_RING_STALE_NS) */
	/* The last round's bound: every record with an older key was merged by it. */
	uint64_t bound;
	/*
	 * When the writers' threads are numbered in another pid namespace than
	 * the reader's (a container's): how to find a writer's thread here, to
	 * see whether it sleeps (mp_ring_writer_left()); 0 when none is found.
	 * NULL when both share one, as after mp_merge_init().
	 */
	uint32_t (*tid_here)(void *ctx, uint32_t tid);
	void *tid_ctx;
};

/*
 * Whether this process may make another's threads pass a memory barrier
 * (membarrier(2), MEMBARRIER_CMD_GLOBAL_EXPEDITED): the time-stamp clock
 * needs it; a collector that may not asks its trackers for the counter.
 */
bool mp_merge_can_fence(void);
/*
 * Check a mapping's header (the first page, of size bytes readable): 0, or
 * -1 with a reason in *why when it is not a ring mapping this code reads.
 */
int mp_merge_check(const void *base, uint64_t size, const char **why);
/*
 * Start reading the mapping at base with state r and heap (each of
 * h->max_rings zeroed entries); mapped is how much of it may be read.
 */
void mp_merge_init(struct mp_merge *m, void *base, uint64_t mapped, struct mp_rring *r,
		   uint32_t *heap);
/* How many rings the writer has handed out (to grow the readable size first). */
uint32_t mp_merge_rings(const struct mp_merge *m);
/*
 * One round: merge into out every record proven older than any still to
 * come, or, when final, everything published. Returns the number of records
 * merged; -1 when out asked to stop (call again after making room); -2 when
 * the writer handed out rings beyond the readable size (m->mapped): grow it
 * (mp_shm_needed(m->h, mp_merge_rings(m)) bytes) and call again.
 */
long mp_merge_round(struct mp_merge *m, bool final, mp_merge_out_fn out, void *ctx);
/*
 * Where mp_merge_round_buf() copies records: from p, advanced past them,
 * up to end. It may write up to MP_MERGE_SLACK bytes past the records it
 * copies (a short record is copied in one 16-byte move), never past end.
 */
struct mp_merge_buf {
	uint8_t *p, *end;
};
#define MP_MERGE_SLACK 16
/*
 * As mp_merge_round(), the records copied into b instead of handed out one
 * by one (the collector's drain: most records are a few bytes, and a call
 * for each cost more than the rest of the merge); -1 when the next record
 * does not fit in b: call again with more room.
 */
long mp_merge_round_buf(struct mp_merge *m, bool final, struct mp_merge_buf *b);
/*
 * A reading of the order keys' clock (the time-stamp counter, or the
 * counter): a record published later whose event came before it has an
 * older key. A round whose bound is past it merged every such record.
 */
uint64_t mp_merge_clock(const struct mp_merge *m);
/* Whether any ring holds records not yet merged. */
bool mp_merge_pending(const struct mp_merge *m);

#endif
