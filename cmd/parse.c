/* memprof parse: print every record of a capture as one line of text. */
#include <config.h>
#include <stdio.h>

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "cmd/options.h"
#include "lib/format/decode.h"
#include "lib/format/dump.h"
#include "lib/format/reader.h"
#include "lib/util/usage.h"

static const struct mp_cmd_spec spec = {
	.name = "parse",
	.synopsis = "[--stacks] FILE",
	.summary = "Print every record of a capture as one line of text (FILE '-' reads standard input).",
	.min_args = 1,
	.max_args = 1,
};

/* First pass of --stacks: the trace tree, symbols and modules of the whole capture in fd. */
static struct mp_stacks *load_stacks(int fd, const char *name)
{
	struct mp_reader r;
	struct mp_record rec;
	struct mp_stacks *st;
	if (mp_reader_open_fd(&r, fd, name) < 0) {
		error("%s", r.err.buf);
		mp_reader_release(&r);
		return NULL;
	}
	st = mp_stacks_new();
	while (mp_reader_next(&r, &rec))
		if (rec.type == MP_REC_TRACE || rec.type == MP_REC_SYMBOL || rec.type == MP_REC_MODULE ||
		    rec.type == MP_REC_MODULE_UNLOAD)
			mp_stacks_add(st, &r, &rec);
	mp_reader_release(&r);
	return st;
}

int cmd_parse(int argc, char **argv)
{
	bool want_stacks = false;
	const struct mp_opt opts[] = {
		MP_OPT_BOOL('s', "stacks", &want_stacks,
			    "append each allocation's call stack (functions, innermost first)"),
		MP_OPT_END,
	};
	int first = mp_parse_options(&spec, opts, argc, argv), status = MP_EXIT_OK;
	const char *path = argv[first];
	struct mp_reader r;
	struct mp_record rec;
	struct strbuf line = STRBUF_INIT;
	struct mp_stacks *stacks = NULL;
	const char *name = strcmp(path, "-") ? path : "standard input";
	int fd = -1;

	if (want_stacks) {
		/* A SYMBOL may follow the allocations that use it: read the capture twice. */
		struct strbuf err = STRBUF_INIT;
		fd = mp_reader_rewindable(path, &err);
		if (fd < 0)
			die("%s", err.buf);
		stacks = load_stacks(fd, name);
		if (!stacks || lseek(fd, 0, SEEK_SET) != 0) {
			close(fd);
			return MP_EXIT_FAILURE;
		}
	}
	if (fd >= 0 ? mp_reader_open_fd(&r, fd, name) < 0 : mp_reader_open(&r, path) < 0) {
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
		if (stacks && rec.type == MP_REC_ALLOC) {
			strbuf_setlen(&line, line.len - 1);
			strbuf_addstr(&line, " frames=");
			mp_stacks_render(stacks, &line, rec.u.ev.stack);
			strbuf_addch(&line, '\n');
		}
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
	mp_stacks_free(stacks);
	if (fd >= 0)
		close(fd);
	return status;
}
