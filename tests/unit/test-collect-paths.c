/*
 * Unit tests for lib/process/collect-paths: the names of a run's captures.
 * memprof-<program>.<pid>.bin by default, created once with its refusals;
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

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/process/collect-private.h"

static struct mp_collector c;
static char output[] = "/nonexistent/c.bin";
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
	c.output = output;
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

/* The default name: the program's base name and the pid, whatever path it was run by. */
static void test_default_name(void **state)
{
	static const struct {
		const char *prog;
		pid_t pid;
		const char *want;
	} cases[] = {
		{ "./allocs", 42, "memprof-allocs.42.bin" },
		{ "/usr/bin/python3.11", 7, "memprof-python3.11.7.bin" },
		{ "sleep", 123456, "memprof-sleep.123456.bin" },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *name = mp_capture_default_name(cases[i].prog, cases[i].pid);
		assert_string_equal(name, cases[i].want);
		free(name);
	}
}

static char dir[64];

static int make_dir(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "%s/test-capture-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	return mkdtemp(dir) ? 0 : -1;
}

static int remove_dir(void **state)
{
	char cmd[128];
	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* Created once, its name and descriptor together; refused when it exists, unless forced. */
static void test_create(void **state)
{
	struct mp_capture_file f;
	struct strbuf err = STRBUF_INIT;
	char path[128], want[256];
	struct stat st;
	(void)state;
	snprintf(path, sizeof(path), "%s/c.bin", dir);
	assert_int_equal(mp_capture_file_create(&f, path, false, &err), 0);
	assert_string_equal(f.path, path);
	assert_true(f.fd >= 0 && f.made);
	assert_int_equal(write(f.fd, "x", 1), 1);
	mp_capture_file_release(&f, true); /* (not empty: kept) */
	assert_int_equal(stat(path, &st), 0);
	assert_null(f.path);
	assert_int_equal(f.fd, -1);

	assert_int_equal(mp_capture_file_create(&f, path, false, &err), -1);
	snprintf(want, sizeof(want), "'%s' exists (use -f to overwrite it)", path);
	assert_string_equal(err.buf, want);
	assert_int_equal(f.fd, -1);
	mp_capture_file_release(&f, true);
	assert_int_equal(stat(path, &st), 0); /* (refused: left as it was) */

	strbuf_reset(&err);
	assert_int_equal(mp_capture_file_create(&f, path, true, &err), 0);
	assert_int_equal(fstat(f.fd, &st), 0);
	assert_int_equal(st.st_size, 0);
	mp_capture_file_release(&f, true); /* (empty: nothing was written into it) */
	assert_int_equal(stat(path, &st), -1);

	snprintf(path, sizeof(path), "%s/none/c.bin", dir);
	assert_int_equal(mp_capture_file_create(&f, path, true, &err), -1);
	snprintf(want, sizeof(want), "cannot create '%s': No such file or directory", path);
	assert_string_equal(err.buf, want);
	mp_capture_file_release(&f, true);
	strbuf_release(&err);
}

/* A FIFO nobody reads: said at once, never blocking; waited for until cancelled, or a reader. */
static void test_fifo(void **state)
{
	struct mp_capture_file f;
	struct strbuf err = STRBUF_INIT;
	char path[128], want[256];
	int cancel[2], reader;
	(void)state;
	snprintf(path, sizeof(path), "%s/fifo", dir);
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_equal(mp_capture_file_create(&f, path, false, &err), -1);
	mp_capture_file_release(&f, true);
	strbuf_reset(&err);
	assert_int_equal(mp_capture_file_create(&f, path, true, &err), 1);
	assert_int_equal(pipe(cancel), 0);
	assert_int_equal(write(cancel[1], "x", 1), 1);
	assert_int_equal(mp_capture_file_wait(&f, cancel[0], &err), -1);
	snprintf(want, sizeof(want), "no process opened '%s' for reading; gave up waiting", path);
	assert_string_equal(err.buf, want);
	mp_capture_file_release(&f, true);
	assert_int_equal(access(path, F_OK), 0); /* (a FIFO is never removed) */

	reader = open(path, O_RDONLY | O_NONBLOCK);
	assert_true(reader >= 0);
	assert_int_equal(mp_capture_file_create(&f, path, true, &err), 0);
	assert_true(f.fd >= 0 && !f.made);
	close(reader);
	mp_capture_file_release(&f, true);
	assert_int_equal(access(path, F_OK), 0);
	close(cancel[0]);
	close(cancel[1]);
	strbuf_release(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default_name),
		cmocka_unit_test_setup_teardown(test_create, make_dir, remove_dir),
		cmocka_unit_test_setup_teardown(test_fifo, make_dir, remove_dir),
		cmocka_unit_test_setup_teardown(test_usual_names, setup, teardown),
		cmocka_unit_test_setup_teardown(test_numbers_that_are_pids, setup, teardown),
		cmocka_unit_test_setup_teardown(test_another_pid_namespace, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
