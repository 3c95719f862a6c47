/*
 * HTML templates: a template expanded with the report data (the JSON of
 * share/templates/README.md, section 3, checked strictly) into one
 * self-contained page, as section 1 of that README says. The data of an
 * analysis comes from lib/report/render-html.h, which also calls this.
 *
 *	if (mp_html_expand("templates/table.html", data.buf, data.len, &page, &err) < 0) ...
 */
#ifndef MEMPROF_LIB_REPORT_HTML_TEMPLATE_H
#define MEMPROF_LIB_REPORT_HTML_TEMPLATE_H

#include <stddef.h>

#include "lib/util/strbuf.h"

/*
 * Expand the template at template_path with the report data (JSON text,
 * white space around it ignored) and append the page to *out, as the
 * README's section 1 says: includes from the template's directory, the
 * single data directive, the escaping rule. The same bytes as
 * tests/browser/render.py. Returns 0, or -1 with a one-line reason in
 * *err (a missing template or include names the path tried) and nothing
 * appended.
 */
int mp_html_expand(const char *template_path, const char *data, size_t len, struct strbuf *out,
		   struct strbuf *err);

#endif
