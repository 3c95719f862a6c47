/* Fuzz target: memprof summary, each view sorted by each column, for a pipe and a terminal. */
#include <config.h>

#include "lib/analysis/analysis.h"
#include "lib/report/report.h"
#include "lib/report/summary.h"
#include "lib/util/strbuf.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum mp_view views[] = { MP_VIEW_PEAK, MP_VIEW_LEAKS, MP_VIEW_TEMPORARY };
	struct mp_analysis a;
	struct strbuf out = STRBUF_INIT;
	if (fuzz_analyse(&a, data, size, NULL)) {
		for (size_t v = 0; v < sizeof(views) / sizeof(views[0]); v++) {
			struct mp_summary s;
			mp_report_view_title(&a, views[v], &out);
			mp_summary_build(&s, &a, views[v]);
			for (int c = MP_SUMMARY_MIN_COLUMN; c <= MP_SUMMARY_MAX_COLUMN; c++) {
				mp_summary_sort(&s, &a, c);
				mp_summary_render(&s, &a, c, 10, &fuzz_pipe, &out);
				mp_summary_render(&s, &a, c, 2, &fuzz_tty, &out);
			}
			mp_summary_release(&s);
		}
	}
	mp_analysis_release(&a);
	strbuf_release(&out);
	return 0;
}
