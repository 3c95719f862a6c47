/* GOT patching (got.c): the hooks installed in, and removed from, every loaded module. */
#ifndef MEMPROF_LIB_TRACKER_GOT_H
#define MEMPROF_LIB_TRACKER_GOT_H

#include "lib/tracker/base.h"

/*
 * Point the GOT slots of every loaded module (but ours and the loader's) at
 * the hooks; modules already patched are left as they are. Needs
 * mp_find_self() first.
 */
int mp_got_patch(void) MP_HIDDEN;
/* Put every patched slot back. */
void mp_got_unpatch(void) MP_HIDDEN;

#endif
