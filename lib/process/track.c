/* A tracking session: the capture, the collector, the tracker's settings and the one event loop. */
#include <config.h>
#include "lib/process/track-private.h"

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/process/attachctl.h"
#include "lib/transport/merge.h"
#include "lib/util/paths.h"
#include "lib/util/sort.h"
#include "lib/util/xalloc.h"

#define STOP_WAIT_MS 10000
/* After the program ended, a stream open this long with nothing on it is a stray descendant's. */
#define QUIET_END_MS 5000

extern char **environ;

long mp_track_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void mp_track_say(struct mp_track *t, const char *fmt, ...)
{
	struct strbuf line = STRBUF_INIT;
	va_list ap;
	if (!t->h.say)
		return;
	va_start(ap, fmt);
	strbuf_vaddf(&line, fmt, ap);
	va_end(ap);
	t->h.say(t->h.ctx, line.buf);
	strbuf_release(&line);
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* Add fd to the epoll set epfd, for reading: 0, or -1 with errno. */
static int watch_fd(int epfd, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN };
	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
}

struct mp_track *mp_track_new(const struct mp_track_opts *o, struct strbuf *err)
{
	struct mp_track *t = xcalloc(1, sizeof(*t));
	const char *what;
	t->o = o;
	t->out = (struct mp_capture_file)MP_CAPTURE_FILE_INIT;
	t->listen_fd = t->sfd = t->stop_sfd = t->ctl_fd = t->go_fd = t->err_fd = -1;
	t->stop_wait_ms = STOP_WAIT_MS;
	sigemptyset(&t->taken);
	/* A wait for an output gives up at a stop, whether a signal or mp_track_stop() asked it. */
	t->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	t->stopped_fd = t->stop_fd < 0 ? -1 : eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	t->cancel_fd = t->stopped_fd < 0 ? -1 : epoll_create1(EPOLL_CLOEXEC);
	what = t->stopped_fd < 0 ? "an eventfd (eventfd2)"
	       : t->cancel_fd < 0 ? "an epoll set (epoll_create1)"
	       : watch_fd(t->cancel_fd, t->stop_fd) || watch_fd(t->cancel_fd, t->stopped_fd)
		 ? "its epoll set (epoll_ctl)" : NULL;
	if (!what)
		return t;
	strbuf_addf(err, "cannot set up the session: cannot make %s: %s", what, strerror(errno));
	mp_track_free(t);
	return NULL;
}

void mp_track_set_hooks(struct mp_track *t, const struct mp_track_hooks *hooks)
{
	t->h = *hooks;
}

/* Forget the socket: its file and directory removed. */
static void remove_socket(struct mp_track *t)
{
	close_fd(&t->listen_fd);
	if (t->dir[0]) {
		char path[PATH_MAX + 8];
		snprintf(path, sizeof(path), "%s/stream", t->dir);
		unlink(path);
		rmdir(t->dir);
		t->dir[0] = '\0';
	}
}

void mp_track_free(struct mp_track *t)
{
	if (!t)
		return;
	mp_track_abandon(t);
	mp_collector_free(t->c);
	mp_capture_file_release(&t->out, true);
	remove_socket(t);
	close_fd(&t->ctl_fd);
	for (size_t i = 0; i < t->nrequesters; i++)
		close(t->requesters[i]);
	close_fd(&t->cancel_fd);
	close_fd(&t->stopped_fd);
	close_fd(&t->stop_fd);
	if (t->masked) {
		/* What came after the end is dropped, not delivered now with its default action. */
		struct signalfd_siginfo si;
		while (t->sfd >= 0 && read(t->sfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
			;
		while (t->stop_sfd >= 0 && read(t->stop_sfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
			;
		sigprocmask(SIG_SETMASK, &t->old_mask, NULL);
	}
	close_fd(&t->sfd);
	close_fd(&t->stop_sfd);
	free(t->hint);
	free(t);
}

/* ---- signals ---- */

static bool stop_signal(int sig)
{
	return sig == SIGINT || sig == SIGTERM || sig == SIGHUP || sig == SIGQUIT;
}

int mp_track_signals(struct mp_track *t, const int *sigs, size_t n, struct strbuf *err)
{
	sigset_t stops, others;
	sigemptyset(&stops);
	sigemptyset(&others);
	for (size_t i = 0; i < n; i++) {
		sigaddset(&t->taken, sigs[i]);
		sigaddset(stop_signal(sigs[i]) ? &stops : &others, sigs[i]);
	}
	sigprocmask(SIG_BLOCK, &t->taken, &t->old_mask);
	t->masked = true;
	t->sfd = signalfd(-1, &others, SFD_CLOEXEC | SFD_NONBLOCK);
	t->stop_sfd = t->sfd < 0 ? -1 : signalfd(-1, &stops, SFD_CLOEXEC | SFD_NONBLOCK);
	if (t->stop_sfd < 0) {
		strbuf_addf(err, "cannot set up signal handling: cannot make a signalfd (signalfd4): %s",
			    strerror(errno));
		return -1;
	}
	/* A stop signal not taken yet (the loop waits for an output) counts as a stop. */
	if (watch_fd(t->cancel_fd, t->stop_sfd)) {
		strbuf_addf(err, "cannot set up signal handling: %s", strerror(errno));
		return -1;
	}
	return 0;
}

const sigset_t *mp_track_old_mask(const struct mp_track *t)
{
	return &t->old_mask;
}

/* ---- the socket, the tracker and its settings ---- */

int mp_track_listen(struct mp_track *t, const char *base, const char *name, uid_t uid, gid_t gid,
		    struct strbuf *err)
{
	t->listen_fd = mp_collector_socket(base, name, uid, gid, t->dir, sizeof(t->dir), t->sock,
					   sizeof(t->sock), err);
	if (t->listen_fd < 0)
		t->dir[0] = '\0';
	return t->listen_fd < 0 ? -1 : 0;
}

void mp_track_adopt_socket(struct mp_track *t, int fd, const char *dir)
{
	t->listen_fd = fd;
	snprintf(t->dir, sizeof(t->dir), "%s", dir);
}

const char *mp_track_socket(const struct mp_track *t)
{
	return t->sock;
}

char *mp_track_tracker(struct strbuf *err)
{
	char *tracker = mp_tracker_path();
	if (access(tracker, R_OK) == 0)
		return tracker;
	strbuf_addf(err, "cannot find the tracker library '%s' (set MEMPROF_LIBDIR to its directory)",
		    tracker);
	free(tracker);
	return NULL;
}

void mp_track_settings(const struct mp_track_opts *o, const char *socket, bool paused,
		       struct mp_config *c)
{
	mp_settings_defaults(c);
	for (char **e = environ; e && *e; e++)
		if (!strncmp(*e, "MEMPROF_", 8))
			mp_settings_set(c, *e, strlen(*e));
	c->socket_path[0] = c->output[0] = '\0';
	if (socket && strlen(socket) < sizeof(c->socket_path))
		strcpy(c->socket_path, socket);
	c->interval_ms = o->interval_ms;
	c->max_depth = o->max_depth;
	c->follow_fork = o->follow_fork;
	c->python_frames = o->python_frames;
	c->sampling_interval = o->sampling_interval;
	c->paused = paused;
	/* Records keyed by the time-stamp counter need a barrier only the collector can ask for. */
	if (!mp_merge_can_fence())
		c->clock = MP_CFG_CLOCK_COUNTER;
}

static void put_env(void *ctx, const char *name, const char *value)
{
	(void)ctx;
	if (value)
		setenv(name, value, 1);
	else
		unsetenv(name);
}

void mp_track_setenv(const struct mp_config *c)
{
	mp_settings_encode(c, put_env, NULL);
}

static void put_line(void *ctx, const char *name, const char *value)
{
	if (value)
		strbuf_addf(ctx, "%s=%s\n", name, value);
}

void mp_track_attach_arg(const struct mp_config *c, struct strbuf *arg)
{
	mp_settings_encode(c, put_line, arg);
}

/* ---- the capture and the collector ---- */

int mp_track_capture(struct mp_track *t, const char *name, pid_t pid, struct strbuf *err)
{
	char *path = t->o->output ? xstrdup(t->o->output) : mp_capture_default_name(name, pid);
	int r = mp_capture_file_create(&t->out, path, t->o->force, err);
	if (r == 1) {
		mp_track_say(t, "'%s' is a FIFO: waiting for a process to read it", path);
		r = mp_capture_file_wait(&t->out, t->cancel_fd, err);
	}
	free(path);
	if (r < 0)
		mp_capture_file_release(&t->out, true);
	return r;
}

const char *mp_track_output(const struct mp_track *t)
{
	return t->out.path;
}

int mp_track_collect(struct mp_track *t, pid_t pid, const struct mp_collect_observer *observer,
		     struct strbuf *err)
{
	struct mp_collect_opts co = { 0 };
	const char *what;
	co.capture = t->out.path ? &t->out : NULL;
	co.force = t->o->force;
	co.symbolize = t->o->symbols;
	co.keep_addresses = t->o->keep_addresses;
	co.aggregate = t->o->aggregate;
	co.main_pid = pid;
	co.observer = observer;
	co.cancel_fd = t->cancel_fd;
	t->c = mp_collector_new(&co, &what);
	if (!t->c) {
		strbuf_addf(err, "cannot set up the collector: cannot make %s: %s", what, strerror(errno));
		return -1;
	}
	mp_collector_listen(t->c, t->listen_fd);
	t->listen_fd = -1;
	if (t->exited)
		mp_collector_main_exited(t->c, t->status);
	/* A stop asked already: the trackers that connect are told at once. */
	if (t->stopping)
		mp_collector_detach(t->c);
	return 0;
}

int mp_track_control(struct mp_track *t, pid_t pid, struct strbuf *err)
{
	t->ctl_fd = mp_attachctl_listen(pid, err);
	return t->ctl_fd < 0 ? -1 : 0;
}

/* ---- the loop ---- */

void mp_track_set_duration(struct mp_track *t, unsigned ms)
{
	t->stop_at = mp_track_now_ms() + (long)ms;
}

void mp_track_expect_stream(struct mp_track *t, unsigned ms)
{
	t->stream_by = mp_track_now_ms() + (long)ms;
}

void mp_track_set_stop_wait(struct mp_track *t, unsigned ms)
{
	t->stop_wait_ms = ms;
}

void mp_track_stop(struct mp_track *t)
{
	uint64_t one = 1;
	if (write(t->stop_fd, &one, sizeof(one)) < 0) {
		/* (an eventfd below its maximum takes it) */
	}
}

/* A stop, in the loop: the trackers asked to end; a second one ends the session. */
/* memprof was told to stop: from now on, an output that takes nothing for a while is given up. */
static void latch_stop(struct mp_track *t)
{
	uint64_t one = 1;
	if (write(t->stopped_fd, &one, sizeof(one)) < 0) {
		/* (an eventfd below its maximum takes it) */
	}
}

static void stop_now(struct mp_track *t)
{
	latch_stop(t);
	if (t->stopping) {
		t->finish_now = true;
		return;
	}
	t->stopping = true;
	t->stop_by = mp_track_now_ms() + (long)t->stop_wait_ms;
	if (t->c)
		mp_collector_detach(t->c);
}

size_t mp_track_streams(const struct mp_track *t)
{
	return t->c ? mp_collector_streams(t->c) : 0;
}

size_t mp_track_open_streams(const struct mp_track *t)
{
	return t->c ? mp_collector_open_streams(t->c) : 0;
}

/* Whether the caller's descriptor holds the session open (a live view still shown). */
static int hook_fd(struct mp_track *t)
{
	return t->h.fd ? t->h.fd(t->h.ctx) : -1;
}

/* Serve what the collector has now, without waiting. */
static void service_now(struct mp_track *t)
{
	struct pollfd fds[4];
	size_t n = mp_collector_pollfds(t->c, fds, 4);
	if (poll(fds, n, 0) > 0)
		mp_collector_service(t->c, fds, n);
}

/* Whether the session ended, as the time now finds it. */
static bool ended(struct mp_track *t, long now)
{
	if (t->finish_now)
		return true;
	if (hook_fd(t) >= 0)
		return false;
	if (t->child > 0) {
		if (!t->exited || !t->c || mp_collector_open_streams(t->c))
			return false;
		/*
		 * A followed child connects before it lets go of its parent's
		 * connection: one may wait to be accepted (a daemon's, whose
		 * parent left at once).
		 */
		service_now(t);
		return !mp_collector_open_streams(t->c);
	}
	if (mp_track_streams(t) && !mp_track_open_streams(t))
		return true;
	if (t->stream_by && !mp_track_streams(t) && now >= t->stream_by) {
		t->never_connected = true;
		return true;
	}
	if (t->stopping && now >= t->stop_by) {
		t->unconfirmed = mp_track_open_streams(t) > 0;
		return true;
	}
	return false;
}

/* The soonest of timeout (ms, -1 none) and the time until at (0: none). */
static int sooner(int timeout, long at, long now)
{
	long left;
	if (!at)
		return timeout;
	left = at > now ? at - now : 0;
	if (left > 3600 * 1000)
		left = 3600 * 1000;
	return timeout < 0 || left < timeout ? (int)left : timeout;
}

static void take_signals(struct mp_track *t, int fd)
{
	struct signalfd_siginfo si;
	while (read(fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		int sig = (int)si.ssi_signo;
		struct strbuf why = STRBUF_INIT;
		if (sig == SIGCHLD) {
			mp_track_reap(t);
			continue;
		}
		if (stop_signal(sig))
			latch_stop(t);
		if (t->h.signal)
			t->h.signal(t->h.ctx, &si);
		if (t->child > 0) {
			if (sig != SIGWINCH && mp_track_forward(t, &si, &why))
				mp_track_say(t, "warning: %s", why.buf);
		} else if (!t->h.signal && stop_signal(sig)) {
			stop_now(t);
		}
		strbuf_release(&why);
	}
}

/* memprof detach PID asked: stop, and answer it at the finish. */
static void take_request(struct mp_track *t)
{
	int cfd = mp_attachctl_accept(t->ctl_fd);
	if (cfd < 0)
		return;
	if (t->nrequesters == MP_TRACK_REQUESTERS) {
		close(cfd);
		return;
	}
	t->requesters[t->nrequesters++] = cfd;
	if (!t->stopping)
		stop_now(t);
}

bool mp_track_step(struct mp_track *t, int timeout_ms)
{
	struct pollfd fds[8];
	long now = mp_track_now_ms();
	int timeout = timeout_ms, hfd, at_sig = -1, at_stop_sig = -1, at_stop = -1, at_ctl = -1,
	    at_hook = -1, r;
	size_t n = 0, first, ns = 0;
	bool quiet_wait = false;
	uint64_t stops;

	if (t->ended || (t->ended = ended(t, now)))
		return true;
	hfd = hook_fd(t);
	if (!t->stopping)
		timeout = sooner(timeout, t->stop_at, now);
	if (t->stopping)
		timeout = sooner(timeout, t->stop_by, now);
	if (!mp_track_streams(t))
		timeout = sooner(timeout, t->stream_by, now);
	if (hfd >= 0 && t->h.timeout) {
		int ht = t->h.timeout(t->h.ctx);
		if (ht >= 0 && (timeout < 0 || ht < timeout))
			timeout = ht;
	}
	if (t->child > 0 && t->exited && hfd < 0 && (timeout < 0 || timeout > QUIET_END_MS)) {
		timeout = QUIET_END_MS;
		quiet_wait = true;
	}
	if (t->sfd >= 0) {
		at_sig = (int)n;
		fds[n++] = (struct pollfd){ .fd = t->sfd, .events = POLLIN };
	}
	if (t->stop_sfd >= 0) {
		at_stop_sig = (int)n;
		fds[n++] = (struct pollfd){ .fd = t->stop_sfd, .events = POLLIN };
	}
	at_stop = (int)n;
	fds[n++] = (struct pollfd){ .fd = t->stop_fd, .events = POLLIN };
	if (t->ctl_fd >= 0) {
		at_ctl = (int)n;
		fds[n++] = (struct pollfd){ .fd = t->ctl_fd, .events = POLLIN };
	}
	if (hfd >= 0) {
		at_hook = (int)n;
		fds[n++] = (struct pollfd){ .fd = hfd, .events = POLLIN };
	}
	first = n;
	if (t->c)
		ns = mp_collector_pollfds(t->c, fds + n, sizeof(fds) / sizeof(fds[0]) - n);
	r = poll(fds, n + ns, timeout);
	if (r < 0)
		r = 0; /* (EINTR: a signal we do not take) */
	if (r == 0 && quiet_wait && mp_track_open_streams(t) && !t->o->follow_fork) {
		/* Nothing for a while after the program ended: only a stray descendant holds its stream. */
		t->ended = true;
		return true;
	}
	if (at_sig >= 0 && fds[at_sig].revents)
		take_signals(t, t->sfd);
	if (at_stop_sig >= 0 && fds[at_stop_sig].revents)
		take_signals(t, t->stop_sfd);
	if (fds[at_stop].revents && read(t->stop_fd, &stops, sizeof(stops)) == sizeof(stops))
		while (stops--)
			stop_now(t);
	if (at_ctl >= 0 && (fds[at_ctl].revents & POLLIN))
		take_request(t);
	if (t->c)
		mp_collector_service(t->c, fds + first, ns);
	now = mp_track_now_ms();
	if (!t->stopping && t->stop_at && now >= t->stop_at)
		stop_now(t);
	if (at_hook >= 0 && t->h.ready)
		t->h.ready(t->h.ctx, fds[at_hook].revents);
	return t->ended = ended(t, now);
}

void mp_track_run(struct mp_track *t)
{
	while (!mp_track_step(t, -1))
		;
}

/* ---- the finish ---- */

void mp_track_finish(struct mp_track *t, struct mp_track_result *r)
{
	memset(r, 0, sizeof(*r));
	if (t->c) {
		r->ninfos = mp_collector_finish(t->c, &r->infos);
		for (size_t i = 0; i < r->ninfos; i++)
			r->written |= r->infos[i].main && !r->infos[i].failed;
		r->tracked = mp_collector_streams(t->c) > 0;
		r->nwarnings = mp_collector_warnings(t->c, &r->warnings);
		r->nnotes = mp_collector_notes(t->c, &r->notes);
		free(t->hint);
		t->hint = mp_collector_symbols_hint(t->c);
		r->hint = t->hint;
	}
	r->never_connected = t->never_connected;
	r->unconfirmed = t->unconfirmed;
	r->status = t->status;
	/* Those who asked for the detach are told where the capture is (from anywhere). */
	if (t->nrequesters) {
		char *whole = t->out.path ? mp_collect_whole_path(t->out.path) : NULL;
		for (size_t i = 0; i < t->nrequesters; i++)
			mp_attachctl_reply(t->requesters[i], whole);
		t->nrequesters = 0;
		free(whole);
	}
	/* A capture nothing was written into is not left behind. */
	mp_capture_file_release(&t->out, true);
	remove_socket(t);
	t->finished = true;
}

/*
 * A process tree names at most this many of its children's captures one by
 * one in the closing lines, those that allocated most (a build has
 * thousands); the others are summed up in one line.
 */
#define CHILDREN_NAMED 10

static bool child_capture(const struct mp_track *t, const struct mp_capture_info *ci)
{
	return t->o->follow_fork && !ci->capture && !ci->main && !ci->failed;
}

/*
 * Which captures the closing lines name, one flag each (a new array), or
 * NULL when they name every one: of more than CHILDREN_NAMED children's,
 * those that allocated most, ties taken in the order the captures began.
 */
static bool *children_named(const struct mp_track *t, const struct mp_track_result *r)
{
	uint64_t *a, least;
	size_t n = 0, more = 0, ties;
	bool *named;
	for (size_t i = 0; i < r->ninfos; i++)
		n += child_capture(t, &r->infos[i]);
	if (n <= CHILDREN_NAMED)
		return NULL;
	a = xmalloc(n * sizeof(*a));
	n = 0;
	for (size_t i = 0; i < r->ninfos; i++)
		if (child_capture(t, &r->infos[i]))
			a[n++] = r->infos[i].allocs;
	mp_qsort(a, n, sizeof(*a), mp_cmp_u64_desc);
	least = a[CHILDREN_NAMED - 1];
	while (a[more] > least)
		more++;
	ties = CHILDREN_NAMED - more;
	free(a);
	named = xcalloc(r->ninfos, sizeof(*named));
	for (size_t i = 0; i < r->ninfos; i++) {
		const struct mp_capture_info *ci = &r->infos[i];
		if (!child_capture(t, ci) || ci->allocs > least)
			named[i] = true;
		else if (ci->allocs == least && ties) {
			named[i] = true;
			ties--;
		}
	}
	return named;
}

/* What a capture misses, said of every one (named in the closing lines or not). */
static void lost_warning(const struct mp_capture_info *ci, const char *prefix, struct strbuf *out)
{
	if (ci->lost)
		strbuf_addf(out, "%swarning: '%s' misses %llu allocations and frees the tracker could "
			    "not record (made in signal handlers that interrupted it); 'memprof stats' "
			    "counts them\n", prefix, ci->path, (unsigned long long)ci->lost);
}

void mp_track_messages(const struct mp_track *t, const struct mp_track_result *r, const char *prog,
		       unsigned flags, const char *prefix, struct strbuf *out)
{
	size_t rest = 0;
	unsigned long long rest_allocs = 0, rest_frees = 0, rest_bytes = 0;
	bool *named;
	for (size_t i = 0; i < r->nwarnings; i++)
		strbuf_addf(out, "%swarning: %s\n", prefix, r->warnings[i]);
	if (flags & MP_TRACK_QUIET)
		return;
	for (size_t i = 0; i < r->nnotes; i++)
		strbuf_addf(out, "%s%s\n", prefix, r->notes[i]);
	/* One line however many modules: it is normal, and worth knowing. */
	if (r->hint)
		strbuf_addf(out, "%snote: %s\n", prefix, r->hint);
	named = children_named(t, r);
	for (size_t i = 0; i < r->ninfos; i++) {
		const struct mp_capture_info *ci = &r->infos[i];
		unsigned long long allocs = ci->allocs, frees = ci->frees;
		char what[160] = " (a child process)";
		if (ci->failed)
			continue;
		if (named && !named[i]) {
			rest++;
			rest_allocs += allocs;
			rest_frees += frees;
			rest_bytes += ci->file_bytes;
			lost_warning(ci, prefix, out);
			continue;
		}
		if (ci->main || ci->capture == 1)
			what[0] = '\0';
		else if (ci->capture)
			snprintf(what, sizeof(what), " (capture %u, from 'memprof ctl start')", ci->capture);
		/* A process tree: each capture's process by its command and pid. */
		if (t->o->follow_fork && !ci->capture)
			snprintf(what, sizeof(what), " (%s, pid %d, a child process)", ci->command,
				 (int)ci->pid);
		else if (t->o->follow_fork && ci->capture == 1)
			snprintf(what, sizeof(what), " (%s, pid %d)", ci->command, (int)ci->pid);
		if (flags & MP_TRACK_SINCE_ATTACH)
			strbuf_addf(out, "%swrote '%s'%s: %llu allocations and %llu frees since attach",
				    prefix, ci->path, what, allocs, frees);
		else
			strbuf_addf(out, "%swrote '%s'%s: %llu allocations, %llu frees, %llu stacks", prefix,
				    ci->path, what, allocs, frees, (unsigned long long)ci->traces);
		/* (Not said of a FIFO or a device, which keep nothing.) */
		if (ci->file_bytes)
			strbuf_addf(out, ", %llu bytes on disk", (unsigned long long)ci->file_bytes);
		strbuf_addch(out, '\n');
		lost_warning(ci, prefix, out);
		if (ci->exec_replaced)
			strbuf_addf(out, "%snote: '%s' replaced itself with another program (exec), which "
				    "was not tracked%s\n", prefix, prog,
				    t->o->follow_fork ? "" : "; --follow-fork tracks it");
	}
	if (rest) {
		strbuf_addf(out, "%swrote %zu more captures of child processes (the %d that allocated "
			    "most are above): %llu allocations, %llu frees", prefix, rest, CHILDREN_NAMED,
			    rest_allocs, rest_frees);
		if (rest_bytes)
			strbuf_addf(out, ", %llu bytes on disk", rest_bytes);
		strbuf_addch(out, '\n');
	}
	free(named);
}
