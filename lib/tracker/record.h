/* Recording allocation and free events (record.c), called by the hooks. */
#ifndef MEMPROF_LIB_TRACKER_RECORD_H
#define MEMPROF_LIB_TRACKER_RECORD_H

#include <stddef.h>
#include <stdint.h>

#include "lib/tracker/base.h"
#include "lib/tracker/unwind.h"

struct mp_wring;

struct mp_tstate;
struct mp_uframe;

/* The caller's stack, found before an allocation (mp_record_site), recorded with it after. */
struct mp_site {
	struct mp_tstate *ts;
	struct mp_uframe *frames;  /* the walker's frames, or NULL: the stack is in ts->scratch */
	uint64_t h[2];             /* the stack's hash (frames) */
	int n, depth, k;           /* frames walked (-1: scratch), scratch's depth, cached prefix */
	uint32_t node;             /* the walker knew the stack: its node (else 0), */
	uint32_t gen;              /* of the nodes it knows (mp_nodes_gen) */
	int8_t py;                 /* Python frames are part of it (ts->py, python.h) */
	int8_t hashed;             /* with Python frames: h holds the whole stack's hash */
	int8_t truncated;          /* the walker kept only the innermost frames */
	int8_t pending;            /* the walker's known-stack check is left to mp_record_settle() */
	int8_t cut;                /* h is that of the stack cut (deeper than --max-depth) */
};

/*
 * The caller's stack, found before the allocation is made: the stack map's
 * slot for it (or, with MP_SITE_DEFER, the known-stack table's) then comes
 * into the cache while the allocator runs. Nothing of the program may run
 * between this and mp_record_alloc_at(). mode: MP_SITE_NOW, or
 * MP_SITE_DEFER, whose caller calls mp_record_settle() before
 * mp_record_alloc_at(), from the same function.
 */
/* A site's modes are the walker's (unwind.h). */
#define MP_SITE_NOW MP_UNWIND_NOW
#define MP_SITE_DEFER MP_UNWIND_DEFER
#define MP_SITE_AGAIN MP_UNWIND_AGAIN
void mp_record_site(struct mp_site *site, int mode) MP_HIDDEN;
/* A pending site known (1, with its node), else 0 (the caller walks it: mp_record_settle()). */
int mp_record_known(struct mp_site *site) MP_HIDDEN;

/*
 * After the allocator returned: a pending known-stack check made, and on a
 * miss the stack walked now. Always inlined into the hook that called
 * mp_record_site(), so that both calls of it start at one stack pointer.
 */
static inline __attribute__((always_inline)) void mp_record_settle(struct mp_site *site)
{
	if (site->pending && !mp_record_known(site))
		mp_record_site(site, MP_SITE_AGAIN);
}
/* An allocation of size bytes at addr, made from site. */
void mp_record_alloc_at(struct mp_site *site, unsigned kind, void *addr, size_t size) MP_HIDDEN;
/* An allocation of size bytes at addr, with the caller's stack. */
void mp_record_alloc(unsigned kind, void *addr, size_t size) MP_HIDDEN;
/* A deallocation of the block at addr: recorded before the real free. */
void mp_record_free(unsigned kind, void *addr) MP_HIDDEN;
/* A deallocation of the pages [addr, addr + size) (munmap, MAP_FIXED, mremap). */
void mp_record_free_range(unsigned kind, void *addr, size_t size) MP_HIDDEN;
/* A LOST record for the events this thread's nested hooks counted (base.h, mp_note_nested()), if any. */
void mp_record_nested_lost(struct mp_wring *w) MP_HIDDEN;

#endif
