/*
 * The program `memprof run` starts: find it like a shell would, and refuse,
 * before anything runs, what LD_PRELOAD would silently leave untracked.
 */
#ifndef MEMPROF_LIB_PROCESS_TARGET_H
#define MEMPROF_LIB_PROCESS_TARGET_H

#include "lib/util/strbuf.h"

struct mp_target {
	char *path;     /* what to execute (found in PATH when argv[0] has no slash) */
	char *preloaded;/* the ELF file the tracker is loaded into: path, or a script's interpreter */
	char **argv;    /* the argv to execute: argv itself, or for "#!/usr/bin/env NAME"
			   scripts the interpreter's own argv (env would untrack it) */
	int argc;
};

/*
 * Resolve argv[0] and check it. Returns 0, or -1 with a one-line message in
 * err and the shell-like exit status in *status: 127 not found, 126 not
 * executable, 1 for programs that cannot be tracked (static, set-id, other
 * machine).
 */
int mp_target_resolve(struct mp_target *t, int argc, char **argv, struct strbuf *err, int *status);
void mp_target_release(struct mp_target *t);

#endif
