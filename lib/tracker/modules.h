/*
 * The tracker's module map (modules.c): MODULE and MODULE_UNLOAD records for
 * the shared objects loaded and unloaded, found with dl_iterate_phdr.
 */
#ifndef MEMPROF_LIB_TRACKER_MODULES_H
#define MEMPROF_LIB_TRACKER_MODULES_H

#include <stdint.h>

#include "lib/tracker/base.h"

/*
 * Emit MODULE/MODULE_UNLOAD records for changes since the last call; 1 when
 * modules were added. With wait 0 it returns at once when another thread is
 * refreshing; with 1 it waits for it (50 ms at most), then looks again.
 */
int mp_modules_refresh(int wait) MP_HIDDEN;
/* Note that the module map may have changed; the next event refreshes it. */
void mp_modules_mark_dirty(void) MP_HIDDEN;
int mp_modules_dirty(void) MP_HIDDEN;
/* True when ip falls inside a module known to the stream. */
int mp_modules_contains(uint64_t ip) MP_HIDDEN;
/* The module lock, held across fork so no refresh is half-done in the child. */
void mp_modules_lock(void) MP_HIDDEN;
void mp_modules_unlock(void) MP_HIDDEN;
void mp_modules_reinit_lock(void) MP_HIDDEN;
/* Forget every module (a new stream starts). */
void mp_modules_reset(void) MP_HIDDEN;

#endif
