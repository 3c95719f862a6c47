/*
 * The HTML reports: the report data of an analysis (the JSON of
 * share/templates/README.md, section 3) and the page made from it with
 * its template (lib/report/html-template.h). Memory and time are
 * proportional to the unique stacks and locations, never to the events.
 *
 *	struct mp_html_opts o = MP_HTML_OPTS_INIT;
 *	o.report = MP_HTML_FLAMEGRAPH;
 *	if (mp_html_render(&a, &o, "/usr/share/memprof/templates", &page, &err) < 0) ...
 */
#ifndef MEMPROF_LIB_REPORT_RENDER_HTML_H
#define MEMPROF_LIB_REPORT_RENDER_HTML_H

#include <stdbool.h>

#include "lib/analysis/analysis.h"
#include "lib/util/strbuf.h"

enum mp_html_report {
	MP_HTML_FLAMEGRAPH, /* template flamegraph.html: the call tree */
	MP_HTML_TABLE,      /* template table.html: one row per thread, allocator and site */
};

struct mp_html_opts {
	enum mp_html_report report;
	enum mp_view view;      /* MP_VIEW_PEAK, MP_VIEW_LEAKS or MP_VIEW_TEMPORARY */
	bool inverted;          /* flame graph: allocating functions at the root */
	/*
	 * Flame graph: add the timeline (the analysis must have been made with
	 * MP_ANALYSIS_TEMPORAL); peak and leaks views only.
	 */
	bool temporal;
	const char *capture;    /* meta.capture, the capture's file name; NULL: left out */
	/*
	 * Flame graph: a differential one, the analysis shown (the new capture)
	 * against this one (lib/report/difftree.h); threads merged, not temporal.
	 */
	const struct mp_analysis *base;
	const char *base_capture; /* base_meta.capture; NULL: left out */
	/*
	 * Flame graph: boxes named with C++ names whole (--full-names), not
	 * shortened (locations.short); tooltips always have them whole.
	 */
	bool full_names;
	/*
	 * Several processes (the analysis made with MP_ANALYSIS_SPLIT_PROCESSES):
	 * the page shows them apart at first, else merged.
	 */
	bool split_processes;
};
#define MP_HTML_OPTS_INIT { MP_HTML_FLAMEGRAPH, MP_VIEW_PEAK, false, false, NULL, NULL, NULL, false, false }

/*
 * The bounds of every HTML report, whatever the capture's size: at most
 * MP_HTML_MAX_POINTS points of memory over time (cmd/html.c asks the
 * analysis for no more), and report data of at most MP_HTML_MAX_DATA bytes:
 * a flame graph starts from 50,000 nodes (the least important frames
 * merged, lib/report/html-tree.h) and 50,000 temporal intervals (buckets
 * merged in pairs), a table from 30,000 rows (the smallest merged by
 * allocator and thread), and halves them until the data fits. Every total
 * stays exact; merged frames and rows are named "[smaller frames]" and
 * "[smaller locations]", and the data says how many were merged ("bounds").
 */
#define MP_HTML_MAX_POINTS 2048
#define MP_HTML_MAX_DATA (1900u * 1000)
struct mp_html_report_limits {
	size_t nodes, intervals, rows;
};
#define MP_HTML_LIMITS_INIT { 50000, 50000, 30000 }

/* The report's name ("flamegraph", "table"): its template is <name>.html. */
const char *mp_html_report_name(enum mp_html_report report);

/*
 * Append the report data of a finished analysis to *out: one compact JSON
 * object, not yet escaped for HTML (mp_html_expand() does that). Threads
 * are split when the analysis was made with MP_ANALYSIS_SPLIT_THREADS.
 * Deterministic: the same capture and options give the same bytes. A
 * flame graph of a capture with Python frames has every frame, their
 * classes (locations.class) and the folding of memprof(1) "FRAMES" to do
 * in the page (fold), shown folded unless the analysis was made with
 * MP_ANALYSIS_ALL_FRAMES. Returns
 * 0, or -1 with a one-line reason in *err for options that do not go
 * together (temporal with a table, a temporary view or an analysis without
 * intervals; inverted with a table; the allocated view).
 */
int mp_html_data(const struct mp_analysis *a, const struct mp_html_opts *o, struct strbuf *out,
		 struct strbuf *err);

/*
 * The page of report o of a: its mp_html_data() expanded into the template
 * <template_dir>/<report name>.html by mp_html_expand()
 * (lib/report/html-template.h). Returns 0, or -1 with a one-line reason in
 * *err.
 */
int mp_html_render(const struct mp_analysis *a, const struct mp_html_opts *o,
		   const char *template_dir, struct strbuf *out, struct strbuf *err);

#endif
