/* A tracked process's rings drained on a thread of their own, into a queue. */
#include <config.h>
#include "lib/process/drain.h"
#include "lib/process/procids.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "lib/format/encode.h"
#include "lib/transport/merge.h"
#include "lib/util/xalloc.h"

/* Past this much merged and not yet taken, the drain waits: the tracked threads then wait too. */
#define QUEUE_MAX (64u << 20)
/* The pause between rounds that found records. */
#define BATCH_US 1000
/*
 * Below this much queued, the collector is not woken: it looks at every
 * drain's queue at its own pace (MP_DRAIN_LOOK_MS). A hundred quiet
 * processes, each with a sample every 10 ms, woke it thousands of times a
 * second.
 */
#define WAKE_BYTES (64u << 10)
/* A round that merged this much is busy: the next comes after BATCH_US. */
#define BUSY_BYTES 4096
/*
 * Quiet rounds in a row (nothing, or a few samples) sleep longer and longer,
 * up to 2^IDLE_MAX_SHIFT times MP_DRAIN_LOOK_MS: 64 idle workers of a prefork
 * server woke their drains 1,280 times a second. A ring filling past half
 * rings the doorbell, which ends any sleep.
 */
#define IDLE_MAX_SHIFT 3

struct mp_drain {
	int memfd, notify_fd;
	void *base;
	uint64_t size;
	struct mp_merge m;
	struct mp_rring *r;
	uint32_t *heap;
	unsigned idle_ms;
	unsigned quiet;            /* quiet rounds in a row: each doubles the next sleep, to IDLE_MAX_SHIFT */
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t taken;      /* the queue shrank */
	uint8_t *q;                /* merged, not yet taken */
	size_t qlen, qcap;
	bool stop, done;
	bool ready;                /* something to take since the last take (atomic) */
	bool joined;
	/* Sampling the process, when its tracker asks (tick_ms, lib/transport/ring.h): */
	int statm_fd;              /* its /proc/PID/statm, -1: no samples */
	uint64_t sample_ns;        /* tick_ms, as it was at the start */
	uint64_t next_sample;      /* CLOCK_MONOTONIC ns */
	unsigned idle_samples;     /* in a row with nothing merged between: each doubles the next wait */
	bool merged;               /* records merged since the last sample */
};

/* The process's resident set size in bytes; 0 when it cannot be read, or it has none (ended). */
static uint64_t statm_rss(int fd)
{
	char buf[128];
	return mp_statm_resident(buf, pread(fd, buf, sizeof(buf), 0)) * (uint64_t)sysconf(_SC_PAGESIZE);
}

/* Room for n more bytes in the queue. */
static void queue_room(struct mp_drain *d, size_t n)
{
	if (d->qcap - d->qlen < n) {
		d->qcap = (d->qlen + n) * 2;
		d->q = xrealloc(d->q, d->qcap);
	}
}

/* How much of the mapping the file holds now: rings beyond it are not readable yet. */
static void update_mapped(struct mp_drain *d)
{
	struct stat st;
	if (fstat(d->memfd, &st) == 0 && (uint64_t)st.st_size <= d->size)
		d->m.mapped = (uint64_t)st.st_size;
}

/* Sleep until a writer rings the doorbell (its ring is half full), or for us microseconds. */
static void doze(struct mp_drain *d, unsigned us)
{
	struct mp_shm_header *h = d->m.h;
	struct timespec to = { (time_t)(us / 1000000), (long)(us % 1000000) * 1000L };
	uint32_t seen = __atomic_load_n(&h->doorbell, __ATOMIC_ACQUIRE);
	__atomic_store_n(&h->reader_state, MP_READER_SLEEPING, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	syscall(SYS_futex, &h->doorbell, FUTEX_WAIT, seen, &to, NULL, 0);
	__atomic_store_n(&h->reader_state, MP_READER_ACTIVE, __ATOMIC_RELAXED);
}

/*
 * The room a round starts with: one that fills it stops, and the next
 * starts with twice as much (a round merges at most what the rings hold).
 */
#define ROUND_ROOM (256u << 10)

/*
 * A round; returns the records it merged, and in *whole whether it merged
 * every record with a key older than since (NULL: not asked).
 */
static long round_locked(struct mp_drain *d, bool final, uint64_t since, bool *whole)
{
	uint64_t before = d->m.records;
	size_t room = ROUND_ROOM;
	for (;;) {
		struct mp_merge_buf b;
		long r;
		queue_room(d, room);
		b.p = d->q + d->qlen;
		b.end = d->q + d->qcap;
		r = mp_merge_round_buf(&d->m, final, &b);
		d->qlen = (size_t)(b.p - d->q);
		if (r == -1) {
			room = d->qcap - d->qlen + ROUND_ROOM; /* (queue_room() doubles what it has) */
			continue;
		}
		if (r != -2)
			break;
		/* A new ring beyond what we knew the file held: the tracker grew it first. */
		{
			uint64_t mapped = d->m.mapped;
			update_mapped(d);
			if (d->m.mapped == mapped) {
				if (whole)
					*whole = false;
				return (long)(d->m.records - before); /* not yet visible: next round */
			}
		}
	}
	if (whole)
		*whole = d->m.bound >= since;
	return (long)(d->m.records - before);
}

/*
 * A sample of the process at t (CLOCK_MONOTONIC ns), rss bytes, queued
 * after the round that followed it, when that round merged every record
 * of an event before t (whole); else the next round tries again, until
 * the sample is half an interval late: a thread preempted in the middle of
 * a record (more busy threads than CPUs) holds the rounds back for as long
 * as it waits, and the events before t that are merged after the sample
 * then are at most that many milliseconds' worth.
 */
static void sample(struct mp_drain *d, uint64_t t, uint64_t rss, bool whole)
{
	struct mp_shm_header *h = d->m.h;
	uint64_t start = __atomic_load_n(&h->start_mono_ns, __ATOMIC_RELAXED);
	uint64_t own = __atomic_load_n(&h->own_tick_ns, __ATOMIC_RELAXED);
	uint64_t step = d->sample_ns;
	uint8_t rec[64], *p;
	unsigned shift;
	if (!whole && t < d->next_sample + step / 2)
		return;
	/* Never closer than the interval to the tracker's own (its first, say: merged by now). */
	if (own > t - step && own < UINT64_MAX - step) {
		d->next_sample = own + step;
		return;
	}
	/* Never after the stream's last records (a stop, the exit), nor across an exec. */
	if (__atomic_load_n(&h->ticks_off, __ATOMIC_ACQUIRE)) {
		d->next_sample = UINT64_MAX;
		return;
	}
	if (__atomic_load_n(&h->exec_pending, __ATOMIC_ACQUIRE))
		return;
	p = mp_enc_tick_at(rec, t > start ? (t - start) / 1000 : 0, rss);
	queue_room(d, (size_t)(p - rec));
	memcpy(d->q + d->qlen, rec, (size_t)(p - rec));
	d->qlen += (size_t)(p - rec);
	__atomic_add_fetch(&h->tick_seq, 1, __ATOMIC_RELAXED);
	/* An idle process is sampled less and less often (as the tracker's timer did). */
	d->idle_samples = d->merged ? 0 : d->idle_samples + 1;
	d->merged = false;
	shift = d->idle_samples > IDLE_MAX_SHIFT ? IDLE_MAX_SHIFT : d->idle_samples;
	d->next_sample = t + (step << shift);
}

/* Tell the collector there is something to take (a full counter means it will look anyway). */
static void notify(struct mp_drain *d)
{
	uint64_t one = 1;
	ssize_t n;
	__atomic_store_n(&d->ready, true, __ATOMIC_RELEASE);
	n = write(d->notify_fd, &one, sizeof(one));
	(void)n;
}

static void *drain_main(void *arg)
{
	struct mp_drain *d = arg;
	prctl(PR_SET_NAME, "memprof-drain", 0, 0, 0);
	pthread_mutex_lock(&d->lock);
	while (!d->stop) {
		size_t before = d->qlen, got;
		unsigned sleep_us;
		uint64_t t = 0, rss = 0, since = 0;
		bool whole;
		if (d->qlen > QUEUE_MAX) {
			pthread_cond_wait(&d->taken, &d->lock);
			continue;
		}
		/* A sample due: the time and the size first, then the round that puts it after its past. */
		if (d->statm_fd >= 0 && (t = mp_mono_ns()) >= d->next_sample) {
			since = mp_merge_clock(&d->m); /* (after t: an event before t has an older key) */
			rss = statm_rss(d->statm_fd);
			if (!rss) /* (ending, or its statm unreadable now: not before the next interval) */
				d->next_sample = t + d->sample_ns;
		}
		d->merged |= round_locked(d, false, since, &whole) > 0;
		if (rss) /* (0: the process is ending) */
			sample(d, t, rss, whole);
		got = d->qlen > before ? d->qlen - before : 0;
		if (d->qlen >= WAKE_BYTES)
			notify(d);
		else if (got)
			__atomic_store_n(&d->ready, true, __ATOMIC_RELEASE); /* for the next look */
		pthread_mutex_unlock(&d->lock);
		/*
		 * After a busy round, a pause gathers the next batch: each round
		 * costs the program a memory barrier on each of its CPUs, so
		 * rounds come at most every BATCH_US unless a ring fills past
		 * half. A quiet round (nothing, or a few samples) sleeps long,
		 * at least until the collector's next look, unless records wait
		 * for a busy ring (then briefly).
		 */
		d->quiet = got >= BUSY_BYTES ? 0 : d->quiet + 1;
		if (got >= BUSY_BYTES)
			sleep_us = BATCH_US;
		else if (mp_merge_pending(&d->m))
			sleep_us = BATCH_US / 10;
		else
			sleep_us = (d->idle_ms > MP_DRAIN_LOOK_MS ? d->idle_ms : MP_DRAIN_LOOK_MS) * 1000
				   << (d->quiet > IDLE_MAX_SHIFT ? IDLE_MAX_SHIFT : d->quiet - 1);
		if (d->statm_fd >= 0 && d->next_sample != UINT64_MAX) {
			/* Awake for the next sample (a doze ends a little early rather than late). */
			uint64_t now = mp_mono_ns();
			uint64_t until = d->next_sample > now ? (d->next_sample - now) / 1000 + 1 : 0;
			/* (One waiting for a busy ring waits as a round does: samples are never that exact.) */
			if (until < BATCH_US / 10)
				until = BATCH_US / 10;
			if (until < sleep_us)
				sleep_us = (unsigned)until;
		}
		doze(d, sleep_us);
		pthread_mutex_lock(&d->lock);
	}
	/* The process is gone or its stream ended: every published record counts. */
	while (round_locked(d, true, 0, NULL) > 0)
		;
	__atomic_store_n(&d->m.h->reader_state, MP_READER_GONE, __ATOMIC_RELEASE);
	d->done = true;
	pthread_mutex_unlock(&d->lock);
	notify(d);
	return NULL;
}

/* A writer's thread as this process numbers it (mp_merge.tid_here): ctx is its process here. */
static uint32_t tid_here(void *ctx, uint32_t tid)
{
	return (uint32_t)mp_proc_thread_here((pid_t)(intptr_t)ctx, (long)tid);
}

/*
 * The tracker asks us to sample its process (tick_ms): its /proc/PID/statm,
 * PID as we number it. Said in err (and no samples) when it cannot be read.
 */
static void samples_open(struct mp_drain *d, pid_t proc, struct strbuf *err)
{
	const struct mp_shm_header *h = d->m.h;
	char path[64];
	int e;
	d->statm_fd = -1;
	d->sample_ns = (uint64_t)__atomic_load_n(&h->tick_ms, __ATOMIC_RELAXED) * 1000000u;
	if (!d->sample_ns)
		return;
	snprintf(path, sizeof(path), "/proc/%ld/statm", (long)proc);
	d->statm_fd = proc > 0 ? open(path, O_RDONLY | O_CLOEXEC) : -1;
	e = errno;
	/* (Gone already, a process that exited at once: nothing to sample, nothing to say.) */
	if (d->statm_fd < 0 && proc > 0 && e == ENOENT && kill(proc, 0) < 0 && errno == ESRCH)
		return;
	if (d->statm_fd < 0) {
		strbuf_addf(err, "cannot read '%s' (%s): its resident set size is not sampled", path,
			    proc > 0 ? strerror(e) : "its process is not known here");
		return;
	}
	d->next_sample = __atomic_load_n(&h->start_mono_ns, __ATOMIC_RELAXED) + d->sample_ns;
}

struct mp_drain *mp_drain_start(int memfd, int notify_fd, unsigned idle_ms, pid_t pid, pid_t proc,
				struct strbuf *err)
{
	struct mp_drain *d;
	struct mp_shm_header *h;
	const char *why;
	struct stat st;
	void *base;
	uint64_t size;
	sigset_t all, old;
	if (fstat(memfd, &st) < 0 || st.st_size < 4096) {
		strbuf_addstr(err, "the tracker's rings cannot be read");
		return NULL;
	}
	/* The header first, to learn the mapping's size. */
	base = mmap(NULL, 4096, PROT_READ, MAP_SHARED, memfd, 0);
	if (base == MAP_FAILED) {
		strbuf_addf(err, "cannot map the tracker's rings: %s", strerror(errno));
		return NULL;
	}
	if (mp_merge_check(base, 4096, &why) < 0) {
		strbuf_addf(err, "the tracker's rings are not usable: %s", why);
		munmap(base, 4096);
		return NULL;
	}
	size = ((const struct mp_shm_header *)base)->size;
	munmap(base, 4096);
	base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, memfd, 0);
	if (base == MAP_FAILED) {
		strbuf_addf(err, "cannot map the tracker's rings: %s", strerror(errno));
		return NULL;
	}
	h = base;
	d = xcalloc(1, sizeof(*d));
	d->memfd = memfd;
	d->notify_fd = notify_fd;
	d->base = base;
	d->size = size;
	d->idle_ms = idle_ms ? idle_ms : 10;
	d->r = xcalloc(h->max_rings, sizeof(*d->r));
	d->heap = xcalloc(h->max_rings, sizeof(*d->heap));
	mp_merge_init(&d->m, base, (uint64_t)st.st_size, d->r, d->heap);
	if (pid > 0) {
		d->m.tid_here = tid_here;
		d->m.tid_ctx = (void *)(intptr_t)pid;
	}
	update_mapped(d);
	samples_open(d, proc, err);
	__atomic_store_n(&h->reader_pid, (int32_t)getpid(), __ATOMIC_RELEASE);
	pthread_mutex_init(&d->lock, NULL);
	pthread_cond_init(&d->taken, NULL);
	/* Signals belong to the main thread (memprof run forwards them). */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	if (pthread_create(&d->thread, NULL, drain_main, d) != 0) {
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		strbuf_addstr(err, "cannot start a thread to read the tracker's rings");
		d->done = d->joined = true;
		mp_drain_free(d);
		return NULL;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return d;
}

void mp_drain_take(struct mp_drain *d, uint8_t **buf, size_t *len, size_t *cap)
{
	pthread_mutex_lock(&d->lock);
	__atomic_store_n(&d->ready, false, __ATOMIC_RELAXED);
	if (*len == 0 && d->qlen) {
		/* Swap rather than copy: the usual case, a caller that consumed everything. */
		uint8_t *t = *buf;
		size_t tc = *cap;
		*buf = d->q;
		*cap = d->qcap;
		*len = d->qlen;
		d->q = t;
		d->qcap = tc;
	} else if (d->qlen) {
		if (*len + d->qlen > *cap) {
			*cap = *len + d->qlen + (64u << 10);
			*buf = xrealloc(*buf, *cap);
		}
		memcpy(*buf + *len, d->q, d->qlen);
		*len += d->qlen;
	}
	d->qlen = 0;
	pthread_cond_signal(&d->taken);
	pthread_mutex_unlock(&d->lock);
}

bool mp_drain_ready(struct mp_drain *d)
{
	return __atomic_load_n(&d->ready, __ATOMIC_ACQUIRE);
}

void mp_drain_stop(struct mp_drain *d)
{
	struct mp_shm_header *h = d->m.h;
	pthread_mutex_lock(&d->lock);
	if (d->done || d->stop) { /* (done without a thread: it never started) */
		pthread_mutex_unlock(&d->lock);
		return;
	}
	d->stop = true;
	pthread_cond_signal(&d->taken);
	pthread_mutex_unlock(&d->lock);
	/* Wake it from its doze. */
	__atomic_add_fetch(&h->doorbell, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &h->doorbell, FUTEX_WAKE, 1, NULL, NULL, 0);
}

void mp_drain_sync(struct mp_drain *d)
{
	pthread_mutex_lock(&d->lock);
	if (!d->done)
		while (round_locked(d, false, 0, NULL) > 0)
			;
	if (d->qlen)
		__atomic_store_n(&d->ready, true, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&d->lock);
}

void mp_drain_finish(struct mp_drain *d)
{
	mp_drain_stop(d);
	if (!d->joined) {
		pthread_join(d->thread, NULL);
		d->joined = true;
	}
}

void mp_drain_free(struct mp_drain *d)
{
	if (!d)
		return;
	mp_drain_finish(d);
	pthread_mutex_destroy(&d->lock);
	pthread_cond_destroy(&d->taken);
	munmap(d->base, d->size);
	close(d->memfd);
	if (d->statm_fd >= 0)
		close(d->statm_fd);
	free(d->r);
	free(d->heap);
	free(d->q);
	free(d);
}

struct mp_shm_header *mp_drain_header(const struct mp_drain *d)
{
	return d->m.h;
}

bool mp_drain_exec_pending(const struct mp_drain *d)
{
	return __atomic_load_n(&d->m.h->exec_pending, __ATOMIC_ACQUIRE) != 0;
}

uint32_t mp_drain_broken(const struct mp_drain *d)
{
	return d->m.broken;
}

uint32_t mp_drain_unfenced(const struct mp_drain *d)
{
	return d->m.unfenced;
}

uint64_t mp_drain_late(const struct mp_drain *d)
{
	return d->m.late;
}

uint64_t mp_drain_stale(const struct mp_drain *d)
{
	return d->m.stale;
}
