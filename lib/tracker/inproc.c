/*
 * Captures started and stopped from inside the process: by the in-process
 * API (api.c, include/memprof.h) and by the control socket (control.c), one
 * way for both, one at a time. A tracker that does not interpose the
 * allocator (loaded with dlopen) installs its hooks as memprof attach does,
 * in the GOT slots of every loaded module (got.c), and takes them out at
 * the stop; modules loaded meanwhile are patched at the next tick. The
 * capture is written by the tracker itself (direct.c) at the caller's path,
 * or where the configuration says: the collector of memprof run --paused,
 * MEMPROF_OUTPUT's pattern, or this user's private directory.
 */
#include <config.h>

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "include/memprof.h"
#include "lib/tracker/pyalloc.h"
#include "lib/tracker/config.h"
#include "lib/tracker/control.h"
#include "lib/tracker/direct.h"
#include "lib/tracker/got.h"
#include "lib/tracker/hooks.h"
#include "lib/tracker/lifecycle.h"
#include "lib/tracker/python.h"
#include "lib/tracker/session.h"
#include "lib/tracker/stream.h"
#include "lib/transport/reply.h"

/* Serialises the calls (not a futex lock of ours: a snapshot may take long, signals stay on). */
static pthread_mutex_t inproc_mutex = PTHREAD_MUTEX_INITIALIZER;
static struct {
	int on;            /* the capture recording (or that stopped by itself) is one mp_inproc_start() began */
	int by_control;    /* memprof ctl's (or memprof serve's), not memprof_start's */
	int patched;       /* its hooks are in the GOT slots: the tracker does not interpose them */
	int overwrite;     /* its files may replace existing ones */
	int pyalloc;       /* the Python allocators are wrapped (pyalloc.c) */
	pid_t pid;         /* the process that started it */
} api;
/* The configuration the API's capture replaced, back at the stop. */
static struct mp_config saved;
/* The file of the last capture stopped, when the tracker knew it. */
static char last_capture[4096];

/* How long a collector may take to write a snapshot of a big capture, or to finish one. */
#define SNAPSHOT_WAIT_MS (10u * 60 * 1000)
/* How long it may take to create a capture's file. */
#define COLLECTOR_WAIT_MS (30u * 1000)

/*
 * A tracker without a destination (loaded by the API, not by memprof run or
 * MEMPROF_OUTPUT) writes the captures it is asked for without a path
 * (memprof_start(NULL), memprof ctl, memprof serve) into this user's
 * private directory: /tmp/memprof-UID/PROGRAM.PID.N.bin.
 */
static int default_destination(void)
{
	char dir[64];
	const char *base = strrchr(mp_st.exe_path, '/');
	int n;
	if (mp_configured() || mp_cfg.output[0])
		return 0;
	n = mp_user_dir(dir, sizeof(dir));
	if (n < 0)
		return -EACCES;
	base = base ? base + 1 : mp_st.exe_path[0] ? mp_st.exe_path : "program";
	if ((size_t)snprintf(mp_cfg.output, sizeof(mp_cfg.output), "%s/%s.%%p.%%n.bin", dir, base) >=
	    sizeof(mp_cfg.output)) {
		mp_cfg.output[0] = '\0';
		return -ENAMETOOLONG;
	}
	mp_cfg.direct = 1;
	return 0;
}

/* Whether the program's calls reach our hooks by symbol lookup (preloaded, or linked before libc). */
static int interposed(void)
{
	for (const struct mp_hook *h = mp_hooks; h->name; h++)
		if (!strcmp(h->name, "malloc"))
			return dlsym(RTLD_DEFAULT, "malloc") == h->fn;
	return 0;
}

/* ---- the session ---- */

static int never(void)
{
	return 0;
}

static void api_modules_added(void)
{
	if (api.patched)
		mp_got_patch();
}

/*
 * The timer ends with the stream: a stop, or a capture that failed, which
 * memprof_stop() then finishes (the timer takes no lock: a start may be
 * waiting for it to end, holding the session's).
 */
static void api_stream_ended(void)
{
}

static const struct mp_timer_ops api_ops = { never, api_modules_added, api_stream_ended };

static void unpatch(void)
{
	if (api.pyalloc)
		mp_pyalloc_remove();
	api.pyalloc = 0;
	if (api.patched)
		mp_got_unpatch();
}

/* Back to the configuration the API's capture replaced. */
static void restore(void)
{
	mp_cfg = saved;
	mp_direct_set_path(NULL, 0);
	mp_st.quiet = 0;
}

static void forked_child(void)
{
	pthread_mutex_init(&inproc_mutex, NULL);
	/* A followed child records on, into its own capture; another does not. */
	api.on = api.on && mp_state == MP_STATE_ON;
	api.pid = getpid();
}

static int api_start(const char *path, unsigned flags, void (*set)(struct mp_config *, const void *),
		     const void *arg)
{
	static int atfork_done;
	unsigned hflags = 0;
	int r, hooked;
	if (api.on || mp_state == MP_STATE_ON)
		return -EBUSY;
	if (mp_state == MP_STATE_INIT)
		mp_init_stage1();
	if (!mp_real.malloc)
		return -ENOSYS;
	if (mp_setup())
		return -ENOMEM;
	if (!atfork_done && pthread_atfork(NULL, NULL, forked_child) == 0)
		atfork_done = 1;
	/* (Needed now only without a path; made anyway, for memprof ctl and memprof serve.) */
	if ((r = default_destination()) && !path)
		return r;
	/* A collector aggregates the events it is sent; a capture of ours, our fold (direct.c). */
	if (flags & MP_INPROC_AGGREGATE)
		hflags |= MP_HF_AGGREGATED;
	hooked = interposed();
	saved = mp_cfg;
	if (path) {
		if ((r = mp_direct_set_path(path, (flags & MP_INPROC_OVERWRITE) != 0)))
			return r;
		mp_cfg.direct = 1;
	}
	if (set)
		set(&mp_cfg, arg);
	/*
	 * Our fold has no estimates: a sampled capture is aggregated by a
	 * collector's analysis only (memprof run --paused).
	 */
	if ((flags & MP_INPROC_AGGREGATE) && mp_cfg.direct && mp_cfg.sampling_interval) {
		restore();
		return -ENOTSUP;
	}
	/*
	 * What goes wrong is memprof_start's caller's to hear, through errno and
	 * memprof_status(); memprof ctl's hears it on the program's standard error.
	 */
	mp_st.quiet = !(flags & MP_INPROC_CONTROL);
	mp_py_setup();
	if ((flags & MP_INPROC_PYALLOC) && (r = mp_pyalloc_check())) {
		restore();
		return r;
	}
	mp_register_handlers();
	/*
	 * The heap as the C library has it, first: the blocks from before the
	 * start (memprof ctl's start of a tracker preloaded from the program's
	 * start has always been without it).
	 */
	r = mp_session_start(mp_cfg.direct ? MP_MODE_PRELOAD : MP_MODE_RUN, hflags, &api_ops,
			     (flags & MP_INPROC_CONTROL) && hooked ? NULL : mp_session_baseline);
	if (r) {
		int e = mp_cfg.direct ? mp_direct_open_error() : 0;
		restore();
		return r == -EALREADY || r == -EBUSY ? -EBUSY : e ? -e : -EIO;
	}
	/*
	 * The collector names the file, and may fail to create it: memprof_start()
	 * waits for its word (memprof ctl's start does, in the asker's time).
	 */
	if (!mp_cfg.direct && !(flags & MP_INPROC_CONTROL)) {
		char text[MP_REPLY_TEXT_MAX + 1];
		if (mp_stream_capture_wait(COLLECTOR_WAIT_MS, text, sizeof(text)) == 0) {
			mp_session_stop(NULL);
			restore();
			return strstr(text, strerror(EEXIST)) ? -EEXIST : -EIO;
		}
	}
	api.on = 1;
	api.by_control = (flags & MP_INPROC_CONTROL) != 0;
	api.pid = getpid();
	api.overwrite = (flags & MP_INPROC_OVERWRITE) != 0;
	api.patched = !hooked;
	if (api.patched)
		mp_got_patch();
	if (flags & MP_INPROC_PYALLOC)
		api.pyalloc = mp_pyalloc_install() == 0;
	return 0;
}

/*
 * Stop; a collector's capture is waited for, wait_ms at most, and named in
 * path (cap bytes, "" when the collector did not say it finished it in
 * time); path NULL: no wait (ours is complete when the stop returns).
 */
static int api_stop(unsigned wait_ms, char *path, size_t cap)
{
	int r = 0;
	if (api.pid != getpid())
		forked_child();
	if (mp_state == MP_STATE_ON && mp_st.mode == MP_MODE_ATTACH)
		return -EPERM; /* memprof detach ends it */
	if (!api.on && mp_state != MP_STATE_ON)
		return -ENOENT;
	if (mp_state != MP_STATE_ON)
		r = -EIO; /* it stopped by itself: the file could not be written */
	/* (A capture the collector could not create, or a live view's, leaves the last one's.) */
	if (mp_cfg.direct) {
		snprintf(last_capture, sizeof(last_capture), "%s", mp_direct_path());
	} else if (!mp_session_live_path()) {
		char text[MP_REPLY_TEXT_MAX + 1];
		if (mp_stream_capture_wait(0, text, sizeof(text)) == 1)
			snprintf(last_capture, sizeof(last_capture), "%s", text);
	}
	if (path && !mp_cfg.direct) {
		path[0] = '\0';
		if (mp_session_stop_finished(unpatch, wait_ms, path, cap) != 1)
			path[0] = '\0';
	} else {
		mp_session_stop(unpatch);
	}
	if (r)
		unpatch();
	/* The control socket's thread waited for that session's reader, which is done. */
	mp_control_wake();
	api.patched = 0;
	if (api.on)
		restore();
	api.on = 0;
	return r;
}

static int api_snapshot(const char *dest)
{
	char path[4096], text[MP_REPLY_TEXT_MAX + 1];
	struct stat st;
	unsigned num = 0;
	int r, w;
	if (mp_state != MP_STATE_ON)
		return -ENOENT;
	r = mp_session_snapshot(&num, mp_cfg.direct ? dest : NULL, path, sizeof(path));
	if (r || mp_cfg.direct)
		return r;
	/* The collector writes it next to its capture: then where the caller wants it. */
	w = mp_stream_snapshot_wait(num, SNAPSHOT_WAIT_MS, text, sizeof(text));
	if (w != 1)
		return w == 0 ? -EIO : -ETIMEDOUT;
	if (!dest)
		return 0;
	if (!api.overwrite && lstat(dest, &st) == 0)
		return -EEXIST;
	return rename(text, dest) < 0 ? -errno : 0;
}

/* ---- the exported functions ---- */

struct stop_args {
	unsigned wait_ms;
	char *path;
	size_t cap;
};

static int stop_fn(const void *arg)
{
	const struct stop_args *a = arg;
	return api_stop(a->wait_ms, a->path, a->cap);
}

static int call(int (*fn)(const void *), const void *arg)
{
	int saved_errno = errno, cs, r;
	mp_in_hook++;
	cs = mp_cancel_off();
	pthread_mutex_lock(&inproc_mutex);
	r = fn(arg);
	pthread_mutex_unlock(&inproc_mutex);
	mp_cancel_restore(cs);
	mp_in_hook--;
	errno = r ? -r : saved_errno;
	return r ? -1 : 0;
}

struct start_args {
	const char *path;
	unsigned flags;
	void (*set)(struct mp_config *, const void *);
	const void *arg;
};

static int start_fn(const void *arg)
{
	const struct start_args *a = arg;
	if (a->path && !a->path[0])
		return -ENOENT;
	if (api.pid && api.pid != getpid())
		forked_child();
	return api_start(a->path, a->flags, a->set, a->arg);
}

int mp_inproc_start(const char *path, unsigned flags, void (*set)(struct mp_config *c, const void *arg),
		 const void *arg)
{
	struct start_args a = { path, flags, set, arg };
	return call(start_fn, &a) ? -errno : 0;
}

const char *mp_inproc_last_capture(void)
{
	return last_capture;
}

int mp_inproc_recording(void)
{
	return mp_state == MP_STATE_ON;
}

int mp_inproc_stop(void)
{
	/* (memprof_stop() returns once the capture is complete, the collector's too.) */
	char path[MP_REPLY_TEXT_MAX + 1];
	struct stop_args a = { SNAPSHOT_WAIT_MS, path, sizeof(path) };
	return call(stop_fn, &a) ? -errno : 0;
}

int mp_inproc_stop_wait(unsigned wait_ms, char *path, size_t cap)
{
	struct stop_args a = { wait_ms, path, cap };
	return call(stop_fn, &a) ? -errno : 0;
}


static int snapshot_fn(const void *arg)
{
	const char *dest = arg;
	if (dest && !dest[0])
		return -ENOENT;
	return api_snapshot(dest);
}

static int status_fn(const void *arg)
{
	struct memprof_status *st = (struct memprof_status *)arg;
	const char *path = "";
	char text[MP_REPLY_TEXT_MAX + 1];
	size_t size = st->size;
	memset(st, 0, sizeof(*st));
	st->size = size;
	st->recording = mp_state == MP_STATE_ON;
	st->captures = mp_st.capture_no;
	if (st->recording) {
		st->by = mp_session_live_path() ? MEMPROF_BY_LIVE
			 : mp_st.mode == MP_MODE_ATTACH ? MEMPROF_BY_ATTACH
			 : api.on && !api.by_control ? MEMPROF_BY_API : MEMPROF_BY_CONTROL;
		st->duration_us = mp_stream_since_start_us();
	} else {
		st->duration_us = mp_session_last_duration_us();
	}
	if (!st->recording)
		path = last_capture;
	else if (mp_cfg.direct)
		path = mp_direct_path();
	else if (mp_stream_capture_wait(0, text, sizeof(text)) == 1)
		path = text;
	if (!mp_session_live_path())
		snprintf(st->path, sizeof(st->path), "%s", path);
	return 0;
}

int mp_inproc_snapshot(const char *dest)
{
	return call(snapshot_fn, dest) ? -errno : 0;
}

int mp_inproc_status(struct memprof_status *st)
{
	return call(status_fn, st) ? -errno : 0;
}
