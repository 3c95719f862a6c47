/*
 * The tracker's own file descriptors (fds.c): the collector's socket or the
 * capture, the rings' memfd, /proc/self/statm, the control socket and its
 * eventfd. A program that closes what it inherited (a daemon's close of every
 * descriptor above 2, closefrom(), close_range()) would cut the tracker off:
 * the close hooks leave ours open and tell the program they closed them.
 * Only a raw system call gets past them, so before the tracker reads or
 * writes through one of its descriptors it checks that the number still names
 * its file (the program may have opened one of its own there since).
 */
#ifndef MEMPROF_LIB_TRACKER_FDS_H
#define MEMPROF_LIB_TRACKER_FDS_H

#include "lib/tracker/base.h"

/*
 * fd is the tracker's from now on (its file is remembered), moved out of the
 * program's way: to a number from MP_FD_SPAN below the descriptor limit (or
 * below MP_FD_TOP) up. Never 0 to 2, which a program started with them
 * closed would open again as its standard streams, and not the numbers
 * programs and scripts pick for dup2() (3 to 9, 10 up for a shell's own, 100
 * or 200 for a lock file). Returns its number now (fd itself when it cannot
 * move), or -1 for -1.
 */
#define MP_FD_TOP 1024
#define MP_FD_SPAN 64
int mp_fd_own(int fd) MP_HIDDEN;
/*
 * The same for the descriptor *var, whose number the tracker keeps in *var:
 * when the program puts a descriptor of its own at that number (dup2, dup3),
 * the tracker's moves to another, and *var says which.
 */
void mp_fd_own_at(int *var) MP_HIDDEN;
/*
 * Run init, a library's first call that opens descriptors it keeps (libunwind
 * opens a pipe), with every free number below the tracker's base taken for the
 * while: what it opens lands up there, out of the program's way, and is kept
 * open like the tracker's own.
 */
void mp_fd_open_high(void (*init)(void)) MP_HIDDEN;
/* Close one of the tracker's own (past the close hook); -1 is ignored. */
void mp_fd_close(int fd) MP_HIDDEN;
/* Forget fd without closing it: the number is no longer the tracker's. */
void mp_fd_forget(int fd) MP_HIDDEN;
/* Whether fd is one of the tracker's and still names the file it had. */
int mp_fd_intact(int fd) MP_HIDDEN;

#endif
