/*
 * The summary report: memray's table of functions. Each (function, file)
 * gets the memory of the stacks it appears in (Total, each stack counted
 * once however often the function recurses in it), the memory of the stacks
 * whose allocation site it is (Own: slot.site, past allocator plumbing),
 * and the allocations of its Total. Stacks as reports show them
 * (mp_analysis_view_stack()).
 */
#ifndef MEMPROF_LIB_REPORT_SUMMARY_H
#define MEMPROF_LIB_REPORT_SUMMARY_H

#include <stddef.h>
#include <stdint.h>

#include "lib/analysis/analysis.h"
#include "lib/util/hash.h"
#include "lib/report/render-text.h"
#include "lib/util/strbuf.h"

struct mp_summary_row {
	uint32_t function;      /* string id */
	uint32_t file;          /* string id: the source file, else the module path, else 0 */
	uint32_t loc;           /* a location of the function (its first one seen) */
	struct mp_counts total, own;
	uint32_t stamp_;        /* last slot counted, to count a stack once */
};

struct mp_summary {
	struct mp_summary_row *rows;
	size_t n, alloc;
	struct mp_counts view_total;
	struct mp_idxset set_;
};

/* Sort columns, as memray numbers them: 1 and 2 total, 3 and 4 own, 5 count. */
enum { MP_SUMMARY_MIN_COLUMN = 1, MP_SUMMARY_MAX_COLUMN = 5 };

void mp_summary_build(struct mp_summary *s, const struct mp_analysis *a, enum mp_view view);
void mp_summary_release(struct mp_summary *s);
/* Sort rows by a column (descending; ties by the other figures, then by name). */
void mp_summary_sort(struct mp_summary *s, const struct mp_analysis *a, int column);
/*
 * Render the first max_rows rows as a table, the sorted column's header
 * marked "<...>", coloured when t says so, fitted to t->width on a terminal.
 */
void mp_summary_render(const struct mp_summary *s, const struct mp_analysis *a, int column,
		       size_t max_rows, const struct mp_term *t, struct strbuf *out);

#endif
