/* memprof tree: the call tree of the biggest allocations, printed as text. */
#include <config.h>
#include <stdio.h>

#include <unistd.h>

#include "cmd/cmd.h"
#include "cmd/options.h"
#include "cmd/report.h"
#include "lib/analysis/analysis.h"
#include "lib/report/render-text.h"
#include "lib/report/report.h"
#include "lib/report/tree.h"
#include "lib/util/usage.h"

static const struct mp_cmd_spec spec = {
	.name = "tree",
	.synopsis = "[-b N] [--leaks | --temporary-allocations | "
		    "--temporary-allocation-threshold N] [--no-mmap] [--children] [--merge] FILE...",
	.summary = "Show the call tree of the biggest allocations at the peak (or leaked, or temporary).",
	.min_args = 1,
	.max_args = -1,
};

int cmd_tree(int argc, char **argv)
{
	struct mp_report_args args = MP_REPORT_ARGS_INIT;
	uint64_t biggest = 10;
	struct mp_tree_opts o = { false };
	const struct mp_opt opts[] = {
		MP_OPT_UINT('b', "biggest-allocs", "N", &biggest, 1, UINT32_MAX,
			    "show the N biggest allocation stacks, fold the others into one line "
			    "(default 10)"),
		MP_OPT_BOOL(0, "whole-paths", &o.whole_paths,
			    "print every frame of each path, with no \"... N more ...\""),
		MP_REPORT_VIEW_OPTS(&args),
		MP_REPORT_OPTS(&args),
		MP_REPORT_FULL_NAMES_OPT(&args),
		MP_OPT_END,
	};
	int first = mp_parse_options(&spec, opts, argc, argv);
	struct mp_analysis a;
	struct mp_term term;
	struct strbuf out = STRBUF_INIT;

	if (!mp_report_load_all(&a, (const char *const *)argv + first, (size_t)(argc - first), &args,
				NULL)) {
		mp_analysis_release(&a);
		return MP_EXIT_FAILURE;
	}
	mp_report_term(&args, &term);
	mp_report_view_title(&a, args.view, &out);
	strbuf_addch(&out, '\n');
	mp_tree_render(&a, args.view, (size_t)biggest, &o, &term, &out);
	fwrite(out.buf, 1, out.len, stdout);
	strbuf_release(&out);
	mp_analysis_release(&a);
	return MP_EXIT_OK;
}
