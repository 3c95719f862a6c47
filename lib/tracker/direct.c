/*
 * Direct mode (MEMPROF_OUTPUT, no collector): the tracker merges its own
 * rings into the capture file, on the timer thread, in whichever thread
 * finds its ring full, and before exec, abort and exit. A capture written
 * this way loses what the rings held when the process is killed; the
 * collector of memprof run and memprof attach does not. An aggregated
 * capture (memprof_start with aggregate) folds its events, ticks and
 * threads as they are merged (lib/format/fold.h) and ends with what the
 * fold found, the records memprof run --aggregate's collector writes.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lib/format/fold.h"
#include "lib/tracker/config.h"
#include "lib/tracker/direct.h"
#include "lib/tracker/fds.h"
#include "lib/tracker/python.h"
#include "lib/tracker/stream.h"
#include "lib/transport/merge.h"
#include "lib/util/publish.h"

static struct stat sink_stat; /* the capture (direct mode), to open it again by its path */

/* Direct mode: the rings merged into the capture, under drain.lock. */
static struct {
	int lock;
	struct mp_merge m;
	struct mp_rring *r;
	uint32_t *heap;
	uint8_t *buf;
	size_t len;
	uint64_t n_allocs, n_frees, bytes, n_traces, n_records;
	int buf_ready;          /* a capture is open */
	/*
	 * An aggregated capture's analysis (lib/format/fold.h): the events,
	 * ticks and threads go into it, not into the file; what it found is
	 * written before the trailer, as memprof run --aggregate's collector
	 * writes it. Its memory is pages of ours.
	 */
	struct mp_fold *fold;
} drain;
#define DRAIN_BUF (256u << 10)
/* The capture being written, for snapshots and status. */
static char capture_path[4096];
/* A capture at this very path (memprof_start), not MEMPROF_OUTPUT's pattern; replaced when overwrite. */
static struct {
	char path[4096];
	int overwrite;
} exact;
/* Why the capture could not be created (an errno value). */
static int open_errno;

/* ---- the capture file ---- */

/*
 * The program closed our descriptor past the close hooks (the close_range
 * system call itself): the capture again by its path, if that is still the
 * file we wrote (written only at its end, so appending goes on where we
 * were). 0, or -1.
 */
static int sink_reopen(void)
{
	struct stat st;
	int fd;
	mp_fd_forget(mp_st.sink_fd);
	mp_st.sink_fd = -1;
	fd = open(capture_path, O_RDWR | O_APPEND | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || st.st_dev != sink_stat.st_dev || st.st_ino != sink_stat.st_ino) {
		close(fd);
		return -1;
	}
	mp_st.sink_fd = fd;
	mp_fd_own_at(&mp_st.sink_fd);
	return 0;
}

static void sink_write(const uint8_t *p, size_t n)
{
	if (!mp_fd_intact(mp_st.sink_fd) && sink_reopen() < 0) {
		mp_stream_stop("the program closed the capture's file descriptor, and its file is no longer "
			       "there to open again", "; tracking stopped", NULL);
		return;
	}
	while (n) {
		ssize_t w = write(mp_st.sink_fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			mp_stream_stop("cannot write the capture '", mp_cfg.output,
				      errno == ENOSPC ? "': no space left on device; tracking stopped"
						      : "'; tracking stopped");
			return;
		}
		p += w;
		n -= (size_t)w;
	}
}

/*
 * What the trailer counts, from the merged records' tags and an allocation's
 * size; written: the record is in the file (not folded).
 */
static void count_record(const uint8_t *p, size_t n, int written)
{
	uint8_t tag = p[0];
	drain.n_records += (unsigned)written;
	if (tag >= MP_TAG_ALLOC && tag < MP_TAG_FREE) {
		uint64_t v, size = 0;
		const uint8_t *q = p + 1, *end = p + n;
		int field = 0;
		/* addr (one varint, two when the low bit says so), then size. */
		while (q < end && field < 3) {
			unsigned shift = 0;
			v = 0;
			while (q < end) {
				v |= (uint64_t)(*q & 0x7f) << shift;
				shift += 7;
				if (!(*q++ & 0x80))
					break;
			}
			if (field == 0 && !(v & 1))
				field++;
			if (++field == 3)
				size = v;
		}
		drain.n_allocs++;
		drain.bytes += size;
	} else if ((tag >= MP_TAG_FREE && tag < MP_TAG_ALLOC_SEQ) || tag == MP_TAG_FREE_X ||
		   tag == MP_TAG_FREE_RANGE_X) {
		drain.n_frees++;
	} else if (tag == MP_TAG_ALLOC_X) {
		drain.n_allocs++;
	} else if (tag == MP_TAG_TRACE) {
		drain.n_traces++;
	}
}

/* A record into the capture (under drain.lock). */
static int drain_put(void *ctx, const uint8_t *p, size_t n)
{
	(void)ctx;
	if (drain.len + n > DRAIN_BUF) {
		sink_write(drain.buf, drain.len);
		drain.len = 0;
	}
	memcpy(drain.buf + drain.len, p, n);
	drain.len += n;
	return 0;
}

/* A record into the capture, counted (under drain.lock). */
static int drain_keep(void *ctx, const uint8_t *p, size_t n)
{
	if (p[0] != MP_TAG_THREAD_SWITCH)
		count_record(p, n, 1);
	return drain_put(ctx, p, n);
}

/* A merged record (under drain.lock): folded into an aggregated capture, or into the capture. */
static int drain_out(void *ctx, const uint8_t *p, size_t n)
{
	if (drain.fold) {
		int r = mp_fold_record(drain.fold, p, n);
		if (r < 0 && mp_fold_failed(drain.fold))
			mp_stream_stop("out of memory for the aggregated capture '", capture_path,
				       "'; tracking stopped");
		if (r) {
			/* Folded (or malformed, which the tracker never writes): the trailer still counts it. */
			if (p[0] != MP_TAG_THREAD_SWITCH)
				count_record(p, n, 0);
			return 0;
		}
	}
	if (p[0] == MP_TAG_PYFRAME) {
		/* For the collector to turn into symbols: here, that is us. */
		uint64_t len = 0;
		unsigned shift = 0;
		size_t i = 1;
		while (i < n && shift < 64) {
			len |= (uint64_t)(p[i] & 0x7f) << shift;
			shift += 7;
			if (!(p[i++] & 0x80))
				break;
		}
		if (len <= n - i)
			mp_py_direct_symbols(p + i, (size_t)len, drain_keep, ctx);
		return 0;
	}
	return drain_keep(ctx, p, n);
}

/* Where the fold's records go: the capture (fd < 0), or a snapshot's file; the first errno. */
struct fold_sink {
	int fd, err;
};

static void fold_flush(struct fold_sink *k)
{
	const uint8_t *p = drain.buf;
	size_t n = drain.len;
	drain.len = 0;
	if (k->fd < 0) {
		sink_write(p, n);
		return;
	}
	while (n && !k->err) {
		ssize_t w = write(k->fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			k->err = w < 0 ? errno : EIO;
			break;
		}
		p += w;
		n -= (size_t)w;
	}
}

static void fold_rec(void *ctx, const uint8_t *p, size_t n)
{
	struct fold_sink *k = ctx;
	if (k->fd < 0) {
		drain_keep(NULL, p, n);
		return;
	}
	if (drain.len + n > DRAIN_BUF)
		fold_flush(k);
	memcpy(drain.buf + drain.len, p, n);
	drain.len += n;
}

/*
 * An aggregated capture's records as of now (under drain.lock, the rings
 * merged, drain.buf empty): final, as its end (into the capture, fd < 0),
 * else as a snapshot's (into fd). 0 or -errno.
 */
static int fold_out(int fd, int final)
{
	struct fold_sink k = { fd, 0 };
	if (!drain.fold)
		return 0;
	mp_fold_emit(drain.fold, final, fold_rec, &k);
	fold_flush(&k);
	return -k.err;
}

static void drain_locked(int final)
{
	long r;
	if (!drain.buf || mp_st.sink_fd < 0)
		return;
	drain.m.mapped = mp_st.shm_file;
	do
		r = mp_merge_round(&drain.m, final, drain_out, NULL);
	while (final && r > 0);
	if (drain.len) {
		sink_write(drain.buf, drain.len);
		drain.len = 0;
	}
}

void mp_direct_drain(int final)
{
	int saved = errno;
	int cs;
	if (!drain.buf_ready)
		return;
	mp_in_hook++;
	cs = mp_cancel_off();
	mp_lock(&drain.lock);
	drain_locked(final);
	mp_unlock(&drain.lock);
	mp_cancel_restore(cs);
	mp_in_hook--;
	errno = saved;
}

void mp_direct_wait(uint64_t ns)
{
	struct timespec to = { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) };
	struct mp_shm_header *h = mp_st.h;
	uint32_t seen;
	if (!mp_cfg.direct || !h) {
		nanosleep(&to, NULL);
		return;
	}
	/* We are the reader: writers whose ring fills past half wake us. */
	seen = __atomic_load_n(&h->doorbell, __ATOMIC_ACQUIRE);
	__atomic_store_n(&h->reader_state, MP_READER_SLEEPING, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	syscall(SYS_futex, &h->doorbell, FUTEX_WAIT, seen, &to, NULL, 0);
	__atomic_store_n(&h->reader_state, MP_READER_ACTIVE, __ATOMIC_RELAXED);
}

void mp_direct_wake(void)
{
	struct mp_shm_header *h = mp_st.h;
	if (!mp_cfg.direct || !h)
		return;
	__atomic_add_fetch(&h->doorbell, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &h->doorbell, FUTEX_WAKE, INT32_MAX, NULL, NULL, 0);
}

/* Direct mode writes its own trailer: the collector is not there to do it (under drain.lock). */
static size_t trailer_locked(uint8_t *rec, unsigned reason)
{
	uint8_t *p;
	uint64_t end_us = mp_now_ns(CLOCK_REALTIME) / 1000;
	p = mp_enc_sized_begin(rec, MP_TAG_TRAILER);
	p = mp_enc_field_uint(p, MP_T_END_TIME, end_us);
	p = mp_enc_field_uint(p, MP_T_DURATION, mp_stream_since_start_us());
	p = mp_enc_field_uint(p, MP_T_END_REASON, reason);
	if (reason == MP_END_EXIT)
		p = mp_enc_field_uint(p, MP_T_EXIT_CODE, (uint64_t)(mp_st.exit_status_value & 0xff));
	p = mp_enc_field_uint(p, MP_T_N_ALLOCS, drain.n_allocs);
	p = mp_enc_field_uint(p, MP_T_N_FREES, drain.n_frees);
	p = mp_enc_field_uint(p, MP_T_BYTES_ALLOCATED, drain.bytes);
	p = mp_enc_field_uint(p, MP_T_N_TRACES, drain.n_traces);
	p = mp_enc_field_uint(p, MP_T_N_RECORDS, drain.n_records + 1);
	p = mp_enc_sized_end(rec, p);
	return (size_t)(p - rec);
}

void mp_direct_finish(void)
{
	uint8_t rec[256];
	int cs;
	mp_in_hook++;
	cs = mp_cancel_off();
	mp_lock(&drain.lock);
	/*
	 * Other threads may still run: a round merges only what is proven
	 * complete, and what comes later is merged as it is published.
	 */
	drain_locked(0);
	/* (An aggregated capture's fold takes what comes later, and leaves it out.) */
	fold_out(-1, 1);
	sink_write(rec, trailer_locked(rec, mp_st.exit_status_known ? MP_END_EXIT : MP_END_DISCONNECT));
	mp_st.final = 1;
	mp_unlock(&drain.lock);
	mp_cancel_restore(cs);
	mp_in_hook--;
}

void mp_direct_stop(void)
{
	uint8_t rec[256];
	int cs;
	mp_in_hook++;
	cs = mp_cancel_off();
	mp_lock(&drain.lock);
	/* Every writer has stopped (mp_stream_quiesce): everything published is complete. */
	drain_locked(1);
	fold_out(-1, 1);
	sink_write(rec, trailer_locked(rec, MP_END_DETACH));
	drain.buf_ready = 0;
	mp_fold_free(drain.fold);
	drain.fold = NULL;
	/* We were the rings' reader and are done: the next stream gives their memory back. */
	if (mp_st.h)
		__atomic_store_n(&mp_st.h->reader_state, MP_READER_GONE, __ATOMIC_RELEASE);
	mp_unlock(&drain.lock);
	mp_cancel_restore(cs);
	mp_in_hook--;
}

/* Copy the capture so far (n bytes of fd) into out; 0 or -errno. */
static int copy_prefix(int fd, int out, uint64_t n)
{
	static char buf[64 << 10]; /* under drain.lock */
	uint64_t off = 0;
	while (off < n) {
		size_t want = n - off < sizeof(buf) ? (size_t)(n - off) : sizeof(buf);
		ssize_t r = pread(fd, buf, want, (off_t)off), w;
		if (r <= 0)
			return r < 0 ? -errno : -EIO;
		for (ssize_t done = 0; done < r; done += w) {
			w = write(out, buf + done, (size_t)(r - done));
			if (w < 0)
				return -errno;
		}
		off += (uint64_t)r;
	}
	return 0;
}

int mp_direct_snapshot(unsigned number, const char *dest, char *path, size_t pathlen)
{
	uint8_t rec[256];
	struct stat st;
	char tmp[4096];
	int out, r = 0;
	if (dest) {
		if (strlen(dest) >= pathlen)
			return -ENAMETOOLONG;
		strcpy(path, dest);
	} else {
		size_t n = strlen(capture_path);
		char num[24];
		size_t l = mp_u64_to_dec(num, number);
		if (n + 6 + l >= pathlen)
			return -ENAMETOOLONG;
		memcpy(path, capture_path, n);
		memcpy(path + n, ".snap.", 6);
		memcpy(path + n + 6, num, l + 1);
	}
	mp_in_hook++;
	mp_lock(&drain.lock);
	/* A path of the caller's is not replaced unless the capture's was allowed to be. */
	if (dest && !exact.overwrite && lstat(dest, &st) == 0) {
		r = -EEXIST;
		goto out;
	}
	/* What is proven complete now; the capture itself goes on. */
	drain_locked(0);
	if (!mp_fd_intact(mp_st.sink_fd) || fstat(mp_st.sink_fd, &st) < 0) {
		r = -EBADF;
		goto out;
	}
	/* Written aside, then renamed: whoever waits for path never reads part of it. */
	out = mp_publish_open(path, tmp, sizeof(tmp));
	if (out < 0) {
		r = -errno;
		goto out;
	}
	r = copy_prefix(mp_st.sink_fd, out, (uint64_t)st.st_size);
	if (!r)
		r = fold_out(out, 0); /* an aggregated capture's: the totals so far */
	if (!r) {
		size_t tn = trailer_locked(rec, MP_END_SNAPSHOT);
		if (write(out, rec, tn) != (ssize_t)tn)
			r = -EIO;
	}
	r = -mp_publish_close(out, tmp, path, -r);
out:
	mp_unlock(&drain.lock);
	mp_in_hook--;
	return r;
}

const char *mp_direct_path(void)
{
	return capture_path;
}

int mp_direct_set_path(const char *path, int overwrite)
{
	if (!path) {
		exact.path[0] = '\0';
		return 0;
	}
	if (strlen(path) >= sizeof(exact.path))
		return -ENAMETOOLONG;
	strcpy(exact.path, path);
	exact.overwrite = overwrite;
	return 0;
}

int mp_direct_open_error(void)
{
	return open_errno;
}


/*
 * Expand the output pattern, from the root: %p is the pid, %n the capture's
 * number in the process (memprof ctl PID start), %% a percent sign. A
 * followed child gets .<pid> when there is no %p, a later capture .<number>
 * when there is no %n.
 */
static int output_path(char *out, size_t cap, int child, unsigned number)
{
	const char *s = exact.path[0] ? exact.path : mp_cfg.output;
	size_t n = 0;
	int had_pid = 0, had_number = 0;
	char num[24];
	if (exact.path[0])
		had_number = 1; /* (the path as it is: no number added) */
	/*
	 * From the root: the program may change its directory (a daemon's
	 * chdir("/")) before a snapshot, or before the file is opened again.
	 */
	if (s[0] != '/') {
		if (!getcwd(out, cap) || (n = strlen(out)) + 1 >= cap)
			return -1;
		if (n > 1)
			out[n++] = '/';
	}
	for (; *s; s++) {
		const char *add = s;
		size_t alen = 1;
		if (exact.path[0]) {
			/* (taken as it is) */
		} else if (s[0] == '%' && s[1] == 'p') {
			alen = mp_u64_to_dec(num, (uint64_t)getpid());
			add = num;
			had_pid = 1;
			s++;
		} else if (s[0] == '%' && s[1] == 'n') {
			alen = mp_u64_to_dec(num, number);
			add = num;
			had_number = 1;
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
	if (number > 1 && !had_number) {
		size_t l = mp_u64_to_dec(num, number);
		if (n + 1 + l >= cap)
			return -1;
		out[n++] = '.';
		memcpy(out + n, num, l);
		n += l;
	}
	out[n] = '\0';
	return 0;
}

static void *fold_get(void *ctx, size_t bytes)
{
	(void)ctx;
	return mp_pages(bytes); /* (zeroed) */
}

static void fold_put(void *ctx, void *p, size_t bytes)
{
	(void)ctx;
	mp_pages_free(p, bytes);
}

/*
 * A new fold for an aggregated capture (flags), or for a followed child of
 * one (the parent's fold, in the pages the child inherited, says so; the
 * child's capture is aggregated too). 0, or -1 (no memory).
 */
static int fold_begin(unsigned *flags)
{
	struct mp_fold_opts o = { .main_tid = (uint64_t)getpid(), .get = fold_get, .put = fold_put };
	int aggregated = (*flags & MP_HF_AGGREGATED) || ((*flags & MP_HF_FORK_CHILD) && drain.fold);
	mp_fold_free(drain.fold);
	drain.fold = NULL;
	if (!aggregated)
		return 0;
	*flags |= MP_HF_AGGREGATED;
	drain.fold = mp_fold_new(&o);
	return drain.fold ? 0 : -1;
}

int mp_direct_open(unsigned mode, unsigned flags, pid_t forked_from)
{
	char *path = capture_path;
	/* Read too: a snapshot copies what the capture holds so far. */
	int force = exact.path[0] ? exact.overwrite : mp_cfg.force;
	int oflags = O_RDWR | O_CREAT | O_CLOEXEC | (force ? O_TRUNC : O_EXCL);
	open_errno = 0;
	if (fold_begin(&flags)) {
		open_errno = ENOMEM;
		if (!mp_st.quiet)
			mp_write_stderr("out of memory for the aggregated capture", NULL,
					"; the program runs untracked");
		return -1;
	}
	if (output_path(path, sizeof(capture_path), forked_from != 0, mp_st.capture_no)) {
		open_errno = ENAMETOOLONG;
		if (!mp_st.quiet)
			mp_write_stderr("MEMPROF_OUTPUT is too long (or the directory it is relative to "
					"is gone); the program runs untracked", NULL, NULL);
		return -1;
	}
	mp_st.sink_fd = open(path, oflags, 0644);
	if (mp_st.sink_fd < 0) {
		open_errno = errno;
		if (!mp_st.quiet)
			mp_write_stderr("cannot create the capture '", path,
					errno == EEXIST ? "': it exists (set MEMPROF_FORCE=1 to overwrite); "
							  "the program runs untracked"
							: "'; the program runs untracked");
		return -1;
	}
	mp_fd_own_at(&mp_st.sink_fd);
	fstat(mp_st.sink_fd, &sink_stat);
	mp_st.sink_is_socket = 0;
	if (!drain.r) {
		drain.r = mp_pages(MP_RING_MAX_DEFAULT * sizeof(*drain.r));
		drain.heap = mp_pages(MP_RING_MAX_DEFAULT * sizeof(*drain.heap));
		drain.buf = mp_pages(DRAIN_BUF);
		if (!drain.r || !drain.heap || !drain.buf)
			return -1;
	} else {
		memset(drain.r, 0, MP_RING_MAX_DEFAULT * sizeof(*drain.r));
	}
	drain.len = 0;
	drain.n_allocs = drain.n_frees = drain.bytes = drain.n_traces = drain.n_records = 0;
	mp_py_direct_reset();
	mp_merge_init(&drain.m, mp_st.shm, mp_st.shm_file, drain.r, drain.heap);
	/* We are our own reader. */
	mp_st.h->reader_pid = (int32_t)getpid();
	mp_st.self_reader = mp_direct_drain;
	drain.buf_ready = 1;
	{
		static uint8_t header[MP_HEADER_CAP];
		sink_write(header, mp_stream_header(header, mode, flags, forked_from));
	}
	return mp_st.sink_fd >= 0 ? 0 : -1;
}

void mp_direct_lock(void)
{
	mp_lock(&drain.lock);
}

void mp_direct_unlock(void)
{
	mp_unlock(&drain.lock);
}

void mp_direct_forked(void)
{
	drain.lock = 0;
	/* The child writes its own capture, if it is followed, from a new mapping. */
	drain.len = 0;
}

