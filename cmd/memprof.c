/* memprof: the entry point; global options, the command table and dispatch. */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "cmd/options.h"
#include "lib/format/format.h"
#include "lib/util/paths.h"
#include "lib/util/usage.h"
#include "lib/util/xalloc.h"

struct mp_cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

/* Sorted by name; checked at start-up in debug builds by cmd_table_sorted(). */
static const struct mp_cmd commands[] = {
	{ "attach", cmd_attach, "start tracking every allocation inside a running process" },
	{ "ctl", cmd_ctl, "start, stop or snapshot the capture of a preloaded tracker (no ptrace)" },
	{ "detach", cmd_detach, "stop the tracking 'memprof attach' started" },
	{ "diff", cmd_diff, "show what changed between two captures, by allocation site" },
	{ "flamegraph", cmd_flamegraph, "write an HTML flame graph of a capture" },
	{ "live", cmd_live, "show where a running process's memory is, live, in the terminal" },
	{ "parse", cmd_parse, "print every record of a capture as one line of text" },
	{ "run", cmd_run, "run a program with every allocation tracked into a capture" },
	{ "serve", cmd_serve, "serve a process's captures and reports over HTTP (no ptrace)" },
	{ "stats", cmd_stats, "show a capture's figures: totals, peak, leaks, histogram, top lists" },
	{ "summary", cmd_summary, "show which functions hold the memory, as a table" },
	{ "table", cmd_table, "write an HTML table of the allocation sites of a capture" },
	{ "transform", cmd_transform, "write a capture for other tools: pprof, speedscope, folded, csv" },
	{ "tree", cmd_tree, "show the call tree of the biggest allocations" },
};
#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static void print_overview(FILE *out)
{
	fputs("usage: memprof [--version] [--help] COMMAND [ARGS]\n\n"
	      "memprof records every allocation of a native program with its call stack\n"
	      "and turns the capture into reports.\n\ncommands:\n", out);
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(out, "   %-12s %s\n", commands[i].name, commands[i].summary);
	fputs("\n'memprof COMMAND -h' summarises a command's options; "
	      "'memprof help COMMAND' shows its manual.\n", out);
}

static const struct mp_cmd *find_command(const char *name)
{
	size_t lo = 0, hi = NCOMMANDS;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strcmp(name, commands[mid].name);
		if (!c)
			return &commands[mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

/* Damerau-free Levenshtein distance, for "did you mean". */
static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	size_t *row = xcalloc(lb + 1, sizeof(*row)), d;
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j];
			size_t best = diag + (a[i - 1] != b[j - 1]);
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	d = row[lb];
	free(row);
	return d;
}

static void unknown_command(const char *name)
{
	size_t best = (size_t)-1;
	fflush(stdout);
	for (size_t i = 0; i < NCOMMANDS; i++) {
		size_t d = edit_distance(name, commands[i].name);
		if (!strncmp(commands[i].name, name, strlen(name)))
			d = 0;
		if (d < best)
			best = d;
	}
	fprintf(stderr, "memprof: '%s' is not a memprof command (see 'memprof --help')\n", name);
	if (best <= 2) {
		int first = 1;
		fputs("memprof: the most similar command", stderr);
		for (size_t i = 0; i < NCOMMANDS; i++) {
			size_t d = edit_distance(name, commands[i].name);
			if (!strncmp(commands[i].name, name, strlen(name)))
				d = 0;
			if (d == best) {
				fprintf(stderr, "%s '%s'", first ? " is" : " or", commands[i].name);
				first = 0;
			}
		}
		fputc('\n', stderr);
	}
	exit(MP_EXIT_USAGE);
}

/*
 * After a command, flush stdout and report a failed write: a full disk must
 * not look like success. On a pipe or socket the only failure is a reader
 * that went away (head), which is not an error (git's run_builtin rule).
 */
static int finish_stdout(int status)
{
	struct stat st;
	if (fstat(fileno(stdout), &st))
		return status; /* stdout was closed: nothing to check */
	if (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)) {
		fflush(stdout);
		return status;
	}
	errno = 0;
	if (fflush(stdout) || ferror(stdout)) {
		if (errno)
			error_errno("write error on standard output");
		else
			error("write error on standard output");
		return MP_EXIT_FAILURE;
	}
	if (fclose(stdout) && errno != EBADF) {
		error_errno("close failed on standard output");
		return MP_EXIT_FAILURE;
	}
	return status;
}

static int run_command(const struct mp_cmd *cmd, int argc, char **argv)
{
	return finish_stdout(cmd->fn(argc, argv));
}

static int cmd_help(int argc, char **argv)
{
	if (argc < 2) {
		print_overview(stdout);
		return MP_EXIT_OK;
	}
	if (!find_command(argv[1]))
		unknown_command(argv[1]);
	mp_show_manpage(argv[1]);
}

static __sighandler_t saved_sigpipe = SIG_DFL;
static unsigned missing_stdio; /* bit fd: the standard stream fd was closed at the start */

/*
 * Hold /dev/null on each standard stream memprof was started without: else
 * the first file it opens (a capture, a report) would be its stderr, and
 * its messages would be written into it.
 */
static void hold_missing_stdio(void)
{
	for (int fd = 0; fd <= 2; fd++) {
		int got;
		if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
			continue;
		missing_stdio |= 1u << fd;
		/* The lowest free number: fd, the ones below it being open by now. */
		got = open("/dev/null", fd ? O_WRONLY : O_RDONLY);
		if (got >= 0 && got != fd)
			close(got);
	}
}

void mp_close_missing_stdio(void)
{
	for (int fd = 0; fd <= 2; fd++)
		if (missing_stdio & 1u << fd)
			close(fd);
}

__sighandler_t mp_saved_sigpipe_handler(void)
{
	return saved_sigpipe;
}

int main(int argc, char **argv)
{
	const struct mp_cmd *cmd;

	hold_missing_stdio();
	/* Closed pipes are reported as EPIPE and handled in finish_stdout(). */
	saved_sigpipe = signal(SIGPIPE, SIG_IGN);
	if (saved_sigpipe == SIG_ERR)
		saved_sigpipe = SIG_DFL;

	if (argc < 2) {
		print_overview(stderr);
		return MP_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("memprof %s (capture format %d.%d)\n", PACKAGE_VERSION, MP_FORMAT_MAJOR,
		       MP_FORMAT_MINOR);
		return finish_stdout(MP_EXIT_OK);
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		print_overview(stdout);
		return finish_stdout(MP_EXIT_OK);
	}
	if (!strcmp(argv[1], "help"))
		return finish_stdout(cmd_help(argc - 1, argv + 1));
	if (!strcmp(argv[1], "--list-cmds")) {
		for (size_t i = 0; i < NCOMMANDS; i++)
			puts(commands[i].name);
		return finish_stdout(MP_EXIT_OK);
	}
	if (!strcmp(argv[1], "--datadir")) {
		puts(mp_datadir());
		return finish_stdout(MP_EXIT_OK);
	}
	if (!strcmp(argv[1], "--libdir")) {
		puts(mp_libdir());
		return finish_stdout(MP_EXIT_OK);
	}
	if (argv[1][0] == '-') {
		fprintf(stderr, "memprof: unknown option '%s'\n", argv[1]);
		print_overview(stderr);
		return MP_EXIT_USAGE;
	}
	cmd = find_command(argv[1]);
	if (!cmd)
		unknown_command(argv[1]);
	return run_command(cmd, argc - 1, argv + 1);
}
