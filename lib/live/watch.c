/* memprof live PID: a preloaded tracker streams to our session, shown until the user quits. */
#include <config.h>
#include "lib/live/watch.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/live/model.h"
#include "lib/live/tui.h"
#include "lib/process/ctl.h"
#include "lib/process/track.h"
#include "lib/util/strbuf.h"

struct watch {
	pid_t pid;
	const struct mp_live_watch_opts *o;
	struct mp_live model;
	struct mp_collect_observer obs;
	struct mp_track *t;
	struct mp_live_tui *tui;  /* the view, while it is shown */
	int answer_fd;            /* the tracker's answer, while it is awaited */
	short answer_ev;
	bool signalled;           /* a signal that ends the view came */
	bool ending;              /* the stream is being ended: a signal stops waiting for it */
};

/* The signals that end the view, and the terminal's size, come through the session. */
static const int taken[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGWINCH };

static void on_signal(void *ctx, const struct signalfd_siginfo *si)
{
	struct watch *w = ctx;
	if (mp_live_tui_resized(w->tui, (int)si->ssi_signo))
		return;
	if (w->ending)
		mp_track_stop(w->t); /* (the second stop of the session: it ends at once) */
	w->signalled = true;
}

/* The descriptor awaited: the tracker's answer, then the terminal while the view is shown. */
static int hook_fd(void *ctx)
{
	struct watch *w = ctx;
	if (w->answer_fd >= 0)
		return w->answer_fd;
	return w->tui && !w->signalled ? mp_live_tui_fd(w->tui) : -1;
}

static int hook_timeout(void *ctx)
{
	struct watch *w = ctx;
	return w->answer_fd < 0 && w->tui ? mp_live_tui_timeout(w->tui) : -1;
}

static void hook_ready(void *ctx, short revents)
{
	struct watch *w = ctx;
	if (w->answer_fd >= 0)
		w->answer_ev = revents;
	else if (w->tui && !mp_live_tui_service(w->tui, revents))
		w->signalled = true; /* (the user quit: the view ends as at a signal) */
}

static long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Ask the tracker for the stream, serving the session it connects to meanwhile. */
static int ask(struct watch *w, const char *path, struct strbuf *err)
{
	struct strbuf req = STRBUF_INIT, reply = STRBUF_INIT, why = STRBUF_INIT;
	long deadline = now_ms() + w->o->timeout_ms;
	int r, fd;
	strbuf_addf(&req, "stream %s", path);
	fd = mp_ctl_send(w->pid, req.buf, err);
	strbuf_release(&req);
	if (fd < 0)
		return -1;
	/* A signal now waits for the answer: a stream that started must be ended properly. */
	w->answer_fd = fd;
	while (!(w->answer_ev & (POLLIN | POLLHUP | POLLERR)) && now_ms() < deadline)
		mp_track_step(w->t, (int)(deadline - now_ms() > 0 ? deadline - now_ms() : 0));
	w->answer_fd = -1;
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
	return r ? -1 : 0;
}

/* End the tracker's stream and wait for it to say it ended (a second signal stops waiting). */
static void end_stream(struct watch *w, struct strbuf *warn)
{
	if (!mp_track_open_streams(w->t))
		return;
	w->ending = true;
	mp_track_set_stop_wait(w->t, (unsigned)w->o->timeout_ms);
	mp_track_stop(w->t);
	mp_track_run(w->t);
	if (mp_track_open_streams(w->t))
		strbuf_addf(warn, "process %d did not confirm the end of its live stream; its tracker "
				  "ends it when it finds this view gone\n", (int)w->pid);
}

int mp_live_watch(pid_t pid, const struct mp_live_watch_opts *o, struct strbuf *err,
		  struct strbuf *warn)
{
	struct mp_track_opts to = MP_TRACK_OPTS_INIT;
	struct watch w = { .pid = pid, .o = o, .answer_fd = -1 };
	struct mp_track_hooks hooks = { .ctx = &w, .signal = on_signal, .fd = hook_fd,
					.timeout = hook_timeout, .ready = hook_ready };
	struct mp_track_result r;
	char dir[PATH_MAX], path[PATH_MAX];
	int lfd, ret = -1;

	if (mp_live_tui_check(err) < 0)
		return -1;
	to.symbols = o->symbolize;
	mp_live_init(&w.model, pid);
	w.model.flags = o->flags;
	w.model.full_names = o->full_names;
	w.obs = mp_live_observer(&w.model);
	w.t = mp_track_new(&to, err);
	if (!w.t) {
		mp_live_release(&w.model);
		return -1;
	}
	mp_track_set_hooks(w.t, &hooks);
	if (mp_track_signals(w.t, taken, sizeof(taken) / sizeof(taken[0]), err) < 0)
		goto out;
	/* In /tmp as the process sees it; no capture: the records go nowhere but to the view. */
	lfd = mp_ctl_stream_socket(pid, dir, sizeof(dir), path, sizeof(path), err);
	if (lfd < 0)
		goto out;
	mp_track_adopt_socket(w.t, lfd, dir);
	if (mp_track_collect(w.t, pid, &w.obs, err) < 0)
		goto out;
	if (ask(&w, path, err) < 0) {
		end_stream(&w, warn);
		goto out;
	}
	if (!w.signalled) {
		w.tui = mp_live_tui_open(&w.model, err);
		if (!w.tui) {
			end_stream(&w, warn);
			goto out;
		}
		/* Until the user quits, or a signal ends the view. */
		while (!w.signalled)
			mp_track_step(w.t, -1);
		/* The terminal first: the user is back at once, whatever the tracker takes. */
		mp_live_tui_close(w.tui);
		w.tui = NULL;
	}
	end_stream(&w, warn);
	ret = 0;
out:
	mp_track_finish(w.t, &r);
	for (size_t i = 0; i < r.nwarnings; i++)
		strbuf_addf(warn, "%s\n", r.warnings[i]);
	mp_track_free(w.t);
	mp_live_release(&w.model);
	return ret;
}
