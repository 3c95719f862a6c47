/*
 * The tracker's output stream: one buffer under the main lock, written to the
 * collector's socket (or to the capture file in direct mode) when it fills,
 * at each tick and at the end; the header, markers, ticks and trailer.
 */
#include <config.h>

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "lib/tracker/config.h"
#include "lib/tracker/stream.h"

struct mp_stream mp_st = { .sink_fd = -1, .gen = 1, .statm_fd = -1, .page_size = 4096 };

/* ---- output ---- */

static void sink_failed(int err)
{
	int fd = mp_st.sink_fd;
	mp_st.sink_fd = -1;
	mp_state = MP_STATE_OFF;
	if (fd >= 0)
		close(fd);
	if (mp_cfg.direct)
		mp_write_stderr("cannot write the capture '", mp_cfg.output,
				err == ENOSPC ? "': no space left on device; tracking stopped"
					      : "'; tracking stopped");
	else if (err != EPIPE && err != ECONNRESET)
		mp_write_stderr("lost the connection to the collector", "; tracking stopped", NULL);
	/* A collector that went away (EPIPE) already reported why; the program just runs on. */
}

static void sink_write(const uint8_t *p, size_t n)
{
	while (n && mp_st.sink_fd >= 0) {
		ssize_t w = mp_st.sink_is_socket ? send(mp_st.sink_fd, p, n, MSG_NOSIGNAL) : write(mp_st.sink_fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			sink_failed(errno);
			return;
		}
		p += w;
		n -= (size_t)w;
	}
}

void mp_stream_flush_locked(void)
{
	if (mp_st.out_len) {
		sink_write(mp_st.out_buf, mp_st.out_len);
		mp_st.out_len = 0;
	}
}

void mp_stream_locked(void (*fn)(void *), void *arg)
{
	mp_lock(&mp_st.lock);
	fn(arg);
	mp_unlock(&mp_st.lock);
}

void mp_stream_append(const uint8_t *rec, size_t len)
{
	mp_lock(&mp_st.lock);
	if (mp_st.sink_fd >= 0 && len <= MP_OUT_CAP) {
		memcpy(mp_room(len), rec, len);
		mp_commit(mp_st.out_buf + mp_st.out_len + len);
		if (mp_st.final_mode)
			mp_stream_flush_locked();
	}
	mp_unlock(&mp_st.lock);
}

uint64_t mp_stream_since_start_us(void)
{
	return (mp_now_ns(CLOCK_MONOTONIC) - mp_st.start_mono_ns) / 1000;
}


/* ---- header and trailer ---- */

static size_t read_cmdline(uint8_t *buf, size_t cap)
{
	ssize_t n = mp_read_file("/proc/self/cmdline", (char *)buf, cap);
	if (n <= 0)
		return 0;
	/* Keep whole arguments: a cut one would be misleading. */
	if ((size_t)n == cap) {
		while (n > 0 && buf[n - 1])
			n--;
	}
	return (size_t)n;
}

static size_t build_header(uint8_t *buf, unsigned mode, unsigned flags, pid_t forked_from)
{
	static uint8_t cmdline[64 * 1024];
	uint8_t *p = buf, *rec;
	struct utsname uts;
	char cwd[4096];
	size_t clen = read_cmdline(cmdline, sizeof(cmdline));

	memcpy(p, MP_MAGIC, MP_MAGIC_LEN);
	p[MP_MAGIC_LEN] = MP_FORMAT_MAJOR;
	p[MP_MAGIC_LEN + 1] = MP_FORMAT_MINOR;
	p += MP_MAGIC_LEN + 2;
	rec = p;
	p = mp_enc_sized_begin(p, MP_TAG_HEADER);
	p = mp_enc_field_uint(p, MP_H_PID, (uint64_t)getpid());
	p = mp_enc_field_uint(p, MP_H_PPID, (uint64_t)getppid());
	p = mp_enc_field_bytes(p, MP_H_ARGV, cmdline, clen);
	p = mp_enc_field_bytes(p, MP_H_EXE, mp_st.exe_path, strlen(mp_st.exe_path));
	p = mp_enc_field_uint(p, MP_H_START_TIME, mp_st.start_wall_us);
	if (uname(&uts) == 0)
		p = mp_enc_field_bytes(p, MP_H_HOSTNAME, uts.nodename, strlen(uts.nodename));
	p = mp_enc_field_uint(p, MP_H_PAGE_SIZE, (uint64_t)mp_st.page_size);
	p = mp_enc_field_uint(p, MP_H_MODE, mode);
	p = mp_enc_field_uint(p, MP_H_MAX_DEPTH, mp_cfg.max_depth);
	p = mp_enc_field_uint(p, MP_H_INTERVAL_MS, mp_cfg.interval_ms);
	p = mp_enc_field_uint(p, MP_H_FLAGS, flags);
	p = mp_enc_field_uint(p, MP_H_MAIN_TID, (uint64_t)syscall(SYS_gettid));
#if defined(__x86_64__)
	p = mp_enc_field_uint(p, MP_H_MACHINE, EM_X86_64);
#elif defined(__aarch64__)
	p = mp_enc_field_uint(p, MP_H_MACHINE, EM_AARCH64);
#endif
	p = mp_enc_field_uint(p, MP_H_POINTER_SIZE, sizeof(void *));
	p = mp_enc_field_bytes(p, MP_H_TRACKER_VERSION, PACKAGE_VERSION, strlen(PACKAGE_VERSION));
	if (getcwd(cwd, sizeof(cwd)))
		p = mp_enc_field_bytes(p, MP_H_CWD, cwd, strlen(cwd));
	if (forked_from)
		p = mp_enc_field_uint(p, MP_H_FORKED_FROM, (uint64_t)forked_from);
	p = mp_enc_sized_end(rec, p);
	return (size_t)(p - buf);
}

/* A marker record with a time and one optional field (under the lock). */
void mp_stream_marker_locked(unsigned tag, unsigned field, uint64_t value, int is_signed)
{
	uint8_t *rec = mp_room(64), *p;
	p = mp_enc_sized_begin(rec, tag);
	p = mp_enc_field_uint(p, MP_M_TIME, mp_stream_since_start_us());
	if (is_signed)
		p = mp_enc_field_sint(p, field, (int64_t)value);
	else
		p = mp_enc_field_uint(p, field, value);
	mp_commit(mp_enc_sized_end(rec, p));
}

/* Direct mode writes its own trailer: the collector is not there to do it. */
static void trailer_locked(void)
{
	uint8_t *rec = mp_room(256), *p;
	uint64_t end_us = mp_now_ns(CLOCK_REALTIME) / 1000;
	p = mp_enc_sized_begin(rec, MP_TAG_TRAILER);
	p = mp_enc_field_uint(p, MP_T_END_TIME, end_us);
	p = mp_enc_field_uint(p, MP_T_DURATION, mp_stream_since_start_us());
	p = mp_enc_field_uint(p, MP_T_END_REASON, mp_st.exit_status_known ? MP_END_EXIT : MP_END_DISCONNECT);
	if (mp_st.exit_status_known)
		p = mp_enc_field_uint(p, MP_T_EXIT_CODE, (uint64_t)(mp_st.exit_status_value & 0xff));
	p = mp_enc_field_uint(p, MP_T_N_ALLOCS, mp_st.n_allocs);
	p = mp_enc_field_uint(p, MP_T_N_FREES, mp_st.n_frees);
	p = mp_enc_field_uint(p, MP_T_BYTES_ALLOCATED, mp_st.bytes_allocated);
	p = mp_enc_field_uint(p, MP_T_N_TRACES, mp_st.n_traces);
	p = mp_enc_field_uint(p, MP_T_N_RECORDS, mp_st.n_records + 1);
	mp_commit(mp_enc_sized_end(rec, p));
}


/* ---- the sink ---- */

/* Expand the output pattern: %p is the pid, %% a percent sign; a followed child gets .<pid>. */
static int output_path(char *out, size_t cap, int child)
{
	const char *s = mp_cfg.output;
	size_t n = 0;
	int had_pid = 0;
	char num[24];
	for (; *s; s++) {
		const char *add = s;
		size_t alen = 1;
		if (s[0] == '%' && s[1] == 'p') {
			alen = mp_u64_to_dec(num, (uint64_t)getpid());
			add = num;
			had_pid = 1;
			s++;
		} else if (s[0] == '%' && s[1] == '%') {
			s++;
		}
		if (n + alen >= cap)
			return -1;
		memcpy(out + n, add, alen);
		n += alen;
	}
	if (child && !had_pid) {
		size_t l = mp_u64_to_dec(num, (uint64_t)getpid());
		if (n + 1 + l >= cap)
			return -1;
		out[n++] = '.';
		memcpy(out + n, num, l);
		n += l;
	}
	out[n] = '\0';
	return 0;
}

/* Open the stream's destination and write preamble and header. */
int mp_stream_open(unsigned mode, unsigned flags, pid_t forked_from)
{
	static uint8_t header[MP_HEADER_CAP];
	size_t hlen;
	if (mp_cfg.direct) {
		char path[4096];
		int oflags = O_WRONLY | O_CREAT | O_CLOEXEC | (mp_cfg.force ? O_TRUNC : O_EXCL);
		if (output_path(path, sizeof(path), forked_from != 0)) {
			mp_write_stderr("MEMPROF_OUTPUT is too long; the program runs untracked", NULL, NULL);
			return -1;
		}
		mp_st.sink_fd = open(path, oflags, 0644);
		if (mp_st.sink_fd < 0) {
			mp_write_stderr("cannot create the capture '", path,
					errno == EEXIST ? "': it exists (set MEMPROF_FORCE=1 to overwrite); "
							  "the program runs untracked"
							: "'; the program runs untracked");
			return -1;
		}
		mp_st.sink_is_socket = 0;
	} else {
		struct sockaddr_un sa = { .sun_family = AF_UNIX };
		int size = 4 << 20;
		mp_st.sink_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (mp_st.sink_fd < 0)
			return -1;
		memcpy(sa.sun_path, mp_cfg.socket_path, sizeof(sa.sun_path));
		if (connect(mp_st.sink_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
			mp_write_stderr("cannot connect to the collector at '", mp_cfg.socket_path,
					"'; the program runs untracked");
			close(mp_st.sink_fd);
			mp_st.sink_fd = -1;
			return -1;
		}
		setsockopt(mp_st.sink_fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
		mp_st.sink_is_socket = 1;
	}
	mp_st.start_mono_ns = mp_st.last_tick_ns = mp_now_ns(CLOCK_MONOTONIC);
	mp_st.start_wall_us = mp_now_ns(CLOCK_REALTIME) / 1000;
	hlen = build_header(header, mode, flags, forked_from);
	sink_write(header, hlen);
	if (mp_st.sink_fd < 0)
		return -1;
	/* A first sample at time 0: even a program that ends at once has a start and an end. */
	mp_lock(&mp_st.lock);
	mp_stream_tick_locked();
	mp_unlock(&mp_st.lock);
	return 0;
}

/* ---- ticks ---- */

uint64_t mp_stream_rss(void)
{
	char buf[128];
	ssize_t n;
	uint64_t pages = 0;
	const char *s;
	if (mp_st.statm_fd < 0)
		return 0;
	n = pread(mp_st.statm_fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	s = strchr(buf, ' '); /* size, then resident */
	if (!s)
		return 0;
	for (s++; *s >= '0' && *s <= '9'; s++)
		pages = pages * 10 + (uint64_t)(*s - '0');
	return pages * (uint64_t)mp_st.page_size;
}

void mp_stream_tick_locked(void)
{
	uint64_t now = mp_now_ns(CLOCK_MONOTONIC);
	uint64_t delta_us = (now - mp_st.start_mono_ns) / 1000 - (mp_st.last_tick_ns - mp_st.start_mono_ns) / 1000;
	mp_commit(mp_enc_tick(mp_room(MP_ENC_MAX_EVENT), delta_us, mp_stream_rss()));
	mp_st.last_tick_ns = now;
}


/*
 * The process is ending: a last sample, the trailer when we write the file
 * ourselves, everything on its way, and from now on each event goes out at
 * once (under the lock).
 */
void mp_stream_finish_locked(void)
{
	mp_stream_tick_locked();
	if (mp_cfg.direct)
		trailer_locked();
	mp_stream_flush_locked();
	mp_st.final_mode = 1;
}
