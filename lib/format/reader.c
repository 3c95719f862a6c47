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
#include "lib/format/dict.h"
#include "lib/format/fields.h"
#include "lib/format/format.h"
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

/* Read more bytes into the buffer; returns bytes read, 0 at EOF, -1 on error. */
static ssize_t reader_fill(struct mp_reader *r)
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

	/* The preamble. */
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
		if (reader_fill(r) < 0)
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
		if (reader_fill(r) < 0)
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

void mp_reader_release(struct mp_reader *r)
{
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

/* Stream i of a codec 3 block: stored bytes that continue its zstd stream, making len bytes at out. */
static int stream_part(struct mp_reader *r, int i, const uint8_t *data, size_t stored, uint8_t *out,
		       size_t len, uint64_t at)
{
	ZSTD_inBuffer in = { data, stored, 0 };
	ZSTD_outBuffer o = { out, len, 0 };
	if (!r->sdctx[i]) {
		r->sdctx[i] = ZSTD_createDCtx();
		if (!r->sdctx[i])
			die("out of memory");
		/* The writer's windows are 1 MiB: refuse a claim of more than 8. */
		ZSTD_DCtx_setParameter(r->sdctx[i], ZSTD_d_windowLogMax, 23);
		if (i == MP_FS_OTHER &&
		    ZSTD_isError(ZSTD_DCtx_loadDictionary(r->sdctx[i], mp_dict_other,
								       MP_DICT_OTHER_SIZE)))
			die("out of memory");
	}
	while (in.pos < in.size || o.pos < o.size) {
		size_t before = in.pos + o.pos;
		size_t ret = ZSTD_decompressStream(r->sdctx[i], &o, &in);
		if (ZSTD_isError(ret))
			return reader_fail(r, MP_READ_CORRUPT,
					   "'%s': field stream %d of the block at offset %llu does not decompress (%s)",
					   r->name, i, (unsigned long long)at, ZSTD_getErrorName(ret));
		if (in.pos + o.pos == before)
			break; /* no progress: too much or too little data for the length */
	}
	if (in.pos != in.size || o.pos != o.size)
		return reader_fail(r, MP_READ_CORRUPT,
				   "'%s': field stream %d of the block at offset %llu does not decompress (wrong size)",
				   r->name, i, (unsigned long long)at);
	return 0;
}

/*
 * A block of field streams into r->block: codec 2 (six streams, each stored
 * or one zstd frame) or codec 3 (the streams a mask names, each continuing
 * its zstd stream), then joined.
 */
static int reader_join_fields(struct mp_reader *r, struct cur *c, uint64_t codec, uint64_t raw,
			      uint64_t at)
{
	uint64_t n[MP_FS_COUNT] = { 0 }, st[MP_FS_COUNT] = { 0 }, sum = 0, stored = 0, mask;
	uint32_t check = 0;
	uint8_t *s[MP_FS_COUNT];
	size_t len[MP_FS_COUNT], off = 0;
	const uint8_t *data;
	const char *why = NULL;

	mask = codec == MP_CODEC_ZSTD_STREAMS ? get_u(c) : (1u << MP_FS_COUNT_V2) - 1;
	if (mask >> MP_FS_COUNT)
		c->err = CUR_BAD;
	for (int i = 0; i < MP_FS_COUNT && !c->err; i++) {
		if (!(mask & (1u << i)))
			continue;
		n[i] = get_u(c);
		st[i] = get_u(c);
		if (codec == MP_CODEC_ZSTD_FIELDS && !c->err && (st[i] > n[i] || (n[i] && !st[i])))
			c->err = CUR_BAD;
		if (codec == MP_CODEC_ZSTD_STREAMS && !c->err && (!n[i] || !st[i] || st[i] > raw + 1024))
			c->err = CUR_BAD;
		sum += n[i];
		stored += st[i];
	}
	if (codec == MP_CODEC_ZSTD_STREAMS && !c->err) {
		if (c->end - c->p < 4)
			c->err = CUR_SHORT;
		else
			for (int k = 0; k < 4; k++)
				check |= (uint32_t)*c->p++ << (8 * k);
	}
	if (c->err || sum != raw || stored != (uint64_t)(c->end - c->p))
		return reader_fail(r, MP_READ_CORRUPT,
				   "'%s': corrupt field streams in the block at offset %llu", r->name,
				   (unsigned long long)at);
	scratch(&r->fields, &r->fields_alloc, raw);
	data = c->p;
	for (int i = 0; i < MP_FS_COUNT; i++) {
		s[i] = r->fields + off;
		len[i] = (size_t)n[i];
		if (codec == MP_CODEC_ZSTD_STREAMS) {
			if (len[i] && stream_part(r, i, data, (size_t)st[i], r->fields + off, len[i], at) < 0)
				return -1;
		} else if (st[i] == n[i]) {
			memcpy(r->fields + off, data, len[i]);
		} else {
			size_t got = ZSTD_decompressDCtx(r->dctx, r->fields + off, len[i], data,
							 (size_t)st[i]);
			if (ZSTD_isError(got) || got != len[i])
				return reader_fail(r, MP_READ_CORRUPT,
						   "'%s': field stream %d of the block at offset %llu does not decompress (%s)",
						   r->name, i, (unsigned long long)at,
						   ZSTD_isError(got) ? ZSTD_getErrorName(got) : "wrong size");
		}
		data += st[i];
		off += len[i];
	}
	/* A damaged block would change every block after it: it must be found. */
	if (codec == MP_CODEC_ZSTD_STREAMS && mp_block_checksum(s, len, (size_t)raw) != check)
		return reader_fail(r, MP_READ_CORRUPT,
				   "'%s': the block at offset %llu does not match its checksum", r->name,
				   (unsigned long long)at);
	if (mp_fields_join((const uint8_t *const *)s, len, r->block, (size_t)raw, &why) < 0)
		return reader_fail(r, MP_READ_CORRUPT, "'%s': corrupt block at offset %llu: %s",
				   r->name, (unsigned long long)at, why);
	return 0;
}

static int reader_open_block(struct mp_reader *r, const struct mp_record *rec, uint64_t at)
{
	struct cur c = { rec->u.unknown.data, rec->u.unknown.data + rec->u.unknown.len, CUR_OK };
	uint64_t codec = get_u(&c), raw = get_u(&c);
	if (c.err)
		return reader_fail(r, MP_READ_CORRUPT, "'%s': corrupt block at offset %llu", r->name,
				   (unsigned long long)at);
	if (codec != MP_CODEC_ZSTD && codec != MP_CODEC_ZSTD_FIELDS && codec != MP_CODEC_ZSTD_STREAMS)
		return reader_fail(r, MP_READ_CORRUPT,
				   "'%s': block at offset %llu uses unknown codec %llu", r->name,
				   (unsigned long long)at, (unsigned long long)codec);
	if (raw > MP_MAX_BLOCK_RAW)
		return reader_fail(r, MP_READ_CORRUPT,
				   "'%s': block at offset %llu claims %llu bytes", r->name,
				   (unsigned long long)at, (unsigned long long)raw);
	if (!r->dctx)
		r->dctx = ZSTD_createDCtx();
	scratch(&r->block, &r->block_alloc, raw);
	if (codec != MP_CODEC_ZSTD) {
		if (reader_join_fields(r, &c, codec, raw, at) < 0)
			return -1;
	} else {
		size_t got = ZSTD_decompressDCtx(r->dctx, r->block, raw, c.p, (size_t)(c.end - c.p));
		if (ZSTD_isError(got) || got != raw)
			return reader_fail(r, MP_READ_CORRUPT,
					   "'%s': block at offset %llu does not decompress (%s)", r->name,
					   (unsigned long long)at,
					   ZSTD_isError(got) ? ZSTD_getErrorName(got) : "wrong size");
	}
	r->block_len = raw;
	r->block_pos = 0;
	r->block_offset = at;
	return 0;
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

int mp_reader_next(struct mp_reader *r, struct mp_record *rec)
{
	ssize_t n;
	uint64_t at;

	if (r->status != MP_READ_OK || r->fd < 0)
		return 0;
	for (;;) {
		if (r->block_pos < r->block_len) {
			n = mp_decode(&r->dec, r->block + r->block_pos, r->block_len - r->block_pos,
				      rec);
			if (n <= 0) {
				reader_fail(r, MP_READ_CORRUPT,
					    "'%s': corrupt data in the block at offset %llu: %s",
					    r->name, (unsigned long long)r->block_offset,
					    n ? r->dec.err.buf : "record cut at the block's end");
				return 0;
			}
			if (rec->type == MP_REC_UNKNOWN && rec->u.unknown.tag == MP_TAG_BLOCK) {
				reader_fail(r, MP_READ_CORRUPT,
					    "'%s': a block inside the block at offset %llu", r->name,
					    (unsigned long long)r->block_offset);
				return 0;
			}
			r->block_pos += (size_t)n;
			if (rec->type == MP_REC_STRING &&
			    reader_string(r, rec, r->block_offset) < 0)
				return 0;
			r->n_records++;
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
			got = reader_fill(r);
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
			if (reader_open_block(r, rec, at) < 0)
				return 0;
			continue;
		}
		if (rec->type == MP_REC_STRING && reader_string(r, rec, at) < 0)
			return 0;
		r->n_records++;
		return 1;
	}
}
