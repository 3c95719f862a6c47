/*
 * What the reporters (stats, summary, tree, flamegraph, table, diff and
 * transform) share on the command side: their options (--no-mmap, the view
 * options --leaks and the temporary ones, the JSON file) and loading a
 * capture with a progress bar, one-line errors and report-time
 * symbolization.
 */
#ifndef MEMPROF_CMD_REPORT_H
#define MEMPROF_CMD_REPORT_H

#include <stdbool.h>
#include <stdint.h>

#include "cmd/options.h"
#include "lib/analysis/analysis.h"
#include "lib/util/strbuf.h"

struct mp_report_args {
	enum mp_view view;              /* MP_VIEW_PEAK unless an option chose another */
	const char *view_opt;           /* the long name of the option that chose it, for conflicts */
	uint64_t threshold;             /* temporary threshold */
	unsigned flags;                 /* enum mp_analysis_flags */
	bool children;                  /* --children: each capture with its family's */
	bool merge;                     /* --merge: captures of different programs as one */
	bool full_names;                /* --full-names */
};
#define MP_REPORT_ARGS_INIT { MP_VIEW_PEAK, NULL, 1, 0, false, false, false }

/*
 * The options of every reporter, bound to a struct mp_report_args: the
 * last entries of each reporter's table. An option every reporter takes is
 * one more entry here and one more field there.
 */
#define MP_REPORT_OPTS(args)                                                                   \
	MP_OPT_BIT(0, "no-mmap", &(args)->flags, MP_ANALYSIS_NO_MMAP,                           \
		   "leave mmap, mremap and munmap out"),                                        \
	MP_OPT_BOOL(0, "children", &(args)->children,                                          \
		    "add the captures of the processes FILE forked (run --follow-fork), found "  \
		    "next to it"),                                                              \
	MP_OPT_BOOL(0, "merge", &(args)->merge,                                                \
		    "report captures of different programs as one"),                            \
	MP_OPT_BIT(0, "all-frames", &(args)->flags, MP_ANALYSIS_ALL_FRAMES,                     \
		   "show every frame, a Python program's interpreter frames too")
/*
 * How stacks and names are shown (memprof(1), "FRAMES"), bound to a struct
 * mp_report_args: --raw-leaf for the reporters that name stacks by their
 * allocation site, --full-names for those that show names on a terminal
 * or a page.
 */
#define MP_REPORT_RAW_LEAF_OPT(args)                                                           \
	MP_OPT_BIT(0, "raw-leaf", &(args)->flags, MP_ANALYSIS_RAW_LEAF,                         \
		   "name each stack by its innermost frame, allocator plumbing included")
#define MP_REPORT_FULL_NAMES_OPT(args)                                                         \
	MP_OPT_BOOL(0, "full-names", &(args)->full_names,                                      \
		    "keep C++ names whole (template arguments) and lines uncut")
/*
 * The view of a reporter that shows one (the peak unless one of these
 * chose another), bound to a struct mp_report_args. Two that disagree are
 * a usage error.
 */
#define MP_REPORT_VIEW_OPTS(args)                                                              \
	MP_OPT_CALLBACK_DATA(0, "leaks", NULL, (args), mp_report_view_option, MP_VIEW_LEAKS,   \
			     "show the memory still allocated at the end instead of the peak"), \
	MP_OPT_CALLBACK_DATA(0, "temporary-allocations", NULL, (args), mp_report_view_option,  \
			     MP_VIEW_TEMPORARY,                                                 \
			     "show temporary allocations (--temporary-allocation-threshold 1)"), \
	MP_OPT_CALLBACK_DATA(0, "temporary-allocation-threshold", "N", (args),                 \
			     mp_report_view_option, MP_VIEW_TEMPORARY,                          \
			     "show allocations freed within N other allocations of their thread")
/* The callback of MP_REPORT_VIEW_OPTS (mp_opt_fn), opt->value the struct mp_report_args. */
int mp_report_view_option(const struct mp_opt *opt, const char *arg, struct strbuf *err);

/*
 * The JSON file of a text reporter (stats, diff): --json, -o FILE (- for
 * standard output) and -f, bound to a struct mp_report_json.
 */
#define MP_REPORT_JSON_OPTS(j, what, default_name)                                             \
	MP_OPT_BOOL(0, "json", &(j)->json, "write " what " as JSON to a file instead"),        \
	MP_OPT_STRING('o', "output", "FILE", &(j)->output,                                     \
		      "the JSON file, - for standard output (default: " default_name ")"),      \
	MP_OPT_BOOL('f', "force", &(j)->force, "overwrite the JSON file if it exists")

struct mp_report_json {
	bool json, force;
	const char *output;             /* -o, or NULL */
};

/* After the options: -o or -f without --json is a usage error (exit 2). */
void mp_report_json_check(const struct mp_cmd_spec *spec, const struct mp_report_json *j);
/* The JSON file: -o, else default_path, which it takes over (a new string either way). */
char *mp_report_json_path(const struct mp_report_json *j, char *default_path);
/*
 * Write json to path ("-": standard output), never over a file without -f,
 * then "Wrote PATH" on standard output. Errors are printed; returns the
 * exit status.
 */
int mp_report_json_write(const struct mp_report_json *j, const char *path,
			 const struct strbuf *json);

/*
 * Analyse the capture at path with the options of o (NULL: the defaults)
 * and those args chose, showing progress on a terminal's stderr. On failure
 * prints the reader's one-line error and returns false (a must still be
 * released); a truncated or damaged capture prints a one-line warning and is
 * analysed up to the damage.
 *
 * Instruction pointers without symbols (a capture written with
 * `memprof run --no-symbols` or by a hand-preloaded tracker) are
 * symbolized here from the capture's module records with lib/symbols, the
 * build-ids checked; a warning says which files cannot be used on this
 * machine and what is shown instead.
 */
bool mp_report_load(struct mp_analysis *a, const char *path, const struct mp_report_args *args,
		    const struct mp_analysis_opts *o);
/*
 * The same for several captures, reported as one (mp_analysis_read_files()):
 * each with its family's with --children (which says what forked children
 * left no capture), and refused, one line, when they are of different
 * programs and not of one process tree, unless --merge.
 */
bool mp_report_load_all(struct mp_analysis *a, const char *const *paths, size_t n,
			const struct mp_report_args *args, const struct mp_analysis_opts *o);

struct mp_term;
/* The terminal of standard output, fitted as args say (--full-names: no cut). */
void mp_report_term(const struct mp_report_args *args, struct mp_term *t);

#endif
