/*
 * Option tables for commands, in git's way (parse-options.h): one table per
 * command says what each option is and where its value goes. It drives
 * getopt_long, the -h usage text, --help (the man page), --list-opts
 * (completions) and the checking of a reporter's arguments by memprof run.
 * Options several commands share are fragments of tables, macros whose
 * first argument is the struct they fill:
 *
 *	struct mp_report_args args = MP_REPORT_ARGS_INIT;
 *	uint64_t rows = 0;
 *	const struct mp_opt opts[] = {
 *		MP_OPT_UINT('r', "max-rows", "N", &rows, 1, UINT32_MAX, "show at most N rows"),
 *		MP_REPORT_OPTS(&args),
 *		MP_OPT_END,
 *	};
 *	int i = mp_parse_options(&spec, opts, argc, argv);  (argv[i] is the first operand)
 */
#ifndef MEMPROF_CMD_OPTIONS_H
#define MEMPROF_CMD_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "lib/process/track.h"

struct strbuf;
struct mp_opt;

/*
 * An option's own handling (MP_OPT_CALLBACK): arg is its argument (NULL for
 * a flag), opt->value the context bound in the table. 0, or -1 with a
 * one-line usage error appended to *err.
 */
typedef int mp_opt_fn(const struct mp_opt *opt, const char *arg, struct strbuf *err);

enum mp_opt_kind {
	MP_OPT_KIND_END = 0,    /* ends a table */
	MP_OPT_KIND_BOOL,       /* *(bool *)value = data */
	MP_OPT_KIND_BIT,        /* *(unsigned *)value |= data */
	MP_OPT_KIND_STRING,     /* *(const char **)value = the argument */
	MP_OPT_KIND_UINT,       /* the argument, an integer in [min, max], into size bytes at value */
	MP_OPT_KIND_BYTES,      /* the same, a number of bytes with k (KiB) or M (MiB) allowed */
	MP_OPT_KIND_CALLBACK,   /* fn(opt, argument, err) */
};

/*
 * One option of a command: what -h, --help, --list-opts and getopt know of
 * it, and where its value goes. Write tables with the macros below, ended
 * by MP_OPT_END; a later occurrence of an option overrides an earlier one.
 */
struct mp_opt {
	enum mp_opt_kind kind;
	int short_name;        /* 0 when there is none */
	const char *long_name; /* NULL when there is none */
	const char *argname;   /* NULL for flags */
	const char *help;
	void *value;           /* where the value goes; a callback's context */
	size_t size;           /* MP_OPT_KIND_UINT: sizeof(*value) */
	uint64_t min, max;     /* MP_OPT_KIND_UINT: the bounds, both allowed */
	uintptr_t data;        /* BOOL: the value set; BIT: the bits; CALLBACK: its own */
	mp_opt_fn *fn;         /* MP_OPT_KIND_CALLBACK */
};

/* p as a pointer to type, or a compile error ("pointer type mismatch"). */
#define MP_OPT_PTR(type, p) (1 ? (p) : (type *)NULL)
/* sizeof(*p) when p points to an unsigned integer, else a compile error. */
#define MP_OPT_USIZE(p)                                                                        \
	_Generic(*(p), unsigned: sizeof(unsigned), unsigned long: sizeof(unsigned long),          \
		 unsigned long long: sizeof(unsigned long long))

/* A flag setting the bool at p to v (true for MP_OPT_BOOL). */
#define MP_OPT_SET_BOOL(s, l, p, v, h)                                                         \
	{ .kind = MP_OPT_KIND_BOOL, .short_name = (s), .long_name = (l), .help = (h),          \
	  .value = MP_OPT_PTR(bool, p), .data = (v) }
#define MP_OPT_BOOL(s, l, p, h) MP_OPT_SET_BOOL(s, l, p, true, h)
/* A flag adding the bits b to the unsigned at p. */
#define MP_OPT_BIT(s, l, p, b, h)                                                              \
	{ .kind = MP_OPT_KIND_BIT, .short_name = (s), .long_name = (l), .help = (h),           \
	  .value = MP_OPT_PTR(unsigned, p), .data = (b) }
/* An option whose argument a goes to the const char * at p. */
#define MP_OPT_STRING(s, l, a, p, h)                                                           \
	{ .kind = MP_OPT_KIND_STRING, .short_name = (s), .long_name = (l), .argname = (a),     \
	  .help = (h), .value = MP_OPT_PTR(const char *, p) }
/*
 * An option whose argument is an integer from lo to hi, into the unsigned
 * integer at p (of any size hi fits in); anything else is a usage error
 * naming the option.
 */
#define MP_OPT_UINT(s, l, a, p, lo, hi, h)                                                     \
	{ .kind = MP_OPT_KIND_UINT, .short_name = (s), .long_name = (l), .argname = (a),       \
	  .help = (h), .value = (p), .size = MP_OPT_USIZE(p), .min = (lo), .max = (hi) }
/* The same for a number of bytes: digits, then nothing, k (KiB) or M (MiB). */
#define MP_OPT_BYTES(s, l, a, p, lo, hi, h)                                                    \
	{ .kind = MP_OPT_KIND_BYTES, .short_name = (s), .long_name = (l), .argname = (a),      \
	  .help = (h), .value = (p), .size = MP_OPT_USIZE(p), .min = (lo), .max = (hi) }
/* An option handled by fn, with ctx as opt->value and d as opt->data; a flag when a is NULL. */
#define MP_OPT_CALLBACK_DATA(s, l, a, ctx, fn_, d, h)                                          \
	{ .kind = MP_OPT_KIND_CALLBACK, .short_name = (s), .long_name = (l), .argname = (a),   \
	  .help = (h), .value = (ctx), .data = (d), .fn = (fn_) }
#define MP_OPT_CALLBACK(s, l, a, ctx, fn_, h) MP_OPT_CALLBACK_DATA(s, l, a, ctx, fn_, 0, h)
#define MP_OPT_END { .kind = MP_OPT_KIND_END }

enum mp_cmd_flags {
	/* Stop at the first non-option (everything after the program belongs to it). */
	MP_CMD_STOP_AT_NONOPT = 1 << 0,
};

/* A command, as its usage says; its options are a table of its cmd_NAME(). */
struct mp_cmd_spec {
	const char *name;      /* "stats" */
	const char *synopsis;  /* "[options] FILE" */
	const char *summary;   /* one line */
	unsigned flags;
	int min_args, max_args; /* operands after options; max -1 for any */
};

/*
 * Parse the options of argv (argv[0] is the command's name) by the table
 * opts, each value stored where its entry says, then check the number of
 * operands; returns the index of the first operand. Handles -h (usage on
 * stdout, exit 0), --help (the man page) and --list-opts (exit 0); a usage
 * error (an unknown option, a bad value, an operand too many or too few)
 * prints "memprof NAME: ..." and exits 2.
 */
int mp_parse_options(const struct mp_cmd_spec *spec, const struct mp_opt *opts, int argc,
		     char **argv);
/*
 * The same, only checking: it never prints or exits; a usage error (-h,
 * --help and --list-opts included) is appended to *err as one line and
 * gives -1. For checking a command's arguments before running it
 * (memprof run --reporter).
 */
int mp_parse_options_check(const struct mp_cmd_spec *spec, const struct mp_opt *opts, int argc,
			   char **argv, struct strbuf *err);
/* Print "usage: memprof NAME SYNOPSIS" and the option list. */
void mp_print_usage(const struct mp_cmd_spec *spec, const struct mp_opt *opts, FILE *out);
/* A usage error in a command: "memprof NAME: msg", then exit 2. */
void mp_usage_error(const struct mp_cmd_spec *spec, const char *fmt, ...)
	__attribute__((format(printf, 2, 3), noreturn));
/*
 * For callbacks: arg as an integer in [min, max] into *v; 0, or -1 with
 * "invalid value 'ARG' for OPT: ..." appended to *err.
 */
int mp_opt_parse_uint(const char *opt, const char *arg, uint64_t min, uint64_t max, uint64_t *v,
		      struct strbuf *err);
/* The same for a number of bytes, with k (KiB) or M (MiB) after its digits. */
int mp_opt_parse_bytes(const char *opt, const char *arg, uint64_t min, uint64_t max, uint64_t *v,
		       struct strbuf *err);
/* The operand arg as a process id, or a usage error (exit 2). */
pid_t mp_operand_pid(const struct mp_cmd_spec *spec, const char *arg);

/*
 * The entries of the options every tracking command (run, attach) shares,
 * bound to their values (struct mp_track_opts, lib/process/track.h).
 */
/* -o, -f and -q of a tracking command, bound to t; default_name is the capture's. */
#define MP_TRACK_OUTPUT_OPTS(t, default_name)                                                  \
	MP_OPT_STRING('o', "output", "FILE", &(t)->output,                                     \
		      "write the capture to FILE (default " default_name ")"),                  \
	MP_OPT_BOOL('f', "force", &(t)->force, "overwrite existing captures"),                \
	MP_OPT_BOOL('q', "quiet", &(t)->quiet, "print nothing but errors and warnings")
/* What the tracker records, bound to t; follow_fork_help says where children go. */
#define MP_TRACK_OPTS(t, follow_fork_help)                                                     \
	MP_OPT_BOOL(0, "follow-fork", &(t)->follow_fork, follow_fork_help),                    \
	MP_OPT_UINT(0, "memory-interval-ms", "N", &(t)->interval_ms, 1, 3600000,               \
		    "sample RSS and flush every N ms (default 10)"),                            \
	MP_OPT_UINT(0, "max-depth", "N", &(t)->max_depth, 1, 1024,                             \
		    "keep at most N frames per stack (default 128)"),                           \
	MP_OPT_SET_BOOL(0, "no-symbols", &(t)->symbols, false,                                 \
			"leave symbolization to report time"),                                  \
	MP_OPT_BOOL(0, "keep-addresses", &(t)->keep_addresses,                                 \
		    "record heap blocks' addresses (a larger capture)"),                        \
	MP_OPT_BOOL(0, "aggregate", &(t)->aggregate,                                           \
		    "write totals per stack instead of every event (peak, leaks, allocations; " \
		    "no temporary or temporal reports)"),                                       \
	MP_OPT_SET_BOOL(0, "no-python-frames", &(t)->python_frames, false,                     \
			"in a Python program, keep the interpreter's frames instead of the "    \
			"Python ones"),                                                         \
	MP_OPT_SAMPLING(&(t)->sampling_interval)
/*
 * --sampling-interval, bound to the unsigned at p: 0 (the default) records
 * every event; N a sample, one allocation per N bytes on average.
 */
#define MP_OPT_SAMPLING(p)                                                                     \
	MP_OPT_BYTES(0, "sampling-interval", "BYTES", (p), 0, MP_SAMPLING_INTERVAL_MAX,         \
		     "record a sample of the allocations, one per BYTES allocated on average "  \
		     "(k, M; 512k for services), and estimate the rest (default 0: every one)")
/* Show the man page of memprof-NAME (or memprof when name is NULL) and exit. */
void mp_show_manpage(const char *name) __attribute__((noreturn));

#endif
