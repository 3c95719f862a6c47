/* memprof diff: what changed between two captures, by allocation site. */
#include <config.h>
#include <stdio.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "cmd/options.h"
#include "cmd/report.h"
#include "lib/analysis/analysis.h"
#include "lib/report/diff.h"
#include "lib/report/render-text.h"
#include "lib/report/report.h"
#include "lib/util/usage.h"
#include "lib/util/xalloc.h"

static const struct mp_cmd_spec spec = {
	.name = "diff",
	.synopsis = "[-r N] [--json [-o FILE] [-f]] [--no-mmap] [--children] [--merge] BASE NEW",
	.summary = "Show how the peak, the leaks and the allocations of each allocation site "
		   "changed from capture BASE to capture NEW.",
	.min_args = 2,
	.max_args = 2,
};

int cmd_diff(int argc, char **argv)
{
	struct mp_report_args args = MP_REPORT_ARGS_INIT;
	struct mp_report_json json = { 0 };
	uint64_t rows = 0;
	const struct mp_opt opts[] = {
		MP_OPT_UINT('r', "max-rows", "N", &rows, 1, UINT32_MAX,
			    "show at most N rows (default: what fits the terminal)"),
		MP_REPORT_JSON_OPTS(&json, "the differences", "memprof-diff-NEW.json next to NEW"),
		MP_REPORT_OPTS(&args),
		MP_REPORT_RAW_LEAF_OPT(&args),
		MP_REPORT_FULL_NAMES_OPT(&args),
		MP_OPT_END,
	};
	int first = mp_parse_options(&spec, opts, argc, argv), status = MP_EXIT_FAILURE;
	struct mp_analysis base, new;
	struct mp_diff d;
	struct mp_diff_names names;
	struct strbuf out = STRBUF_INIT;
	char *path = NULL;
	bool loaded;

	mp_report_json_check(&spec, &json);
	if (json.json && rows)
		mp_usage_error(&spec, "option '--max-rows' is for the table, not --json");
	names.base = argv[first];
	names.new = argv[first + 1];
	names.base_a = &base;
	names.new_a = &new;
	if (json.json) {
		path = mp_report_json_path(&json, mp_report_output_path(names.new, "diff", ".json"));
		/* Before a long analysis: a file that would not be written. */
		if (!json.force && strcmp(path, "-") && access(path, F_OK) == 0) {
			error("'%s' already exists (use -f to overwrite it)", path);
			free(path);
			return MP_EXIT_FAILURE;
		}
	}
	/* Both analyses are released whatever happens, so the second is always made. */
	loaded = mp_report_load(&base, names.base, &args, NULL);
	if (loaded)
		loaded = mp_report_load(&new, names.new, &args, NULL);
	else
		mp_analysis_init(&new, NULL);
	if (!loaded)
		goto out;
	mp_diff_build(&d, &base, &new);
	if (json.json) {
		mp_diff_json(&d, &names, &out);
		status = mp_report_json_write(&json, path, &out);
	} else {
		struct mp_term term;
		mp_report_term(&args, &term);
		if (!rows) /* as summary: the terminal's lines less five, at least ten */
			rows = term.height > 15 ? (uint64_t)term.height - 5 : 10;
		mp_diff_text(&d, &names, (size_t)rows, &term, &out);
		fwrite(out.buf, 1, out.len, stdout);
		status = MP_EXIT_OK;
	}
	mp_diff_release(&d);
out:
	mp_analysis_release(&base);
	mp_analysis_release(&new);
	strbuf_release(&out);
	free(path);
	return status;
}
