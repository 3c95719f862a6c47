/*
 * Counter keys (lib/transport/ring.h, enum mp_keys): the writer's side of
 * the counter's ownership, which lets one thread at a time take keys with
 * a plain load and store.
 */
#include <config.h>

#include <linux/membarrier.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lib/tracker/keys.h"

/* Every thread of the process passes a memory barrier. */
static void barrier_all_threads(void)
{
	if (syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) != 0)
		__atomic_thread_fence(__ATOMIC_SEQ_CST); /* registered, so not expected */
}

/*
 * Wait for the owner's record in flight, if any: an owner sets its busy
 * flag, then reads the owner and sharers fields, so after a barrier of all
 * threads either it sees what we changed or we see its flag.
 */
static void wait_owner_idle(struct mp_shm_header *h, uint32_t owner)
{
	struct mp_ring_ctl *c;
	uint64_t start = 0;
	if (!owner || owner == MP_OWNER_SHARED)
		return;
	c = mp_shm_ctl(h, h, owner - 1);
	while (__atomic_load_n(&c->busy, __ATOMIC_ACQUIRE)) {
		sched_yield(); /* a record's write: no lock or wait inside */
		/*
		 * One that stays in flight this long was left by a signal handler
		 * that interrupted it (and waits, or never returns:
		 * mp_hook_abandoned()), as the collector takes it (ring.h).
		 */
		if (!start) {
			start = mp_now_ns(CLOCK_MONOTONIC);
			continue;
		}
		if (mp_ring_writer_left(mp_now_ns(CLOCK_MONOTONIC) - start, c->tid))
			break;
	}
}

/* w's writer becomes the owner (or, after too many changes, no one is). */
static void take_ownership(struct mp_wring *w)
{
	struct mp_shm_header *h = w->h;
	uint32_t owner;
	mp_lock(&h->handoff_lock);
	owner = __atomic_load_n(&h->owner, __ATOMIC_ACQUIRE);
	if (owner != MP_OWNER_SHARED && owner != w->index + 1) {
		uint32_t next = ++h->handoffs > MP_OWNER_HANDOFFS ? MP_OWNER_SHARED : w->index + 1;
		if (owner) {
			__atomic_store_n(&h->owner, 0, __ATOMIC_SEQ_CST);
			barrier_all_threads();
			wait_owner_idle(h, owner);
		}
		__atomic_store_n(&h->owner, next, __ATOMIC_SEQ_CST);
	}
	mp_unlock(&h->handoff_lock);
}

uint64_t mp_keys_slow(struct mp_wring *w)
{
	struct mp_shm_header *h = w->h;
	for (;;) {
		/* Here the busy flag is set and visible. */
		uint32_t owner = __atomic_load_n(&h->owner, __ATOMIC_ACQUIRE);
		uint64_t key;
		if (owner == MP_OWNER_SHARED) {
			/* For good: the next keys need not read the owner (a line the adds bounce). */
			if (w->keys == MP_KEYS_SOLO)
				w->keys = MP_KEYS_SHARED;
			return mp_shm_key_shared(h);
		}
		if (owner == w->index + 1)
			return mp_shm_key_shared(h); /* the owner itself, while a tracker thread shares */
		/* While waiting, no one need wait for this ring. */
		__atomic_store_n(&w->ctl->busy, 0, __ATOMIC_RELEASE);
		if (w->keys == MP_KEYS_FOREIGN) {
			/*
			 * Under the lock of a change of owner: an owner field of 0
			 * in the middle of one would leave the old owner's add in
			 * flight unwaited for.
			 */
			mp_lock(&h->handoff_lock);
			__atomic_add_fetch(&h->sharers, 1, __ATOMIC_SEQ_CST);
			barrier_all_threads();
			wait_owner_idle(h, __atomic_load_n(&h->owner, __ATOMIC_ACQUIRE));
			mp_unlock(&h->handoff_lock);
			__atomic_store_n(&w->ctl->busy, 1, __ATOMIC_RELAXED);
			key = mp_shm_key_shared(h);
			__atomic_sub_fetch(&h->sharers, 1, __ATOMIC_RELEASE);
			return key;
		}
		take_ownership(w);
		__atomic_store_n(&w->ctl->busy, 1, __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		key = mp_keys_owner(w);
		if (key)
			return key;
	}
}

void mp_keys_declare(struct mp_wring *w)
{
	if (w->keys == MP_KEYS_FOREIGN)
		w->keys = MP_KEYS_SOLO;
}
