/*
 * The writer's blocks (lib/format/writer.h): flushing the block being built
 * as field streams (codec 4), as one zstd frame (codec 1) or as it is.
 */
#include <config.h>
#include "lib/format/writer.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include <zstd.h>

#include "lib/format/decode-private.h"
#include "lib/format/dict.h"
#include "lib/format/encode.h"
#include "lib/format/fields.h"
#include "lib/format/format.h"
#include "lib/format/writer-private.h"
#include "lib/util/usage.h"

/* Blocks of fewer bytes of records are written as they are. */
#define SMALL_BLOCK 64
/* The level of one-frame blocks (MP_WRITER_ONE_FRAME). */
#define ZSTD_LEVEL 1

/*
 * The block being built is kept as field streams (lib/format/fields.h): events are
 * encoded straight into them, other records are encoded in w->raw and split.
 * A flush writes a BLOCK of field streams (codec 4), each stream continuing
 * its own zstd stream from the previous block: a block ends with a flush of
 * every stream it has bytes of, so it can be read as soon as it is on disk,
 * and what the streams held before still serves as history (small blocks,
 * as a tick every 10 ms makes, compress as well as big ones). With
 * MP_WRITER_ONE_FRAME or MP_WRITER_NO_COMPRESS the records are joined again
 * and written as one zstd frame (codec 1), or as they are.
 */

/*
 * Each stream's compression level: the tags (with the allocation classes
 * and the small numbers of frees) repeat in long patterns, where level 3
 * finds 3.5% more than level 1 on the std::map benchmark; the number
 * streams gain under 1% from it (measured on the benchmark's captures), not
 * worth its time. The other records (modules, symbols, strings, ticks) are
 * few, and most of a small program's capture: level 6 takes 3% to 4% off
 * them (xz, sort) for no time that shows, with level 3's tables
 * (OTHER_HASH_LOG, OTHER_CHAIN_LOG: level 6's own would take 3 MB more).
 */
static const int stream_level[MP_FS_COUNT] = {
	[MP_FS_TAGS] = 3, [MP_FS_SIZES] = 1, [MP_FS_STACKS] = 1, [MP_FS_AGES] = 1,
	[MP_FS_ADDRS] = 1, [MP_FS_OTHER] = 6, [MP_FS_NEAR0] = 1, [MP_FS_NEAR1] = 1,
	[MP_FS_NEAR2] = 1, [MP_FS_AGE0] = 1, [MP_FS_AGE1] = 1, [MP_FS_AGE2] = 1,
	[MP_FS_SIZES1] = 1, [MP_FS_SIZES2] = 1, [MP_FS_STACKS1] = 1, [MP_FS_STACKS2] = 1,
};
/* The streams' history: 1 MiB each (readers keep as much per stream). */
#define STREAM_WINDOW_LOG 20
#define OTHER_HASH_LOG 17
#define OTHER_CHAIN_LOG 16

/*
 * The field streams' contexts of closed writers, kept for the next writer
 * (a family under --follow-fork writes a capture per process). A new set
 * clears its tables, about 3 MB (1.9 ms a process here, against 0.06 ms
 * for a kept set); a kept one, reset, keeps its parameters and dictionary
 * and compresses the next stream as a new one would. At most POOL_MAX a
 * stream, which covers the captures a build writes at a time.
 */
#define POOL_MAX 4
static struct {
	ZSTD_CCtx *c[POOL_MAX];
	int n;
} pool[MP_FS_COUNT];
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;

static ZSTD_CCtx *pool_take(int i)
{
	ZSTD_CCtx *c = NULL;
	pthread_mutex_lock(&pool_lock);
	if (pool[i].n)
		c = pool[i].c[--pool[i].n];
	pthread_mutex_unlock(&pool_lock);
	return c;
}

void mp_writer_put_cctx(int i, void *cctx)
{
	ZSTD_CCtx *c = cctx;
	if (!c)
		return;
	/* (The session only: the parameters and the dictionary stay.) */
	if (!ZSTD_isError(ZSTD_CCtx_reset(c, ZSTD_reset_session_only))) {
		pthread_mutex_lock(&pool_lock);
		if (pool[i].n < POOL_MAX) {
			pool[i].c[pool[i].n++] = c;
			c = NULL;
		}
		pthread_mutex_unlock(&pool_lock);
	}
	ZSTD_freeCCtx(c);
}

static ZSTD_CCtx *stream_cctx(struct mp_writer *w, int i)
{
	ZSTD_CCtx *c = w->scctx[i];
	if (!c && (c = pool_take(i)) != NULL)
		w->scctx[i] = c;
	if (!c) {
		c = ZSTD_createCCtx();
		if (!c)
			die("out of memory");
		ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, stream_level[i]);
		ZSTD_CCtx_setParameter(c, ZSTD_c_windowLog, STREAM_WINDOW_LOG);
		ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 0);
		ZSTD_CCtx_setParameter(c, ZSTD_c_contentSizeFlag, 0);
		if (i == MP_FS_OTHER) {
			ZSTD_CCtx_setParameter(c, ZSTD_c_hashLog, OTHER_HASH_LOG);
			ZSTD_CCtx_setParameter(c, ZSTD_c_chainLog, OTHER_CHAIN_LOG);
			if (ZSTD_isError(ZSTD_CCtx_loadDictionary(c, mp_dict_other, MP_DICT_OTHER_SIZE)))
				die("out of memory");
		}
		w->scctx[i] = c;
	}
	return c;
}

/* Writes the block as field streams continuing the previous blocks' (codec 4, or 3). */
static void flush_streams(struct mp_writer *w, size_t raw_len)
{
	struct mp_fields *f = &w->fields;
	uint8_t head[1 + MP_VARINT_MAX];
	uint8_t payload[(3 + 2 * MP_FS_COUNT) * MP_VARINT_MAX + 4], *p = payload, *h = head;
	size_t bound = 0, stored[MP_FS_COUNT], total = 0;
	unsigned mask = 0;
	uint32_t check;

	for (int i = 0; i < MP_FS_COUNT; i++)
		if (f->len[i]) {
			mask |= 1u << i;
			bound += ZSTD_compressBound(f->len[i]) + 64;
		}
	check = mp_block_checksum(f->p, f->len, raw_len);
	scratch(&w->out, &w->out_alloc, bound);
	for (int i = 0; i < MP_FS_COUNT; i++) {
		ZSTD_inBuffer in = { f->p[i], f->len[i], 0 };
		ZSTD_outBuffer out = { w->out + total, w->out_alloc - total, 0 };
		size_t left;
		stored[i] = 0;
		if (!f->len[i])
			continue;
		do {
			left = ZSTD_compressStream2(stream_cctx(w, i), &out, &in, ZSTD_e_flush);
			if (ZSTD_isError(left))
				BUG("zstd cannot compress field stream %d: %s", i, ZSTD_getErrorName(left));
			if (left && out.pos == out.size)
				BUG("no room for field stream %d", i);
		} while (left);
		stored[i] = out.pos;
		total += out.pos;
	}
	p = mp_put_uvarint(p, f->vplanes ? MP_CODEC_ZSTD_PLANES : MP_CODEC_ZSTD_STREAMS);
	p = mp_put_uvarint(p, raw_len);
	p = mp_put_uvarint(p, mask);
	for (int i = 0; i < MP_FS_COUNT; i++) {
		if (!(mask & (1u << i)))
			continue;
		p = mp_put_uvarint(p, f->len[i]);
		p = mp_put_uvarint(p, stored[i]);
	}
	for (int k = 0; k < 4; k++)
		*p++ = (uint8_t)(check >> (8 * k));
	*h++ = MP_TAG_BLOCK;
	h = mp_put_uvarint(h, (uint64_t)(p - payload) + total);
	mp_writer_write(w, head, (size_t)(h - head));
	mp_writer_write(w, payload, (size_t)(p - payload));
	mp_writer_write(w, w->out, total);
}

/* Room for len bytes of scratch in w->raw. */
void mp_writer_raw_room(struct mp_writer *w, size_t len)
{
	size_t a = w->raw_alloc ? w->raw_alloc : 64 * 1024;
	while (a < len)
		a *= 2;
	scratch(&w->raw, &w->raw_alloc, a);
}

/* Writes the block as one zstd frame (codec 1); -1 when that would not be smaller. */
static int flush_one_frame(struct mp_writer *w, size_t raw_len)
{
	/* BLOCK: tag, length, codec, raw length, zstd frame. */
	uint8_t head[1 + 3 * MP_VARINT_MAX], *h = head, *p;
	uint8_t inner[2 * MP_VARINT_MAX];
	size_t csize;
	scratch(&w->out, &w->out_alloc, ZSTD_compressBound(raw_len));
	csize = ZSTD_compressCCtx(w->cctx, w->out, w->out_alloc, w->raw, raw_len, ZSTD_LEVEL);
	if (ZSTD_isError(csize) || csize >= raw_len)
		return -1;
	p = mp_put_uvarint(inner, MP_CODEC_ZSTD);
	p = mp_put_uvarint(p, raw_len);
	*h++ = MP_TAG_BLOCK;
	h = mp_put_uvarint(h, (uint64_t)(p - inner) + csize);
	memcpy(h, inner, (size_t)(p - inner));
	h += p - inner;
	mp_writer_write(w, head, (size_t)(h - head));
	mp_writer_write(w, w->out, csize);
	return 0;
}

/*
 * mp_writer_flush() at the end of an interval (every 10 ms by default)
 * leaves a block of fewer than WAIT_RAW bytes of records waiting for more,
 * up to WAIT_INTERVALS intervals: each block costs its headers, a few bytes
 * per stream and a zstd block header per stream, some 40 bytes, which an
 * idle program's tick or a light one's few events do not pay for (sqlite3,
 * xz, sort: a third of their capture). A busy program's blocks fill faster.
 */
#define WAIT_RAW (16u << 10)
#define WAIT_INTERVALS 100

int mp_writer_flush(struct mp_writer *w)
{
	if (mp_fields_total(&w->fields) < WAIT_RAW && ++w->waited < WAIT_INTERVALS) {
		if (w->errnum) {
			errno = w->errnum;
			return -1;
		}
		return 0;
	}
	return mp_writer_block(w);
}

int mp_writer_block(struct mp_writer *w)
{
	size_t raw_len = mp_fields_total(&w->fields);
	w->waited = 0;
	if (raw_len) {
		const uint8_t *s[MP_FS_COUNT];
		const char *why = NULL;
		if ((w->flags & MP_WRITER_ONE_FRAME) && !w->cctx)
			w->cctx = ZSTD_createCCtx();
		/*
		 * A block of a few records (a tick alone, as an idle program makes
		 * every 10 ms) costs less as it is than with the streams' headers.
		 */
		if (!(w->flags & (MP_WRITER_NO_COMPRESS | MP_WRITER_ONE_FRAME)) && raw_len >= SMALL_BLOCK) {
			flush_streams(w, raw_len);
		} else {
			/* The records themselves, joined again from their fields. */
			mp_writer_raw_room(w, raw_len);
			for (int i = 0; i < MP_FS_COUNT; i++)
				s[i] = w->fields.p[i];
			if (mp_fields_join(s, w->fields.len, w->raw, raw_len, w->fields.vplanes, &why) < 0)
				BUG("the writer's field streams do not join: %s", why);
			if (!(w->flags & MP_WRITER_ONE_FRAME) || flush_one_frame(w, raw_len) < 0)
				mp_writer_write(w, w->raw, raw_len);
		}
		mp_fields_reset(&w->fields);
		w->hot_check = 0;
	}
	if (w->errnum) {
		errno = w->errnum;
		return -1;
	}
	return 0;
}

