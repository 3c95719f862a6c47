/* memprof flamegraph: the call tree of a capture as an HTML flame graph. */
#include <config.h>
#include <stdio.h>

#include <stdint.h>

#include "cmd/cmd.h"
#include "cmd/html.h"
#include "cmd/options.h"
#include "cmd/report.h"

static const struct mp_cmd_spec spec = {
	.name = "flamegraph",
	.synopsis = "[-o FILE] [-f] [--leaks | --temporary-allocations | "
		    "--temporary-allocation-threshold N] [--temporal] [--inverted] "
		    "[--split-threads] [--split-processes] [--diff BASE] [--max-memory-records N] "
		    "[--no-mmap] [--children] [--merge] FILE...",
	.summary = "Write an HTML flame graph of the memory at the peak (or leaked, or temporary).",
	.min_args = 1,
	.max_args = -1,
};

/* The options of the command and of memprof run --reporter flamegraph, bound to *a. */
static int parse(int argc, char **argv, struct mp_html_args *a, struct strbuf *err)
{
	const struct mp_opt opts[] = {
		MP_HTML_OUTPUT_OPTS(a),
		MP_REPORT_VIEW_OPTS(&a->view),
		MP_OPT_BOOL(0, "temporal", &a->html.temporal,
			    "add the memory over time: the graph shows the peak (or the leaks) of a "
			    "time window"),
		MP_OPT_BOOL(0, "inverted", &a->html.inverted,
			    "put the allocating functions at the root"),
		MP_HTML_SPLIT_THREADS_OPT(a),
		MP_OPT_STRING(0, "diff", "BASE", &a->diff_base,
			      "a differential flame graph of FILE against the capture BASE: growth "
			      "red, shrinkage blue"),
		MP_OPT_UINT(0, "max-memory-records", "N", &a->max_memory_records, 2, UINT32_MAX,
			    "at most N points of memory over time (and time windows; at most and by "
			    "default 2048)"),
		MP_REPORT_OPTS(&a->view),
		MP_REPORT_FULL_NAMES_OPT(&a->view),
		MP_OPT_END,
	};
	return mp_html_parse(&spec, opts, MP_HTML_FLAMEGRAPH, argc, argv, a, err);
}

static int check(int argc, char **argv, const char *capture, const char **needs_events,
		 struct strbuf *err)
{
	return mp_html_check(parse, argc, argv, capture, needs_events, err);
}

static int run(int argc, char **argv, FILE *msgs)
{
	struct mp_html_args args;
	parse(argc, argv, &args, NULL);
	return mp_html_run(&args, msgs);
}

int cmd_flamegraph(int argc, char **argv)
{
	return run(argc, argv, stdout);
}

const struct mp_reporter mp_reporter_flamegraph = { "flamegraph", check, run };
