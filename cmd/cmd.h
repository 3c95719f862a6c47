/*
 * The memprof commands. Adding a command:
 *  1. write cmd/<name>.c exporting only cmd_<name>(): its usage in a
 *     struct mp_cmd_spec at the top, its options in a table bound to its
 *     variables and parsed by mp_parse_options() (cmd/options.h), logic in
 *     lib/;
 *  2. declare it below and add it, in sorted order, to commands[] in
 *     cmd/memprof.c;
 *  3. add the file to memprof_SOURCES in Makefile.am;
 *  4. write man/memprof-<name>.1 and add it to dist_man1_MANS;
 *  5. add e2e tests in tests/e2e/; tests/e2e/help.sh checks that -h works,
 *     the man page exists and completions list the command.
 */
#ifndef MEMPROF_CMD_CMD_H
#define MEMPROF_CMD_CMD_H

#include <signal.h>
#include <stdio.h>

int cmd_attach(int argc, char **argv);
int cmd_ctl(int argc, char **argv);
int cmd_detach(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_live(int argc, char **argv);
int cmd_parse(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_serve(int argc, char **argv);

/* SIGPIPE's disposition when memprof started (memprof ignores it; programs it runs must not). */
__sighandler_t mp_saved_sigpipe_handler(void);
/*
 * Close again, in a child about to run a program, the standard streams
 * memprof was started without (it holds /dev/null there meanwhile, so that
 * the files it opens never become its own or the program's stdin, stdout
 * or stderr): the program starts with what memprof was given.
 */
void mp_close_missing_stdio(void);
int cmd_stats(int argc, char **argv);
int cmd_summary(int argc, char **argv);
int cmd_tree(int argc, char **argv);
int cmd_transform(int argc, char **argv);

/* The HTML reporters. */
int cmd_flamegraph(int argc, char **argv);
int cmd_table(int argc, char **argv);

struct strbuf;

/*
 * A reporter that `memprof run --reporter NAME` runs on the capture it has
 * just written. Such a command also exports its mp_reporter_<name>:
 *  - check(argc, argv, capture, needs_events, err): argv is the
 *    reporter's name and its arguments, without the capture, whose path is
 *    given apart (NULL when not known yet). Parses them with the command's
 *    own option table, printing nothing and never exiting: 0 when the
 *    command would run; -1 for a usage error; 1 when the report could not
 *    be written (it exists and -f was not given: checked only when capture
 *    is known), the reason in *err (one line). *needs_events is the long
 *    name of an option given that an aggregated capture cannot answer, or
 *    NULL. run calls it before the program starts.
 *  - run(argc, argv, msgs): the command itself on its whole argv (the
 *    capture last), with its messages ("Wrote ...") to msgs (NULL: none);
 *    returns the exit status.
 */
struct mp_reporter {
	const char *name;
	int (*check)(int argc, char **argv, const char *capture, const char **needs_events,
		     struct strbuf *err);
	int (*run)(int argc, char **argv, FILE *msgs);
};
extern const struct mp_reporter mp_reporter_flamegraph, mp_reporter_table;

#endif
