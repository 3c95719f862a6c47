/* The tracker's timer thread: samples, the module map, and in direct mode the merge. */
#include <config.h>

#include <pthread.h>
#include <signal.h>
#include <linux/futex.h>
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
static int timer_joinable;        /* timer_thread was created and not joined yet */
static int timer_running;
static volatile int timer_stop;
static int timer_wake;            /* a futex: the timer's sleep ends when it changes */
static const struct mp_timer_ops *timer_ops;
static int parked, park_restart;  /* parked: no timer may start; restart it at unpark */

/* Sleep ns, or less when woken (a ring fills in direct mode, or mp_timer_park()). */
static void timer_sleep(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) };
	if (mp_cfg.direct) {
		/*
		 * Cut short when a ring fills; in slices, so that a stop asked for just
		 * before the wait began is seen soon (mp_timer_park() waits for it).
		 */
		mp_direct_wait(ns < 20000000u ? ns : 20000000u);
		return;
	}
	syscall(SYS_futex, &timer_wake, FUTEX_WAIT_PRIVATE, 0, &ts, NULL, 0);
}

/*
 * An idle process (nothing published in its rings since the last sample)
 * is sampled less and less often, up to 2^IDLE_MAX_SHIFT intervals apart,
 * and its modules are not looked at: a prefork server's 64 idle workers
 * woke 6,400 times a second. The first sample after it allocates again
 * comes at most that much later (80 ms at the default 10 ms).
 */
#define IDLE_MAX_SHIFT 3

/* The bytes published in all of this process's rings so far. */
static uint64_t published(void)
{
	const struct mp_shm_header *h = mp_st.h;
	uint64_t sum = 0;
	uint32_t n;
	if (!h || !mp_st.shm)
		return 0;
	n = __atomic_load_n(&h->n_rings, __ATOMIC_ACQUIRE);
	for (uint32_t i = 0; i < n; i++)
		sum += __atomic_load_n(&mp_shm_ctl(mp_st.shm, h, i)->head, __ATOMIC_ACQUIRE);
	return sum;
}

static void *timer_main(void *arg)
{
	uint64_t interval = (uint64_t)mp_cfg.interval_ms * 1000000u;
	uint64_t next_tick = mp_now_ns(CLOCK_MONOTONIC) + interval;
	uint64_t seen = 0, step = interval;
	unsigned idle = 0;
	(void)arg;
	mp_in_hook = 1; /* this thread is the tracker's: never record it */
	syscall(SYS_prctl, PR_SET_NAME, "memprof-timer", 0, 0, 0);
	while (!timer_stop && mp_state == MP_STATE_ON) {
		uint64_t now = mp_now_ns(CLOCK_MONOTONIC);
		if (now < next_tick)
			timer_sleep(next_tick - now);
		if (timer_stop || mp_state != MP_STATE_ON)
			break;
		if (mp_cfg.direct)
			mp_direct_drain(0);
		now = mp_now_ns(CLOCK_MONOTONIC);
		if (now < next_tick)
			continue;
		if (timer_ops && timer_ops->stop_requested()) {
			timer_ops->stop();
			timer_running = 0;
			return NULL;
		}
		idle = published() == seen ? idle + 1 : 0;
		step = interval << (idle > IDLE_MAX_SHIFT ? IDLE_MAX_SHIFT : idle);
		next_tick = now + step;
		if (!idle && mp_modules_refresh() && timer_ops)
			timer_ops->modules_added();
		{
			struct mp_wring *ts = mp_thread_ring();
			if (ts)
				mp_stream_tick(ts);
		}
		seen = published();
		/*
		 * The next sample an interval after this one's time stamp, which the
		 * module refresh above may have delayed: samples are never closer.
		 */
		{
			uint64_t stamp = __atomic_load_n(&mp_st.last_tick_ns, __ATOMIC_RELAXED);
			if (stamp > now)
				next_tick = stamp + step;
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
	timer_ops = ops;
	/* The collector samples this stream: no thread of ours (ring.h's tick_ms). */
	if (!ops && mp_st.reader_ticks)
		return;
	if (parked) {
		park_restart = 1; /* the program is changing its credentials: at unpark */
		return;
	}
	/* The last stream's timer has ended (mp_session_start() waits for it): reap it. */
	if (timer_joinable) {
		pthread_join(timer_thread, NULL);
		timer_joinable = 0;
	}
	sigfillset(&all);
	/* All signals blocked, so the program's signals never land on our thread. */
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	timer_stop = 0;
	timer_wake = 0;
	timer_running = pthread_create(&timer_thread, &attr, timer_main, NULL) == 0;
	timer_joinable = timer_running;
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void mp_timer_park(void)
{
	parked = 1;
	if (!timer_joinable)
		return;
	if (timer_running) {
		timer_stop = 1;
		__atomic_store_n(&timer_wake, 1, __ATOMIC_RELEASE);
		syscall(SYS_futex, &timer_wake, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
		mp_direct_wake();
		park_restart = mp_state == MP_STATE_ON;
	}
	/* Gone for good, not only out of its loop: the kernel has forgotten the thread. */
	pthread_join(timer_thread, NULL);
	timer_joinable = 0;
	timer_running = 0;
}

void mp_timer_unpark(void)
{
	parked = 0;
	if (park_restart && mp_state == MP_STATE_ON)
		mp_timer_start(timer_ops);
	park_restart = 0;
}

int mp_timer_running(void)
{
	return timer_running;
}

void mp_timer_forked(void)
{
	timer_running = 0; /* threads are not forked */
	timer_joinable = 0;
	parked = park_restart = 0;
}
