/* memprof live: a terminal view of a running process whose tracker was preloaded. */
#include <config.h>
#include <stdio.h>

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/options.h"
#include "cmd/report.h"
#include "lib/live/watch.h"
#include "lib/util/usage.h"

enum { OPT_NO_SYMBOLS = 256 };

static const struct mp_opt opts[] = {
	{ OPT_NO_SYMBOLS, 0, "no-symbols", NULL,
	  "show functions as module+offset (no symbolization while the program runs)" },
	MP_REPORT_FRAMES_OPTS,
	MP_REPORT_FULL_NAMES_OPT,
	{ 0 },
};

static const struct mp_cmd_spec spec = {
	.name = "live",
	.synopsis = "[options] PID",
	.summary = "Show, in the terminal, where the memory of the running process PID is, refreshed "
		   "every second; its tracker was preloaded (MEMPROF_OUTPUT, or memprof run "
		   "--paused). No ptrace.",
	.opts = opts,
	.min_args = 1,
	.max_args = 1,
};

int cmd_live(int argc, char **argv)
{
	struct mp_getopt g = { argc, argv, 0, NULL, 0 };
	struct mp_live_watch_opts o = MP_LIVE_WATCH_OPTS_INIT;
	struct mp_report_args args = MP_REPORT_ARGS_INIT;
	struct strbuf err = STRBUF_INIT, warn = STRBUF_INIT;
	char *end, *line, *next;
	long pid;
	int c;
	while ((c = mp_getopt(&spec, &g)) != -1)
		if (c == OPT_NO_SYMBOLS)
			o.symbolize = false;
		else
			mp_report_option(&spec, &args, c, g.arg);
	o.flags = args.flags;
	o.full_names = args.full_names;
	errno = 0;
	pid = strtol(argv[g.optind], &end, 10);
	if (errno || *end || pid <= 0 || pid > INT_MAX)
		mp_usage_error(&spec, "invalid process id '%s'", argv[g.optind]);
	if (mp_live_watch((pid_t)pid, &o, &err, &warn) < 0)
		die("%s", err.buf);
	for (line = warn.buf; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		warning("%s", line);
	}
	strbuf_release(&err);
	strbuf_release(&warn);
	return MP_EXIT_OK;
}
