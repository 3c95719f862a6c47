/* Load a shared library into a running process and call a function in it (memprof attach). */
#ifndef MEMPROF_LIB_PROCESS_INJECT_H
#define MEMPROF_LIB_PROCESS_INJECT_H

#include <stdbool.h>
#include <sys/types.h>

#include "lib/util/strbuf.h"

enum mp_inject_method {
	MP_INJECT_PTRACE, /* our own injector (lib/process/remote.c), waits for a safe point; x86_64 */
	MP_INJECT_GDB,    /* drives `gdb -batch -p PID`, stopping at the allocator's entry */
};

struct mp_inject_opts {
	pid_t pid;
	const char *library;   /* absolute path of the .so to load in the target (in its mount namespace) */
	const char *entry;     /* exported function in it: long entry(const char *arg) */
	const char *arg;       /* string passed to entry; it lives in a scratch area freed when entry
				  returns, so entry must copy what it keeps */
	unsigned timeout_ms;   /* for the whole injection, e.g. 5000; 0 means 5000 */
	enum mp_inject_method method;
	bool verbose;          /* gdb: keep its output in the error text */
	/*
	 * Out, may be NULL: when the target, a child of ours, exited during the
	 * call and its wait status was collected here (the ptrace method), that
	 * status, which then no waitpid() will return again; else left as it was.
	 */
	int *reaped;
};

/*
 * Load opts->library into process opts->pid with dlopen(RTLD_NOW) (the same handle again
 * when it is already loaded) and call opts->entry(opts->arg) on one of its threads, at a
 * point where that thread is neither inside the allocator nor the dynamic loader.
 * Returns 0 and entry's return value in *result, or -1 with a one-line reason and a fix
 * in err. The target is never left stopped, traced, or with changed registers, on success
 * or failure; signals that arrive meanwhile are delivered (some after the injection).
 * Call from one thread only (ptrace ties the tracee to the tracing thread).
 */
int mp_inject(const struct mp_inject_opts *opts, long *result, struct strbuf *err);

/*
 * Explain why attaching to pid cannot work, without touching it: no such process, a
 * zombie, a kernel thread, a stopped process, memprof itself, another user's process
 * without CAP_SYS_PTRACE, not dumpable, Yama ptrace_scope 1 (not a descendant), 2 or 3,
 * already traced (naming the tracer's pid and command), statically linked (no dynamic
 * loader or libc in its maps), a 32-bit or other-machine program, or a machine memprof
 * cannot inject on. Returns 0, or -1 with the message in err. mp_inject() calls it first.
 */
int mp_inject_check(pid_t pid, struct strbuf *err);

#endif
