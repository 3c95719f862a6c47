/*
 * Internal to lib/process/inject (inject.c and inject-gdb.c): what the checks, the
 * ptrace method and the gdb method share. Other modules use lib/process/inject.h.
 */
#ifndef MEMPROF_LIB_PROCESS_INJECT_PRIVATE_H
#define MEMPROF_LIB_PROCESS_INJECT_PRIVATE_H

#include <stdint.h>
#include <sys/types.h>

#include "lib/process/inject.h"
#include "lib/process/procmaps.h"
#include "lib/util/strbuf.h"

#define MS_NS 1000000ull

/* What /proc/PID/status says about a process. */
struct proc_status {
	char name[64];
	char state;
	pid_t ppid, tracer;
	unsigned long uid[4], gid[4]; /* real, effective, saved, filesystem */
};

/* Read /proc/PID/status into *st (zeroed first); 0, or -1 when it cannot be read. */
int mp_inject_read_status(pid_t pid, struct proc_status *st);

/* The functions we call in the target: their addresses there, 0 when it has none. */
struct target_fns {
	uint64_t dlopen, dlerror, dlsym, mmap, munmap, errno_location;
	uint64_t gettid, syscall; /* for the gdb method: which thread runs the calls */
	int dlopen_mode;
	const char *dlopen_name;
};

/*
 * Find them in the C library of maps (on glibc < 2.34, dlopen in libdl or else the private
 * __libc_dlopen_mode). Returns 0, or -1 with the reason in err: no C library, its symbols
 * unreadable, or no dlopen, mmap, munmap or __errno_location (the others may be 0).
 */
int mp_inject_resolve_fns(const struct mp_procmaps *maps, struct target_fns *f, struct strbuf *err);

/*
 * The gdb method (inject-gdb.c), called by mp_inject() once its checks passed and o is
 * complete (timeout_ms set); deadline is in mp_remote_now()'s clock. As mp_inject().
 */
int mp_inject_gdb(const struct mp_inject_opts *o, uint64_t deadline, long *result, struct strbuf *err);
/*
 * Why a gdb run made no call, from its output out (interrupted: memprof stopped it at the
 * deadline, deadline_ms after the start): one line in err, with gdb's output when o->verbose.
 */
void mp_inject_gdb_explain(const struct mp_inject_opts *o, const char *out, int interrupted, uint64_t deadline_ms,
			   struct strbuf *err);

#endif
