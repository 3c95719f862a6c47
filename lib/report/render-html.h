/*
 * The HTML reports: the report data of an analysis (the JSON of
 * share/templates/README.md, section 3) and the expansion of a template
 * with it into one self-contained page (section 1). Memory and time are
 * proportional to the unique stacks and locations, never to the events.
 *
 *	struct mp_html_opts o = MP_HTML_OPTS_INIT;
 *	o.report = MP_HTML_FLAMEGRAPH;
 *	if (mp_html_render(&a, &o, "/usr/share/memprof/templates", &page, &err) < 0) ...
 */
#ifndef MEMPROF_LIB_REPORT_RENDER_HTML_H
#define MEMPROF_LIB_REPORT_RENDER_HTML_H

#include <stdbool.h>
#include <stddef.h>

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
};
#define MP_HTML_OPTS_INIT { MP_HTML_FLAMEGRAPH, MP_VIEW_PEAK, false, false, NULL }

/* The report's name ("flamegraph", "table"): its template is <name>.html. */
const char *mp_html_report_name(enum mp_html_report report);

/*
 * Append the report data of a finished analysis to *out: one compact JSON
 * object, not yet escaped for HTML (mp_html_expand() does that). Threads
 * are split when the analysis was made with MP_ANALYSIS_SPLIT_THREADS.
 * Deterministic: the same capture and options give the same bytes. Returns
 * 0, or -1 with a one-line reason in *err for options that do not go
 * together (temporal with a table, a temporary view or an analysis without
 * intervals; inverted with a table; the allocated view).
 */
int mp_html_data(const struct mp_analysis *a, const struct mp_html_opts *o, struct strbuf *out,
		 struct strbuf *err);

/*
 * Expand the template at template_path with the report data (JSON text,
 * white space around it ignored) and append the page to *out, as the
 * README's section 1 says: includes from the template's directory, the
 * single data directive, the escaping rule. The same bytes as
 * tests/browser/render.py. Returns 0, or -1 with a one-line reason in
 * *err (a missing template or include names the path tried) and nothing
 * appended.
 */
int mp_html_expand(const char *template_path, const char *data, size_t len, struct strbuf *out,
		   struct strbuf *err);

/*
 * Both: the page of report o of a, from <template_dir>/<report name>.html.
 * Returns 0, or -1 with a one-line reason in *err.
 */
int mp_html_render(const struct mp_analysis *a, const struct mp_html_opts *o,
		   const char *template_dir, struct strbuf *out, struct strbuf *err);

#endif
