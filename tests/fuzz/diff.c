/*
 * Fuzz target: memprof diff (text and JSON) and flamegraph --diff, the input
 * against itself and against a golden capture (tests/data/basic.mprof) on
 * either side.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>

#include "lib/analysis/analysis.h"
#include "lib/report/diff.h"
#include "lib/report/render-html.h"
#include "lib/util/strbuf.h"
#include "lib/util/usage.h"
#include "tests/fuzz/fuzz.h"

static struct mp_analysis golden;

static void load_golden(void)
{
	static bool loaded;
	struct strbuf err = STRBUF_INIT;
	if (loaded)
		return;
	mp_analysis_init(&golden, NULL);
	if (mp_analysis_read_file(&golden, MP_SRCDIR "/tests/data/basic.mprof", &err))
		die("cannot analyse the golden capture: %s", err.buf);
	strbuf_release(&err);
	loaded = true;
}

static void compare(const struct mp_analysis *base, const struct mp_analysis *new)
{
	struct mp_diff_names names = { "base.mprof", "new.mprof", base, new };
	struct mp_html_opts o = MP_HTML_OPTS_INIT;
	struct strbuf out = STRBUF_INIT;
	struct mp_diff d;
	mp_diff_build(&d, base, new);
	mp_diff_text(&d, &names, 10, &fuzz_pipe, &out);
	mp_diff_text(&d, &names, 1, &fuzz_tty, &out);
	mp_diff_json(&d, &names, &out);
	mp_diff_release(&d);
	o.base = base;
	o.capture = "new.mprof";
	o.base_capture = "base.mprof";
	fuzz_html(new, &o, false);
	strbuf_release(&out);
}

static void each_side(const struct mp_analysis *a, size_t run, void *ctx)
{
	(void)run;
	(void)ctx;
	compare(a, a);
	compare(&golden, a);
	compare(a, &golden);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct mp_analysis_opts runs[] = { MP_ANALYSIS_OPTS_INIT };
	load_golden();
	fuzz_each_analysis(data, size, runs, FUZZ_N(runs), each_side, NULL);
	return 0;
}
