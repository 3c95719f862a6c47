/*
 * What the fuzz targets share (tests/fuzz/README.md): each is a libFuzzer
 * entry point, LLVMFuzzerTestOneInput(), given one input, a capture or what
 * the fuzzer made of one. A target runs the code under test the ways the
 * commands do and aborts when an invariant fails; a sanitizer report, a
 * crash or a hang is a finding too. Errors on bad input are not: they must
 * only be one line.
 */
#ifndef MEMPROF_TESTS_FUZZ_FUZZ_H
#define MEMPROF_TESTS_FUZZ_FUZZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/analysis/analysis.h"
#include "lib/format/reader.h"
#include "lib/report/render-text.h"
#include "lib/util/strbuf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Abort, saying what failed: a finding. */
#define FUZZ_CHECK(cond)                                                                    \
	do {                                                                                \
		if (!(cond))                                                                \
			fuzz_fail(__FILE__, __LINE__, #cond);                               \
	} while (0)
__attribute__((noreturn)) void fuzz_fail(const char *file, int line, const char *what);

/*
 * Open the input as a capture file, from a descriptor as the commands open
 * one: 0, or -1 when it is not a readable capture (then r->err must be one
 * line). r must be released either way.
 */
int fuzz_open(struct mp_reader *r, const uint8_t *data, size_t size);

/*
 * Analyse the input as mp_report_load() does, with o's options (NULL: the
 * defaults): true when it is a capture (maybe damaged: read up to the
 * damage), false when not. a must be released either way. Checks the
 * analysis' invariants.
 */
bool fuzz_analyse(struct mp_analysis *a, const uint8_t *data, size_t size,
		  const struct mp_analysis_opts *o);

/*
 * For each of the n option sets of runs: analyse the input with them and,
 * when it is a capture, call each(a, run, ctx) on the finished analysis.
 * Stops at the first set that finds no capture (the others would not).
 */
void fuzz_each_analysis(const uint8_t *data, size_t size, const struct mp_analysis_opts *runs,
			size_t n, void (*each)(const struct mp_analysis *a, size_t run, void *ctx),
			void *ctx);
#define FUZZ_N(array) (sizeof(array) / sizeof((array)[0]))

/* The views a report shows: peak, leaks, temporary allocations. */
extern const enum mp_view fuzz_views[3];

/* A one-line message: not empty, no newline. */
void fuzz_check_line(const struct strbuf *msg);

/* The text reporters' terminals: a pipe, and a narrow colour terminal. */
extern const struct mp_term fuzz_pipe, fuzz_tty;

struct mp_html_opts;
/*
 * An HTML report of a (lib/report/render-html.h): the whole page, expanded
 * into its template of the source tree, or only its data (what varies with
 * the capture). Options that do not go together must be refused in one line.
 */
void fuzz_html(const struct mp_analysis *a, const struct mp_html_opts *o, bool whole);
/*
 * Whether to render an input's whole page: for one input in 16 (by its
 * size), as expanding the template, the same for all, took most of the time.
 */
static inline bool fuzz_whole_page(size_t size)
{
	return size % 16 == 0;
}

#endif
