/*
 * The difference between two captures (memprof diff): for each allocation
 * site, named as summary names functions ("function at file", the module's
 * path when the file is unknown, all lines of a function together, so that
 * an edit that moves lines does not show as a change; a native site called
 * from Python with its caller), the memory at the
 * peak, the leaked memory and the allocations of a base and a new analysis.
 * Only the sites where one of them changed are kept, sorted by the largest
 * absolute change of peak or leaked bytes, then of the allocation count.
 */
#ifndef MEMPROF_LIB_REPORT_DIFF_H
#define MEMPROF_LIB_REPORT_DIFF_H

#include <stddef.h>

#include "lib/analysis/analysis.h"
#include "lib/report/render-text.h"
#include "lib/util/hash.h"
#include "lib/util/strbuf.h"

struct mp_diff_side {
	struct mp_counts peak, leaked, allocated;
};

struct mp_diff_row {
	const char *function, *file; /* in the string table of an analysis ("" when unknown) */
	const char *caller, *caller_file; /* the Python caller of a native site (slot.caller), or "" */
	struct mp_diff_side base, new;
};

struct mp_diff {
	struct mp_diff_row *rows;    /* the changed sites, sorted */
	size_t n, alloc;
	struct mp_diff_side total_base, total_new;
	struct mp_idxset set_;
};

/* Compare two finished analyses; both must outlive d. */
void mp_diff_build(struct mp_diff *d, const struct mp_analysis *base, const struct mp_analysis *new);
void mp_diff_release(struct mp_diff *d);

/* The captures' names, for the reports' first lines. */
struct mp_diff_names {
	const char *base, *new;      /* the paths given */
	const struct mp_analysis *base_a, *new_a;
};

/*
 * The diff as text: the totals of both captures and their changes, then a
 * table of the first max_rows sites (Δ columns signed, growth red and
 * shrinkage green on a terminal), or a line saying no site changed.
 */
void mp_diff_text(const struct mp_diff *d, const struct mp_diff_names *names, size_t max_rows,
		  const struct mp_term *t, struct strbuf *out);
/* The diff as JSON (every changed site), pretty-printed. */
void mp_diff_json(const struct mp_diff *d, const struct mp_diff_names *names, struct strbuf *out);

#endif
