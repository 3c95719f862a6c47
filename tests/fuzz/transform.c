/*
 * Fuzz target: memprof transform to each format (pprof, speedscope, folded,
 * csv), each view, threads merged and split, written to standard output
 * (here /dev/null) as `memprof transform -o -` does.
 */
#include <config.h>

#include <fcntl.h>
#include <unistd.h>

#include "lib/analysis/analysis.h"
#include "lib/export/export.h"
#include "lib/export/sink.h"
#include "lib/util/strbuf.h"
#include "lib/util/usage.h"
#include "tests/fuzz/fuzz.h"

static void report(const struct mp_analysis *a, size_t run, void *ctx)
{
	struct strbuf err = STRBUF_INIT;
	(void)run;
	(void)ctx;
	for (int f = 0; f < MP_EXPORT_NFORMATS; f++)
		for (size_t v = 0; v < FUZZ_N(fuzz_views); v++) {
			struct mp_export_opts o = { (enum mp_export_format)f, fuzz_views[v] };
			struct mp_sink sink;
			strbuf_reset(&err);
			FUZZ_CHECK(mp_sink_open(&sink, "-", true, mp_export_format_gzip(o.format), &err) ==
				   0);
			FUZZ_CHECK(mp_sink_close(&sink, mp_export_write(a, &o, &sink) == 0, &err) == 0);
		}
	strbuf_release(&err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct mp_analysis_opts runs[] = {
		{ 0, 1, 0, NULL, NULL, NULL },
		{ MP_ANALYSIS_SPLIT_THREADS, 1, 0, NULL, NULL, NULL },
	};
	static bool quiet;
	if (!quiet) {
		int fd = open("/dev/null", O_WRONLY);
		if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0)
			die_errno("cannot send standard output to /dev/null");
		close(fd);
		quiet = true;
	}
	fuzz_each_analysis(data, size, runs, FUZZ_N(runs), report, NULL);
	return 0;
}
