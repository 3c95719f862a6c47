/*
 * The tracker's per-thread state (threads.c): the stacks being recorded, the
 * stack walker, and the thread's index in the stream, declared with a THREAD
 * record before its first event. A thread's state outlives it a little: frees
 * in other TLS destructors still use it, and the timer reclaims it once the
 * thread is gone.
 */
#ifndef MEMPROF_LIB_TRACKER_THREADS_H
#define MEMPROF_LIB_TRACKER_THREADS_H

#include <stdint.h>
#include <sys/types.h>

#include "lib/format/encode.h"
#include "lib/tracker/base.h"
#include "lib/transport/ring.h"

#define MP_OWN_FRAMES 16 /* room for the tracker's own frames at the top of a stack */
/* A thread's name: the OS's are 15 bytes at most, Python's longer ones are cut here. */
#define MP_THREAD_NAME_MAX 64

struct mp_unwinder;
struct mp_pybuf;

struct mp_tstate {
	struct mp_tstate *next;       /* all live threads, under the threads' lock */
	struct mp_tstate *next_dying; /* threads whose key destructor ran */
	struct mp_wring ring;      /* its ring in the stream of generation ring_gen; its index is
				      the thread's index in the stream */
	struct mp_enc_thread enc;  /* the encoder's deltas for its events */
	uint32_t ring_gen;         /* 0: no ring in any stream yet */
	uint32_t declared;         /* the generation its THREAD record was written in */
	int name_dirty;            /* renamed by another thread: declare again */
	uint32_t cache_gen;        /* generation of the cached stack's nodes */
	uint32_t walk_gen;         /* generation of the nodes kept in the walker's frames */
	int depth;                 /* cached stack depth */
	int dying;
	pid_t tid;
	unsigned long pthread;
	char name[MP_THREAD_NAME_MAX];  /* NUL-terminated */
	uint64_t py_name_tick;     /* the tick of the last look at its Python name (python.h); UINT64_MAX: none */
	uint64_t py_name_obj;      /* the Python name (a str object) last taken, or 0 */
	uint64_t *ips;             /* cached stack, root first */
	uint32_t *nodes;           /* its trace nodes */
	uint64_t *scratch;         /* the stack being recorded, root first */
	void **raw;                /* unwinder output, innermost first */
	struct mp_unwinder *uw;    /* our stack walker (NULL: libunwind only) */
	struct mp_pybuf *py;       /* its Python frames (python.h), made on its first Python event */
};

extern __thread struct mp_tstate *mp_tls_ts MP_IE_TLS MP_HIDDEN;
struct mp_tstate *mp_thread_get_slow(void) MP_HIDDEN;
/* The calling thread's state, made on its first event; NULL when memory ran out. */
static inline struct mp_tstate *mp_thread_get(void)
{
	struct mp_tstate *ts = mp_tls_ts;
	return likely(ts != NULL) ? ts : mp_thread_get_slow();
}
/*
 * Declare ts in the current stream before its first event: a ring if it has
 * none in it yet, and a THREAD record with its tid and name, which starts
 * its events' deltas afresh. 0 or -1.
 */
int mp_thread_declare(struct mp_tstate *ts) MP_HIDDEN;
/* Whether ts must be declared before its next record. */
static inline int mp_thread_undeclared(const struct mp_tstate *ts, uint32_t gen)
{
	return ts->declared != gen || ts->name_dirty;
}
/*
 * The calling thread's ring in the current stream, for records
 * that are not its events (a tick, a module, a marker: no THREAD record is
 * needed); NULL when it cannot have one.
 */
struct mp_wring *mp_thread_ring(void) MP_HIDDEN;
/* The thread identified by pthread was renamed. */
void mp_record_thread_name(unsigned long pthread, const char *name) MP_HIDDEN;
/*
 * The calling thread, ts, renames itself (its Python name, len bytes, cut
 * to MP_THREAD_NAME_MAX - 1): declared again before its next event.
 */
void mp_thread_rename_self(struct mp_tstate *ts, const char *name, size_t len) MP_HIDDEN;
/* Reclaim the state of threads that are gone (the timer). */
void mp_threads_reap(void) MP_HIDDEN;

/* Once, before the first thread state: the key whose destructor notes a thread's end. 0 or -1. */
int mp_threads_setup(void) MP_HIDDEN;
/* The threads' lock, held across fork. */
void mp_threads_lock(void) MP_HIDDEN;
void mp_threads_unlock(void) MP_HIDDEN;
/* In a forked child: the calling thread is the only one left. */
void mp_threads_forked(void) MP_HIDDEN;
/* Every thread's state: quiescing (detach) waits for their rings' busy flags. */
struct mp_tstate *mp_threads_all(void) MP_HIDDEN;

#endif
