/* memprof live PID: a preloaded tracker streams to our collector, shown until the user quits. */
#include <config.h>
#include "lib/live/watch.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "lib/live/model.h"
#include "lib/live/tui.h"
#include "lib/process/collect.h"
#include "lib/process/ctl.h"
#include "lib/util/strbuf.h"

#define MAX_FDS 64

struct watch {
	pid_t pid;
	const struct mp_live_watch_opts *o;
	struct mp_live model;
	struct mp_collect_observer obs;
	struct mp_collector *c;
	char dir[PATH_MAX], path[PATH_MAX];
	int sfd;                /* the signals that end the view, and SIGWINCH */
	sigset_t old_mask;
};

static long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Read the pending signals: whether one asks to end, and whether the terminal was resized. */
static bool read_signals(int sfd, bool *resized)
{
	struct signalfd_siginfo si;
	bool end = false;
	while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGWINCH)
			*resized = true;
		else
			end = true;
	}
	return end;
}

/* Poll the collector (and extra, when >= 0) once, up to timeout ms; extra's revents back. */
static short poll_once(struct watch *w, int extra, int timeout, bool *signalled, bool *resized)
{
	struct pollfd fds[MAX_FDS];
	size_t n = 0, first, ns;
	short ev = 0;
	fds[n++] = (struct pollfd){ .fd = w->sfd, .events = POLLIN };
	if (extra >= 0)
		fds[n++] = (struct pollfd){ .fd = extra, .events = POLLIN };
	first = n;
	ns = mp_collector_pollfds(w->c, fds + n, MAX_FDS - n);
	if (poll(fds, n + ns, timeout) < 0)
		return 0;
	if (fds[0].revents && read_signals(w->sfd, resized))
		*signalled = true;
	if (extra >= 0)
		ev = fds[1].revents;
	mp_collector_service(w->c, fds + first, ns);
	return ev;
}

/* Ask the tracker for the stream, serving the collector it connects to meanwhile. */
static int ask(struct watch *w, struct strbuf *err)
{
	struct strbuf req = STRBUF_INIT, reply = STRBUF_INIT, why = STRBUF_INIT;
	long deadline = now_ms() + w->o->timeout_ms;
	bool signalled = false, resized = false;
	int fd, r;
	strbuf_addf(&req, "stream %s", w->path);
	fd = mp_ctl_send(w->pid, req.buf, err);
	strbuf_release(&req);
	if (fd < 0)
		return -1;
	/* A signal now waits for the answer: a stream that started must be ended properly. */
	while (!(poll_once(w, fd, (int)(deadline - now_ms() > 0 ? deadline - now_ms() : 0),
			   &signalled, &resized) & (POLLIN | POLLHUP | POLLERR)) &&
	       now_ms() < deadline)
		;
	r = mp_ctl_answer(w->pid, fd, 1000, &reply, &why);
	if (r > 0) {
		strbuf_addf(err, "process %d: %s", (int)w->pid, why.buf);
		if (!strncmp(why.buf, "already recording", 17))
			strbuf_addf(err, " (end it first with 'memprof ctl %d stop')", (int)w->pid);
	} else if (r < 0) {
		strbuf_add(err, why.buf, why.len);
	}
	strbuf_release(&reply);
	strbuf_release(&why);
	if (r == 0 && signalled)
		raise(SIGINT); /* handled, as pending, by the view's loop: it quits at once */
	return r ? -1 : 0;
}

/* Run the view until the user quits. */
static void view(struct watch *w, struct mp_live_tui *t)
{
	bool quit = false;
	while (!quit) {
		bool signalled = false, resized = false;
		short ev = poll_once(w, mp_live_tui_fd(t), mp_live_tui_timeout(t), &signalled,
				     &resized);
		if (resized)
			mp_live_tui_resized(t);
		if (signalled || !mp_live_tui_service(t, ev))
			quit = true;
	}
}

/* End the tracker's stream and wait for it to say it ended (a second signal stops waiting). */
static void end_stream(struct watch *w, struct strbuf *warn)
{
	long deadline = now_ms() + w->o->timeout_ms;
	bool signalled = false, resized = false;
	if (!mp_collector_open_streams(w->c))
		return;
	mp_collector_detach(w->c);
	while (mp_collector_open_streams(w->c) && !signalled && now_ms() < deadline)
		poll_once(w, -1, (int)(deadline - now_ms() > 0 ? deadline - now_ms() : 0), &signalled,
			  &resized);
	if (mp_collector_open_streams(w->c))
		strbuf_addf(warn, "process %d did not confirm the end of its live stream; its tracker "
				  "ends it when it finds this view gone\n", (int)w->pid);
}

int mp_live_watch(pid_t pid, const struct mp_live_watch_opts *o, struct strbuf *err,
		  struct strbuf *warn)
{
	struct watch w = { .pid = pid, .o = o, .sfd = -1 };
	struct mp_collect_opts co = { 0 };
	const char *what;
	struct mp_live_tui *t = NULL;
	sigset_t block;
	int lfd, ret = -1;

	if (mp_live_tui_check(err) < 0)
		return -1;
	mp_live_init(&w.model, pid);
	w.model.flags = o->flags;
	w.model.full_names = o->full_names;
	w.obs = mp_live_observer(&w.model);
	/* The signals that end the view, and the terminal's size, come through a descriptor. */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	sigaddset(&block, SIGQUIT);
	sigaddset(&block, SIGWINCH);
	sigprocmask(SIG_BLOCK, &block, &w.old_mask);
	w.sfd = signalfd(-1, &block, SFD_CLOEXEC | SFD_NONBLOCK);
	if (w.sfd < 0) {
		strbuf_addf(err, "cannot set up signal handling: %s", strerror(errno));
		goto out;
	}
	lfd = mp_ctl_stream_socket(pid, w.dir, sizeof(w.dir), w.path, sizeof(w.path), err);
	if (lfd < 0)
		goto out;
	co.output = NULL;
	co.output_fd = -1;
	co.symbolize = o->symbolize;
	co.main_pid = pid;
	co.observer = &w.obs;
	w.c = mp_collector_new(&co, &what);
	if (!w.c) {
		strbuf_addf(err, "cannot set up the collector: cannot make %s: %s", what, strerror(errno));
		close(lfd);
		goto out;
	}
	mp_collector_listen(w.c, lfd);
	if (ask(&w, err) < 0) {
		end_stream(&w, warn);
		goto out;
	}
	t = mp_live_tui_open(&w.model, err);
	if (!t) {
		end_stream(&w, warn);
		goto out;
	}
	view(&w, t);
	/* The terminal first: the user is back at once, whatever the tracker takes. */
	mp_live_tui_close(t);
	end_stream(&w, warn);
	ret = 0;
out:
	if (w.c) {
		const struct mp_capture_info *infos;
		const char **lines;
		size_t n;
		mp_collector_finish(w.c, &infos);
		n = mp_collector_warnings(w.c, &lines);
		for (size_t i = 0; i < n; i++)
			strbuf_addf(warn, "%s\n", lines[i]);
		mp_collector_free(w.c);
	}
	if (w.dir[0]) {
		char sock[PATH_MAX + 16];
		snprintf(sock, sizeof(sock), "%s/stream", w.dir);
		unlink(sock);
		rmdir(w.dir);
	}
	if (w.sfd >= 0)
		close(w.sfd);
	sigprocmask(SIG_SETMASK, &w.old_mask, NULL);
	mp_live_release(&w.model);
	return ret;
}
