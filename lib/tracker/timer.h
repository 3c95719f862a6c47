/*
 * The tracker's timer thread (timer.c): every --memory-interval-ms a sample
 * (TICK), the module map refreshed, and in direct mode the rings merged.
 */
#ifndef MEMPROF_LIB_TRACKER_TIMER_H
#define MEMPROF_LIB_TRACKER_TIMER_H

#include "lib/tracker/base.h"

/* What a way of tracking adds to the timer's ticks (attach); every function is required. */
struct mp_timer_ops {
	int (*stop_requested)(void); /* checked first at each tick: nonzero ends tracking */
	void (*modules_added)(void); /* the module map found new modules */
	void (*stop)(void);          /* tracking ends: asked for, or the stream ended */
};
/* Start the timer thread, with ops or NULL; it ends when tracking stops. */
void mp_timer_start(const struct mp_timer_ops *ops) MP_HIDDEN;
/* Whether the timer thread of the last stream still runs. */
int mp_timer_running(void) MP_HIDDEN;
/*
 * While the program changes its credentials (creds.c): the timer thread
 * ends and is joined, and none starts until mp_timer_unpark(), which starts
 * it again if tracking is on.
 */
void mp_timer_park(void) MP_HIDDEN;
void mp_timer_unpark(void) MP_HIDDEN;
/* In a forked child: no timer thread runs. */
void mp_timer_forked(void) MP_HIDDEN;

#endif
