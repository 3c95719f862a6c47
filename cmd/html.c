/* The HTML reporters' shared command side: options without exiting, analysis, writing. */
#include <config.h>
#include <stdio.h>
#include "cmd/html.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/util/paths.h"
#include "lib/report/report.h"
#include "lib/util/usage.h"
#include "lib/util/xalloc.h"

/* A usage error: exit 2 from the command, or -1 when only checking. */
static int usage(const struct mp_cmd_spec *spec, struct strbuf *err, const char *msg)
{
	if (!err)
		mp_usage_error(spec, "%s", msg);
	return -1;
}

int mp_html_parse(const struct mp_cmd_spec *spec, const struct mp_opt *opts,
		  enum mp_html_report report, int argc, char **argv, struct mp_html_args *args,
		  struct strbuf *err)
{
	struct mp_report_args view = MP_REPORT_ARGS_INIT;
	struct mp_html_opts html = MP_HTML_OPTS_INIT;
	struct strbuf msg = STRBUF_INIT;
	int first, ret = 0;

	memset(args, 0, sizeof(*args));
	args->view = view;
	args->html = html;
	args->html.report = report;
	args->max_memory_records = MP_HTML_MAX_POINTS;
	first = err ? mp_parse_options_check(spec, opts, argc, argv, &msg)
		    : mp_parse_options(spec, opts, argc, argv);
	if (first < 0)
		ret = -1;
	/* memray refuses it too: a temporal view is of the peak or of the leaks. */
	if (!ret && args->html.temporal && args->view.view == MP_VIEW_TEMPORARY) {
		strbuf_addf(&msg, "options '--temporal' and '--%s' cannot be combined",
			    args->view.view_opt);
		ret = usage(spec, err, msg.buf);
	}
	/* A differential graph compares two whole captures, threads merged. */
	if (!ret && args->diff_base && (args->html.temporal || args->split_threads)) {
		strbuf_addf(&msg, "options '--diff' and '%s' cannot be combined",
			    args->html.temporal ? "--temporal" : "--split-threads");
		ret = usage(spec, err, msg.buf);
	}
	if (!ret) {
		args->html.view = args->view.view;
		args->html.full_names = args->view.full_names;
		args->html.split_processes = args->split_processes;
		args->capture = argv[first];
		args->captures = (const char *const *)argv + first;
		args->ncaptures = (size_t)(argc - first);
	}
	if (err && ret)
		strbuf_add(err, msg.buf, msg.len);
	strbuf_release(&msg);
	return ret;
}

int mp_html_check(mp_html_parse_fn *parse, int argc, char **argv, const char *capture,
		  const char **needs_events, struct strbuf *err)
{
	struct mp_html_args args;
	char **full = xcalloc((size_t)argc + 2, sizeof(*full)), *path;
	int ret;
	/*
	 * The capture first: options are found anywhere, and an operand among
	 * the arguments is then the one named as unexpected.
	 */
	full[0] = argv[0];
	full[1] = (char *)(capture ? capture : "CAPTURE");
	memcpy(full + 2, argv + 1, (size_t)(argc - 1) * sizeof(*full));
	ret = parse(argc + 1, full, &args, err);
	/* The capture is run's: another one among the arguments is a mistake. */
	if (!ret && args.ncaptures > 1) {
		strbuf_addf(err, "unexpected argument '%s'", args.captures[1]);
		ret = -1;
	}
	/* What mp_report_load() refuses for an aggregated capture. */
	*needs_events = NULL;
	if (!ret && args.view.view == MP_VIEW_TEMPORARY)
		*needs_events = args.view.view_opt;
	else if (!ret && args.html.temporal)
		*needs_events = "temporal";
	else if (!ret && (args.view.flags & MP_ANALYSIS_NO_MMAP))
		*needs_events = "no-mmap";
	if (!ret && capture) {
		path = mp_html_output_path(&args);
		if (!args.force && access(path, F_OK) == 0) {
			strbuf_addf(err, "'%s' already exists", path);
			ret = 1;
		}
		free(path);
	}
	free(full);
	return ret;
}

char *mp_html_output_path(const struct mp_html_args *args)
{
	if (args->output)
		return xstrdup(args->output);
	if (args->diff_base)
		return mp_report_output_path(args->capture, "flamegraph-diff", ".html");
	return mp_report_output_path(args->capture, mp_html_report_name(args->html.report), ".html");
}

int mp_html_run(const struct mp_html_args *args, FILE *msgs)
{
	struct mp_analysis_opts opts = MP_ANALYSIS_OPTS_INIT;
	struct mp_html_opts html = args->html;
	struct mp_analysis a, base;
	struct strbuf page = STRBUF_INIT, err = STRBUF_INIT, dir = STRBUF_INIT;
	char *path = mp_html_output_path(args);
	const char *slash = strrchr(args->capture, '/');
	int status = MP_EXIT_FAILURE;
	bool loaded;

	/* Before a long analysis: a report that would not be written. */
	if (!args->force && access(path, F_OK) == 0) {
		error("'%s' already exists (use -f to overwrite it)", path);
		free(path);
		return MP_EXIT_FAILURE;
	}
	/* Several processes: kept apart, so that the page can show them either way. */
	opts.flags = (args->split_threads ? MP_ANALYSIS_SPLIT_THREADS : 0) |
		     (html.temporal ? MP_ANALYSIS_TEMPORAL : 0) |
		     (args->diff_base ? 0 : MP_ANALYSIS_SPLIT_PROCESSES);
	/* A page draws no more points than its chart has pixels, about (render-html.h). */
	opts.max_memory_records = args->max_memory_records < MP_HTML_MAX_POINTS
					  ? (size_t)args->max_memory_records : MP_HTML_MAX_POINTS;
	/* Both analyses are released whatever happens, so the base is always made. */
	loaded = !args->diff_base || mp_report_load(&base, args->diff_base, &args->view, &opts);
	if (!loaded)
		mp_analysis_init(&a, &opts);
	else if (!args->diff_base)
		mp_analysis_init(&base, &opts);
	if (loaded && mp_report_load_all(&a, args->captures, args->ncaptures, &args->view, &opts)) {
		html.capture = slash ? slash + 1 : args->capture;
		if (args->diff_base) {
			slash = strrchr(args->diff_base, '/');
			html.base = &base;
			html.base_capture = slash ? slash + 1 : args->diff_base;
		}
		strbuf_addf(&dir, "%s/templates", mp_datadir());
		if (mp_html_render(&a, &html, dir.buf, &page, &err) < 0 ||
		    mp_report_write_file(path, page.buf, page.len, args->force, &err) < 0) {
			error("%s", err.buf);
		} else {
			if (msgs)
				fprintf(msgs, "Wrote %s\n", path);
			status = MP_EXIT_OK;
		}
	}
	mp_analysis_release(&a);
	mp_analysis_release(&base);
	strbuf_release(&page);
	strbuf_release(&err);
	strbuf_release(&dir);
	free(path);
	return status;
}
