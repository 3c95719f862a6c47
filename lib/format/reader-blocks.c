/*
 * Opening the BLOCK records of a capture (lib/format/reader-private.h): one
 * zstd frame (codec 1), field streams (codec 2), field streams continuing
 * the reader's zstd streams (codecs 3 and 4); joined back into records.
 */
#include <config.h>
#include "lib/format/reader.h"

#include <stdarg.h>
#include <string.h>
#include <zstd.h>

#include "lib/format/decode-private.h"
#include "lib/format/dict.h"
#include "lib/format/fields.h"
#include "lib/format/format.h"
#include "lib/format/reader-private.h"
#include "lib/util/strbuf.h"
#include "lib/util/usage.h"

static int block_fail(struct strbuf *why, const char *fmt, ...) MP_PRINTF(2, 3);
static int block_fail(struct strbuf *why, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	strbuf_vsetf(why, fmt, ap);
	va_end(ap);
	return -1;
}

/* Stream i of a codec 3 or 4 block: stored bytes that continue its zstd stream, making len bytes at out. */
static int stream_part(struct mp_reader *r, int i, const uint8_t *data, size_t stored, uint8_t *out,
		       size_t len, uint64_t at, struct strbuf *why)
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
			return block_fail(why,
					   "'%s': field stream %d of the block at offset %llu does not decompress (%s)",
					   r->name, i, (unsigned long long)at, ZSTD_getErrorName(ret));
		if (in.pos + o.pos == before)
			break; /* no progress: too much or too little data for the length */
	}
	if (in.pos != in.size || o.pos != o.size)
		return block_fail(why,
				   "'%s': field stream %d of the block at offset %llu does not decompress (wrong size)",
				   r->name, i, (unsigned long long)at);
	return 0;
}

/*
 * A block of field streams into r->block: codec 2 (six streams, each stored
 * or one zstd frame) or codecs 3 and 4 (the streams a mask names, each
 * continuing its zstd stream; codec 4 has sizes and stack deltas in varint
 * planes), then joined.
 */
static int join_fields(struct mp_reader *r, struct cur *c, uint64_t codec, uint64_t raw,
		       uint64_t at, uint8_t *out, struct strbuf *why)
{
	uint64_t n[MP_FS_COUNT] = { 0 }, st[MP_FS_COUNT] = { 0 }, sum = 0, stored = 0, mask;
	uint32_t check = 0;
	uint8_t *s[MP_FS_COUNT];
	size_t len[MP_FS_COUNT], off = 0;
	const uint8_t *data;
	const char *bad = NULL;
	bool streams = codec != MP_CODEC_ZSTD_FIELDS; /* codecs 3 and 4 */

	mask = streams ? get_u(c) : (1u << MP_FS_COUNT_V2) - 1;
	if (mask >> (codec == MP_CODEC_ZSTD_PLANES ? MP_FS_COUNT : MP_FS_COUNT_V3))
		c->err = CUR_BAD;
	for (int i = 0; i < MP_FS_COUNT && !c->err; i++) {
		if (!(mask & (1u << i)))
			continue;
		n[i] = get_u(c);
		st[i] = get_u(c);
		if (codec == MP_CODEC_ZSTD_FIELDS && !c->err && (st[i] > n[i] || (n[i] && !st[i])))
			c->err = CUR_BAD;
		if (streams && !c->err && (!n[i] || !st[i] || st[i] > raw + 1024))
			c->err = CUR_BAD;
		sum += n[i];
		stored += st[i];
	}
	if (streams && !c->err) {
		if (c->end - c->p < 4)
			c->err = CUR_SHORT;
		else
			for (int k = 0; k < 4; k++)
				check |= (uint32_t)*c->p++ << (8 * k);
	}
	if (c->err || sum != raw || stored != (uint64_t)(c->end - c->p))
		return block_fail(why,
				   "'%s': corrupt field streams in the block at offset %llu", r->name,
				   (unsigned long long)at);
	scratch(&r->fields, &r->fields_alloc, raw);
	data = c->p;
	for (int i = 0; i < MP_FS_COUNT; i++) {
		s[i] = r->fields + off;
		len[i] = (size_t)n[i];
		if (streams) {
			if (len[i] && stream_part(r, i, data, (size_t)st[i], r->fields + off, len[i], at, why) < 0)
				return -1;
		} else if (st[i] == n[i]) {
			memcpy(r->fields + off, data, len[i]);
		} else {
			size_t got = ZSTD_decompressDCtx(r->dctx, r->fields + off, len[i], data,
							 (size_t)st[i]);
			if (ZSTD_isError(got) || got != len[i])
				return block_fail(why,
						   "'%s': field stream %d of the block at offset %llu does not decompress (%s)",
						   r->name, i, (unsigned long long)at,
						   ZSTD_isError(got) ? ZSTD_getErrorName(got) : "wrong size");
		}
		data += st[i];
		off += len[i];
	}
	/* A damaged block would change every block after it: it must be found. */
	if (streams && mp_block_checksum(s, len, (size_t)raw) != check)
		return block_fail(why,
				   "'%s': the block at offset %llu does not match its checksum", r->name,
				   (unsigned long long)at);
	if (mp_fields_join((const uint8_t *const *)s, len, out, (size_t)raw, codec == MP_CODEC_ZSTD_PLANES,
			   &bad) < 0)
		return block_fail(why, "'%s': corrupt block at offset %llu: %s",
				   r->name, (unsigned long long)at, bad);
	return 0;
}

int mp_reader_open_block(struct mp_reader *r, const uint8_t *payload, size_t len, uint64_t at,
			 uint8_t **out, size_t *out_alloc, size_t *raw_len, struct strbuf *why)
{
	struct cur c = { payload, payload + len, CUR_OK };
	uint64_t codec = get_u(&c), raw = get_u(&c);
	if (c.err)
		return block_fail(why, "'%s': corrupt block at offset %llu", r->name,
				  (unsigned long long)at);
	if (codec != MP_CODEC_ZSTD && codec != MP_CODEC_ZSTD_FIELDS && codec != MP_CODEC_ZSTD_STREAMS &&
	    codec != MP_CODEC_ZSTD_PLANES)
		return block_fail(why, "'%s': block at offset %llu uses unknown codec %llu", r->name,
				  (unsigned long long)at, (unsigned long long)codec);
	if (raw > MP_MAX_BLOCK_RAW)
		return block_fail(why, "'%s': block at offset %llu claims %llu bytes", r->name,
				  (unsigned long long)at, (unsigned long long)raw);
	if (!r->dctx)
		r->dctx = ZSTD_createDCtx();
	scratch(out, out_alloc, raw);
	if (codec != MP_CODEC_ZSTD) {
		if (join_fields(r, &c, codec, raw, at, *out, why) < 0)
			return -1;
	} else {
		size_t got = ZSTD_decompressDCtx(r->dctx, *out, raw, c.p, (size_t)(c.end - c.p));
		if (ZSTD_isError(got) || got != raw)
			return block_fail(why, "'%s': block at offset %llu does not decompress (%s)", r->name,
					  (unsigned long long)at,
					  ZSTD_isError(got) ? ZSTD_getErrorName(got) : "wrong size");
	}
	*raw_len = (size_t)raw;
	return 0;
}
