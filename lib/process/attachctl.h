/*
 * The control side of `memprof attach` and `memprof detach`: each attach
 * session listens on an abstract Unix socket named after the target's pid,
 * which `memprof detach PID` asks to stop the tracking; and what an attach
 * must know about its target (its executable, user and filesystem root).
 */
#ifndef MEMPROF_LIB_PROCESS_ATTACHCTL_H
#define MEMPROF_LIB_PROCESS_ATTACHCTL_H

#include <stdbool.h>
#include <sys/types.h>

#include "lib/util/strbuf.h"

/*
 * Claim the control socket of pid's session. Returns the listening fd, or -1
 * with a message in err (notably when another `memprof attach` already tracks
 * pid: its own pid is named).
 */
int mp_attachctl_listen(pid_t pid, struct strbuf *err);
/*
 * A connection on the listening socket: returns the client's fd when it asked
 * to detach (and is allowed to: the same user, or root), else -1 (the
 * connection is closed).
 */
int mp_attachctl_accept(int lfd);
/* Answer a detach request once the capture is finished ("ok PATH"). */
void mp_attachctl_reply(int cfd, const char *capture);

/*
 * Ask the session tracking pid to detach and wait up to timeout_ms for the
 * capture to be finished. With wait_start, a memprof attach of pid that is
 * starting (not listening yet) is waited for: a second when none runs, as
 * long as one runs. Returns 0 with the capture's whole path in capture, or
 * -1 with a message in err (no session for pid, no answer in time); 1
 * (with the message) when no session listens and wait_start is false.
 */
int mp_attachctl_detach(pid_t pid, unsigned timeout_ms, bool wait_start, struct strbuf *capture,
			struct strbuf *err);

struct mp_target_info {
	char *exe;        /* absolute path of the executable, as the process sees it */
	uid_t uid;
	gid_t gid;
	bool same_root;   /* the process sees the same / as memprof (not in a container) */
};
/* What attach needs to know about pid; -1 with a message when it cannot be read. */
int mp_target_info(pid_t pid, struct mp_target_info *ti, struct strbuf *err);
void mp_target_info_release(struct mp_target_info *ti);

#endif
