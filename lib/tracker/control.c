/*
 * The control socket: `memprof ctl PID start|stop|snapshot|status` asks a
 * tracker that runs in a service (preloaded by hand, or under memprof run)
 * to start or stop a capture, to snapshot it, or how it is doing, with no
 * ptrace. A tracker memprof attach loaded listens while it records: its
 * capture can be snapshot and asked about (memprof detach ends it). The
 * socket is /tmp/memprof-UID/ctl.PID, in a directory only its user can
 * enter; a request from another user (root excepted) is refused.
 * One thread of ours (all signals blocked) answers, one request per
 * connection: a line in, a line out ("ok ..." or "error ...").
 * `memprof live PID` asks "stream PATH": a session streaming to the view's
 * collector at PATH, not a capture, which ends when the view does.
 */
#include <config.h>

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "lib/tracker/config.h"
#include "lib/tracker/control.h"
#include "lib/tracker/direct.h"
#include "lib/tracker/fds.h"
#include "lib/tracker/session.h"
#include "lib/tracker/stream.h"
#include "lib/transport/reply.h"

static int listen_fd = -1;
static int wake_fd = -1;          /* an eventfd: the thread leaves when it is written */
static pthread_t ctl_thread;
static int ctl_running, ctl_restart;
/* Listening with no thread yet: memprof_control_wake() (or a ring's quarter) starts it. */
static int lazy;
static char sock_path[108];
static pid_t sock_owner; /* the process that bound it: only it may remove it */

/* Append a string to a reply buffer of cap bytes at *n (cut to fit). */
static void add(char *buf, size_t cap, size_t *n, const char *s)
{
	size_t l = strlen(s);
	if (l > cap - 1 - *n)
		l = cap - 1 - *n;
	memcpy(buf + *n, s, l);
	*n += l;
	buf[*n] = '\0';
}

static void add_num(char *buf, size_t cap, size_t *n, uint64_t v)
{
	char num[24];
	mp_u64_to_dec(num, v);
	add(buf, cap, n, num);
}

/*
 * Where the capture goes: " into 'FILE'" (the collector's file, once it said
 * it opened it), or " for the collector at 'SOCKET'".
 */
static void add_sink(char *r, size_t cap, size_t *n)
{
	char path[MP_REPLY_TEXT_MAX + 1];
	const char *into = mp_cfg.direct ? mp_direct_path()
			   : mp_stream_capture_wait(0, path, sizeof(path)) == 1 ? path : NULL;
	add(r, cap, n, into ? " into '" : " for the collector at '");
	add(r, cap, n, into ? into : mp_cfg.socket_path);
	add(r, cap, n, "'");
}

/* How long the stream has run: " for 12.3 s". */
static void add_since(char *r, size_t cap, size_t *n)
{
	uint64_t tenths = mp_stream_since_start_us() / 100000;
	add(r, cap, n, " for ");
	add_num(r, cap, n, tenths / 10);
	add(r, cap, n, ".");
	add_num(r, cap, n, tenths % 10);
	add(r, cap, n, " s");
}

/* Captures begun, but those the collector could not create: " 2 captures written". */
static unsigned not_created;
static void add_written(char *r, size_t cap, size_t *n)
{
	unsigned k = mp_st.capture_no - not_created;
	add_num(r, cap, n, k);
	add(r, cap, n, k == 1 ? " capture written" : " captures written");
}

static void status(char *r, size_t cap, size_t *n)
{
	const char *live = mp_session_live_path();
	if (mp_state == MP_STATE_ON && live) {
		add(r, cap, n, "ok streaming to a live view (memprof live) at '");
		add(r, cap, n, live);
		add(r, cap, n, "'");
		add_since(r, cap, n);
		add(r, cap, n, ", ");
		add_written(r, cap, n);
	} else if (mp_state == MP_STATE_ON) {
		add(r, cap, n, mp_st.mode == MP_MODE_ATTACH ? "ok recording (memprof attach)" : "ok recording");
		add_sink(r, cap, n);
		add_since(r, cap, n);
		add(r, cap, n, ", capture ");
		add_num(r, cap, n, mp_st.capture_no);
		add(r, cap, n, ", ");
		add_num(r, cap, n, mp_st.h ? mp_st.h->n_rings : 0);
		add(r, cap, n, " thread rings");
	} else {
		add(r, cap, n, "ok paused, ");
		add_written(r, cap, n);
		/* (What memprof serve reports on.) */
		if (mp_inproc_last_capture()[0]) {
			add(r, cap, n, ", the last into '");
			add(r, cap, n, mp_inproc_last_capture());
			add(r, cap, n, "'");
		}
	}
	add(r, cap, n, "\n");
}

/* What is recording, for a refused request: "already recording into 'FILE'" and the like. */
static void recording(char *r, size_t cap, size_t *n)
{
	const char *live = mp_session_live_path();
	if (live) {
		add(r, cap, n, "error a live view (memprof live) is watching this process, at '");
		add(r, cap, n, live);
		add(r, cap, n, "'\n");
	} else {
		add(r, cap, n, "error already recording");
		add_sink(r, cap, n);
		add(r, cap, n, "\n");
	}
}

/* "stream PATH": a session for the live view whose collector listens at PATH (memprof live). */
static void stream(const char *path, char *r, size_t cap, size_t *n)
{
	int e = mp_session_start_live(path);
	switch (e) {
	case 0:
		add(r, cap, n, "ok streaming to '");
		add(r, cap, n, path);
		add(r, cap, n, "'\n");
		break;
	case -EALREADY: recording(r, cap, n); break;
	case -EBUSY: add(r, cap, n, "error the last capture is still being finished\n"); break;
	case -EINVAL:
		add(r, cap, n, "error invalid socket path '");
		add(r, cap, n, path);
		add(r, cap, n, "'\n");
		break;
	default:
		add(r, cap, n, "error cannot stream to '");
		add(r, cap, n, path);
		add(r, cap, n, "'\n");
		break;
	}
}

/*
 * What "start" may say after the word: "aggregate", and settings for this
 * capture, each NAME=VALUE as in the environment (memprof-run(1),
 * lib/transport/settings.h): those of a capture, not where it goes nor the
 * tracker's own (memprof serve's start takes them).
 */
static const enum mp_setting start_settings[] = {
	MP_SET_INTERVAL_MS, MP_SET_MAX_DEPTH, MP_SET_FOLLOW_FORK, MP_SET_PYTHON_FRAMES,
	MP_SET_SAMPLING_INTERVAL,
};

struct start_opts {
	bool aggregate;
	int n;
	const char *entry[8];
};

/* The words of a start request into *o; NULL, or the word that is wrong. */
static const char *start_words(char *words, struct start_opts *o)
{
	memset(o, 0, sizeof(*o));
	for (char *w = strtok(words, " "); w; w = strtok(NULL, " ")) {
		int k = mp_settings_key(w, strlen(w));
		size_t i, ns = sizeof(start_settings) / sizeof(start_settings[0]);
		uint32_t lo, hi;
		if (!strcmp(w, "aggregate")) {
			o->aggregate = true;
			continue;
		}
		for (i = 0; i < ns && (int)start_settings[i] != k; i++)
			;
		if (i == ns || mp_settings_check(w, strlen(w), &lo, &hi) ||
		    o->n == (int)(sizeof(o->entry) / sizeof(o->entry[0])))
			return w;
		o->entry[o->n++] = w;
	}
	return NULL;
}

/* The settings of a start request over those of the tracker (mp_inproc_start()'s set). */
static void start_set(struct mp_config *c, const void *arg)
{
	const struct start_opts *o = arg;
	for (int i = 0; i < o->n; i++)
		mp_settings_set(c, o->entry[i], strlen(o->entry[i]));
}

/* "start [aggregate] [NAME=VALUE...]": a new capture, where the configuration says. */
static void start(char *words, uint64_t wait_ms, char *r, size_t cap, size_t *n)
{
	struct start_opts o;
	const char *bad = start_words(words, &o);
	int e;
	if (bad) {
		add(r, cap, n, "error invalid start option '");
		add(r, cap, n, bad);
		add(r, cap, n, "' (aggregate, or MEMPROF_INTERVAL_MS, MEMPROF_MAX_DEPTH, MEMPROF_FOLLOW_FORK, "
			       "MEMPROF_PYTHON_FRAMES, MEMPROF_SAMPLING_INTERVAL=VALUE within its bounds)\n");
		return;
	}
	e = mp_inproc_start(NULL, MP_INPROC_CONTROL | (o.aggregate ? MP_INPROC_AGGREGATE : 0), start_set, &o);
	if (!e && !mp_cfg.direct && wait_ms) {
		/* The collector names the file, and may fail to create it: its word first. */
		char text[MP_REPLY_TEXT_MAX + 1];
		if (mp_stream_capture_wait((unsigned)wait_ms, text, sizeof(text)) == 0) {
			mp_inproc_stop_wait(0, NULL, 0);
			not_created++;
			add(r, cap, n, "error the collector cannot write capture ");
			add_num(r, cap, n, mp_st.capture_no);
			add(r, cap, n, ": ");
			add(r, cap, n, text);
			add(r, cap, n, "\n");
			return;
		}
	}
	if (!e) {
		add(r, cap, n, "ok recording capture ");
		add_num(r, cap, n, mp_st.capture_no);
		add_sink(r, cap, n);
		add(r, cap, n, "\n");
	} else if (e == -EBUSY && mp_state == MP_STATE_ON) {
		recording(r, cap, n);
	} else if (e == -ENOTSUP) {
		add(r, cap, n, "error this tracker writes its own capture and aggregates it without "
			       "sampling: add MEMPROF_SAMPLING_INTERVAL=0, or start it under memprof run "
			       "--paused\n");
	} else {
		add(r, cap, n, e == -EBUSY ? "error the last capture is still being finished\n"
					   : "error the capture could not be started: see the "
					     "program's standard error\n");
	}
}

/*
 * "start", "snapshot" and "stop" may end with how long the asker waits (ms)
 * for the collector's word on the file: cut from req into *wait_ms. -1 when
 * too long.
 */
static int cut_wait(char *req, uint64_t *wait_ms)
{
	char *sp = strrchr(req, ' ');
	*wait_ms = 0;
	if ((strncmp(req, "start", 5) && strncmp(req, "snapshot", 8) && strncmp(req, "stop", 4)) || !sp ||
	    sp[1] < '0' || sp[1] > '9')
		return 0;
	if (mp_dec_u64(sp + 1, wait_ms) < 0 || *wait_ms > 86400000)
		return -1;
	*sp = '\0';
	return 0;
}

static void serve(const char *request, char *r, size_t cap)
{
	size_t n = 0;
	uint64_t wait_ms;
	char req[256];
	int e;
	strncpy(req, request, sizeof(req) - 1);
	req[sizeof(req) - 1] = '\0';
	if (cut_wait(req, &wait_ms) < 0) {
		add(r, cap, &n, "error invalid wait in '");
		add(r, cap, &n, request);
		add(r, cap, &n, "' (milliseconds, at most a day)\n");
		return;
	}
	/* (Between a detach and the socket's end: the collector is memprof attach's, finishing.) */
	if (mp_st.mode == MP_MODE_ATTACH && mp_state != MP_STATE_ON &&
	    (!strncmp(req, "stream ", 7) || !strncmp(req, "start", 5))) {
		add(r, cap, &n, "error memprof attach has detached from this process\n");
		return;
	}
	if (!strncmp(req, "stream ", 7)) {
		stream(req + 7, r, cap, &n);
	} else if (!strcmp(req, "start") || !strncmp(req, "start ", 6)) {
		start(req + 5, wait_ms, r, cap, &n);
	} else if (!strcmp(req, "stop")) {
		if (mp_state == MP_STATE_ON && mp_st.mode == MP_MODE_ATTACH) {
			/* Its collector waits for the end it is told, with the GOT put back. */
			add(r, cap, &n, "error this capture is memprof attach's: memprof detach ends it\n");
		} else if (mp_state != MP_STATE_ON) {
			add(r, cap, &n, "error not recording\n");
		} else if (mp_session_live_path()) {
			mp_session_stop(NULL);
			add(r, cap, &n, "ok stopped streaming to the live view\n");
		} else {
			char path[4096] = "";
			/*
			 * As memprof_stop(): hooks put in the GOT come out, the settings go
			 * back. A collector's capture is named once it says it finished it
			 * (in time); ours, when we wrote its trailer.
			 */
			if (mp_cfg.direct) {
				strncpy(path, mp_direct_path(), sizeof(path) - 1);
				mp_inproc_stop_wait(0, NULL, 0);
			} else {
				mp_inproc_stop_wait((unsigned)wait_ms, path, sizeof(path));
			}
			add(r, cap, &n, "ok stopped");
			if (path[0]) {
				add(r, cap, &n, ": '");
				add(r, cap, &n, path);
				add(r, cap, &n, "' is complete");
			}
			add(r, cap, &n, "\n");
		}
	} else if (!strcmp(req, "snapshot")) {
		unsigned num = 0;
		char path[4096];
		e = mp_session_snapshot(&num, NULL, path, sizeof(path));
		if (!e && !path[0] && wait_ms) {
			char text[MP_REPLY_TEXT_MAX + 1];
			int w = mp_stream_snapshot_wait(num, (unsigned)wait_ms, text, sizeof(text));
			if (w == 1) {
				strncpy(path, text, sizeof(path) - 1);
				path[sizeof(path) - 1] = '\0';
			} else if (w == 0) {
				add(r, cap, &n, "error snapshot ");
				add_num(r, cap, &n, num);
				add(r, cap, &n, " could not be written: ");
				add(r, cap, &n, text);
				add(r, cap, &n, "\n");
				return;
			}
		}
		if (e == -ENOENT) {
			add(r, cap, &n, "error not recording\n");
		} else if (e == -EPERM) {
			add(r, cap, &n, "error a live view (memprof live) is watching this process: there "
					"is no capture to snapshot\n");
		} else if (e) {
			add(r, cap, &n, "error the snapshot could not be written: ");
			add(r, cap, &n, strerror(-e));
			add(r, cap, &n, "\n");
		} else {
			add(r, cap, &n, "ok snapshot ");
			add_num(r, cap, &n, num);
			if (path[0]) {
				add(r, cap, &n, " written to '");
				add(r, cap, &n, path);
				add(r, cap, &n, "'\n");
			} else {
				add(r, cap, &n, wait_ms ? " asked of the collector, which has not said it is "
							  "written yet; it writes it next to its capture as "
							: " asked of the collector, which writes it next to its "
							  "capture as ");
				add(r, cap, &n, "CAPTURE.snap.");
				add_num(r, cap, &n, num);
				add(r, cap, &n, "\n");
			}
		}
	} else if (!strcmp(req, "status")) {
		status(r, cap, &n);
	} else {
		add(r, cap, &n, "error unknown request '");
		add(r, cap, &n, req);
		add(r, cap, &n, "' (start, stop, snapshot or status)\n");
	}
}

static void handle(int fd)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	struct pollfd p = { fd, POLLIN, 0 };
	char req[256], reply[4200];
	size_t got = 0;
	reply[0] = '\0';
	/* The directory keeps other users out; this is the second lock. */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 ||
	    (cred.uid != geteuid() && cred.uid != 0)) {
		size_t n = 0;
		add(reply, sizeof(reply), &n, "error refused: the tracker's process belongs to another user\n");
		goto reply;
	}
	/* One line, within a second: a client that says nothing is not waited for. */
	while (got < sizeof(req) - 1 && poll(&p, 1, 1000) == 1) {
		ssize_t r = read(fd, req + got, sizeof(req) - 1 - got);
		if (r <= 0)
			break;
		got += (size_t)r;
		if (memchr(req, '\n', got))
			break;
	}
	req[got] = '\0';
	req[strcspn(req, "\r\n")] = '\0';
	serve(req, reply, sizeof(reply));
reply:
	if (send(fd, reply, strlen(reply), MSG_NOSIGNAL) < 0)
		return; /* the client went away: nothing to tell */
}

static int start_thread(void);

static void *control_main(void *arg)
{
	(void)arg;
	mp_in_hook = 1; /* this thread is the tracker's: never record it */
	syscall(SYS_prctl, PR_SET_NAME, "memprof-ctl", 0, 0, 0);
	/* Cancelled (mp_control_park() without its eventfd) only while it waits: never inside a request. */
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
	for (;;) {
		struct pollfd p[2] = { { listen_fd, POLLIN, 0 }, { wake_fd, POLLIN, 0 } };
		int fd, r;
		pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
		r = poll(p, 2, -1);
		pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[1].revents)
			break; /* mp_control_park() */
		/* Closed past our hooks: the number may be the program's listening socket now. */
		if ((p[0].revents & (POLLERR | POLLNVAL)) || !mp_fd_intact(listen_fd))
			break;
		fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED || errno == EAGAIN)
				continue;
			break; /* closed (a forked child's copy), or gone wrong */
		}
		/* Ours while it is answered (a start or snapshot may wait for the collector). */
		fd = mp_fd_own(fd);
		handle(fd);
		mp_fd_close(fd);
	}
	return NULL;
}

/*
 * Whether the thread may wait until it is asked for: a stream whose reader
 * samples the process (memprof run, and the children it follows) has that
 * reader beside it, which watches the socket once passed to it and wakes us
 * (see ring.h's ctl_state).
 */
static bool may_wait(void)
{
	return mp_state == MP_STATE_ON && mp_st.h && mp_st.reader_ticks; /* (reader_ticks: not direct) */
}

int mp_control_start(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char dir[64], num[24];
	int n, fd;
	if (!mp_cfg.control || listen_fd >= 0)
		return 0;
	n = mp_user_dir(dir, sizeof(dir));
	if (n < 0) {
		/* (Not in a process memprof attach got into, nor by the API: its output is the program's alone.) */
		if (mp_st.mode != MP_MODE_ATTACH && !mp_st.quiet)
			mp_write_stderr("cannot use '", dir,
					"' for the control socket (it must be a directory of this user's, "
					"mode 0700); memprof ctl cannot reach this process");
		return -1;
	}
	memcpy(sock_path, dir, (size_t)n);
	memcpy(sock_path + n, "/ctl.", 5);
	mp_u64_to_dec(num, (uint64_t)getpid());
	memcpy(sock_path + n + 5, num, strlen(num) + 1);
	memcpy(sa.sun_path, sock_path, strlen(sock_path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	/* A file left by a process of the same pid that died: ours now. */
	unlink(sock_path);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || chmod(sock_path, 0600) < 0 ||
	    listen(fd, 8) < 0) {
		close(fd);
		return -1;
	}
	listen_fd = fd;
	mp_fd_own_at(&listen_fd);
	sock_owner = getpid();
	wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	mp_fd_own_at(&wake_fd);
	if (wake_fd < 0) {
		mp_control_end();
		return -1;
	}
	if (may_wait()) {
		/* (Waiting first: the reader that gets the socket sees it so.) */
		__atomic_store_n(&mp_st.h->ctl_state, MP_CTL_LAZY, __ATOMIC_RELEASE);
		if (mp_stream_pass_control(listen_fd) == 0) {
			__atomic_store_n(&lazy, 1, __ATOMIC_RELEASE);
			mp_stream_ctl_wake = mp_control_wake;
			return 0;
		}
		__atomic_store_n(&mp_st.h->ctl_state, MP_CTL_UNSAID, __ATOMIC_RELEASE);
	}
	if (start_thread() < 0) {
		mp_control_end();
		return -1;
	}
	return 0;
}

int mp_control_wake(void)
{
	int r, e = errno;
	if (!__atomic_exchange_n(&lazy, 0, __ATOMIC_ACQ_REL))
		return 0;
	/* The thread's stack and TLS are the tracker's: unrecorded. */
	mp_in_hook++;
	r = listen_fd >= 0 ? start_thread() : -1;
	if (r == 0) {
		if (mp_st.h) /* (none after a stop: mp_control_wake() from api_stop()) */
			__atomic_store_n(&mp_st.h->ctl_state, MP_CTL_RUNNING, __ATOMIC_RELEASE);
	} else if (listen_fd >= 0) {
		/* (No thread to be had just now: the next request tries again, not every ring's quarter.) */
		if (mp_st.h)
			__atomic_store_n(&mp_st.h->ctl_wake, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&lazy, 1, __ATOMIC_RELEASE);
	}
	mp_in_hook--;
	errno = e;
	return r;
}

/*
 * What the reader calls in the process (memprof run's collector, with ptrace,
 * at a point where no thread is in the C library or the loader) when a
 * request waits at a socket whose thread was never started: 0 once it runs.
 */
MP_EXPORT long memprof_control_wake(const char *arg)
{
	(void)arg;
	return mp_control_wake();
}

/* The thread that answers; joinable, so that mp_control_park() knows it gone. */
static int start_thread(void)
{
	pthread_attr_t attr;
	sigset_t all, old;
	int ok;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 128 * 1024);
	ok = pthread_create(&ctl_thread, &attr, control_main, NULL) == 0;
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	ctl_running = ok;
	return ok ? 0 : -1;
}

void mp_control_park(void)
{
	uint64_t one = 1;
	if (!ctl_running)
		return;
	/* It finishes the request it is answering, if any, and leaves. */
	if (mp_fd_intact(wake_fd)) {
		if (write(wake_fd, &one, sizeof(one)) != sizeof(one))
			return; /* cannot happen with an eventfd below its maximum */
	} else {
		pthread_cancel(ctl_thread); /* its eventfd was closed past our hooks: poll() is a cancellation point */
	}
	pthread_join(ctl_thread, NULL);
	if (mp_fd_intact(wake_fd) && read(wake_fd, &one, sizeof(one)) < 0)
		one = 0;
	ctl_running = 0;
	ctl_restart = 1;
}

void mp_control_unpark(void)
{
	if (ctl_restart && listen_fd >= 0)
		start_thread();
	ctl_restart = 0;
}

void mp_control_end(void)
{
	lazy = 0;
	if (wake_fd >= 0 && !ctl_running) {
		mp_fd_close(wake_fd);
		wake_fd = -1;
	}
	if (listen_fd < 0)
		return;
	if (sock_owner == getpid())
		unlink(sock_path);
	mp_fd_close(listen_fd);
	listen_fd = -1;
}

void mp_control_stop(void)
{
	mp_control_park();
	ctl_restart = 0;
	mp_control_end();
}

void mp_control_forked(void)
{
	/* The parent's socket stays the parent's; the thread that served it is not here. */
	mp_fd_close(listen_fd);
	mp_fd_close(wake_fd);
	listen_fd = wake_fd = -1;
	ctl_running = ctl_restart = lazy = 0;
}
