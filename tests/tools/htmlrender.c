/*
 * htmlrender: the C template expansion (lib/report/html-template) with the
 * interface of the reference tests/browser/render.py, so the browser tests
 * can hold both to the same fixture, the same errors and the same bytes.
 *
 * usage: htmlrender TEMPLATE DATA OUTPUT    (OUTPUT "-": standard output)
 */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lib/report/html-template.h"
#include "lib/report/report.h"
#include "lib/util/strbuf.h"
#include "lib/util/usage.h"

int main(int argc, char **argv)
{
	struct strbuf data = STRBUF_INIT, page = STRBUF_INIT, err = STRBUF_INIT;
	mp_set_progname("htmlrender");
	if (argc != 4) {
		fputs("usage: htmlrender TEMPLATE DATA OUTPUT\n", stderr);
		return MP_EXIT_USAGE;
	}
	if (strbuf_read_file(&data, argv[2], 0) < 0)
		die("cannot read '%s': %s", argv[2], strerror(errno));
	if (mp_html_expand(argv[1], data.buf, data.len, &page, &err) < 0)
		die("%s", err.buf);
	if (!strcmp(argv[3], "-")) {
		if (fwrite(page.buf, 1, page.len, stdout) != page.len || fflush(stdout))
			die_errno("cannot write the page");
	} else if (mp_report_write_file(argv[3], page.buf, page.len, true, &err) < 0) {
		die("%s", err.buf);
	}
	strbuf_release(&data);
	strbuf_release(&page);
	strbuf_release(&err);
	return 0;
}
