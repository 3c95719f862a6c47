/*
 * What the collector says back on the stream's socket (lib/transport/reply.h):
 * read by whichever thread asks (the timer, a thread waiting for room in its
 * ring, the control thread waiting for a snapshot), under one lock, so that
 * no reader takes another's bytes. Nothing here sleeps holding the lock.
 */
#include <config.h>

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "lib/tracker/config.h"
#include "lib/tracker/stream.h"
#include "lib/transport/reply.h"

static struct {
	int lock;
	uint32_t epoch;      /* the sink's: each close ends what was said on it */
	int end_asked, gone;
	uint32_t snap_number; /* the last snapshot answered (0: none yet) */
	int snap_ok;
	char snap_text[MP_REPLY_TEXT_MAX + 1];
	uint8_t part[MP_REPLY_HEAD + MP_REPLY_TEXT_MAX]; /* a reply not whole yet */
	size_t npart;
} rp;

static void take_byte(uint8_t b)
{
	size_t len;
	if (rp.npart == 0 && b != MP_REPLY_SNAP_OK && b != MP_REPLY_SNAP_FAILED) {
		rp.end_asked = 1; /* MP_REPLY_END, or any byte as older collectors sent */
		return;
	}
	rp.part[rp.npart++] = b;
	if (rp.npart < MP_REPLY_HEAD)
		return;
	len = (size_t)rp.part[5] | (size_t)rp.part[6] << 8;
	if (len > MP_REPLY_TEXT_MAX) {
		rp.gone = 1; /* not a collector of ours: nothing more it says can be trusted */
		rp.npart = 0;
		return;
	}
	if (rp.npart < MP_REPLY_HEAD + len)
		return;
	rp.snap_number = (uint32_t)rp.part[1] | (uint32_t)rp.part[2] << 8 | (uint32_t)rp.part[3] << 16 |
			 (uint32_t)rp.part[4] << 24;
	rp.snap_ok = rp.part[0] == MP_REPLY_SNAP_OK;
	memcpy(rp.snap_text, rp.part + MP_REPLY_HEAD, len);
	rp.snap_text[len] = '\0';
	rp.npart = 0;
}

/* Whatever the collector sent so far, without waiting (the lock held). */
static void read_locked(void)
{
	uint8_t buf[512];
	if (mp_st.sink_fd < 0 || !mp_st.sink_is_socket || mp_cfg.direct) {
		rp.gone = 1;
		return;
	}
	while (!rp.gone) {
		ssize_t n = recv(mp_st.sink_fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n > 0) {
			for (ssize_t i = 0; i < n; i++)
				take_byte(buf[i]);
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK))
			rp.gone = 1;
		break;
	}
}

int mp_stream_end_asked(void)
{
	int r, saved = errno;
	mp_lock(&rp.lock);
	read_locked();
	r = rp.end_asked || rp.gone;
	mp_unlock(&rp.lock);
	errno = saved;
	return r;
}

int mp_stream_reader_gone(void)
{
	int r, saved = errno, free_ = 0;
	/*
	 * A program thread asks, in a hook waiting for room in its ring: it may
	 * have interrupted (a signal handler that allocates) this very thread
	 * inside this function. So no waiting: when another reads just now, the
	 * answer is "not gone", and the wait asks again.
	 */
	if (!__atomic_compare_exchange_n(&rp.lock, &free_, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return 0;
	read_locked();
	r = rp.gone;
	mp_unlock(&rp.lock);
	errno = saved;
	return r;
}

static uint64_t now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

int mp_stream_snapshot_wait(uint32_t number, unsigned wait_ms, char *text, size_t cap)
{
	uint64_t deadline = now_ms() + wait_ms;
	uint32_t epoch;
	int r = -1;
	mp_lock(&rp.lock);
	epoch = rp.epoch;
	for (;;) {
		struct pollfd p = { .fd = mp_st.sink_fd, .events = POLLIN };
		uint64_t now;
		if (rp.epoch != epoch)
			break; /* the stream ended meanwhile */
		read_locked();
		if (rp.snap_number == number) {
			size_t n = strlen(rp.snap_text);
			if (n >= cap)
				n = cap - 1;
			memcpy(text, rp.snap_text, n);
			text[n] = '\0';
			r = rp.snap_ok;
			break;
		}
		now = now_ms();
		if (rp.gone || rp.snap_number > number || now >= deadline)
			break;
		mp_unlock(&rp.lock);
		/* (Should the stream end meanwhile, its descriptor's number may be another's: at worst a short wait.) */
		poll(&p, 1, deadline - now < 50 ? (int)(deadline - now) : 50);
		mp_lock(&rp.lock);
	}
	mp_unlock(&rp.lock);
	return r;
}

void mp_stream_close_sink(void)
{
	mp_lock(&rp.lock);
	if (mp_st.sink_fd >= 0)
		close(mp_st.sink_fd);
	mp_st.sink_fd = -1;
	mp_st.sink_is_socket = 0;
	rp.epoch++;
	rp.end_asked = rp.gone = 0;
	rp.snap_number = 0;
	rp.npart = 0;
	mp_unlock(&rp.lock);
}

void mp_stream_replies_forked(void)
{
	rp.lock = 0; /* a thread of the parent may have held it: none runs here */
}
