/* The reporters' shared steps: view options and loading a capture. */
#include <config.h>
#include <stdio.h>
#include "cmd/report.h"

#include <string.h>
#include <unistd.h>

#include "lib/progress.h"
#include "lib/strbuf.h"
#include "lib/usage.h"

static void set_view(const struct mp_cmd_spec *spec, struct mp_report_args *args,
		     enum mp_view view, const char *opt)
{
	if (args->view_opt && strcmp(args->view_opt, opt))
		mp_usage_error(spec, "options '%s' and '%s' cannot be combined", args->view_opt, opt);
	args->view = view;
	args->view_opt = opt;
}

bool mp_report_option(const struct mp_cmd_spec *spec, struct mp_report_args *args, int id,
		      const char *arg)
{
	switch (id) {
	case MP_OPT_LEAKS:
		set_view(spec, args, MP_VIEW_LEAKS, "--leaks");
		return true;
	case MP_OPT_TEMPORARY:
		set_view(spec, args, MP_VIEW_TEMPORARY, "--temporary-allocations");
		args->threshold = 1;
		return true;
	case MP_OPT_THRESHOLD:
		args->threshold = mp_opt_uint(spec, "--temporary-allocation-threshold", arg, 0,
					      UINT32_MAX);
		set_view(spec, args, MP_VIEW_TEMPORARY, "--temporary-allocation-threshold");
		return true;
	case MP_OPT_NO_MMAP:
		args->flags |= MP_ANALYSIS_NO_MMAP;
		return true;
	}
	return false;
}

bool mp_report_load(struct mp_analysis *a, const char *path, const struct mp_report_args *args,
		    const struct mp_analysis_opts *o)
{
	struct mp_analysis_opts opts = MP_ANALYSIS_OPTS_INIT;
	struct mp_progress progress;
	struct strbuf msg = STRBUF_INIT;
	int ret;

	if (o)
		opts = *o;
	opts.flags |= args->flags;
	opts.temporary_threshold = args->threshold;
	mp_progress_init(&progress, STDERR_FILENO, "Analysing");
	opts.progress = &progress;
	mp_analysis_init(a, &opts);
	ret = mp_analysis_read_file(a, path, &msg);
	a->opts.progress = NULL;
	if (ret < 0)
		error("%s", msg.buf);
	else if (ret > 0)
		warning("%s", msg.buf);
	strbuf_release(&msg);
	return ret >= 0;
}
