/*
 * Direct mode (direct.c): with MEMPROF_OUTPUT and no collector, the tracker
 * merges its rings into the capture file itself.
 */
#ifndef MEMPROF_LIB_TRACKER_DIRECT_H
#define MEMPROF_LIB_TRACKER_DIRECT_H

#include <stdint.h>
#include <sys/types.h>

#include "lib/tracker/base.h"

/*
 * Create the capture named by MEMPROF_OUTPUT (after mp_stream_create()) and
 * write its preamble and header. 0, or -1 (said on standard error).
 */
int mp_direct_open(unsigned mode, unsigned flags, pid_t forked_from) MP_HIDDEN;
/* Merge what the rings hold; final merges everything published (no thread is writing). */
void mp_direct_drain(int final) MP_HIDDEN;
/* The timer's pause of ns nanoseconds, cut short when a ring passes half full. */
void mp_direct_wait(uint64_t ns) MP_HIDDEN;
/*
 * The process is ending (the exit handler, _exit): merge, then the trailer;
 * later events are merged as they come.
 */
void mp_direct_finish(void) MP_HIDDEN;
/* After mp_direct_finish(): every record is merged as soon as it is published. */
extern int mp_direct_final MP_HIDDEN;
/* The merge's lock, held across fork. */
void mp_direct_lock(void) MP_HIDDEN;
void mp_direct_unlock(void) MP_HIDDEN;
void mp_direct_forked(void) MP_HIDDEN;

#endif
