/*
 * A process's ids as /proc tells them: its user, and its pid (or a thread's
 * id) in its own pid namespace, which differs from this process's view when
 * it runs in a container or a sandbox (unshare --pid).
 */
#ifndef MEMPROF_LIB_PROCESS_PROCIDS_H
#define MEMPROF_LIB_PROCESS_PROCIDS_H

#include <sys/types.h>

/*
 * The effective uid of process pid and its innermost pid (its own pid
 * namespace's; pid itself on a kernel without NSpid). 0, or -1 when
 * /proc/PID/status cannot be read.
 */
int mp_proc_ids(pid_t pid, unsigned long *uid, long *nspid);
/*
 * The id, in this process's pid namespace, of the thread of process pid
 * that its own pid namespace numbers nstid: 0 when it has no such thread
 * (or pid is gone).
 */
pid_t mp_proc_thread_here(pid_t pid, long nstid);
/* The state letter of process pid in /proc/PID/stat ('R', 'S', 'Z'...), 0 when it is gone. */
char mp_proc_state(pid_t pid);

#endif
