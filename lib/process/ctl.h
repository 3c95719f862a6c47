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
/*
 * memprof ctl PID REQUEST: mp_ctl_request(), with what the tracker needs to
 * answer once the collector did what it asked ("start", "snapshot" and
 * "stop" wait for it, in timeout_ms less a second), and "stop" of a
 * capture memprof attach makes done as its detach (lib/process/attachctl).
 * Returns as mp_ctl_request().
 */
int mp_ctl_ask(pid_t pid, const char *request, int timeout_ms, struct strbuf *reply,
	       struct strbuf *err);
/*
 * mp_ctl_request() in two halves, for a caller that must serve something
 * else while the tracker works (memprof live: the tracker connects to its
 * collector before it answers). mp_ctl_send() returns the connection, or -1
 * as mp_ctl_request(); mp_ctl_answer() reads the answer from it once it is
 * readable, closes it, and returns as mp_ctl_request().
 */
int mp_ctl_send(pid_t pid, const char *request, struct strbuf *err);
int mp_ctl_answer(pid_t pid, int fd, int timeout_ms, struct strbuf *reply, struct strbuf *err);
/*
 * The socket the tracker of pid streams to for `memprof live` (its "stream
 * PATH" request): a private directory in /tmp as the process sees it (its
 * own /tmp through /proc/PID/root, when that is not ours), given to the
 * process's user. Returns the listening socket, the directory to remove
 * afterwards in dir (as we see it) and the socket's path as the tracker
 * sees it in path; -1 with a one-line message in err.
 */
int mp_ctl_stream_socket(pid_t pid, char *dir, size_t dirlen, char *path, size_t pathlen,
			 struct strbuf *err);

#endif
