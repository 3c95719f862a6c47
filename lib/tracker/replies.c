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
#include "lib/tracker/fds.h"
#include "lib/tracker/stream.h"
#include "lib/transport/reply.h"

static struct {
	int lock;
	uint32_t epoch;      /* the sink's: each close ends what was said on it */
	int end_asked, gone;
	int garbled;          /* a reply that made no sense: what follows is not read as replies */
	int capture;          /* the capture's file: 1 opened, -1 not (capture_text says why), 0 not said */
	char capture_text[MP_REPLY_TEXT_MAX + 1];
	int done;             /* the capture is finished (done_text: its path) */
	char done_text[MP_REPLY_TEXT_MAX + 1];
	uint32_t snap_number; /* the last snapshot answered (0: none yet) */
	int snap_ok;
	char snap_text[MP_REPLY_TEXT_MAX + 1];
	uint8_t part[MP_REPLY_HEAD + MP_REPLY_TEXT_MAX]; /* a reply not whole yet */
	size_t npart;
} rp;

static void take_byte(uint8_t b)
{
	size_t len;
	if (rp.garbled)
		return;
	if (rp.npart == 0 && b != MP_REPLY_SNAP_OK && b != MP_REPLY_SNAP_FAILED &&
	    b != MP_REPLY_CAPTURE_OK && b != MP_REPLY_CAPTURE_FAILED && b != MP_REPLY_CAPTURE_DONE) {
		rp.end_asked = 1; /* MP_REPLY_END, or any byte as older collectors sent */
		return;
	}
	rp.part[rp.npart++] = b;
	if (rp.npart < MP_REPLY_HEAD)
		return;
	len = (size_t)rp.part[5] | (size_t)rp.part[6] << 8;
	if (len > MP_REPLY_TEXT_MAX) {
		/* Not what our collector sends: nothing more it says is read (ctl's waits give up). */
		rp.garbled = 1;
		rp.npart = 0;
		return;
	}
	if (rp.npart < MP_REPLY_HEAD + len)
		return;
	rp.npart = 0;
	if (rp.part[0] == MP_REPLY_CAPTURE_OK || rp.part[0] == MP_REPLY_CAPTURE_FAILED) {
		rp.capture = rp.part[0] == MP_REPLY_CAPTURE_OK ? 1 : -1;
		memcpy(rp.capture_text, rp.part + MP_REPLY_HEAD, len);
		rp.capture_text[len] = '\0';
		return;
	}
	if (rp.part[0] == MP_REPLY_CAPTURE_DONE) {
		rp.done = 1;
		memcpy(rp.done_text, rp.part + MP_REPLY_HEAD, len);
		rp.done_text[len] = '\0';
		return;
	}
	rp.snap_number = (uint32_t)rp.part[1] | (uint32_t)rp.part[2] << 8 | (uint32_t)rp.part[3] << 16 |
			 (uint32_t)rp.part[4] << 24;
	rp.snap_ok = rp.part[0] == MP_REPLY_SNAP_OK;
	memcpy(rp.snap_text, rp.part + MP_REPLY_HEAD, len);
	rp.snap_text[len] = '\0';
}

/*
 * Whatever the collector sent so far, without waiting (the lock held).
 * Returns 1, 0 when there is no connection to read (none yet, or direct
 * mode), or -1 when the program closed it past the close hooks (whatever has
 * that number now is not ours to read).
 */
static int read_locked(void)
{
	uint8_t buf[512];
	if (mp_st.sink_fd < 0 || !mp_st.sink_is_socket || mp_cfg.direct)
		return 0;
	if (!mp_fd_intact(mp_st.sink_fd))
		return -1;
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
	return 1;
}

int mp_stream_end_asked(void)
{
	int r, saved = errno;
	mp_lock(&rp.lock);
	r = read_locked() != 1 || rp.end_asked || rp.gone;
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
	int cs;
	if (!__atomic_compare_exchange_n(&rp.lock, &free_, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return 0;
	/*
	 * recv() is a cancellation point, and this thread is in a hook, its
	 * event half made: a cancel acts at the program's next one instead.
	 */
	cs = mp_cancel_off();
	/* Without its socket (the program closed it), the collector may still read the rings. */
	r = read_locked() == 1 && rp.gone;
	mp_cancel_restore(cs);
	mp_unlock(&rp.lock);
	errno = saved;
	return r;
}

static uint64_t now_ms(void)
{
	return mp_now_ns(CLOCK_MONOTONIC) / 1000000;
}

/* Copy a reply's text into text (cap bytes), cut to fit. */
static void copy_text(char *text, size_t cap, const char *from)
{
	size_t n = strlen(from);
	if (n >= cap)
		n = cap - 1;
	memcpy(text, from, n);
	text[n] = '\0';
}

/*
 * Wait at most wait_ms for what answered(number) finds said: 1 or 0 (with
 * its text), or -2 (never to be said), the lock held but for the waits. -1
 * when the stream ended, its reader went away or the time ran out first.
 */
static int wait_for(int (*answered)(uint32_t, char *, size_t), uint32_t number, unsigned wait_ms,
		    char *text, size_t cap)
{
	uint64_t deadline = now_ms() + wait_ms;
	uint32_t epoch;
	int r = -1;
	mp_lock(&rp.lock);
	epoch = rp.epoch;
	for (;;) {
		struct pollfd p = { .fd = mp_st.sink_fd, .events = POLLIN };
		uint64_t now;
		if (rp.epoch != epoch || read_locked() != 1)
			break; /* the stream ended meanwhile */
		r = answered(number, text, cap);
		now = now_ms();
		if (r != -1 || rp.gone || now >= deadline)
			break;
		mp_unlock(&rp.lock);
		/* (Should the stream end meanwhile, its descriptor's number may be another's: at worst a short wait.) */
		poll(&p, 1, deadline - now < 50 ? (int)(deadline - now) : 50);
		mp_lock(&rp.lock);
	}
	mp_unlock(&rp.lock);
	return r;
}

static int snapshot_answered(uint32_t number, char *text, size_t cap)
{
	if (rp.snap_number == number) {
		copy_text(text, cap, rp.snap_text);
		return rp.snap_ok;
	}
	/* A later one was answered: this one's word was missed (a wait that gave up). */
	return rp.snap_number > number ? -2 : -1;
}

int mp_stream_snapshot_wait(uint32_t number, unsigned wait_ms, char *text, size_t cap)
{
	int r = wait_for(snapshot_answered, number, wait_ms, text, cap);
	return r < 0 ? -1 : r;
}

static int capture_answered(uint32_t unused, char *text, size_t cap)
{
	(void)unused;
	if (!rp.capture)
		return -1;
	copy_text(text, cap, rp.capture_text);
	return rp.capture > 0;
}

int mp_stream_capture_wait(unsigned wait_ms, char *text, size_t cap)
{
	return wait_for(capture_answered, 0, wait_ms, text, cap);
}

static int done_answered(uint32_t unused, char *text, size_t cap)
{
	(void)unused;
	if (!rp.done)
		return rp.gone ? 0 : -1;
	copy_text(text, cap, rp.done_text);
	return 1;
}

int mp_stream_finish_wait(unsigned wait_ms, char *text, size_t cap)
{
	int fd = mp_st.sink_fd;
	if (fd < 0 || !mp_st.sink_is_socket || mp_cfg.direct || !mp_fd_intact(fd))
		return -1;
	/* The end of what we write: the collector takes it as the stream's end. */
	if (shutdown(fd, SHUT_WR) < 0)
		return -1;
	return wait_for(done_answered, 0, wait_ms, text, cap);
}

void mp_stream_close_sink(void)
{
	mp_lock(&rp.lock);
	mp_fd_close(mp_st.sink_fd);
	mp_st.sink_fd = -1;
	mp_st.sink_is_socket = 0;
	rp.epoch++;
	rp.end_asked = rp.gone = rp.garbled = 0;
	rp.capture = 0;
	rp.done = 0;
	rp.snap_number = 0;
	rp.npart = 0;
	mp_unlock(&rp.lock);
}

void mp_stream_replies_forked(void)
{
	rp.lock = 0; /* a thread of the parent may have held it: none runs here */
}
