/* Tracking sessions: starting, stopping and snapshotting a capture while the program runs. */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include "lib/tracker/config.h"
#include "lib/tracker/direct.h"
#include "lib/tracker/modules.h"
#include "lib/tracker/session.h"
#include "lib/tracker/stacks.h"
#include "lib/tracker/stream.h"
#include "lib/tracker/threads.h"
#include "lib/tracker/timer.h"

static int session_lock;
static unsigned snapshots;

int mp_session_open_stream(unsigned mode, unsigned flags, pid_t forked_from)
{
	struct mp_wring *w;
	if (mp_stream_create())
		return -1;
	if (mp_cfg.direct ? mp_direct_open(mode, flags, forked_from)
			  : mp_stream_connect(mode, flags, forked_from)) {
		mp_stream_close();
		return -1;
	}
	mp_stream_start();
	/* A first sample at time 0: even a program that ends at once has a start and an end. */
	w = mp_thread_ring();
	if (w)
		mp_stream_tick(w);
	return 0;
}

void mp_new_stream_state(void)
{
	mp_stacks_reset();
	mp_st.exit_status_known = 0;
	mp_modules_reset();
}


int mp_session_start(unsigned mode, unsigned flags, const struct mp_timer_ops *ops,
		     void (*prelude)(void))
{
	int r = 0;
	mp_lock(&session_lock);
	if (mp_state == MP_STATE_ON) {
		r = -EALREADY;
		goto out;
	}
	/* The previous session's timer sees the stop at its next tick. */
	for (int i = 0; i < 200 && mp_timer_running(); i++) {
		struct timespec ms10 = { 0, 10 * 1000 * 1000 };
		nanosleep(&ms10, NULL);
	}
	if (mp_timer_running()) {
		r = -EBUSY;
		goto out;
	}
	/* A new stream: its own trace tree, threads, modules and counters. */
	mp_new_stream_state();
	if (mp_st.statm_fd < 0)
		mp_st.statm_fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
	mp_st.mode = mode;
	mp_st.capture_no++;
	snapshots = 0;
	if (mp_session_open_stream(mode, flags | (mp_cfg.follow_fork ? MP_HF_FOLLOW_FORK : 0) |
				 (mp_st.capture_no > 1 ? MP_HF_RESTARTED : 0), 0)) {
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

void mp_session_stop(void (*before)(void))
{
	struct mp_wring *w;
	mp_in_hook++;
	mp_lock(&session_lock);
	if (mp_state != MP_STATE_ON)
		goto out;
	w = mp_thread_ring();
	mp_state = MP_STATE_OFF;
	if (before)
		before();
	/* Nothing is written after the DETACH record but the last sample. */
	mp_stream_quiesce(w);
	if (w) {
		mp_stream_marker(w, MP_TAG_DETACH, MP_M_RSS, mp_stream_rss(), 0);
		mp_stream_tick(w);
	}
	if (mp_cfg.direct)
		mp_direct_stop();
	mp_stream_detach();
out:
	mp_unlock(&session_lock);
	mp_in_hook--;
}

int mp_session_snapshot(unsigned *number, char *path, size_t pathlen)
{
	int r = 0;
	mp_in_hook++;
	mp_lock(&session_lock);
	if (mp_state != MP_STATE_ON) {
		r = -ENOENT;
		goto out;
	}
	*number = ++snapshots;
	path[0] = '\0';
	if (mp_cfg.direct) {
		r = mp_direct_snapshot(*number, path, pathlen);
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
