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

enum { OPT_JSON = 256 };

static const struct mp_opt opts[] = {
	{ 'r', 'r', "max-rows", "N", "show at most N rows (default: what fits the terminal)" },
	{ OPT_JSON, 0, "json", NULL, "write the differences as JSON to a file instead" },
	{ 'o', 'o', "output", "FILE",
	  "the JSON file, - for standard output (default: memprof-diff-NEW.json next to NEW)" },
	{ 'f', 'f', "force", NULL, "overwrite the JSON file if it exists" },
	MP_REPORT_NO_MMAP_OPT,
	{ 0 },
};

static const struct mp_cmd_spec spec = {
	.name = "diff",
	.synopsis = "[-r N] [--json [-o FILE] [-f]] [--no-mmap] BASE NEW",
	.summary = "Show how the peak, the leaks and the allocations of each allocation site "
		   "changed from capture BASE to capture NEW.",
	.opts = opts,
	.min_args = 2,
	.max_args = 2,
};

int cmd_diff(int argc, char **argv)
{
	struct mp_getopt g = { argc, argv, 0, NULL, 0 };
	struct mp_report_args args = MP_REPORT_ARGS_INIT;
	struct mp_analysis base, new;
	struct mp_diff d;
	struct mp_diff_names names;
	struct strbuf out = STRBUF_INIT, err = STRBUF_INIT;
	const char *output = NULL;
	char *path = NULL;
	bool json = false, force = false, loaded;
	uint64_t rows = 0;
	int status = MP_EXIT_FAILURE, c;

	while ((c = mp_getopt(&spec, &g)) != -1) {
		if (mp_report_option(&spec, &args, c, g.arg))
			continue;
		switch (c) {
		case 'r':
			rows = mp_opt_uint(&spec, "--max-rows", g.arg, 1, UINT32_MAX);
			break;
		case OPT_JSON:
			json = true;
			break;
		case 'o':
			output = g.arg;
			break;
		case 'f':
			force = true;
			break;
		}
	}
	if (!json && (output || force))
		mp_usage_error(&spec, "option '%s' needs --json", output ? "--output" : "--force");
	if (json && rows)
		mp_usage_error(&spec, "option '--max-rows' is for the table, not --json");
	names.base = argv[g.optind];
	names.new = argv[g.optind + 1];
	names.base_a = &base;
	names.new_a = &new;
	if (json) {
		path = output ? xstrdup(output) : mp_report_output_path(names.new, "diff", ".json");
		if (!force && strcmp(path, "-") && access(path, F_OK) == 0) {
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
	if (json) {
		mp_diff_json(&d, &names, &out);
		if (!strcmp(path, "-")) {
			fwrite(out.buf, 1, out.len, stdout);
			status = MP_EXIT_OK;
		} else if (mp_report_write_file(path, out.buf, out.len, force, &err) < 0) {
			error("%s", err.buf);
		} else {
			printf("Wrote %s\n", path);
			status = MP_EXIT_OK;
		}
	} else {
		struct mp_term term;
		mp_term_detect(&term, STDOUT_FILENO);
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
	strbuf_release(&err);
	free(path);
	return status;
}
