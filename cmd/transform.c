/* memprof transform: a capture in another tool's format (pprof, speedscope, folded, csv). */
#include <config.h>
#include <stdio.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "cmd/options.h"
#include "cmd/report.h"
#include "lib/analysis/analysis.h"
#include "lib/export/export.h"
#include "lib/export/sink.h"
#include "lib/report/report.h"
#include "lib/util/usage.h"
#include "lib/util/xalloc.h"

enum { OPT_SPLIT_THREADS = 256 };

static const struct mp_opt opts[] = {
	{ 'o', 'o', "output", "FILE",
	  "write to FILE, - for standard output (default: memprof-FORMAT-NAME.SUFFIX next to the capture)" },
	{ 'f', 'f', "force", NULL, "overwrite the output if it exists" },
	MP_REPORT_VIEW_OPTS,
	{ OPT_SPLIT_THREADS, 0, "split-threads", NULL, "keep the threads apart" },
	MP_REPORT_NO_MMAP_OPT,
	MP_REPORT_FRAMES_OPTS,
	{ 0 },
};

static const struct mp_cmd_spec spec = {
	.name = "transform",
	.synopsis = "[-o FILE] [-f] [--leaks | --temporary-allocations | "
		    "--temporary-allocation-threshold N] [--split-threads] [--no-mmap] "
		    "FORMAT FILE",
	.summary = "Write the memory at the peak (or leaked, or temporary) for other tools: "
		   "FORMAT is pprof, speedscope, folded or csv.",
	.opts = opts,
	.min_args = 2,
	.max_args = 2,
};

int cmd_transform(int argc, char **argv)
{
	struct mp_getopt g = { argc, argv, 0, NULL, 0 };
	struct mp_report_args args = MP_REPORT_ARGS_INIT;
	struct mp_analysis_opts aopts = MP_ANALYSIS_OPTS_INIT;
	struct mp_export_opts eopts;
	struct mp_analysis a;
	struct mp_sink sink;
	struct strbuf err = STRBUF_INIT;
	const char *output = NULL, *capture;
	bool force = false;
	char *path;
	int format, c, status = MP_EXIT_FAILURE, written;

	while ((c = mp_getopt(&spec, &g)) != -1) {
		if (mp_report_option(&spec, &args, c, g.arg))
			continue;
		if (c == 'o')
			output = g.arg;
		else if (c == 'f')
			force = true;
		else if (c == OPT_SPLIT_THREADS)
			aopts.flags |= MP_ANALYSIS_SPLIT_THREADS;
	}
	format = mp_export_format_parse(argv[g.optind]);
	if (format < 0) {
		mp_export_format_list(&err);
		mp_usage_error(&spec, "unknown format '%s' (formats: %s)", argv[g.optind], err.buf);
	}
	capture = argv[g.optind + 1];
	eopts.format = (enum mp_export_format)format;
	eopts.view = args.view;
	path = output ? xstrdup(output)
		      : mp_report_output_path(capture, argv[g.optind],
					      mp_export_format_suffix(eopts.format));
	/* Before a long analysis: an output that would not be written. */
	if (!force && strcmp(path, "-") && access(path, F_OK) == 0) {
		error("'%s' already exists (use -f to overwrite it)", path);
		free(path);
		return MP_EXIT_FAILURE;
	}
	if (!mp_report_load(&a, capture, &args, &aopts))
		goto out;
	if (mp_sink_open(&sink, path, force, mp_export_format_gzip(eopts.format), &err) < 0) {
		error("%s", err.buf);
		goto out;
	}
	written = mp_sink_close(&sink, mp_export_write(&a, &eopts, &sink) == 0, &err);
	if (written < 0) {
		error("%s", err.buf);
		goto out;
	}
	status = MP_EXIT_OK;
	if (strcmp(path, "-"))
		printf("Wrote %s\n", path);
out:
	mp_analysis_release(&a);
	strbuf_release(&err);
	free(path);
	return status;
}
