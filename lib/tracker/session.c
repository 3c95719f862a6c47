/* Tracking sessions: starting, stopping and snapshotting a capture while the program runs. */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "lib/tracker/config.h"
#include "lib/tracker/direct.h"
#include "lib/tracker/modules.h"
#include "lib/tracker/python.h"
#include "lib/tracker/sample.h"
#include "lib/tracker/session.h"
#include "lib/tracker/stacks.h"
#include "lib/tracker/stream.h"
#include "lib/tracker/threads.h"
#include "lib/tracker/timer.h"

struct mp_marker_baseline {
	int valid;
	uint64_t arena, in_use;
};

/* The C library's own view of its heap (mallinfo2), as the unattributed baseline at attach. */
static void heap_baseline(struct mp_marker_baseline *b)
{
#ifdef HAVE_MALLINFO2
	struct mallinfo2 mi = mallinfo2();
	b->valid = 1;
	b->arena = mi.arena + mi.hblkhd;
	b->in_use = mi.uordblks + mi.hblkhd;
#else
	b->valid = 0;
#endif
}

void mp_session_baseline(void)
{
	struct mp_marker_baseline base = { 0 };
	uint8_t rec[128], *p;
	struct mp_wring *w = mp_thread_ring();
	heap_baseline(&base);
	p = mp_enc_sized_begin(rec, MP_TAG_ATTACH);
	p = mp_enc_field_uint(p, MP_M_TIME, 0);
	p = mp_enc_field_uint(p, MP_M_RSS, mp_stream_rss());
	if (base.valid) {
		p = mp_enc_field_uint(p, MP_M_HEAP_ARENA, base.arena);
		p = mp_enc_field_uint(p, MP_M_HEAP_IN_USE, base.in_use);
	}
	p = mp_enc_sized_end(rec, p);
	if (w)
		mp_stream_put(w, rec, (size_t)(p - rec));
}

static int session_lock;
static unsigned snapshots;
static uint64_t last_duration_us; /* of the last stream, once stopped */
/* A live view's session: where it streams, and the configuration it replaced. */
static struct {
	int on, direct;
	char path[sizeof(mp_cfg.socket_path)];
	char socket_path[sizeof(mp_cfg.socket_path)];
} live;

int mp_session_open_stream(unsigned mode, unsigned flags, pid_t forked_from, int sampled_by)
{
	struct mp_wring *w;
	/* (A capture we write ourselves has no reader beside the program.) */
	mp_st.reader_ticks = sampled_by == MP_SAMPLED_BY_READER && !mp_cfg.direct;
	if (mp_py_on)
		flags |= MP_HF_PYTHON_FRAMES;
	/* Every event, or a sample (its interval in the header): the stream's blocks are its own. */
	mp_sample_begin(mp_cfg.sampling_interval, mp_cfg.sampling_seed);
	if (mp_stream_create())
		return -1;
	if (mp_cfg.direct ? mp_direct_open(mode, flags, forked_from)
			  : mp_stream_connect(mode, flags, forked_from)) {
		mp_stream_close();
		return -1;
	}
	mp_stream_start();
	mp_sample_start();
	/* A first sample at time 0: even a program that ends at once has a start and an end. */
	w = mp_thread_ring();
	if (w) {
		mp_stream_tick(w);
		mp_py_stream_started(w);
	}
	return 0;
}

void mp_new_stream_state(void)
{
	mp_stacks_reset();
	mp_st.exit_status_known = 0;
	mp_modules_reset();
}


/* Whether the previous session's timer has ended (it sees the stop at its next tick). */
static int timer_gone(void)
{
	for (int i = 0; i < 200 && mp_timer_running(); i++) {
		struct timespec ms10 = { 0, 10 * 1000 * 1000 };
		nanosleep(&ms10, NULL);
	}
	return !mp_timer_running();
}

/* 0 when a session may start (under session_lock), else why not. */
static int may_start(void)
{
	if (mp_state == MP_STATE_ON)
		return -EALREADY;
	return timer_gone() ? 0 : -EBUSY;
}

int mp_session_start(unsigned mode, unsigned flags, const struct mp_timer_ops *ops,
		     void (*prelude)(void))
{
	int r = 0;
	mp_lock(&session_lock);
	if ((r = may_start()))
		goto out;
	/* A new stream: its own trace tree, threads, modules and counters. */
	mp_new_stream_state();
	if (mp_st.statm_fd < 0)
		mp_stream_open_statm();
	mp_st.mode = mode;
	mp_st.capture_no++;
	snapshots = 0;
	if (mp_session_open_stream(mode, flags | (mp_cfg.follow_fork ? MP_HF_FOLLOW_FORK : 0) |
				 (mp_st.capture_no > 1 ? MP_HF_RESTARTED : 0), 0, MP_SAMPLED_BY_TIMER)) {
		mp_st.capture_no--; /* (not started: its number is the next one's) */
		r = -ECONNREFUSED;
		goto out;
	}
	/* Records that come before any event (attach's baseline). */
	if (prelude)
		prelude();
	mp_state = MP_STATE_ON;
	mp_timer_start(ops);
out:
	mp_unlock(&session_lock);
	return r;
}

/* The live view's session is over: its configuration goes back (under the session's lock). */
static void end_live(void)
{
	if (!live.on)
		return;
	/* A stream lost before the stop (the view died) still holds its socket. */
	if (mp_st.sink_fd >= 0)
		mp_stream_detach();
	mp_cfg.direct = live.direct;
	memcpy(mp_cfg.socket_path, live.socket_path, sizeof(mp_cfg.socket_path));
	mp_st.quiet = 0;
	live.on = 0;
}

/*
 * Stop (see mp_session_stop()); with wait_ms, wait that long at most for the
 * collector to say it finished the capture: 1 then, with its path in path.
 */
static int stop(void (*before)(void), unsigned wait_ms, char *path, size_t cap)
{
	struct mp_wring *w;
	int r = 0;
	mp_in_hook++;
	mp_lock(&session_lock);
	if (mp_state != MP_STATE_ON)
		goto out;
	w = mp_thread_ring();
	mp_state = MP_STATE_OFF;
	mp_sample_stop();
	last_duration_us = mp_stream_since_start_us();
	if (before)
		before();
	/* Nothing is written after the DETACH record but the last sample. */
	mp_stream_ticks_end();
	mp_stream_quiesce(w);
	if (w) {
		mp_stream_marker(w, MP_TAG_DETACH, MP_M_RSS, mp_stream_rss(), 0);
		mp_stream_tick(w);
	}
	if (mp_cfg.direct)
		mp_direct_stop();
	else if (wait_ms)
		r = mp_stream_finish_wait(wait_ms, path, cap) == 1;
	mp_stream_detach();
out:
	end_live();
	mp_unlock(&session_lock);
	mp_in_hook--;
	return r;
}

void mp_session_stop(void (*before)(void))
{
	stop(before, 0, NULL, 0);
}

int mp_session_stop_finished(void (*before)(void), unsigned wait_ms, char *path, size_t cap)
{
	return stop(before, wait_ms, path, cap);
}

/* ---- a live view's session (memprof live) ---- */

static void live_modules_added(void)
{
}

static void live_stop(void)
{
	mp_session_stop(NULL);
}

/* The view asks for the end with one byte on the stream's socket; its end means the same. */
static const struct mp_timer_ops live_ops = { mp_stream_end_asked, live_modules_added, live_stop };

int mp_session_start_live(const char *path)
{
	int r = 0;
	if (path[0] != '/' || strlen(path) >= sizeof(mp_cfg.socket_path))
		return -EINVAL;
	mp_in_hook++;
	mp_lock(&session_lock);
	if ((r = may_start()))
		goto out;
	live.on = 1;
	live.direct = mp_cfg.direct;
	memcpy(live.socket_path, mp_cfg.socket_path, sizeof(live.socket_path));
	memset(live.path, 0, sizeof(live.path));
	strcpy(live.path, path);
	mp_cfg.direct = 0;
	memcpy(mp_cfg.socket_path, live.path, sizeof(mp_cfg.socket_path));
	mp_st.quiet = 1;
	mp_new_stream_state();
	if (mp_st.statm_fd < 0)
		mp_stream_open_statm();
	/* Not a capture of the process's: not numbered, and forks are not followed into it. */
	if (mp_session_open_stream(mp_st.mode, 0, 0, MP_SAMPLED_BY_TIMER)) {
		end_live();
		r = -ECONNREFUSED;
		goto out;
	}
	mp_state = MP_STATE_ON;
	mp_timer_start(&live_ops);
out:
	mp_unlock(&session_lock);
	mp_in_hook--;
	return r;
}

const char *mp_session_live_path(void)
{
	return live.on ? live.path : NULL;
}

int mp_session_forked(void)
{
	int was = live.on;
	session_lock = 0;
	if (was) {
		mp_cfg.direct = live.direct;
		memcpy(mp_cfg.socket_path, live.socket_path, sizeof(mp_cfg.socket_path));
		mp_st.quiet = 0;
		live.on = 0;
	}
	return was;
}

int mp_session_snapshot(unsigned *number, const char *dest, char *path, size_t pathlen)
{
	int r = 0;
	mp_in_hook++;
	mp_lock(&session_lock);
	if (mp_state != MP_STATE_ON) {
		r = -ENOENT;
		goto out;
	}
	if (live.on) {
		r = -EPERM; /* a live view's stream is no capture */
		goto out;
	}
	*number = ++snapshots;
	path[0] = '\0';
	if (mp_cfg.direct) {
		r = mp_direct_snapshot(*number, dest, path, pathlen);
	} else {
		/*
		 * The collector writes it, from the events before this record:
		 * those of every thread that came first.
		 */
		struct mp_wring *w = mp_thread_ring();
		if (!w)
			r = -ENOMEM;
		else
			mp_stream_marker(w, MP_TAG_SNAPSHOT, MP_M_COUNT, *number, 0);
	}
out:
	mp_unlock(&session_lock);
	mp_in_hook--;
	return r;
}

uint64_t mp_session_last_duration_us(void)
{
	return last_duration_us;
}
