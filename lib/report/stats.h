/*
 * The stats report: an analysis' figures (totals, peak, leaks, size
 * histogram, allocator kinds, threads, top locations and modules) as text
 * for the terminal or as JSON with memray's keys where memray has the figure.
 * man/memprof-stats.1 documents both layouts.
 */
#ifndef MEMPROF_LIB_REPORT_STATS_H
#define MEMPROF_LIB_REPORT_STATS_H

#include <stddef.h>

#include "lib/analysis/analysis.h"
#include "lib/report/render-text.h"
#include "lib/util/strbuf.h"

struct mp_stats_opts {
	size_t num_largest;     /* entries in each top list */
	const char *capture;    /* the capture's name, as given */
};

void mp_stats_text(const struct mp_analysis *a, const struct mp_stats_opts *o,
		   const struct mp_term *t, struct strbuf *out);
void mp_stats_json(const struct mp_analysis *a, const struct mp_stats_opts *o,
		   struct strbuf *out);

#endif
