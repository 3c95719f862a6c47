/*
 * What the reporters (stats, summary, tree, flamegraph and table) share on
 * the command side: the view options (--leaks, the temporary ones,
 * --no-mmap) and loading a capture with a progress bar, one-line errors and
 * report-time symbolization.
 */
#ifndef MEMPROF_CMD_REPORT_H
#define MEMPROF_CMD_REPORT_H

#include <stdbool.h>
#include <stdint.h>

#include "cmd/options.h"
#include "lib/analysis/analysis.h"
#include "lib/util/strbuf.h"

enum {
	MP_OPT_LEAKS = 400,
	MP_OPT_TEMPORARY,
	MP_OPT_THRESHOLD,
	MP_OPT_NO_MMAP,
};

/* Entries for a command's option table. */
#define MP_REPORT_VIEW_OPTS                                                                    \
	{ MP_OPT_LEAKS, 0, "leaks", NULL,                                                      \
	  "show the memory still allocated at the end instead of the peak" },                  \
	{ MP_OPT_TEMPORARY, 0, "temporary-allocations", NULL,                                  \
	  "show temporary allocations (--temporary-allocation-threshold 1)" },                 \
	{ MP_OPT_THRESHOLD, 0, "temporary-allocation-threshold", "N",                          \
	  "show allocations freed within N other allocations of their thread" }
#define MP_REPORT_NO_MMAP_OPT                                                                  \
	{ MP_OPT_NO_MMAP, 0, "no-mmap", NULL, "leave mmap, mremap and munmap out" }

/*
 * How stacks and names are shown (memprof(1), "FRAMES"): every reporter has
 * --all-frames, those that name stacks by their site --raw-leaf, the text
 * and HTML ones --full-names.
 */
enum { MP_OPT_ALL_FRAMES = 410, MP_OPT_RAW_LEAF, MP_OPT_FULL_NAMES };
#define MP_REPORT_ALL_FRAMES_OPT                                                               \
	{ MP_OPT_ALL_FRAMES, 0, "all-frames", NULL,                                            \
	  "show every frame, a Python program's interpreter frames too" }
#define MP_REPORT_RAW_LEAF_OPT                                                                 \
	{ MP_OPT_RAW_LEAF, 0, "raw-leaf", NULL,                                                \
	  "name each stack by its innermost frame, allocator plumbing included" }
#define MP_REPORT_FRAMES_OPTS MP_REPORT_ALL_FRAMES_OPT, MP_REPORT_RAW_LEAF_OPT
#define MP_REPORT_FULL_NAMES_OPT                                                               \
	{ MP_OPT_FULL_NAMES, 0, "full-names", NULL,                                            \
	  "keep C++ names whole (template arguments) and lines uncut" }

/*
 * The JSON file of a text reporter (stats, diff): --json, -o FILE (- for
 * standard output) and -f, as entries of its option table, and their values.
 */
enum { MP_OPT_JSON = MP_OPT_NO_MMAP + 1 };
#define MP_REPORT_JSON_OPTS(what, default_name)                                                 \
	{ MP_OPT_JSON, 0, "json", NULL, "write " what " as JSON to a file instead" },           \
	{ 'o', 'o', "output", "FILE",                                                          \
	  "the JSON file, - for standard output (default: " default_name ")" },                \
	{ 'f', 'f', "force", NULL, "overwrite the JSON file if it exists" }

struct mp_report_json {
	bool json, force;
	const char *output;             /* -o, or NULL */
};

/* Handle --json, -o or -f; true when id was one of them. */
bool mp_report_json_option(struct mp_report_json *j, int id, const char *arg);
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

struct mp_report_args {
	enum mp_view view;              /* MP_VIEW_PEAK unless an option chose another */
	const char *view_opt;           /* the option that chose it, for conflicts */
	uint64_t threshold;             /* temporary threshold */
	unsigned flags;                 /* enum mp_analysis_flags */
	bool full_names;                /* --full-names */
};
#define MP_REPORT_ARGS_INIT { MP_VIEW_PEAK, NULL, 1, 0, false }

/*
 * Handle a view option, --no-mmap or one of MP_REPORT_FRAMES_OPTS and
 * MP_REPORT_FULL_NAMES_OPT; returns true when id was one. Two view
 * options that disagree are a usage error (exit 2).
 */
bool mp_report_option(const struct mp_cmd_spec *spec, struct mp_report_args *args, int id,
		      const char *arg);
/* The same without exiting: 1 when id was one, 0 when not, -1 with the usage error in *err. */
int mp_report_parse_option(struct mp_report_args *args, int id, const char *arg,
			   struct strbuf *err);
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

struct mp_term;
/* The terminal of standard output, fitted as args say (--full-names: no cut). */
void mp_report_term(const struct mp_report_args *args, struct mp_term *t);

#endif
