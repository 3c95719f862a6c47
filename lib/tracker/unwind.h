/*
 * The tracker's stack walker: DWARF call-frame information read from the
 * loaded modules' .eh_frame_hdr, a per-thread cache of frame descriptors, and
 * incremental unwinding that reuses the previous stack of the thread once it
 * proves the older frames unchanged. Anything it does not handle (CFA
 * expressions, signal frames, stacks it cannot bound) falls back to
 * libunwind's unw_backtrace for that event.
 */
#ifndef MEMPROF_LIB_TRACKER_UNWIND_H
#define MEMPROF_LIB_TRACKER_UNWIND_H

#include <stdint.h>

#include "lib/tracker/base.h"

struct mp_unwinder;

/*
 * A frame of the last walk. ra is the return address (the caller's ip); node
 * and depth belong to the caller: they stay with the frame while later walks
 * find it unchanged, so per-frame results need computing only for new frames.
 */
struct mp_uframe {
	uint64_t cfa, ra, rbp_in, rbp_slot, rbp_val;
	uint64_t hash[2];      /* caller data: the stack's hash up to this frame */
	uint8_t flags;
	uint8_t needs_rbp;
	uint32_t node, depth;  /* caller data: node MP_UFRAME_NO_NODE when not computed */
};
#define MP_UFRAME_NO_NODE UINT32_MAX

/* Per-thread state; NULL when it cannot be set up (the caller uses libunwind). */
struct mp_unwinder *mp_unwinder_new(void) MP_HIDDEN;
void mp_unwinder_free(struct mp_unwinder *u) MP_HIDDEN;
/* Set u up for the calling thread, which takes it over from an ended one; -1: cannot. */
int mp_unwinder_reuse(struct mp_unwinder *u) MP_HIDDEN;

/*
 * Walk the caller's stack. Returns the number of frames, innermost first in
 * *frames (their ra fields are the return addresses unw_backtrace would
 * give), and in *stable how many of them, counted from the outermost, are
 * unchanged since the previous walk (their hash, node and depth fields are
 * as the caller left them). A stack deeper than the walker keeps (its limit,
 * or all it can) returns its innermost frames with *truncated set. Returns
 * -1 when the walk needs libunwind instead (the next walk then starts afresh).
 *
 * With a nonzero seed (the caller's generation of nodes), a stack whose
 * walk the caller taught its node (mp_unwind_learn) and whose words are all
 * as they were is not walked: MP_UNWIND_KNOWN, with the node in *node.
 */
#define MP_UNWIND_KNOWN (-2)
/*
 * mode MP_UNWIND_NOW: as above. MP_UNWIND_DEFER: a stack that could be
 * known is only fingerprinted, and its set of the known-stack table
 * requested from memory: MP_UNWIND_PENDING, and mp_unwind_check() tells
 * later, once the allocator has run while that line came (on a program
 * whose stacks outnumber what stays in cache, the load of that line was
 * most of a walk's cost). MP_UNWIND_AGAIN: the walk after a check that
 * failed; it must start at the same stack pointer as the deferred call
 * (the walker's shapes are per stack pointer), so that the stack it walks
 * is taught under the fingerprint the check used.
 */
enum { MP_UNWIND_NOW = 0, MP_UNWIND_DEFER = 1, MP_UNWIND_AGAIN = 2 };
#define MP_UNWIND_PENDING (-3)
/* How many frames a walk keeps: mp_unwind_set_limit(); 0 (the default) is all it can. */
void mp_unwind_set_limit(struct mp_unwinder *u, int limit) MP_HIDDEN;
int mp_unwind(struct mp_unwinder *u, uint64_t seed, struct mp_uframe **frames, int *stable,
	      int *truncated, uint32_t *node, int mode) MP_HIDDEN;
/* After MP_UNWIND_PENDING: 1 with the stack's node in *node when it is known, else 0. */
int mp_unwind_check(struct mp_unwinder *u, uint32_t *node) MP_HIDDEN;
/* The leaf node of the stack the last mp_unwind() walked, for the next walk of the same stack. */
void mp_unwind_learn(struct mp_unwinder *u, uint32_t node) MP_HIDDEN;
/* Forget the previous walk (its caller data are no longer valid). */
void mp_unwind_forget(struct mp_unwinder *u) MP_HIDDEN;
/*
 * A walk, or a change to what u caches, was left half done (a signal
 * handler that interrupted it never returned): forget what it may have
 * been writing. The known stacks stay (an entry is made valid last).
 */
void mp_unwinder_recover(struct mp_unwinder *u) MP_HIDDEN;
/* The bounds of the stack u walks; 0. */
int mp_unwind_stack(const struct mp_unwinder *u, uint64_t *lo, uint64_t *hi) MP_HIDDEN;

/* Code may have been unmapped (dlclose): forget every cached descriptor. */
void mp_unwind_code_changed(void) MP_HIDDEN;

/*
 * Stacks walked by libunwind, not by this walker (record.c counts them),
 * since the process started; each costs some system calls and far more
 * time. The stream carries the count (UNWIND records, stream.c), and the
 * capture's trailer.
 */
extern uint64_t mp_libunwind_walks MP_HIDDEN;

/* Counters for tests and benchmarks. */
struct mp_unwind_stats {
	uint64_t walks, fallbacks, frames_walked, frames_reused, descriptor_misses, known;
};
void mp_unwind_get_stats(struct mp_unwinder *u, struct mp_unwind_stats *st) MP_HIDDEN;

#endif
