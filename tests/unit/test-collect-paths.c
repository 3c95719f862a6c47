/*
 * Unit tests for lib/process/collect-paths: the names of a run's captures.
 * FILE for the main process, FILE.N for its later captures (memprof ctl
 * start), FILE.PID for other processes (the pid their captures hold, their
 * own pid namespace's); in a pid namespace N and PID meet, and a name a
 * capture of the run has is never given again.
 */
#include <config.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "lib/process/collect-private.h"

static struct mp_collector c;
static struct stream streams[8], *ptrs[8];

/*
 * A stream of process pid as the collector numbers it, own_pid as its own pid
 * namespace does (a later capture of the main process when restarted), named.
 */
static const char *name_ns(pid_t pid, pid_t own_pid, bool restarted)
{
	struct stream *s = &streams[c.nstreams];
	memset(s, 0, sizeof(*s));
	s->pid = pid;
	s->dec.header.pid = (uint64_t)own_pid;
	s->main = !c.main_claimed && pid == c.opts.main_pid && !restarted;
	c.main_claimed |= s->main;
	if (restarted)
		s->dec.header.flags = MP_HF_RESTARTED;
	ptrs[c.nstreams++] = s;
	s->info.path = mp_collect_path(&c, s);
	return s->info.path;
}

static const char *name(pid_t pid, bool restarted)
{
	return name_ns(pid, pid, restarted);
}

static int setup(void **state)
{
	(void)state;
	memset(&c, 0, sizeof(c));
	c.opts.output = "/nonexistent/c.bin";
	c.opts.main_pid = 2;
	c.main_captures = 1;
	c.streams = ptrs;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	for (size_t i = 0; i < c.nstreams; i++)
		free(streams[i].info.path);
	return 0;
}

static void test_usual_names(void **state)
{
	(void)state;
	assert_string_equal(name(2, false), "/nonexistent/c.bin");
	assert_string_equal(name(40, false), "/nonexistent/c.bin.40");
	assert_string_equal(name(2, true), "/nonexistent/c.bin.2");
	assert_int_equal(streams[2].info.capture, 2);
	assert_string_equal(name(2, true), "/nonexistent/c.bin.3");
	/* A process that replaced itself again: its second capture. */
	assert_string_equal(name(40, false), "/nonexistent/c.bin.40.2");
}

/* Process 3 (a child, in a container) before the third capture, and process 4 after the fourth. */
static void test_numbers_that_are_pids(void **state)
{
	(void)state;
	assert_string_equal(name(2, false), "/nonexistent/c.bin");
	assert_string_equal(name(2, true), "/nonexistent/c.bin.2");
	assert_string_equal(name(3, false), "/nonexistent/c.bin.3");
	assert_string_equal(name(2, true), "/nonexistent/c.bin.4");
	assert_int_equal(streams[3].info.capture, 4);
	assert_string_equal(name(4, false), "/nonexistent/c.bin.4.2");
	assert_string_equal(name(2, true), "/nonexistent/c.bin.5");
}

/*
 * memprof attach 2 where process 2 is 1 in its own pid namespace (a
 * container): its children's captures carry the pids their FORK records
 * name, its later captures are counted as ever.
 */
static void test_another_pid_namespace(void **state)
{
	(void)state;
	assert_string_equal(name_ns(2, 1, false), "/nonexistent/c.bin");
	assert_true(streams[0].main);
	assert_string_equal(name_ns(70, 5, false), "/nonexistent/c.bin.5");
	assert_string_equal(name_ns(2, 1, true), "/nonexistent/c.bin.2");
	/* Another namespace's 5 (a child that made one of its own): a name of its own. */
	assert_string_equal(name_ns(71, 5, false), "/nonexistent/c.bin.5.2");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_usual_names, setup, teardown),
		cmocka_unit_test_setup_teardown(test_numbers_that_are_pids, setup, teardown),
		cmocka_unit_test_setup_teardown(test_another_pid_namespace, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
