/*
 * The tracker's module map (modules.c): MODULE and MODULE_UNLOAD records for
 * the shared objects loaded and unloaded, found with dl_iterate_phdr.
 */
#ifndef MEMPROF_LIB_TRACKER_MODULES_H
#define MEMPROF_LIB_TRACKER_MODULES_H

#include <stddef.h>
#include <stdint.h>

#include "lib/tracker/base.h"

/*
 * Emit MODULE/MODULE_UNLOAD records for changes since the last call; 1 when
 * modules were added. When it returns the map is current (another thread's
 * refresh is waited for; no deadlock is possible, modules.c says why),
 * unless a fork was under way: then the map is left dirty for the next event.
 */
int mp_modules_refresh(void) MP_HIDDEN;
/*
 * Around the program's dlclose (hooks.c). From begin until the map knows of
 * the unload, every event of every thread refreshes first (mp_modules_dirty()),
 * so that none takes a node of code unmapped by then for the code of a
 * library loaded in its place; end refreshes (MODULE_UNLOAD, the unloaded
 * code's nodes forgotten, the walkers' caches reset) before the caller goes on.
 */
void mp_modules_unload_begin(void) MP_HIDDEN;
void mp_modules_unload_end(void) MP_HIDDEN;
/*
 * Told, during a refresh, the code ranges [gone[i][0], gone[i][1]) of the
 * modules unloaded (the trace tree's mp_stacks_forget_code(), set up by
 * lifecycle.c: the tree's code asks this map about ips, not the other way).
 */
extern void (*mp_modules_unloaded)(const uint64_t (*gone)[2], size_t n) MP_HIDDEN;
/* Note that the module map may have changed; the next event refreshes it. */
void mp_modules_mark_dirty(void) MP_HIDDEN;
int mp_modules_dirty(void) MP_HIDDEN;
/* True when ip falls inside a module known to the stream. */
int mp_modules_contains(uint64_t ip) MP_HIDDEN;
/* Held across fork: no refresh is half-done in the child, nor inside the loader's lock. */
void mp_modules_lock(void) MP_HIDDEN;
void mp_modules_unlock(void) MP_HIDDEN;
void mp_modules_reinit_lock(void) MP_HIDDEN;
/* Forget every module (a new stream starts). */
void mp_modules_reset(void) MP_HIDDEN;

#endif
