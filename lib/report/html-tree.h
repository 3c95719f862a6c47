/*
 * The flame graph's data, bounded: the call tree of a view in preorder and,
 * for temporal reports, the timeline of share/templates/README.md, with at
 * most a given number of nodes and intervals whatever the capture's size.
 *
 * Over the node limit, the nodes that matter least (by their bytes in the
 * view and, in temporal reports, by the most they held live at any
 * bucket's high-water mark, both counting their descendants) are merged,
 * under each parent kept, into one node of merged frames: every total
 * stays exact, only detail goes. Over the interval limit, the node limit
 * is halved (the stacks that mattered most at some moment stay, the rest
 * merge) down to 2,000 nodes; then neighbouring buckets are merged in pairs,
 * as the analysis itself merges them when its series is full
 * (lib/analysis/series.c), until the intervals fit.
 */
#ifndef MEMPROF_LIB_REPORT_HTML_TREE_H
#define MEMPROF_LIB_REPORT_HTML_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/analysis/analysis.h"

/* The location of a node that stands for merged frames. */
#define MP_HTML_MERGED_LOC (MP_NONE - 1)

struct mp_html_node {
	uint32_t depth;
	uint32_t location;      /* analysis location; MP_NONE for the root, MP_HTML_MERGED_LOC */
	uint32_t thread;        /* MP_THREAD_MERGED unless threads are split */
	struct mp_counts self;
};

struct mp_html_interval {
	uint32_t node, alloc, free; /* free MP_NONE: never */
	struct mp_counts c;
};

struct mp_html_tree {
	struct mp_html_node *nodes;     /* in preorder, the root first */
	size_t n;
	size_t merged;                  /* nodes of merged frames among them */
	size_t frames_merged;           /* call tree nodes they stand for */
	/* Temporal: nbuckets buckets, bucket_us has nbuckets + 1 boundaries. */
	uint64_t *bucket_us, *hwm_us, *hwm_bytes;
	size_t nbuckets, buckets_merged; /* buckets_merged: of the analysis's, halvings */
	struct mp_html_interval *iv;
	size_t niv;
};

struct mp_html_limits {
	size_t nodes, intervals;
};

/*
 * Build the tree of view of a finished analysis (inverted, with threads
 * split, with the timeline when temporal: the analysis must have
 * intervals) within the limits.
 */
void mp_html_tree_build(struct mp_html_tree *t, const struct mp_analysis *a, enum mp_view view,
			bool inverted, bool split, bool temporal, const struct mp_html_limits *lim);
void mp_html_tree_release(struct mp_html_tree *t);

#endif
