/*
 * A progress bar on a terminal for long analyses: bytes read of the file's
 * size, records read and the rate, redrawn at most ten times a second after
 * the first half second, erased when done. Silent when the stream is not a
 * terminal.
 */
#ifndef MEMPROF_LIB_REPORT_PROGRESS_H
#define MEMPROF_LIB_REPORT_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/util/strbuf.h"

struct mp_progress {
	int fd;
	bool enabled;           /* fd is a terminal (or forced by a test) */
	bool shown;             /* something is on the screen to erase */
	uint64_t total;         /* bytes to read; 0 when unknown (a pipe) */
	double start, last;     /* monotonic seconds */
	int width;              /* terminal columns */
	const char *label;
};

/* Prepare a bar on fd, enabled when fd is a terminal; label is kept (not copied). */
void mp_progress_init(struct mp_progress *p, int fd, const char *label);
/* Start timing a pass over total bytes (0: unknown). */
void mp_progress_start(struct mp_progress *p, uint64_t total);
/* Report how far the pass got; draws only when enough time has passed. */
void mp_progress_update(struct mp_progress *p, uint64_t bytes, uint64_t records);
/* Erase the bar (if shown). */
void mp_progress_done(struct mp_progress *p);
/*
 * The text of the bar for a state (without the carriage return), fitted to
 * width columns: "label [#####-----]  45%  12.0 MiB/27.0 MiB  1,234,567 records  2.5 M/s".
 */
void mp_progress_format(struct strbuf *sb, const char *label, uint64_t bytes, uint64_t total,
			uint64_t records, double elapsed, int width);

#endif
