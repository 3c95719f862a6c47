/*
 * Run functions inside a live process with ptrace: seize its threads, pick one at a
 * safe point, call functions on it, then restore it exactly and let everything go.
 * x86_64 only; on other machines every call fails with "not supported on <arch>".
 */
#ifndef MEMPROF_LIB_PROCESS_REMOTE_H
#define MEMPROF_LIB_PROCESS_REMOTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/util/strbuf.h"

/* An address range [start, end) in the target. */
struct mp_remote_range {
	uint64_t start, end;
};

struct mp_remote_thread;
struct mp_remote_signal;

struct mp_remote {
	pid_t pid;
	pid_t tid;           /* the thread running our calls; 0 until mp_remote_stop_safe() succeeds */
	uint64_t deadline;   /* CLOCK_MONOTONIC nanoseconds: every wait gives up after it */
	unsigned timeout_ms; /* what the deadline stands for, in messages */
	unsigned rounds;     /* safe-point search rounds taken */
	bool gone;           /* the process exited (or exec'd) while we had it */
	bool call_pending;   /* a call was abandoned (crash, timeout): registers still must be restored */
	/*
	 * The process exited and, its parent being us (memprof run waking its
	 * child), its wait status was collected here: the caller passes it on.
	 */
	bool reaped;
	int reaped_status;

	/* private */
	struct mp_remote_thread *threads;
	size_t nr_threads, alloc_threads;
	struct mp_remote_signal *sigs; /* signals held back, re-sent when the thread is released */
	size_t nr_sigs, alloc_sigs;
	int memfd;
	void *saved;                   /* the chosen thread's registers (struct user_regs_struct) */
	void *xstate;                  /* its FPU/vector state (NT_X86_XSTATE, or user_fpregs_struct) */
	size_t xstate_len;
	int xstate_kind;
};

/* The monotonic clock in nanoseconds, for deadlines. */
uint64_t mp_remote_now(void);

/*
 * Prepare r for process pid, to be done by deadline, which is timeout_ms after the start
 * of the whole operation; nothing is touched until mp_remote_stop_safe().
 */
void mp_remote_init(struct mp_remote *r, pid_t pid, uint64_t deadline, unsigned timeout_ms);

/*
 * Seize every thread (PTRACE_SEIZE, no options), interrupt them all and look for a thread
 * at a safe point: blocked in a whitelisted syscall (read, poll, nanosleep, accept, wait4,
 * epoll_wait, ...: never futex) with its pc outside `loader`, or running code outside every
 * range in `unsafe` (the C library, the dynamic loader, allocators, the vdso). When none
 * is, all threads run for a fraction of a millisecond and the search repeats until the
 * deadline. On success r->tid is stopped with its state saved, and every other thread has
 * been released (see remote.c for why). Returns 0, or -1 with the reason in err; then
 * r->gone tells whether the process has exited. Call mp_remote_release() in every case.
 */
int mp_remote_stop_safe(struct mp_remote *r, const struct mp_remote_range *unsafe, size_t nr_unsafe,
			const struct mp_remote_range *loader, size_t nr_loader, struct strbuf *err);

/*
 * Call fn(args[0], ..., args[nargs-1]) (at most 6 integer arguments) on r->tid and store
 * its integer return value in *ret. The call runs on the stack below stack_top, or, when
 * stack_top is 0, below the red zone of the thread's own stack (enough for small leaf
 * functions such as mmap). what names the function in messages. Signals other than faults
 * of the call itself are held back and re-sent when the thread is released. Returns 0, or -1
 * with the reason in err (the process exited, the call crashed, or the deadline passed).
 */
int mp_remote_call(struct mp_remote *r, const char *what, uint64_t fn, const uint64_t *args,
		   unsigned nargs, uint64_t stack_top, uint64_t *ret, struct strbuf *err);

/* Copy memory out of / into the stopped process (/proc/PID/mem). Return 0 or -1 with err. */
int mp_remote_read(struct mp_remote *r, uint64_t addr, void *buf, size_t len, struct strbuf *err);
int mp_remote_write(struct mp_remote *r, uint64_t addr, const void *buf, size_t len, struct strbuf *err);
/* Read a NUL-terminated string of at most max bytes into sb. */
int mp_remote_read_string(struct mp_remote *r, uint64_t addr, size_t max, struct strbuf *sb, struct strbuf *err);

/*
 * Restore the chosen thread's registers and FPU state exactly (an interrupted syscall
 * restarts), detach from every thread and re-send held-back signals. Safe at any point,
 * also after errors, and more than once.
 */
void mp_remote_release(struct mp_remote *r);

#endif
