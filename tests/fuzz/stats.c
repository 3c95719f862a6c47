/* Fuzz target: memprof stats, as text (for a pipe and a terminal) and as JSON. */
#include <config.h>

#include "lib/analysis/analysis.h"
#include "lib/report/stats.h"
#include "lib/util/strbuf.h"
#include "tests/fuzz/fuzz.h"

static void report(const struct mp_analysis *a, size_t run, void *ctx)
{
	struct mp_stats_opts o = { run ? 1 : 5, "fuzz.mprof" };
	struct strbuf out = STRBUF_INIT;
	(void)ctx;
	mp_stats_text(a, &o, &fuzz_pipe, &out);
	mp_stats_text(a, &o, &fuzz_tty, &out);
	mp_stats_json(a, &o, &out);
	strbuf_release(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* The default, and --no-mmap --temporary-allocation-threshold 0. */
	static const struct mp_analysis_opts runs[] = { { 0, 1, 0, NULL, NULL, NULL },
							{ MP_ANALYSIS_NO_MMAP | MP_ANALYSIS_RAW_LEAF, 0, 0, NULL, NULL, NULL } };
	fuzz_each_analysis(data, size, runs, FUZZ_N(runs), report, NULL);
	return 0;
}
