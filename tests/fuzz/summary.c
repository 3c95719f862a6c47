/* Fuzz target: memprof summary, each view sorted by each column, for a pipe and a terminal. */
#include <config.h>

#include "lib/analysis/analysis.h"
#include "lib/report/report.h"
#include "lib/report/summary.h"
#include "lib/util/strbuf.h"
#include "tests/fuzz/fuzz.h"

static void report(const struct mp_analysis *a, size_t run, void *ctx)
{
	struct strbuf out = STRBUF_INIT;
	(void)run;
	(void)ctx;
	for (size_t v = 0; v < FUZZ_N(fuzz_views); v++) {
		struct mp_summary s;
		mp_report_view_title(a, fuzz_views[v], &out);
		mp_summary_build(&s, a, fuzz_views[v]);
		for (int c = MP_SUMMARY_MIN_COLUMN; c <= MP_SUMMARY_MAX_COLUMN; c++) {
			mp_summary_sort(&s, a, c);
			mp_summary_render(&s, a, c, 10, &fuzz_pipe, &out);
			mp_summary_render(&s, a, c, 2, &fuzz_tty, &out);
		}
		mp_summary_release(&s);
	}
	strbuf_release(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct mp_analysis_opts runs[] = { MP_ANALYSIS_OPTS_INIT };
	fuzz_each_analysis(data, size, runs, FUZZ_N(runs), report, NULL);
	return 0;
}
