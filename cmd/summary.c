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

static const struct mp_cmd_spec spec = {
	.name = "summary",
	.synopsis = "[-s N] [-r N] [--leaks | --temporary-allocations | "
		    "--temporary-allocation-threshold N] [--no-mmap] [--children] [--merge] FILE...",
	.summary = "Show the functions holding the memory at the peak (or leaked, or temporary) as a table.",
	.min_args = 1,
	.max_args = -1,
};

int cmd_summary(int argc, char **argv)
{
	struct mp_report_args args = MP_REPORT_ARGS_INIT;
	uint64_t column = 1, rows = 0;
	const struct mp_opt opts[] = {
		MP_OPT_UINT('s', "sort-column", "N", &column, MP_SUMMARY_MIN_COLUMN,
			    MP_SUMMARY_MAX_COLUMN,
			    "sort by column N: 1 or 2 total memory, 3 or 4 own memory, 5 allocations "
			    "(default 1)"),
		MP_OPT_UINT('r', "max-rows", "N", &rows, 1, UINT32_MAX,
			    "show at most N rows (default: what fits the terminal)"),
		MP_REPORT_VIEW_OPTS(&args),
		MP_REPORT_OPTS(&args),
		MP_REPORT_RAW_LEAF_OPT(&args),
		MP_REPORT_FULL_NAMES_OPT(&args),
		MP_OPT_END,
	};
	int first = mp_parse_options(&spec, opts, argc, argv);
	struct mp_analysis a;
	struct mp_summary s;
	struct mp_term term;
	struct strbuf out = STRBUF_INIT;

	mp_report_term(&args, &term);
	if (!rows) {
		/* memray's default: the terminal's lines less five, at least ten. */
		rows = term.height > 15 ? (uint64_t)term.height - 5 : 10;
	}
	if (!mp_report_load_all(&a, (const char *const *)argv + first, (size_t)(argc - first), &args,
				NULL)) {
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
