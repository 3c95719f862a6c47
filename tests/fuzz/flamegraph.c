/*
 * Fuzz target: memprof flamegraph's page, each view, inverted, with the
 * timeline (--temporal) and threads split, as cmd/html.c analyses for it.
 */
#include <config.h>

#include "lib/analysis/analysis.h"
#include "lib/report/render-html.h"
#include "tests/fuzz/fuzz.h"

static void report(const struct mp_analysis *a, size_t run, void *ctx)
{
	(void)run;
	for (size_t v = 0; v < FUZZ_N(fuzz_views); v++)
		for (int how = 0; how < 3; how++) {
			struct mp_html_opts o = MP_HTML_OPTS_INIT;
			o.view = fuzz_views[v];
			o.inverted = how == 1;
			o.temporal = how == 2;
			o.capture = "fuzz.mprof";
			/* The whole page at most once; the data, which is what varies, for the others. */
			fuzz_html(a, &o, v == 0 && how == 0 && *(const bool *)ctx);
		}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct mp_analysis_opts runs[] = {
		{ MP_ANALYSIS_TEMPORAL, 1, MP_HTML_MAX_POINTS, NULL, NULL, NULL },
		{ MP_ANALYSIS_SPLIT_THREADS, 1, MP_HTML_MAX_POINTS, NULL, NULL, NULL },
	};
	bool whole = fuzz_whole_page(size);
	fuzz_each_analysis(data, size, runs, FUZZ_N(runs), report, &whole);
	return 0;
}
