/*
 * A tracking session (track.c): what memprof run, memprof attach and
 * memprof live do between their options and their messages.
 */
#ifndef MEMPROF_LIB_PROCESS_TRACK_H
#define MEMPROF_LIB_PROCESS_TRACK_H

#include <stdbool.h>

#include "lib/transport/settings.h"
#include "lib/util/strbuf.h"

/* What a session records, and how (the options memprof run and memprof attach share). */
struct mp_track_opts {
	const char *output;      /* the capture; NULL: memprof-<program>.<pid>.bin */
	bool force, quiet, follow_fork, symbols, keep_addresses, aggregate, python_frames;
	unsigned interval_ms, max_depth;
};
#define MP_TRACK_OPTS_INIT { .symbols = true, .python_frames = true, .interval_ms = 10, .max_depth = 128 }

/*
 * The tracker's settings for a session: those of memprof's own environment
 * (MEMPROF_UNWIND, MEMPROF_RING_KB...), then what o asks, the collector's
 * socket, and paused (memprof run --paused).
 */
void mp_track_settings(const struct mp_track_opts *o, const char *socket, bool paused,
		       struct mp_config *c);
/* c into the environment of the programs memprof runs: each setting set, or unset at its default. */
void mp_track_setenv(const struct mp_config *c);
/* c as memprof_attach()'s argument: "NAME=VALUE" lines, for the settings not at their default. */
void mp_track_attach_arg(const struct mp_config *c, struct strbuf *arg);

#endif
