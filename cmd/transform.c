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

static const struct mp_cmd_spec spec = {
	.name = "transform",
	.synopsis = "[-o FILE] [-f] [--leaks | --temporary-allocations | "
		    "--temporary-allocation-threshold N] [--split-threads] [--split-processes] "
		    "[--no-mmap] [--children] [--merge] FORMAT FILE...",
	.summary = "Write the memory at the peak (or leaked, or temporary) for other tools: "
		   "FORMAT is pprof, speedscope, folded or csv.",
	.min_args = 2,
	.max_args = -1,
};

int cmd_transform(int argc, char **argv)
{
	struct mp_report_args args = MP_REPORT_ARGS_INIT;
	struct mp_analysis_opts aopts = MP_ANALYSIS_OPTS_INIT;
	const char *output = NULL;
	bool force = false;
	const struct mp_opt opts[] = {
		MP_OPT_STRING('o', "output", "FILE", &output,
			      "write to FILE, - for standard output (default: "
			      "memprof-FORMAT-NAME.SUFFIX next to the capture)"),
		MP_OPT_BOOL('f', "force", &force, "overwrite the output if it exists"),
		MP_REPORT_VIEW_OPTS(&args),
		MP_OPT_BIT(0, "split-threads", &aopts.flags, MP_ANALYSIS_SPLIT_THREADS,
			   "keep the threads apart"),
		MP_OPT_BIT(0, "split-processes", &aopts.flags, MP_ANALYSIS_SPLIT_PROCESSES,
			   "keep the processes of several captures apart, each stack under its "
			   "process"),
		MP_REPORT_OPTS(&args),
		MP_REPORT_RAW_LEAF_OPT(&args),
		MP_OPT_END,
	};
	int first = mp_parse_options(&spec, opts, argc, argv), format, written;
	int status = MP_EXIT_FAILURE;
	const char *capture = argv[first + 1];
	struct mp_export_opts eopts;
	struct mp_analysis a;
	struct mp_sink sink;
	struct strbuf err = STRBUF_INIT;
	char *path;

	format = mp_export_format_parse(argv[first]);
	if (format < 0) {
		mp_export_format_list(&err);
		mp_usage_error(&spec, "unknown format '%s' (formats: %s)", argv[first], err.buf);
	}
	eopts.format = (enum mp_export_format)format;
	eopts.view = args.view;
	path = output ? xstrdup(output)
		      : mp_report_output_path(capture, argv[first],
					      mp_export_format_suffix(eopts.format));
	/* Before a long analysis: an output that would not be written. */
	if (!force && strcmp(path, "-") && access(path, F_OK) == 0) {
		error("'%s' already exists (use -f to overwrite it)", path);
		free(path);
		return MP_EXIT_FAILURE;
	}
	if (!mp_report_load_all(&a, (const char *const *)argv + first + 1, (size_t)(argc - first - 1),
				&args, &aopts))
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
	/* A format with no place to say its figures are estimates: said here. */
	if (mp_analysis_estimated(&a) && !mp_export_format_labels(eopts.format)) {
		strbuf_reset(&err);
		mp_report_estimated(&a, &err);
		warning("the figures are %s (a sampled capture)", err.buf);
	}
out:
	mp_analysis_release(&a);
	strbuf_release(&err);
	free(path);
	return status;
}
