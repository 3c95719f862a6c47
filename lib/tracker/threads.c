/* The tracker's per-thread state, its thread index in the stream, and thread names. */
#include <config.h>

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lib/tracker/config.h"
#include "lib/tracker/keys.h"
#include "lib/tracker/stream.h"
#include "lib/tracker/threads.h"
#include "lib/tracker/unwind.h"

__thread struct mp_tstate *mp_tls_ts MP_IE_TLS;
static struct mp_tstate *all_threads, *dying_threads, *free_tstates;
static pthread_key_t ts_key;
static size_t ts_size;
static int threads_lock;

static void emit_thread(struct mp_tstate *ts)
{
	uint8_t rec[MP_ENC_MAX_PREFIX + 3 * MP_VARINT_MAX + MP_THREAD_NAME_MAX], *p;
	p = mp_enc_sized_begin(rec, MP_TAG_THREAD);
	p = mp_put_uvarint(p, ts->ring.index);
	p = mp_put_uvarint(p, (uint64_t)ts->tid);
	p = mp_enc_bytes(p, ts->name, strnlen(ts->name, sizeof(ts->name)));
	p = mp_enc_sized_end(rec, p);
	/* Both sides start the index's deltas afresh at its THREAD record. */
	memset(&ts->enc, 0, sizeof(ts->enc));
	ts->name_dirty = 0;
	mp_stream_put(&ts->ring, rec, (size_t)(p - rec));
}

static int have_ring(struct mp_tstate *ts)
{
	if (ts->ring_gen == mp_st.gen)
		return 0;
	if (mp_stream_ring(&ts->ring, ts->tid))
		return -1;
	ts->ring_gen = mp_st.gen;
	return 0;
}

int mp_thread_declare(struct mp_tstate *ts)
{
	if (have_ring(ts))
		return -1;
	ts->declared = mp_st.gen;
	mp_keys_declare(&ts->ring);
	emit_thread(ts);
	return 0;
}

struct mp_wring *mp_thread_ring(void)
{
	struct mp_tstate *ts = mp_thread_get();
	if (unlikely(!ts) || have_ring(ts))
		return NULL;
	return &ts->ring;
}

static void ts_destroy(void *arg)
{
	struct mp_tstate *ts = arg;
	/* Late frees in other TLS destructors still use ts; the timer reclaims it. */
	mp_lock(&threads_lock);
	if (!ts->dying) {
		ts->dying = 1;
		ts->next_dying = dying_threads;
		dying_threads = ts;
	}
	mp_unlock(&threads_lock);
}

static void unlink_thread(struct mp_tstate *ts)
{
	for (struct mp_tstate **pp = &all_threads; *pp; pp = &(*pp)->next)
		if (*pp == ts) {
			*pp = ts->next;
			break;
		}
}

/*
 * Move the states of threads that have ended to the free list, checking at
 * most budget of the threads that are ending; under threads_lock.
 */
static void reap_locked(unsigned budget)
{
	struct mp_tstate **pp = &dying_threads;
	pid_t pid;
	if (!*pp)
		return; /* (the timer asks at every tick) */
	pid = getpid();
	while (*pp && budget--) {
		struct mp_tstate *ts = *pp;
		if (syscall(SYS_tgkill, pid, ts->tid, 0) == -1 && errno == ESRCH) {
			*pp = ts->next_dying;
			unlink_thread(ts);
			/* Its ring goes with it to the next thread, after a THREAD record. */
			ts->next = free_tstates;
			free_tstates = ts;
		} else {
			pp = &ts->next_dying;
		}
	}
}

void mp_threads_reap(void)
{
	mp_lock(&threads_lock);
	reap_locked(UINT_MAX);
	mp_unlock(&threads_lock);
}

struct mp_tstate *mp_thread_get_slow(void)
{
	struct mp_tstate *ts;
	char *mem;
	mp_lock(&threads_lock);
	/*
	 * A thread-per-task program starts threads faster than the timer reaps
	 * them: take an ended thread's state (and its ring, its unwinder) now
	 * rather than map new ones (a few: the timer checks them all).
	 */
	if (!free_tstates && dying_threads)
		reap_locked(16);
	ts = free_tstates;
	if (ts)
		free_tstates = ts->next;
	mp_unlock(&threads_lock);
	if (!ts) {
		mem = mp_pages(ts_size);
		if (!mem) {
			/* Its events cannot be recorded: the capture ends here, saying why (never a silent gap). */
			mp_stream_stop("cannot allocate the tracker's state for a new thread (", strerror(errno),
				       "); tracking stopped");
			return NULL;
		}
		ts = (struct mp_tstate *)mem;
		mem += sizeof(*ts);
		ts->ips = (uint64_t *)mem;
		mem += (MP_MAX_DEPTH_LIMIT + 1) * sizeof(uint64_t);
		ts->scratch = (uint64_t *)mem;
		mem += (MP_MAX_DEPTH_LIMIT + 1) * sizeof(uint64_t);
		ts->raw = (void **)mem;
		mem += (MP_MAX_DEPTH_LIMIT + MP_OWN_FRAMES + 1) * sizeof(void *);
		ts->nodes = (uint32_t *)mem;
	}
	ts->declared = ts->cache_gen = ts->walk_gen = 0;
	ts->name_dirty = 0;
	/* (No tick is UINT64_MAX: its first Python frames look, even before the first tick.) */
	ts->py_name_tick = UINT64_MAX;
	ts->py_name_obj = 0;
	ts->depth = 0;
	ts->dying = 0;
	/* A recycled state belonged to another thread, with another stack. */
	if (ts->uw && mp_unwinder_reuse(ts->uw)) {
		mp_unwinder_free(ts->uw);
		ts->uw = NULL;
	}
	if (!ts->uw && !mp_cfg.libunwind_only)
		ts->uw = mp_unwinder_new();
	ts->tid = (pid_t)syscall(SYS_gettid);
	ts->pthread = (unsigned long)pthread_self();
	memset(ts->name, 0, sizeof(ts->name));
	syscall(SYS_prctl, PR_GET_NAME, ts->name, 0, 0, 0);
	mp_lock(&threads_lock);
	ts->next = all_threads;
	all_threads = ts;
	mp_unlock(&threads_lock);
	mp_tls_ts = ts;
	pthread_setspecific(ts_key, ts);
	return ts;
}

void mp_record_thread_name(unsigned long pthread, const char *name)
{
	int saved = errno;
	if (mp_state != MP_STATE_ON || !name)
		return;
	mp_lock(&threads_lock);
	for (struct mp_tstate *ts = all_threads; ts; ts = ts->next) {
		if (ts->pthread != pthread || ts->dying)
			continue;
		strncpy(ts->name, name, sizeof(ts->name) - 1);
		ts->name[sizeof(ts->name) - 1] = '\0';
		/* A thread writes only its own ring: another thread's renaming waits for its next event. */
		ts->name_dirty = ts->declared == mp_st.gen;
		break;
	}
	mp_unlock(&threads_lock);
	{
		struct mp_tstate *self = mp_tls_ts;
		if (self && self->name_dirty && !mp_inside()) {
			mp_in_hook++;
			emit_thread(self);
			mp_in_hook--;
		}
	}
	errno = saved;
}

void mp_thread_rename_self(struct mp_tstate *ts, const char *name, size_t len)
{
	if (len > sizeof(ts->name) - 1)
		len = sizeof(ts->name) - 1;
	/* (Another thread's pthread_setname_np may be writing it.) */
	mp_lock(&threads_lock);
	memcpy(ts->name, name, len);
	ts->name[len] = '\0';
	ts->name_dirty = ts->declared == mp_st.gen;
	mp_unlock(&threads_lock);
}

int mp_threads_setup(void)
{
	ts_size = sizeof(struct mp_tstate) + 2 * (MP_MAX_DEPTH_LIMIT + 1) * sizeof(uint64_t) +
		  (MP_MAX_DEPTH_LIMIT + MP_OWN_FRAMES + 1) * sizeof(void *) +
		  (MP_MAX_DEPTH_LIMIT + 1) * sizeof(uint32_t);
	return pthread_key_create(&ts_key, ts_destroy) ? -1 : 0;
}

void mp_threads_lock(void)
{
	mp_lock(&threads_lock);
}

void mp_threads_unlock(void)
{
	mp_unlock(&threads_lock);
}

struct mp_tstate *mp_threads_all(void)
{
	return all_threads;
}

void mp_threads_forked(void)
{
	struct mp_tstate *self = mp_tls_ts;
	threads_lock = 0;
	all_threads = dying_threads = NULL;
	if (self) {
		self->next = NULL;
		self->tid = (pid_t)syscall(SYS_gettid);
		all_threads = self;
	}
}
