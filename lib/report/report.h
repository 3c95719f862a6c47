/*
 * What every report shares: where its output goes (names next to the
 * capture, no overwriting without force), and the words for an analysis'
 * metadata (command line, exit status, what a view shows).
 */
#ifndef MEMPROF_LIB_REPORT_REPORT_H
#define MEMPROF_LIB_REPORT_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/analysis/analysis.h"
#include "lib/util/strbuf.h"

/*
 * The default output of an HTML reporter (memray's rule): in the capture's
 * directory, "memprof-<reporter>-<stem><ext>" where stem is the capture's
 * file name without its last suffix and without a leading "memprof-".
 * Example: "dir/memprof-app.1234.bin" -> "dir/memprof-flamegraph-app.1234.html".
 * A capture read from standard input ("-", /dev/stdin) is named "stdin", one
 * read through another descriptor (/dev/fd/N, /proc/...) after it; both in
 * the working directory.
 */
char *mp_report_output_path(const char *capture, const char *reporter, const char *ext);
/* The default stats JSON: "dir/out.bin" -> "dir/memprof-stats-out.bin.json". */
char *mp_report_stats_path(const char *capture);
/*
 * Write a report. Refuses to replace an existing file unless force. Returns
 * 0, or -1 with a one-line reason in *err.
 */
int mp_report_write_file(const char *path, const void *data, size_t len, bool force,
			 struct strbuf *err);

/* The command line; with quote, arguments that need it are shell-quoted. */
void mp_report_command_line(const struct mp_analysis *a, bool quote, struct strbuf *sb);
/*
 * How the process ended: "0", "3", "killed by signal 9 (SIGKILL)", "... ,
 * core dumped", or why it is unknown (detached, no trailer).
 */
void mp_report_exit_status(const struct mp_analysis *a, struct strbuf *sb);
/* The same of one of its processes (a->processes). */
void mp_report_process_exit(const struct mp_analysis *a, uint32_t process, struct strbuf *sb);
/* "SIGKILL", or "signal 77" for numbers without a name. */
const char *mp_signal_name(int sig);
/*
 * One line saying what a view of the analysis holds, for the text reports:
 * "Peak memory: 1.500 MiB in 12 allocations, at 10.000 ms".
 */
void mp_report_view_title(const struct mp_analysis *a, enum mp_view view, struct strbuf *sb);
/*
 * What a sampled capture's figures are, for every report that shows them:
 * "estimated from a sample, one allocation per 512.000 KiB allocated" (or,
 * for captures sampled at several intervals, "..., one per up to 512.000
 * KiB, each capture by its own"); nothing for an exact capture.
 */
void mp_report_estimated(const struct mp_analysis *a, struct strbuf *sb);
/* "0.010 s after the start" style text for the peak's moment. */
void mp_report_peak_time(const struct mp_analysis *a, struct strbuf *sb);

/*
 * A function's name for a text view: a C++ name shortened
 * (lib/symbols/cxxname.h) unless full, control characters escaped.
 */
void mp_report_name(const char *fn, bool full, struct strbuf *sb);
/*
 * The function of a location as the text views show it: control characters
 * escaped, a C++ name shortened (lib/symbols/cxxname.h) unless full; a
 * Python function's name is kept as it is.
 */
void mp_report_function(const struct mp_analysis *a, uint32_t loc, bool full, struct strbuf *sb);
/* A location in a style (mp_location_format()), its function as mp_report_function() shows it. */
void mp_report_location(const struct mp_analysis *a, uint32_t loc, enum mp_location_style style,
			bool full, struct strbuf *sb);
/*
 * An allocation site with its Python caller (slot.caller; MP_NONE: none):
 * "deflateInit2_ called from make_compressor:/app/z.py:16".
 */
void mp_report_site(const struct mp_analysis *a, uint32_t site, uint32_t caller,
		    enum mp_location_style style, bool full, struct strbuf *sb);

#endif
