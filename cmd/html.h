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

struct mp_html_args {
	struct mp_report_args view;     /* --leaks, temporary options, --no-mmap */
	struct mp_html_opts html;       /* report, inverted, temporal */
	bool split_threads;
	bool split_processes;           /* --split-processes: the page shows them apart first */
	uint64_t max_memory_records;
	const char *output;             /* -o, or NULL for the default name */
	bool force;
	const char *capture;            /* the first operand */
	const char *const *captures;    /* every operand */
	size_t ncaptures;
	const char *diff_base;          /* flamegraph --diff BASE, or NULL */
};

/* -o and -f of both reporters, bound to a struct mp_html_args. */
#define MP_HTML_OUTPUT_OPTS(args)                                                              \
	MP_OPT_STRING('o', "output", "FILE", &(args)->output,                                  \
		      "write the report to FILE (default: memprof-REPORTER-NAME.html next to "   \
		      "the capture)"),                                                          \
	MP_OPT_BOOL('f', "force", &(args)->force, "overwrite the report if it exists")
#define MP_HTML_SPLIT_THREADS_OPT(args)                                                        \
	MP_OPT_BOOL(0, "split-threads", &(args)->split_threads, "keep the threads apart"),     \
	MP_OPT_BOOL(0, "split-processes", &(args)->split_processes,                            \
		    "show the processes of several captures apart at first (the page toggles)")

/*
 * Parse a reporter's argv (argv[0] its name; one operand, the capture) into
 * *args: first the defaults of report, then the options by opts, a table
 * bound to *args. With err NULL a usage error exits 2 (the command itself);
 * with err set nothing is printed and -1 is returned with the one-line
 * reason in *err. Returns 0 on success.
 */
int mp_html_parse(const struct mp_cmd_spec *spec, const struct mp_opt *opts,
		  enum mp_html_report report, int argc, char **argv, struct mp_html_args *args,
		  struct strbuf *err);

/* A reporter's own mp_html_parse(): its table, bound to *args. */
typedef int mp_html_parse_fn(int argc, char **argv, struct mp_html_args *args,
			     struct strbuf *err);

/*
 * mp_reporter.check() of the HTML reporters: parse of argv and the capture
 * (a placeholder when NULL), then, with a capture, whether the report could
 * be written.
 */
int mp_html_check(mp_html_parse_fn *parse, int argc, char **argv, const char *capture,
		  const char **needs_events, struct strbuf *err);

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
