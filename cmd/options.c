/* Option parsing shared by all commands. */
#include <config.h>
#include <stdio.h>
#include "cmd/options.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/util/paths.h"
#include "lib/util/strbuf.h"
#include "lib/util/usage.h"
#include "lib/util/xalloc.h"

/* getopt_long's values: -h and its own long options, then the table's long options by index. */
enum { OPT_HELP = 1000, OPT_LIST_OPTS, OPT_LONG_BASE };

void mp_print_usage(const struct mp_cmd_spec *spec, const struct mp_opt *opts, FILE *out)
{
	fprintf(out, "usage: memprof %s %s\n", spec->name, spec->synopsis);
	if (spec->summary)
		fprintf(out, "\n%s\n", spec->summary);
	fputs("\noptions:\n", out);
	for (const struct mp_opt *o = opts; o->kind; o++) {
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

static void list_opts(const struct mp_opt *opts)
{
	for (const struct mp_opt *o = opts; o->kind; o++) {
		if (o->long_name)
			printf("--%s%s\n", o->long_name, o->argname ? "=" : "");
		if (o->short_name)
			printf("-%c\n", o->short_name);
	}
	puts("-h");
	puts("--help");
}

int mp_opt_parse_uint(const char *opt, const char *arg, uint64_t min, uint64_t max, uint64_t *v,
		      struct strbuf *err)
{
	char *end;
	uintmax_t u;
	errno = 0;
	/* Digits only: strtoumax() would take a sign or leading blanks too. */
	if (!arg || !isdigit((unsigned char)*arg))
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

pid_t mp_operand_pid(const struct mp_cmd_spec *spec, const char *arg)
{
	char *end;
	long pid;
	errno = 0;
	pid = strtol(arg, &end, 10);
	if (errno || *end || end == arg || pid <= 0 || pid > INT_MAX)
		mp_usage_error(spec, "invalid process id '%s'", arg);
	return (pid_t)pid;
}

/* Store the value of option o, given with arg; 0, or -1 with the usage error in *err. */
static int apply(const struct mp_opt *o, const char *arg, struct strbuf *err)
{
	switch (o->kind) {
	case MP_OPT_KIND_BOOL:
		*(bool *)o->value = o->data != 0;
		return 0;
	case MP_OPT_KIND_BIT:
		*(unsigned *)o->value |= (unsigned)o->data;
		return 0;
	case MP_OPT_KIND_STRING:
		*(const char **)o->value = arg;
		return 0;
	case MP_OPT_KIND_UINT:
	case MP_OPT_KIND_BYTES: {
		char name[64];
		uint64_t v;
		if (o->long_name)
			snprintf(name, sizeof(name), "--%s", o->long_name);
		else
			snprintf(name, sizeof(name), "-%c", o->short_name);
		if (o->kind == MP_OPT_KIND_BYTES) {
			if (mp_opt_parse_bytes(name, arg, o->min, o->max, &v, err) < 0)
				return -1;
		} else if (mp_opt_parse_uint(name, arg, o->min, o->max, &v, err) < 0) {
			return -1;
		}
		if (o->size == sizeof(uint64_t)) {
			memcpy(o->value, &v, sizeof(v));
		} else if (o->size == sizeof(uint32_t) && o->max <= UINT32_MAX) {
			uint32_t u = (uint32_t)v;
			memcpy(o->value, &u, sizeof(u));
		} else {
			BUG("option '%s': %zu bytes cannot hold up to %" PRIu64, name, o->size, o->max);
		}
		return 0;
	}
	case MP_OPT_KIND_CALLBACK:
		return o->fn(o, arg, err);
	case MP_OPT_KIND_END:
		break;
	}
	BUG("option '%s' of kind %d", o->long_name ? o->long_name : "?", (int)o->kind);
}

int mp_opt_parse_bytes(const char *opt, const char *arg, uint64_t min, uint64_t max, uint64_t *v,
		       struct strbuf *err)
{
	uint64_t u;
	if (arg && mp_settings_bytes(arg, strlen(arg), &u) == 0 && u >= min && u <= max) {
		*v = u;
		return 0;
	}
	strbuf_addf(err, "invalid value '%s' for %s: expected a number of bytes from %" PRIu64
			 " to %" PRIu64 " (k and M for KiB and MiB)", arg ? arg : "", opt, min, max);
	return -1;
}

/*
 * The parse of mp_parse_options(): the first operand's index, or -1 with
 * the usage error in *err. Exits only for -h, --help and --list-opts, and
 * only when not checking.
 */
static int parse(const struct mp_cmd_spec *spec, const struct mp_opt *opts, int argc, char **argv,
		 bool checking, struct strbuf *err)
{
	struct strbuf shortopts = STRBUF_INIT;
	struct option *longopts;
	int n = 0, li = 0, c, ret = -1;

	for (const struct mp_opt *o = opts; o->kind; o++)
		n++;
	longopts = xcalloc((size_t)n + 3, sizeof(*longopts));
	strbuf_addstr(&shortopts, (spec->flags & MP_CMD_STOP_AT_NONOPT) ? "+:h" : ":h");
	for (int i = 0; i < n; i++) {
		const struct mp_opt *o = &opts[i];
		if (o->short_name) {
			strbuf_addch(&shortopts, (char)o->short_name);
			if (o->argname)
				strbuf_addch(&shortopts, ':');
		}
		if (o->long_name)
			longopts[li++] = (struct option){ o->long_name,
							  o->argname ? required_argument : no_argument,
							  NULL, OPT_LONG_BASE + i };
	}
	longopts[li++] = (struct option){ "help", no_argument, NULL, OPT_HELP };
	longopts[li++] = (struct option){ "list-opts", no_argument, NULL, OPT_LIST_OPTS };

	optind = 0; /* full re-initialisation of getopt's state */
	opterr = 0;
	while ((c = getopt_long(argc, argv, shortopts.buf, longopts, NULL)) != -1) {
		const struct mp_opt *o = NULL;
		switch (c) {
		case 'h':
		case OPT_HELP:
		case OPT_LIST_OPTS:
			if (checking) {
				strbuf_addf(err, "option '%s' only shows help", argv[optind - 1]);
				goto out;
			}
			if (c == OPT_HELP)
				mp_show_manpage(spec->name);
			if (c == 'h')
				mp_print_usage(spec, opts, stdout);
			else
				list_opts(opts);
			exit(fflush(stdout) ? MP_EXIT_FAILURE : MP_EXIT_OK);
		case '?':
			/* optopt: 0 for an unknown long option, the value of one given an argument */
			if (optopt >= OPT_HELP)
				strbuf_addf(err, "option '--%s' takes no argument",
					    optopt == OPT_HELP	       ? "help"
					    : optopt == OPT_LIST_OPTS ? "list-opts"
								      : opts[optopt - OPT_LONG_BASE].long_name);
			else if (optopt)
				strbuf_addf(err, "unknown option '-%c'", optopt);
			else
				strbuf_addf(err, "unknown option '%s'", argv[optind - 1]);
			goto out;
		case ':':
			if (optind > 0 && optind <= argc && !strncmp(argv[optind - 1], "--", 2))
				strbuf_addf(err, "option '%s' needs an argument", argv[optind - 1]);
			else if (optopt && optopt < 256)
				strbuf_addf(err, "option '-%c' needs an argument", optopt);
			else
				strbuf_addf(err, "option '%s' needs an argument", argv[optind - 1]);
			goto out;
		}
		if (c >= OPT_LONG_BASE && c < OPT_LONG_BASE + n)
			o = &opts[c - OPT_LONG_BASE];
		for (int i = 0; !o && i < n; i++)
			if (opts[i].short_name == c)
				o = &opts[i];
		if (!o)
			BUG("getopt_long gave '%d', which is in no option", c);
		if (apply(o, optarg, err) < 0)
			goto out;
	}
	if (argc - optind < spec->min_args)
		strbuf_addstr(err, spec->min_args - (argc - optind) == 1 && argc == optind
					   ? "missing argument"
					   : "missing arguments");
	else if (spec->max_args >= 0 && argc - optind > spec->max_args)
		strbuf_addf(err, "unexpected argument '%s'", argv[optind + spec->max_args]);
	else
		ret = optind;
out:
	strbuf_release(&shortopts);
	free(longopts);
	return ret;
}

int mp_parse_options(const struct mp_cmd_spec *spec, const struct mp_opt *opts, int argc,
		     char **argv)
{
	struct strbuf err = STRBUF_INIT;
	int first = parse(spec, opts, argc, argv, false, &err);
	if (first < 0)
		mp_usage_error(spec, "%s", err.buf);
	strbuf_release(&err);
	return first;
}

int mp_parse_options_check(const struct mp_cmd_spec *spec, const struct mp_opt *opts, int argc,
			   char **argv, struct strbuf *err)
{
	return parse(spec, opts, argc, argv, true, err);
}
