/* memprof table: one row per allocation site, as an HTML table. */
#include <config.h>
#include <stdio.h>

#include "cmd/cmd.h"
#include "cmd/html.h"
#include "cmd/options.h"
#include "cmd/report.h"

static const struct mp_cmd_spec spec = {
	.name = "table",
	.synopsis = "[-o FILE] [-f] [--leaks | --temporary-allocations | "
		    "--temporary-allocation-threshold N] [--split-threads] [--split-processes] "
		    "[--no-mmap] [--children] [--merge] FILE...",
	.summary = "Write an HTML table of the allocation sites holding the memory at the peak "
		   "(or leaked, or temporary).",
	.min_args = 1,
	.max_args = -1,
};

/* The options of the command and of memprof run --reporter table, bound to *a. */
static int parse(int argc, char **argv, struct mp_html_args *a, struct strbuf *err)
{
	const struct mp_opt opts[] = {
		MP_HTML_OUTPUT_OPTS(a),
		MP_REPORT_VIEW_OPTS(&a->view),
		MP_HTML_SPLIT_THREADS_OPT(a),
		MP_REPORT_OPTS(&a->view),
		MP_REPORT_RAW_LEAF_OPT(&a->view),
		MP_REPORT_FULL_NAMES_OPT(&a->view),
		MP_OPT_END,
	};
	return mp_html_parse(&spec, opts, MP_HTML_TABLE, argc, argv, a, err);
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

int cmd_table(int argc, char **argv)
{
	return run(argc, argv, stdout);
}

const struct mp_reporter mp_reporter_table = { "table", check, run };
