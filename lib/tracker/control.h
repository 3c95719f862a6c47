/*
 * The control socket (control.c) through which `memprof ctl PID` starts,
 * stops and snapshots captures of a running program, without ptrace.
 */
#ifndef MEMPROF_LIB_TRACKER_CONTROL_H
#define MEMPROF_LIB_TRACKER_CONTROL_H

#include "lib/tracker/base.h"

/*
 * Listen on /tmp/memprof-UID/ctl.PID (unless MEMPROF_CONTROL=0) with a
 * thread that answers; under memprof run, the thread waits until a request
 * does (mp_control_wake()). 0, or -1 (said on standard error when the directory
 * is not safe to use).
 */
int mp_control_start(void) MP_HIDDEN;
/*
 * Start the thread of a socket that listens without one (see ring.h's
 * ctl_state): from a ring's quarter when the reader asked, from the reader
 * through memprof_control_wake(), or when the session that let it wait
 * ends. 0, or -1 when the thread could not be made.
 */
int mp_control_wake(void) MP_HIDDEN;
/* The same, for the collector to call in the process (lib/process/collect-wake.c); arg unused. */
long memprof_control_wake(const char *arg) MP_EXPORT;
/* Stop listening and remove the socket (at exit). */
void mp_control_end(void) MP_HIDDEN;
/*
 * The same while the program lives on (memprof detach): the answering
 * thread finishes its request and ends (joined) first.
 */
void mp_control_stop(void) MP_HIDDEN;
/*
 * While the program changes its credentials (creds.c): the answering thread
 * finishes its request and ends (joined); mp_control_unpark() starts it again.
 */
void mp_control_park(void) MP_HIDDEN;
void mp_control_unpark(void) MP_HIDDEN;
/* In a forked child: the parent's socket is not ours (a followed child makes its own). */
void mp_control_forked(void) MP_HIDDEN;

#endif
