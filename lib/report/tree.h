/*
 * The tree report: the call tree of the biggest allocation stacks of a view,
 * as text with box-drawing indentation (for pipes and CI logs, not a TUI).
 * The other stacks are folded into one line; branchless chains of calls
 * are printed on one line, long ones with their library and runtime frames
 * folded into "… N more …" (never a Python frame, nor the innermost frame
 * of the program's own code). Siblings never read the same: those that
 * would show the line of each call ("main:15 → fill"), then whole names.
 * Stacks as reports show them (mp_analysis_view_stack()), lines fitted to
 * the terminal (struct mp_term: limit, full_names).
 */
#ifndef MEMPROF_LIB_REPORT_TREE_H
#define MEMPROF_LIB_REPORT_TREE_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/analysis/analysis.h"
#include "lib/report/render-text.h"
#include "lib/util/strbuf.h"

/* Chains longer than this show their first and last frames around "… N more …". */
#define MP_TREE_CHAIN_MAX 4

struct mp_tree_opts {
	bool whole_paths;       /* every frame of every chain: no "… N more …" (--whole-paths) */
};

/*
 * Render the tree of the `biggest` largest stacks (by bytes in the view,
 * threads and allocator kinds merged). Percentages are of the whole view.
 */
void mp_tree_render(const struct mp_analysis *a, enum mp_view view, size_t biggest,
		    const struct mp_tree_opts *o, const struct mp_term *t, struct strbuf *out);

#endif
