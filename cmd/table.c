/* memprof table: one row per allocation site, as an HTML table. */
#include <config.h>
#include <stdio.h>

#include "cmd/cmd.h"
#include "cmd/html.h"
#include "cmd/options.h"
#include "cmd/report.h"

static const struct mp_opt opts[] = {
	MP_HTML_OUTPUT_OPTS,
	MP_REPORT_VIEW_OPTS,
	MP_HTML_SPLIT_THREADS_OPT,
	MP_REPORT_NO_MMAP_OPT,
	MP_REPORT_FRAMES_OPTS,
	MP_REPORT_FULL_NAMES_OPT,
	{ 0 },
};

static const struct mp_cmd_spec spec = {
	.name = "table",
	.synopsis = "[-o FILE] [-f] [--leaks | --temporary-allocations | "
		    "--temporary-allocation-threshold N] [--split-threads] [--no-mmap] FILE",
	.summary = "Write an HTML table of the allocation sites holding the memory at the peak "
		   "(or leaked, or temporary).",
	.opts = opts,
	.min_args = 1,
	.max_args = 1,
};

static int check(int argc, char **argv, const char *capture, struct strbuf *err)
{
	return mp_html_check(&spec, MP_HTML_TABLE, argc, argv, capture, err);
}

static int run(int argc, char **argv, FILE *msgs)
{
	struct mp_html_args args;
	mp_html_parse(&spec, MP_HTML_TABLE, argc, argv, &args, NULL);
	return mp_html_run(&args, msgs);
}

int cmd_table(int argc, char **argv)
{
	return run(argc, argv, stdout);
}

const struct mp_reporter mp_reporter_table = { "table", check, run };
