/* The tracker's timer thread: samples, the module map, and in direct mode the merge. */
#include <config.h>

#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "lib/tracker/config.h"
#include "lib/tracker/direct.h"
#include "lib/tracker/modules.h"
#include "lib/tracker/stream.h"
#include "lib/tracker/threads.h"
#include "lib/tracker/timer.h"

static pthread_t timer_thread;
static int timer_running;
static volatile int timer_stop;
static const struct mp_timer_ops *timer_ops;

static void *timer_main(void *arg)
{
	uint64_t interval = (uint64_t)mp_cfg.interval_ms * 1000000u;
	uint64_t next_tick = mp_now_ns(CLOCK_MONOTONIC) + interval;
	(void)arg;
	mp_in_hook = 1; /* this thread is the tracker's: never record it */
	syscall(SYS_prctl, PR_SET_NAME, "memprof-timer", 0, 0, 0);
	while (!timer_stop && mp_state == MP_STATE_ON) {
		uint64_t now = mp_now_ns(CLOCK_MONOTONIC);
		if (now < next_tick) {
			if (mp_cfg.direct) {
				mp_direct_wait(next_tick - now); /* cut short when a ring fills */
			} else {
				struct timespec ts = { (time_t)((next_tick - now) / 1000000000u),
						       (long)((next_tick - now) % 1000000000u) };
				nanosleep(&ts, NULL);
			}
		}
		if (timer_stop || mp_state != MP_STATE_ON)
			break;
		if (mp_cfg.direct)
			mp_direct_drain(0);
		now = mp_now_ns(CLOCK_MONOTONIC);
		if (now < next_tick)
			continue;
		next_tick = now + interval;
		if (timer_ops && timer_ops->stop_requested()) {
			timer_ops->stop();
			timer_running = 0;
			return NULL;
		}
		if (mp_modules_refresh(0) && timer_ops)
			timer_ops->modules_added();
		{
			struct mp_wring *ts = mp_thread_ring();
			if (ts)
				mp_stream_tick(ts);
		}
		mp_threads_reap();
	}
	/* The stream ended (the collector went away): an attached tracker restores the program. */
	if (timer_ops && !timer_stop)
		timer_ops->stop();
	/* A stopped session's timer is gone: the next start (memprof ctl) may begin its own. */
	timer_running = 0;
	return NULL;
}

void mp_timer_start(const struct mp_timer_ops *ops)
{
	sigset_t all, old;
	pthread_attr_t attr;
	sigfillset(&all);
	/* All signals blocked, so the program's signals never land on our thread. */
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	timer_stop = 0;
	timer_ops = ops;
	timer_running = pthread_create(&timer_thread, &attr, timer_main, NULL) == 0;
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

int mp_timer_running(void)
{
	return timer_running;
}

void mp_timer_forked(void)
{
	timer_running = 0; /* threads are not forked */
}
