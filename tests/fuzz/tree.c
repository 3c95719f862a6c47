/* Fuzz target: memprof tree, each view, for a pipe (folded chains) and a terminal (whole paths). */
#include <config.h>

#include "lib/analysis/analysis.h"
#include "lib/report/report.h"
#include "lib/report/tree.h"
#include "lib/util/strbuf.h"
#include "tests/fuzz/fuzz.h"

static void report(const struct mp_analysis *a, size_t run, void *ctx)
{
	static const struct mp_tree_opts folded = { .whole_paths = false }, whole = { .whole_paths = true };
	struct strbuf out = STRBUF_INIT;
	(void)run;
	(void)ctx;
	for (size_t v = 0; v < FUZZ_N(fuzz_views); v++) {
		mp_report_view_title(a, fuzz_views[v], &out);
		mp_tree_render(a, fuzz_views[v], 10, &folded, &fuzz_pipe, &out);
		mp_tree_render(a, fuzz_views[v], 1, &whole, &fuzz_tty, &out);
	}
	strbuf_release(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct mp_analysis_opts runs[] = { MP_ANALYSIS_OPTS_INIT };
	fuzz_each_analysis(data, size, runs, FUZZ_N(runs), report, NULL);
	return 0;
}
