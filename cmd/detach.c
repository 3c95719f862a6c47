/* memprof detach: stop the tracking a `memprof attach` started, and wait for its capture. */
#include <config.h>
#include <stdio.h>


#include "cmd/cmd.h"
#include "cmd/options.h"
#include "lib/process/attachctl.h"
#include "lib/util/usage.h"

static const struct mp_cmd_spec spec = {
	.name = "detach",
	.synopsis = "[options] PID",
	.summary = "Stop the tracking that 'memprof attach PID' started; the process runs on, "
		   "and the capture is finished.",
	.min_args = 1,
	.max_args = 1,
};

int cmd_detach(int argc, char **argv)
{
	unsigned timeout = 30;
	bool quiet = false;
	const struct mp_opt opts[] = {
		MP_OPT_BOOL('q', "quiet", &quiet, "print nothing but errors"),
		MP_OPT_UINT(0, "timeout", "SECONDS", &timeout, 1, 86400,
			    "wait at most SECONDS for the capture (default 30)"),
		MP_OPT_END,
	};
	int first = mp_parse_options(&spec, opts, argc, argv);
	long pid = mp_operand_pid(&spec, argv[first]);
	struct strbuf err = STRBUF_INIT, capture = STRBUF_INIT;

	if (mp_attachctl_detach((pid_t)pid, timeout * 1000, true, &capture, &err) < 0)
		die("%s", err.buf);
	if (!quiet)
		fprintf(stderr, "memprof: detached from process %ld; capture in '%s'\n", pid, capture.buf);
	strbuf_release(&capture);
	strbuf_release(&err);
	return MP_EXIT_OK;
}
