/* memprof live: a terminal view of a running process whose tracker was preloaded. */
#include <config.h>
#include <stdio.h>

#include <string.h>

#include "cmd/cmd.h"
#include "cmd/options.h"
#include "cmd/report.h"
#include "lib/live/watch.h"
#include "lib/util/usage.h"

static const struct mp_cmd_spec spec = {
	.name = "live",
	.synopsis = "[options] PID",
	.summary = "Show, in the terminal, where the memory of the running process PID is, refreshed "
		   "every second; its tracker was preloaded (MEMPROF_OUTPUT, or memprof run "
		   "--paused). No ptrace.",
	.min_args = 1,
	.max_args = 1,
};

int cmd_live(int argc, char **argv)
{
	struct mp_live_watch_opts o = MP_LIVE_WATCH_OPTS_INIT;
	struct mp_report_args args = MP_REPORT_ARGS_INIT;
	const struct mp_opt opts[] = {
		MP_OPT_SET_BOOL(0, "no-symbols", &o.symbolize, false,
				"show functions as module+offset (no symbolization while the program "
				"runs)"),
		MP_OPT_BIT(0, "all-frames", &args.flags, MP_ANALYSIS_ALL_FRAMES,
			   "show every frame, a Python program's interpreter frames too"),
		MP_REPORT_RAW_LEAF_OPT(&args),
		MP_REPORT_FULL_NAMES_OPT(&args),
		MP_OPT_END,
	};
	int first = mp_parse_options(&spec, opts, argc, argv);
	pid_t pid = mp_operand_pid(&spec, argv[first]);
	struct strbuf err = STRBUF_INIT, warn = STRBUF_INIT;
	char *line, *next;

	o.flags = args.flags;
	o.full_names = args.full_names;
	if (mp_live_watch(pid, &o, &err, &warn) < 0)
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
