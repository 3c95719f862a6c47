/*
 * The tracker's life in the process: start-up (the constructor and the first
 * hooked call), the timer thread that samples, refreshes and flushes, exit,
 * exec, abort and fork.
 */
#include <config.h>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lib/tracker/config.h"
#include "lib/tracker/control.h"
#include "lib/tracker/creds.h"
#include "lib/tracker/direct.h"
#include "lib/tracker/fds.h"
#include "lib/tracker/lifecycle.h"
#include "lib/tracker/modules.h"
#include "lib/tracker/python.h"
#include "lib/tracker/record.h"
#include "lib/tracker/sample.h"
#include "lib/tracker/session.h"
#include "lib/tracker/signals.h"
#include "lib/tracker/stacks.h"
#include "lib/tracker/stream.h"
#include "lib/tracker/threads.h"
#include "lib/tracker/timer.h"

static void init_libunwind(void)
{
	unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
}

int mp_setup(void)
{
	static int done;
	if (done)
		return 0;
	mp_st.page_size = sysconf(_SC_PAGESIZE);
	mp_modules_unloaded = mp_stacks_forget_code;
	mp_exe_path(mp_st.exe_path, sizeof(mp_st.exe_path));
	mp_find_self();
	if (mp_threads_setup() || mp_stacks_grow()) {
		mp_write_stderr("cannot allocate the tracker's buffers; the program runs untracked",
				NULL, NULL);
		return -1;
	}
	/* libunwind's first call opens the pipe it checks addresses with: up, out of the program's way. */
	mp_fd_open_high(init_libunwind);
	done = 1;
	return 0;
}

/* The environment asked for tracking (memprof run, or a hand-preloaded tracker). */
static int configured;

int mp_configured(void)
{
	return configured;
}

void mp_init_stage1(void)
{
	static int initializing;
	if (__atomic_exchange_n(&initializing, 1, __ATOMIC_ACQ_REL))
		return; /* re-entered from dlsym's allocations, or another thread races us */
	mp_in_hook++;
	if (mp_resolve_real()) {
		mp_write_stderr("cannot find the C library's allocator; the program runs untracked",
				NULL, NULL);
		mp_state = MP_STATE_OFF;
		goto out;
	}
	/* Without configuration (memprof attach loads us with dlopen) nothing starts here. */
	if (mp_config_read() || mp_setup()) {
		mp_state = MP_STATE_OFF;
		goto out;
	}
	mp_stream_open_statm();
	mp_modules_reset();
	mp_py_setup();
	mp_st.mode = mp_cfg.direct ? MP_MODE_PRELOAD : MP_MODE_RUN;
	configured = 1;
	/* Paused: the hooks pass everything through until memprof ctl PID start. */
	if (mp_cfg.paused) {
		mp_state = MP_STATE_OFF;
		goto out;
	}
	mp_st.capture_no = 1;
	if (mp_session_open_stream(mp_st.mode, mp_cfg.follow_fork ? MP_HF_FOLLOW_FORK : 0, 0,
				   MP_SAMPLED_BY_READER)) {
		mp_state = MP_STATE_OFF;
		goto out;
	}
	mp_state = MP_STATE_ON;
out:
	mp_in_hook--;
}

/* ---- exit, exec, abort ---- */

/* The process is ending: a last sample, and a capture we write ourselves gets its trailer. */
static void finish(struct mp_wring *w)
{
	mp_stream_ticks_end();
	if (w)
		mp_stream_tick(w);
	if (mp_cfg.direct)
		mp_direct_finish();
}

void mp_flush_now(void)
{
	int saved = errno;
	struct mp_wring *ts;
	if (mp_state != MP_STATE_ON)
		return;
	mp_in_hook++;
	/*
	 * The collector reads our rings whatever becomes of us; a capture we
	 * write ourselves must have everything before exec or abort: the other
	 * threads die with us.
	 */
	ts = mp_thread_ring();
	if (ts)
		mp_stream_tick(ts);
	if (mp_cfg.direct)
		mp_direct_drain(1);
	mp_in_hook--;
	errno = saved;
}

void mp_record_exit(int status, int final)
{
	int saved = errno;
	struct mp_wring *ts;
	if (mp_state != MP_STATE_ON)
		return;
	mp_in_hook++;
	ts = mp_thread_ring();
	if (ts) {
		mp_st.exit_status_known = 1;
		mp_st.exit_status_value = status;
		mp_record_nested_lost(ts);
		mp_stream_marker(ts, MP_TAG_EXIT, MP_M_STATUS, (uint64_t)(int64_t)status, 1);
		if (final)
			finish(ts); /* _exit: nothing else runs after us */
	}
	mp_in_hook--;
	errno = saved;
}

/* Registered from our constructor, so it runs after the program's own exit handlers. */
static void at_exit(void)
{
	struct mp_wring *ts;
	mp_control_end();
	if (mp_state != MP_STATE_ON)
		return;
	mp_in_hook++;
	/* Modules closed since the last tick. */
	mp_modules_refresh();
	ts = mp_thread_ring();
	/*
	 * Returning from main reaches exit() inside the C library, past every
	 * hook an attached tracker could patch: say the process exits, if not
	 * with which status.
	 */
	if (ts && !mp_st.exit_status_known && mp_st.mode == MP_MODE_ATTACH)
		mp_stream_marker(ts, MP_TAG_EXIT, 0, 0, 0);
	finish(ts); /* frees in later destructors are merged one by one */
	mp_in_hook--;
}

void mp_record_fork(pid_t child)
{
	struct mp_wring *ts;
	if (mp_state != MP_STATE_ON)
		return;
	mp_in_hook++;
	ts = mp_thread_ring();
	if (ts)
		mp_stream_marker(ts, MP_TAG_FORK, MP_M_CHILD_PID, (uint64_t)child, 0);
	mp_in_hook--;
}

/* ---- fork ---- */

static int fork_locked;
/* A followed child not set up yet (MP_STATE_CHILD): the pid it was forked from. */
static pid_t forked_from;

void mp_child_setup(void)
{
	if (mp_state != MP_STATE_CHILD)
		return;
	mp_in_hook++;
	/* Its own rings and capture, trace tree and threads: as the parent's were at its start. */
	mp_state = MP_STATE_ON;
	mp_new_stream_state();
	mp_stream_open_statm();
	if (mp_session_open_stream(mp_st.mode, MP_HF_FOLLOW_FORK | MP_HF_FORK_CHILD, forked_from,
				   MP_SAMPLED_BY_READER)) {
		mp_state = MP_STATE_OFF;
	} else {
		mp_timer_start(NULL);
		mp_control_start();
	}
	/* The collector has this stream (or never will): the parent's connection may go. */
	mp_stream_forked_done();
	mp_in_hook--;
}

static void atfork_prepare(void)
{
	/* No lock of ours may be held by a thread that is not cloned into the child. */
	fork_locked = mp_state == MP_STATE_ON;
	if (fork_locked) {
		mp_sig_block();
		mp_stream_ticks_lock();
		mp_modules_lock();
		mp_stacks_lock();
		mp_py_codes_lock();
		mp_threads_lock();
		mp_direct_lock();
		mp_stream_lock_all();
		mp_sample_lock();
	}
}

static void atfork_parent(void)
{
	if (fork_locked) {
		mp_sample_unlock();
		mp_stream_unlock_all();
		mp_direct_unlock();
		mp_threads_unlock();
		mp_py_codes_unlock();
		mp_stacks_unlock();
		mp_modules_unlock();
		mp_stream_ticks_unlock();
		mp_sig_unblock();
	}
}

static void atfork_child(void)
{
	/* A live view shows the parent only: the child gets the configuration back, paused. */
	int was_live;
	mp_sig_forked(); /* the locks atfork_prepare took are made anew below */
	/* The child records nothing of its parent's stream: every call goes the untracked way, or
	   sets up a followed child's stream (which samples anew) at its first allocation or free. */
	mp_sample_forked();
	mp_sample_stop();
	was_live = mp_session_forked();
	mp_creds_forked();
	mp_control_forked();
	if (!fork_locked) {
		/* A paused tracker's followed child waits, paused, for its own memprof ctl. */
		if (configured && mp_cfg.follow_fork && mp_state == MP_STATE_OFF)
			mp_control_start();
		/* A child of a child not set up yet: the same, forked from it. */
		if (mp_state == MP_STATE_CHILD)
			forked_from = getppid();
		return;
	}
	mp_modules_reinit_lock();
	mp_stacks_forked();
	mp_py_forked();
	mp_in_hook++;
	/* The parent's rings and connection stay the parent's: the child never writes to them. */
	mp_direct_forked();
	mp_stream_forked();
	mp_threads_forked();
	mp_timer_forked();
	if (was_live) {
		mp_state = MP_STATE_OFF;
		if (configured && mp_cfg.follow_fork)
			mp_control_start();
		goto out;
	}
	if (!mp_cfg.follow_fork) {
		mp_state = MP_STATE_OFF;
		goto out;
	}
	/*
	 * A new stream for the child, at its first allocation or free
	 * (mp_child_setup()): a child that execs or exits first costs nothing.
	 * It keeps its copy of the parent's connection until then, so that
	 * the parent's stream does not end before the child's can begin.
	 */
	forked_from = getppid();
	mp_state = MP_STATE_CHILD;
	mp_in_hook--;
	return;
out:
	mp_stream_forked_done();
	mp_in_hook--;
}

void mp_register_handlers(void)
{
	static int done;
	if (done)
		return;
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
	atexit(at_exit);
	mp_signals_wrap();
	done = 1;
}


/*
 * libunwind allocates on first use: do it now, unrecorded. A few steps, not
 * unw_backtrace: that would also fill the thread's trace cache, 256 KiB of the
 * program's memory for a fallback most programs never take (a thread that
 * does take it gets its cache then, from mmap, unrecorded).
 */
static void warm_libunwind(void)
{
	unw_context_t uc;
	unw_cursor_t c;
	if (unw_getcontext(&uc) == 0 && unw_init_local(&c, &uc) == 0)
		for (int i = 0; i < 4 && unw_step(&c) > 0; i++)
			;
}

__attribute__((constructor(101))) static void stage2(void)
{
	mp_in_hook++;
	if (mp_state == MP_STATE_INIT)
		mp_init_stage1();
	if (mp_state == MP_STATE_ON) {
		warm_libunwind();
		mp_register_handlers();
		mp_timer_start(NULL);
	}
	/* Running or paused, a configured tracker answers memprof ctl. */
	if (configured) {
		if (mp_state != MP_STATE_ON)
			warm_libunwind();
		mp_register_handlers();
		mp_control_start();
	}
	if (mp_getenv("MEMPROF_SOCKET") || mp_getenv("MEMPROF_OUTPUT"))
		mp_config_clean_environment();
	mp_in_hook--;
}
