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
/* What every way of tracking needs, done once: buffers, keys, the stack walker. 0 or -1. */
int mp_setup(void) MP_HIDDEN;
/* A new stream: its own trace tree and modules; call before mp_open_stream(). */
void mp_new_stream_state(void) MP_HIDDEN;
/*
 * Open the stream mp_cfg asks for (the collector's, or a capture of our
 * own), with a first sample. 0, or -1 (said on standard error).
 */
int mp_open_stream(unsigned mode, unsigned flags, pid_t forked_from) MP_HIDDEN;
/* The fork and exit handlers, registered once. */
void mp_register_handlers(void) MP_HIDDEN;

/* What a way of tracking adds to the timer's ticks (attach); every function is required. */
struct mp_timer_ops {
	int (*stop_requested)(void); /* checked first at each tick: nonzero ends tracking */
	void (*modules_added)(void); /* the module map found new modules */
	void (*stop)(void);          /* tracking ends: asked for, or the stream ended */
};
/* Start the timer thread, with ops or NULL. */
void mp_timer_start(const struct mp_timer_ops *ops) MP_HIDDEN;
/* Whether the timer thread of the last stream still runs. */
int mp_timer_running(void) MP_HIDDEN;

/* The process is about to exit with status (exit, _exit when final): note it and flush. */
void mp_record_exit(int status, int final) MP_HIDDEN;
/* Write everything buffered now (before exec, abort). */
void mp_flush_now(void) MP_HIDDEN;
/* The process forked child. */
void mp_record_fork(pid_t child) MP_HIDDEN;

#endif
