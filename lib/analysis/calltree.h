/*
 * The location-level call tree of an analysis: stacks (trace nodes, whose
 * instruction pointers may expand to several inlined frames) merged into a
 * tree of source locations, with inclusive and self counts. Normal (callers
 * at the root, the allocating frame at the leaves) or inverted (allocating
 * frame at the root, callers below), threads merged or split. Used by the
 * tree, summary and flamegraph reporters.
 */
#ifndef MEMPROF_LIB_ANALYSIS_CALLTREE_H
#define MEMPROF_LIB_ANALYSIS_CALLTREE_H

#include <stddef.h>
#include <stdint.h>

#include "lib/analysis/analysis.h"
#include "lib/util/hash.h"

enum mp_calltree_flags {
	/* The allocating frame at the root, its callers below (flamegraph --inverted). */
	MP_CALLTREE_INVERTED = 1 << 0,
	/* One subtree per thread: nodes are keyed on (parent, location, thread). */
	MP_CALLTREE_SPLIT_THREADS = 1 << 1,
	/*
	 * Every frame of each stack (mp_analysis_stack()), whatever the
	 * analysis' flags; else the frames reports show (mp_analysis_view_stack()).
	 */
	MP_CALLTREE_ALL_FRAMES = 1 << 2,
};

struct mp_calltree_node {
	uint32_t parent;        /* MP_NONE for the root */
	uint32_t location;      /* MP_NONE for the root */
	uint32_t thread;        /* MP_THREAD_MERGED unless split */
	uint32_t depth;         /* 0 for the root */
	/* Children, largest total bytes first; valid after mp_calltree_finish(). */
	uint32_t first_child, next_sibling, nchildren;
	struct mp_counts self;  /* of stacks ending at this node */
	struct mp_counts total; /* of the node and everything below it */
};

struct mp_calltree {
	const struct mp_analysis *a;
	unsigned flags;
	struct mp_calltree_node *nodes; /* nodes[0] is the root */
	size_t n, alloc;
	struct mp_idxset set;           /* (parent, location, thread) -> node */
	uint32_t *stack_buf;
	size_t stack_alloc;
	bool finished;
};

void mp_calltree_init(struct mp_calltree *t, const struct mp_analysis *a, unsigned flags);
void mp_calltree_release(struct mp_calltree *t);
/*
 * Add counts for the stack ending at trace node `stack` (0: no stack) of a
 * thread (MP_THREAD_MERGED when merged); adds c to every node on the path.
 * Returns the node where the stack ends.
 */
uint32_t mp_calltree_add(struct mp_calltree *t, uint32_t stack, uint32_t thread,
			 struct mp_counts c);
/* Add every slot with a non-zero count in view. */
void mp_calltree_add_view(struct mp_calltree *t, enum mp_view view);
/* Link and sort the children (by total bytes, then count, then location). */
void mp_calltree_finish(struct mp_calltree *t);

#endif
