/* The streaming reader of capture files (lib/format/reader.h). */
#include <config.h>
#include "lib/format/reader.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "lib/format/decode-private.h"
#include "lib/format/fields.h"
#include "lib/format/format.h"
#include "lib/format/reader-private.h"
#include "lib/util/strbuf.h"
#include "lib/util/usage.h"
#include "lib/util/xalloc.h"

#define READ_CHUNK (1u << 20)

static int reader_fail(struct mp_reader *r, enum mp_read_status st, const char *fmt, ...)
	MP_PRINTF(3, 4);
static int reader_fail(struct mp_reader *r, enum mp_read_status st, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	strbuf_vsetf(&r->err, fmt, ap);
	va_end(ap);
	r->status = st;
	return -1;
}

ssize_t mp_reader_fill(struct mp_reader *r)
{
	ssize_t n;
	if (r->eof)
		return 0;
	if (r->buf_pos && (r->buf_pos == r->buf_len || r->buf_pos > r->buf_alloc / 2)) {
		memmove(r->buf, r->buf + r->buf_pos, r->buf_len - r->buf_pos);
		r->offset += r->buf_pos;
		r->buf_len -= r->buf_pos;
		r->buf_pos = 0;
	}
	if (r->buf_alloc - r->buf_len < READ_CHUNK / 4) {
		size_t want = r->buf_alloc ? r->buf_alloc * 2 : READ_CHUNK;
		if (want > MP_MAX_RECORD_LEN + 2 * READ_CHUNK)
			want = MP_MAX_RECORD_LEN + 2 * READ_CHUNK;
		if (want > r->buf_alloc) {
			r->buf = xrealloc(r->buf, want);
			r->buf_alloc = want;
		}
	}
	do
		n = read(r->fd, r->buf + r->buf_len, r->buf_alloc - r->buf_len);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -1;
	if (n == 0)
		r->eof = true;
	r->buf_len += (size_t)n;
	return n;
}

static void reader_init(struct mp_reader *r)
{
	memset(r, 0, sizeof(*r));
	r->fd = -1;
	strbuf_init(&r->err, 0);
	mp_decoder_init(&r->dec);
}

static int reader_start(struct mp_reader *r)
{
	struct mp_record rec;
	ssize_t n;

	/* The preamble, from the first bytes read (which allocate r->buf). */
	if (mp_reader_fill(r) < 0)
		return reader_fail(r, MP_READ_CORRUPT, "cannot read '%s': %s", r->name, strerror(errno));
	for (;;) {
		n = mp_decode_preamble(&r->dec, r->buf + r->buf_pos, r->buf_len - r->buf_pos);
		if (n > 0)
			break;
		if (n < 0)
			return reader_fail(r, MP_READ_CORRUPT, "'%s' is %s", r->name, r->dec.err.buf);
		if (r->eof) {
			if (!r->buf_len)
				return reader_fail(r, MP_READ_CORRUPT,
						   "'%s' is empty, not a memprof capture", r->name);
			return reader_fail(r, MP_READ_TRUNCATED,
					   "'%s' is truncated inside its header", r->name);
		}
		if (mp_reader_fill(r) < 0)
			return reader_fail(r, MP_READ_CORRUPT, "cannot read '%s': %s", r->name,
					   strerror(errno));
	}
	r->buf_pos += (size_t)n;
	/* The header record, which must come first. */
	for (;;) {
		n = mp_decode(&r->dec, r->buf + r->buf_pos, r->buf_len - r->buf_pos, &rec);
		if (n > 0)
			break;
		if (n < 0)
			return reader_fail(r, MP_READ_CORRUPT, "'%s' has a corrupt header: %s",
					   r->name, r->dec.err.buf);
		if (r->eof)
			return reader_fail(r, MP_READ_TRUNCATED,
					   "'%s' is truncated inside its header", r->name);
		if (mp_reader_fill(r) < 0)
			return reader_fail(r, MP_READ_CORRUPT, "cannot read '%s': %s", r->name,
					   strerror(errno));
	}
	if (rec.type != MP_REC_HEADER)
		return reader_fail(r, MP_READ_CORRUPT, "'%s' has a corrupt header", r->name);
	r->buf_pos += (size_t)n;
	r->n_records = 1;
	return 0;
}

int mp_reader_open_fd(struct mp_reader *r, int fd, const char *name)
{
	struct stat st;
	reader_init(r);
	r->fd = fd;
	r->name = xstrdup(name);
	if (fstat(fd, &st) == 0) {
		if (S_ISDIR(st.st_mode))
			return reader_fail(r, MP_READ_CORRUPT,
					   "'%s' is a directory, not a capture file", name);
		if (S_ISREG(st.st_mode))
			r->file_size = (uint64_t)st.st_size;
	}
	return reader_start(r);
}

int mp_reader_open(struct mp_reader *r, const char *path)
{
	int fd;
	if (!strcmp(path, "-"))
		return mp_reader_open_fd(r, 0, "standard input");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int err = errno;
		reader_init(r);
		r->name = xstrdup(path);
		return reader_fail(r, MP_READ_CORRUPT, "cannot open '%s': %s", path, strerror(err));
	}
	if (mp_reader_open_fd(r, fd, path) < 0) {
		r->own_fd = true;
		return -1;
	}
	r->own_fd = true;
	return 0;
}

int mp_reader_rewindable(const char *path, struct strbuf *err)
{
	const char *name = strcmp(path, "-") ? path : "standard input", *tmp = getenv("TMPDIR");
	int fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : fcntl(0, F_DUPFD_CLOEXEC, 3);
	int copy;
	struct stat st;
	char buf[1 << 16];
	ssize_t n;
	if (fd < 0) {
		strbuf_addf(err, "cannot open '%s': %s", name, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && lseek(fd, 0, SEEK_SET) == 0)
		return fd;
	copy = open(tmp && *tmp ? tmp : "/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (copy < 0) {
		strbuf_addf(err, "cannot read '%s' twice: cannot make a temporary file in '%s': %s",
			    name, tmp && *tmp ? tmp : "/tmp", strerror(errno));
		close(fd);
		return -1;
	}
	for (;;) {
		do
			n = read(fd, buf, sizeof(buf));
		while (n < 0 && errno == EINTR);
		if (n <= 0)
			break;
		for (ssize_t done = 0, k; done < n; done += k) {
			k = write(copy, buf + done, (size_t)(n - done));
			if (k < 0) {
				n = -1;
				break;
			}
		}
		if (n < 0)
			break;
	}
	if (n < 0 || lseek(copy, 0, SEEK_SET) != 0) {
		strbuf_addf(err, "cannot read '%s' twice: copying it to a temporary file: %s", name,
			    strerror(errno));
		close(copy);
		copy = -1;
	}
	close(fd);
	return copy;
}

void mp_reader_release(struct mp_reader *r)
{
	if (r->ra)
		mp_readahead_finish(r->ra);
	if (r->own_fd && r->fd >= 0)
		close(r->fd);
	free(r->name);
	free(r->buf);
	free(r->block);
	free(r->fields);
	if (r->dctx)
		ZSTD_freeDCtx(r->dctx);
	for (int i = 0; i < MP_FS_COUNT; i++)
		ZSTD_freeDCtx(r->sdctx[i]);
	for (size_t i = 0; i < r->nstrings; i++)
		free(r->strings[i]);
	free(r->strings);
	mp_decoder_release(&r->dec);
	strbuf_release(&r->err);
	memset(r, 0, sizeof(*r));
	r->fd = -1;
}

const char *mp_reader_string(const struct mp_reader *r, uint64_t id)
{
	if (!id || id > r->nstrings)
		return NULL;
	return r->strings[id - 1];
}

static int reader_string(struct mp_reader *r, const struct mp_record *rec, uint64_t at)
{
	if (rec->u.string.id != r->nstrings + 1)
		return reader_fail(r, MP_READ_CORRUPT,
				   "'%s': string %llu out of sequence at offset %llu", r->name,
				   (unsigned long long)rec->u.string.id, (unsigned long long)at);
	ALLOC_GROW(r->strings, r->nstrings + 1, r->strings_alloc);
	r->strings[r->nstrings++] = xstrndup(rec->u.string.text, rec->u.string.len);
	return 0;
}

/* A record of the block being read: 1, or 0 when it is damaged (r->status says so). */
static int block_record(struct mp_reader *r, const uint8_t *p, size_t left, uint64_t block_at,
			struct mp_record *rec, size_t *used)
{
	ssize_t n = (ssize_t)mp_decode_hot(&r->dec, p, left, rec);
	if (n) {
		*used = (size_t)n;
		r->n_records++;
		return 1;
	}
	n = mp_decode(&r->dec, p, left, rec);
	if (n <= 0) {
		reader_fail(r, MP_READ_CORRUPT, "'%s': corrupt data in the block at offset %llu: %s",
			    r->name, (unsigned long long)block_at,
			    n ? r->dec.err.buf : "record cut at the block's end");
		return 0;
	}
	if (rec->type == MP_REC_UNKNOWN && rec->u.unknown.tag == MP_TAG_BLOCK) {
		reader_fail(r, MP_READ_CORRUPT, "'%s': a block inside the block at offset %llu", r->name,
			    (unsigned long long)block_at);
		return 0;
	}
	if (rec->type == MP_REC_STRING && reader_string(r, rec, block_at) < 0)
		return 0;
	*used = (size_t)n;
	r->n_records++;
	return 1;
}

/*
 * The next record when a thread opens the blocks ahead (readahead.c): from
 * the segment held, or the next one the thread hands over. Records outside
 * blocks come as they are, whole but for the stream's last bytes.
 */
static int next_ahead(struct mp_reader *r, struct mp_record *rec)
{
	for (;;) {
		struct mp_chunk *g = &r->seg;
		if (g->pos < g->len) {
			const uint8_t *p = g->p + g->pos;
			size_t left = g->len - g->pos, used;
			uint64_t at = g->offset + g->pos;
			ssize_t n;
			if (g->block) {
				if (!block_record(r, p, left, g->offset, rec, &used))
					return 0;
				g->pos += used;
				return 1;
			}
			n = mp_decode(&r->dec, p, left, rec);
			if (n == 0) {
				reader_fail(r, MP_READ_TRUNCATED,
					    "'%s' is truncated: the last record, at offset %llu, is incomplete (%zu bytes)",
					    r->name, (unsigned long long)at, left);
				return 0;
			}
			if (n < 0) {
				reader_fail(r, MP_READ_CORRUPT, "'%s' is corrupt at offset %llu: %s", r->name,
					    (unsigned long long)at, r->dec.err.buf);
				return 0;
			}
			if (rec->type == MP_REC_STRING && reader_string(r, rec, at) < 0)
				return 0;
			g->pos += (size_t)n;
			r->n_records++;
			return 1;
		}
		if (g->end)
			return 0;
		mp_readahead_next(r->ra, g);
		if (g->end && g->error) {
			reader_fail(r, MP_READ_CORRUPT, "%s", g->error);
			return 0;
		}
	}
}

int mp_reader_next(struct mp_reader *r, struct mp_record *rec)
{
	ssize_t n;
	uint64_t at;
	size_t used;

	if (r->status != MP_READ_OK || r->fd < 0)
		return 0;
	if (r->ra)
		return next_ahead(r, rec);
	for (;;) {
		if (r->block_pos < r->block_len) {
			if (!block_record(r, r->block + r->block_pos, r->block_len - r->block_pos,
					  r->block_offset, rec, &used))
				return 0;
			r->block_pos += used;
			return 1;
		}
		at = mp_reader_offset(r);
		n = mp_decode(&r->dec, r->buf + r->buf_pos, r->buf_len - r->buf_pos, rec);
		if (n == 0) {
			ssize_t got;
			if (r->eof) {
				if (r->buf_pos < r->buf_len)
					reader_fail(r, MP_READ_TRUNCATED,
						    "'%s' is truncated: the last record, at offset %llu, is incomplete (%zu bytes)",
						    r->name, (unsigned long long)at,
						    r->buf_len - r->buf_pos);
				return 0;
			}
			got = mp_reader_fill(r);
			if (got < 0) {
				reader_fail(r, MP_READ_CORRUPT, "cannot read '%s': %s", r->name,
					    strerror(errno));
				return 0;
			}
			continue;
		}
		if (n < 0) {
			reader_fail(r, MP_READ_CORRUPT, "'%s' is corrupt at offset %llu: %s", r->name,
				    (unsigned long long)at, r->dec.err.buf);
			return 0;
		}
		r->buf_pos += (size_t)n;
		if (rec->type == MP_REC_UNKNOWN && rec->u.unknown.tag == MP_TAG_BLOCK) {
			struct strbuf why = STRBUF_INIT;
			size_t raw;
			int ok = mp_reader_open_block(r, rec->u.unknown.data, rec->u.unknown.len, at,
						      &r->block, &r->block_alloc, &raw, &why) == 0;
			if (!ok)
				reader_fail(r, MP_READ_CORRUPT, "%s", why.buf);
			strbuf_release(&why);
			if (!ok)
				return 0;
			r->block_len = raw;
			r->block_pos = 0;
			r->block_offset = at;
			continue;
		}
		if (rec->type == MP_REC_STRING && reader_string(r, rec, at) < 0)
			return 0;
		r->n_records++;
		return 1;
	}
}

/* Records that point to nothing the next decode reuses: several can be held at once. */
static inline bool plain(enum mp_rec_type t)
{
	return t == MP_REC_ALLOC || t == MP_REC_FREE || t == MP_REC_SWITCH || t == MP_REC_TRACE ||
	       t == MP_REC_TICK;
}

size_t mp_reader_read(struct mp_reader *r, struct mp_record *recs, size_t max)
{
	size_t n = 0;
	while (n < max) {
		struct mp_chunk *g = &r->seg;
		/* The records most blocks are made of, decoded in one loop. */
		if (r->ra && g->block && r->status == MP_READ_OK) {
			while (n < max && g->pos < g->len) {
				size_t k = mp_decode_hot(&r->dec, g->p + g->pos, g->len - g->pos, &recs[n]);
				if (!k)
					break;
				g->pos += k;
				n++;
			}
			r->n_records += n;
			if (n == max)
				break;
		}
		if (!mp_reader_next(r, &recs[n]))
			break;
		if (!plain(recs[n++].type))
			break;
	}
	return n;
}

int mp_reader_read_ahead(struct mp_reader *r)
{
	if (r->ra || r->status != MP_READ_OK || r->fd < 0)
		return 0;
	/* What the reader holds already is handed over first. */
	r->ra = mp_readahead_start(r);
	return r->ra ? 0 : -1;
}
