/*
 * The client side of a tracker's control socket (lib/tracker/control.c):
 * `memprof ctl PID REQUEST` finds the socket of process PID, asks, and
 * returns the tracker's answer.
 */
#ifndef MEMPROF_LIB_PROCESS_CTL_H
#define MEMPROF_LIB_PROCESS_CTL_H

#include <sys/types.h>

#include "lib/util/strbuf.h"

/*
 * Send request ("start", "stop", "snapshot", "status") to the tracker in
 * process pid and wait up to timeout_ms for its answer. 0 with the answer's
 * text in *reply; 1 when the tracker answered with an error (its text in
 * *err); -1 when it could not be asked (why in *err: no such process, no
 * tracker listening, another user's process...).
 */
int mp_ctl_request(pid_t pid, const char *request, int timeout_ms, struct strbuf *reply,
		   struct strbuf *err);

#endif
