/*
 * Test driver for lib/process/inject: inject a library into a process and call its entry
 * function.
 *
 *   inject-tool [-m ptrace|gdb] [-t MS] [-n COUNT] [-u UID] [-v] PID LIBRARY ENTRY ARG
 *       inject COUNT times (default 1); print "result N" per injection, then
 *       "latency_us median=M min=A max=B" over the runs (mp_inject start to return)
 *   inject-tool [-u UID] --check PID      print mp_inject_check's verdict ("ok" or the error)
 *   inject-tool --trace PID SECONDS       hold PID traced (PTRACE_SEIZE) for SECONDS
 *   inject-tool --probe                   exit 0 when this machine lets us ptrace a process
 *                                         we did not start, else print why and exit 77
 * Errors go to stderr as "inject-tool: <message>", exit status 1.
 */
#include <config.h>

#include <errno.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/process/inject.h"
#include "lib/process/remote.h"
#include "lib/util/strbuf.h"

static int usage(void)
{
	fprintf(stderr, "usage: inject-tool [-m ptrace|gdb] [-t MS] [-n COUNT] [-u UID] [-v] PID LIBRARY ENTRY ARG\n"
		"       inject-tool [-u UID] --check PID | --trace PID SECONDS | --probe\n");
	return 2;
}

static void drop_to(const char *uid_s)
{
	uid_t uid = (uid_t)atoi(uid_s);

	if (setgroups(0, NULL) < 0 || setresgid(uid, uid, uid) < 0 || setresuid(uid, uid, uid) < 0) {
		fprintf(stderr, "inject-tool: cannot become uid %s: %s\n", uid_s, strerror(errno));
		exit(1);
	}
}

/* Can we trace a process that is not our child? Try on a grandchild that allows any tracer. */
static int probe(void)
{
	int fds[2], status;
	char c;
	pid_t mid, target = 0;

	if (pipe(fds) < 0)
		return 1;
	mid = fork();
	if (mid == 0) {
		pid_t t = fork();
		if (t == 0) {
			prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
			for (;;)
				pause();
		}
		if (write(fds[1], &t, sizeof(t)) != sizeof(t))
			_exit(1);
		_exit(0);
	}
	if (read(fds[0], &target, sizeof(target)) != sizeof(target))
		return 1;
	waitpid(mid, &status, 0);
	usleep(20000); /* let it reach prctl */
	c = 0;
	if (ptrace(PTRACE_SEIZE, target, 0, 0) < 0) {
		struct strbuf why = STRBUF_INIT;
		int e = errno;
		if (mp_inject_check(target, &why) < 0)
			printf("ptrace is not permitted here: %s\n", why.buf);
		else
			printf("ptrace is not permitted here: PTRACE_SEIZE of a process we did not start: %s "
			       "(seccomp, a container or an LSM forbids it)\n", strerror(e));
		strbuf_release(&why);
		c = 1;
	}
	kill(target, SIGKILL);
	return c ? 77 : 0;
}

static int cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	struct mp_inject_opts o = { 0 };
	const char *uid = NULL;
	int count = 1, i;
	long *lat;

	o.timeout_ms = 5000;
	o.method = MP_INJECT_PTRACE;
	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "-m") && i + 1 < argc) {
			const char *m = argv[++i];
			if (!strcmp(m, "gdb"))
				o.method = MP_INJECT_GDB;
			else if (strcmp(m, "ptrace"))
				return usage();
		} else if (!strcmp(argv[i], "-t") && i + 1 < argc) {
			o.timeout_ms = (unsigned)atoi(argv[++i]);
		} else if (!strcmp(argv[i], "-n") && i + 1 < argc) {
			count = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "-u") && i + 1 < argc) {
			uid = argv[++i];
		} else if (!strcmp(argv[i], "-v")) {
			o.verbose = true;
		} else if (!strcmp(argv[i], "--probe")) {
			return probe();
		} else if (!strcmp(argv[i], "--check") && i + 1 < argc) {
			struct strbuf err = STRBUF_INIT;
			if (uid)
				drop_to(uid);
			if (mp_inject_check(atoi(argv[i + 1]), &err) < 0) {
				printf("%s\n", err.buf);
				return 1;
			}
			printf("ok\n");
			return 0;
		} else if (!strcmp(argv[i], "--trace") && i + 2 < argc) {
			pid_t pid = atoi(argv[i + 1]);
			if (ptrace(PTRACE_SEIZE, pid, 0, 0) < 0) {
				fprintf(stderr, "inject-tool: cannot trace %d: %s\n", (int)pid, strerror(errno));
				return 1;
			}
			printf("tracing\n");
			fflush(stdout);
			sleep((unsigned)atoi(argv[i + 2]));
			return 0;
		} else {
			return usage();
		}
	}
	if (argc - i != 4 || count < 1)
		return usage();
	if (uid)
		drop_to(uid);
	o.pid = atoi(argv[i]);
	o.library = argv[i + 1];
	o.entry = argv[i + 2];
	o.arg = argv[i + 3];
	lat = calloc((size_t)count, sizeof(*lat));
	for (int n = 0; n < count; n++) {
		struct strbuf err = STRBUF_INIT;
		long result = 0;
		uint64_t t0 = mp_remote_now();
		int rc = mp_inject(&o, &result, &err);

		lat[n] = (long)((mp_remote_now() - t0) / 1000);
		if (rc < 0) {
			fprintf(stderr, "inject-tool: %s\n", err.buf);
			return 1;
		}
		printf("result %ld\n", result);
		strbuf_release(&err);
	}
	qsort(lat, (size_t)count, sizeof(*lat), cmp_long);
	printf("latency_us median=%ld min=%ld max=%ld\n", lat[count / 2], lat[0], lat[count - 1]);
	free(lat);
	return 0;
}
