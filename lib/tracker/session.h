/*
 * Tracking sessions (session.c): a stream from its start to its stop. A
 * tracker preloaded with MEMPROF_PAUSED starts none until asked (control.c);
 * memprof attach starts one in a running process; each start is a new
 * capture, numbered in the process.
 */
#ifndef MEMPROF_LIB_TRACKER_SESSION_H
#define MEMPROF_LIB_TRACKER_SESSION_H

#include <stddef.h>

#include "lib/tracker/base.h"
#include <sys/types.h>

#include "include/memprof.h"
#include "lib/tracker/config.h"
#include "lib/tracker/timer.h"

/*
 * Start tracking in mode (MP_MODE_*): a new stream (the collector's, or a
 * capture of our own), then the timer, with ops (NULL but for attach). 0, or
 * -EALREADY (tracking), -EBUSY (a stop is still finishing), -ECONNREFUSED
 * (no stream could be opened; said on standard error). prelude, when not
 * NULL, writes records that must come before any event. The exit and fork
 * handlers must have been registered (mp_register_handlers()). flags are
 * added to the header's (MP_HF_AGGREGATED: an aggregated capture, which
 * the collector makes, or direct.c's fold in a capture of our own).
 */
int mp_session_start(unsigned mode, unsigned flags, const struct mp_timer_ops *ops,
		     void (*prelude)(void)) MP_HIDDEN;
/*
 * Stop tracking: the hooks made inert (then before(), when not NULL, runs),
 * every thread stopped from writing, a DETACH record and a last sample, the
 * capture finished (the collector's, or ours with its trailer), the
 * connection closed.
 */
void mp_session_stop(void (*before)(void)) MP_HIDDEN;
/*
 * The same (memprof ctl PID stop; before as above), then, when a collector
 * writes the capture, wait at most wait_ms for it to say it finished it: 1
 * when it did, with the capture's path in path (cap bytes); else 0.
 */
int mp_session_stop_finished(void (*before)(void), unsigned wait_ms, char *path, size_t cap) MP_HIDDEN;
/*
 * Start a live view's session (memprof live, through the control socket):
 * a stream to the collector listening at path (absolute), whatever mp_cfg
 * says, which is not a numbered capture; it ends when the collector asks
 * (one byte on the connection) or goes away, and the configuration it
 * replaced comes back. Nothing is said on standard error. 0, or -EALREADY
 * (tracking), -EBUSY (a stop is still finishing), -EINVAL (path unusable),
 * -ECONNREFUSED (no stream could be opened).
 */
int mp_session_start_live(const char *path) MP_HIDDEN;
/* Where the live view's session streams to, or NULL when the session is not one. */
const char *mp_session_live_path(void) MP_HIDDEN;
/*
 * In a forked child: the session's lock is free, and when the parent's
 * session was a live view's, its configuration is restored (the child is
 * not shown). Returns whether it was.
 */
int mp_session_forked(void) MP_HIDDEN;
/*
 * The ATTACH record, first in a stream of a program that ran untracked
 * until now (memprof attach, memprof_start): what the C library says its
 * heap holds, before any event of ours. A session's prelude.
 */
void mp_session_baseline(void) MP_HIDDEN;
/* How long the last stream ran, from its start to its stop (0 before the first stop). */
uint64_t mp_session_last_duration_us(void) MP_HIDDEN;
/* A new stream: its own trace tree and modules; call before mp_session_open_stream(). */
void mp_new_stream_state(void) MP_HIDDEN;
/*
 * Open the stream mp_cfg asks for (the collector's, or a capture of our
 * own), with a first sample. MP_SAMPLED_BY_READER: its collector samples
 * the process (no timer thread of ours: the stream starts none, ring.h's
 * tick_ms), for a stream with no timer ops to a collector; else
 * MP_SAMPLED_BY_TIMER. 0, or -1 (said on standard error).
 */
enum { MP_SAMPLED_BY_TIMER = 0, MP_SAMPLED_BY_READER = 1 };
int mp_session_open_stream(unsigned mode, unsigned flags, pid_t forked_from, int sampled_by) MP_HIDDEN;
/*
 * A snapshot of the capture so far, which goes on: written by us (its path in
 * path: dest, or when NULL the capture's with .snap.N) or asked of the
 * collector (path empty; it names it). 0 with its number in *number, or
 * -errno (-ENOENT: not tracking).
 */
int mp_session_snapshot(unsigned *number, const char *dest, char *path, size_t pathlen) MP_HIDDEN;

/*
 * ---- Starts and stops from inside the process (inproc.c) ----
 * memprof_start() and memprof_stop() of include/memprof.h (api.c), and
 * memprof ctl's start and stop (control.c), which take the same way so
 * that a tracker loaded with dlopen puts its hooks in and out whoever asks.
 * Each call is serialized with the others; each returns 0 or -errno, as
 * its memprof.h counterpart says.
 */
enum {
	MP_INPROC_OVERWRITE = 1 << 0, /* path may replace a file */
	MP_INPROC_AGGREGATE = 1 << 1, /* an aggregated capture (a collector's, or ours folded) */
	MP_INPROC_PYALLOC = 1 << 2,   /* trace the Python allocators */
	MP_INPROC_CONTROL = 1 << 3,   /* memprof ctl's start: its errors said on standard error */
};
/*
 * Start a capture into path (NULL: where the configuration says), with the
 * settings set(c, arg) makes of the current ones (set NULL: as they are),
 * for this capture only.
 */
int mp_inproc_start(const char *path, unsigned flags, void (*set)(struct mp_config *c, const void *arg),
		    const void *arg) MP_HIDDEN;
/* Stop the capture recording, whoever started it (but memprof attach), once it is complete. */
int mp_inproc_stop(void) MP_HIDDEN;
/*
 * The same for memprof ctl: a collector's capture is waited for wait_ms at
 * most and its path put in path (cap bytes; "" when the collector did not
 * say it finished it in time); path NULL: no wait.
 */
int mp_inproc_stop_wait(unsigned wait_ms, char *path, size_t cap) MP_HIDDEN;
/* A snapshot of it at dest (NULL: the capture's path with .snap.N). */
int mp_inproc_snapshot(const char *dest) MP_HIDDEN;
/* What the tracker does, into *st (its size checked by the caller). */
int mp_inproc_status(struct memprof_status *st) MP_HIDDEN;
/* Whether a capture records. */
int mp_inproc_recording(void) MP_HIDDEN;
/* The file of the last capture stopped, "" when the tracker did not know it. */
const char *mp_inproc_last_capture(void) MP_HIDDEN;

#endif
