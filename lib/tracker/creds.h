/*
 * The set*id family and setgroups (creds.c): the tracker's threads leave
 * while the program changes its credentials.
 */
#ifndef MEMPROF_LIB_TRACKER_CREDS_H
#define MEMPROF_LIB_TRACKER_CREDS_H

#include <sys/types.h>
#include <grp.h>
#include <unistd.h>

#include "lib/tracker/base.h"

/*
 * In a forked child: the lock a set*id call holds while the tracker's threads
 * are away is free (the thread that held it in the parent is not the
 * child's; a set*id call in the child waited for it forever).
 */
void mp_creds_forked(void) MP_HIDDEN;

/* Hidden aliases of the hooks, for the GOT patching table (hooks.c). */
extern __typeof__(setuid) mp_hook_setuid MP_HIDDEN;
extern __typeof__(setgid) mp_hook_setgid MP_HIDDEN;
extern __typeof__(seteuid) mp_hook_seteuid MP_HIDDEN;
extern __typeof__(setegid) mp_hook_setegid MP_HIDDEN;
extern __typeof__(setreuid) mp_hook_setreuid MP_HIDDEN;
extern __typeof__(setregid) mp_hook_setregid MP_HIDDEN;
extern __typeof__(setresuid) mp_hook_setresuid MP_HIDDEN;
extern __typeof__(setresgid) mp_hook_setresgid MP_HIDDEN;
extern __typeof__(setgroups) mp_hook_setgroups MP_HIDDEN;

#endif
