/*
 * Option tables for commands: one declaration per command drives getopt_long,
 * the -h usage text, --help (the man page) and --list-opts (completions).
 */
#ifndef MEMPROF_CMD_OPTIONS_H
#define MEMPROF_CMD_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "lib/process/track.h"

struct strbuf;

struct mp_opt {
	int id;                /* returned by mp_getopt; a short option letter or a value >= 256 */
	int short_name;        /* 0 when there is none */
	const char *long_name; /* NULL when there is none */
	const char *argname;   /* NULL for flags */
	const char *help;
};

enum mp_cmd_flags {
	/* Stop at the first non-option (everything after the program belongs to it). */
	MP_CMD_STOP_AT_NONOPT = 1 << 0,
};

struct mp_cmd_spec {
	const char *name;      /* "stats" */
	const char *synopsis;  /* "[options] FILE" */
	const char *summary;   /* one line */
	const struct mp_opt *opts; /* terminated by an entry with id 0 */
	unsigned flags;
	int min_args, max_args; /* operands after options; max -1 for any */
};

struct mp_getopt {
	int argc;
	char **argv;
	int optind;            /* first operand, valid once mp_getopt returned -1 */
	const char *arg;       /* argument of the last option */
	int started;
};

#define MP_GETOPT_ERROR (-2)

/*
 * Parse the next option of argv (argv[0] is the command name). Handles -h
 * (usage on stdout, exit 0), --help (man page), --list-opts (exit 0) and
 * unknown options (usage error, exit 2). Returns the option's id, or -1 when
 * options end; then checks the operand count.
 */
int mp_getopt(const struct mp_cmd_spec *spec, struct mp_getopt *g);
/*
 * The same, only checking: it never prints or exits; a usage error (-h,
 * --help and --list-opts included) is appended to *err as one line and
 * gives MP_GETOPT_ERROR. For checking a command's arguments before running
 * it (memprof run --reporter).
 */
int mp_getopt_check(const struct mp_cmd_spec *spec, struct mp_getopt *g, struct strbuf *err);
/* Print "usage: memprof NAME SYNOPSIS" and the option list. */
void mp_print_usage(const struct mp_cmd_spec *spec, FILE *out);
/* A usage error in a command: "memprof NAME: msg", then exit 2. */
void mp_usage_error(const struct mp_cmd_spec *spec, const char *fmt, ...)
	__attribute__((format(printf, 2, 3), noreturn));
/* Parse an integer option argument in [min, max] or exit 2 naming the option. */
uint64_t mp_opt_uint(const struct mp_cmd_spec *spec, const char *opt, const char *arg,
		     uint64_t min, uint64_t max);
/* The same without exiting: 0, or -1 with the usage error in *err. */
int mp_opt_uint_check(const char *opt, const char *arg, uint64_t min, uint64_t max,
		      uint64_t *v, struct strbuf *err);
/*
 * The options every tracking command (run, attach) shares: their table
 * entries, their values and their parsing.
 */
enum { MP_OPT_FOLLOW_FORK = 256, MP_OPT_INTERVAL, MP_OPT_MAX_DEPTH, MP_OPT_NO_SYMBOLS,
       MP_OPT_KEEP_ADDRESSES, MP_OPT_AGGREGATE, MP_OPT_NO_PYTHON_FRAMES, MP_OPT_TRACK_END };
#define MP_TRACK_OPT_ENTRIES(follow_fork_help) \
	{ MP_OPT_FOLLOW_FORK, 0, "follow-fork", NULL, follow_fork_help }, \
	{ MP_OPT_INTERVAL, 0, "memory-interval-ms", "N", "sample RSS and flush every N ms (default 10)" }, \
	{ MP_OPT_MAX_DEPTH, 0, "max-depth", "N", "keep at most N frames per stack (default 128)" }, \
	{ MP_OPT_NO_SYMBOLS, 0, "no-symbols", NULL, "leave symbolization to report time" }, \
	{ MP_OPT_KEEP_ADDRESSES, 0, "keep-addresses", NULL, "record heap blocks' addresses (a larger capture)" }, \
	{ MP_OPT_AGGREGATE, 0, "aggregate", NULL, \
	  "write totals per stack instead of every event (peak, leaks, allocations; no temporary or temporal reports)" }, \
	{ MP_OPT_NO_PYTHON_FRAMES, 0, "no-python-frames", NULL, \
	  "in a Python program, keep the interpreter's frames instead of the Python ones" }
/* Apply option c (-o, -f, -q or one of the entries above); false when it is not one of them. */
bool mp_track_option(const struct mp_cmd_spec *spec, int c, const char *arg,
		     struct mp_track_opts *t);
/* Show the man page of memprof-NAME (or memprof when name is NULL) and exit. */
void mp_show_manpage(const char *name) __attribute__((noreturn));

#endif
