/* memprof ctl: start, stop, snapshot or ask after the capture of a tracker already in a process. */
#include <config.h>
#include <stdio.h>

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/options.h"
#include "lib/process/ctl.h"
#include "lib/util/usage.h"

enum { OPT_TIMEOUT = 256, OPT_AGGREGATE };

static const struct mp_opt opts[] = {
	{ OPT_TIMEOUT, 0, "timeout", "SECONDS", "wait at most SECONDS for the answer (default 30)" },
	{ OPT_AGGREGATE, 0, "aggregate", NULL,
	  "with start: an aggregated capture (totals per stack; under memprof run --paused)" },
	{ 0 },
};

static const struct mp_cmd_spec spec = {
	.name = "ctl",
	.synopsis = "[--timeout SECONDS] [--aggregate] PID start|stop|snapshot|status",
	.summary = "Start, stop or snapshot the capture of a program whose tracker was preloaded "
		   "(MEMPROF_OUTPUT, or memprof run --paused), without ptrace.",
	.opts = opts,
	.min_args = 2,
	.max_args = 2,
};

int cmd_ctl(int argc, char **argv)
{
	static const char *const requests[] = { "start", "stop", "snapshot", "status" };
	struct mp_getopt g = { argc, argv, 0, NULL, 0 };
	struct strbuf err = STRBUF_INIT, reply = STRBUF_INIT;
	unsigned timeout = 30;
	const char *request;
	bool known = false, aggregate = false;
	long pid;
	char *end;
	int c, r;
	while ((c = mp_getopt(&spec, &g)) != -1) {
		if (c == OPT_TIMEOUT)
			timeout = (unsigned)mp_opt_uint(&spec, "--timeout", g.arg, 1, 86400);
		else if (c == OPT_AGGREGATE)
			aggregate = true;
	}
	errno = 0;
	pid = strtol(argv[g.optind], &end, 10);
	if (errno || *end || pid <= 0 || pid > INT_MAX)
		mp_usage_error(&spec, "invalid process id '%s'", argv[g.optind]);
	request = argv[g.optind + 1];
	for (size_t i = 0; i < sizeof(requests) / sizeof(requests[0]); i++)
		known |= !strcmp(request, requests[i]);
	if (!known)
		mp_usage_error(&spec, "unknown request '%s' (start, stop, snapshot or status)", request);
	if (aggregate && strcmp(request, "start"))
		mp_usage_error(&spec, "--aggregate goes with start, not with %s", request);
	if (aggregate)
		request = "start aggregate";
	r = mp_ctl_ask((pid_t)pid, request, (int)timeout * 1000, &reply, &err);
	if (r < 0)
		die("%s", err.buf);
	if (r > 0)
		die("process %ld: %s", pid, err.buf);
	printf("process %ld: %s\n", pid, reply.buf);
	strbuf_release(&reply);
	strbuf_release(&err);
	return MP_EXIT_OK;
}
