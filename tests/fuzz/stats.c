/* Fuzz target: memprof stats, as text (for a pipe and a terminal) and as JSON. */
#include <config.h>

#include "lib/analysis/analysis.h"
#include "lib/report/stats.h"
#include "lib/util/strbuf.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* The default, and --no-mmap --temporary-allocation-threshold 0. */
	static const struct mp_analysis_opts runs[] = { { 0, 1, 0, NULL, NULL, NULL },
							{ MP_ANALYSIS_NO_MMAP, 0, 0, NULL, NULL, NULL } };
	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		struct mp_analysis a;
		struct strbuf out = STRBUF_INIT;
		bool capture = fuzz_analyse(&a, data, size, &runs[i]);
		if (capture) {
			struct mp_stats_opts o = { i ? 1 : 5, "fuzz.mprof" };
			mp_stats_text(&a, &o, &fuzz_pipe, &out);
			mp_stats_text(&a, &o, &fuzz_tty, &out);
			mp_stats_json(&a, &o, &out);
		}
		mp_analysis_release(&a);
		strbuf_release(&out);
		if (!capture)
			break;
	}
	return 0;
}
