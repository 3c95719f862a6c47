/*
 * Tracking a process that ran untracked until now (attach.c): memprof
 * attach's entry point, and what the in-process API (api.c) shares with it.
 */
#ifndef MEMPROF_LIB_TRACKER_ATTACH_H
#define MEMPROF_LIB_TRACKER_ATTACH_H

#include "lib/tracker/base.h"

/*
 * The ATTACH record, first in a stream: what the C library says its heap
 * holds before any event of ours (the baseline blocks allocated before
 * tracking began come from). A session's prelude (mp_session_start()).
 */
void mp_attach_record(void) MP_HIDDEN;

#endif
