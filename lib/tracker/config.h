/*
 * The tracker's configuration (struct mp_config, lib/transport/settings.h),
 * read from the MEMPROF_* environment at start-up (or given by memprof
 * attach, in the same words), and the environment the program's children get.
 */
#ifndef MEMPROF_LIB_TRACKER_CONFIG_H
#define MEMPROF_LIB_TRACKER_CONFIG_H

#include "lib/tracker/base.h"
#include "lib/transport/settings.h"

extern struct mp_config mp_cfg MP_HIDDEN;

/*
 * Read the environment into mp_cfg: 0 when it asks for tracking (a collector's
 * socket, or a file to write), -1 when it does not or a setting is unusable.
 */
int mp_config_read(void) MP_HIDDEN;
/* Remove our own library from LD_PRELOAD and our variables, unless children are followed. */
void mp_config_clean_environment(void) MP_HIDDEN;

#endif
