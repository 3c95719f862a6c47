/* Counter keys, the writer's side (keys.c; lib/transport/ring.h, enum mp_keys). */
#ifndef MEMPROF_LIB_TRACKER_KEYS_H
#define MEMPROF_LIB_TRACKER_KEYS_H

#include <stdint.h>

#include "lib/tracker/base.h"
#include "lib/transport/ring.h"

/*
 * A program thread is about to write its first event into w (a new ring of
 * the stream): it may own the counter.
 */
void mp_keys_declare(struct mp_wring *w) MP_HIDDEN;
/* The key of w's record, when mp_wring_begin() said the slow way: a change of owner, or sharing. */
uint64_t mp_keys_slow(struct mp_wring *w) MP_HIDDEN;

/*
 * The owner's key (mp_shm_key_owner()), a critical section (base.h): its
 * load and store of the counter must not be split by a signal handler that
 * waits (or by one that never returns). Another writer takes ownership from
 * a writer held that long, and keys on; the held one's store, when it came
 * back, would put the counter back under keys already given, and the
 * collector would merge records out of order: a node used before its
 * definition, or a full ring waiting for keys no one takes (both seen in
 * tests/e2e/run-handlers.sh). Deferred, the handler runs after the store,
 * with the record in flight, which the others are merged past.
 */
static inline uint64_t mp_keys_owner(struct mp_wring *w)
{
	uint64_t k;
	mp_cs_enter();
	k = mp_shm_key_owner(w->h, w->index);
	mp_cs_leave();
	return k;
}

/*
 * Start a record: the busy flag, then the key. The flag is set before the
 * key is read so that a reader that sees it clear knows any record not yet
 * published will have a newer key (mp_merge_round()). 0 when the writer
 * must take the key the slow way (enum mp_keys, mp_keys_slow()), its busy
 * flag set.
 */
static inline uint64_t mp_wring_begin(struct mp_wring *w, int clock)
{
	__atomic_store_n(&w->ctl->busy, 1, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (__builtin_expect(clock == MP_CLOCK_TSC, 1))
		return mp_tsc();
	if (__builtin_expect(w->keys == MP_KEYS_SOLO, 1))
		return mp_keys_owner(w);
	if (w->keys == MP_KEYS_SHARED)
		return mp_shm_key_shared(w->h);
	return 0;
}

#endif
