/* memprof summary: which functions hold the memory, as memray's summary table. */
#include <config.h>
#include <stdio.h>

#include <unistd.h>

#include "cmd/cmd.h"
#include "cmd/options.h"
#include "cmd/report.h"
#include "lib/analysis/analysis.h"
#include "lib/report/render-text.h"
#include "lib/report/report.h"
#include "lib/report/summary.h"
#include "lib/util/usage.h"

static const struct mp_opt opts[] = {
	{ 's', 's', "sort-column", "N",
	  "sort by column N: 1 or 2 total memory, 3 or 4 own memory, 5 allocations (default 1)" },
	{ 'r', 'r', "max-rows", "N", "show at most N rows (default: what fits the terminal)" },
	MP_REPORT_VIEW_OPTS,
	MP_REPORT_NO_MMAP_OPT,
	MP_REPORT_FRAMES_OPTS,
	MP_REPORT_FULL_NAMES_OPT,
	{ 0 },
};

static const struct mp_cmd_spec spec = {
	.name = "summary",
	.synopsis = "[-s N] [-r N] [--leaks | --temporary-allocations | "
		    "--temporary-allocation-threshold N] [--no-mmap] FILE",
	.summary = "Show the functions holding the memory at the peak (or leaked, or temporary) as a table.",
	.opts = opts,
	.min_args = 1,
	.max_args = 1,
};

int cmd_summary(int argc, char **argv)
{
	struct mp_getopt g = { argc, argv, 0, NULL, 0 };
	struct mp_report_args args = MP_REPORT_ARGS_INIT;
	struct mp_analysis a;
	struct mp_summary s;
	struct mp_term term;
	struct strbuf out = STRBUF_INIT;
	uint64_t column = 1, rows = 0;
	int c;

	while ((c = mp_getopt(&spec, &g)) != -1) {
		if (mp_report_option(&spec, &args, c, g.arg))
			continue;
		if (c == 's')
			column = mp_opt_uint(&spec, "--sort-column", g.arg, MP_SUMMARY_MIN_COLUMN,
					     MP_SUMMARY_MAX_COLUMN);
		else if (c == 'r')
			rows = mp_opt_uint(&spec, "--max-rows", g.arg, 1, UINT32_MAX);
	}
	mp_report_term(&args, &term);
	if (!rows) {
		/* memray's default: the terminal's lines less five, at least ten. */
		rows = term.height > 15 ? (uint64_t)term.height - 5 : 10;
	}
	if (!mp_report_load(&a, argv[g.optind], &args, NULL)) {
		mp_analysis_release(&a);
		return MP_EXIT_FAILURE;
	}
	mp_summary_build(&s, &a, args.view);
	mp_summary_sort(&s, &a, (int)column);
	mp_report_view_title(&a, args.view, &out);
	strbuf_addch(&out, '\n');
	mp_summary_render(&s, &a, (int)column, (size_t)rows, &term, &out);
	if (s.n > rows)
		strbuf_addf(&out, "%zu more location%s (-r %zu shows them all)\n", s.n - (size_t)rows,
			    s.n - rows == 1 ? "" : "s", s.n);
	fwrite(out.buf, 1, out.len, stdout);
	strbuf_release(&out);
	mp_summary_release(&s);
	mp_analysis_release(&a);
	return MP_EXIT_OK;
}
