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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct mp_analysis_opts runs[] = {
		{ 0, 1, 0, NULL, NULL, NULL },
		{ MP_ANALYSIS_SPLIT_THREADS, 1, 0, NULL, NULL, NULL },
	};
	static const enum mp_view views[] = { MP_VIEW_PEAK, MP_VIEW_LEAKS, MP_VIEW_TEMPORARY };
	static bool quiet;
	if (!quiet) {
		int fd = open("/dev/null", O_WRONLY);
		if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0)
			die_errno("cannot send standard output to /dev/null");
		close(fd);
		quiet = true;
	}
	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		struct mp_analysis a;
		struct strbuf err = STRBUF_INIT;
		bool capture = fuzz_analyse(&a, data, size, &runs[i]);
		for (int f = 0; capture && f < MP_EXPORT_NFORMATS; f++)
			for (size_t v = 0; v < sizeof(views) / sizeof(views[0]); v++) {
				struct mp_export_opts o = { (enum mp_export_format)f, views[v] };
				struct mp_sink sink;
				strbuf_reset(&err);
				FUZZ_CHECK(mp_sink_open(&sink, "-", true, mp_export_format_gzip(o.format),
							&err) == 0);
				FUZZ_CHECK(mp_sink_close(&sink, mp_export_write(&a, &o, &sink) == 0,
							 &err) == 0);
			}
		mp_analysis_release(&a);
		strbuf_release(&err);
		if (!capture)
			break;
	}
	return 0;
}
