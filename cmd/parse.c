/* memprof parse: print every record of a capture as one line of text. */
#include <config.h>
#include <stdio.h>

#include <errno.h>

#include "cmd/cmd.h"
#include "cmd/options.h"
#include "lib/capture.h"
#include "lib/dump.h"
#include "lib/usage.h"

static const struct mp_opt opts[] = {
	{ 0 },
};

static const struct mp_cmd_spec spec = {
	.name = "parse",
	.synopsis = "FILE",
	.summary = "Print every record of a capture as one line of text (FILE '-' reads standard input).",
	.opts = opts,
	.min_args = 1,
	.max_args = 1,
};

int cmd_parse(int argc, char **argv)
{
	struct mp_getopt g = { argc, argv, 0, NULL, 0 };
	struct mp_reader r;
	struct mp_record rec;
	struct strbuf line = STRBUF_INIT;
	int status = MP_EXIT_OK;

	while (mp_getopt(&spec, &g) != -1)
		;
	if (mp_reader_open(&r, argv[g.optind]) < 0) {
		error("%s", r.err.buf);
		mp_reader_release(&r);
		return MP_EXIT_FAILURE;
	}
	mp_dump_record(&line, &r, &(struct mp_record){ .type = MP_REC_HEADER,
							.u.header = mp_reader_header(&r) });
	fwrite(line.buf, 1, line.len, stdout);
	while (mp_reader_next(&r, &rec)) {
		strbuf_reset(&line);
		mp_dump_record(&line, &r, &rec);
		if (fwrite(line.buf, 1, line.len, stdout) != line.len && errno == EPIPE)
			break; /* the reader went away: stop quietly */
	}
	if (r.status == MP_READ_TRUNCATED) {
		warning("%s", r.err.buf);
	} else if (r.status == MP_READ_CORRUPT) {
		error("%s", r.err.buf);
		status = MP_EXIT_FAILURE;
	}
	strbuf_release(&line);
	mp_reader_release(&r);
	return status;
}
