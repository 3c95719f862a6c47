/* What the fuzz targets share (tests/fuzz/fuzz.h). */
#include <config.h>
#include "tests/fuzz/fuzz.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "lib/report/render-html.h"
#include "lib/util/usage.h"

const enum mp_view fuzz_views[3] = { MP_VIEW_PEAK, MP_VIEW_LEAKS, MP_VIEW_TEMPORARY };
/* A pipe with the default line limit; a narrow terminal, C++ names whole. */
const struct mp_term fuzz_pipe = { .width = 80, .height = 24, .limit = MP_TERM_PIPE_LIMIT };
const struct mp_term fuzz_tty = { .tty = true, .color = true, .width = 40, .height = 10, .limit = 40,
				  .full_names = true };

void fuzz_fail(const char *file, int line, const char *what)
{
	fprintf(stderr, "%s:%d: fuzz invariant failed: %s\n", file, line, what);
	abort();
}

void fuzz_html(const struct mp_analysis *a, const struct mp_html_opts *o, bool whole)
{
	struct strbuf out = STRBUF_INIT, err = STRBUF_INIT;
	if ((whole ? mp_html_render(a, o, MP_SRCDIR "/share/templates", &out, &err)
		   : mp_html_data(a, o, &out, &err)) < 0)
		fuzz_check_line(&err);
	strbuf_release(&out);
	strbuf_release(&err);
}

void fuzz_check_line(const struct strbuf *msg)
{
	FUZZ_CHECK(msg->len > 0);
	FUZZ_CHECK(!memchr(msg->buf, '\n', msg->len));
}

int fuzz_open(struct mp_reader *r, const uint8_t *data, size_t size)
{
	int fd = memfd_create("capture", MFD_CLOEXEC);
	size_t done = 0;
	int ret;
	if (fd < 0)
		die_errno("cannot make a memfd");
	while (done < size) {
		ssize_t n = write(fd, data + done, size - done);
		if (n <= 0)
			die_errno("cannot write a memfd");
		done += (size_t)n;
	}
	if (lseek(fd, 0, SEEK_SET) != 0)
		die_errno("cannot seek a memfd");
	/* As mp_reader_open() does: the reader closes the descriptor at release. */
	ret = mp_reader_open_fd(r, fd, "fuzz.mprof");
	r->own_fd = true;
	if (ret < 0)
		fuzz_check_line(&r->err);
	return ret;
}

/* What holds whatever the capture: totals against the slots and the series. */
static void check_analysis(const struct mp_analysis *a)
{
	struct mp_counts peak = mp_analysis_view_total(a, MP_VIEW_PEAK);
	struct mp_counts leaked = mp_analysis_view_total(a, MP_VIEW_LEAKS);
	FUZZ_CHECK(a->finished);
	FUZZ_CHECK(a->nsamples <= (a->opts.max_memory_records ? a->opts.max_memory_records
							     : MP_DEFAULT_MAX_MEMORY_RECORDS));
	if (a->aggregated)
		return;
	FUZZ_CHECK(peak.bytes == a->totals.peak_bytes && peak.count == a->totals.peak_count);
	FUZZ_CHECK(leaked.bytes == a->totals.leaked_bytes && leaked.count == a->totals.leaked_count);
	for (size_t i = 0; i < a->nslots; i++)
		FUZZ_CHECK(a->slots[i].site < a->nlocs);
}

bool fuzz_analyse(struct mp_analysis *a, const uint8_t *data, size_t size,
		  const struct mp_analysis_opts *o)
{
	struct mp_analysis_opts opts = MP_ANALYSIS_OPTS_INIT;
	struct mp_reader r;
	struct strbuf warn = STRBUF_INIT;
	bool ok = false;
	if (o)
		opts = *o;
	mp_analysis_init(a, &opts);
	if (fuzz_open(&r, data, size) == 0) {
		if (mp_analysis_read(a, &r, &warn))
			fuzz_check_line(&warn);
		check_analysis(a);
		ok = true;
	}
	mp_reader_release(&r);
	strbuf_release(&warn);
	return ok;
}

void fuzz_each_analysis(const uint8_t *data, size_t size, const struct mp_analysis_opts *runs,
			size_t n, void (*each)(const struct mp_analysis *a, size_t run, void *ctx),
			void *ctx)
{
	for (size_t i = 0; i < n; i++) {
		struct mp_analysis a;
		bool capture = fuzz_analyse(&a, data, size, &runs[i]);
		if (capture)
			each(&a, i, ctx);
		mp_analysis_release(&a);
		if (!capture)
			break;
	}
}
