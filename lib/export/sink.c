/* An export's output: a buffered file or standard output, optionally gzipped. */
#include <config.h>
#include "lib/export/sink.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "lib/util/xalloc.h"

int mp_sink_open(struct mp_sink *s, const char *path, bool force, bool gzip, struct strbuf *err)
{
	memset(s, 0, sizeof(*s));
	strbuf_init(&s->buf, MP_SINK_CHUNK + 4096);
	s->path = xstrdup(path);
	if (!strcmp(path, "-")) {
		s->fd = STDOUT_FILENO;
	} else {
		/*
		 * Only a file made here is removed after a failure: what -f
		 * writes over may be anything (/dev/null, a fifo).
		 */
		s->fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
		s->created = s->fd >= 0;
		if (s->fd < 0 && errno == EEXIST && force)
			s->fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
		if (s->fd < 0) {
			if (errno == EEXIST)
				strbuf_addf(err, "'%s' already exists (use -f to overwrite it)", path);
			else
				strbuf_addf(err, "cannot create '%s': %s", path, strerror(errno));
			strbuf_release(&s->buf);
			free(s->path);
			s->path = NULL;
			return -1;
		}
	}
	if (gzip) {
		z_stream *z = xcalloc(1, sizeof(*z));
		/* 15 + 16: a gzip header and trailer around the deflate stream, as pprof wants. */
		if (deflateInit2(z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
				 Z_DEFAULT_STRATEGY) != Z_OK)
			s->zerr = z->msg ? z->msg : "cannot start compressing";
		s->z = z;
		s->zout = xmalloc(MP_SINK_CHUNK);
	}
	return 0;
}

static void write_all(struct mp_sink *s, const void *data, size_t len)
{
	const char *p = data;
	while (len && !mp_sink_failed(s)) {
		ssize_t n = write(s->fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			s->err = n < 0 ? errno : EIO;
			return;
		}
		p += n;
		len -= (size_t)n;
		s->written += (uint64_t)n;
	}
}

/* Compress (or write) the buffer; with finish, end the gzip stream. */
static void drain(struct mp_sink *s, bool finish)
{
	z_stream *z = s->z;
	if (mp_sink_failed(s)) {
		strbuf_reset(&s->buf);
		return;
	}
	if (!z) {
		write_all(s, s->buf.buf, s->buf.len);
		strbuf_reset(&s->buf);
		return;
	}
	z->next_in = (unsigned char *)s->buf.buf;
	z->avail_in = (uInt)s->buf.len;
	for (;;) {
		int r;
		z->next_out = s->zout;
		z->avail_out = MP_SINK_CHUNK;
		r = deflate(z, finish ? Z_FINISH : Z_NO_FLUSH);
		if (r == Z_STREAM_ERROR) {
			s->zerr = z->msg ? z->msg : "compression failed";
			break;
		}
		write_all(s, s->zout, MP_SINK_CHUNK - z->avail_out);
		if (mp_sink_failed(s) || (finish ? r == Z_STREAM_END : z->avail_out != 0))
			break;
	}
	strbuf_reset(&s->buf);
}

void mp_sink_check(struct mp_sink *s)
{
	if (s->buf.len >= MP_SINK_CHUNK)
		drain(s, false);
}

void mp_sink_write(struct mp_sink *s, const void *data, size_t len)
{
	strbuf_add(&s->buf, data, len);
	mp_sink_check(s);
}

int mp_sink_close(struct mp_sink *s, bool ok, struct strbuf *err)
{
	bool to_stdout = !strcmp(s->path, "-");
	int ret = 0;
	if (ok)
		drain(s, s->z != NULL);
	if (s->z) {
		deflateEnd(s->z);
		free(s->z);
		free(s->zout);
	}
	if (!to_stdout && close(s->fd) < 0 && !s->err)
		s->err = errno;
	if (to_stdout && s->err == EPIPE) {
		ret = 1;
	} else if (mp_sink_failed(s)) {
		const char *why = s->err ? strerror(s->err) : s->zerr;
		if (to_stdout)
			strbuf_addf(err, "cannot write to standard output: %s", why);
		else
			strbuf_addf(err, "cannot write '%s': %s", s->path, why);
		ret = -1;
	} else if (!ok) {
		ret = -1;
	}
	if (ret < 0 && s->created)
		unlink(s->path);
	strbuf_release(&s->buf);
	free(s->path);
	s->path = NULL;
	s->fd = -1;
	return ret;
}
