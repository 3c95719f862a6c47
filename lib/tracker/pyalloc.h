/*
 * Tracing the Python allocators in a running interpreter (pyalloc.c), for
 * memprof_start's trace_python_allocators: what memprof run does with
 * PYTHONMALLOC=malloc, done from inside.
 */
#ifndef MEMPROF_LIB_TRACKER_PYALLOC_H
#define MEMPROF_LIB_TRACKER_PYALLOC_H

#include "lib/tracker/base.h"

/*
 * Whether the allocators can be wrapped now: 0, -ENOTSUP (no CPython in
 * the process, or one whose allocator is not pymalloc or malloc: the debug
 * hooks), -EPERM (the calling thread does not hold the GIL).
 */
int mp_pyalloc_check(void) MP_HIDDEN;
/*
 * Wrap them (after mp_pyalloc_check()): from now on each object of the
 * memory and object domains is a malloc of its own, recorded by the hooks
 * with its stack; blocks pymalloc made before go back to it. 0 or -1.
 */
int mp_pyalloc_install(void) MP_HIDDEN;
/*
 * Put pymalloc back, if the calling thread holds the GIL (else the wrappers
 * stay: they go on working, only slower than pymalloc).
 */
void mp_pyalloc_remove(void) MP_HIDDEN;

#endif
