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
	struct strbuf out = STRBUF_INIT, err = STRBUF_INIT;
	struct mp_diff d;
	mp_diff_build(&d, base, new);
	mp_diff_text(&d, &names, 10, &fuzz_pipe, &out);
	mp_diff_text(&d, &names, 1, &fuzz_tty, &out);
	mp_diff_json(&d, &names, &out);
	mp_diff_release(&d);
	o.base = base;
	o.capture = "new.mprof";
	o.base_capture = "base.mprof";
	if (mp_html_data(new, &o, &out, &err) < 0)
		fuzz_check_line(&err);
	strbuf_release(&out);
	strbuf_release(&err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mp_analysis a;
	load_golden();
	if (fuzz_analyse(&a, data, size, NULL)) {
		compare(&a, &a);
		compare(&golden, &a);
		compare(&a, &golden);
	}
	mp_analysis_release(&a);
	return 0;
}
