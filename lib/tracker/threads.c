/* The tracker's per-thread state, its thread index in the stream, and thread names. */
#include <config.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lib/tracker/config.h"
#include "lib/tracker/stream.h"
#include "lib/tracker/threads.h"
#include "lib/tracker/unwind.h"

__thread struct mp_tstate *mp_tls_ts MP_IE_TLS;
static struct mp_tstate *all_threads, *dying_threads, *free_tstates;
static pthread_key_t ts_key;
static size_t ts_size;
static uint32_t next_thread_index;
static uint32_t *free_indices;
static size_t n_free_indices, free_indices_cap;

/* ---- threads ---- */

static void release_index(uint32_t index)
{
	if (mp_pages_grow((void **)&free_indices, &free_indices_cap, n_free_indices + 1,
			  sizeof(*free_indices), 1024))
		return;
	free_indices[n_free_indices++] = index;
}

static int grow_enc_threads(uint32_t index)
{
	if (index >= MP_MAX_THREADS)
		return -1;
	return mp_pages_grow((void **)&mp_st.threads, &mp_st.threads_cap, (size_t)index + 1,
			     sizeof(*mp_st.threads), 256);
}

/* THREAD record for ts's index; both sides reset the index's deltas (under the stream's lock). */
static void emit_thread(struct mp_tstate *ts)
{
	uint8_t *p, *rec;
	memset(&mp_st.threads[ts->index], 0, sizeof(mp_st.threads[ts->index]));
	rec = p = mp_room(64);
	p = mp_enc_sized_begin(p, MP_TAG_THREAD);
	p = mp_put_uvarint(p, ts->index);
	p = mp_put_uvarint(p, (uint64_t)ts->tid);
	p = mp_enc_bytes(p, ts->name, strnlen(ts->name, sizeof(ts->name)));
	mp_commit(mp_enc_sized_end(rec, p));
}

/* Declare ts in the current stream (under the stream's lock). */
int mp_thread_declare(struct mp_tstate *ts)
{
	uint32_t index;
	if (likely(ts->gen == mp_st.gen))
		return 0;
	index = n_free_indices ? free_indices[--n_free_indices] : next_thread_index++;
	if (grow_enc_threads(index)) {
		release_index(index);
		return -1;
	}
	ts->index = index;
	ts->gen = mp_st.gen;
	emit_thread(ts);
	return 0;
}

static void ts_destroy(void *arg)
{
	struct mp_tstate *ts = arg;
	/* Late frees in other TLS destructors still use ts; the timer reclaims it. */
	mp_lock(&mp_st.lock);
	if (!ts->dying) {
		ts->dying = 1;
		ts->next_dying = dying_threads;
		dying_threads = ts;
	}
	mp_unlock(&mp_st.lock);
}

static void unlink_thread(struct mp_tstate *ts)
{
	for (struct mp_tstate **pp = &all_threads; *pp; pp = &(*pp)->next)
		if (*pp == ts) {
			*pp = ts->next;
			break;
		}
}

/* Reclaim the state of threads that are gone (timer thread, under the stream's lock). */
void mp_threads_reap(void)
{
	struct mp_tstate **pp = &dying_threads;
	pid_t pid = getpid();
	while (*pp) {
		struct mp_tstate *ts = *pp;
		if (syscall(SYS_tgkill, pid, ts->tid, 0) == -1 && errno == ESRCH) {
			*pp = ts->next_dying;
			unlink_thread(ts);
			if (ts->gen == mp_st.gen)
				release_index(ts->index);
			ts->next = free_tstates;
			free_tstates = ts;
		} else {
			pp = &ts->next_dying;
		}
	}
}

struct mp_tstate *mp_thread_get_slow(void)
{
	struct mp_tstate *ts;
	char *mem;
	mp_lock(&mp_st.lock);
	ts = free_tstates;
	if (ts)
		free_tstates = ts->next;
	mp_unlock(&mp_st.lock);
	if (!ts) {
		mem = mp_pages(ts_size);
		if (!mem)
			return NULL;
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
	ts->gen = ts->cache_gen = ts->walk_gen = 0;
	ts->depth = 0;
	ts->dying = 0;
	/* A recycled state belonged to another thread, with another stack. */
	if (ts->uw)
		mp_unwinder_free(ts->uw);
	ts->uw = mp_cfg.libunwind_only ? NULL : mp_unwinder_new();
	ts->tid = (pid_t)syscall(SYS_gettid);
	ts->pthread = (unsigned long)pthread_self();
	memset(ts->name, 0, sizeof(ts->name));
	syscall(SYS_prctl, PR_GET_NAME, ts->name, 0, 0, 0);
	mp_lock(&mp_st.lock);
	ts->next = all_threads;
	all_threads = ts;
	mp_unlock(&mp_st.lock);
	mp_tls_ts = ts;
	pthread_setspecific(ts_key, ts);
	return ts;
}

void mp_record_thread_name(unsigned long pthread, const char *name)
{
	int saved = errno;
	if (mp_state != MP_STATE_ON || !name)
		return;
	mp_lock(&mp_st.lock);
	for (struct mp_tstate *ts = all_threads; ts; ts = ts->next) {
		if (ts->pthread != pthread || ts->dying)
			continue;
		strncpy(ts->name, name, sizeof(ts->name) - 1);
		ts->name[sizeof(ts->name) - 1] = '\0';
		if (mp_st.sink_fd >= 0 && ts->gen == mp_st.gen)
			emit_thread(ts);
		break;
	}
	mp_unlock(&mp_st.lock);
	errno = saved;
}

int mp_threads_setup(void)
{
	ts_size = sizeof(struct mp_tstate) + 2 * (MP_MAX_DEPTH_LIMIT + 1) * sizeof(uint64_t) +
		  (MP_MAX_DEPTH_LIMIT + MP_OWN_FRAMES + 1) * sizeof(void *) +
		  (MP_MAX_DEPTH_LIMIT + 1) * sizeof(uint32_t);
	return pthread_key_create(&ts_key, ts_destroy) ? -1 : 0;
}

void mp_threads_reset(void)
{
	next_thread_index = 0;
	n_free_indices = 0;
}

void mp_threads_forked(void)
{
	struct mp_tstate *self = mp_tls_ts;
	all_threads = dying_threads = NULL;
	if (self) {
		self->next = NULL;
		self->tid = (pid_t)syscall(SYS_gettid);
		all_threads = self;
	}
}
