/*
 * Fuzz target: memprof flamegraph's page, each view, inverted, with the
 * timeline (--temporal) and threads split, as cmd/html.c analyses for it.
 */
#include <config.h>

#include "lib/analysis/analysis.h"
#include "lib/report/render-html.h"
#include "lib/util/strbuf.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct mp_analysis_opts runs[] = {
		{ MP_ANALYSIS_TEMPORAL, 1, MP_HTML_MAX_POINTS, NULL, NULL, NULL },
		{ MP_ANALYSIS_SPLIT_THREADS, 1, MP_HTML_MAX_POINTS, NULL, NULL, NULL },
	};
	static const enum mp_view views[] = { MP_VIEW_PEAK, MP_VIEW_LEAKS, MP_VIEW_TEMPORARY };
	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		struct mp_analysis a;
		struct strbuf out = STRBUF_INIT, err = STRBUF_INIT;
		bool capture = fuzz_analyse(&a, data, size, &runs[i]);
		for (size_t v = 0; capture && v < sizeof(views) / sizeof(views[0]); v++)
			for (int how = 0; how < 3; how++) {
				struct mp_html_opts o = MP_HTML_OPTS_INIT;
				o.view = views[v];
				o.inverted = how == 1;
				o.temporal = how == 2;
				o.capture = "fuzz.mprof";
				strbuf_reset(&out);
				strbuf_reset(&err);
				/* The whole page once; the data, which is what varies, for the others. */
				if ((v == 0 && how == 0 ? mp_html_render(&a, &o, fuzz_templates(), &out, &err)
							: mp_html_data(&a, &o, &out, &err)) < 0)
					fuzz_check_line(&err);
			}
		mp_analysis_release(&a);
		strbuf_release(&out);
		strbuf_release(&err);
		if (!capture)
			break;
	}
	return 0;
}
