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

#include "lib/tracker/timer.h"

/*
 * Start tracking in mode (MP_MODE_*): a new stream (the collector's, or a
 * capture of our own), then the timer, with ops (NULL but for attach). 0, or
 * -EALREADY (tracking), -EBUSY (a stop is still finishing), -ECONNREFUSED
 * (no stream could be opened; said on standard error). prelude, when not
 * NULL, writes records that must come before any event. The exit and fork
 * handlers must have been registered (mp_register_handlers()). flags are
 * added to the header's (MP_HF_AGGREGATED: the collector is asked for an
 * aggregated capture).
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
 * The same (memprof ctl PID stop), then, when a collector writes the
 * capture, wait at most wait_ms for it to say it finished it: 1 when it
 * did, with the capture's path in path (cap bytes); else 0.
 */
int mp_session_stop_finished(unsigned wait_ms, char *path, size_t cap) MP_HIDDEN;
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
/* A new stream: its own trace tree and modules; call before mp_session_open_stream(). */
void mp_new_stream_state(void) MP_HIDDEN;
/*
 * Open the stream mp_cfg asks for (the collector's, or a capture of our
 * own), with a first sample. 0, or -1 (said on standard error).
 */
int mp_session_open_stream(unsigned mode, unsigned flags, pid_t forked_from) MP_HIDDEN;
/*
 * A snapshot of the capture so far, which goes on: written by us (its path in
 * path) or asked of the collector (path empty). 0 with its number in
 * *number, or -errno (-ENOENT: not tracking).
 */
int mp_session_snapshot(unsigned *number, char *path, size_t pathlen) MP_HIDDEN;

#endif
