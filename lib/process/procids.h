/*
 * A process's ids as /proc tells them: its user, and its pid (or a thread's
 * id) in its own pid namespace, which differs from this process's view when
 * it runs in a container or a sandbox (unshare --pid); and its state.
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
/*
 * From /proc/PID/stat (tid 0) or /proc/PID/task/TID/stat: the state letter
 * ('R', 'S', 'Z'...) in *state and the start time, in clock ticks after
 * boot, in *start_ticks (either may be NULL). 0, or -1 when it cannot be
 * read (gone).
 */
int mp_proc_stat(pid_t pid, pid_t tid, char *state, unsigned long long *start_ticks);

#endif
