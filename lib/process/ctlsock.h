/*
 * A tracker's control socket (lib/tracker/control.c) as the client side sees
 * it: its path, and whether one found there is left from a process that
 * ended without removing it (a crash, SIGKILL, _exit).
 */
#ifndef MEMPROF_LIB_PROCESS_CTLSOCK_H
#define MEMPROF_LIB_PROCESS_CTLSOCK_H

#include <stddef.h>
#include <sys/types.h>

#include "lib/util/strbuf.h"

/* /tmp/memprof-UID/ctl.NSPID: nspid is the process's pid in its own pid namespace. */
void mp_ctl_socket_path(char *buf, size_t len, unsigned long uid, long nspid);
/*
 * Whether the directory of user uid's control sockets (/tmp/memprof-UID) is
 * one a tracker of that user cannot use (it must be the user's, mode
 * 0700): 1 with what is wrong in why ("'/tmp/memprof-4242' belongs to user
 * 0"), else 0. A tracker that found it so listens nowhere.
 */
int mp_ctl_dir_unusable(unsigned long uid, struct strbuf *why);
/*
 * Whether the socket at path is older than process pid: left by an earlier
 * process of the same pid (a tracker killed before it could remove it), as
 * happens when pids come round again (containers).
 */
int mp_ctl_socket_older(const char *path, pid_t pid);
/*
 * Process pid (of this pid namespace, user uid), whose pidfd is readable
 * once it has exited, is ending: when it has left its control socket (a
 * crash, SIGKILL, _exit), wait a moment for it to be gone and remove the
 * socket, unless the pid is already another live process's.
 */
void mp_ctl_forget(pid_t pid, unsigned long uid, int pidfd);

#endif
