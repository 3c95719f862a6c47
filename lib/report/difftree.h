/*
 * The call trees of two analyses merged, for the differential flame graph
 * (memprof flamegraph --diff): a node per call path of source locations
 * (function, file, line, module, compared as text, since the captures
 * number them apart) present in either, with the view's counts of both.
 * Threads are merged. Nodes are in preorder, siblings by decreasing bytes
 * of the new capture, then of the base, then by function name.
 */
#ifndef MEMPROF_LIB_REPORT_DIFFTREE_H
#define MEMPROF_LIB_REPORT_DIFFTREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/analysis/analysis.h"

enum { MP_DIFF_BASE, MP_DIFF_NEW };

struct mp_difftree_node {
	uint32_t depth;                 /* 0 for the root (node 0 only) */
	/* The location, in the new analysis when it has one with this text, else in the base. */
	uint32_t side, loc;             /* MP_DIFF_BASE or MP_DIFF_NEW; loc MP_NONE for the root */
	struct mp_counts self[2];       /* [MP_DIFF_BASE], [MP_DIFF_NEW]: stacks ending here */
	struct mp_counts total[2];      /* and with everything below */
};

struct mp_difftree {
	struct mp_difftree_node *nodes;
	size_t n;
};

/* Merge the view of base and of new (inverted: allocating functions at the root). */
void mp_difftree_build(struct mp_difftree *t, const struct mp_analysis *base,
		       const struct mp_analysis *new, enum mp_view view, bool inverted);
void mp_difftree_release(struct mp_difftree *t);

#endif
