/* memprof stats: the figures of a capture on the terminal, or as JSON. */
#include <config.h>
#include <stdio.h>

#include <stdlib.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "cmd/options.h"
#include "cmd/report.h"
#include "lib/analysis/analysis.h"
#include "lib/report/render-text.h"
#include "lib/report/report.h"
#include "lib/report/stats.h"
#include "lib/util/usage.h"

static const struct mp_cmd_spec spec = {
	.name = "stats",
	.synopsis = "[-n N] [--json [-o FILE] [-f]] [--no-mmap] [--children] [--merge] FILE...",
	.summary = "Show the figures of a capture: totals, peak, leaks, size histogram, top locations and modules.",
	.min_args = 1,
	.max_args = -1,
};

int cmd_stats(int argc, char **argv)
{
	struct mp_report_args args = MP_REPORT_ARGS_INIT;
	struct mp_stats_opts sopts = { 5, NULL };
	struct mp_report_json json = { 0 };
	const struct mp_opt opts[] = {
		MP_OPT_UINT('n', "num-largest", "N", &sopts.num_largest, 1, 1000000,
			    "entries in each top list (default 5)"),
		MP_REPORT_JSON_OPTS(&json, "the figures", "memprof-stats-CAPTURE.json next to the capture"),
		MP_REPORT_OPTS(&args),
		MP_REPORT_RAW_LEAF_OPT(&args),
		MP_REPORT_FULL_NAMES_OPT(&args),
		MP_OPT_END,
	};
	int first = mp_parse_options(&spec, opts, argc, argv), status = MP_EXIT_OK;
	const char *capture = argv[first];
	struct mp_analysis a;
	struct strbuf out = STRBUF_INIT;

	mp_report_json_check(&spec, &json);
	sopts.capture = capture;
	if (!mp_report_load_all(&a, (const char *const *)argv + first, (size_t)(argc - first), &args,
				NULL)) {
		mp_analysis_release(&a);
		return MP_EXIT_FAILURE;
	}
	if (json.json) {
		char *path = mp_report_json_path(&json, mp_report_stats_path(capture));
		mp_stats_json(&a, &sopts, &out);
		status = mp_report_json_write(&json, path, &out);
		free(path);
	} else {
		struct mp_term term;
		mp_report_term(&args, &term);
		mp_stats_text(&a, &sopts, &term, &out);
		fwrite(out.buf, 1, out.len, stdout);
	}
	strbuf_release(&out);
	mp_analysis_release(&a);
	return status;
}
