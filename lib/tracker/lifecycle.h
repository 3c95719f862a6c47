/*
 * The tracker's life in the process (lifecycle.c): start-up, the timer
 * thread, and what exit, exec, abort and fork mean for the stream.
 */
#ifndef MEMPROF_LIB_TRACKER_LIFECYCLE_H
#define MEMPROF_LIB_TRACKER_LIFECYCLE_H

#include <sys/types.h>

#include "lib/tracker/base.h"

/* Resolve the real functions and start recording if the environment asks for it. */
void mp_init_stage1(void) MP_HIDDEN;
/* A followed child's first allocation or free (MP_STATE_CHILD): its stream, timer and control now. */
void mp_child_setup(void) MP_HIDDEN;
/* What every way of tracking needs, done once: buffers, keys, the stack walker. 0 or -1. */
int mp_setup(void) MP_HIDDEN;
/* Whether the environment asked for tracking (a destination: a collector, or MEMPROF_OUTPUT). */
int mp_configured(void) MP_HIDDEN;
/* The fork and exit handlers, registered once. */
void mp_register_handlers(void) MP_HIDDEN;

/* The process is about to exit with status (exit, _exit when final): note it and flush. */
void mp_record_exit(int status, int final) MP_HIDDEN;
/* Write everything buffered now (before exec, abort). */
void mp_flush_now(void) MP_HIDDEN;
/* The process forked child. */
void mp_record_fork(pid_t child) MP_HIDDEN;

#endif
