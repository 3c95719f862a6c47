/*
 * Starting and stopping captures in the process (api.c): memprof_start()
 * and memprof_stop() of include/memprof.h, and memprof ctl's start and stop
 * (control.c), which take the same way so that a tracker loaded with
 * dlopen puts its hooks in and out whoever asks.
 */
#ifndef MEMPROF_LIB_TRACKER_API_H
#define MEMPROF_LIB_TRACKER_API_H

#include "lib/tracker/base.h"
#include "lib/tracker/config.h"

enum {
	MP_API_OVERWRITE = 1 << 0, /* path may replace a file */
	MP_API_AGGREGATE = 1 << 1, /* an aggregated capture (a collector's) */
	MP_API_PYALLOC = 1 << 2,   /* trace the Python allocators */
	MP_API_CONTROL = 1 << 3,   /* memprof ctl's start: its errors said on standard error */
};
/*
 * Start a capture into path (NULL: where the configuration says), with the
 * settings set(c, arg) makes of the current ones (set NULL: as they are),
 * for this capture only. 0 or -errno, as memprof_start() (memprof.h).
 */
int mp_api_start(const char *path, unsigned flags, void (*set)(struct mp_config *c, const void *arg),
		 const void *arg) MP_HIDDEN;
/* Stop the capture recording: 0 or -errno, as memprof_stop(). */
int mp_api_stop(void) MP_HIDDEN;
/* The file of the last capture stopped by either, "" when the tracker did not know it. */
const char *mp_api_last_capture(void) MP_HIDDEN;

#endif
