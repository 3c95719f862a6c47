/*
 * Unit tests of the command-line option tables (cmd/options.c) and the
 * reporters' shared fragments (cmd/report.c): values bound in the table,
 * bounds, callbacks, repeated options, usage errors, the usage text.
 */
#include <config.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd/options.h"
#include "cmd/report.h"
#include "lib/util/strbuf.h"

static const struct mp_cmd_spec spec = {
	.name = "demo",
	.synopsis = "[options] FILE",
	.summary = "A command for the tests.",
	.min_args = 1,
	.max_args = 1,
};

/* What the table of the tests fills. */
struct demo {
	bool verbose, color;
	unsigned bits;
	const char *output;
	unsigned count;          /* 1..100 */
	uint64_t big;            /* 0..UINT64_MAX */
	size_t width;            /* 2..UINT32_MAX, short option only */
	const char *names[8];    /* --name, repeatable */
	int nnames;
	int shouts;              /* --shout, a callback flag */
};

static int name_option(const struct mp_opt *opt, const char *arg, struct strbuf *err)
{
	struct demo *d = opt->value;
	if (!strcmp(arg, "bad")) {
		strbuf_addf(err, "invalid value '%s' for --%s: not a name", arg, opt->long_name);
		return -1;
	}
	d->names[d->nnames++] = arg;
	return 0;
}

static int shout_option(const struct mp_opt *opt, const char *arg, struct strbuf *err)
{
	struct demo *d = opt->value;
	(void)err;
	assert_null(arg);
	d->shouts += (int)opt->data;
	return 0;
}

#define DEMO_OPTS(d)                                                                           \
	{                                                                                      \
		MP_OPT_BOOL('v', "verbose", &(d)->verbose, "say more"),                        \
		MP_OPT_SET_BOOL(0, "no-color", &(d)->color, false, "plain text"),              \
		MP_OPT_BIT(0, "one", &(d)->bits, 1, "bit one"),                                \
		MP_OPT_BIT(0, "four", &(d)->bits, 4, "bit four"),                              \
		MP_OPT_STRING('o', "output", "FILE", &(d)->output, "write to FILE"),           \
		MP_OPT_UINT('c', "count", "N", &(d)->count, 1, 100, "N times"),                \
		MP_OPT_UINT(0, "big", "N", &(d)->big, 0, UINT64_MAX, "a big one"),            \
		MP_OPT_UINT('w', NULL, "N", &(d)->width, 2, UINT32_MAX, "the width"),          \
		MP_OPT_CALLBACK(0, "name", "NAME", (d), name_option, "a name (repeatable)"),   \
		MP_OPT_CALLBACK_DATA(0, "shout", NULL, (d), shout_option, 3, "louder"),        \
		MP_OPT_END,                                                                    \
	}

/*
 * A writable copy of the NULL-terminated list (getopt reorders it), valid
 * until the next call; its length in *argc.
 */
static char **args(const char *const *list, int *argc)
{
	static char text[4096], *vec[64];
	size_t used = 0;
	for (*argc = 0; list[*argc]; (*argc)++) {
		size_t len = strlen(list[*argc]) + 1;
		assert_true(*argc < 63 && used + len <= sizeof(text));
		vec[*argc] = memcpy(text + used, list[*argc], len);
		used += len;
	}
	vec[*argc] = NULL;
	return vec;
}

/* Parse the arguments (the command's name first) by the demo table, checking only. */
static int check(struct demo *d, struct strbuf *err, const char *const *list)
{
	const struct mp_opt opts[] = DEMO_OPTS(d);
	int argc;
	char **argv = args(list, &argc);
	memset(d, 0, sizeof(*d));
	d->color = true;
	d->count = 7;
	strbuf_reset(err);
	return mp_parse_options_check(&spec, opts, argc, argv, err);
}

#define CHECK(d, err, ...) check(d, err, (const char *[]){ "demo", __VA_ARGS__, NULL })

static void test_values_bound(void **state)
{
	struct demo d;
	struct strbuf err = STRBUF_INIT;
	(void)state;
	assert_int_equal(CHECK(&d, &err, "file"), 1);
	assert_false(d.verbose);
	assert_true(d.color);
	assert_int_equal(d.count, 7);
	assert_null(d.output);

	assert_int_equal(CHECK(&d, &err, "-v", "--no-color", "--four", "-o", "a", "--one",
			       "--count=100", "--big", "18446744073709551615", "-w2", "file"),
			 11);
	assert_string_equal(err.buf, "");
	assert_true(d.verbose);
	assert_false(d.color);
	assert_int_equal(d.bits, 5);
	assert_string_equal(d.output, "a");
	assert_int_equal(d.count, 100);
	assert_true(d.big == UINT64_MAX);
	assert_int_equal(d.width, 2);

	/* The last occurrence wins; an operand may come first (getopt puts it last). */
	{
		const struct mp_opt opts[] = DEMO_OPTS(&d);
		int argc;
		char **argv = args((const char *[]){ "demo", "file", "-o", "a", "--output", "b", "-c",
						     "1", "-c3", NULL },
				   &argc);
		memset(&d, 0, sizeof(d));
		assert_int_equal(mp_parse_options_check(&spec, opts, argc, argv, &err), 8);
		assert_string_equal(argv[8], "file");
		assert_string_equal(d.output, "b");
		assert_int_equal(d.count, 3);
	}
	strbuf_release(&err);
}

static void test_bounds(void **state)
{
	static const char *const bad_count[] = { "0", "101", "-1", "+5", "", "x", "5x", " 5",
						 "99999999999999999999" };
	struct demo d;
	struct strbuf err = STRBUF_INIT, want = STRBUF_INIT;
	(void)state;
	for (size_t i = 0; i < sizeof(bad_count) / sizeof(bad_count[0]); i++) {
		assert_int_equal(CHECK(&d, &err, "--count", bad_count[i], "file"), -1);
		strbuf_reset(&want);
		strbuf_addf(&want, "invalid value '%s' for --count: expected an integer from 1 to 100",
			    bad_count[i]);
		assert_string_equal(err.buf, want.buf);
		assert_int_equal(d.count, 7); /* untouched */
	}
	/* The short option is named by its long name, as the manual names it. */
	assert_int_equal(CHECK(&d, &err, "-c", "0", "file"), -1);
	assert_string_equal(err.buf, "invalid value '0' for --count: expected an integer from 1 to 100");
	/* No upper bound: said so. */
	assert_int_equal(CHECK(&d, &err, "--big", " -1", "file"), -1);
	assert_string_equal(err.buf, "invalid value ' -1' for --big: expected an integer of at "
				     "least 0");
	assert_int_equal(CHECK(&d, &err, "--big", "18446744073709551616", "file"), -1);
	assert_string_equal(err.buf, "invalid value '18446744073709551616' for --big: expected an "
				     "integer of at least 0");
	/* An option with a short name only is named by it. */
	assert_int_equal(CHECK(&d, &err, "-w", "1", "file"), -1);
	assert_string_equal(err.buf, "invalid value '1' for -w: expected an integer from 2 to "
				     "4294967295");
	assert_int_equal(CHECK(&d, &err, "-w", "4294967295", "file"), 2 + 1);
	assert_int_equal(d.width, 4294967295u);
	strbuf_release(&err);
	strbuf_release(&want);
}

static void test_callbacks(void **state)
{
	struct demo d;
	struct strbuf err = STRBUF_INIT;
	(void)state;
	/* Repeated: every occurrence, in order. */
	assert_int_equal(CHECK(&d, &err, "--name", "a", "--shout", "--name=-b", "file", "--name",
			       "", "--shout"),
			 8);
	assert_int_equal(d.nnames, 3);
	assert_string_equal(d.names[0], "a");
	assert_string_equal(d.names[1], "-b");
	assert_string_equal(d.names[2], "");
	assert_int_equal(d.shouts, 6);
	/* A callback's error ends the parse: later options are not seen. */
	assert_int_equal(CHECK(&d, &err, "--name", "a", "--name", "bad", "--name", "c", "file"), -1);
	assert_string_equal(err.buf, "invalid value 'bad' for --name: not a name");
	assert_int_equal(d.nnames, 1);
	strbuf_release(&err);
}

static void test_usage_errors(void **state)
{
	struct demo d;
	struct strbuf err = STRBUF_INIT;
	(void)state;
	assert_int_equal(CHECK(&d, &err, "--bogus", "file"), -1);
	assert_string_equal(err.buf, "unknown option '--bogus'");
	assert_int_equal(CHECK(&d, &err, "-x", "file"), -1);
	assert_string_equal(err.buf, "unknown option '-x'");
	assert_int_equal(CHECK(&d, &err, "--verbose=1", "file"), -1);
	assert_string_equal(err.buf, "option '--verbose' takes no argument");
	assert_int_equal(CHECK(&d, &err, "--verb=1", "file"), -1);
	assert_string_equal(err.buf, "option '--verbose' takes no argument");
	assert_int_equal(CHECK(&d, &err, "--help=1", "file"), -1);
	assert_string_equal(err.buf, "option '--help' takes no argument");
	assert_int_equal(CHECK(&d, &err, "file", "--output"), -1);
	assert_string_equal(err.buf, "option '--output' needs an argument");
	assert_int_equal(CHECK(&d, &err, "file", "-o"), -1);
	assert_string_equal(err.buf, "option '-o' needs an argument");
	assert_int_equal(CHECK(&d, &err, "-v"), -1);
	assert_string_equal(err.buf, "missing argument");
	assert_int_equal(CHECK(&d, &err, "a", "b"), -1);
	assert_string_equal(err.buf, "unexpected argument 'b'");
	/* Help is no checkable argument. */
	assert_int_equal(CHECK(&d, &err, "-h", "file"), -1);
	assert_string_equal(err.buf, "option '-h' only shows help");
	assert_int_equal(CHECK(&d, &err, "file", "--help"), -1);
	assert_string_equal(err.buf, "option '--help' only shows help");
	assert_int_equal(CHECK(&d, &err, "--list-opts"), -1);
	assert_string_equal(err.buf, "option '--list-opts' only shows help");
	strbuf_release(&err);
}

static void test_operands_and_stop(void **state)
{
	static const struct mp_cmd_spec two = { "two", "A B", NULL, 0, 2, 2 };
	static const struct mp_cmd_spec prog = { "prog", "PROGRAM [ARGS...]", NULL,
						 MP_CMD_STOP_AT_NONOPT, 1, -1 };
	struct demo d;
	const struct mp_opt opts[] = DEMO_OPTS(&d);
	struct strbuf err = STRBUF_INIT;
	int argc;
	char **argv = args((const char *[]){ "two", "a", NULL }, &argc);
	(void)state;
	assert_int_equal(mp_parse_options_check(&two, opts, argc, argv, &err), -1);
	assert_string_equal(err.buf, "missing arguments");
	strbuf_reset(&err);
	/* Everything after the program is the program's. */
	memset(&d, 0, sizeof(d));
	argv = args((const char *[]){ "prog", "-v", "ls", "-v", "--bogus", NULL }, &argc);
	assert_int_equal(mp_parse_options_check(&prog, opts, argc, argv, &err), 2);
	assert_true(d.verbose);
	assert_string_equal(argv[3], "-v");
	strbuf_release(&err);
}

/* The reporters' fragments: the view and the options of every reporter. */
static void test_report_fragments(void **state)
{
	static const struct mp_cmd_spec rep = { "rep", "FILE", NULL, 0, 1, 1 };
	struct mp_report_args ra;
	const struct mp_opt opts[] = {
		MP_REPORT_VIEW_OPTS(&ra),
		MP_REPORT_OPTS(&ra),
		MP_OPT_END,
	};
	struct strbuf err = STRBUF_INIT;
	struct {
		const char *argv[5];
		int ret;
		enum mp_view view;
		uint64_t threshold;
		unsigned flags;
		const char *err;
	} cases[] = {
		{ { "rep", "f" }, 1, MP_VIEW_PEAK, 1, 0, "" },
		{ { "rep", "--leaks", "--no-mmap", "f" }, 3, MP_VIEW_LEAKS, 1, MP_ANALYSIS_NO_MMAP, "" },
		{ { "rep", "--leaks", "--leaks", "f" }, 3, MP_VIEW_LEAKS, 1, 0, "" },
		{ { "rep", "--temporary-allocations", "f" }, 2, MP_VIEW_TEMPORARY, 1, 0, "" },
		{ { "rep", "--temporary-allocation-threshold", "0", "f" }, 3, MP_VIEW_TEMPORARY, 0, 0,
		  "" },
		{ { "rep", "--temporary-allocation-threshold=4294967295", "f" }, 2, MP_VIEW_TEMPORARY,
		  4294967295u, 0, "" },
		{ { "rep", "--temporary-allocation-threshold=4294967296", "f" }, -1, MP_VIEW_PEAK, 1, 0,
		  "invalid value '4294967296' for --temporary-allocation-threshold: expected an "
		  "integer from 0 to 4294967295" },
		{ { "rep", "--leaks", "--temporary-allocations", "f" }, -1, MP_VIEW_LEAKS, 1, 0,
		  "options '--leaks' and '--temporary-allocations' cannot be combined" },
		{ { "rep", "--temporary-allocation-threshold=5", "--temporary-allocations", "f" }, -1,
		  MP_VIEW_TEMPORARY, 1, 0,
		  "options '--temporary-allocation-threshold' and '--temporary-allocations' cannot "
		  "be combined" },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int argc;
		char **argv = args(cases[i].argv, &argc);
		ra = (struct mp_report_args)MP_REPORT_ARGS_INIT;
		strbuf_reset(&err);
		assert_int_equal(mp_parse_options_check(&rep, opts, argc, argv, &err), cases[i].ret);
		assert_string_equal(err.buf, cases[i].err);
		assert_int_equal(ra.view, cases[i].view);
		assert_true(ra.threshold == cases[i].threshold);
		assert_int_equal(ra.flags, cases[i].flags);
	}
	strbuf_release(&err);
}

/* The tracking commands' fragment: defaults kept, bounds, the negative flags. */
static void test_track_fragment(void **state)
{
	static const struct mp_cmd_spec trk = { "trk", "PROGRAM", NULL, MP_CMD_STOP_AT_NONOPT, 1,
						-1 };
	struct mp_track_opts t = MP_TRACK_OPTS_INIT;
	const struct mp_opt opts[] = {
		MP_TRACK_OUTPUT_OPTS(&t, "x.bin"),
		MP_TRACK_OPTS(&t, "follow"),
		MP_OPT_END,
	};
	struct strbuf err = STRBUF_INIT;
	int argc;
	char **argv = args((const char *[]){ "trk", "-qfo", "c.bin", "--no-symbols", "--max-depth",
					     "1024", "--memory-interval-ms=3600000",
					     "--no-python-frames", "prog", NULL },
			   &argc);
	(void)state;
	assert_int_equal(mp_parse_options_check(&trk, opts, argc, argv, &err), 8);
	assert_true(t.quiet && t.force && !t.symbols && !t.python_frames && !t.follow_fork);
	assert_string_equal(t.output, "c.bin");
	assert_int_equal(t.max_depth, 1024);
	assert_int_equal(t.interval_ms, 3600000);
	argv = args((const char *[]){ "trk", "--max-depth", "1025", "prog", NULL }, &argc);
	assert_int_equal(mp_parse_options_check(&trk, opts, argc, argv, &err), -1);
	assert_string_equal(err.buf, "invalid value '1025' for --max-depth: expected an integer "
				     "from 1 to 1024");
	assert_int_equal(t.max_depth, 1024);
	strbuf_release(&err);
}

static void test_usage_text(void **state)
{
	struct demo d;
	const struct mp_opt opts[] = DEMO_OPTS(&d);
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	(void)state;
	mp_print_usage(&spec, opts, f);
	fclose(f);
	assert_string_equal(text,
			    "usage: memprof demo [options] FILE\n"
			    "\n"
			    "A command for the tests.\n"
			    "\n"
			    "options:\n"
			    "  -v, --verbose                    say more\n"
			    "  --no-color                       plain text\n"
			    "  --one                            bit one\n"
			    "  --four                           bit four\n"
			    "  -o, --output FILE                write to FILE\n"
			    "  -c, --count N                    N times\n"
			    "  --big N                          a big one\n"
			    "  -w N                             the width\n"
			    "  --name NAME                      a name (repeatable)\n"
			    "  --shout                          louder\n"
			    "  -h                               show this summary\n"
			    "  --help                           show the manual page\n");
	free(text);
}

/* mp_parse_options() in a child: its exit status, standard output and error. */
static int run_parse(const char *const *list, char *out, size_t outlen, char *errbuf, size_t errlen)
{
	int po[2], pe[2], status;
	ssize_t n;
	pid_t pid;
	assert_int_equal(pipe(po), 0);
	assert_int_equal(pipe(pe), 0);
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct demo d;
		const struct mp_opt opts[] = DEMO_OPTS(&d);
		int argc;
		char **argv = args(list, &argc);
		dup2(po[1], STDOUT_FILENO);
		dup2(pe[1], STDERR_FILENO);
		memset(&d, 0, sizeof(d));
		mp_parse_options(&spec, opts, argc, argv);
		printf("parsed count=%u\n", d.count);
		fflush(stdout);
		_exit(0);
	}
	close(po[1]);
	close(pe[1]);
	n = read(po[0], out, outlen - 1);
	out[n > 0 ? n : 0] = '\0';
	n = read(pe[0], errbuf, errlen - 1);
	errbuf[n > 0 ? n : 0] = '\0';
	close(po[0]);
	close(pe[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static void test_parse_exits(void **state)
{
	char out[4096], err[4096];
	(void)state;
	assert_int_equal(run_parse((const char *[]){ "demo", "-c", "9", "f", NULL }, out, sizeof(out), err,
				   sizeof(err)),
			 0);
	assert_string_equal(out, "parsed count=9\n");
	assert_string_equal(err, "");
	assert_int_equal(run_parse((const char *[]){ "demo", "-c", "0", "f", NULL }, out, sizeof(out), err,
				   sizeof(err)),
			 2);
	assert_string_equal(out, "");
	assert_string_equal(err, "memprof demo: invalid value '0' for --count: expected an integer "
				 "from 1 to 100\nusage: memprof demo [options] FILE (see 'memprof "
				 "demo -h')\n");
	assert_int_equal(run_parse((const char *[]){ "demo", "--list-opts", NULL }, out, sizeof(out), err,
				   sizeof(err)),
			 0);
	assert_string_equal(out, "--verbose\n-v\n--no-color\n--one\n--four\n--output=\n-o\n"
				 "--count=\n-c\n--big=\n-w\n--name=\n--shout\n-h\n--help\n");
	assert_string_equal(err, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_values_bound),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_callbacks),
		cmocka_unit_test(test_usage_errors),
		cmocka_unit_test(test_operands_and_stop),
		cmocka_unit_test(test_report_fragments),
		cmocka_unit_test(test_track_fragment),
		cmocka_unit_test(test_usage_text),
		cmocka_unit_test(test_parse_exits),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
