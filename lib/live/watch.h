/*
 * memprof live PID (watch.c): the live view of a process whose tracker was
 * preloaded, through its control socket (no ptrace). The tracker is asked to
 * stream to a collector of ours that writes no capture ("stream PATH", see
 * lib/tracker/control.c); the view runs until q, Ctrl-C, SIGINT, SIGTERM or
 * SIGHUP; then the terminal is restored and the stream ended, which leaves
 * the process running, its tracker paused as before.
 */
#ifndef MEMPROF_LIB_LIVE_WATCH_H
#define MEMPROF_LIB_LIVE_WATCH_H

#include <stdbool.h>
#include <sys/types.h>

#include "lib/util/strbuf.h"

struct mp_live_watch_opts {
	int timeout_ms;         /* for the tracker's answer, and for the end of its stream */
	bool symbolize;         /* names of functions while the program runs */
	unsigned flags;         /* struct mp_live's: how stacks are shown */
	bool full_names;        /* C++ names whole */
};
#define MP_LIVE_WATCH_OPTS_INIT { 30000, true, 0, false }

/*
 * Show the live view of process pid until the user quits. 0 when it ran
 * (what the user should still hear of, one line each, in warn), -1 with a
 * one-line message in err when it could not (no terminal, no process, no
 * tracker, a tracker that records already...); nothing is left behind.
 */
int mp_live_watch(pid_t pid, const struct mp_live_watch_opts *o, struct strbuf *err,
		  struct strbuf *warn);

#endif
