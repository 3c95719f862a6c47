/*
 * Stack deduplication in the tracker (stacks.c): the trace tree, whose nodes
 * are (parent node, return address) pairs numbered in the order their TRACE
 * records are written, and the stack map from a whole stack's hash to its
 * leaf node, read without a lock.
 */
#ifndef MEMPROF_LIB_TRACKER_STACKS_H
#define MEMPROF_LIB_TRACKER_STACKS_H

#include <stddef.h>
#include <stdint.h>

#include "lib/tracker/base.h"
#include "lib/tracker/threads.h"
#include "lib/tracker/unwind.h"

/*
 * Whole stacks: a 96-bit hash of a stack's return addresses (outermost
 * first) -> its leaf trace node. Programs allocate from their stacks over and
 * over; a known one costs one probe here instead of one trace-tree probe per
 * frame. Read without a lock: entries are only ever added, under the tree's lock,
 * the key's first word last; a grown table replaces the old one, which stays
 * (readers may still be in it).
 */
struct smap_entry {
	uint64_t h0;     /* 0: empty */
	uint32_t h1;     /* 96 bits of fingerprint in all: 16-byte slots keep the table in cache */
	uint32_t node;
};
struct mp_smap_table {
	size_t mask, count;
	struct smap_entry e[];
};
extern struct mp_smap_table *mp_smap MP_HIDDEN;

/* The leaf node of the stack hashed h, or 0 when unknown (no lock needed). */
static inline uint32_t mp_smap_get(const uint64_t h[2])
{
	const struct mp_smap_table *m = __atomic_load_n(&mp_smap, __ATOMIC_ACQUIRE);
	size_t mask;
	if (unlikely(!m))
		return 0;
	/* 0 in a table given back (see mp_smap_put): unknown. */
	mask = __atomic_load_n(&m->mask, __ATOMIC_RELAXED);
	if (unlikely(!mask))
		return 0;
	for (size_t i = h[0] & mask;; i = (i + 1) & mask) {
		uint64_t k = __atomic_load_n(&m->e[i].h0, __ATOMIC_ACQUIRE);
		if (!k)
			return 0;
		if (k == h[0] && m->e[i].h1 == (uint32_t)h[1])
			return m->e[i].node;
	}
}

/* Start loading the stack map's slot for h: the probe comes after the lock is taken. */
static inline void mp_smap_prefetch(const uint64_t h[2])
{
	const struct mp_smap_table *m = __atomic_load_n(&mp_smap, __ATOMIC_RELAXED);
	if (likely(m != NULL))
		__builtin_prefetch(&m->e[h[0] & __atomic_load_n(&m->mask, __ATOMIC_RELAXED)]);
}

/*
 * The slow path: a stack as innermost-first return addresses (from our walker
 * or from libunwind) in ts->raw into ts->scratch, root first, without the
 * tracker's own frames, cut to --max-depth; returns the depth.
 */
int mp_stack_from_ips(struct mp_tstate *ts, int n, int truncated) MP_HIDDEN;
/*
 * The leaf trace node of the stack in ts->scratch, whose first k frames are
 * those of the thread's cached stack; new nodes are added under the tree's
 * lock. 0 on failure.
 */
uint32_t mp_slow_stack_node(struct mp_tstate *ts, int depth, int k) MP_HIDDEN;
/*
 * The fast path's second half, for a stack the stack map did not know
 * (hashed h): under the tree's lock, trace nodes from the innermost of the
 * walker's frames whose node is known, then the stack map learns the stack.
 * Returns the leaf's node, or 0 when the tree is full or tracking stopped.
 */
uint32_t mp_fast_stack_node(struct mp_tstate *ts, struct mp_uframe *f, int n, const uint64_t h[2]) MP_HIDDEN;
/* The stack map learns that the stack hashed h has the leaf node `node` (taking the tree's lock). */
void mp_smap_learn(const uint64_t h[2], uint32_t node) MP_HIDDEN;
/* Room for the first nodes; 0 or -1. */
int mp_stacks_grow(void) MP_HIDDEN;
/* A new stream numbers its nodes afresh. */
void mp_stacks_reset(void) MP_HIDDEN;
/*
 * Code in the n ranges [gone[i][0], gone[i][1]) was unloaded (dlclose): the
 * nodes of its return addresses are forgotten, so that another module
 * loaded there later gets nodes of its own, and the stack map and every
 * thread's cached nodes start again (mp_nodes_gen).
 */
void mp_stacks_forget_code(const uint64_t (*gone)[2], size_t n) MP_HIDDEN;
/*
 * The nodes' generation: what a thread caches about nodes (its last stack,
 * its walker's frames, a site between walk and record) is good while this
 * is unchanged. It changes with a new stream and with unloaded code.
 */
extern uint32_t mp_nodes_gen MP_HIDDEN;
/* The tree's lock, held across fork. */
void mp_stacks_lock(void) MP_HIDDEN;
void mp_stacks_unlock(void) MP_HIDDEN;
/* In a forked child: the lock is free. */
void mp_stacks_forked(void) MP_HIDDEN;

#endif
