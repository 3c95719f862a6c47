/* The functions libmemprof.so interposes (hooks.c), by name, for GOT patching. */
#ifndef MEMPROF_LIB_TRACKER_HOOKS_H
#define MEMPROF_LIB_TRACKER_HOOKS_H

#include "lib/tracker/base.h"

struct mp_hook {
	const char *name;
	void *fn;
};
/* Every hook; ends with a NULL name. */
extern const struct mp_hook mp_hooks[] MP_HIDDEN;
/* The real function a hook wraps, by name (what a GOT slot bound to the C library holds). */
void *mp_real_for(const char *name) MP_HIDDEN;

#endif
