/*
 * The program's signal handlers, entered through the tracker's trampoline
 * (signals.c), which defers a signal that comes while its thread is in a
 * critical section of the tracker's (base.h, mp_cs).
 */
#ifndef MEMPROF_LIB_TRACKER_SIGNALS_H
#define MEMPROF_LIB_TRACKER_SIGNALS_H

#include "lib/tracker/base.h"

/*
 * From now on every handler goes through the trampoline: those installed
 * so far (before the tracker started, or before attach) and those the
 * program installs later through the hooks (sigaction, signal and its
 * variants, sigset). Once per process; a forked child keeps them.
 */
void mp_signals_wrap(void) MP_HIDDEN;
/*
 * No more: the program's handlers given back to the kernel as they are
 * (an attached tracker's hooks are gone; a later attach wraps them again).
 */
void mp_signals_unwrap(void) MP_HIDDEN;

#endif
