/*
 * Where an export goes: a file (created without replacing one unless
 * forced), or standard output for "-", written through a buffer of a fixed
 * size, gzip-compressed on the way when asked. Writing never fails on the
 * spot: the first error sticks and mp_sink_close() reports it, so encoders
 * stay free of error paths.
 */
#ifndef MEMPROF_LIB_EXPORT_SINK_H
#define MEMPROF_LIB_EXPORT_SINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/util/strbuf.h"

/* Buffered bytes are written (or compressed) once there are this many. */
#define MP_SINK_CHUNK (64 * 1024)

struct mp_sink {
	int fd;                 /* -1 when closed */
	char *path;             /* as given; "-" for standard output */
	bool created;           /* the sink made path: removed again on failure */
	struct strbuf buf;      /* what is not written yet; encoders may append to it */
	void *z;                /* z_stream when gzip-compressing, else NULL */
	unsigned char *zout;
	int err;                /* errno of the first failure, 0 when none */
	const char *zerr;       /* or zlib's reason */
	uint64_t written;       /* bytes written to fd */
};

/*
 * Open path for writing ("-": standard output, never closed by the sink).
 * An existing file is replaced only with force. Returns 0, or -1 with the
 * one-line reason in *err ("'x' already exists (use -f to overwrite it)").
 * A file the sink creates is removed again if the export fails.
 */
int mp_sink_open(struct mp_sink *s, const char *path, bool force, bool gzip, struct strbuf *err);
/* Append bytes; written once the buffer holds MP_SINK_CHUNK bytes. */
void mp_sink_write(struct mp_sink *s, const void *data, size_t len);
/* After appending to s->buf directly: write it out if it is full. */
void mp_sink_check(struct mp_sink *s);
/* True once writing has failed (encoders may stop early). */
static inline bool mp_sink_failed(const struct mp_sink *s)
{
	return s->err || s->zerr;
}
/*
 * Write what is buffered, end the gzip stream, close the file. Returns 0,
 * or -1 with "cannot write 'path': reason" in *err, after removing a file
 * the sink created (a failed export leaves nothing behind). With ok false
 * (the caller failed; its reason is its own) the file is removed too and -1
 * returned. On a standard output whose reader went away (EPIPE) returns 1:
 * not an error.
 */
int mp_sink_close(struct mp_sink *s, bool ok, struct strbuf *err);

#endif
