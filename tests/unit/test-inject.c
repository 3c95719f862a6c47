/* Unit tests of inject: the pre-attach checks and a real injection into a child process. */
#include <config.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/process/inject-private.h"
#include "lib/process/inject.h"
#include "lib/process/procmaps.h"

/* A child that waits in pause() until killed. */
static pid_t spawn_pauser(void)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		for (;;)
			pause();
	}
	return pid;
}

/* The State letter of pid, waiting up to 2 s for it to become want (0: return at once). */
static char state_of(pid_t pid, char want)
{
	char path[64], line[256];
	char st = '?';

	for (int i = 0; i < 200; i++) {
		FILE *f;
		snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
		f = fopen(path, "r");
		if (!f)
			return '-';
		while (fgets(line, sizeof(line), f))
			if (!strncmp(line, "State:\t", 7))
				st = line[7];
		fclose(f);
		if (!want || st == want)
			break;
		usleep(10000);
	}
	return st;
}

static int tracer_of(pid_t pid)
{
	char path[64], line[256];
	int tracer = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		sscanf(line, "TracerPid: %d", &tracer);
	fclose(f);
	return tracer;
}

static void reap(pid_t pid)
{
	int status;
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
}

static void test_no_such_process(void **state)
{
	struct strbuf err = STRBUF_INIT;
	char want[128];
	pid_t pid = fork();
	int status;
	(void)state;

	if (pid == 0)
		_exit(0);
	waitpid(pid, &status, 0);
	assert_int_equal(mp_inject_check(pid, &err), -1);
	snprintf(want, sizeof(want), "cannot attach to %d: no such process; check the process id with ps", (int)pid);
	assert_string_equal(err.buf, want);
	strbuf_reset(&err);
	assert_int_equal(mp_inject_check(0, &err), -1);
	assert_string_equal(err.buf, "cannot attach to 0: not a process id");
	strbuf_release(&err);
}

static void test_zombie(void **state)
{
	struct strbuf err = STRBUF_INIT;
	char want[256];
	pid_t pid = fork();
	(void)state;

	if (pid == 0)
		_exit(0);
	assert_int_equal(state_of(pid, 'Z'), 'Z');
	assert_int_equal(mp_inject_check(pid, &err), -1);
	snprintf(want, sizeof(want), "cannot attach to %d: it is a zombie (it has exited and its parent %d has not "
		 "reaped it); there is nothing left to profile", (int)pid, (int)getpid());
	assert_string_equal(err.buf, want);
	reap(pid);
	strbuf_release(&err);
}

static void test_self(void **state)
{
	struct strbuf err = STRBUF_INIT;
	char want[128];
	(void)state;

	assert_int_equal(mp_inject_check(getpid(), &err), -1);
	snprintf(want, sizeof(want), "cannot attach to %d: it is memprof itself", (int)getpid());
	assert_string_equal(err.buf, want);
	strbuf_release(&err);
}

static void test_already_traced(void **state)
{
	struct strbuf err = STRBUF_INIT;
	char want[256];
	pid_t pid = spawn_pauser();
	(void)state;

	if (ptrace(PTRACE_SEIZE, pid, 0, 0) < 0) {
		reap(pid);
		skip();
	}
	assert_int_equal(mp_inject_check(pid, &err), -1);
	snprintf(want, sizeof(want), "cannot attach to %d: process %d is already traced by %d (test-inject); detach "
		 "that debugger or tracer first", (int)pid, (int)pid, (int)getpid());
	assert_string_equal(err.buf, want);
	reap(pid);
	strbuf_release(&err);
}

static void test_stopped(void **state)
{
	struct strbuf err = STRBUF_INIT;
	char want[256];
	pid_t pid = spawn_pauser();
	(void)state;

	kill(pid, SIGSTOP);
	assert_int_equal(state_of(pid, 'T'), 'T');
	assert_int_equal(mp_inject_check(pid, &err), -1);
	snprintf(want, sizeof(want), "cannot attach to %d: the process is stopped; resume it with `kill -CONT %d` first",
		 (int)pid, (int)pid);
	assert_string_equal(err.buf, want);
	reap(pid);
	strbuf_release(&err);
}

static void test_bad_options(void **state)
{
	struct strbuf err = STRBUF_INIT;
	struct mp_inject_opts o = { .pid = 1, .library = "libx.so", .entry = "f", .arg = "" };
	long result = 0;
	(void)state;

	assert_int_equal(mp_inject(&o, &result, &err), -1);
	assert_string_equal(err.buf, "cannot inject 'libx.so': the library path must be absolute");
	strbuf_release(&err);
}

/*
 * A whole injection with the ptrace method, without fixtures: "load" our own C library (dlopen
 * gives the handle of the copy already there) and call getpid(arg), which ignores its argument:
 * the result must be the child's pid, and the child must be left running and untraced.
 */
static void test_inject_getpid(void **state)
{
	static const char *const libc_names[] = { "libc.so", "libc-2.", NULL };
	struct mp_procmaps maps = MP_PROCMAPS_INIT;
	struct strbuf err = STRBUF_INIT;
	const struct mp_procmaps_entry *libc;
	struct mp_inject_opts o = { 0 };
	pid_t pid = spawn_pauser();
	long result = 0;
	(void)state;

	assert_int_equal(state_of(pid, 'S'), 'S');
	assert_int_equal(mp_procmaps_read(&maps, pid, &err), 0);
	libc = mp_procmaps_find(&maps, libc_names);
	assert_non_null(libc);
	o.pid = pid;
	o.library = libc->path;
	o.entry = "getpid";
	o.arg = "ignored";
	o.timeout_ms = 5000;
	o.method = MP_INJECT_PTRACE;
	if (mp_inject(&o, &result, &err) < 0 && strstr(err.buf, "Operation not permitted")) {
		reap(pid);
		skip();
	}
	assert_string_equal(err.buf, "");
	assert_int_equal(result, pid);
	assert_int_equal(state_of(pid, 'S'), 'S');
	assert_int_equal(tracer_of(pid), 0);
	/* twice: the state left behind is good for another round */
	assert_int_equal(mp_inject(&o, &result, &err), 0);
	assert_int_equal(result, pid);
	assert_int_equal(state_of(pid, 'S'), 'S');
	reap(pid);
	mp_procmaps_release(&maps);
	strbuf_release(&err);
}

/*
 * The gdb method's failures, told from gdb's output: a gdb that cannot set the registers
 * of the thread it stopped (gdb 13.1 on a CPU with AMX says so at its first call) is said
 * in one line with what to do, on every machine; other outputs keep their reasons.
 */
static void test_gdb_explain(void **state)
{
	struct strbuf err = STRBUF_INIT, want = STRBUF_INIT;
	struct mp_inject_opts o = { .pid = getpid(), .library = "/x/lib.so", .entry = "f", .arg = "" };
	(void)state;

	mp_inject_gdb_explain(&o, "Breakpoint 1 at 0x7f0: file malloc.c, line 3288.\nmemprof-gdb: waiting\n"
			      "Thread 2 \"churn-1\" hit Breakpoint 1, __GI___libc_malloc (bytes=64)\n"
			      "memprof-gdb: safe point\n/tmp/memprof-gdb-mQ5I56:55: Error in sourced command file:\n"
			      "Couldn't write extended state status: Bad address.\n", 0, 5000, &err);
	strbuf_addf(&want, "gdb cannot call functions in process %d on this machine: it cannot set the thread's "
		    "registers (gdb said \"Couldn't write extended state status: Bad address.\": a limitation of gdb "
		    "with this kernel and CPU, seen with AMX); use --method ptrace, the default", (int)o.pid);
	assert_string_equal(err.buf, want.buf);
	assert_null(strchr(err.buf, '\n'));

	strbuf_reset(&err);
	strbuf_reset(&want);
	mp_inject_gdb_explain(&o, "memprof-gdb: waiting\nmemprof-gdb: no safe point\n", 1, 3000, &err);
	strbuf_addf(&want, "cannot attach to %d: no safe point within 3000 ms (no thread entered malloc, calloc, "
		    "realloc or free); retry while the program allocates, or use --method ptrace", (int)o.pid);
	assert_string_equal(err.buf, want.buf);

	strbuf_reset(&err);
	strbuf_reset(&want);
	mp_inject_gdb_explain(&o, "memprof-gdb: safe point\nsomething else went wrong\n", 0, 5000, &err);
	strbuf_addf(&want, "gdb failed to inject into %d; rerun with verbose output to see why", (int)o.pid);
	assert_string_equal(err.buf, want.buf);
	strbuf_release(&err);
	strbuf_release(&want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_such_process),
		cmocka_unit_test(test_zombie),
		cmocka_unit_test(test_self),
		cmocka_unit_test(test_already_traced),
		cmocka_unit_test(test_stopped),
		cmocka_unit_test(test_bad_options),
		cmocka_unit_test(test_inject_getpid),
		cmocka_unit_test(test_gdb_explain),
	};
	return cmocka_run_group_tests(tests, NULL, NULL) ? 1 : 0;
}
