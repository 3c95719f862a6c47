/* memprof detach: stop the tracking a `memprof attach` started, and wait for its capture. */
#include <config.h>
#include <stdio.h>

#include <errno.h>
#include <limits.h>
#include <stdlib.h>

#include "cmd/cmd.h"
#include "cmd/options.h"
#include "lib/process/attachctl.h"
#include "lib/util/usage.h"

enum { OPT_TIMEOUT = 256 };

static const struct mp_opt opts[] = {
	{ 'q', 'q', "quiet", NULL, "print nothing but errors" },
	{ OPT_TIMEOUT, 0, "timeout", "SECONDS", "wait at most SECONDS for the capture (default 30)" },
	{ 0 },
};

static const struct mp_cmd_spec spec = {
	.name = "detach",
	.synopsis = "[options] PID",
	.summary = "Stop the tracking that 'memprof attach PID' started; the process runs on, "
		   "and the capture is finished.",
	.opts = opts,
	.min_args = 1,
	.max_args = 1,
};

int cmd_detach(int argc, char **argv)
{
	struct mp_getopt g = { argc, argv, 0, NULL, 0 };
	struct strbuf err = STRBUF_INIT, capture = STRBUF_INIT;
	unsigned timeout = 30;
	bool quiet = false;
	long pid;
	char *end;
	int c;
	while ((c = mp_getopt(&spec, &g)) != -1) {
		if (c == 'q')
			quiet = true;
		else if (c == OPT_TIMEOUT)
			timeout = (unsigned)mp_opt_uint(&spec, "--timeout", g.arg, 1, 86400);
	}
	errno = 0;
	pid = strtol(argv[g.optind], &end, 10);
	if (errno || *end || pid <= 0 || pid > INT_MAX)
		mp_usage_error(&spec, "invalid process id '%s'", argv[g.optind]);
	if (mp_attachctl_detach((pid_t)pid, timeout * 1000, true, &capture, &err) < 0)
		die("%s", err.buf);
	if (!quiet)
		fprintf(stderr, "memprof: detached from process %ld; capture in '%s'\n", pid, capture.buf);
	strbuf_release(&capture);
	strbuf_release(&err);
	return MP_EXIT_OK;
}
