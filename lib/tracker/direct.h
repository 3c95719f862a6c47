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
 * Create the capture named by MEMPROF_OUTPUT (after mp_stream_create()), the
 * mp_st.capture_no'th of the process, and write its preamble and header. 0,
 * or -1 (said on standard error).
 */
int mp_direct_open(unsigned mode, unsigned flags, pid_t forked_from) MP_HIDDEN;
/* Merge what the rings hold; final merges everything published (no thread is writing). */
void mp_direct_drain(int final) MP_HIDDEN;
/* The timer's pause of ns nanoseconds, cut short when a ring passes half full. */
void mp_direct_wait(uint64_t ns) MP_HIDDEN;
/* End that wait now (the timer is asked to stop). */
void mp_direct_wake(void) MP_HIDDEN;
/*
 * The process is ending (the exit handler, _exit): merge, then the trailer;
 * later events are merged as they come.
 */
void mp_direct_finish(void) MP_HIDDEN;
/*
 * Tracking stops (memprof ctl PID stop; every writer stopped already): the
 * rest merged, a trailer, the capture complete.
 */
void mp_direct_stop(void) MP_HIDDEN;
/*
 * A snapshot: the capture so far, with a trailer, copied to dest, or when
 * dest is NULL to the capture's path with .snap.<number> (written to path).
 * 0 or -errno (-EEXIST: dest exists, and the capture is not one that may
 * replace its file).
 */
int mp_direct_snapshot(unsigned number, const char *dest, char *path, size_t pathlen) MP_HIDDEN;
/* The path of the capture being written (empty before the first). */
const char *mp_direct_path(void) MP_HIDDEN;
/*
 * The next captures go to path exactly (memprof_start: no %p or %n, no
 * number added; a followed child's gets .<pid>), replaced if it exists when
 * overwrite; NULL: back to MEMPROF_OUTPUT's pattern. 0 or -ENAMETOOLONG.
 */
int mp_direct_set_path(const char *path, int overwrite) MP_HIDDEN;
/* Why the last capture could not be created (an errno value), 0 when it was. */
int mp_direct_open_error(void) MP_HIDDEN;
/* The merge's lock, held across fork. */
void mp_direct_lock(void) MP_HIDDEN;
void mp_direct_unlock(void) MP_HIDDEN;
void mp_direct_forked(void) MP_HIDDEN;

#endif
