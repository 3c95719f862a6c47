/* memprof flamegraph: the call tree of a capture as an HTML flame graph. */
#include <config.h>
#include <stdio.h>

#include "cmd/cmd.h"
#include "cmd/html.h"
#include "cmd/options.h"
#include "cmd/report.h"

static const struct mp_opt opts[] = {
	MP_HTML_OUTPUT_OPTS,
	MP_REPORT_VIEW_OPTS,
	{ MP_OPT_TEMPORAL, 0, "temporal", NULL,
	  "add the memory over time: the graph shows the peak (or the leaks) of a time window" },
	{ MP_OPT_INVERTED, 0, "inverted", NULL, "put the allocating functions at the root" },
	MP_HTML_SPLIT_THREADS_OPT,
	{ MP_OPT_DIFF, 0, "diff", "BASE",
	  "a differential flame graph of FILE against the capture BASE: growth red, shrinkage blue" },
	{ MP_OPT_MAX_RECORDS, 0, "max-memory-records", "N",
	  "at most N points of memory over time (and time windows; at most and by default 2048)" },
	MP_REPORT_NO_MMAP_OPT,
	MP_REPORT_ALL_FRAMES_OPT,
	MP_REPORT_FULL_NAMES_OPT,
	{ 0 },
};

static const struct mp_cmd_spec spec = {
	.name = "flamegraph",
	.synopsis = "[-o FILE] [-f] [--leaks | --temporary-allocations | "
		    "--temporary-allocation-threshold N] [--temporal] [--inverted] "
		    "[--split-threads] [--diff BASE] [--max-memory-records N] [--no-mmap] FILE",
	.summary = "Write an HTML flame graph of the memory at the peak (or leaked, or temporary).",
	.opts = opts,
	.min_args = 1,
	.max_args = 1,
};

static int check(int argc, char **argv, const char *capture, struct strbuf *err)
{
	return mp_html_check(&spec, MP_HTML_FLAMEGRAPH, argc, argv, capture, err);
}

static int run(int argc, char **argv, FILE *msgs)
{
	struct mp_html_args args;
	mp_html_parse(&spec, MP_HTML_FLAMEGRAPH, argc, argv, &args, NULL);
	return mp_html_run(&args, msgs);
}

int cmd_flamegraph(int argc, char **argv)
{
	return run(argc, argv, stdout);
}

const struct mp_reporter mp_reporter_flamegraph = { "flamegraph", check, run };
