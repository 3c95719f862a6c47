/* Option parsing shared by all commands. */
#include <config.h>
#include <stdio.h>
#include "cmd/options.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/util/paths.h"
#include "lib/util/strbuf.h"
#include "lib/util/usage.h"
#include "lib/util/xalloc.h"

enum { OPT_HELP = 1000, OPT_LIST_OPTS };

void mp_print_usage(const struct mp_cmd_spec *spec, FILE *out)
{
	fprintf(out, "usage: memprof %s %s\n", spec->name, spec->synopsis);
	if (spec->summary)
		fprintf(out, "\n%s\n", spec->summary);
	fputs("\noptions:\n", out);
	for (const struct mp_opt *o = spec->opts; o && o->id; o++) {
		struct strbuf sb = STRBUF_INIT;
		if (o->short_name)
			strbuf_addf(&sb, "-%c", o->short_name);
		if (o->short_name && o->long_name)
			strbuf_addstr(&sb, ", ");
		if (o->long_name)
			strbuf_addf(&sb, "--%s", o->long_name);
		if (o->argname)
			strbuf_addf(&sb, " %s", o->argname);
		fprintf(out, "  %-32s %s\n", sb.buf, o->help);
		strbuf_release(&sb);
	}
	fprintf(out, "  %-32s %s\n", "-h", "show this summary");
	fprintf(out, "  %-32s %s\n", "--help", "show the manual page");
}

void mp_usage_error(const struct mp_cmd_spec *spec, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fflush(stdout);
	fprintf(stderr, "memprof %s: %s\n", spec->name, msg);
	fprintf(stderr, "usage: memprof %s %s (see 'memprof %s -h')\n", spec->name, spec->synopsis,
		spec->name);
	exit(MP_EXIT_USAGE);
}

void mp_show_manpage(const char *name)
{
	char *page = name ? xasprintf("memprof-%s", name) : xstrdup("memprof");
	char *file = xasprintf("%s.1", page);
	char *path = mp_manpage_path(file);
	fflush(stdout);
	if (path)
		execlp("man", "man", "-l", path, (char *)NULL);
	else
		execlp("man", "man", page, (char *)NULL);
	die("cannot show the manual page '%s': 'man' %s", page,
	    errno == ENOENT ? "is not installed (apt-get install man-db)" : strerror(errno));
}

static void list_opts(const struct mp_cmd_spec *spec)
{
	for (const struct mp_opt *o = spec->opts; o && o->id; o++) {
		if (o->long_name)
			printf("--%s%s\n", o->long_name, o->argname ? "=" : "");
		if (o->short_name)
			printf("-%c\n", o->short_name);
	}
	puts("-h");
	puts("--help");
}

static int count_opts(const struct mp_cmd_spec *spec)
{
	int n = 0;
	for (const struct mp_opt *o = spec->opts; o && o->id; o++)
		n++;
	return n;
}

/* A usage error: exit 2, or only recorded when checking. */
static int getopt_error(const struct mp_cmd_spec *spec, struct strbuf *err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int getopt_error(const struct mp_cmd_spec *spec, struct strbuf *err, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!err)
		mp_usage_error(spec, "%s", msg);
	strbuf_addstr(err, msg);
	return MP_GETOPT_ERROR;
}

/* mp_getopt(), or only checking when err is set. */
static int getopt_next(const struct mp_cmd_spec *spec, struct mp_getopt *g, struct strbuf *err)
{
	int n = count_opts(spec), c;
	struct option *longopts = xcalloc((size_t)n + 3, sizeof(*longopts));
	struct strbuf shortopts = STRBUF_INIT;
	int li = 0, longindex = -1;

	strbuf_addstr(&shortopts, (spec->flags & MP_CMD_STOP_AT_NONOPT) ? "+:h" : ":h");
	for (const struct mp_opt *o = spec->opts; o && o->id; o++) {
		if (o->short_name) {
			strbuf_addch(&shortopts, o->short_name);
			if (o->argname)
				strbuf_addch(&shortopts, ':');
		}
		if (o->long_name) {
			longopts[li].name = o->long_name;
			longopts[li].has_arg = o->argname ? required_argument : no_argument;
			longopts[li].val = o->id;
			li++;
		}
	}
	longopts[li++] = (struct option){ "help", no_argument, NULL, OPT_HELP };
	longopts[li++] = (struct option){ "list-opts", no_argument, NULL, OPT_LIST_OPTS };

	if (!g->started) {
		g->started = 1;
		optind = 0; /* full re-initialisation of getopt's state */
		opterr = 0;
	}
	c = getopt_long(g->argc, g->argv, shortopts.buf, longopts, &longindex);
	g->arg = optarg;
	strbuf_release(&shortopts);
	free(longopts);
	switch (c) {
	case -1:
		g->optind = optind;
		{
			int operands = g->argc - optind;
			if (operands < spec->min_args)
				return getopt_error(spec, err, "%s",
						    spec->min_args - operands == 1 && operands == 0
							    ? "missing argument"
							    : "missing arguments");
			if (spec->max_args >= 0 && operands > spec->max_args)
				return getopt_error(spec, err, "unexpected argument '%s'",
						    g->argv[optind + spec->max_args]);
		}
		return -1;
	case 'h':
	case OPT_HELP:
	case OPT_LIST_OPTS:
		if (err)
			return getopt_error(spec, err, "option '%s' only shows help",
					    g->argv[optind - 1]);
		if (c == OPT_HELP)
			mp_show_manpage(spec->name);
		if (c == 'h')
			mp_print_usage(spec, stdout);
		else
			list_opts(spec);
		exit(fflush(stdout) ? MP_EXIT_FAILURE : MP_EXIT_OK);
	case '?':
		if (optopt)
			return getopt_error(spec, err, "unknown option '-%c'", optopt);
		return getopt_error(spec, err, "unknown option '%s'", g->argv[optind - 1]);
	case ':':
		if (optind > 0 && optind <= g->argc && !strncmp(g->argv[optind - 1], "--", 2))
			return getopt_error(spec, err, "option '%s' needs an argument",
					    g->argv[optind - 1]);
		if (optopt && optopt < 256)
			return getopt_error(spec, err, "option '-%c' needs an argument", optopt);
		return getopt_error(spec, err, "option '%s' needs an argument", g->argv[optind - 1]);
	}
	return c;
}

int mp_getopt(const struct mp_cmd_spec *spec, struct mp_getopt *g)
{
	return getopt_next(spec, g, NULL);
}

int mp_getopt_check(const struct mp_cmd_spec *spec, struct mp_getopt *g, struct strbuf *err)
{
	return getopt_next(spec, g, err);
}

int mp_opt_uint_check(const char *opt, const char *arg, uint64_t min, uint64_t max,
		      uint64_t *v, struct strbuf *err)
{
	char *end;
	uintmax_t u;
	errno = 0;
	if (!arg || !*arg || *arg == '-' || *arg == '+')
		goto bad;
	u = strtoumax(arg, &end, 10);
	if (errno || *end || u < min || u > max)
		goto bad;
	*v = (uint64_t)u;
	return 0;
bad:
	if (max == UINT64_MAX)
		strbuf_addf(err, "invalid value '%s' for %s: expected an integer of at least %" PRIu64,
			    arg ? arg : "", opt, min);
	else
		strbuf_addf(err, "invalid value '%s' for %s: expected an integer from %" PRIu64
				 " to %" PRIu64, arg ? arg : "", opt, min, max);
	return -1;
}

uint64_t mp_opt_uint(const struct mp_cmd_spec *spec, const char *opt, const char *arg,
		     uint64_t min, uint64_t max)
{
	struct strbuf err = STRBUF_INIT;
	uint64_t v = 0;
	if (mp_opt_uint_check(opt, arg, min, max, &v, &err) < 0)
		mp_usage_error(spec, "%s", err.buf);
	strbuf_release(&err);
	return v;
}

bool mp_track_option(const struct mp_cmd_spec *spec, int c, const char *arg,
		     struct mp_track_opts *t)
{
	switch (c) {
	case 'o': t->output = arg; return true;
	case 'f': t->force = true; return true;
	case 'q': t->quiet = true; return true;
	case MP_OPT_FOLLOW_FORK: t->follow_fork = true; return true;
	case MP_OPT_INTERVAL:
		t->interval_ms = (unsigned)mp_opt_uint(spec, "--memory-interval-ms", arg, 1, 3600000);
		return true;
	case MP_OPT_MAX_DEPTH:
		t->max_depth = (unsigned)mp_opt_uint(spec, "--max-depth", arg, 1, 1024);
		return true;
	case MP_OPT_NO_SYMBOLS: t->symbols = false; return true;
	case MP_OPT_KEEP_ADDRESSES: t->keep_addresses = true; return true;
	case MP_OPT_AGGREGATE: t->aggregate = true; return true;
	case MP_OPT_NO_PYTHON_FRAMES: t->python_frames = false; return true;
	default: return false;
	}
}
