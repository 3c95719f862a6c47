/*
 * The tracker's configuration, read from the MEMPROF_* environment at
 * start-up (or given by memprof attach), and the environment the program's
 * children get.
 */
#ifndef MEMPROF_LIB_TRACKER_CONFIG_H
#define MEMPROF_LIB_TRACKER_CONFIG_H

#include <sys/un.h>

#include "lib/tracker/base.h"

#define MP_MAX_DEPTH_LIMIT 1024

struct mp_config {
	int follow_fork, force, direct, libunwind_only;
	int clock;               /* MEMPROF_CLOCK: how records are ordered (enum below) */
	unsigned interval_ms, max_depth;
	unsigned ring_kb;        /* each thread's ring (MEMPROF_RING_KB) */
	int paused;              /* MEMPROF_PAUSED=1: no capture until memprof ctl PID start */
	int control;             /* the control socket (MEMPROF_CONTROL=0: none) */
	char socket_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char output[4096];
};
extern struct mp_config mp_cfg MP_HIDDEN;
enum { MP_CFG_CLOCK_AUTO = 0, MP_CFG_CLOCK_COUNTER, MP_CFG_CLOCK_TSC };

/*
 * Read the environment into mp_cfg: 0 when it asks for tracking (a collector's
 * socket, or a file to write), -1 when it does not or a setting is unusable.
 */
int mp_config_read(void) MP_HIDDEN;
/* Remove our own library from LD_PRELOAD and our variables, unless children are followed. */
void mp_config_clean_environment(void) MP_HIDDEN;

#endif
