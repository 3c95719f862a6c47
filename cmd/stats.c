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

enum { OPT_JSON = 256 };

static const struct mp_opt opts[] = {
	{ 'n', 'n', "num-largest", "N", "entries in each top list (default 5)" },
	{ OPT_JSON, 0, "json", NULL, "write the figures as JSON to a file instead" },
	{ 'o', 'o', "output", "FILE", "the JSON file (default: memprof-stats-CAPTURE.json next to the capture)" },
	{ 'f', 'f', "force", NULL, "overwrite the JSON file if it exists" },
	MP_REPORT_NO_MMAP_OPT,
	{ 0 },
};

static const struct mp_cmd_spec spec = {
	.name = "stats",
	.synopsis = "[-n N] [--json [-o FILE] [-f]] [--no-mmap] FILE",
	.summary = "Show the figures of a capture: totals, peak, leaks, size histogram, top locations and modules.",
	.opts = opts,
	.min_args = 1,
	.max_args = 1,
};

int cmd_stats(int argc, char **argv)
{
	struct mp_getopt g = { argc, argv, 0, NULL, 0 };
	struct mp_report_args args = MP_REPORT_ARGS_INIT;
	struct mp_stats_opts sopts = { 5, NULL };
	struct mp_analysis a;
	struct strbuf out = STRBUF_INIT, err = STRBUF_INIT;
	const char *output = NULL, *capture;
	char *path = NULL;
	bool json = false, force = false;
	int status = MP_EXIT_OK, c;

	while ((c = mp_getopt(&spec, &g)) != -1) {
		if (mp_report_option(&spec, &args, c, g.arg))
			continue;
		switch (c) {
		case 'n':
			sopts.num_largest = mp_opt_uint(&spec, "--num-largest", g.arg, 1, 1000000);
			break;
		case OPT_JSON:
			json = true;
			break;
		case 'o':
			output = g.arg;
			break;
		case 'f':
			force = true;
			break;
		}
	}
	if (!json && (output || force))
		mp_usage_error(&spec, "option '%s' needs --json", output ? "--output" : "--force");
	capture = argv[g.optind];
	sopts.capture = capture;
	if (!mp_report_load(&a, capture, &args, NULL)) {
		mp_analysis_release(&a);
		return MP_EXIT_FAILURE;
	}
	if (json) {
		path = output ? NULL : mp_report_stats_path(capture);
		mp_stats_json(&a, &sopts, &out);
		if (mp_report_write_file(output ? output : path, out.buf, out.len, force, &err) < 0) {
			error("%s", err.buf);
			status = MP_EXIT_FAILURE;
		} else {
			printf("Wrote %s\n", output ? output : path);
		}
	} else {
		struct mp_term term;
		mp_term_detect(&term, STDOUT_FILENO);
		mp_stats_text(&a, &sopts, &term, &out);
		fwrite(out.buf, 1, out.len, stdout);
	}
	free(path);
	strbuf_release(&out);
	strbuf_release(&err);
	mp_analysis_release(&a);
	return status;
}
