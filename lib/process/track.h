/*
 * A tracking session (track.c; track-run.c: the program it starts): what
 * memprof run, memprof attach and memprof live do between their options and
 * their messages, and what a library caller does to start, stop and finish
 * a capture without them. In order:
 *
 *   t = mp_track_new(&opts, err);             what to record, and how
 *   mp_track_set_hooks(t, &hooks);            what the caller is told, and adds
 *   mp_track_signals(t, sigs, n, err);        signals the loop takes (a command's)
 *   mp_track_listen(t, base, name, uid, gid, err);   the socket trackers connect to
 *   mp_track_spawn(t, target, ...);           memprof run: the program, waiting
 *   mp_track_capture(t, name, pid, err);      the capture, named and created
 *   mp_track_collect(t, pid, observer, err);  the collector, for process pid
 *   mp_track_go(t, err) / inject the tracker with mp_track_attach_arg()
 *   mp_track_run(t);                          the one event loop, to the end
 *   mp_track_finish(t, &result);              what was written
 *   mp_track_free(t);
 *
 * Any step that fails says why in err (one line) and leaves nothing behind
 * once the session is freed: not the socket, nor a capture nothing was
 * written into.
 */
#ifndef MEMPROF_LIB_PROCESS_TRACK_H
#define MEMPROF_LIB_PROCESS_TRACK_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/signalfd.h>
#include <sys/types.h>

#include "lib/process/collect.h"
#include "lib/transport/settings.h"
#include "lib/util/strbuf.h"

struct mp_target;

/* What a session records, and how (the options memprof run and memprof attach share). */
struct mp_track_opts {
	const char *output;      /* the capture; NULL: memprof-<program>.<pid>.bin */
	bool force, quiet, follow_fork, symbols, keep_addresses, aggregate, python_frames;
	unsigned interval_ms, max_depth;
	unsigned sampling_interval; /* 0: every event; N: a sample, one per N bytes (settings.h) */
};
#define MP_TRACK_OPTS_INIT { .symbols = true, .python_frames = true, .interval_ms = 10, .max_depth = 128 }

/*
 * What the loop tells its caller, and what the caller adds to it. Every
 * member may be NULL.
 */
struct mp_track_hooks {
	void *ctx;
	/*
	 * A signal the session takes came (but SIGCHLD, which it handles). A
	 * session that started a program passes it on afterwards (see
	 * mp_track_forward()); one that did not stops (mp_track_stop()) when
	 * there is no hook.
	 */
	void (*signal)(void *ctx, const struct signalfd_siginfo *si);
	/* The program the session started ended, with this wait status. */
	void (*exited)(void *ctx, int wait_status);
	/*
	 * A descriptor of the caller's polled with the session's (a terminal,
	 * an answer awaited): fd() gives it, or -1; timeout() the most the loop
	 * may wait for it in ms, or -1; ready() comes after each round with
	 * what poll said of it (0 when nothing). While fd() gives one, the
	 * session does not end by itself (a live view is still shown).
	 */
	int (*fd)(void *ctx);
	int (*timeout)(void *ctx);
	void (*ready)(void *ctx, short revents);
	/* A line for the user while the session runs (a signal not passed on, a FIFO waited for). */
	void (*say)(void *ctx, const char *line);
};

struct mp_track;

/* A session as o says (o must outlive it); NULL with err when it cannot be set up. */
struct mp_track *mp_track_new(const struct mp_track_opts *o, struct strbuf *err);
/* Free t: the socket and its directory removed, and a capture nothing was written into. */
void mp_track_free(struct mp_track *t);
void mp_track_set_hooks(struct mp_track *t, const struct mp_track_hooks *hooks);

/*
 * Take the signals sigs[0..n) in the loop (blocked, read from a signalfd)
 * until the session is freed; SIGINT, SIGTERM, SIGHUP and SIGQUIT among
 * them are stops too, as mp_track_stop() is, for an output that takes
 * nothing: a FIFO no process opened is waited for no more, and one whose
 * reader took nothing for MP_WRITER_STALL_MS after a stop is given up. A
 * library caller leaves the process's signals alone.
 */
int mp_track_signals(struct mp_track *t, const int *sigs, size_t n, struct strbuf *err);
/* The signal mask the session found (the program it starts gets it back). */
const sigset_t *mp_track_old_mask(const struct mp_track *t);

/*
 * The socket tracked processes connect to: "stream" in a new private
 * directory base/NAME-XXXXXX, given to uid:gid (mp_collector_socket()).
 */
int mp_track_listen(struct mp_track *t, const char *base, const char *name, uid_t uid, gid_t gid,
		    struct strbuf *err);
/* The same for a socket made elsewhere (memprof live): fd listens at dir/stream, as we see it. */
void mp_track_adopt_socket(struct mp_track *t, int fd, const char *dir);
/* The socket's path, for the tracker. */
const char *mp_track_socket(const struct mp_track *t);

/* The tracker library (a new string), or NULL with a one-line reason in err when it is not there. */
char *mp_track_tracker(struct strbuf *err);
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

/*
 * Start tg's program (memprof run; name: what the user called it, for
 * messages) in a child that waits for mp_track_go(): the signal mask
 * restored, then prepare(ctx) (NULL: none), which returns 0 or an errno,
 * just before it executes the program. Its pid, or -1 with err.
 */
pid_t mp_track_spawn(struct mp_track *t, const struct mp_target *tg, const char *name,
		     int (*prepare)(void *ctx), void *ctx, struct strbuf *err);
/*
 * Let the program run. 0; or -1 when it could not be executed, with err and
 * in *status the shell's status for it (127 not found, 126 otherwise).
 */
int mp_track_go(struct mp_track *t, struct strbuf *err, int *status);
/*
 * Pass a signal memprof got on to the program it started (the loop does,
 * after the signal hook), as if memprof were the program; but a kill of
 * the whole process group gives the program its own copy, which nothing
 * tells apart. So: signals from the kernel (the terminal's) are never
 * passed on, nor one the program has pending, nor one it catches (a second
 * copy could make a graceful shutdown a forced one: 1, with a line saying
 * so in why); others are. 0 otherwise.
 */
int mp_track_forward(struct mp_track *t, const struct signalfd_siginfo *si, struct strbuf *why);

/*
 * Name and create the capture: o->output, or memprof-<name's base>.<pid>.bin
 * (mp_capture_default_name()); refused when it exists, unless o->force. A
 * FIFO no process reads yet is waited for (saying so), until a signal of
 * those above or mp_track_stop(). 0, or -1 with err.
 */
int mp_track_capture(struct mp_track *t, const char *name, pid_t pid, struct strbuf *err);
/* The capture's path, or NULL (none, or a live view's session). */
const char *mp_track_output(const struct mp_track *t);
/*
 * The collector, writing process pid's stream to the capture (if any),
 * observer (or NULL) seeing every record; it accepts the trackers
 * connecting to the socket from now on.
 */
int mp_track_collect(struct mp_track *t, pid_t pid, const struct mp_collect_observer *observer,
		     struct strbuf *err);

/*
 * memprof detach PID asks this session (lib/process/attachctl): a request
 * stops it (mp_track_stop()), and is answered with the capture's path when
 * it is finished. Called first, so that a detach sent at any moment after
 * the session began waits for it rather than finding nobody.
 */
int mp_track_control(struct mp_track *t, pid_t pid, struct strbuf *err);

/* Stop after ms (memprof attach --duration). */
void mp_track_set_duration(struct mp_track *t, unsigned ms);
/* A session with no stream after ms has failed (the tracker never connected). */
void mp_track_expect_stream(struct mp_track *t, unsigned ms);
/* After a stop, wait at most ms (default 10 s) for the trackers to end their streams. */
void mp_track_set_stop_wait(struct mp_track *t, unsigned ms);
/*
 * Stop: ask every tracker to end its stream (a detach; one that connects
 * later is asked too), then the session ends when they did. A second stop
 * ends it at once. Safe from another thread.
 */
void mp_track_stop(struct mp_track *t);
/*
 * The loop: one round, waiting at most timeout_ms (-1: as the session and
 * its hooks need), or rounds until the session ends. Both return whether
 * it ended: every stream ended and, for a program it started, the program
 * too; or a stop was not confirmed in time; or no stream came in time.
 */
bool mp_track_step(struct mp_track *t, int timeout_ms);
void mp_track_run(struct mp_track *t);
/* Streams connected so far, and still open. */
size_t mp_track_streams(const struct mp_track *t);
size_t mp_track_open_streams(const struct mp_track *t);

struct mp_track_result {
	const struct mp_capture_info *infos;   /* each capture written (valid until mp_track_free) */
	size_t ninfos;
	bool written;            /* the main process's capture, whole */
	bool tracked;            /* a tracker connected at all */
	bool never_connected;    /* mp_track_expect_stream()'s time ran out */
	bool unconfirmed;        /* a stop that the trackers did not confirm in time */
	int status;              /* the wait status of the program the session started */
	const char **warnings, **notes;   /* the collector's (see collect.h) */
	size_t nwarnings, nnotes;
	/* The modules without debug information, what it costs and how to get it, or NULL. */
	const char *hint;
};
/*
 * Finish: every capture's trailer written, files closed; the capture
 * removed when nothing was written into it. Fills *r.
 */
void mp_track_finish(struct mp_track *t, struct mp_track_result *r);
/*
 * What a command says of r, one line each, each after prefix: the
 * collector's warnings ("warning: ..."); unless MP_TRACK_QUIET, its notes,
 * the hint on the modules without debug information, each capture written ("wrote
 * 'PATH': ...", its counts "since attach" with MP_TRACK_SINCE_ATTACH) and
 * what else is worth knowing of it. prog names the program.
 */
enum { MP_TRACK_SINCE_ATTACH = 1 << 0, MP_TRACK_QUIET = 1 << 1 };
void mp_track_messages(const struct mp_track *t, const struct mp_track_result *r, const char *prog,
		       unsigned flags, const char *prefix, struct strbuf *out);

#endif
