/*
 * Unit tests of lib/process/procids: a process's ids and state from /proc,
 * and its threads found by the ids their own pid namespace gives them.
 */
#include <config.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/process/procids.h"

static int ready[2], quit[2];

static void *report_tid(void *arg)
{
	long tid = syscall(SYS_gettid);
	(void)arg;
	char c;
	if (write(ready[1], &tid, sizeof(tid)) != (ssize_t)sizeof(tid))
		_exit(1);
	/*
	 * Until quit's write end is closed. (Not pthread_cancel(): a thread
	 * cancelled inside pause() makes ASAN report a stack-buffer-underflow
	 * where there is none, google/sanitizers#1399.)
	 */
	while (read(quit[0], &c, 1) != 0)
		;
	return NULL;
}

/* A thread of this process: its id, written by the thread itself. */
static long start_thread(pthread_t *t)
{
	long tid = 0;
	assert_int_equal(pipe(ready), 0);
	assert_int_equal(pipe(quit), 0);
	assert_int_equal(pthread_create(t, NULL, report_tid, NULL), 0);
	assert_int_equal(read(ready[0], &tid, sizeof(tid)), sizeof(tid));
	close(ready[0]);
	close(ready[1]);
	return tid;
}

static void test_self(void **state)
{
	unsigned long uid = 12345;
	long nspid = 0, tid;
	pthread_t t;
	(void)state;
	assert_int_equal(mp_proc_ids(getpid(), &uid, &nspid), 0);
	assert_int_equal(uid, geteuid());
	assert_int_equal(nspid, getpid());
	tid = start_thread(&t);
	assert_int_equal(mp_proc_thread_here(getpid(), tid), tid);
	assert_int_equal(mp_proc_thread_here(getpid(), getpid()), getpid());
	{
		/* This process runs; its thread waits (in pause()), and started no earlier. */
		char st = 0, tst = 0;
		unsigned long long start = 0, tstart = 0;
		assert_int_equal(mp_proc_stat(getpid(), 0, &st, &start), 0);
		assert_int_equal(st, 'R');
		assert_true(start > 0);
		assert_int_equal(mp_proc_stat(getpid(), (pid_t)tid, &tst, &tstart), 0);
		assert_true(tst == 'S' || tst == 'R');
		assert_true(tstart >= start);
		assert_int_equal(mp_proc_stat(getpid(), (pid_t)tid, NULL, NULL), 0);
	}
	close(quit[1]);
	pthread_join(t, NULL);
	close(quit[0]);
}

static void test_missing(void **state)
{
	unsigned long uid;
	long nspid;
	(void)state;
	/* (pid_max is at most 2^22.) */
	assert_int_equal(mp_proc_ids(1 << 23, &uid, &nspid), -1);
	assert_int_equal(mp_proc_thread_here(1 << 23, 1), 0);
	assert_int_equal(mp_proc_thread_here(getpid(), 1 << 23), 0);
	assert_int_equal(mp_proc_stat(1 << 23, 0, NULL, NULL), -1);
	assert_int_equal(mp_proc_stat(getpid(), 1 << 23, NULL, NULL), -1);
}

/* A child in a pid namespace of its own (pid 1 there), with a second thread: found from here. */
static void test_other_namespace(void **state)
{
	long nstid = 0, nspid = 0, here;
	unsigned long uid;
	int status, p[2], q[2];
	pid_t child;
	(void)state;
	/* Its pid here through p, its thread's id there through q: two writers, two pipes. */
	assert_int_equal(pipe(p), 0);
	assert_int_equal(pipe(q), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		pid_t inner;
		close(p[0]);
		close(q[0]);
		if (unshare(CLONE_NEWPID) < 0)
			_exit(77); /* not allowed here (not root): the test is skipped */
		inner = fork();
		if (inner == 0) {
			pthread_t t;
			ready[1] = q[1];
			/* (quit stays open: the thread waits until the test kills it.) */
			if (pipe(quit) == 0 && pthread_create(&t, NULL, report_tid, NULL) == 0)
				pthread_join(t, NULL);
			_exit(1);
		}
		/* Its pid here, for the test to find it by. */
		if (inner < 0 || write(p[1], &(long){ inner }, sizeof(long)) != (ssize_t)sizeof(long))
			_exit(1);
		waitpid(inner, NULL, 0);
		_exit(0);
	}
	close(p[1]);
	close(q[1]);
	here = 0;
	if (read(p[0], &here, sizeof(here)) != (ssize_t)sizeof(here)) {
		close(p[0]);
		close(q[0]);
		assert_int_equal(waitpid(child, &status, 0), child);
		if (WIFEXITED(status) && WEXITSTATUS(status) == 77)
			skip();
		fail_msg("the namespace's child did not start (status %d)", status);
	}
	assert_int_equal(read(q[0], &nstid, sizeof(nstid)), sizeof(nstid));
	close(p[0]);
	close(q[0]);
	assert_int_equal(mp_proc_ids((pid_t)here, &uid, &nspid), 0);
	assert_int_equal(nspid, 1);
	/* Its second thread is 2 there, something else here. */
	assert_int_equal(nstid, 2);
	{
		pid_t t = mp_proc_thread_here((pid_t)here, nstid);
		char path[64];
		assert_true(t > 0 && t != nstid && t != here);
		snprintf(path, sizeof(path), "/proc/%ld/task/%d", here, (int)t);
		assert_int_equal(access(path, F_OK), 0);
		assert_int_equal(mp_proc_thread_here((pid_t)here, 1), here);
		assert_int_equal(mp_proc_thread_here((pid_t)here, 3), 0);
	}
	kill((pid_t)here, SIGKILL);
	assert_int_equal(waitpid(child, &status, 0), child);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_self),
		cmocka_unit_test(test_missing),
		cmocka_unit_test(test_other_namespace),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
