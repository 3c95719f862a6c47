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

enum { OPT_WHOLE_PATHS = 256 };

static const struct mp_opt opts[] = {
	{ 'b', 'b', "biggest-allocs", "N",
	  "show the N biggest allocation stacks, fold the others into one line (default 10)" },
	{ OPT_WHOLE_PATHS, 0, "whole-paths", NULL,
	  "print every frame of each path, with no \"... N more ...\"" },
	MP_REPORT_VIEW_OPTS,
	MP_REPORT_NO_MMAP_OPT,
	MP_REPORT_ALL_FRAMES_OPT,
	MP_REPORT_FULL_NAMES_OPT,
	{ 0 },
};

static const struct mp_cmd_spec spec = {
	.name = "tree",
	.synopsis = "[-b N] [--leaks | --temporary-allocations | "
		    "--temporary-allocation-threshold N] [--no-mmap] FILE",
	.summary = "Show the call tree of the biggest allocations at the peak (or leaked, or temporary).",
	.opts = opts,
	.min_args = 1,
	.max_args = 1,
};

int cmd_tree(int argc, char **argv)
{
	struct mp_getopt g = { argc, argv, 0, NULL, 0 };
	struct mp_report_args args = MP_REPORT_ARGS_INIT;
	struct mp_analysis a;
	struct mp_term term;
	struct strbuf out = STRBUF_INIT;
	struct mp_tree_opts o = { false };
	uint64_t biggest = 10;
	int c;

	while ((c = mp_getopt(&spec, &g)) != -1) {
		if (mp_report_option(&spec, &args, c, g.arg))
			continue;
		if (c == 'b')
			biggest = mp_opt_uint(&spec, "--biggest-allocs", g.arg, 1, UINT32_MAX);
		else if (c == OPT_WHOLE_PATHS)
			o.whole_paths = true;
	}
	if (!mp_report_load(&a, argv[g.optind], &args, NULL)) {
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
