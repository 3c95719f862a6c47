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

#endif
