/*
 * The process's samples in its stream (TICK: the time and the resident set
 * size), and the count of stacks libunwind walked that goes with them: ours,
 * or when the collector samples the process (tick_ms in
 * lib/transport/ring.h), only the first and the last, as TICK_ATs.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/tracker/config.h"
#include "lib/tracker/fds.h"
#include "lib/tracker/stream.h"
#include "lib/tracker/unwind.h"

void mp_stream_open_statm(void)
{
	static int said;
	mp_fd_close(mp_st.statm_fd);
	mp_st.statm_fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
	if (mp_st.statm_fd < 0 && !said && !mp_st.quiet) {
		/* (A chroot without /proc, say: the capture is whole but for its RSS line.) */
		said = 1;
		mp_write_stderr("cannot open '/proc/self/statm' (", strerror(errno),
				"); the resident set size is not sampled");
	}
	mp_fd_own_at(&mp_st.statm_fd);
}

uint64_t mp_stream_rss(void)
{
	char buf[128];
	ssize_t n;
	if (!mp_fd_intact(mp_st.statm_fd)) {
		/* Closed past our hooks: opened again (its number may be the program's now). */
		mp_stream_open_statm();
		if (!mp_fd_intact(mp_st.statm_fd))
			return 0;
	}
	n = pread(mp_st.statm_fd, buf, sizeof(buf), 0);
	return mp_statm_resident(buf, n) * (uint64_t)mp_st.page_size;
}

/* Ticks carry deltas: one at a time, in the order of their keys. */
static int tick_lock;
/* mp_libunwind_walks when this stream's last UNWIND record (or its start) said it. */
static uint64_t libunwind_said;

void mp_stream_tick(struct mp_wring *w)
{
	uint8_t rec[MP_ENC_MAX_EVENT], *p;
	uint64_t now, delta_us;
	int cs = mp_cancel_off(); /* pread, and in direct mode a drain */
	mp_lock(&tick_lock);
	now = mp_now_ns(CLOCK_MONOTONIC);
	if (mp_st.reader_ticks) {
		/* The collector writes the samples between: ours says its time, not a delta. */
		__atomic_store_n(&mp_st.h->own_tick_ns, now, __ATOMIC_RELAXED);
		p = mp_enc_tick_at(rec, (now - mp_st.start_mono_ns) / 1000, mp_stream_rss());
	} else {
		delta_us = (now - mp_st.start_mono_ns) / 1000 -
			   (mp_st.last_tick_ns - mp_st.start_mono_ns) / 1000;
		p = mp_enc_tick(rec, delta_us, mp_stream_rss());
	}
	if (mp_stream_put(w, rec, (size_t)(p - rec)) == 0)
		mp_st.last_tick_ns = now;
	{
		/* The stacks libunwind walked since the last tick, when there were some. */
		uint64_t n = __atomic_load_n(&mp_libunwind_walks, __ATOMIC_RELAXED);
		if (n != libunwind_said) {
			mp_stream_marker(w, MP_TAG_UNWIND, MP_M_COUNT, n - libunwind_said, 0);
			libunwind_said = n;
		}
	}
	mp_unlock(&tick_lock);
	mp_cancel_restore(cs);
}

void mp_stream_ticks_end(void)
{
	/* Before the records it must not follow: the reader sees it once it has merged them. */
	if (mp_st.h && mp_st.reader_ticks)
		__atomic_store_n(&mp_st.h->ticks_off, 1u, __ATOMIC_SEQ_CST);
}

/*
 * Around fork, before every other lock: a child that inherited the lock
 * from a thread in the middle of a tick (the timer's) would wait for it
 * forever. A tick in direct mode may drain, under the drain lock.
 */
void mp_stream_ticks_lock(void)
{
	mp_lock(&tick_lock);
}

void mp_stream_ticks_unlock(void)
{
	mp_unlock(&tick_lock);
}

void mp_stream_ticks_begin(void)
{
	libunwind_said = __atomic_load_n(&mp_libunwind_walks, __ATOMIC_RELAXED);
}

void mp_stream_ticks_forked(void)
{
	tick_lock = 0;
}
