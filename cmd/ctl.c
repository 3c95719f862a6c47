/* memprof ctl: start, stop, snapshot or ask after the capture of a tracker already in a process. */
#include <config.h>
#include <stdio.h>

#include <string.h>

#include "cmd/cmd.h"
#include "cmd/options.h"
#include "lib/process/ctl.h"
#include "lib/util/usage.h"

static const struct mp_cmd_spec spec = {
	.name = "ctl",
	.synopsis = "[--timeout SECONDS] [--aggregate] [--sampling-interval BYTES] PID "
		    "start|stop|snapshot|status",
	.summary = "Start, stop or snapshot the capture of a program whose tracker was preloaded "
		   "(MEMPROF_OUTPUT, or memprof run --paused), without ptrace.",
	.min_args = 2,
	.max_args = 2,
};

int cmd_ctl(int argc, char **argv)
{
	static const char *const requests[] = { "start", "stop", "snapshot", "status" };
	unsigned timeout = 30;
	bool aggregate = false;
	unsigned sampling = UINT32_MAX; /* (not given: the tracker's own) */
	const struct mp_opt opts[] = {
		MP_OPT_UINT(0, "timeout", "SECONDS", &timeout, 1, 86400,
			    "wait at most SECONDS for the answer (default 30)"),
		MP_OPT_BOOL(0, "aggregate", &aggregate,
			    "with start: an aggregated capture (totals per stack; under memprof run "
			    "--paused)"),
		MP_OPT_SAMPLING(&sampling),
		MP_OPT_END,
	};
	int first = mp_parse_options(&spec, opts, argc, argv), r;
	long pid = mp_operand_pid(&spec, argv[first]);
	const char *request = argv[first + 1];
	struct strbuf err = STRBUF_INIT, reply = STRBUF_INIT, req = STRBUF_INIT;
	bool known = false;

	for (size_t i = 0; i < sizeof(requests) / sizeof(requests[0]); i++)
		known |= !strcmp(request, requests[i]);
	if (!known)
		mp_usage_error(&spec, "unknown request '%s' (start, stop, snapshot or status)", request);
	if (aggregate && strcmp(request, "start"))
		mp_usage_error(&spec, "--aggregate goes with start, not with %s", request);
	if (sampling != UINT32_MAX && strcmp(request, "start"))
		mp_usage_error(&spec, "--sampling-interval goes with start, not with %s", request);
	strbuf_addstr(&req, request);
	if (aggregate)
		strbuf_addstr(&req, " aggregate");
	if (sampling != UINT32_MAX)
		strbuf_addf(&req, " %s=%u", mp_settings_name(MP_SET_SAMPLING_INTERVAL), sampling);
	r = mp_ctl_ask((pid_t)pid, req.buf, (int)timeout * 1000, &reply, &err);
	if (r < 0)
		die("%s", err.buf);
	if (r > 0)
		die("process %ld: %s", pid, err.buf);
	printf("process %ld: %s\n", pid, reply.buf);
	strbuf_release(&reply);
	strbuf_release(&err);
	strbuf_release(&req);
	return MP_EXIT_OK;
}
