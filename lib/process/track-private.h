/* Internal to lib/process/track: the session's state, shared by track.c and track-run.c. */
#ifndef MEMPROF_LIB_PROCESS_TRACK_PRIVATE_H
#define MEMPROF_LIB_PROCESS_TRACK_PRIVATE_H

#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/signalfd.h>
#include <sys/types.h>

#include "lib/process/collect.h"
#include "lib/process/track.h"

#define MP_TRACK_REQUESTERS 8

struct mp_track {
	const struct mp_track_opts *o;
	struct mp_track_hooks h;
	struct mp_capture_file out;
	struct mp_collector *c;
	char dir[PATH_MAX];          /* the socket's private directory (as we see it), or "" */
	char sock[PATH_MAX];         /* the socket's path (as the tracker sees it) */
	int listen_fd;               /* until the collector takes it */
	/* Signals: those that stop (SIGINT...) apart, so that they also cancel waits. */
	int sfd, stop_sfd;           /* signalfds, or -1 */
	sigset_t taken, old_mask;
	bool masked;
	int stop_fd;                 /* an eventfd: mp_track_stop() asks, the loop takes */
	int stopped_fd;              /* an eventfd, readable once a stop came (never read) */
	/* An epoll set of the three: readable, an output that would block is waited for no more. */
	int cancel_fd;
	/* The program the session started (memprof run). */
	pid_t child;
	const char *name;            /* its name, for messages */
	int go_fd, err_fd;           /* the pipes it waits on, and reports its exec on */
	bool exited;
	int status;
	/* memprof detach PID: the listening socket, and who asked (answered at the finish). */
	int ctl_fd;
	int requesters[MP_TRACK_REQUESTERS];
	size_t nrequesters;
	/* The loop. */
	long stop_at;                /* mp_track_set_duration(): when to stop, or 0 */
	long stop_by;                /* after a stop: when to give up waiting for the trackers, or 0 */
	long stream_by;              /* mp_track_expect_stream(): when no stream is a failure, or 0 */
	unsigned stop_wait_ms;
	bool stopping, ended, finish_now, never_connected, unconfirmed, finished;
	char *hint;                  /* the result's (mp_collector_symbols_hint()) */
};

long mp_track_now_ms(void);
/* Say line (formatted) through the say hook, if any. */
void mp_track_say(struct mp_track *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* track-run.c: the program started is gone (a SIGCHLD came): reap it. */
void mp_track_reap(struct mp_track *t);
/* track-run.c: drop the program if it never ran (mp_track_go() not called, or failed). */
void mp_track_abandon(struct mp_track *t);

#endif
