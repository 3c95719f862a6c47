/* Recording allocation and free events (record.c), called by the hooks. */
#ifndef MEMPROF_LIB_TRACKER_RECORD_H
#define MEMPROF_LIB_TRACKER_RECORD_H

#include <stddef.h>
#include <stdint.h>

#include "lib/tracker/base.h"

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
};

/*
 * The caller's stack, found before the allocation is made: the stack map's
 * slot for it then comes into the cache while the allocator runs. Nothing
 * of the program may run between this and mp_record_alloc_at().
 */
void mp_record_site(struct mp_site *site) MP_HIDDEN;
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
