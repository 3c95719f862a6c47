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

#include "lib/tracker/base.h"

#define MP_OWN_FRAMES 16 /* room for the tracker's own frames at the top of a stack */

struct mp_unwinder;

struct mp_tstate {
	struct mp_tstate *next;       /* all live threads, under the stream's lock */
	struct mp_tstate *next_dying; /* threads whose key destructor ran */
	uint32_t index;            /* thread index in the stream of generation gen */
	uint32_t gen;              /* 0: not declared in the current stream */
	uint32_t cache_gen;        /* generation of the cached stack's nodes */
	uint32_t walk_gen;         /* generation of the nodes kept in the walker's frames */
	int depth;                 /* cached stack depth */
	int dying;
	pid_t tid;
	unsigned long pthread;
	char name[16];
	uint64_t *ips;             /* cached stack, root first */
	uint32_t *nodes;           /* its trace nodes */
	uint64_t *scratch;         /* the stack being recorded, root first */
	void **raw;                /* unwinder output, innermost first */
	struct mp_unwinder *uw;    /* our stack walker (NULL: libunwind only) */
};

extern __thread struct mp_tstate *mp_tls_ts MP_IE_TLS MP_HIDDEN;
struct mp_tstate *mp_thread_get_slow(void) MP_HIDDEN;
/* The calling thread's state, made on its first event; NULL when memory ran out. */
static inline struct mp_tstate *mp_thread_get(void)
{
	struct mp_tstate *ts = mp_tls_ts;
	return likely(ts != NULL) ? ts : mp_thread_get_slow();
}
/* Declare ts in the current stream with a THREAD record (under the stream's lock); 0 or -1. */
int mp_thread_declare(struct mp_tstate *ts) MP_HIDDEN;
/* The thread identified by pthread was renamed. */
void mp_record_thread_name(unsigned long pthread, const char *name) MP_HIDDEN;
/* Reclaim the state of threads that are gone (the timer, under the stream's lock). */
void mp_threads_reap(void) MP_HIDDEN;

/* Once, before the first thread state: the key whose destructor notes a thread's end. 0 or -1. */
int mp_threads_setup(void) MP_HIDDEN;
/* A new stream numbers its threads afresh (under the stream's lock). */
void mp_threads_reset(void) MP_HIDDEN;
/* In a forked child: the calling thread is the only one left. */
void mp_threads_forked(void) MP_HIDDEN;

#endif
