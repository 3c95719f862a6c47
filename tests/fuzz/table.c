/* Fuzz target: memprof table's page, each view, threads merged and split. */
#include <config.h>

#include "lib/analysis/analysis.h"
#include "lib/report/render-html.h"
#include "tests/fuzz/fuzz.h"

static void report(const struct mp_analysis *a, size_t run, void *ctx)
{
	(void)run;
	for (size_t v = 0; v < FUZZ_N(fuzz_views); v++) {
		struct mp_html_opts o = MP_HTML_OPTS_INIT;
		o.report = MP_HTML_TABLE;
		o.view = fuzz_views[v];
		o.capture = "fuzz.mprof";
		fuzz_html(a, &o, v == 0 && *(const bool *)ctx);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct mp_analysis_opts runs[] = {
		{ 0, 1, MP_HTML_MAX_POINTS, NULL, NULL, NULL },
		{ MP_ANALYSIS_SPLIT_THREADS, 1, MP_HTML_MAX_POINTS, NULL, NULL, NULL },
	};
	bool whole = fuzz_whole_page(size);
	fuzz_each_analysis(data, size, runs, FUZZ_N(runs), report, &whole);
	return 0;
}
