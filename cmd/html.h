/*
 * The command side of the HTML reporters (flamegraph, table): their
 * options, parsed into a struct without exiting, so that `memprof run
 * --reporter` can check them before the program starts, and writing a
 * report from a capture.
 */
#ifndef MEMPROF_CMD_HTML_H
#define MEMPROF_CMD_HTML_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cmd/options.h"
#include "cmd/report.h"
#include "lib/report/render-html.h"
#include "lib/util/strbuf.h"

enum {
	MP_OPT_TEMPORAL = 420,
	MP_OPT_INVERTED,
	MP_OPT_SPLIT_THREADS,
	MP_OPT_MAX_RECORDS,
	MP_OPT_DIFF,
};

/* Entries for the option tables of both reporters. */
#define MP_HTML_OUTPUT_OPTS                                                                    \
	{ 'o', 'o', "output", "FILE",                                                          \
	  "write the report to FILE (default: memprof-REPORTER-NAME.html next to the capture)" }, \
	{ 'f', 'f', "force", NULL, "overwrite the report if it exists" }
#define MP_HTML_SPLIT_THREADS_OPT                                                              \
	{ MP_OPT_SPLIT_THREADS, 0, "split-threads", NULL, "keep the threads apart" }

struct mp_html_args {
	struct mp_report_args view;     /* --leaks, temporary options, --no-mmap */
	struct mp_html_opts html;       /* report, inverted, temporal */
	bool split_threads;
	uint64_t max_memory_records;
	const char *output;             /* -o, or NULL for the default name */
	bool force;
	const char *capture;            /* the operand */
	const char *diff_base;          /* flamegraph --diff BASE, or NULL */
};

/*
 * Parse a reporter's argv (argv[0] its name; one operand, the capture) by
 * its spec into *args. With err NULL a usage error exits 2 (the command
 * itself); with err set nothing is printed and -1 is returned with the
 * one-line reason in *err. Returns 0 on success.
 */
int mp_html_parse(const struct mp_cmd_spec *spec, enum mp_html_report report, int argc,
		  char **argv, struct mp_html_args *args, struct strbuf *err);

/*
 * mp_reporter.check() of the HTML reporters: mp_html_parse() of argv and
 * the capture (a placeholder when NULL), then, with a capture, whether the
 * report could be written.
 */
int mp_html_check(const struct mp_cmd_spec *spec, enum mp_html_report report, int argc,
		  char **argv, const char *capture, struct strbuf *err);

/*
 * The report's path: -o, else memprof-<report>-<name>.html next to the
 * capture (memprof-flamegraph-diff-<name>.html for --diff; a new string).
 */
char *mp_html_output_path(const struct mp_html_args *args);

/*
 * Analyse args->capture and write the report, refusing to replace a file
 * without force (checked first, before the analysis); "Wrote <path>" on
 * msgs (NULL: nothing). Errors are printed. Returns the exit status.
 */
int mp_html_run(const struct mp_html_args *args, FILE *msgs);

#endif
