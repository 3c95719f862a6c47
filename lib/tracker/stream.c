/*
 * The tracker's output: a mapping of per-thread rings (lib/transport/ring.h)
 * handed to the collector over its socket with the capture's header, or, in
 * direct mode, merged into the capture file by the tracker itself.
 */
#include <config.h>

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "lib/tracker/config.h"
#include "lib/tracker/fds.h"
#include "lib/tracker/keys.h"
#include "lib/tracker/sample.h"
#include "lib/tracker/stream.h"
#include "lib/tracker/unwind.h"

struct mp_stream mp_st = { .sink_fd = -1, .gen = 1, .shm_fd = -1, .statm_fd = -1,
			   .page_size = 4096 };
static int live_before_setup;
volatile int *mp_live = &live_before_setup;
/* After a detach stopped every other writer, the thread that writes the last records. */
static struct mp_wring *closer;
/* The mapping of the last detached stream, kept until its collector is done with it. */
static struct {
	void *shm;
	int fd;
	uint64_t file;
	uint64_t mapped;
} retired = { NULL, -1, 0, 0 };
static void release_retired(void);
/* The process whose stream this is. */
static pid_t stream_pid;

void mp_stream_stop(const char *a, const char *b, const char *c)
{
	if (mp_state == MP_STATE_ON && a && !mp_st.quiet)
		mp_write_stderr(a, b, c);
	mp_state = MP_STATE_OFF;
	mp_sample_stop();
	*mp_live = 0;
}


/* ---- the rings ---- */

/*
 * The time-stamp counter orders records only where the kernel keeps it in
 * step across CPUs. It costs a fence and a read (about 15 ns here) whatever
 * the number of threads; the shared counter costs an atomic add (5 ns) that
 * slows down as more CPUs contend for it. So: the counter on up to 2 CPUs,
 * the time-stamp counter above, unless MEMPROF_CLOCK says.
 */
static int choose_clock(void)
{
#if defined(__x86_64__)
	char cs[16];
	ssize_t n;
	cpu_set_t cpus;
	if (mp_cfg.clock == MP_CFG_CLOCK_COUNTER)
		return MP_CLOCK_COUNTER;
	if (mp_cfg.clock == MP_CFG_CLOCK_AUTO &&
	    (sched_getaffinity(0, sizeof(cpus), &cpus) < 0 || CPU_COUNT(&cpus) <= 2))
		return MP_CLOCK_COUNTER;
	n = mp_read_file("/sys/devices/system/clocksource/clocksource0/current_clocksource", cs,
			 sizeof(cs) - 1);
	if (n < 3 || strncmp(cs, "tsc", 3) || (n > 3 && cs[3] != '\n'))
		return MP_CLOCK_COUNTER;
	/* The reader makes our threads pass a barrier before it trusts a ring's busy flag. */
	if (syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED, 0, 0) != 0)
		return MP_CLOCK_COUNTER;
	return MP_CLOCK_TSC;
#else
	return MP_CLOCK_COUNTER;
#endif
}

/*
 * How many rings the mapping has room for: MP_RING_MAX_DEFAULT, or fewer
 * when the address space is limited (ulimit -v, as sandboxes set): the
 * mapping reserves its whole size at once, and takes at most 1/32 of
 * the limit, so that it does not use up what the program may allocate.
 */
static uint32_t rings_for_limit(uint32_t ring)
{
	struct rlimit rl;
	uint64_t ctl, data, size;
	uint32_t max = MP_RING_MAX_DEFAULT;
	if (getrlimit(RLIMIT_AS, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY)
		return max;
	for (;;) {
		mp_shm_layout(ring, max, &ctl, &data, &size);
		if (size <= rl.rlim_cur / 32 || max <= 64)
			return max;
		max /= 2;
	}
}

/*
 * The rings' file: a memfd, or where memfd_create(2) is refused (a seccomp
 * filter, an old kernel) an unnamed file in /dev/shm (memory too), else in
 * TMPDIR or /tmp. The collector maps whichever it is handed.
 */
static int rings_file(void)
{
	const char *dirs[3] = { "/dev/shm", mp_getenv("TMPDIR"), "/tmp" };
	int fd = (int)syscall(SYS_memfd_create, "memprof-rings", MFD_CLOEXEC), err = errno;
	for (int i = 0; fd < 0 && i < 3; i++)
		if (dirs[i] && *dirs[i])
			fd = (int)syscall(SYS_openat, AT_FDCWD, dirs[i], O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0)
		errno = err;
	return fd;
}

static int shm_create(void)
{
	uint64_t ctl, data, size;
	uint32_t ring = mp_cfg.ring_kb << 10, max = rings_for_limit(ring);
	long p;
	int fd;
	mp_shm_layout(ring, max, &ctl, &data, &size);
	fd = rings_file();
	if (fd < 0)
		return -1;
	if (ftruncate(fd, (off_t)data) < 0) {
		close(fd);
		return -1;
	}
	/*
	 * Raw system calls: our mmap hook must not record the tracker's own memory.
	 * (The offset is an off_t: a plain 0 is an int, whose upper half syscall()'s
	 * variadic arguments leave undefined; clang's code left garbage there.)
	 */
	p = syscall(SYS_mmap, NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd,
		    (off_t)0);
	if (p == -1) {
		close(fd);
		return -1;
	}
	mp_st.shm = (void *)p;
	mp_st.shm_mapped = size;
	mp_st.h = (struct mp_shm_header *)p;
	mp_st.shm_fd = fd;
	mp_fd_own_at(&mp_st.shm_fd);
	mp_st.shm_file = data;
	mp_st.clock = choose_clock();
	/* Solo keys need every thread to pass a barrier when a second writer comes. */
	mp_st.solo_ok = mp_st.clock == MP_CLOCK_COUNTER &&
			syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
	mp_st.h->magic = MP_SHM_MAGIC;
	mp_st.h->version = MP_SHM_VERSION;
	mp_st.h->clock = (uint32_t)mp_st.clock;
	mp_st.h->ring_size = ring;
	mp_st.h->max_rings = max;
	mp_st.h->ctl_offset = ctl;
	mp_st.h->data_offset = data;
	mp_st.h->size = size;
	return 0;
}

static void shm_destroy(void)
{
	/* (Not h->size: after mp_stream_unreserve() the program may have mapped what follows.) */
	if (mp_st.shm)
		syscall(SYS_munmap, mp_st.shm, mp_st.shm_mapped);
	mp_fd_close(mp_st.shm_fd);
	mp_st.shm = NULL;
	mp_st.h = NULL;
	mp_st.shm_fd = -1;
}

static uint64_t page_up(uint64_t n)
{
	uint64_t ps = (uint64_t)mp_st.page_size;
	return (n + ps - 1) / ps * ps;
}

/* The rings mapped up to want, right after what is mapped (under rings_lock). 0 or -1. */
static int map_more(uint64_t want)
{
	uint64_t from = mp_st.shm_mapped, to = page_up(want);
	char *at = (char *)mp_st.shm + from;
	long p = syscall(SYS_mmap, at, to - from, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_NORESERVE | MAP_FIXED_NOREPLACE, mp_st.shm_fd, (off_t)from);
	if (p == -1)
		return -1;
	if ((char *)p != at) { /* (a kernel without MAP_FIXED_NOREPLACE put it elsewhere) */
		syscall(SYS_munmap, p, to - from);
		errno = EEXIST;
		return -1;
	}
	mp_st.shm_mapped = to;
	return 0;
}

/* The mapping at shm, *mapped bytes long, cut to the file's file bytes; 1 when it was longer. */
static int cut_mapping(void *shm, uint64_t *mapped, uint64_t file)
{
	uint64_t keep = page_up(file);
	if (!shm || *mapped <= keep)
		return 0;
	syscall(SYS_munmap, (char *)shm + keep, *mapped - keep);
	*mapped = keep;
	return 1;
}

int mp_stream_unreserve(void)
{
	int cut;
	mp_lock(&mp_st.rings_lock);
	cut = cut_mapping(mp_st.shm, &mp_st.shm_mapped, mp_st.shm_file);
	cut |= cut_mapping(retired.shm, &retired.mapped, retired.file);
	mp_unlock(&mp_st.rings_lock);
	return cut;
}

int (*mp_stream_ctl_wake)(void);

int mp_stream_ring(struct mp_wring *w, pid_t tid)
{
	struct mp_shm_header *h = mp_st.h;
	uint32_t idx;
	if (!h)
		return -1;
	mp_lock(&mp_st.rings_lock);
	idx = h->n_rings;
	if (idx >= h->max_rings) {
		mp_unlock(&mp_st.rings_lock);
		mp_stream_stop("more threads at once than the tracker has rings for", "; tracking stopped",
			      NULL);
		return -1;
	}
	if (mp_shm_needed(h, idx + 1) > mp_st.shm_file) {
		/* Eight rings at a time: fewer system calls, and a reader maps them as they come. */
		uint64_t want = mp_shm_needed(h, idx + 8 < h->max_rings ? idx + 8 : h->max_rings);
		/* (Not a file the program put at that number after closing ours past our hooks.) */
		int intact = mp_fd_intact(mp_st.shm_fd);
		if (!intact || ftruncate(mp_st.shm_fd, (off_t)want) < 0) {
			const char *why = intact ? strerror(errno) : NULL;
			mp_unlock(&mp_st.rings_lock);
			/* A thread whose events cannot be recorded: the capture ends here, saying why. */
			if (why)
				mp_stream_stop("cannot make room for a new thread's ring (", why, "); tracking stopped");
			else
				mp_stream_stop("the program closed the tracker's descriptors with a system call its hooks "
					       "do not see, and a new thread needs a ring",
					       "; tracking stopped", NULL);
			return -1;
		}
		mp_st.shm_file = want;
		if (want > mp_st.shm_mapped && map_more(want) < 0) {
			const char *why = strerror(errno);
			mp_unlock(&mp_st.rings_lock);
			mp_stream_stop("cannot map a new thread's ring after the program locked its memory "
				       "(mlockall: ", why, "); tracking stopped");
			return -1;
		}
	}
	w->h = h;
	w->ctl = mp_shm_ctl(mp_st.shm, h, idx);
	w->data = mp_shm_data(mp_st.shm, h, idx);
	w->mask = h->ring_size - 1;
	w->head = w->tail = w->last_key = w->pub_key = 0;
	w->half_mark = h->ring_size / 2;
	w->index = idx;
	w->keys = mp_st.solo_ok ? MP_KEYS_FOREIGN : MP_KEYS_SHARED;
	w->ctl->tid = (uint32_t)tid;
	__atomic_store_n(&h->n_rings, idx + 1, __ATOMIC_RELEASE);
	mp_unlock(&mp_st.rings_lock);
	/*
	 * A second thread of the program: glibc's single-threaded paths are
	 * behind it, and a control socket waiting for a request (ring.h's
	 * ctl_state) may as well start its thread now, rather than have a
	 * process of threads that wait in futexes (where memprof cannot stop
	 * one to start it) woken later.
	 */
	if (idx > 0 && mp_stream_ctl_wake)
		mp_stream_ctl_wake();
	return 0;
}

static void ring_doorbell(struct mp_shm_header *h)
{
	if (__atomic_load_n(&h->reader_state, __ATOMIC_ACQUIRE) != MP_READER_SLEEPING)
		return;
	__atomic_add_fetch(&h->doorbell, 1, __ATOMIC_RELEASE);
	/* Not private: the reader is another process (or our own timer, in direct mode). */
	syscall(SYS_futex, &h->doorbell, FUTEX_WAKE, 1, NULL, NULL, 0);
}

void mp_stream_half_full(struct mp_wring *w)
{
	uint64_t size = w->mask + 1;
	w->tail = __atomic_load_n(&w->ctl->tail, __ATOMIC_ACQUIRE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (w->head - w->tail >= size / 2)
		ring_doorbell(w->h);
	w->half_mark = w->head + size / 4;
	/* A request waits at a control socket whose thread was never started (ring.h's ctl_wake). */
	if (unlikely(__atomic_load_n(&w->h->ctl_wake, __ATOMIC_RELAXED)) && mp_stream_ctl_wake)
		mp_stream_ctl_wake();
}

/*
 * Whether the collector still reads (it may have been killed): checked while
 * waiting. By its pid as the socket told it here, never h->reader_pid: a
 * collector outside the program's pid namespace (memprof attach from the
 * host) has another pid there, which may be no process here, or another's.
 */
static int reader_alive(struct mp_shm_header *h, uint64_t waited_ns)
{
	int32_t pid = __atomic_load_n(&h->reader_pid, __ATOMIC_ACQUIRE);
	if (__atomic_load_n(&h->reader_state, __ATOMIC_ACQUIRE) == MP_READER_GONE)
		return 0;
	if (mp_cfg.direct)
		return 1;
	if (mp_st.collector_pid > 0 && kill(mp_st.collector_pid, 0) < 0 && errno == ESRCH)
		return 0;
	if (mp_st.sink_fd >= 0 && mp_stream_reader_gone())
		return 0; /* the collector closed its end */
	/*
	 * A collector that lives and keeps the socket open is coming, however
	 * long it takes to map the rings (a loaded machine, a collector behind
	 * on hundreds of new processes, one stopped for a while): the program
	 * waits, as it does for a full ring, and nothing is lost. Only one
	 * whose pid is unknown here (another pid namespace) and that never
	 * mapped the rings after this long is taken for gone.
	 */
	if (mp_st.collector_pid > 0 && mp_st.sink_fd >= 0)
		return 1;
	return pid > 0 || waited_ns < 10000000000ull;
}

int mp_stream_wait_room(struct mp_wring *w, size_t n)
{
	uint64_t start = 0;
	int saved = errno;
	for (;;) {
		uint32_t lo;
		struct timespec to = { 0, 50 * 1000000L };
		if (!*mp_live && w != closer) {
			errno = saved;
			return -1;
		}
		if (mp_wring_room(w, n) == 0)
			break;
		/* Direct mode: whoever finds a full ring merges (once; then it waits for the timer). */
		if (mp_st.self_reader && !start) {
			start = mp_now_ns(CLOCK_MONOTONIC);
			mp_st.self_reader(0);
			continue;
		}
		__atomic_store_n(&w->ctl->waiting, 1, __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		lo = (uint32_t)__atomic_load_n(&w->ctl->tail, __ATOMIC_ACQUIRE);
		if (mp_wring_room(w, n) == 0)
			break;
		__atomic_add_fetch(&w->h->doorbell, 1, __ATOMIC_RELEASE);
		syscall(SYS_futex, &w->h->doorbell, FUTEX_WAKE, 1, NULL, NULL, 0);
		if (!start)
			start = mp_now_ns(CLOCK_MONOTONIC);
		if (syscall(SYS_futex, (uint32_t *)&w->ctl->tail, FUTEX_WAIT, lo, &to, NULL, 0) < 0 &&
		    errno == ETIMEDOUT && !reader_alive(w->h, mp_now_ns(CLOCK_MONOTONIC) - start)) {
			mp_stream_stop("lost the connection to the collector", "; tracking stopped", NULL);
			errno = saved;
			return -1;
		}
	}
	__atomic_store_n(&w->ctl->waiting, 0, __ATOMIC_RELAXED);
	errno = saved;
	return 0;
}

int mp_stream_put(struct mp_wring *w, const uint8_t *rec, size_t len)
{
	uint8_t kd[MP_VARINT_MAX], *p, *q;
	size_t room = 2 * MP_VARINT_MAX + len;
	uint64_t key, d;
	unsigned kn = 0;
	if (len > MP_RING_MAX_RECORD || (mp_wring_room(w, room) && mp_stream_wait_room(w, room)))
		return -1;
	p = mp_wring_at(w, room);
	key = mp_wring_begin(w, mp_st.clock);
	if (unlikely(!key))
		key = mp_keys_slow(w);
	if (unlikely(!*mp_live) && w != closer) {
		mp_wring_abandon(w);
		return -1;
	}
	for (d = key - w->last_key; d >= 0x80; d >>= 7)
		kd[kn++] = (uint8_t)(d | 0x80);
	kd[kn++] = (uint8_t)d;
	w->last_key = key;
	q = mp_put_uvarint(p, kn + len);
	memcpy(q, kd, kn);
	memcpy(q + kn, rec, len);
	mp_wring_publish(w, q + kn + len);
	if (unlikely(w->head >= w->half_mark))
		mp_stream_half_full(w);
	if (unlikely(mp_st.final))
		mp_st.self_reader(1);
	return 0;
}


/* ---- header, markers and ticks ---- */

uint64_t mp_stream_since_start_us(void)
{
	return (mp_now_ns(CLOCK_MONOTONIC) - mp_st.start_mono_ns) / 1000;
}

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

size_t mp_stream_header(uint8_t *buf, unsigned mode, unsigned flags, pid_t forked_from)
{
	static uint8_t cmdline[64 * 1024];
	uint8_t *p = buf, *rec;
	struct utsname uts;
	char cwd[4096];
	size_t clen = read_cmdline(cmdline, sizeof(cmdline));

	memcpy(p, MP_MAGIC, MP_MAGIC_LEN);
	p[MP_MAGIC_LEN] = MP_STREAM_MAJOR;
	p[MP_MAGIC_LEN + 1] = 0;
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
	/* The main thread, whichever thread writes the header (ctl start: the control thread). */
	p = mp_enc_field_uint(p, MP_H_MAIN_TID, (uint64_t)getpid());
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
	if (mp_sample_begun())
		p = mp_enc_field_uint(p, MP_H_SAMPLING_INTERVAL, mp_sample_begun());
	p = mp_enc_sized_end(rec, p);
	return (size_t)(p - buf);
}

void mp_stream_marker(struct mp_wring *w, unsigned tag, unsigned field, uint64_t value,
		      int is_signed)
{
	uint8_t rec[64], *p;
	p = mp_enc_sized_begin(rec, tag);
	p = mp_enc_field_uint(p, MP_M_TIME, mp_stream_since_start_us());
	if (is_signed)
		p = mp_enc_field_sint(p, field, (int64_t)value);
	else if (field)
		p = mp_enc_field_uint(p, field, value);
	p = mp_enc_sized_end(rec, p);
	mp_stream_put(w, rec, (size_t)(p - rec));
}

/* ---- opening and closing ---- */

/* The pid of fd's peer in this process's pid namespace; 0 when it has none here (or unknown). */
static pid_t peer_pid(int fd)
{
	struct ucred cred = { 0 };
	socklen_t len = sizeof(cred);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 || len != sizeof(cred))
		return 0;
	return cred.pid > 0 ? cred.pid : 0;
}

static int open_socket(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct mp_shm_hello hello = { MP_HELLO_MAGIC, MP_SHM_VERSION, (uint32_t)getpid() };
	mp_st.sink_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (mp_st.sink_fd < 0)
		return -1;
	memcpy(sa.sun_path, mp_cfg.socket_path, sizeof(sa.sun_path));
	if (connect(mp_st.sink_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		if (!mp_st.quiet)
			mp_write_stderr("cannot connect to the collector at '", mp_cfg.socket_path,
					"'; the program runs untracked");
		close(mp_st.sink_fd);
		mp_st.sink_fd = -1;
		return -1;
	}
	mp_fd_own_at(&mp_st.sink_fd);
	mp_st.sink_is_socket = 1;
	mp_st.collector_pid = peer_pid(mp_st.sink_fd);
	if (mp_send_fd(mp_st.sink_fd, &hello, sizeof(hello), mp_st.shm_fd) != (ssize_t)sizeof(hello)) {
		mp_fd_close(mp_st.sink_fd);
		mp_st.sink_fd = -1;
		return -1;
	}
	return 0;
}

int mp_stream_pass_control(int fd)
{
	if (mp_cfg.direct || !mp_st.sink_is_socket || mp_st.sink_fd < 0 || !mp_fd_intact(mp_st.sink_fd))
		return -1;
	char byte = MP_CTL_FD_BYTE;
	return mp_send_fd(mp_st.sink_fd, &byte, 1, fd) == 1 ? 0 : -1;
}

static int send_all(const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t w = send(mp_st.sink_fd, p, n, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* The page whose word says events may be written, zeroed in forked children. */
static int setup_live(void)
{
	static volatile int *page;
	if (!page) {
		page = mp_pages(4096);
		if (!page)
			return -1;
		/* Kernels before 4.14 lack it: the fork hook and handlers then do the job alone. */
		madvise((void *)page, 4096, MADV_WIPEONFORK);
	}
	mp_live = page;
	return 0;
}

void mp_stream_exec(int on)
{
	/* (A vfork child runs in our memory: its exec is not ours.) */
	if (mp_st.h && getpid() == stream_pid)
		__atomic_store_n(&mp_st.h->exec_pending, on ? 1u : 0u, __ATOMIC_RELEASE);
}

int mp_stream_create(void)
{
	release_retired();
	if (setup_live() || shm_create()) {
		if (!mp_st.quiet)
			mp_write_stderr("cannot create the tracker's rings (", strerror(errno),
					"); the program runs untracked");
		return -1;
	}
	mp_st.gen++;
	mp_st.final = 0;
	mp_stream_ticks_begin();
	mp_st.self_reader = NULL;
	stream_pid = getpid();
	mp_st.start_mono_ns = mp_st.last_tick_ns = mp_now_ns(CLOCK_MONOTONIC);
	mp_st.start_wall_us = mp_now_ns(CLOCK_REALTIME) / 1000;
	/* Before the mapping is passed on: who samples, from when. */
	mp_st.h->start_mono_ns = mp_st.start_mono_ns;
	mp_st.h->tick_ms = mp_st.reader_ticks ? mp_cfg.interval_ms : 0;
	return 0;
}

int mp_stream_connect(unsigned mode, unsigned flags, pid_t forked_from)
{
	static uint8_t header[MP_HEADER_CAP];
	if (open_socket())
		return -1;
	if (send_all(header, mp_stream_header(header, mode, flags, forked_from))) {
		if (!mp_st.quiet)
			mp_write_stderr("lost the connection to the collector",
					"; the program runs untracked", NULL);
		return -1;
	}
	return 0;
}

void mp_stream_start(void)
{
	/* After the new stream's nodes' generation (mp_record_alloc_at() reads them in that order). */
	__atomic_store_n(mp_live, 1, __ATOMIC_RELEASE);
}

void mp_stream_close(void)
{
	*mp_live = 0;
	mp_stream_close_sink();
	shm_destroy();
}

/* ---- detach ---- */

static void release_retired(void)
{
	if (!retired.shm)
		return;
	if (__atomic_load_n(&((struct mp_shm_header *)retired.shm)->reader_state, __ATOMIC_ACQUIRE) !=
	    MP_READER_GONE)
		return;
	/*
	 * Its collector is done: give the memory back. The mapping itself stays,
	 * since a thread may still be about to set its ring's busy flag.
	 */
	fallocate(retired.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, (off_t)retired.file);
	mp_fd_close(retired.fd);
	retired.shm = NULL;
	retired.fd = -1;
}

void mp_stream_quiesce(struct mp_wring *self)
{
	struct mp_shm_header *h = mp_st.h;
	uint32_t n;
	*mp_live = 0;
	/*
	 * A writer sets its busy flag, then reads the live flag: after this
	 * barrier either it saw 0, or we see its flag (lib/transport/merge.h).
	 */
	if (mp_st.clock == MP_CLOCK_TSC)
		syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL_EXPEDITED, 0, 0);
	else if (!mp_st.solo_ok || syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) != 0)
		__atomic_thread_fence(__ATOMIC_SEQ_CST); /* the writers' atomic adds are barriers */
	if (!h)
		return;
	n = __atomic_load_n(&h->n_rings, __ATOMIC_ACQUIRE);
	for (uint32_t i = 0; i < n; i++) {
		struct mp_ring_ctl *c = mp_shm_ctl(mp_st.shm, h, i);
		while (__atomic_load_n(&c->busy, __ATOMIC_ACQUIRE)) {
			struct timespec ts = { 0, 100000 };
			nanosleep(&ts, NULL);
		}
	}
	closer = self;
}

void mp_stream_detach(void)
{
	closer = NULL;
	mp_stream_close_sink();
	release_retired();
	if (mp_st.shm) {
		/* The collector still reads it; the next attach gives the memory back. */
		if (!retired.shm) {
			retired.shm = mp_st.shm;
			retired.fd = mp_st.shm_fd;
			retired.file = mp_st.shm_file;
			retired.mapped = mp_st.shm_mapped;
		} else {
			mp_fd_close(mp_st.shm_fd);
		}
	}
	mp_st.shm = NULL;
	mp_st.h = NULL;
	mp_st.shm_fd = -1;
}

/* ---- fork ---- */

void mp_stream_lock_all(void)
{
	mp_lock(&mp_st.rings_lock);
}

void mp_stream_unlock_all(void)
{
	mp_unlock(&mp_st.rings_lock);
}

/*
 * A forked child's copy of its parent's connection, closed once the child's
 * own stream is connected: the parent's stream cannot end (as the parent
 * exits) before the collector has the child's connection waiting.
 */
static int parent_sink = -1;

void mp_stream_forked(void)
{
	/* The parent's rings stay the parent's: the child never writes to them. */
	mp_st.rings_lock = 0;
	mp_stream_ticks_forked();
	mp_st.final = 0;
	mp_st.self_reader = NULL;
	mp_stream_replies_forked();
	if (mp_st.sink_is_socket) {
		parent_sink = mp_st.sink_fd; /* still registered: closed by mp_stream_forked_done() */
		mp_st.sink_fd = -1;
	}
	mp_stream_close();
}

void mp_stream_forked_done(void)
{
	mp_fd_close(parent_sink);
	parent_sink = -1;
}
